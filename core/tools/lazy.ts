/**
 * Built-in tools without zod at run time (issue 22 item 5). The model-facing part of every
 * built-in tool (name, description, `kind`, `readOnly`, `concurrency` and the JSON Schema the
 * registry sends) is generated data, `./builtin_tools.gen.json` (`deno task gen`,
 * scripts/gen_tools.ts converts the zod schemas of the `inputs.ts` modules;
 * tests/tool_stubs_test.ts fails while it is stale). A session registers stubs made from it
 * ({@link lazyTool}); the module that defines the real tool is imported at the first validation
 * of a call (`ToolRegistry.validate` awaits {@link realTool}), or earlier by
 * {@link warmLazyTools}, which the workspace runs once its first model request is on its way.
 * The real tool's `input` is that same generated JSON Schema ({@link builtinInputs}: the tool
 * modules import their zod schemas as types only), validated by the registry with
 * `@cfworker/json-schema`; `title`, `access` and `run` are the real tool's.
 * @module
 */
import type { InferInput, JsonSchema, TypedJsonSchema, ZodLike } from "../../sdk/mod.ts";
import type { AnyTool } from "../protocol/types.ts";
import generated from "./builtin_tools.gen.json" with { type: "json" };

/** One generated entry: what the model and the engine see of a tool before its module loads. */
export interface ToolStubData {
  name: string;
  description: string;
  kind?: AnyTool["kind"];
  readOnly?: boolean;
  concurrency?: "parallel" | "serial";
  /** The JSON Schema exactly as `ToolRegistry.schema` makes it from the zod input. */
  parameters: JsonSchema;
}

/** The generated entries by group: `plugins` (plugins/mod.ts), `supervisor`, `skills`. */
export const BUILTIN_TOOLS = generated as unknown as Record<
  "plugins" | "supervisor" | "skills",
  ToolStubData[]
>;

/** The generated entry of `name` in `group`. @throws Error when it is not there (stale data). */
export function stubData(group: keyof typeof BUILTIN_TOOLS, name: string): ToolStubData {
  const d = BUILTIN_TOOLS[group].find((t) => t.name === name);
  if (!d) throw new Error(`core/tools/builtin_tools.gen.json lacks ${name}: run \`deno task gen\``);
  return d;
}

/**
 * The generated JSON Schemas of the built-in tools, and those {@link builtinSchema} marked: the
 * registry validates them with `@cfworker/json-schema` and strips unknown keys (as zod's
 * `z.object` did), redaction leaves them as they are (fixed text of ours).
 */
const builtin = new WeakSet<object>();
for (const g of Object.values(BUILTIN_TOOLS)) for (const d of g) builtin.add(d.parameters);

/** Whether `input` is a built-in tool's JSON Schema (generated, or marked by {@link builtinSchema}). */
export function isBuiltinInput(input: unknown): input is JsonSchema {
  return !!input && typeof input === "object" && builtin.has(input);
}

/**
 * Marks a hand-written JSON Schema of a built-in tool that is not in the generated data (the
 * config-dependent `web_search`) as one: validated and stripped like the generated ones.
 * Returns `schema` itself.
 */
export function builtinSchema<T>(schema: TypedJsonSchema<T>): TypedJsonSchema<T> {
  builtin.add(schema);
  return schema;
}

/**
 * The run-time `input` of built-in tools of `group`: `builtinInputs<typeof FS_INPUTS>("plugins")`
 * gives a function from a tool name (a key of the zod schemas' map `M`, imported with
 * `import type`) to the tool's generated JSON Schema — the very object its stub sends — typed as
 * the zod schema's input type, so `run(input)` stays precise while zod never loads. A name not
 * in the generated data yet gives `{type: "object"}` (so `deno task gen` can import the tool
 * modules; tests/tool_stubs_test.ts fails until it has run).
 */
export function builtinInputs<M extends Record<string, ZodLike>>(
  group: keyof typeof BUILTIN_TOOLS,
) {
  return <N extends keyof M & string>(name: N): TypedJsonSchema<InferInput<M[N]>> =>
    BUILTIN_TOOLS[group].find((t) => t.name === name)?.parameters ?? builtinSchema({
      type: "object",
    });
}

const REAL = Symbol("coyote.realTool");
type Loader = () => Promise<AnyTool>;

/** Module imports of every stub made so far (each a shared, memoised `import()`). */
const modules = new Set<() => Promise<unknown>>();
/** The stubs' `warm` functions (each once per warm-up). */
const warmers = new Set<() => void>();

/**
 * A stub of a built-in tool. `module` imports the defining module (memoise it: it is shared by
 * every stub of that module and by {@link warmLazyTools}); `tool` picks or builds the real tool
 * from it (once per stub). `description` overrides the generated one (the sandboxed
 * `execute_command` appends the sandbox's note).
 */
export function lazyTool<M>(
  data: ToolStubData,
  load: {
    module: () => Promise<M>;
    tool: (m: M) => AnyTool;
    /** Run by {@link warmLazyTools} too: work the tool's first call would wait for (not awaited). */
    warm?: () => void;
  },
  description: string = data.description,
): AnyTool {
  modules.add(load.module);
  if (load.warm) warmers.add(load.warm);
  let real: AnyTool | undefined;
  let loading: Promise<AnyTool> | undefined;
  const loader: Loader = () =>
    loading ??= load.module().then((m) => {
      const t = load.tool(m);
      if (t?.name !== data.name) throw new Error(`tool ${data.name}: its module made ${t.name}`);
      return real = t;
    });
  const stub: AnyTool & { [REAL]: Loader } = {
    name: data.name,
    description,
    input: data.parameters,
    ...(data.kind !== undefined ? { kind: data.kind } : {}),
    ...(data.readOnly !== undefined ? { readOnly: data.readOnly } : {}),
    ...(data.concurrency !== undefined ? { concurrency: data.concurrency } : {}),
    // The engine calls these only after `ToolRegistry.validate`, which loaded the real tool.
    title: (i: unknown) => real?.title?.(i) as string,
    access: (i: unknown, cwd: string) => {
      if (!real) throw new Error(`${data.name} is not loaded yet`);
      return real.access?.(i, cwd) ?? [{ type: "tool", name: data.name }];
    },
    run: async (i: unknown, ctx) => (await loader()).run(i, ctx),
    [REAL]: loader,
  };
  return stub;
}

/** The real tool behind a stub (imported on first call), or undefined for any other tool. */
export function realTool(t: AnyTool): Promise<AnyTool> | undefined {
  return (t as { [REAL]?: Loader })[REAL]?.();
}

/**
 * Imports the modules of every stub made so far and runs their `warm` functions, in the
 * background; failures wait for use.
 */
export function warmLazyTools(): void {
  for (const m of modules) m().catch(() => {});
  for (const w of warmers) {
    try {
      w();
    } catch { /* the first call does it */ }
  }
}
