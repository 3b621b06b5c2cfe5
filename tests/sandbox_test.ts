/**
 * The OS sandbox (core/policy/sandbox/, issue 11 §1) with real commands under real bwrap: writes outside
 * the workspace fail, `.git/config` cannot be changed, `~/.ssh` is invisible (fake HOME), the
 * network is unreachable (a loopback server on the host), `/proc/$PPID/environ` shows nothing of
 * Coyote, the provider key and secret-looking variables are absent. The same attacks also run
 * through a real headless session with the guard forced to allow (test-only switch), proving the
 * boundary does not depend on the parser. Plus: settings parsing, the SBPL text for macOS, the
 * non-interactive environment, process trees that end with the call, SIGHUP in headless mode.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Policy } from "../core/policy/policy.ts";
import {
  CommandSandbox,
  deriveProfile,
  describeSandbox,
  detectBackend,
  envDecision,
  sandboxedCommand,
  sandboxGuard,
  sandboxSettings,
  type SandboxStatus,
} from "../core/policy/sandbox/mod.ts";
import { sbplProfile } from "../core/policy/sandbox/sbpl.ts";
import { commandEnvironment } from "../core/policy/sandbox/env.ts";
import { executeCommandTool, makeExecuteCommandTool } from "../plugins/exec/mod.ts";
import { runTool, toolContext } from "./support/fixtures.ts";
import { commandBatch, startModelServer } from "./support/model_server.ts";
import { childEnv, coyoteCommand, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";

const KEY = "sk-provider-key-0123456789abcdef";

/**
 * A workspace (git repo), a fake home with credentials, an outside dir, config and data dirs.
 * Under /var/tmp when it exists: the sandbox replaces /tmp with a private dir, which would hide
 * everything outside the workspace and make the read-only and hidden checks trivial.
 */
async function world() {
  let dir: string | undefined;
  try {
    if (Deno.statSync("/var/tmp").isDirectory) dir = "/var/tmp";
  } catch { /* default temp dir */ }
  const root = await Deno.realPath(await Deno.makeTempDir({ dir, prefix: "coyote-sbx-test-" }));
  const ws = join(root, "ws");
  const home = join(root, "home");
  const out = join(root, "outside");
  const cfg = join(root, "cfg");
  const data = join(root, "data");
  for (const d of [ws, join(home, ".ssh"), join(home, ".aws"), out, cfg, data]) {
    await Deno.mkdir(d, { recursive: true });
  }
  await new Deno.Command("git", { args: ["init", "-q", ws] }).output();
  await Deno.writeTextFile(join(home, ".ssh", "id_rsa"), "PRIVATE KEY");
  await Deno.writeTextFile(join(home, ".netrc"), "machine x password y");
  await Deno.writeTextFile(join(cfg, "config.yaml"), `provider: {api_key: ${KEY}}\n`);
  await Deno.writeTextFile(join(out, "o.txt"), "outside");
  await Deno.mkdir(join(ws, "sub", ".git"), { recursive: true });
  await Deno.writeTextFile(join(ws, "sub", ".git", "config"), "[core]\n");
  const policy = (allow: string[] = [], deny: string[] = []) =>
    Policy.create({}, { allow, deny }, { workspace: ws, configDir: cfg, dataDir: data, home });
  return {
    root,
    ws,
    home,
    out,
    cfg,
    data,
    policy,
    cleanup: () => Deno.remove(root, { recursive: true }).catch(() => {}),
  };
}

/** Runs `command` with {@link sandboxedCommand} under `policy`; returns code and output. */
async function inSandbox(
  policy: Policy,
  command: string,
  cwd: string,
  baseEnv: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed for these tests (.ci/run installs bubblewrap)");
  const c = sandboxedCommand(policy, command, {
    cwd,
    backend,
    secrets: [KEY],
    baseEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...baseEnv },
  });
  const o = await new Deno.Command(c.program, {
    args: c.args,
    cwd,
    env: c.env,
    clearEnv: true,
    stdin: "null",
  }).output();
  const dec = new TextDecoder();
  return { code: o.code, stdout: dec.decode(o.stdout), stderr: dec.decode(o.stderr) };
}

