/**
 * Turns a plugin file's TEXT into the self-contained JavaScript module a
 * Worker evaluates.
 *
 * Why text and not a path: a Worker's statically analysable imports (static
 * `import`, `export … from`, literal `import("…")`, including
 * `with { type: "text" }` imports of arbitrary files) are loaded by the host's
 * module loader with the HOST's rights before the Worker's permissions apply.
 * So the host reads the file, transpiles TypeScript with `sucrase`, parses the
 * result with `acorn` (a real ECMAScript parser) and refuses every import
 * except the SDK contract:
 *
 * - `import { definePlugin, defineTool, SDK_VERSION } from "@coyote/sdk"` (also
 *   `jsr:@coyote/sdk`, `npm:@coyote/sdk`, with an optional `@version`) is
 *   rewritten into a local binding of the SDK's run-time functions, inlined
 *   from `sdk/mod.ts` (the SDK has no other run-time code).
 *   Type-only imports vanish in the TypeScript transform.
 * - any other `import`/`export … from`, any `import(…)` expression, and any
 *   `require("…")` call is refused with the line number and a hint to bundle
 *   the dependency with `deno bundle`.
 *
 * Code built at run time (`eval("import(…)")`, `import(URL.createObjectURL(…))`)
 * is not statically analysable, so Deno checks it against the Worker's own
 * permissions (verified in tests/plugins_hostile_test.ts).
 * @module
 */
import { definePlugin, defineTool, SDK_VERSION } from "../../../sdk/mod.ts";

/** A plugin module that cannot be loaded; `message` is for humans (no stack). */
export class PluginSourceError extends Error {
  override name = "PluginSourceError";
}

/** Specifiers that mean "the Coyote SDK". */
export const SDK_SPECIFIER = /^(?:(?:jsr|npm):)?@coyote\/sdk(?:@[^/]*)?(?:\/mod\.ts)?$/;

const SDK_EXPORTS = new Set(["definePlugin", "defineTool", "SDK_VERSION"]);

/** JavaScript that defines `__coyoteSdk` (the SDK's run-time exports, copied from sdk/mod.ts). */
export const SDK_PRELUDE = `const __coyoteSdk = (() => { const SDK_VERSION = ${
  JSON.stringify(SDK_VERSION)
}; ${definePlugin.toString()}\n${defineTool.toString()}\nreturn Object.freeze({ SDK_VERSION, definePlugin, defineTool }); })();\n`;

interface Node {
  type: string;
  start: number;
  end: number;
  loc?: { start: { line: number } };
  [key: string]: unknown;
}

/**
 * Compiles plugin source text to the module text a Worker runs.
 * @param text the file's contents
 * @param filename used for messages and to pick the TypeScript transform (`.ts`, `.mts`, `.tsx`)
 * @param opts.allowNodeBuiltins keep `import … from "node:x"` (bundles of folder plugins, whose
 *   npm packages use built-ins; a built-in is part of the runtime, not a file, and the plugin's
 *   permissions apply when it is used)
 * @throws PluginSourceError on syntax errors and refused imports
 */
export async function compilePluginSource(
  text: string,
  filename: string,
  opts: { allowNodeBuiltins?: boolean } = {},
): Promise<string> {
  let js = text;
  if (/\.(m|c)?tsx?$/.test(filename)) {
    const { transform } = await import("sucrase");
    try {
      js = transform(text, {
        transforms: filename.endsWith("x") ? ["typescript", "jsx"] : ["typescript"],
        disableESTransforms: true,
        filePath: filename,
      }).code;
    } catch (e) {
      // sucrase says "Error transforming <path>: <what> (line:col)"; the path is already in front.
      const what = (e as Error).message.replace(/^Error transforming .*?: /, "");
      throw new PluginSourceError(`${filename}: cannot compile TypeScript: ${what}`);
    }
  }
  const acorn = await import("acorn");
  const walk = await import("acorn-walk");
  let ast: Node;
  try {
    ast = acorn.parse(js, {
      ecmaVersion: "latest",
      sourceType: "module",
      locations: true,
      allowHashBang: true,
    }) as unknown as Node;
  } catch (e) {
    throw new PluginSourceError(`${filename}: syntax error: ${(e as Error).message}`);
  }
  const problems: string[] = [];
  const edits: { start: number; end: number; text: string }[] = [];
  const line = (n: Node) => n.loc?.start.line ?? 0;
  const hint = "a one-file plugin must be self-contained: make it a folder (mod.ts beside " +
    "its other files) and Coyote bundles its imports, or bundle it yourself";

  for (const node of (ast.body as Node[])) {
    if (node.type === "ImportDeclaration") {
      const source = String((node.source as Node).value);
      if (opts.allowNodeBuiltins && /^node:[a-z_/]+$/.test(source)) continue;
      if (!SDK_SPECIFIER.test(source)) {
        problems.push(`line ${line(node)}: imports "${source}" (${hint})`);
        continue;
      }
      const parts: string[] = [];
      for (const spec of node.specifiers as Node[]) {
        const local = (spec.local as Node).name as string;
        if (spec.type === "ImportNamespaceSpecifier") {
          parts.push(`const ${local} = __coyoteSdk;`);
        } else if (spec.type === "ImportDefaultSpecifier") {
          problems.push(`line ${line(node)}: the SDK has no default export`);
        } else {
          const imported = spec.imported as Node;
          const name = (imported.name ?? imported.value) as string;
          if (!SDK_EXPORTS.has(name)) {
            problems.push(
              `line ${
                line(node)
              }: the SDK has no run-time export "${name}" (use \`import type\` for types)`,
            );
          } else parts.push(`const ${local} = __coyoteSdk.${name};`);
        }
      }
      edits.push({ start: node.start, end: node.end, text: parts.join(" ") });
    } else if (
      (node.type === "ExportNamedDeclaration" && node.source) ||
      node.type === "ExportAllDeclaration"
    ) {
      problems.push(
        `line ${line(node)}: re-exports from "${String((node.source as Node).value)}" (${hint})`,
      );
    }
  }
  walk.full(ast as never, (n: unknown) => {
    const node = n as Node;
    if (node.type === "ImportExpression") {
      problems.push(`line ${line(node)}: dynamic import() is not allowed in a plugin (${hint})`);
    } else if (
      node.type === "CallExpression" && (node.callee as Node).type === "Identifier" &&
      (node.callee as Node).name === "require"
    ) {
      problems.push(`line ${line(node)}: require() is not allowed in a plugin (${hint})`);
    }
  });
  if (problems.length) {
    throw new PluginSourceError(`${filename}: refused: ${problems.join("; ")}`);
  }
  edits.sort((a, b) => b.start - a.start);
  for (const e of edits) js = js.slice(0, e.start) + e.text + js.slice(e.end);
  // Keep a hashbang first; the prelude goes after it.
  if (js.startsWith("#!")) js = "//" + js.slice(2);
  return SDK_PRELUDE + js;
}
