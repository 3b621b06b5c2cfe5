/**
 * The start bundle (scripts/bundle_start.ts, core/frontends/cli/start_bundle.ts; issue 22): built
 * from this checkout into a temporary folder, it is fresh for these files and only for them (an
 * edit, a size change, another root make it stale; a moved mtime with equal content does not),
 * and a headless session and an ACP handshake run through it as through the sources.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildStartBundle } from "../scripts/bundle_start.ts";
import { bundleIsFresh, type BundleStamp } from "../core/frontends/cli/start_bundle.ts";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, coyoteTaskFlags, makeCoyoteEnv, REPO_ROOT } from "./support/run_coyote.ts";

Deno.test("start bundle: fresh for the files it was built from, stale after any change, and runs a session", async () => {
  // Inside the checkout, so its chunks resolve npm packages through deno.json like the sources.
  const out = await Deno.makeTempDir({ dir: REPO_ROOT, prefix: ".bundle-test-" });
  try {
    const stamp = await buildStartBundle(REPO_ROOT, out);
    assert.ok(stamp.files.some(([f]) => f === "core/frontends/cli/mod.ts"));
    assert.ok(stamp.files.some(([f]) => f === "deno.lock"));
    assert.equal(await bundleIsFresh(REPO_ROOT, out), true);

    const write = (s: BundleStamp) =>
      Deno.writeTextFile(join(out, "stamp.json"), JSON.stringify(s));
    const i = stamp.files.findIndex(([f]) => f === "core/frontends/cli/mod.ts");
    const alter = (k: 1 | 2 | 3, v: number | string): BundleStamp => ({
      ...stamp,
      files: stamp.files.map((e, j) => j === i ? Object.assign([...e], { [k]: v }) as typeof e : e),
    });
    await write(alter(2, 1)); // only the mtime moved: the content is hashed and equal
    assert.equal(await bundleIsFresh(REPO_ROOT, out), true);
    await write({
      ...alter(2, 1),
      files: alter(2, 1).files.map((e, j) => j === i ? [e[0], e[1], 1, "0".repeat(64)] : e),
    });
    assert.equal(await bundleIsFresh(REPO_ROOT, out), false, "edited content");
    await write(alter(1, stamp.files[i][1] + 1));
    assert.equal(await bundleIsFresh(REPO_ROOT, out), false, "size changed");
    await write({ ...stamp, files: [...stamp.files, ["core/gone.ts", 1, 1, "0".repeat(64)]] });
    assert.equal(await bundleIsFresh(REPO_ROOT, out), false, "an input deleted");
    await write({ ...stamp, root: "/elsewhere" });
    assert.equal(await bundleIsFresh(REPO_ROOT, out), false, "built for another checkout");
    await write({ ...stamp, deno: "0.0.0" });
    assert.equal(await bundleIsFresh(REPO_ROOT, out), false, "another Deno");
    await Deno.writeTextFile(join(out, "stamp.json"), "{");
    assert.equal(await bundleIsFresh(REPO_ROOT, out), false, "unreadable stamp");
    await write(stamp);

    // A headless 2-turn session through the bundle (an entry like main.ts's bundle branch).
    assert.ok(stamp.build, "each build has its own folder");
    const entry = join(out, stamp.build!, "entry.js");
    await Deno.writeTextFile(
      entry,
      `const { main } = await import("./cli.js");\nDeno.exit(await main(Deno.args));\n`,
    );
    const server = await startModelServer({
      script: [
        { tool_calls: [{ name: "execute_command", arguments: { command: "echo hello" } }] },
        { text: "The command printed hello." },
      ],
    });
    const env = await makeCoyoteEnv();
    const ws = await Deno.makeTempDir();
    try {
      const o = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          ...coyoteTaskFlags(),
          entry,
          "--headless",
          "--output-format",
          "json",
          "--allow",
          "Execute(echo hello)",
          "run echo hello",
        ],
        cwd: ws,
        env: childEnv(env, { baseURL: server.baseURL }),
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(o.code, 0, new TextDecoder().decode(o.stderr));
      const res = JSON.parse(new TextDecoder().decode(o.stdout));
      assert.equal(res.text, "The command printed hello.");
      assert.equal(res.usage.requests, 2);
      // deno-lint-ignore no-explicit-any
      const msgs = (server.requests[1].body as any).messages as {
        role: string;
        content: unknown;
      }[];
      assert.match(JSON.stringify(msgs.filter((m) => m.role === "tool")), /hello/, "the shell ran");
    } finally {
      await server.close();
      await env.cleanup();
      await Deno.remove(ws, { recursive: true });
    }

    // A rebuild (deno task gen / install while a REPL is open) leaves the earlier build whole: a
    // process started on it still finds the chunks it loads later (a fresh-user trial's REPL
    // crashed at its next slash command when the old folder was replaced).
    const again = await buildStartBundle(REPO_ROOT, out);
    assert.notEqual(again.build, stamp.build);
    const current = JSON.parse(await Deno.readTextFile(join(out, "stamp.json"))) as BundleStamp;
    assert.equal(current.build, again.build);
    for (const b of [stamp.build!, again.build!]) {
      assert.ok((await Deno.stat(join(out, b, "cli.js"))).isFile, `${b}/cli.js`);
    }
    assert.equal(await bundleIsFresh(REPO_ROOT, out), true);
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});