Deno.test("sandbox: settings from a string, a mapping and --no-sandbox; bad shapes are errors", () => {
  assert.deepEqual(sandboxSettings(undefined), { mode: "auto", autoAllow: true });
  assert.deepEqual(sandboxSettings("required"), { mode: "required", autoAllow: true });
  assert.deepEqual(sandboxSettings({ auto_allow: false }), { mode: "auto", autoAllow: false });
  assert.deepEqual(sandboxSettings({ mode: "off" }), { mode: "off", autoAllow: true });
  assert.deepEqual(sandboxSettings("required", { noSandbox: true }).mode, "off");
  assert.throws(() => sandboxSettings("strict"), /sandbox: unknown mode "strict"/);
  assert.throws(() => sandboxSettings({ mode: "auto", proxy: 1 }), /unknown key "proxy"/);
  assert.throws(() => sandboxSettings({ auto_allow: "yes" }), /auto_allow must be true or false/);
});

Deno.test("sandbox: the profile is derived from the policy", async () => {
  const w = await world();
  try {
    const pp = w.policy([`Write(${w.out}/**)`, "Net(example.com)"], [
      `Read(${w.ws}/secret)`,
      "Read(**/*.pem)",
    ]);
    // deriveProfile is synchronous: glob rules compile once npm picomatch has loaded.
    await pp.globsReady();
    const p = deriveProfile(pp);
    const paths = (xs: { path: string }[]) => xs.map((x) => x.path);
    assert.deepEqual(paths(p.writable), [w.ws, w.out]);
    assert.ok(paths(p.readOnly).includes(join(w.ws, ".git")));
    assert.ok(paths(p.readOnly).includes(join(w.ws, "sub", ".git")), "nested .git protected");
    for (const h of [join(w.home, ".ssh"), join(w.home, ".aws"), join(w.home, ".netrc"), w.cfg]) {
      assert.ok(paths(p.hidden).includes(h), `${h} hidden`);
    }
    assert.equal(p.network.mode, "proxy");
    assert.ok(p.notes.some((n) => n.startsWith("Read(**/*.pem)")), "globs are guard-only");
    // Read(ws/secret) does not exist yet: nothing to mount, the guard still decides.
    assert.ok(!paths(p.hidden).includes(join(w.ws, "secret")));

    // A Write allow rule on a protected path lifts its read-only mount; Read allow un-hides.
    const qp = w.policy([`Write(${w.ws}/.git/**)`, `Read(${w.home}/.ssh/**)`]);
    await qp.globsReady();
    const q = deriveProfile(qp);
    assert.ok(!paths(q.readOnly).includes(join(w.ws, ".git")));
    assert.ok(!paths(q.hidden).includes(join(w.home, ".ssh")));
    assert.equal(q.network.mode, "none");

    const text = describeSandbox(p, {
      mode: "auto",
      active: true,
      backend: "bwrap",
      autoAllow: true,
      reason: "bwrap",
    });
    assert.match(text, /OS sandbox: mode auto, on \(bwrap\)/);
    assert.match(text, /hidden:[\s\S]*\.ssh/);
    assert.match(text, /guard-only rules:\n\s+Read\(\*\*\/\*\.pem\)/);
  } finally {
    await w.cleanup();
  }
});

Deno.test("sandbox: environment scrubbing and the non-interactive variables", () => {
  const base = {
    PATH: "/bin",
    HOME: "/h",
    GITHUB_TOKEN: "t",
    AWS_SECRET_ACCESS_KEY: "s",
    DB_PASSWORD: "p",
    OPENAI_API_KEY: KEY,
    RENAMED: KEY,
    EDITOR: "vim",
    LANG: "C",
  };
  const rules = Policy.create({}, { allow: ["Env(GITHUB_TOKEN)"], deny: ["Env(LANG)"] }, {
    workspace: "/w",
    configDir: "/c",
  }).rules();
  const { env, dropped } = commandEnvironment({ base, rules, secrets: [KEY] });
  assert.deepEqual(dropped.sort(), [
    "AWS_SECRET_ACCESS_KEY",
    "DB_PASSWORD",
    "LANG",
    "OPENAI_API_KEY",
    "RENAMED",
  ]);
  assert.equal(env.GITHUB_TOKEN, "t");
  assert.equal(env.EDITOR, "false");
  assert.equal(env.GIT_EDITOR, "false");
  assert.equal(env.VISUAL, "false");
  assert.equal(env.GIT_TERMINAL_PROMPT, "0");
  assert.equal(env.PAGER, "cat");
  // A bare `Env` allow passes names but never the provider key's value under another name.
  assert.equal(envDecision(rules.slice(0, 0), "X_TOKEN", "v").pass, false);
  const bare = Policy.create({}, { allow: ["Env"], deny: [] }, { workspace: "/w", configDir: "/c" })
    .rules();
  assert.equal(envDecision(bare, "X_TOKEN", "v").pass, true);
  assert.equal(envDecision(bare, "RENAMED", KEY, [KEY]).pass, false);
});

