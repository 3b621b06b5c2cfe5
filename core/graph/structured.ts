/**
 * Structured output for llm nodes (issue 8 §1): the node's `output_schema` becomes the parameters
 * of a tool named `submit_result` (works with every OpenAI-compatible server that has tool
 * calling); the arguments of the model's call are the result. Results are validated against the
 * schema with `@cfworker/json-schema` (draft 2020-12).
 * @module
 */
import { Validator } from "@cfworker/json-schema";
import type { AnyTool } from "../protocol/types.ts";

/** The tool's name, fixed so prompts, tests and other tools can rely on it. */
export const SUBMIT_RESULT = "submit_result";

/** The first few validation errors as one line, or `undefined` when `value` matches `schema`. */
export function checkSchema(schema: Record<string, unknown>, value: unknown): string | undefined {
  const r = new Validator(schema as never, "2020-12", false).validate(value);
  if (r.valid) return undefined;
  const leaves = r.errors.filter((e) =>
    !/^(properties|items|allOf|anyOf|oneOf|\$ref)$/.test(e.keyword)
  );
  return (leaves.length ? leaves : r.errors).slice(0, 4).map((e) =>
    `${
      e.instanceLocation === "#" ? "(result)" : e.instanceLocation.replace(/^#\//, "")
    }: ${e.error}`
  ).join("; ");
}

/**
 * A `submit_result` tool whose parameters are `schema`. It does not validate (the graph does, so
 * that a bad result gets exactly one repair turn); it hands the arguments to `onSubmit`.
 */
export function submitResultTool(
  schema: Record<string, unknown>,
  onSubmit: (value: unknown) => void,
): AnyTool {
  const parameters = schema.type === "object" ? schema : {
    type: "object",
    properties: { result: schema },
    required: ["result"],
  };
  return {
    name: SUBMIT_RESULT,
    description:
      "Submit the final result of this step. Call it exactly once, with arguments matching the schema; do not answer in prose.",
    input: parameters,
    readOnly: true,
    run: (args: unknown) => {
      onSubmit(schema.type === "object" ? args : (args as { result: unknown }).result);
      return { content: "Result recorded." };
    },
  } as unknown as AnyTool;
}
