/**
 * The repository's static checks as part of the suite (so CI, which runs the README's test
 * command, fails on them too): `deno lint` and `deno fmt --check` over the whole tree, as the
 * `lint` and `fmt` tasks run them. Type errors already fail `deno test` (it type-checks what it
 * runs); `deno task check` covers the rest.
 */
import assert from "node:assert/strict";

const ROOT = new URL("..", import.meta.url).pathname;

async function run(args: string[]): Promise<{ ok: boolean; out: string }> {
  const r = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    env: { DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { ok: r.success, out: (dec.decode(r.stdout) + dec.decode(r.stderr)).slice(-4000) };
}

Deno.test("static checks: deno lint finds nothing", async () => {
  const r = await run(["lint"]);
  assert.ok(r.ok, r.out);
});

Deno.test("static checks: deno fmt --check finds nothing", async () => {
  const r = await run(["fmt", "--check"]);
  assert.ok(r.ok, r.out);
});