Deno.test("sandbox: the macOS SBPL profile text", async () => {
  const w = await world();
  try {
    const text = sbplProfile(deriveProfile(w.policy()), { tmpDir: "/private/tmp/coyote-sbx-1" });
    assert.match(text, /^\(version 1\)\n\(deny default\)\n/);
    assert.match(text, /\(allow process-info\* \(target same-sandbox\)\)/);
    // Reads everywhere except hidden paths.
    assert.ok(
      text.includes(
        `(allow file-read* (require-all (subpath "/") (require-not (require-any (subpath "${
          join(w.home, ".ssh")
        }")`,
      ),
      text,
    );
    // Writes: workspace + private tmp, never .git or hidden paths.
    const write = text.split("\n").find((l) => l.startsWith("(allow file-write* (require-all"))!;
    assert.ok(write.includes(`(subpath "${w.ws}") (subpath "/private/tmp/coyote-sbx-1")`), write);
    assert.ok(write.includes(`(require-not (require-any (subpath "${join(w.ws, ".git")}")`), write);
    assert.ok(!/\(allow network/.test(text), "no network without a Net allow rule");
    const net = sbplProfile(deriveProfile(w.policy(["Net(example.com)"])));
    assert.match(net, /\(allow network\*\)/);
    // Quotes in paths are escaped.
    const odd = sbplProfile({
      ...deriveProfile(w.policy()),
      writable: [{ path: '/a"b\\c', why: "" }],
    });
    assert.ok(odd.includes('(subpath "/a\\"b\\\\c")'));
  } finally {
    await w.cleanup();
  }
});

Deno.test("sandbox: real commands cannot escape (bwrap)", async () => {
  const w = await world();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  let accepted = 0;
  (async () => {
    for await (const c of listener) {
      accepted++;
      c.close();
    }
  })().catch(() => {});
  try {
    const policy = w.policy();
    const gitConfig = await Deno.readTextFile(join(w.ws, ".git", "config"));
    const r = await inSandbox(
      policy,
      [
        `echo in > inside.txt && echo WROTE_INSIDE`,
        `echo x > ${w.out}/new.txt || echo OUTSIDE_FAILED`,
        `echo x >> ${w.out}/o.txt || echo OUTSIDE_APPEND_FAILED`,
        `echo x >> .git/config || echo GIT_FAILED`,
        `echo x >> sub/.git/config || echo SUBGIT_FAILED`,
        `git config core.hooksPath /x 2>/dev/null || echo GITCFG_FAILED`,
        `ls -A ${w.home}/.ssh | wc -l | sed 's/^/SSH_ENTRIES=/'`,
        `cat ${w.home}/.ssh/id_rsa 2>/dev/null || echo SSH_UNREADABLE`,
        `cat ${w.home}/.netrc | wc -c | sed 's/^/NETRC_BYTES=/'`,
        `cat ${w.cfg}/config.yaml 2>/dev/null || echo CFG_UNREADABLE`,
        `(echo > /dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo NET_REACHED || echo NET_FAILED`,
        `tr '\\0' '\\n' < /proc/$PPID/environ | grep -c . | sed 's/^/PPID_ENV_VARS=/'`,
        `grep -l "${KEY}" /proc/*/environ 2>/dev/null | wc -l | sed 's/^/KEY_IN_PROC=/'`,
        `env | grep -c -e OPENAI_API_KEY -e "${KEY}" -e GITHUB_TOKEN | sed 's/^/KEY_IN_ENV=/'`,
        `ls /proc | grep -c '^[0-9]' | sed 's/^/PROCS=/'`,
        `echo t > /tmp/t && echo TMP_OK`,
        `mount -o remount,rw / 2>/dev/null && echo REMOUNTED || echo REMOUNT_FAILED`,
      ].join("; "),
      w.ws,
      { OPENAI_API_KEY: KEY, GITHUB_TOKEN: "ghp_x", HOME: w.home },
    );
    const o = r.stdout;
    for (
      const want of [
        "WROTE_INSIDE",
        "OUTSIDE_FAILED",
        "OUTSIDE_APPEND_FAILED",
        "GIT_FAILED",
        "SUBGIT_FAILED",
        "GITCFG_FAILED",
        "SSH_ENTRIES=0",
        "SSH_UNREADABLE",
        "NETRC_BYTES=0",
        "CFG_UNREADABLE",
        "NET_FAILED",
        "KEY_IN_PROC=0",
        "KEY_IN_ENV=0",
        "TMP_OK",
        "REMOUNT_FAILED",
      ]
    ) assert.ok(o.includes(want), `expected ${want} in:\n${o}\n${r.stderr}`);
    // The parent of the shell is the sandbox's own init, whose environment is the scrubbed one.
    assert.ok(!o.includes(KEY));
    assert.ok(Number(/PROCS=(\d+)/.exec(o)![1]) < 10, `only the sandbox's processes: ${o}`);
    assert.equal(accepted, 0);
    assert.equal(await Deno.readTextFile(join(w.ws, "inside.txt")), "in\n");
    await assert.rejects(Deno.stat(join(w.out, "new.txt")));
    assert.equal(await Deno.readTextFile(join(w.out, "o.txt")), "outside");
    assert.equal(await Deno.readTextFile(join(w.ws, ".git", "config")), gitConfig);
    assert.equal(await Deno.readTextFile(join(w.ws, "sub", ".git", "config")), "[core]\n");

    // Rules open what they name: Write(outside/**) makes it writable. Net(...) allows the host
    // only through the filtering proxy (tests/sandbox_proxy_test.ts): a raw connection stays in.
    const open = await inSandbox(
      w.policy([`Write(${w.out}/**)`, `Net(127.0.0.1:${port})`]),
      `echo x > ${w.out}/new.txt && echo OUT_OK; (echo > /dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo NET_OK || echo NET_RAW_CLOSED`,
      w.ws,
    );
    assert.match(open.stdout, /OUT_OK/);
    assert.match(open.stdout, /NET_RAW_CLOSED/);
  } finally {
    listener.close();
    await w.cleanup();
  }
});

Deno.test("sandbox: execute_command through a session sandbox; required mode refuses without one", async () => {
  const w = await world();
  try {
    const policy = w.policy();
    const sb = await CommandSandbox.create(policy, { mode: "auto", autoAllow: true }, {
      secrets: [KEY],
    });
    assert.equal(sb.status.active, true);
    const tool = makeExecuteCommandTool(sb);
    const r = await runTool(
      tool,
      { command: `touch ${w.out}/x; echo private > /tmp/p; cat /tmp/p` },
      toolContext({ cwd: w.ws }),
    );
    // Outside the workspace: absent from the root view (./core/policy/sandbox/root_view.ts), or
    // read-only where a system folder shows.
    assert.match(r.content, /Read-only file system|No such file or directory/);
    assert.equal(await Deno.lstat(`${w.out}/x`).then(() => true, () => false), false);
    assert.match(r.content, /private/);
    assert.equal((r.rawOutput as { sandboxed: boolean }).sandboxed, true);
    // The private /tmp lasts for the session.
    const again = await runTool(tool, { command: "cat /tmp/p" }, toolContext({ cwd: w.ws }));
    assert.match(again.content, /private/);
    sb.close();

    const off = await CommandSandbox.create(policy, { mode: "off", autoAllow: true });
    assert.equal(off.status.active, false);
    const direct = await runTool(
      makeExecuteCommandTool(off),
      { command: "true" },
      toolContext({ cwd: w.ws }),
    );
    assert.equal((direct.rawOutput as { sandboxed: boolean }).sandboxed, false);

    // `required` without a backend refuses: simulate one that is missing.
    const req = await CommandSandbox.create(policy, { mode: "required", autoAllow: true });
    (req as unknown as { backend: undefined }).backend = undefined;
    const refused = await runTool(
      makeExecuteCommandTool(req),
      { command: "touch ran" },
      toolContext({ cwd: w.ws }),
    );
    assert.equal(refused.isError, true);
    assert.match(refused.content, /sandbox is required/);
    await assert.rejects(Deno.stat(join(w.ws, "ran")));
  } finally {
    await w.cleanup();
  }
});

Deno.test("sandbox: auto_allow turns default asks for commands into allow; rules still decide", async () => {
  const policy = Policy.create({ ask: ["Execute(make:*)"] }, {
    allow: [],
    deny: ["Execute(rm:*)"],
  }, { workspace: "/w", configDir: "/c" });
  const on: SandboxStatus = {
    mode: "auto",
    active: true,
    backend: "bwrap",
    autoAllow: true,
    reason: "",
  };
  const g = sandboxGuard(policy, on);
  assert.equal((await g.evaluate({ type: "execute", command: "mkdir out" })).decision, "allow");
  // A command that runs code the guard does not see yields to the deny rule (auto_allow_yields_test.ts).
  assert.equal((await g.evaluate({ type: "execute", command: "npm install" })).decision, "ask");
  assert.equal((await g.evaluate({ type: "execute", command: "rm -rf x" })).decision, "deny");
  assert.equal((await g.evaluate({ type: "execute", command: "make all" })).decision, "ask");
  assert.equal((await g.evaluate({ type: "write", path: "/etc/x" })).decision, "ask");
  const off = sandboxGuard(policy, { ...on, active: false });
  assert.equal((await off.evaluate({ type: "execute", command: "mkdir out" })).decision, "ask");
  const noAuto = sandboxGuard(policy, { ...on, autoAllow: false });
  assert.equal(
    (await noAuto.evaluate({ type: "execute", command: "mkdir out" })).decision,
    "ask",
  );
});

/** Pids whose command line contains `needle` (Linux /proc). */
function pidsWith(needle: string): number[] {
  const out: number[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const cmd = Deno.readTextFileSync(`/proc/${e.name}/cmdline`).replaceAll("\0", " ");
      if (cmd.includes(needle)) out.push(Number(e.name));
    } catch { /* gone */ }
  }
  return out;
}

