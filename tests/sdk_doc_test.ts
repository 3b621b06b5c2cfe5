/**
 * The plugin SDK's documentation as part of the suite (issue 15): every export of `sdk/mod.ts`
 * carries an `@example`, and every example type-checks and runs. The examples run as Deno doc
 * tests in a subprocess, `deno test --doc sdk/mod.ts`, so exactly the SDK's code blocks are
 * collected (`--doc` on the suite's own `deno test tests/` would also turn every code block of every
 * file under tests/, fixtures and markdown included, into a test).
 */
import assert from "node:assert/strict";

const ROOT = new URL("..", import.meta.url).pathname;
const SDK = new URL("../sdk/mod.ts", import.meta.url).href;

async function deno(args: string[]): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  const r = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    env: { DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { ok: r.success, stdout: dec.decode(r.stdout), stderr: dec.decode(r.stderr) };
}

/** The part of `deno doc --json` (format version 2) this test reads. */
interface DocJson {
  version: number;
  nodes: Record<string, {
    symbols: {
      name: string;
      declarations: {
        declarationKind: string;
        jsDoc?: { tags?: { kind: string; doc?: string }[] };
      }[];
    }[];
  }>;
}

/** Each export of sdk/mod.ts with the texts of its `@example` tags. */
async function sdkExamples(): Promise<Map<string, string[]>> {
  const r = await deno(["doc", "--json", "sdk/mod.ts"]);
  assert.ok(r.ok, r.stderr);
  const doc = JSON.parse(r.stdout) as DocJson;
  assert.equal(doc.version, 2, "deno doc --json changed its format; update this test");
  const node = doc.nodes[SDK];
  assert.ok(node, `deno doc --json has no node for ${SDK}`);
  const out = new Map<string, string[]>();
  for (const sym of node.symbols) {
    const decls = sym.declarations.filter((d) => d.declarationKind === "export");
    if (decls.length === 0) continue;
    out.set(
      sym.name,
      decls.flatMap((d) => d.jsDoc?.tags ?? []).filter((t) => t.kind === "example").map((t) =>
        t.doc ?? ""
      ),
    );
  }
  return out;
}

Deno.test("sdk: every export has an @example", async () => {
  const exports = await sdkExamples();
  for (const name of ["SDK_VERSION", "defineTool", "definePlugin", "ToolContext"]) {
    assert.ok(exports.has(name), `deno doc lists no export ${name}: ${[...exports.keys()]}`);
  }
  const missing = [...exports].filter(([, examples]) => examples.length === 0).map(([n]) => n);
  assert.deepEqual(missing, [], `exports of sdk/mod.ts without an @example: ${missing.join(", ")}`);
  // Deno std's shape: a title line, then a ```ts block that imports the SDK by its public name.
  const shape = /^(?!```)[^\n]+\n```ts\n[\s\S]*from "@coyote\/sdk";[\s\S]*\n```$/;
  const malformed = [...exports].filter(([, examples]) => examples.some((e) => !shape.test(e)))
    .map(([n]) => n);
  assert.deepEqual(malformed, [], "@example without a title line or a ```ts block importing it");
});

Deno.test("sdk: every @example runs", async () => {
  const examples = [...(await sdkExamples()).values()].flat().length;
  // No permission flags: the examples touch no file, network or environment variable.
  const r = await deno(["test", "--doc", "sdk/mod.ts"]);
  const out = r.stdout + r.stderr;
  const errors = out.indexOf(" ERRORS ");
  assert.ok(r.ok, (errors >= 0 ? out.slice(errors) : out).slice(-6000));
  const passed = Number(/^ok \| (\d+) passed \| 0 failed/m.exec(r.stdout)?.[1]);
  assert.ok(passed >= examples, `${passed} doc tests ran for ${examples} @example blocks:\n${out}`);
});
