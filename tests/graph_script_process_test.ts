/**
 * Graph `.ts` scripts in their own heap-capped process (core/graph/script.ts, the plugin host's
 * child): a script that exits, closes, throws at top level, crashes, starts Workers or floods the
 * channel fails its node at once with a message naming the script and what happened, in both
 * ways a script runs inside its process (the process's main isolate under `deno run`; a Worker,
 * as in a compiled binary); one that allocates without bound is stopped at its heap cap while
 * Coyote runs on (a real `coyote` process taking the node's fallback); cancellation and timeouts
 * leave no process behind; a session's deny rule narrows a script's declared grant.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  closeScriptWorkers,
  runModuleScript,
  type ScriptIsolate,
  type ScriptServices,
} from "../core/graph/script.ts";
import { NodeError } from "../core/graph/errors.ts";
import { acquireWorkspace } from "../core/session/workspace.ts";
import { openSession } from "../core/session/conversation.ts";
import { startModelServer } from "./support/model_server.ts";
import { testApp } from "./support/fixtures.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";
import { alivePids } from "./support/acp_harness.ts";

const services: ScriptServices = {
  exec: () => Promise.resolve({ exit_code: 0, stdout: "", stderr: "", duration_ms: 0 }),
  read: () => Promise.resolve(undefined),
  write: () => Promise.resolve(),
  event: () => {},
};

function run(
  name: string,
  text: string,
  isolate: ScriptIsolate,
  extra: Partial<Parameters<typeof runModuleScript>[0]> = {},
  signal = new AbortController().signal,
) {
  return runModuleScript({
    name,
    text,
    state: {},
    timeoutMs: 60_000,
    permissions: "none",
    services,
    isolate,
    ...extra,
  }, signal);
}

async function failsWith(p: Promise<unknown>, re: RegExp): Promise<void> {
  const e = await p.then(() => undefined, (e) => e);
  assert.ok(e instanceof NodeError, `expected a node error, got ${e}`);
  assert.match((e as Error).message, re);
}

for (const isolate of ["process", "worker"] as const) {
  Deno.test(`graph script process (${isolate}): exits, closes, top-level throws and crashes fail at once, naming the script`, async () => {
    try {
      await failsWith(
        run("scripts/exit.ts", "export default () => { Deno.exit(3); };", isolate),
        /^script scripts\/exit\.ts crashed: the script called Deno\.exit\(3\)/,
      );
      await failsWith(
        run("scripts/close.ts", "export default () => { self.close(); return {}; };", isolate),
        /^script scripts\/close\.ts crashed: the script closed its worker \(self\.close\(\)\)/,
      );
      await failsWith(
        run("top.ts", "throw new Error('bad at load');\nexport default () => ({});", isolate),
        /^script top\.ts failed while loading: bad at load$/,
      );
      await failsWith(
        run(
          "float.ts",
          "export default () => { Promise.reject(new Error('floating')); return new Promise(() => {}); };",
          isolate,
        ),
        /^script float\.ts crashed: unhandled rejection: Error: floating$/,
      );
      await failsWith(
        run(
          "spawn.ts",
          "export default () => { new Worker('data:text/javascript,', { type: 'module' }); return {}; };",
          isolate,
        ),
        /^script spawn\.ts failed: a graph script cannot start Workers$/,
      );
      // A message bigger than the host buffers kills the script's process.
      await failsWith(
        run("big.ts", "export default () => ({ s: 'x'.repeat(40 * 1024 * 1024) });", isolate),
        /^script big\.ts failed: the script sent a message larger than \d+ bytes/,
      );
      // And a well-behaved script still works, warm the second time.
      const ok = "export default (s) => ({ n: (s.n ?? 0) + 1, pid: Deno.pid });";
      const a = await run("ok.ts", ok, isolate);
      const b = await run("ok.ts", ok, isolate);
      assert.equal(a.n, 1);
      assert.equal(a.pid, b.pid, "the second run reused the kept process");
      assert.notEqual(a.pid, Deno.pid, "the script ran in a process of its own");
    } finally {
      await closeScriptWorkers();
    }
  });
}

Deno.test("graph script process: the heap cap stops unbounded allocation with a node error naming the script and the limit", async () => {
  for (const isolate of ["process", "worker"] as const) {
    await failsWith(
      run(
        "hog.ts",
        "export default () => { const a = []; for (;;) a.push(new Array(1e5).fill(Math.random())); };",
        isolate,
        { maxHeapMB: 64 },
      ),
      /^script hog\.ts failed: out of memory: the script's JavaScript heap reached its limit of 64 MB/,
    );
  }
});

Deno.test("graph script process: isolates a script starts around the Worker refusal are bounded by the process's memory limit", async () => {
  // node:worker_threads through eval (the compiler refuses a literal import()): each such
  // isolate has a heap of its own, so the process's size is what bounds them.
  const bomb = `export default async () => {
  const m = await eval("imp" + "ort('node:worker_threads')");
  for (let i = 0; i < 8; i++) {
    new m.Worker("const a = []; for (;;) a.push(new Array(1e5).fill(Math.random()));", { eval: true });
  }
  return new Promise(() => {});
};`;
  try {
    await failsWith(
      run("bomb.ts", bomb, "process", { maxMemoryMB: 96 }),
      /^script bomb\.ts failed: memory limit exceeded \(its process grew \d+ MiB > 96 MiB\)$/,
    );
  } finally {
    await closeScriptWorkers();
  }
});

Deno.test("graph script process: a path grant holding a symbolic link that leads out refuses the start", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-graph-link-" }));
  try {
    await Deno.mkdir(join(root, "granted"));
    await Deno.mkdir(join(root, "outside"));
    await Deno.writeTextFile(join(root, "outside", "key"), "secret");
    await Deno.symlink(join(root, "outside"), join(root, "granted", "keys"));
    await failsWith(
      run(
        "link.ts",
        `export default () => ({ k: Deno.readTextFileSync(${
          JSON.stringify(join(root, "granted", "keys", "key"))
        }) });`,
        "process",
        { permissions: { read: [join(root, "granted")] } },
      ),
      /^script link\.ts: refused to start: .*symbolic link.*keys/,
    );
  } finally {
    await closeScriptWorkers();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("graph script process: floods of events and ctx calls are capped", async () => {
  let events = 0;
  let reads = 0;
  try {
    const r = await runModuleScript({
      name: "flood.ts",
      text: `export default async (s, ctx) => {
  for (let i = 0; i < 5000; i++) ctx.event("tick", { i });
  const all = await Promise.allSettled(Array.from({ length: 100 }, () => ctx.read("x")));
  return { refused: all.filter((x) => x.status === "rejected").map((x) => x.reason.message) };
};`,
      state: {},
      timeoutMs: 60_000,
      permissions: "none",
      services: {
        ...services,
        event: () => void events++,
        read: async () => {
          reads++;
          await new Promise((r) => setTimeout(r, 50));
          return "r";
        },
      },
    }, new AbortController().signal);
    assert.equal(events, 1000, "events past 1000 per run are dropped");
    assert.equal(reads, 16, "16 calls in flight at once");
    const refused = r.refused as string[];
    assert.equal(refused.length, 84);
    assert.ok(refused.every((m) => m === "more than 16 ctx calls at once"));
  } finally {
    await closeScriptWorkers();
  }
});

Deno.test("graph script process: cancellation and timeouts kill a busy script's process; nothing is left behind", async () => {
  await closeScriptWorkers();
  // Each script reports its own process id (`deno test --parallel` runs other test files in this
  // same process, so "new descendants" would include theirs).
  const pids: number[] = [];
  const started = () => {
    let go!: () => void;
    const p = new Promise<void>((r) => go = r);
    const svc: ScriptServices = {
      ...services,
      event: (_n, d) => {
        pids.push(Number(d.pid));
        go();
      },
    };
    return { p, svc };
  };
  const report = "ctx.event('started', { pid: Deno.pid });";
  const ac = new AbortController();
  const first = started();
  const cancelled = run(
    "busy.ts",
    `export default (s, ctx) => { ${report} for (;;) {} };`,
    "process",
    { services: first.svc },
    ac.signal,
  ).then(() => "resolved", (e) => e);
  await first.p;
  assert.ok(pids[0] > 0 && pids[0] !== Deno.pid, "the script runs in a child process");
  ac.abort(new Error("stop"));
  assert.equal(((await cancelled) as Error).message, "stop");
  const second = started();
  await failsWith(
    run("busy2.ts", `export default (s, ctx) => { ${report} for (;;) {} };`, "process", {
      timeoutMs: 300,
      services: second.svc,
    }),
    /^script busy2\.ts timed out after 0\.3 s$/,
  );
  // A script's process killed from outside fails its node at once.
  const third = started();
  const killed = run(
    "killed.ts",
    `export default (s, ctx) => { ${report} return new Promise(() => {}); };`,
    "process",
    { services: third.svc },
  );
  await third.p;
  Deno.kill(pids[2], "SIGKILL");
  await failsWith(
    killed,
    /^script killed\.ts failed: the script's process was killed \(SIGKILL\)$/,
  );
  assert.equal(pids.length, 3);
  for (let i = 0; i < 100 && alivePids(pids).length; i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.deepEqual(alivePids(pids), [], "no script process is left");
});

Deno.test("graph script process: a script at its heap cap fails its node, the fallback runs and Coyote finishes", async () => {
  const env = await makeCoyoteEnv();
  const repo = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-graph-oom-" }));
  const dir = join(env.configDir, "agents", "hog");
  await Deno.mkdir(join(dir, "scripts"), { recursive: true });
  await Deno.writeTextFile(
    join(dir, "graph.yaml"),
    `name: hog
description: allocates without bound
start: eat
nodes:
  eat: { type: script, script: scripts/eat.ts, outputs: [x], next: done, fallback: caught }
  caught: { type: end, output: "CAUGHT {{last_error.node}}: {{last_error.message}}" }
  done: { type: end, output: "NOT REACHED" }
`,
  );
  await Deno.writeTextFile(
    join(dir, "scripts", "eat.ts"),
    "export default () => { const a = []; for (;;) a.push(new Array(1e5).fill(Math.random())); };\n",
  );
  try {
    const r = await runCoyote(["--headless", "-a", "hog", "go"], {
      cwd: repo,
      env: { ...childEnv(env, { baseURL: "http://127.0.0.1:9" }), COYOTE_PLUGIN_MAX_HEAP_MB: "64" },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /CAUGHT eat: script scripts\/eat\.ts failed: out of memory: the script's JavaScript heap reached its limit of 64 MB/,
    );
    assert.doesNotMatch(r.stderr, /Last few GCs|Fatal JavaScript/, "V8's report is not shown");
  } finally {
    await env.cleanup();
    await Deno.remove(repo, { recursive: true }).catch(() => {});
  }
});

Deno.test("graph script grant: a session deny rule narrows a script's declared permissions", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-graph-grant-" }));
  const cwd = join(root, "ws");
  const g = join(cwd, ".coyote", "agents", "reader");
  await Deno.mkdir(join(cwd, "data"), { recursive: true });
  await Deno.mkdir(g, { recursive: true });
  await Deno.writeTextFile(join(cwd, "data", "secret.txt"), "s3cret");
  await Deno.mkdir(join(root, "outside"));
  await Deno.writeTextFile(join(root, "outside", "o.txt"), "out");
  await Deno.writeTextFile(
    join(g, "graph.yaml"),
    `name: reader
description: reads data/ with Deno itself
start: r
nodes:
  r: { type: script, script: r.ts, outputs: [got], next: done, permissions: { read: [data, ../outside] } }
  done: { type: end, output: "{{got}}" }
`,
  );
  await Deno.writeTextFile(
    join(g, "r.ts"),
    `const read = (p) => {
  try { return "READ " + Deno.readTextFileSync(p); } catch (e) { return "REFUSED " + e.name; }
};
export default () => ({ got: read("data/secret.txt") + " | " + read("../outside/o.txt") });
`,
  );
  const server = await startModelServer({ script: [{ text: "unused" }], repeat: true });
  const app = testApp({ cwd, configDir: join(root, "config"), dataDir: join(root, "data") }, {
    baseURL: server.baseURL,
    apiKey: "k",
    model: "scripted",
  });
  const ws = await acquireWorkspace(app, { cwd, log: () => {} });
  const cwdBefore = Deno.cwd();
  Deno.chdir(cwd); // the script's process works where Coyote does
  try {
    const s = await openSession(ws, {
      agent: "reader",
      permission: () => Promise.resolve("reject_once"),
    });
    try {
      const first = await s.prompt("go", { onEvent: () => {} });
      assert.equal(
        first.text,
        "READ s3cret | REFUSED NotCapable",
        "declared and allowed: granted; outside the workspace: not",
      );
      // What a "reject always" answer adds: an exact deny rule for the rest of the session.
      s.addRule("deny", `Read(${join(cwd, "data", "secret.txt")})`);
      // A session allow rule never widens a script's grant.
      s.addRule("allow", `Read(${join(root, "outside")}/**)`);
      const second = await s.prompt("go", { onEvent: () => {} });
      assert.equal(
        second.text,
        "REFUSED NotCapable | REFUSED NotCapable",
        "the session's deny rule narrowed it; its allow rule did not widen it",
      );
    } finally {
      await s.close();
    }
    // A new session starts from the configured policy again.
    const fresh = await openSession(ws, {
      agent: "reader",
      permission: () => Promise.resolve("reject_once"),
    });
    try {
      assert.equal(
        (await fresh.prompt("go", { onEvent: () => {} })).text,
        "READ s3cret | REFUSED NotCapable",
      );
    } finally {
      await fresh.close();
    }
  } finally {
    Deno.chdir(cwdBefore);
    await closeScriptWorkers();
    await ws.release();
    await server.close();
    await Deno.remove(root, { recursive: true });
  }
});