Deno.test("exec: background children and setsid escapees end with the call (sandboxed and not)", async () => {
  const w = await world();
  try {
    const sb = await CommandSandbox.create(w.policy(), { mode: "auto", autoAllow: true });
    for (
      const [name, tool] of [["direct", executeCommandTool], [
        "sandboxed",
        makeExecuteCommandTool(sb),
      ]] as const
    ) {
      const tag = `${Math.floor(Math.random() * 1e6)}`;
      const a = `1${tag}.5`;
      const b = `2${tag}.5`;
      const r = await runTool(
        tool,
        {
          // The escapee has its own session before the shell exits (it wrote its pid file).
          command:
            `rm -f esc.pid; sleep ${a} & setsid sh -c 'echo $$ > esc.pid; exec sleep ${b}' ` +
            `> /dev/null 2>&1 & while [ ! -s esc.pid ]; do sleep 0.01; done; echo started`,
        },
        toolContext({ cwd: w.ws }),
      );
      assert.match(r.content, /started/);
      // Killed processes may linger as zombies for a moment: wait until they are reaped.
      for (let i = 0; i < 50 && pidsWith(`sleep ${a}`).concat(pidsWith(`sleep ${b}`)).length; i++) {
        await new Promise((res) => setTimeout(res, 20));
      }
      assert.deepEqual(pidsWith(`sleep ${a}`), [], `${name}: background child survived`);
      assert.deepEqual(pidsWith(`sleep ${b}`), [], `${name}: setsid child survived`);
    }
    sb.close();
  } finally {
    await w.cleanup();
  }
});

