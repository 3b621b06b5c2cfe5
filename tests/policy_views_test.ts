/**
 * One policy, four views (docs/permissions.md): a table of policies and of
 * paths, hosts, programs and variables; for each pair the guard's decision,
 * the plugin worker grant, the Deno flags and the OS sandbox profile of
 * commands must agree. The flags view is proven for real by running
 * `deno run <flags>` and letting Deno refuse, the worker view by starting a
 * real Worker with the derived permissions, and the sandbox view by running
 * real commands under bwrap that try to read and write every path, reach a
 * loopback server and print their environment.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Policy } from "../core/policy/policy.ts";
import { deriveProfile, detectBackend, sandboxedCommand } from "../core/policy/sandbox/mod.ts";
import type { PluginPermissions } from "../sdk/mod.ts";

// Under /var/tmp when there is one: the sandbox gives commands a private /tmp, which would hide
// every path of the table outside the workspace and make the sandbox column trivial.
const root = Deno.realPathSync(Deno.makeTempDirSync({
  prefix: "coyote-views-",
  ...(isDir("/var/tmp") ? { dir: "/var/tmp" } : {}),
}));
function isDir(p: string): boolean {
  try {
    return Deno.statSync(p).isDirectory;
  } catch {
    return false;
  }
}
const ws = join(root, "ws");
const home = join(root, "home");
const cfg = join(root, "cfg");
const data = join(root, "data");
const out = join(root, "outside");
for (
  const d of [
    join(ws, "src"),
    join(ws, ".git"),
    join(home, ".ssh"),
    cfg,
    data,
    join(out, "pub"),
    join(out, "locked"),
  ]
) {
  Deno.mkdirSync(d, { recursive: true });
}
Deno.writeTextFileSync(join(ws, "src", "a.txt"), "workspace file");
Deno.writeTextFileSync(join(ws, "src", "key.pem"), "PEM");
Deno.writeTextFileSync(join(ws, ".git", "x.pem"), "PEM");
Deno.writeTextFileSync(join(ws, ".git", "config"), "[core]");
// What Coyote loads from the workspace and runs (plugins, MCP servers): protected from writes.
Deno.mkdirSync(join(ws, ".coyote", "plugins"), { recursive: true });
Deno.writeTextFileSync(join(ws, ".coyote", "plugins", "k.pem"), "PEM");
Deno.writeTextFileSync(join(ws, ".mcp.json"), "{}");
Deno.writeTextFileSync(join(out, "pub", "p.txt"), "public");
Deno.writeTextFileSync(join(out, "secret.txt"), "TOP SECRET");
Deno.writeTextFileSync(join(home, ".ssh", "id_rsa"), "PRIVATE KEY");
// The home as commands see it (core/policy/sandbox/home_view.ts): credentials where tools keep
// them and where nobody knows them, next to toolchain stores that stay readable.
const HOME_SECRETS: Record<string, string> = {
  ".gitconfig":
    '[url "https://x:ghp_views_token@github.com/"]\n\tinsteadOf = https://github.com/\n',
  ".ssh/id_ed25519": "PRIVATE KEY",
  ".aws/credentials": "aws_secret_access_key=x",
  ".config/gh/hosts.yml": "oauth_token: x",
  ".netrc": "machine h password p",
  ".docker/config.json": '{"auths":{}}',
  ".somevendor/secret": "vendor secret",
  ".cache/huggingface/token": "hf_x",
};
const HOME_STORE_FILES = [".cache/x", ".npm/x"];
for (const [rel, text] of Object.entries(HOME_SECRETS)) {
  Deno.mkdirSync(join(home, rel, ".."), { recursive: true });
  Deno.writeTextFileSync(join(home, rel), text);
}
for (const rel of HOME_STORE_FILES) {
  Deno.mkdirSync(join(home, rel, ".."), { recursive: true });
  Deno.writeTextFileSync(join(home, rel), "store file");
}
globalThis.addEventListener("unload", () => {
  try {
    Deno.removeSync(root, { recursive: true });
  } catch { /* gone */ }
});

const opts = { workspace: ws, configDir: cfg, dataDir: data, home };

