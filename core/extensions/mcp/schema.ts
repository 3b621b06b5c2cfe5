/**
 * MCP `inputSchema` → a function-parameters schema OpenAI-compatible servers accept.
 *
 * MCP allows any JSON Schema object; OpenAI's `tools[].function.parameters` must be an object
 * schema (`type: "object"` at the root, no root `oneOf`/`anyOf`/`$ref`) and rejects arrays
 * without `items` (HTTP 400 for every later turn). {@link sanitizeInputSchema} repairs what
 * it can, the way Codex and Gemini CLI sanitise MCP schemas:
 * - local `$ref`s (`#/$defs/…`, `#/definitions/…`, any `#/` pointer) are inlined; a reference
 *   cycle is cut after {@link MAX_REF_DEPTH} expansions with `{}` (any value);
 * - a root `oneOf`/`anyOf` of object schemas is merged into one object (properties united,
 *   `required` = those every alternative requires); a root `allOf` is merged with `required`
 *   united;
 * - a root that is not an object schema (`{"type": "string"}`, an array schema, …) is wrapped as
 *   `{"type": "object", "properties": {"value": <root>}, "required": ["value"]}` (`wrapped: true`;
 *   the call's arguments stay `{value: …}`, since MCP arguments are always an object);
 * - `type: "array"` without `items` gets `items: {"type": "string"}` (Codex's default); an
 *   object schema without `properties` gets `properties: {}`; `true` sub-schemas become `{}`;
 *   `$schema`, `$id`, `$defs`, `definitions` are dropped.
 * Unrepairable (the tool is dropped with a one-line warning naming it): a schema that is not a
 * JSON object (a string, number, array), a `$ref` that is remote or does not resolve, a root
 * `oneOf`/`anyOf` whose alternatives are not all object schemas.
 * @module
 */

/** How many times one `$ref` path may be expanded inside itself before it is cut. */
export const MAX_REF_DEPTH = 3;

type Json = Record<string, unknown>;

/** A repaired schema, or why it cannot be. */
export type SanitizedSchema =
  | { ok: true; schema: Json; wrapped: boolean; changes: string[] }
  | { ok: false; error: string };

function isObj(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

class Unrepairable extends Error {}

/** Resolves a local JSON pointer (`#/a/b`) against `root`. */
function resolvePointer(root: Json, ref: string): unknown {
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) throw new Unrepairable(`cannot inline the non-local $ref ${ref}`);
  let cur: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    if (!isObj(cur) && !Array.isArray(cur)) throw new Unrepairable(`$ref ${ref} does not resolve`);
    cur = (cur as Json)[key];
    if (cur === undefined) throw new Unrepairable(`$ref ${ref} does not resolve`);
  }
  return cur;
}

/** Keywords whose value is one sub-schema. */
const ONE = [
  "items",
  "additionalProperties",
  "not",
  "contains",
  "propertyNames",
  "if",
  "then",
  "else",
];
/** Keywords whose value is a list of sub-schemas. */
const LIST = ["oneOf", "anyOf", "allOf", "prefixItems"];
/** Keywords whose value maps names to sub-schemas. */
const MAP = ["properties", "patternProperties", "dependentSchemas"];

function walk(node: unknown, root: Json, stack: string[], changes: Set<string>): unknown {
  if (node === true) return {};
  if (!isObj(node)) return node;
  let n = node;
  if (typeof n.$ref === "string") {
    const ref = n.$ref;
    const depth = stack.filter((r) => r === ref).length;
    if (depth >= MAX_REF_DEPTH) {
      changes.add("cut a recursive $ref");
      return { description: `(recursive: ${ref})` };
    }
    const target = resolvePointer(root, ref);
    const { $ref: _r, ...rest } = n;
    changes.add("inlined $ref");
    const inlined = walk(target, root, [...stack, ref], changes);
    return isObj(inlined) ? walk({ ...inlined, ...rest }, root, [...stack, ref], changes) : inlined;
  }
  const out: Json = {};
  for (const [k, v] of Object.entries(n)) {
    if (k === "$schema" || k === "$id" || k === "$defs" || k === "definitions") continue;
    if (ONE.includes(k)) out[k] = walk(v, root, stack, changes);
    else if (LIST.includes(k) && Array.isArray(v)) {
      out[k] = v.map((x) => walk(x, root, stack, changes));
    } else if (MAP.includes(k) && isObj(v)) {
      out[k] = Object.fromEntries(
        Object.entries(v).map(([pk, pv]) => [pk, walk(pv, root, stack, changes)]),
      );
    } else out[k] = v;
  }
  n = out;
  const types = Array.isArray(n.type) ? n.type : [n.type];
  if (types.includes("array") && n.items === undefined && n.prefixItems === undefined) {
    n.items = { type: "string" };
    changes.add("added missing items");
  }
  if (types.includes("object") && n.properties === undefined) n.properties = {};
  return n;
}