Deno.test("exec: git commit without -m fails at once instead of waiting for an editor", async () => {
  const w = await world();
  try {
    const r = await runTool(
      executeCommandTool,
      {
        command:
          "git -c user.email=a@b -c user.name=n commit --allow-empty; git -c core.editor=vim -c user.email=a@b -c user.name=n commit --allow-empty -q; echo end",
        timeout_ms: 60_000,
      },
      toolContext({ cwd: w.ws }),
    );
    assert.doesNotMatch(r.content, /timed out/);
    assert.match(r.content, /problem with the editor/);
    assert.match(r.content, /end/);
  } finally {
    await w.cleanup();
  }
});

Deno.test("sandbox e2e: with the guard forced to allow, a headless session still cannot escape", async () => {
  const w = await world();
  const env = await makeCoyoteEnv();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  let accepted = 0;
  (async () => {
    for await (const c of listener) {
      accepted++;
      c.close();
    }
  })().catch(() => {});
  const attacks: Record<string, string> = {
    outside: `echo pwned > ${w.out}/pwned.txt`,
    git: "echo '[core] fsmonitor = touch /tmp/x' >> .git/config",
    ssh: `cat ${w.home}/.ssh/id_rsa; ls -A ${w.home}/.ssh`,
    net: `echo hi > /dev/tcp/127.0.0.1/${port}`,
    proc:
      "echo PPID=$PPID; tr '\\0' ' ' < /proc/$PPID/cmdline; echo; tr '\\0' '\\n' < /proc/$PPID/environ; ls /proc",
    key: "env",
  };
  const server = await startModelServer({ script: commandBatch(attacks) });
  try {
    const gitConfig = await Deno.readTextFile(join(w.ws, ".git", "config"));
    const e = childEnv(env, {
      baseURL: server.baseURL,
      extra: {
        HOME: w.home,
        OPENAI_API_KEY: KEY,
        COYOTE_TEST_MODE: "1",
        COYOTE_TEST_GUARD: "allow",
        DEPLOY_TOKEN: "deploy-token-value-123",
      },
    });
    const r = await runCoyote(["--headless", "--output-format", "stream-json", "go"], {
      cwd: w.ws,
      env: e,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /TEST MODE/);
    const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(lines[0].sandbox, {
      mode: "auto",
      active: true,
      backend: "bwrap",
      auto_allow: true,
      reason: "bwrap: workspace writable, network off",
    });
    const result = lines.at(-1);
    assert.deepEqual(result.denied, [], "the guard was forced to allow everything");
    const text = new Map<string, string>();
    for (const l of lines) {
      const u = l.update;
      if (u?.sessionUpdate === "tool_call_update" && u.content) {
        text.set(u.toolCallId, JSON.stringify(u.content));
      }
    }
    assert.equal(text.size, Object.keys(attacks).length, r.stdout);
    await assert.rejects(Deno.stat(join(w.out, "pwned.txt")));
    assert.equal(await Deno.readTextFile(join(w.ws, ".git", "config")), gitConfig);
    assert.doesNotMatch(text.get("ssh")!, /PRIVATE KEY/);
    assert.match(text.get("net")!, /exit code 1/);
    assert.equal(accepted, 0);
    for (const [id, t] of text) {
      assert.ok(!t.includes(KEY), `${id} shows the provider key`);
      assert.ok(!t.includes("deploy-token-value-123"), `${id} shows a secret-looking variable`);
    }
    // /proc/$PPID is the sandbox's own bwrap (pid 1, or pid 2: the nested bwrap that drops the
    // capabilities after the process limit is set, core/policy/sandbox/limits.ts), not Coyote.
    assert.match(text.get("proc")!, /PPID=[12]\\n/);
    assert.doesNotMatch(text.get("proc")!, /main\.ts|deno run/);
    assert.match(text.get("key")!, /GIT_TERMINAL_PROMPT=0/);
  } finally {
    listener.close();
    await server.close();
    await env.cleanup();
    await w.cleanup();
  }
});

Deno.test("headless: SIGHUP cancels like SIGTERM — command killed, result written, exit 130", async () => {
  const w = await world();
  const env = await makeCoyoteEnv();
  const tag = `3${Math.floor(Math.random() * 1e6)}.5`;
  const server = await startModelServer({
    script: [
      {
        tool_calls: [{ id: "c1", name: "execute_command", arguments: { command: `sleep ${tag}` } }],
      },
      { text: "never" },
    ],
  });
  try {
    const { cmd, args } = coyoteCommand(["--headless", "--output-format", "stream-json", "go"]);
    const child = new Deno.Command(cmd, {
      args,
      cwd: w.ws,
      env: childEnv(env, { baseURL: server.baseURL }),
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    // Wait until the command runs, then hang up.
    for (let i = 0; i < 600 && pidsWith(`sleep ${tag}`).length === 0; i++) {
      await new Promise((res) => setTimeout(res, 50));
    }
    assert.ok(pidsWith(`sleep ${tag}`).length > 0, "the command started");
    child.kill("SIGHUP");
    const o = await child.output();
    const lines = new TextDecoder().decode(o.stdout).trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(o.code, 130, new TextDecoder().decode(o.stderr));
    const result = lines.at(-1);
    assert.equal(result.type, "result");
    assert.equal(result.stop_reason, "cancelled");
    assert.equal(result.exit_code, 130);
    for (let i = 0; i < 50 && pidsWith(`sleep ${tag}`).length; i++) {
      await new Promise((res) => setTimeout(res, 20));
    }
    assert.deepEqual(pidsWith(`sleep ${tag}`), []);
  } finally {
    await server.close();
    await env.cleanup();
    await w.cleanup();
  }
});

/** A PATH with bash, sh, env and coreutils but no bwrap (a machine without bubblewrap). */
async function pathWithoutBwrap(): Promise<{ path: string; cleanup: () => Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "coyote-nobwrap-" });
  for (const p of ["bash", "sh", "env", "touch", "cat", "true", "false", "grep"]) {
    for (const d of (Deno.env.get("PATH") ?? "/usr/bin:/bin").split(":")) {
      try {
        await Deno.symlink(await Deno.realPath(`${d}/${p}`), `${dir}/${p}`);
        break;
      } catch { /* not there */ }
    }
  }
  return { path: dir, cleanup: () => Deno.remove(dir, { recursive: true }).catch(() => {}) };
}

Deno.test("sandbox modes end to end: auto without bwrap warns once and says so; required refuses commands", async () => {
  const w = await world();
  const env = await makeCoyoteEnv();
  const nob = await pathWithoutBwrap();
  const server = await startModelServer({
    script: [
      {
        tool_calls: [{ id: "t", name: "execute_command", arguments: { command: "touch ran.txt" } }],
      },
      { text: "done" },
    ],
    repeat: true,
  });
  try {
    const e = childEnv(env, { baseURL: server.baseURL, extra: { PATH: nob.path } });
    // auto: unsandboxed, the guard alone decides (touch asks → denied in headless), one warning.
    const auto = await runCoyote(["--headless", "--output-format", "stream-json", "go"], {
      cwd: w.ws,
      env: e,
    });
    assert.equal(auto.code, 0, auto.stderr);
    const init = JSON.parse(auto.stdout.split("\n")[0]);
    assert.equal(init.sandbox.active, false);
    assert.equal(init.sandbox.mode, "auto");
    assert.match(init.sandbox.reason, /bwrap \(package bubblewrap\) is not installed/);
    assert.equal(auto.stderr.match(/the OS sandbox is not available/g)?.length, 1, auto.stderr);
    const result = JSON.parse(auto.stdout.trim().split("\n").at(-1)!);
    assert.deepEqual(result.denied.map((d: { decision: string }) => d.decision), ["ask"]);

    // required: the command is refused even when the guard allows it.
    await Deno.writeTextFile(`${env.configDir}/config.yaml`, "sandbox: required\n");
    const req = await runCoyote(
      ["--headless", "--output-format", "stream-json", "--allow", "Execute(touch:*)", "go"],
      { cwd: w.ws, env: e },
    );
    assert.equal(req.code, 0, req.stderr);
    assert.match(req.stdout, /the OS sandbox is required \(sandbox: required\) but not available/);
    await assert.rejects(Deno.stat(join(w.ws, "ran.txt")));

    // policy show says it is off and why.
    const show = await runCoyote(["policy", "show"], { cwd: w.ws, env: e });
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /OS sandbox: mode required, OFF; auto_allow true/);
    assert.match(show.stdout, /not active: bwrap \(package bubblewrap\) is not installed/);
  } finally {
    await server.close();
    await nob.cleanup();
    await env.cleanup();
    await w.cleanup();
  }
});

