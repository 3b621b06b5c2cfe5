/**
 * core/util/child_stdout.ts: `stdoutToStderr` is self-contained (its source text, run on its own,
 * works: the plugin Worker's bootstrap is built from it), and the bootstrap's source defines it.
 */
import assert from "node:assert/strict";
import { stdoutToStderr } from "../core/util/child_stdout.ts";
import { WORKER_SOURCE, workerSource } from "../core/extensions/plugin_host/worker_main.ts";

const decoder = new TextDecoder();

async function denoEval(ext: "js" | "ts", code: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", `--ext=${ext}`, code],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

Deno.test("stdoutToStderr: its source text alone (no imports, no module scope) sends a child's stdout to stderr", async () => {
  const code = `${stdoutToStderr.toString()}
    const piped = (cmd, args) => new Deno.Command(cmd, { args, stdout: "piped" });
    const st = await stdoutToStderr(piped("echo", ["A-spawn"]), false).spawn().status;
    console.error("status:" + st.code);
    await stdoutToStderr(piped("echo", ["B-spawn-inherit"]), true).spawn().status;
    const r = await stdoutToStderr(piped("echo", ["C-output"]), true).output();
    console.error("kept:" + new TextDecoder().decode(r.stdout).trim());
    const s = stdoutToStderr(piped("echo", ["D-outputSync"]), true).outputSync();
    console.error("keptSync:" + new TextDecoder().decode(s.stdout).trim());
    const t0 = Date.now();
    await stdoutToStderr(piped("sh", ["-c", "(sleep 1.5) & echo E-grace"]), false).spawn().status;
    console.error("graceMs:" + (Date.now() - t0));
  `;
  const r = await denoEval("js", code);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "", "nothing reached fd 1");
  for (
    const s of [
      "A-spawn",
      "status:0",
      "B-spawn-inherit",
      "C-output",
      "kept:C-output",
      "D-outputSync",
      "keptSync:D-outputSync",
      "E-grace",
    ]
  ) {
    assert.ok(r.stderr.includes(s), `${s} in ${r.stderr}`);
  }
  const ms = Number(/graceMs:(\d+)/.exec(r.stderr)?.[1]);
  assert.ok(ms < 1200, `status settles without waiting for the grandchild (${ms} ms)`);
});

Deno.test("workerSource: the bootstrap's source defines stdoutToStderr, then calls workerMain", () => {
  const helper = stdoutToStderr.toString();
  assert.ok(helper.startsWith("function stdoutToStderr("), helper.slice(0, 80));
  assert.ok(WORKER_SOURCE.startsWith(`${helper}\n(function workerMain(`));
  assert.ok(WORKER_SOURCE.endsWith("})();\n"));
  const script = workerSource({ role: "script", childEnv: { A: "1" } });
  assert.ok(script.startsWith(`${helper}\n(function workerMain(`));
  assert.ok(script.endsWith(`})(${JSON.stringify({ role: "script", childEnv: { A: "1" } })});\n`));
});

Deno.test("workerSource: in a plugin Worker built from WORKER_SOURCE, a child's stdout goes to stderr", async () => {
  const workerMainUrl = new URL("../core/extensions/plugin_host/worker_main.ts", import.meta.url);
  const plugin = `export default {
    name: "t",
    tools: [{
      name: "run",
      input: { type: "object" },
      async run() {
        await new Deno.Command("echo", { args: ["W-default"] }).spawn().status;
        await new Deno.Command("echo", { args: ["W-inherit"], stdout: "inherit" }).spawn().status;
        const o = await new Deno.Command("echo", { args: ["W-output"], stdout: "inherit" }).output();
        const p = await new Deno.Command("echo", { args: ["W-piped"] }).output();
        return "kept:" + new TextDecoder().decode(o.stdout).trim() +
          " piped:" + new TextDecoder().decode(p.stdout).trim();
      },
    }],
  };`;
  const code = `
    import { WORKER_SOURCE } from ${JSON.stringify(workerMainUrl.href)};
    const w = new Worker("data:application/javascript," + encodeURIComponent(WORKER_SOURCE), {
      type: "module",
    });
    const done = new Promise((resolve) => {
      w.onmessage = (ev) => {
        const m = ev.data;
        if (m.type === "ready") {
          w.postMessage({ type: "call", id: 1, tool: "run", input: {}, cwd: Deno.cwd() });
        } else if (m.type === "result" || m.type === "error" || m.type === "loadError") {
          console.error("reply:" + JSON.stringify(m));
          resolve(undefined);
        }
      };
    });
    w.postMessage({
      type: "load",
      name: "t",
      code: ${JSON.stringify(plugin)},
      limits: { maxResultBytes: 65536 },
      childEnv: { PATH: Deno.env.get("PATH") ?? "" },
    });
    await done;
    w.terminate();
  `;
  const r = await denoEval("ts", code);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "", "nothing reached fd 1");
  for (const s of ["W-default", "W-inherit", "W-output", "kept:W-output piped:W-piped"]) {
    assert.ok(r.stderr.includes(s), `${s} in ${r.stderr}`);
  }
});
