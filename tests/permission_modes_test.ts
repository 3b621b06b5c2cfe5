/**
 * Permission modes (issue 18, core/policy/mode.ts, docs/modes.md): one table of actions ×
 * modes, checked against the guard as the engine sees it (the policy behind `sandboxGuard` with
 * an active sandbox), and — for the commands — really run under bwrap with the profile the same
 * policy derives. Plan mode's write fails at the sandbox even when the guard is forced open, in
 * a real headless run. Plus the other views: worker grants, `policy show`, the stream-json
 * `init` event, `--mode` / `mode:` and their errors.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Policy } from "../core/policy/policy.ts";
import type { PermissionMode } from "../core/policy/mode.ts";
import {
  detectBackend,
  sandboxedCommand,
  sandboxGuard,
  type SandboxStatus,
} from "../core/policy/sandbox/mod.ts";
import { commandBatch, startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";

const MODES: PermissionMode[] = ["plan", "default", "accept-edits", "auto"];

/** A workspace and an outside dir under /var/tmp (the sandbox's /tmp is private). */
async function world() {
  let dir: string | undefined;
  try {
    if (Deno.statSync("/var/tmp").isDirectory) dir = "/var/tmp";
  } catch { /* default */ }
  const root = await Deno.realPath(await Deno.makeTempDir({ dir, prefix: "coyote-modes-" }));
  const ws = join(root, "ws");
  const out = join(root, "outside");
  const home = join(root, "home");
  for (const d of [ws, out, home, join(root, "cfg"), join(root, "data")]) {
    await Deno.mkdir(d, { recursive: true });
  }
  await Deno.writeTextFile(join(ws, "a.txt"), "hello\n");
  const policy = (mode: PermissionMode, skip = false) =>
    Policy.create({}, { allow: [], deny: [] }, {
      workspace: ws,
      configDir: join(root, "cfg"),
      dataDir: join(root, "data"),
      home,
      mode,
      dangerouslySkipPermissions: skip,
    });
  return { root, ws, out, home, policy, cleanup: () => Deno.remove(root, { recursive: true }) };
}

const ACTIVE: SandboxStatus = {
  mode: "auto",
  active: true,
  backend: "bwrap",
  autoAllow: true,
  reason: "test",
};

type Want = Record<PermissionMode, "allow" | "ask" | "deny">;

/** The table: action → decision per mode. `run`: a command really run under bwrap. */
function table(ws: string, out: string) {
  return [
    {
      what: "fs_read inside the workspace",
      access: { type: "read" as const, path: join(ws, "a.txt") },
      want: { plan: "allow", default: "allow", "accept-edits": "allow", auto: "allow" } as Want,
    },
    {
      what: "fs_write inside the workspace",
      access: { type: "write" as const, path: join(ws, "new.txt") },
      want: { plan: "deny", default: "ask", "accept-edits": "allow", auto: "allow" } as Want,
    },
    {
      what: "fs_write outside the workspace",
      access: { type: "write" as const, path: join(out, "x.txt") },
      want: { plan: "deny", default: "ask", "accept-edits": "ask", auto: "ask" } as Want,
    },
    {
      what: "read-only command",
      access: { type: "execute" as const, command: "cat a.txt" },
      want: { plan: "allow", default: "allow", "accept-edits": "allow", auto: "allow" } as Want,
      run: { code: 0 },
    },
    {
      what: "writing command",
      access: { type: "execute" as const, command: "touch made.txt" },
      want: { plan: "deny", default: "ask", "accept-edits": "ask", auto: "allow" } as Want,
      run: { file: "made.txt" },
    },
    {
      what: "writing redirection",
      access: { type: "execute" as const, command: "echo hi > redirected.txt" },
      want: { plan: "deny", default: "ask", "accept-edits": "allow", auto: "allow" } as Want,
      run: { file: "redirected.txt" },
    },
    {
      what: "network command",
      access: { type: "execute" as const, command: "curl -s https://example.com" },
      want: { plan: "deny", default: "ask", "accept-edits": "ask", auto: "allow" } as Want,
    },
  ];
}

Deno.test("permission modes: the guard's decision for each action in each mode", async () => {
  const w = await world();
  try {
    const rows: string[] = [];
    for (const row of table(w.ws, w.out)) {
      for (const mode of MODES) {
        const policy = w.policy(mode);
        const guard = sandboxGuard(policy, ACTIVE, () => policy.mode);
        const v = await guard.evaluate(row.access);
        if (v.decision !== row.want[mode]) {
          rows.push(`${row.what} in ${mode}: ${v.decision} (want ${row.want[mode]}): ${v.reason}`);
        }
      }
    }
    assert.deepEqual(rows, []);
  } finally {
    await w.cleanup();
  }
});