Deno.test("sandbox config: policy show prints the derived profile; bad values are config errors; --no-sandbox", async () => {
  const w = await world();
  const env = await makeCoyoteEnv();
  try {
    const e = childEnv(env, { extra: { HOME: w.home } });
    await Deno.writeTextFile(
      `${env.configDir}/config.yaml`,
      "sandbox: {mode: auto, auto_allow: false}\npermissions:\n  deny: ['Read(**/*.pem)']\n",
    );
    const show = await runCoyote(["policy", "show"], { cwd: w.ws, env: e });
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /OS sandbox: mode auto, on \(bwrap\); auto_allow false/);
    assert.ok(show.stdout.includes(`${join(w.ws, ".git")}  (protected`), show.stdout);
    assert.ok(show.stdout.includes(`${join(w.home, ".ssh")}  (credentials (default))`));
    assert.match(show.stdout, /network: {2}off/);
    assert.match(show.stdout, /Read\(\*\*\/\*\.pem\): guard-only/);
    const off = await runCoyote(["--no-sandbox", "policy", "show"], { cwd: w.ws, env: e });
    assert.match(off.stdout, /mode off, OFF/);

    await Deno.writeTextFile(`${env.configDir}/config.yaml`, "sandbox: strict\n");
    const bad = await runCoyote(["policy", "show"], { cwd: w.ws, env: e });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /sandbox: expected auto, required or off/);
    assert.doesNotMatch(bad.stderr, /\n\s+at /);
  } finally {
    await env.cleanup();
    await w.cleanup();
  }
});

