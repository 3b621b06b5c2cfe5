/**
 * Tool registry: turns SDK `ToolDefinition`s into OpenAI `tools` entries and
 * validates model-supplied arguments before a tool runs.
 *
 * - zod (v4) inputs are converted with the schema's own `toJSONSchema` method (once per tool;
 *   the same converter as `z.toJSONSchema`, so this module does not import zod) and validated
 *   with `safeParse`.
 * - built-in tools are stubs (./lazy.ts): their JSON Schema is generated data (from zod schemas
 *   that only the generator and tests load), the real tool is imported at its first validation,
 *   and its input is that same JSON Schema.
 * - plain JSON Schema inputs are sent as-is and validated with
 *   `@cfworker/json-schema`
 *   (loaded lazily, only when such a tool is first called). For built-in tools, top-level and
 *   nested keys a schema's `properties` do not name are then dropped, as zod's `z.object` did
 *   ({@link stripUnknown}).
 * - Validation errors are returned as text the model can act on; they never throw.
 * @module
 */
import type { JsonSchema, ZodLike } from "../../sdk/mod.ts";
import type { AnyTool } from "../protocol/types.ts";
import { isBuiltinInput, realTool } from "./lazy.ts";

/** An OpenAI Chat Completions `tools[]` entry. */
export interface OpenAITool {
  type: "function";
  function: { name: string; description: string; parameters: JsonSchema };
}

const NAME_RE = /^[a-zA-Z0-9_-]{1,64}$/;

function isZod(s: unknown): s is ZodLike {
  return !!s && typeof (s as ZodLike).safeParse === "function";
}

/** Removes JSON-Schema noise that costs prompt tokens and that OpenAI ignores. */
function tidy(schema: JsonSchema): JsonSchema {
  const { $schema: _s, ...rest } = schema;
  return rest;
}

type Validate = (value: unknown) => { ok: true; value: unknown } | { ok: false; message: string };

type CfModule = typeof import("@cfworker/json-schema");
let cfworker: Promise<CfModule> | null = null;
/** `@cfworker/json-schema`, loaded on first use (only plain-JSON-Schema tools need it). */
function jsonSchemaLib(): Promise<CfModule> {
  cfworker ??= import("@cfworker/json-schema");
  return cfworker;
}

/**
 * JSON Schemas by input schema object, shared by every registry: sub-agents open a registry
 * each, and per-session tool objects (the supervisor's, the sandboxed `execute_command`) reuse
 * one input schema, so converting each zod schema once keeps that cheap.
 */
const schemaCache = new WeakMap<object, JsonSchema>();
function cacheKey(t: AnyTool): object | undefined {
  return t.input && typeof t.input === "object" ? t.input as object : undefined;
}

/**
 * OpenAI tool entries by input schema object, then name and description: per-session tool
 * objects over one schema (skill and supervisor tools, the sandboxed `execute_command`) share
 * one entry (see {@link ToolRegistry.openAITools}).
 */
const entryCache = new WeakMap<object, Map<string, OpenAITool>>();
const charsCache = new WeakMap<OpenAITool, number>();
function openAIEntry(t: AnyTool, r: ToolRegistry): OpenAITool {
  const key = cacheKey(t) ?? t;
  let byText = entryCache.get(key);
  if (!byText) entryCache.set(key, byText = new Map());
  const text = `${t.name}\0${t.description}`;
  let e = byText.get(text);
  if (!e) {
    e = {
      type: "function",
      function: { name: t.name, description: t.description, parameters: r.schema(t.name) },
    };
    byText.set(text, e);
  }
  return e;
}
function entryChars(e: OpenAITool): number {
  let n = charsCache.get(e);
  if (n === undefined) charsCache.set(e, n = JSON.stringify(e).length);
  return n;
}

/** The tools of one session, by model-facing name. */
export class ToolRegistry {
  readonly tools = new Map<string, AnyTool>();
  #schemas = new Map<string, JsonSchema>();
  #validators = new Map<string, Validate>();
  /** Names that were dropped (invalid or duplicate) with the reason. */
  readonly warnings: string[] = [];

  constructor(tools: AnyTool[]) {
    for (const t of tools) {
      if (!NAME_RE.test(t.name)) {
        this.warnings.push(
          `tool name ${JSON.stringify(t.name)} is not a valid function name; skipped`,
        );
        continue;
      }
      if (this.tools.has(t.name)) {
        this.warnings.push(`duplicate tool ${t.name}; the first definition wins`);
        continue;
      }
      this.tools.set(t.name, t);
    }
  }