const POLICIES: Record<string, Policy> = {
  defaults: Policy.create({}, { allow: [], deny: [] }, opts),
  rules: Policy.create(
    {
      allow: [
        `Read(${out}/**)`,
        `Write(${out}/pub/**)`,
        "Net(example.com)",
        "Execute(git:*)",
        "Env(GITHUB_TOKEN)",
      ],
      deny: [`Read(${out}/secret.txt)`, `Write(${out}/locked)`],
    },
    {
      allow: [],
      deny: [
        "Execute(uname:*)",
        "Net(evil.example)",
        "Env(AWS_SECRET_ACCESS_KEY)",
        "Read(~/.ssh/**)",
      ],
    },
    opts,
  ),
  globs: Policy.create(
    { deny: ["Read(**/*.pem)", "Execute(git push:*)"], allow: ["Execute(ls:*)", "Execute(cat:*)"] },
    { allow: [], deny: [] },
    opts,
  ),
  runner: Policy.create({}, {
    allow: ["Execute(git:*)", "Execute(ls:*)"],
    deny: ["Execute(curl:*)"],
  }, opts),
  skip: Policy.create({}, { allow: [], deny: ["Write(~/.ssh)", "Execute(curl:*)"] }, {
    ...opts,
    dangerouslySkipPermissions: true,
  }),
  // Permission mode plan (core/policy/mode.ts): read-only in every view, allow rules included.
  plan: Policy.create({ allow: [`Write(${out}/pub/**)`, "Execute(git:*)"] }, {
    allow: [],
    deny: [],
  }, { ...opts, mode: "plan" }),
  "default mode": Policy.create({}, { allow: [], deny: [] }, { ...opts, mode: "default" }),
};
// The synchronous views compile glob rules only once npm picomatch has loaded (core/policy/rules.ts).
await Promise.all(Object.values(POLICIES).map((p) => p.globsReady()));