Deno.test("permission modes: rules decide except in plan, which stays read-only", async () => {
  const w = await world();
  try {
    const mk = (mode: PermissionMode, allow: string[], skip = false) =>
      Policy.create({}, { allow, deny: [] }, {
        workspace: w.ws,
        configDir: join(w.root, "cfg"),
        home: w.home,
        mode,
        dangerouslySkipPermissions: skip,
      });
    // An allow rule lifts default mode's ask; plan ignores it.
    const rule = ["Write(new.txt)", "Execute(touch:*)"];
    const write = { type: "write" as const, path: join(w.ws, "new.txt") };
    const touch = { type: "execute" as const, command: "touch new.txt" };
    assert.equal((await mk("default", rule).evaluate(write)).decision, "allow");
    assert.equal((await mk("default", rule).evaluate(touch)).decision, "allow");
    assert.equal((await mk("plan", rule).evaluate(write)).decision, "deny");
    assert.equal((await mk("plan", rule).evaluate(touch)).decision, "deny");
    // --dangerously-skip-permissions: plan still writes nothing; default asks nothing.
    assert.equal((await mk("plan", [], true).evaluate(write)).decision, "deny");
    assert.equal((await mk("plan", [], true).evaluate(touch)).decision, "deny");
    assert.equal(
      (await mk("plan", [], true).evaluate({ type: "execute", command: "ls" })).decision,
      "allow",
    );
    assert.equal((await mk("default", [], true).evaluate(write)).decision, "allow");
    // The reason says what to do.
    assert.match((await mk("plan", []).evaluate(write)).reason, /plan mode is read-only/);
    // A switch holds for the next decision.
    const p = mk("accept-edits", []);
    assert.equal((await p.evaluate(write)).decision, "allow");
    p.setMode("plan");
    assert.equal((await p.evaluate(write)).decision, "deny");
    p.setMode("default");
    assert.equal((await p.evaluate(write)).decision, "ask");
  } finally {
    await w.cleanup();
  }
});

Deno.test("permission modes: commands really run under bwrap — plan's workspace is read-only", async () => {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed for these tests (.ci/run installs bubblewrap)");
  const w = await world();
  try {
    for (const row of table(w.ws, w.out)) {
      if (!row.run) continue;
      for (const mode of MODES) {
        const policy = w.policy(mode);
        const c = sandboxedCommand(policy, row.access.command, {
          cwd: w.ws,
          backend,
          secrets: [],
          baseEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
        });
        // The sandbox holds whatever the guard says: run it even where the guard would not.
        const o = await new Deno.Command(c.program, {
          args: c.args,
          cwd: w.ws,
          env: c.env,
          clearEnv: true,
          stdin: "null",
          stderr: "piped",
          stdout: "piped",
        }).output();
        const err = new TextDecoder().decode(o.stderr);
        if (row.run.file) {
          const made: boolean = await Deno.stat(join(w.ws, row.run.file)).then(
            () => true,
            () => false,
          );
          assert.equal(made, mode !== "plan", `${row.what} in ${mode}: ${err}`);
          if (mode === "plan") {
            assert.notEqual(o.code, 0);
            assert.match(err, /Read-only file system/);
          }
          await Deno.remove(join(w.ws, row.run.file)).catch(() => {});
        } else {
          assert.equal(o.code, 0, `${row.what} in ${mode}: ${err}`);
          assert.equal(new TextDecoder().decode(o.stdout), "hello\n");
        }
      }
    }
  } finally {
    await w.cleanup();
  }
});

Deno.test("permission modes: worker grants — plan grants a plugin no write or run, default no write", async () => {
  const w = await world();
  try {
    for (const mode of MODES) {
      await Deno.mkdir(join(w.ws, "out"), { recursive: true });
      const g = w.policy(mode).workerPermissions({ read: ["."], write: ["out"] }, "p");
      assert.deepEqual(g.permissions.read, [w.ws], mode);
      if (mode === "plan") {
        assert.equal(g.permissions.write, false);
        assert.match(g.refused[0].message, /plan mode is read-only/);
      } else if (mode === "default") {
        // The guard would ask before each write: a grant cannot ask, so none is given.
        assert.equal(g.permissions.write, false);
        assert.match(g.refused[0].message, /default mode asks before writing/);
      } else assert.deepEqual(g.permissions.write, [join(w.ws, "out")], mode);
      // A program with arguments nobody knows yet is not read-only: plan grants no run.
      const run = w.policy(mode).workerPermissions({ run: ["git"] }, "p");
      if (mode === "plan") {
        assert.equal(run.permissions.run, false);
        assert.match(run.refused[0].message, /plan mode/);
      }
    }
  } finally {
    await w.cleanup();
  }
});

