/**
 * `--output-schema FILE` (issue 19): the final answer of a headless run must be JSON that
 * validates against a JSON Schema (draft 2020-12, checked with `@cfworker/json-schema`, which
 * loads at first use). The request gets the schema appended; an answer that is no JSON or does not
 * validate gets exactly one repair turn quoting the validation error (the idea of the graph
 * engine's llm nodes, core/graph/nodes.ts `structuredResult`); the validated value is the
 * `structured_output` of the result. Loaded only by runs that pass the flag.
 * @module
 */
import { UsageError } from "../../session/runtime.ts";

/** A loaded schema and the path it came from (as the user typed it, for messages). */
export interface OutputSchema {
  path: string;
  schema: Record<string, unknown> | boolean;
}

const TYPES = new Set(["null", "boolean", "object", "array", "number", "string", "integer"]);
const SUB_MAPS = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
const SUB_ONE = [
  "items",
  "additionalProperties",
  "not",
  "if",
  "then",
  "else",
  "contains",
  "propertyNames",
  "unevaluatedItems",
  "unevaluatedProperties",
  "additionalItems",
];
const SUB_LISTS = ["allOf", "anyOf", "oneOf", "prefixItems"];

/** The first structural fault of a schema (a JSON pointer and what is wrong), or undefined. */
function schemaFault(s: unknown, at: string): string | undefined {
  if (typeof s === "boolean") return undefined;
  if (typeof s !== "object" || s === null || Array.isArray(s)) {
    return `${at || "(root)"}: a schema must be an object or a boolean`;
  }
  const o = s as Record<string, unknown>;
  if (o.type !== undefined) {
    const ts = Array.isArray(o.type) ? o.type : [o.type];
    for (const t of ts) {
      if (typeof t !== "string" || !TYPES.has(t)) {
        return `${at}/type: ${JSON.stringify(t)} is not a JSON Schema type`;
      }
    }
  }
  if (
    o.required !== undefined &&
    (!Array.isArray(o.required) || o.required.some((r) => typeof r !== "string"))
  ) return `${at}/required: must be an array of property names`;
  if (o.enum !== undefined && !Array.isArray(o.enum)) return `${at}/enum: must be an array`;
  for (const k of SUB_MAPS) {
    if (o[k] === undefined) continue;
    if (typeof o[k] !== "object" || o[k] === null || Array.isArray(o[k])) {
      return `${at}/${k}: must be an object of schemas`;
    }
    for (const [name, sub] of Object.entries(o[k] as Record<string, unknown>)) {
      const f = schemaFault(sub, `${at}/${k}/${name}`);
      if (f) return f;
    }
  }
  for (const k of SUB_ONE) {
    if (o[k] === undefined) continue;
    const f = schemaFault(o[k], `${at}/${k}`);
    if (f) return f;
  }
  for (const k of SUB_LISTS) {
    if (o[k] === undefined) continue;
    if (!Array.isArray(o[k])) return `${at}/${k}: must be an array of schemas`;
    for (const [i, sub] of (o[k] as unknown[]).entries()) {
      const f = schemaFault(sub, `${at}/${k}/${i}`);
      if (f) return f;
    }
  }
  return undefined;
}

/**
 * Reads and checks `--output-schema FILE` (`path` relative to `cwd`).
 * @throws UsageError naming the file: unreadable, not JSON, or not a valid schema (a bad `type`,
 *   `required`, sub-schema, or a `$ref` the validator cannot resolve).
 */
export async function loadOutputSchema(path: string, cwd: string): Promise<OutputSchema> {
  const full = path.startsWith("/") ? path : `${cwd}/${path}`;
  let text: string;
  try {
    text = await Deno.readTextFile(full);
  } catch (e) {
    const why = e instanceof Deno.errors.NotFound ? "no such file" : (e as Error).message;
    throw new UsageError(`--output-schema ${path}: cannot read the file (${why})`);
  }
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (e) {
    throw new UsageError(
      `--output-schema ${path}: not JSON (${(e as Error).message.replace(/\s+/g, " ")})`,
    );
  }
  const fault = schemaFault(schema, "");
  if (fault) throw new UsageError(`--output-schema ${path}: not a valid JSON Schema: ${fault}`);
  try {
    // Compiles the schema: an unresolvable $ref throws here rather than mid-run.
    const { Validator } = await import("@cfworker/json-schema");
    new Validator(schema as never, "2020-12", false).validate(null);
  } catch (e) {
    throw new UsageError(
      `--output-schema ${path}: not a valid JSON Schema: ${(e as Error).message}`,
    );
  }
  return { path, schema: schema as OutputSchema["schema"] };
}

/** The text appended to the request: answer with JSON only, matching the schema. */
export function schemaInstruction(s: OutputSchema): string {
  return "\n\nYour final answer must be a single JSON value (no prose, no code fence) that " +
    `validates against this JSON Schema:\n${JSON.stringify(s.schema)}`;
}

/** The repair request after an invalid answer (the one repair turn). */
export function repairPrompt(error: string): string {
  return `Your final answer does not match the required JSON Schema: ${error}\n` +
    "Reply again with only the corrected JSON value.";
}

/** The JSON value of an answer: the whole text, or a fenced block; undefined when neither parses. */
function parseAnswer(text: string): { value: unknown } | undefined {
  const tries = [text.trim()];
  const fence = text.match(/```(?:json)?\s*\n([\s\S]*?)\n```/);
  if (fence) tries.push(fence[1]);
  for (const t of tries) {
    try {
      return { value: JSON.parse(t) };
    } catch { /* next */ }
  }
  return undefined;
}

/**
 * Checks an answer against the schema: `{ value }` when it is JSON that validates, else
 * `{ error }` (no JSON, or the first few validation errors as `location: message`).
 */
export async function checkAnswer(
  s: OutputSchema,
  text: string,
): Promise<{ value: unknown } | { error: string }> {
  const parsed = parseAnswer(text);
  if (!parsed) return { error: "the answer is not JSON" };
  const { Validator } = await import("@cfworker/json-schema");
  const r = new Validator(s.schema as never, "2020-12", false).validate(parsed.value);
  if (r.valid) return parsed;
  const leaves = r.errors.filter((e) =>
    !/^(properties|items|allOf|anyOf|oneOf|\$ref)$/.test(e.keyword)
  );
  return {
    error: (leaves.length ? leaves : r.errors).slice(0, 4).map((e) =>
      `${
        e.instanceLocation === "#" ? "(answer)" : e.instanceLocation.replace(/^#\//, "")
      }: ${e.error}`
    ).join("; "),
  };
}