const PATHS = [
  ws,
  join(ws, "src"),
  join(ws, "src", "a.txt"),
  join(ws, "src", "key.pem"),
  join(ws, ".git"),
  join(ws, ".git", "x.pem"),
  join(ws, ".git", "config"),
  join(ws, ".coyote"),
  join(ws, ".coyote", "plugins"),
  join(ws, ".coyote", "plugins", "k.pem"),
  join(ws, ".mcp.json"),
  cfg,
  out,
  join(out, "pub"),
  join(out, "pub", "p.txt"),
  join(out, "secret.txt"),
  join(out, "locked"),
  join(home, ".ssh"),
  join(home, ".ssh", "id_rsa"),
  ...Object.keys(HOME_SECRETS).map((rel) => join(home, rel)),
  ...HOME_STORE_FILES.map((rel) => join(home, rel)),
];
// Outside every root: what fs_read asks about there, a command cannot read silently either
// (core/policy/sandbox/root_view.ts). A service-account token under /run/secrets, a file in
// /root (HOME is elsewhere), /etc/shadow (readable as root by its mode alone).
const SYSTEM_FILES: string[] = ["/etc/shadow"];
if (Deno.uid() === 0) {
  const tag = crypto.randomUUID().slice(0, 8);
  const token = `/run/secrets/coyote-views-${tag}/kubernetes.io/serviceaccount/token`;
  Deno.mkdirSync(join(token, ".."), { recursive: true });
  Deno.writeTextFileSync(token, "SATOKEN");
  Deno.writeTextFileSync(`/root/.coyote-views-${tag}`, "ROOTSECRET");
  SYSTEM_FILES.push(token, `/root/.coyote-views-${tag}`);
  globalThis.addEventListener("unload", () => {
    for (const p of [`/run/secrets/coyote-views-${tag}`, `/root/.coyote-views-${tag}`]) {
      try {
        Deno.removeSync(p, { recursive: true });
      } catch { /* gone */ }
    }
  });
}
const HOSTS = ["example.com", "evil.example", "api.github.com"];
const PROGRAMS = ["ls", "cat", "git", "uname", "curl", "rm"];
const VARS = ["GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "HOME"];

/** Parses `--deny-read=a,b` style flags into kind → values (null = everything). */
function flagDenies(flags: string[]): Map<string, string[] | null> {
  const m = new Map<string, string[] | null>();
  for (const f of flags) {
    const x = /^--deny-(read|write|net|env|run)(?:=(.*))?$/.exec(f);
    if (x) m.set(x[1], x[2] === undefined ? null : x[2].split(","));
  }
  return m;
}
const under = (p: string, dir: string) => p === dir || p.startsWith(dir + "/");
function flagDenied(flags: Map<string, string[] | null>, kind: string, value: string): boolean {
  if (!flags.has(kind)) return false;
  const xs = flags.get(kind);
  if (xs === null) return true;
  return kind === "read" || kind === "write"
    ? xs!.some((d) => under(value, d))
    : xs!.includes(value);
}

Deno.test("policy views: guard, worker grant and Deno flags agree on every resource", async () => {
  const problems: string[] = [];
  let grants = 0;
  let refusals = 0;
  for (const [name, policy] of Object.entries(POLICIES)) {
    const flags = flagDenies(policy.denoFlags());
    const declared: PluginPermissions = {
      read: PATHS,
      write: PATHS,
      net: HOSTS,
      run: PROGRAMS,
      env: VARS,
    };
    const grant = policy.workerPermissions(declared, "mirror");
    const granted = (kind: keyof PluginPermissions, v: string) => {
      const g = grant.permissions[kind];
      return Array.isArray(g) && g.includes(v);
    };
    const say = (s: string) => problems.push(`[${name}] ${s}`);
    refusals += grant.refused.length;
    for (const v of Object.values(grant.permissions)) if (Array.isArray(v)) grants += v.length;

    for (const kind of ["read", "write"] as const) {
      const guard = (p: string) => policy.decide({ type: kind, path: p }).decision;
      for (const p of PATHS) {
        const g = guard(p);
        // Worker: granted exactly when the guard allows the path and everything in the table beneath it.
        const subtreeAllowed = PATHS.filter((q) => under(q, p)).every((q) => guard(q) === "allow");
        if (granted(kind, p) !== (g === "allow" && subtreeAllowed)) {
          say(
            `${kind} ${p}: guard ${g} (subtree ${subtreeAllowed}), worker ${
              granted(kind, p) ? "granted" : "refused"
            }`,
          );
        }
        // Flags: a flag deny is a guard deny; a guard allow is never flag-denied.
        const fd = flagDenied(flags, kind, p);
        if (fd && g !== "deny") say(`${kind} ${p}: denied by flags but guard says ${g}`);
        if (g === "allow" && fd) say(`${kind} ${p}: allowed by guard but denied by flags`);
        // A denied path is absent from the grant.
        if (g === "deny" && granted(kind, p)) {
          say(`${kind} ${p}: denied by guard but granted to the worker`);
        }
        const refusal = grant.refused.find((r) => r.permission === kind && r.value === p);
        if (!granted(kind, p) && !refusal) say(`${kind} ${p}: neither granted nor refused`);
        if (refusal) {
          assert.match(refusal.message, /^plugin "mirror" declares (read|write) "/);
          assert.ok(refusal.message.includes(p), refusal.message);
        }
      }
    }
    for (const h of HOSTS) {
      const g = policy.decide({ type: "net", host: h }).decision;
      if (granted("net", h) !== (g === "allow")) {
        say(`net ${h}: guard ${g}, worker ${granted("net", h)}`);
      }
      if (flagDenied(flags, "net", h) !== (g === "deny")) {
        say(`net ${h}: guard ${g}, flags ${flagDenied(flags, "net", h)}`);
      }
    }
    for (const v of VARS) {
      const g = policy.decide({ type: "env", name: v }).decision;
      if (granted("env", v) !== (g === "allow")) {
        say(`env ${v}: guard ${g}, worker ${granted("env", v)}`);
      }
      if (flagDenied(flags, "env", v) !== (g === "deny")) {
        say(`env ${v}: guard ${g}, flags ${flagDenied(flags, "env", v)}`);
      }
    }
    for (const prog of PROGRAMS) {
      // Runnable = the guard allows the program with arguments it cannot know.
      const v = await policy.evaluate({ type: "execute", command: `${prog} "$@"` });
      const g = v.decision;
      if (granted("run", prog) !== (g === "allow")) {
        say(`run ${prog}: guard ${g}, worker ${granted("run", prog)}`);
      }
      // Plan mode's own denies are not Coyote's flags: Coyote itself still runs commands.
      const ruleDeny = g === "deny" && v.rule !== "mode plan";
      if (flagDenied(flags, "run", prog) !== ruleDeny) {
        say(`run ${prog}: guard ${g}, flags ${flagDenied(flags, "run", prog)}`);
      }
    }
    // Every Deno permission key is explicit; sys/ffi/import are never granted to plugins.
    assert.deepEqual(
      Object.keys(grant.permissions).sort(),
      ["env", "ffi", "import", "net", "read", "run", "sys", "write"],
    );
    assert.equal(grant.permissions.sys, false);
    assert.equal(grant.permissions.ffi, false);
    assert.equal(grant.permissions.import, false);
  }
  assert.deepEqual(problems, []);
  assert.ok(grants > 20 && refusals > 20, `grants ${grants}, refusals ${refusals}`);
});

Deno.test("policy views: the table exercises grants, refusals and deny flags", () => {
  const r = POLICIES.rules;
  assert.deepEqual(
    r.denoFlags().slice(7).sort(),
    [
      `--deny-env=AWS_SECRET_ACCESS_KEY`,
      `--deny-net=evil.example`,
      `--deny-read=${out}/secret.txt,${home}/.ssh`,
      "--deny-run=uname",
      `--deny-write=${out}/locked`,
    ].sort(),
  );
  const g = r.workerPermissions({
    read: [out, "src"],
    write: [join(out, "pub")],
    run: ["git"],
    env: ["GITHUB_TOKEN"],
  }, "p");
  assert.deepEqual(g.permissions.read, [join(ws, "src")]);
  assert.deepEqual(g.permissions.write, [join(out, "pub")]);
  assert.equal(g.permissions.run, false);
  assert.deepEqual(g.permissions.env, ["GITHUB_TOKEN"]);
  assert.equal(g.refused.length, 2);
  assert.match(
    g.refused[0].message,
    /declares read ".*outside" but rule Read\(.*secret\.txt\) \(from config file permissions\.deny\[0\]\) denies part of it/,
  );
  // A program may be pointed at any path, so path deny rules keep it from being granted.
  assert.match(
    g.refused[1].message,
    /declares run "git" but the guard asks before running it with arbitrary arguments/,
  );
  // `git` with any arguments includes `git -c alias.x='!curl …' x`, code the allow rule on git
  // does not cover: while an Execute deny rule exists it is not granted (auto-allow yields).
  const run = POLICIES.runner.workerPermissions({ run: ["git", "ls", "curl", "rm"] }, "r");
  assert.deepEqual(run.permissions.run, ["ls"]);
  assert.deepEqual(run.refused.map((x) => [x.value, x.rule]), [
    ["git", "Execute(curl:*)"],
    ["curl", "Execute(curl:*)"],
    ["rm", "default"],
  ]);
  assert.match(run.refused[2].message, /add --allow 'Execute\(rm:\*\)' to grant it/);

  const d = POLICIES.defaults.workerPermissions({
    read: ["/etc"],
    write: ["."],
    net: ["example.com"],
    env: ["HOME"],
  }, "x");
  const msgs = d.refused.map((x) => x.message);
  assert.ok(
    msgs.includes(
      `plugin "x" declares read "/etc" but the policy asks for reads outside the workspace; add --allow 'Read(/etc/**)' to grant it`,
    ),
    msgs.join("\n"),
  );
  assert.ok(
    msgs.some((m) => /declares write "\." but it contains .*\.git, which is never written/.test(m)),
    msgs.join("\n"),
  );
  assert.ok(
    msgs.some((m) => /declares net "example\.com" .*add --allow 'Net\(example\.com\)'/.test(m)),
    msgs.join("\n"),
  );
  assert.ok(
    msgs.some((m) => /declares env "HOME" .*add --allow 'Env\(HOME\)'/.test(m)),
    msgs.join("\n"),
  );
  assert.deepEqual(d.permissions, {
    read: false,
    write: false,
    net: false,
    run: false,
    env: false,
    sys: false,
    ffi: false,
    import: false,
  });

  // Glob-only deny rules are guard-only, and describe() says so.
  const text = POLICIES.globs.describe();
  assert.match(
    text,
    /Read\(\*\*\/\*\.pem\)\n\s+from config file permissions\.deny\[0\]; guard-only: Deno flags take literal paths, not globs/,
  );
  assert.match(
    text,
    /Execute\(git push:\*\)\n.*guard-only: the rule depends on the command's arguments/,
  );
  assert.deepEqual(POLICIES.globs.denoFlags(), POLICIES.defaults.denoFlags());
});

Deno.test("policy views: deno.json's coyote task carries exactly the default policy's flags", () => {
  const cfgJson = JSON.parse(Deno.readTextFileSync(new URL("../deno.json", import.meta.url)));
  const flags = Policy.create({}, { allow: [], deny: [] }, {
    workspace: Deno.cwd(),
    configDir: "/nonexistent-config",
  })
    .denoFlags();
  // DENO_NO_UPDATE_CHECK=1: a source run makes no traffic but the model server's (issue 10). `--quiet`:
  // no Deno progress line over the REPL while a lazy import loads (tests/binary_contents_test.ts).
  assert.equal(
    cfgJson.tasks.coyote,
    `DENO_NO_UPDATE_CHECK=1 deno run --quiet ${flags.join(" ")} main.ts`,
  );
});

Deno.test("policy views: Deno itself refuses what the derived flags deny", async () => {
  const policy = POLICIES.rules;
  const flags = policy.denoFlags();
  const script = join(root, "probe.ts");
  Deno.writeTextFileSync(
    script,
    `const results: Record<string, string> = {};
const probe = async (name: string, fn: () => Promise<unknown> | unknown) => {
  try { await fn(); results[name] = "ok"; } catch (e) { results[name] = (e as Error).name; }
};
await probe("readDenied", () => Deno.readTextFile(${JSON.stringify(join(out, "secret.txt"))}));
await probe("readSsh", () => Deno.readTextFile(${JSON.stringify(join(home, ".ssh", "id_rsa"))}));
await probe("readAllowed", () => Deno.readTextFile(${JSON.stringify(join(out, "pub", "p.txt"))}));
await probe("writeDenied", () => Deno.writeTextFile(${
      JSON.stringify(join(out, "locked", "x.txt"))
    }, "x"));
await probe("writeAllowed", () => Deno.writeTextFile(${
      JSON.stringify(join(out, "pub", "w.txt"))
    }, "x"));
await probe("runDenied", () => new Deno.Command("uname").output());
await probe("envDenied", () => Deno.env.get("AWS_SECRET_ACCESS_KEY"));
await probe("envAllowed", () => Deno.env.get("HOME"));
await probe("netDenied", () => fetch("http://evil.example/"));
console.log(JSON.stringify(results));
`,
  );
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-config", ...flags, script],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(stdout);
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  const r = JSON.parse(text);
  assert.deepEqual(r, {
    readDenied: "NotCapable",
    readSsh: "NotCapable",
    readAllowed: "ok",
    writeDenied: "NotCapable",
    writeAllowed: "ok",
    runDenied: "NotCapable",
    envDenied: "NotCapable",
    envAllowed: "ok",
    netDenied: "NotCapable",
  });
  // The guard agrees on each of them.
  assert.equal(policy.decide({ type: "read", path: join(out, "secret.txt") }).decision, "deny");
  assert.equal(
    policy.decide({ type: "write", path: join(out, "locked", "x.txt") }).decision,
    "deny",
  );
  assert.equal((await policy.evaluate({ type: "execute", command: "uname -a" })).decision, "deny");
  assert.equal(policy.decide({ type: "net", host: "evil.example" }).decision, "deny");
});

Deno.test("policy views: a Worker started with the derived grant can reach exactly its grant", async () => {
  const policy = POLICIES.rules;
  const grant = policy.workerPermissions({
    read: [join(out, "pub"), "src"],
    write: [join(out, "pub")],
  }, "w");
  assert.deepEqual(grant.refused, []);
  const code = `self.onmessage = async (e) => {
    const out = {};
    for (const [name, op, path] of e.data) {
      try {
        if (op === "read") await Deno.readTextFile(path); else await Deno.writeTextFile(path, "w");
        out[name] = "ok";
      } catch (err) { out[name] = err.name; }
    }
    self.postMessage(out);
  };`;
  const worker = new Worker(`data:application/javascript,${encodeURIComponent(code)}`, {
    type: "module",
    deno: { permissions: grant.permissions },
  } as WorkerOptions);
  try {
    const result = await new Promise<Record<string, string>>((resolve, reject) => {
      worker.onmessage = (e) => resolve(e.data);
      worker.onerror = (e) => {
        e.preventDefault();
        reject(new Error(e.message));
      };
      worker.postMessage([
        ["pub", "read", join(out, "pub", "p.txt")],
        ["src", "read", join(ws, "src", "a.txt")],
        ["secret", "read", join(out, "secret.txt")],
        ["ssh", "read", join(home, ".ssh", "id_rsa")],
        ["writePub", "write", join(out, "pub", "w2.txt")],
        ["writeSrc", "write", join(ws, "src", "b.txt")],
        ["writeGit", "write", join(ws, ".git", "config")],
      ]);
    });
    assert.deepEqual(result, {
      pub: "ok",
      src: "ok",
      secret: "NotCapable",
      ssh: "NotCapable",
      writePub: "ok",
      writeSrc: "NotCapable",
      writeGit: "NotCapable",
    });
  } finally {
    worker.terminate();
  }
});

Deno.test("policy views: `deno task compile` builds with the same derived flags as the coyote task", async () => {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", "scripts/compile.ts", "--print-flags"],
    cwd: new URL("..", import.meta.url).pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  const printed = new TextDecoder().decode(stdout).trim();
  const task = JSON.parse(Deno.readTextFileSync(new URL("../deno.json", import.meta.url))).tasks;
  assert.equal(task.coyote, `DENO_NO_UPDATE_CHECK=1 deno run --quiet ${printed} main.ts`);
  assert.equal(task.compile, "DENO_NO_UPDATE_CHECK=1 deno run --allow-all scripts/compile.ts");
  assert.ok(!printed.includes("--allow-all") && printed.includes("--no-prompt"), printed);
});

Deno.test("policy views: the OS sandbox (view d) agrees with the guard — real commands under bwrap", async () => {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed (.ci/run installs bubblewrap)");
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  (async () => {
    for await (const c of listener) c.close();
  })().catch(() => {});
  const problems: string[] = [];
  const baseEnv: Record<string, string> = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    GITHUB_TOKEN: "gh-value",
    AWS_SECRET_ACCESS_KEY: "aws-value",
    HOME: home,
  };
  try {
    for (const [name, policy] of Object.entries(POLICIES)) {
      const profile = deriveProfile(policy);
      const guardOnly = (rule?: string) => !!rule && profile.notes.some((n) => n.startsWith(rule));
      // One sandboxed shell per policy probes every path: R<i> = 1 when it sees the real content
      // (a hidden path reads as empty), W<i> = 1 when it could write there.
      const script = [
        ...PATHS.map((p, i) => {
          const q = JSON.stringify(p);
          const dir = isDir(p);
          const size = dir ? [...Deno.readDirSync(p)].length : Deno.statSync(p).size;
          const seen = dir
            ? `[ "$(ls -A ${q} 2>/dev/null | wc -l)" -eq ${size} ] && ls ${q} >/dev/null 2>&1`
            : `[ "$(cat ${q} 2>/dev/null | wc -c)" -eq ${size} ] && cat ${q} >/dev/null 2>&1`;
          const write = dir
            ? `(touch ${q}/.coyote-probe && rm -f ${q}/.coyote-probe) 2>/dev/null`
            : `( : >> ${q} ) 2>/dev/null`;
          return `${seen} && echo R${i}=1 || echo R${i}=0; ${write} && echo W${i}=1 || echo W${i}=0`;
        }),
        ...SYSTEM_FILES.map((p, i) =>
          `[ -s ${JSON.stringify(p)} ] && cat ${
            JSON.stringify(p)
          } >/dev/null 2>&1 && echo S${i}=1 || echo S${i}=0`
        ),
        `(echo > /dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo NET=1 || echo NET=0`,
        "(git config --global --list; cat ~/.gitconfig) 2>/dev/null | grep -q ghp_views_token && echo GITTOKEN=1 || echo GITTOKEN=0",
        ...VARS.map((v) => `[ -n "\${${v}+x}" ] && echo ENV_${v}=1 || echo ENV_${v}=0`),
      ].join("\n");
      const c = sandboxedCommand(policy, script, { cwd: ws, backend: backend!, baseEnv });
      const o = await new Deno.Command(c.program, {
        args: c.args,
        cwd: ws,
        env: c.env,
        clearEnv: true,
        stdin: "null",
      }).output();
      const text = new TextDecoder().decode(o.stdout);
      const got = (k: string) => {
        const m = new RegExp(`^${k}=(\\d)$`, "m").exec(text);
        if (!m) {
          throw new Error(`[${name}] no ${k} in: ${text}${new TextDecoder().decode(o.stderr)}`);
        }
        return m[1] === "1";
      };
      const say = (x: string) => problems.push(`[${name}] ${x}`);
      PATHS.forEach((p, i) => {
        const w = policy.decide({ type: "write", path: p });
        const r = policy.decide({ type: "read", path: p });
        const canW = got(`W${i}`);
        const canR = got(`R${i}`);
        // Nothing the guard denies is writable in the sandbox (glob rules are guard-only).
        if (canW && w.decision === "deny" && !guardOnly(w.rule)) {
          say(`write ${p}: guard denies, sandbox allows`);
        }
        // What the guard allows by its rules and defaults is writable (skip mode allows more than the sandbox).
        if (!canW && w.decision === "allow" && !policy.dangerouslySkipPermissions) {
          say(`write ${p}: guard allows, sandbox refuses`);
        }
        if (canR && r.decision === "deny" && !guardOnly(r.rule)) {
          say(`read ${p}: guard denies, sandbox shows it`);
        }
        if (!canR && r.decision === "allow" && !policy.dangerouslySkipPermissions) {
          say(`read ${p}: guard allows, sandbox hides it`);
        }
        // What fs_read would ask about in the home, a command cannot read silently — except the
        // toolchain stores the home view shows on purpose (docs/permissions.md).
        const store = profile.home?.stores.some((s) => p.startsWith(`${s.path}/`));
        if (canR && r.decision !== "allow" && p.startsWith(`${home}/`) && !store) {
          say(`read ${p}: guard ${r.decision}s, sandbox shows it`);
        }
        if (!canR && HOME_STORE_FILES.some((f) => p === join(home, f))) {
          say(`read ${p}: a toolchain store file is hidden`);
        }
      });
      SYSTEM_FILES.forEach((p, i) => {
        const r = policy.decide({ type: "read", path: p });
        if (got(`S${i}`) && r.decision !== "allow") {
          say(`read ${p}: guard ${r.decision}s, sandbox shows it`);
        }
      });
      if (got("GITTOKEN")) say("git config --global shows the token of ~/.gitconfig");
      const netAllowed = HOSTS.some((h) =>
        policy.decide({ type: "net", host: h }).decision === "allow"
      );
      // No raw connection ever leaves the sandbox, whatever the rules: hosts a Net rule allows are
      // reached only through the filtering proxy (tests/sandbox_proxy_test.ts); the profile says so.
      if (got("NET")) {
        say(`network: a raw connection left the sandbox (guard allows a host: ${netAllowed})`);
      }
      const mode = deriveProfile(policy).network.mode;
      // --dangerously-skip-permissions keeps the sandbox: only explicit Net rules open the proxy.
      if ((mode === "proxy") !== netAllowed && !policy.dangerouslySkipPermissions) {
        say(`network: guard allows a host ${netAllowed}, the profile's network is ${mode}`);
      }
      for (const v of VARS) {
        const g = policy.decide({ type: "env", name: v }).decision;
        const passed = got(`ENV_${v}`);
        if (g === "allow" && !passed && !policy.dangerouslySkipPermissions) {
          say(`env ${v}: guard allows, sandbox drops it`);
        }
        if (g === "deny" && passed) say(`env ${v}: guard denies, sandbox passes it`);
      }
    }
  } finally {
    listener.close();
  }
  assert.deepEqual(problems, []);
  // fs_read would ask about the system rows (and the host can read them, as root).
  for (const p of SYSTEM_FILES) {
    assert.notEqual(POLICIES.defaults.decide({ type: "read", path: p }).decision, "allow", p);
    if (Deno.uid() === 0) assert.ok(Deno.statSync(p).size > 0, p);
  }
  // The column is not vacuous: the defaults hide ~/.ssh and keep .git read-only, `rules` opens out/pub.
  const d = deriveProfile(POLICIES.defaults);
  assert.ok(d.home && !d.home.stores.some((s) => s.path === join(home, ".ssh")));
  assert.ok(d.home.hidden.includes(join(home, ".cache", "huggingface", "token")));
  assert.ok(d.readOnly.some((h) => h.path === join(ws, ".git")));
  assert.ok(deriveProfile(POLICIES.rules).writable.some((w) => w.path === join(out, "pub")));
});