Deno.test("permission modes e2e: --mode plan with the guard forced open still writes nothing", async () => {
  const w = await world();
  const env = await makeCoyoteEnv();
  const server = await startModelServer({
    script: commandBatch({ w1: "echo pwned > pwned.txt", w2: "touch also.txt; rm a.txt" }),
  });
  try {
    const r = await runCoyote(
      ["--headless", "--output-format", "stream-json", "--mode", "plan", "go"],
      {
        cwd: w.ws,
        env: childEnv(env, {
          baseURL: server.baseURL,
          extra: { HOME: w.home, COYOTE_TEST_MODE: "1", COYOTE_TEST_GUARD: "allow" },
        }),
      },
    );
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(lines[0].type, "init");
    assert.equal(lines[0].permissionMode, "plan");
    assert.equal(lines[0].sandbox.auto_allow, false);
    assert.match(lines[0].sandbox.reason, /workspace read-only \(plan mode\)/);
    assert.deepEqual(lines.at(-1).denied, [], "the guard was forced to allow everything");
    await assert.rejects(Deno.stat(join(w.ws, "pwned.txt")));
    await assert.rejects(Deno.stat(join(w.ws, "also.txt")));
    assert.equal(await Deno.readTextFile(join(w.ws, "a.txt")), "hello\n");
    assert.match(r.stdout, /Read-only file system/);
  } finally {
    await server.close();
    await env.cleanup();
    await w.cleanup();
  }
});

Deno.test("permission modes: init and policy show name the mode; mode: in config; bad values", async () => {
  const w = await world();
  const env = await makeCoyoteEnv();
  const server = await startModelServer({ script: [{ text: "ok" }, { text: "ok" }] });
  try {
    const e = childEnv(env, { baseURL: server.baseURL, extra: { HOME: w.home } });
    // Default: auto (today's behaviour).
    const r = await runCoyote(["--headless", "--output-format", "stream-json", "hi"], {
      cwd: w.ws,
      env: e,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout.split("\n")[0]).permissionMode, "auto");
    const show = await runCoyote(["policy", "show", "--mode", "accept-edits"], {
      cwd: w.ws,
      env: e,
    });
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /mode: {7}accept-edits \(file writes inside the workspace/);
    assert.match(show.stdout, /auto_allow false/);
    // config mode:, and the flag wins over it.
    const cfg = join(env.configDir, "config.yaml");
    const before = await Deno.readTextFile(cfg).catch(() => "");
    await Deno.writeTextFile(cfg, before + "\nmode: plan\n");
    const c = await runCoyote(["policy", "show"], { cwd: w.ws, env: e });
    assert.match(c.stdout, /mode: {7}plan/);
    const f = await runCoyote([
      "--headless",
      "--output-format",
      "stream-json",
      "--mode",
      "default",
      "hi",
    ], {
      cwd: w.ws,
      env: e,
    });
    assert.equal(JSON.parse(f.stdout.split("\n")[0]).permissionMode, "default");
    // sandbox.auto_allow: false without a mode is accept-edits (the old spelling).
    await Deno.writeTextFile(cfg, before + "\nsandbox: {auto_allow: false}\n");
    const old = await runCoyote(["policy", "show"], { cwd: w.ws, env: e });
    assert.match(old.stdout, /mode: {7}accept-edits/);
    // Bad values: the file and the field; the flag's choices.
    await Deno.writeTextFile(cfg, before + "\nmode: yolo\n");
    const bad = await runCoyote(["policy", "show"], { cwd: w.ws, env: e });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /config\.yaml.*mode.*expected plan, default, accept-edits or auto/s);
    assert.doesNotMatch(bad.stderr, /at .*\.ts:\d+/);
    await Deno.writeTextFile(cfg, before);
    const flag = await runCoyote(["--mode", "yolo", "hi"], { cwd: w.ws, env: e });
    assert.equal(flag.code, 2);
    assert.match(flag.stderr, /--mode.*yolo.*plan, default, accept-edits, auto/s);
  } finally {
    await server.close();
    await env.cleanup();
    await w.cleanup();
  }
});

Deno.test("permission modes: a trusted workspace's mode: narrows the user's, never widens it", async () => {
  const w = await world();
  const env = await makeCoyoteEnv();
  try {
    const e = childEnv(env, { extra: { HOME: w.home } });
    const cfg = join(env.configDir, "config.yaml");
    await Deno.mkdir(join(w.ws, ".coyote"), { recursive: true });
    const show = async () => {
      const r = await runCoyote(["policy", "show"], { cwd: w.ws, env: e });
      assert.equal(r.code, 0, r.stderr);
      return /mode: {7}(\S+)/.exec(r.stdout)?.[1];
    };
    await Deno.writeTextFile(
      cfg,
      `mode: accept-edits\ntrusted_workspaces: [${JSON.stringify(w.ws)}]\n`,
    );
    await Deno.writeTextFile(join(w.ws, ".coyote", "config.yaml"), "mode: plan\n");
    assert.equal(await show(), "plan");
    await Deno.writeTextFile(join(w.ws, ".coyote", "config.yaml"), "mode: auto\n");
    assert.equal(await show(), "accept-edits");
    // --mode wins over every layer.
    const r = await runCoyote(["policy", "show", "--mode", "auto"], { cwd: w.ws, env: e });
    assert.match(r.stdout, /mode: {7}auto/);
    // An untrusted workspace's file is not read at all.
    await Deno.writeTextFile(cfg, "mode: accept-edits\n");
    await Deno.writeTextFile(join(w.ws, ".coyote", "config.yaml"), "mode: plan\n");
    assert.equal(await show(), "accept-edits");
  } finally {
    await env.cleanup();
    await w.cleanup();
  }
});