/** True for a schema that describes an object (type object, or properties without a type). */
function isObjectSchema(s: unknown): s is Json {
  if (!isObj(s)) return false;
  if (s.type === "object") return true;
  return s.type === undefined && isObj(s.properties) && !s.oneOf && !s.anyOf;
}

/** Merges object alternatives: properties united; required = all / every (per `mode`). */
function mergeObjects(alts: Json[], mode: "every" | "all", base: Json): Json {
  const properties: Json = {};
  for (const a of alts) Object.assign(properties, isObj(a.properties) ? a.properties : {});
  const reqs = alts.map((a) => (Array.isArray(a.required) ? a.required.map(String) : []));
  const required = mode === "all"
    ? [...new Set(reqs.flat())]
    : reqs.length
    ? reqs[0].filter((r) => reqs.every((x) => x.includes(r)))
    : [];
  const { oneOf: _o, anyOf: _a, allOf: _l, ...rest } = base;
  const merged: Json = { ...rest, type: "object", properties };
  if (required.length) merged.required = required;
  return merged;
}

/**
 * Repairs one MCP tool's `inputSchema` (see the module doc). Never throws.
 */
export function sanitizeInputSchema(raw: unknown): SanitizedSchema {
  if (raw === undefined || raw === null || raw === true) {
    return { ok: true, schema: { type: "object", properties: {} }, wrapped: false, changes: [] };
  }
  if (!isObj(raw)) {
    return {
      ok: false,
      error: `inputSchema is ${
        Array.isArray(raw) ? "an array" : typeof raw
      }, not a JSON Schema object`,
    };
  }
  const changes = new Set<string>();
  try {
    let s = walk(raw, raw, [], changes) as Json;
    if (!isObj(s)) return { ok: false, error: "inputSchema does not describe a value" };
    for (const key of ["oneOf", "anyOf"] as const) {
      const alts = s[key];
      if (Array.isArray(alts) && s.type !== "object" && !isObj(s.properties)) {
        if (!alts.every(isObjectSchema)) {
          return { ok: false, error: `root ${key} has alternatives that are not objects` };
        }
        s = mergeObjects(alts as Json[], "every", s);
        changes.add(`merged root ${key}`);
      }
    }
    if (Array.isArray(s.allOf) && s.allOf.every(isObjectSchema) && s.type !== "object") {
      s = mergeObjects([...(s.allOf as Json[]), s], "all", s);
      changes.add("merged root allOf");
    }
    if (s.type === undefined && isObj(s.properties)) s.type = "object";
    if (s.type === undefined && Object.keys(s).every((k) => k === "description" || k === "title")) {
      s = { ...s, type: "object", properties: {} };
    }
    if (s.type !== "object") {
      changes.add("wrapped a non-object root");
      return {
        ok: true,
        schema: { type: "object", properties: { value: s }, required: ["value"] },
        wrapped: true,
        changes: [...changes],
      };
    }
    if (!isObj(s.properties)) s.properties = {};
    return { ok: true, schema: s, wrapped: false, changes: [...changes] };
  } catch (e) {
    if (e instanceof Unrepairable) return { ok: false, error: e.message };
    return { ok: false, error: `inputSchema cannot be read: ${(e as Error).message}` };
  }
}
