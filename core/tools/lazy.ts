/**
 * Built-in tools without zod at start-up (issue 22 item 5). The model-facing part of every
 * built-in tool (name, description, `kind`, `readOnly`, `concurrency` and the JSON Schema the
 * registry sends) is generated data, `./builtin_tools.gen.json` (`deno task gen`,
 * scripts/gen_tools.ts; tests/tool_stubs_test.ts fails while it is stale). A session registers
 * stubs made from it ({@link lazyTool}); the module that defines the real tool (with its zod
 * schema) is imported at the first validation of a call (`ToolRegistry.validate` awaits
 * {@link realTool}), or earlier by {@link warmLazyTools}, which the workspace runs once its first
 * model request is on its way. Validation, `title`, `access` and `run` are the real tool's.
 * @module
 */
import type { JsonSchema } from "../../sdk/mod.ts";
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

/** The `input` of a stub: its generated JSON Schema, recognised by the registry and redaction. */
export class LazyInput {
  constructor(readonly parameters: JsonSchema) {}
}

/** One input object per generated entry: the registry's caches are keyed by input object. */
const inputs = new WeakMap<ToolStubData, LazyInput>();

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
    input: inputs.get(data) ??
      (inputs.set(data, new LazyInput(data.parameters)), inputs.get(data)!),
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