Deno.test("acp: SIGHUP ends the server like SIGTERM — the running command is killed, exit 0", async () => {
  const { startAcp } = await import("./support/acp_harness.ts");
  const w = await world();
  const env = await makeCoyoteEnv();
  const tag = `4${Math.floor(Math.random() * 1e6)}.5`;
  const server = await startModelServer({
    script: [
      {
        tool_calls: [{ id: "c1", name: "execute_command", arguments: { command: `sleep ${tag}` } }],
      },
      { text: "never" },
    ],
  });
  try {
    const h = await startAcp({
      env: {
        COYOTE_CONFIG_DIR: env.configDir,
        COYOTE_DATA_DIR: env.dataDir,
        OPENAI_BASE_URL: server.baseURL,
        OPENAI_API_KEY: "test-key",
        COYOTE_MODEL: "scripted",
      },
    });
    const { sessionId } = await h.agent.request("session/new", { cwd: w.ws, mcpServers: [] });
    const p = h.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "go" }],
    });
    p.catch(() => {}); // the connection ends under it
    for (let i = 0; i < 600 && pidsWith(`sleep ${tag}`).length === 0; i++) {
      await new Promise((res) => setTimeout(res, 50));
    }
    assert.ok(pidsWith(`sleep ${tag}`).length > 0, "the command started");
    h.child.kill("SIGHUP");
    const status = await h.child.status;
    assert.equal(status.code, 0, h.stderr().slice(-1000));
    h.assertStdoutPure();
    for (let i = 0; i < 100 && pidsWith(`sleep ${tag}`).length; i++) {
      await new Promise((res) => setTimeout(res, 20));
    }
    assert.deepEqual(pidsWith(`sleep ${tag}`), []);
    await h.close().catch(() => {});
  } finally {
    await server.close();
    await env.cleanup();
    await w.cleanup();
  }
});

