/**
 * Graph templates (issue 8 §1, R4): `{{key}}`, `{{a.b}}`, `{{a[0]}}`, `{{initial_prompt}}`,
 * `{{output}}`, `{{choice}}`, `{{input}}`, and agent variables by name. Whitespace inside the braces
 * is ignored. A string value is inserted as is; anything else as compact JSON.
 *
 * Strict rendering (prompts, instructions, questions) throws {@link TemplateError} for a key that is
 * absent; lenient rendering (state updates, end outputs) inserts an empty string.
 * @module
 */

/** `{{ path }}`: a key, then `.name` or `[index]` steps. */
const TEMPLATE = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\])*)\s*\}\}/g;

/** A strict template named a key the state does not have. */
export class TemplateError extends Error {
  override name = "TemplateError";
}

/** The paths a template names, e.g. `["criteria", "item.id"]` for `{{criteria}} {{item.id}}`. */
export function templatePaths(text: string): string[] {
  return [...text.matchAll(TEMPLATE)].map((m) => m[1]);
}

/** The first key of a path: `a` for `a.b[0]`. */
export function rootKey(path: string): string {
  return path.match(/^[A-Za-z_][A-Za-z0-9_]*/)![0];
}

/** Looks a path up in `state`; `undefined` when any step is missing. */
export function lookup(state: Record<string, unknown>, path: string): unknown {
  let cur: unknown = state;
  for (const step of path.match(/[A-Za-z_][A-Za-z0-9_]*|\[\d+\]/g) ?? []) {
    if (cur === null || cur === undefined) return undefined;
    if (step.startsWith("[")) {
      if (!Array.isArray(cur)) return undefined;
      cur = cur[Number(step.slice(1, -1))];
    } else {
      if (typeof cur !== "object") return undefined;
      cur = (cur as Record<string, unknown>)[step];
    }
  }
  return cur;
}

/** Text for a value: strings as is, `undefined`/`null` as "", the rest as JSON. */
export function show(v: unknown): string {
  if (v === undefined || v === null) return "";
  return typeof v === "string" ? v : JSON.stringify(v);
}

/**
 * Renders `text` against `state`.
 * @param what names the field in errors, e.g. `nodes.parse.prompt`.
 * @throws TemplateError when `strict` and a path is absent.
 */
export function render(
  text: string,
  state: Record<string, unknown>,
  opts: { strict: boolean; what?: string },
): string {
  return text.replace(TEMPLATE, (_m, path: string) => {
    const v = lookup(state, path);
    if (v === undefined && opts.strict) {
      throw new TemplateError(
        `${
          opts.what ? `${opts.what}: ` : ""
        }template names {{${path}}}, which the state does not have`,
      );
    }
    return show(v);
  });
}