  get(name: string): AnyTool | undefined {
    return this.tools.get(name);
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  /** JSON Schema of a tool's input (zod converted once, cached). */
  schema(name: string): JsonSchema {
    const key = cacheKey(this.tools.get(name)!);
    let s = this.#schemas.get(name) ?? (key ? schemaCache.get(key) : undefined);
    if (!s) {
      const input = this.tools.get(name)!.input;
      if (isBuiltinInput(input)) {
        s = input;
      } else if (isZod(input)) {
        s = tidy(zodToJson(input));
      } else {
        s = tidy((input ?? { type: "object", properties: {} }) as JsonSchema);
      }
      if (s.type === undefined) s = { type: "object", ...s };
      if (key) schemaCache.set(key, s);
    }
    if (!this.#schemas.has(name)) {
      this.#schemas.set(name, s);
    }
    return s;
  }

  /**
   * The OpenAI `tools` array for every registered tool. Built once per registry (a registry's
   * tools never change; a changed tool set is a new registry) and per tool object, so the many
   * short-lived registries of sub-agents share the entries. Treat the result as read-only.
   */
  openAITools(): OpenAITool[] {
    return this.#openAI ??= [...this.tools.values()].map((t) => openAIEntry(t, this));
  }
  #openAI?: OpenAITool[];

  /** Characters of the `tools` array as JSON (for token estimates), computed once. */
  openAIToolsChars(): number {
    // "[" + entries joined by "," + "]"
    const list = this.openAITools();
    return this.#chars ??= list.length ? list.reduce((n, t) => n + entryChars(t) + 1, 1) : 2;
  }
  #chars?: number;

  /** Validates arguments; the error message names the offending fields. */
  async validate(
    name: string,
    value: unknown,
  ): Promise<{ ok: true; value: unknown } | { ok: false; message: string }> {
    let v = this.#validators.get(name);
    if (!v) {
      try {
        v = await this.#compile(name);
      } catch (e) {
        return {
          ok: false,
          message: `the tool's input schema cannot be used: ${(e as Error).message}`,
        };
      }
      this.#validators.set(name, v);
    }
    return v(value);
  }

  async #compile(name: string): Promise<Validate> {
    let v: Validate;
    {
      const tool = this.tools.get(name)!;
      const input = (await realTool(tool))?.input ?? tool.input;
      if (isZod(input)) {
        v = (value) => {
          const r = input.safeParse(value);
          if (r.success) return { ok: true, value: r.data };
          return { ok: false, message: zodMessage(r.error) };
        };
      } else {
        const { Validator } = await jsonSchemaLib();
        const schema = this.schema(name);
        const validator = new Validator(schema as never, "2020-12", false);
        const strip = isBuiltinInput(input);
        v = (value) => {
          const r = validator.validate(value);
          if (r.valid) return { ok: true, value: strip ? stripUnknown(value, schema) : value };
          // The deepest errors say what is wrong; the wrapper errors only repeat "failed validation".
          const msgs = r.errors.filter((e) =>
            !/^Property .* does not match schema\.$|^Items did not match schema\.$/.test(e.error)
          )
            .map((e) => `${e.instanceLocation.replace(/^#\/?/, "") || "(root)"}: ${e.error}`);
          return {
            ok: false,
            message: [...new Set(msgs.length ? msgs : r.errors.map((e) => e.error))].join("; "),
          };
        };
      }
    }
    return v;
  }
}

/**
 * `value` (valid against `schema`) without the object keys the schema's `properties` do not
 * name, at every level `properties` / `items` reach (objects whose schema sets
 * `additionalProperties` are kept whole): what zod's `z.object` parse returned for the built-in
 * tools, whose `run`s were written against it. Copies only what changes.
 */
export function stripUnknown(value: unknown, schema: JsonSchema): unknown {
  if (Array.isArray(value)) {
    const items = schema.items;
    if (!items || typeof items !== "object") return value;
    const out = value.map((x) => stripUnknown(x, items as JsonSchema));
    return out.some((x, i) => x !== value[i]) ? out : value;
  }
  const props = schema.properties as Record<string, JsonSchema> | undefined;
  if (
    !value || typeof value !== "object" || !props || typeof props !== "object" ||
    schema.additionalProperties !== undefined
  ) return value;
  const inp = value as Record<string, unknown>;
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(inp)) {
    if (!Object.hasOwn(props, k)) {
      changed = true;
      continue;
    }
    const y = stripUnknown(x, props[k]);
    if (y !== x) changed = true;
    out[k] = y;
  }
  return changed ? out : value;
}

/** `z.toJSONSchema(input, {io: "input", unrepresentable: "any"})`, through the schema's method. */
function zodToJson(input: ZodLike): JsonSchema {
  const convert = (input as { toJSONSchema?: (o: unknown) => unknown }).toJSONSchema;
  if (typeof convert !== "function") {
    throw new Error("a zod input schema without toJSONSchema (zod v4 classic schemas have it)");
  }
  return convert.call(input, { io: "input", unrepresentable: "any" }) as JsonSchema;
}

// deno-lint-ignore no-explicit-any
function zodMessage(error: any): string {
  const issues = error?.issues;
  if (Array.isArray(issues) && issues.length) {
    return issues.map((i: { path?: PropertyKey[]; message: string }) => {
      const p = i.path?.length ? i.path.map(String).join(".") : "(root)";
      return `${p}: ${i.message}`;
    }).join("; ");
  }
  return String(error?.message ?? error);
}

/**
 * Agent `tools` globs (`fs_*`, `mcp__github__*`, exact names): a tool is kept
 * when any glob matches its name (see {@link globMatch}). `undefined` keeps every tool.
 */
export function filterTools(tools: AnyTool[], globs: string[] | undefined): AnyTool[] {
  if (!globs) return tools;
  return tools.filter((t) => globs.some((g) => globMatch(g, t.name)));
}

/**
 * Whether `name` matches the tool-name glob `glob`: `*` any run of characters, `?` one, anything
 * else itself. Matched without regular expressions, in at most `glob.length × name.length` steps:
 * globs come from agent files and skills a repository ships, and a glob such as `*?*?…*?z` as a
 * backtracking regular expression blocked the event loop for minutes.
 */
export function globMatch(glob: string, name: string): boolean {
  let g = 0, n = 0;
  let star = -1, resume = 0;
  while (n < name.length) {
    if (g < glob.length && glob[g] === "*") {
      // Try the star as empty first; on a mismatch it takes one more character.
      star = g++;
      resume = n;
    } else if (g < glob.length && (glob[g] === "?" || glob[g] === name[n])) {
      g++;
      n++;
    } else if (star >= 0) {
      g = star + 1;
      n = ++resume;
    } else return false;
  }
  while (g < glob.length && glob[g] === "*") g++;
  return g === glob.length;
}