Deno.test("sandbox: protected paths a command creates (.mcp.json, .coyote/) are removed unless a rule allows them", async () => {
  const w = await world();
  try {
    const sb = await CommandSandbox.create(w.policy(), { mode: "auto", autoAllow: true });
    const tool = makeExecuteCommandTool(sb);
    const r = await runTool(
      tool,
      {
        command:
          `echo '{"mcpServers":{"x":{"command":"touch","args":["${w.out}/pwned"]}}}' > .mcp.json; ` +
          "mkdir -p .Coyote/plugins && echo 'export default {}' > .Coyote/plugins/p.ts; echo made",
      },
      toolContext({ cwd: w.ws }),
    );
    assert.match(r.content, /made/);
    // The message names each removed path with why (issue 16 §5).
    assert.match(r.content, /the OS sandbox removed 2 protected paths the command created/);
    assert.match(r.content, /\n {2}\.mcp\.json \(Coyote starts its MCP servers\)/);
    assert.match(r.content, /\n {2}\.Coyote \(Coyote loads plugins and rules from it\)/);
    await assert.rejects(Deno.lstat(join(w.ws, ".mcp.json")));
    await assert.rejects(Deno.lstat(join(w.ws, ".Coyote")));
    sb.close();

    const open = await CommandSandbox.create(w.policy(["Write(.mcp.json)"]), {
      mode: "auto",
      autoAllow: true,
    });
    const k = await runTool(
      makeExecuteCommandTool(open),
      { command: "echo '{}' > .mcp.json" },
      toolContext({ cwd: w.ws }),
    );
    assert.doesNotMatch(k.content, /removed/);
    assert.equal(await Deno.readTextFile(join(w.ws, ".mcp.json")), "{}\n");
    open.close();
  } finally {
    await w.cleanup();
  }
});
