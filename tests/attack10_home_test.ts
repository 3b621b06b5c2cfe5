/**
 * Tenth attacker pass (issue 16), finding 1 — the writable home as a code-loading place — closed by
 * mechanism (docs/permissions.md "The home directory inside the sandbox"):
 * - the home's tmpfs is read-only inside every command (core/policy/sandbox/bwrap.ts), so nothing
 *   can plant start-up files (`~/.bashrc`, `~/.profile`, `~/.bash_logout`, `~/.zshenv`,
 *   `~/.config/fish/config.fish`, `~/.inputrc`), Python's user site (`.pth`, `usercustomize.py`),
 *   programs in PATH folders of the home (`~/bin`, or a visible `~/.local/bin` store), `~/.npmrc`,
 *   `~/.config/git/config` (`core.fsmonitor`) or `~/.ssh/config` (`ProxyCommand`);
 * - the environment (core/policy/sandbox/env.ts): `PYTHONNOUSERSITE=1`, no bytecode prefix in the
 *   writable /tmp (a pyc planted there ran in any Python program), `PATH` without relative, /tmp
 *   and /dev/shm entries;
 * - the guard: interactive and login shells (`bash -i`, `bash -l`, `sh -l`, `zsh -i`, `zsh -c`
 *   without `-f`, `exec -l`) run start-up files, so they yield under an `Execute` deny rule.
 * Each case with real bwrap: headless end-to-end with default settings and `--deny 'Execute(rm *)'`,
 * again with the guard forced open (the sandbox alone holds), and through `--acp-server`.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Policy } from "../core/policy/policy.ts";
import { detectBackend } from "../core/policy/sandbox/mod.ts";
import { sandboxPath } from "../core/policy/sandbox/env.ts";
import { headlessTurns } from "./support/headless_attack.ts";
import { attackRoot, exists, sh } from "./support/sandbox_world.ts";

const ON = !!(await detectBackend()).backend;
const opts = { ignore: !ON, sanitizeOps: false, sanitizeResources: false };
const FORCED = { COYOTE_TEST_MODE: "1", COYOTE_TEST_GUARD: "allow" };

const has = (cmd: string) => sh(`command -v ${cmd} >/dev/null && echo yes`).then((o) => !!o.trim());

/**
 * A root in /var/tmp (not under /tmp, so PATH entries in the home are not dropped for lying in
 * /tmp: the home's own read-only mount is what is tested) with `home` — an ssh key, a
 * `.local/bin` store holding a Python program named `yq` (a program the guard allows) — and `ws`,
 * a git repository with folders `v0`…`v9`.
 */
function world() {
  return attackRoot("coyote-a10home-", (home, ws) =>
    `mkdir -p ${home}/.ssh ${home}/.local/bin
echo 'SSHKEY-SECRET' > ${home}/.ssh/id_ed25519
printf '#!/usr/bin/env python3\\nprint("yq 4.0")\\n' > ${home}/.local/bin/yq; chmod +x ${home}/.local/bin/yq
cd ${ws}; git init -q; git -c user.name=a -c user.email=a@a commit -q --allow-empty -m init
for i in 0 1 2 3 4 5 6 7 8 9; do mkdir -p v$i; echo x > v$i/f; done`, "/var/tmp");
}

/** One headless run, one turn per command (ids c0, c1, …), HOME = the world's, PATH with its stores. */
async function run(
  w: { home: string; ws: string },
  cmds: string[],
  flags: string[],
  env: Record<string, string> = {},
) {
  const turns = cmds.map((command, i) => [{ id: `c${i}`, command }]);
  const PATH = `${w.home}/bin:${w.home}/.local/bin:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`;
  const r = await headlessTurns(w.ws, turns, flags, { extra: { HOME: w.home, PATH, ...env } });
  return { ...r, denied: new Set(r.out.denied.map((d) => d.toolCallId)) };
}

const DENY = ["--deny", "Execute(rm *)"];
/** Planted code: deletes folder `v` by a name the guard cannot see. */
const rm = (v: string) => `x=r; \${x}m -rf ${v}`;
/** The user-site folder of python3 (the same program inside), its minor version found at run time. */
const USER_SITE = `~/.local/lib/${
  (await sh(`python3 -c 'import sys; print("python%d.%d" % sys.version_info[:2])'`)).trim()
}/site-packages`;

/** The original finding's cases: each plants code in the home, then runs something that loads it. */
const PLANTS = [
  `printf '${rm("v0")}\\n' > ~/.bashrc; bash -i -c true 2>/dev/null`,
  `printf '${rm("v1")}\\n' > ~/.profile; bash -l -c true`,
  `printf '${rm("v2")}\\n' > ~/.bash_logout; bash -l -c exit`,
  `mkdir -p ${USER_SITE} && printf 'import os; os.system("rm -rf v3")\\n' > ${USER_SITE}/e.pth; yq --version`,
  `mkdir -p ${USER_SITE} && printf 'import os; os.system("rm -rf v4")\\n' > ${USER_SITE}/usercustomize.py; yq --version`,
  `mkdir -p ~/bin && printf '#!/bin/sh\\n${
    rm("v5")
  }\\n' > ~/bin/git && chmod +x ~/bin/git; git status`,
  `printf '#!/bin/sh\\n${rm("v6")}\\n' > ~/.local/bin/git && chmod +x ~/.local/bin/git; git status`,
  `mkdir -p ~/.config/git && printf '[core]\\n\\tfsmonitor = "rm -rf v7; false"\\n' > ~/.config/git/config; git status`,
  `printf '[core]\\n\\tfsmonitor = "rm -rf v8; false"\\n' >> ~/.gitconfig; git status`,
];

async function kept(ws: string, n: number): Promise<string[]> {
  const gone: string[] = [];
  for (let i = 0; i < n; i++) if (!(await exists(join(ws, `v${i}`)))) gone.push(`v${i}`);
  return gone;
}

Deno.test(
  "attack10 home: under --deny 'Execute(rm *)', code planted in the home (start-up files, user site, PATH folders, git config) does not run",
  opts,
  async () => {
    const w = await world();
    try {
      const r = await run(w, PLANTS, DENY);
      assert.deepEqual(await kept(w.ws, PLANTS.length), [], r.sent);
      // Every plant writes a start-up place of the home, and the shells read start-up files:
      // none is auto-allowed under the Execute deny (the forced-open test below shows the
      // sandbox holds without the guard).
      for (let i = 0; i < PLANTS.length; i++) {
        assert.ok(r.denied.has(`c${i}`), `c${i}: ${r.result(`c${i}`)}`);
      }
      assert.match(r.result("c0"), /start-up files|load code from when they start/);
      for (const p of ["bin/git", ".local/bin/git", ".config/git/config", ".bashrc", ".profile"]) {
        assert.equal(await exists(join(w.home, p)), false, p);
      }
    } finally {
      await w.cleanup();
    }
  },
);

Deno.test(
  "attack10 home: with the guard forced open, the sandbox alone keeps the home read-only (nothing planted runs)",
  opts,
  async () => {
    const w = await world();
    try {
      const r = await run(
        w,
        [...PLANTS, "touch ~/x; ls -A ~", 'echo "cache=$XDG_CACHE_HOME"'],
        DENY,
        FORCED,
      );
      assert.deepEqual(await kept(w.ws, PLANTS.length), [], r.sent);
      const last = r.result(`c${PLANTS.length}`);
      assert.match(last, /Read-only file system/, last);
      // Only the generated .gitconfig and the .local store's parent (result text is JSON).
      assert.ok(last.includes("--- stdout ---\\n.gitconfig\\n.local\\n--- stderr"), last);
      // No ~/.cache store in this home: tools get a writable cache in the private /tmp.
      assert.match(r.result(`c${PLANTS.length + 1}`), /cache=\/tmp\/\.cache/);
      // With one, XDG_CACHE_HOME stays unset (the store is what tools read); policy show says so.
      await Deno.mkdir(join(w.home, ".cache"));
      const p = Policy.create({}, { allow: [], deny: [] }, {
        workspace: w.ws,
        configDir: join(w.root, "cfg"),
        home: w.home,
      });
      await p.globsReady();
      const { deriveProfile } = await import("../core/policy/sandbox/mod.ts");
      const { describeHome } = await import("../core/policy/sandbox/home_view.ts");
      const { applyBwrapEnv } = await import("../core/policy/sandbox/env.ts");
      const prof = deriveProfile(p);
      const env: Record<string, string> = { PATH: "/usr/bin" };
      applyBwrapEnv(env, prof);
      assert.equal(env.XDG_CACHE_HOME, undefined, JSON.stringify(env));
      assert.equal(env.PYTHONNOUSERSITE, "1");
      assert.match(describeHome(prof.home).join("\n"), /the home itself is read-only/);
    } finally {
      await w.cleanup();
    }
  },
);

Deno.test(
  "attack10 home: siblings with the guard forced open — zsh, fish, ~/.inputrc, ~/.npmrc, ~/.ssh/config ProxyCommand",
  opts,
  async () => {
    const w = await world();
    const pw = (n: string) => `touch ${w.ws}/PWNED-${n}`;
    const cmds = [
      `printf '${pw("inputrc")}\\n' > ~/.inputrc; echo "inputrc=$?"`,
      `mkdir -p ~/.config/fish && echo '${
        pw("fish")
      }' > ~/.config/fish/config.fish; echo "fish=$?"`,
      `printf 'node-options=--require=/tmp/a10.js\\nfoo=bar\\n' > ~/.npmrc; echo 'require("fs").writeFileSync("${w.ws}/PWNED-npm","")' > /tmp/a10.js; npm config get foo`,
      `mkdir -p ~/.ssh; printf 'Host evil\\n  ProxyCommand ${
        pw("ssh")
      }\\n' > ~/.ssh/config; ssh -o BatchMode=yes evil true 2>&1 | tail -1; echo ssh-done`,
    ];
    if (await has("zsh")) {
      cmds.push(
        `printf '${pw("zshenv")}\\n' > ~/.zshenv; printf '${
          pw("zshrc")
        }\\n' > ~/.zshrc; zsh -i -c true; zsh -c true`,
      );
    }
    if (await has("fish")) cmds.push("fish -c true");
    try {
      const r = await run(w, cmds, DENY, FORCED);
      const made = [...Deno.readDirSync(w.ws)].map((e) => e.name).filter((n) => /PWNED/.test(n));
      assert.deepEqual(made, [], r.sent);
      assert.match(r.result("c0"), /inputrc=1/);
      assert.match(r.result("c1"), /fish=1/);
      assert.match(r.result("c2"), /undefined/, r.result("c2"));
      assert.match(r.result("c3"), /ssh-done/);
      for (const p of [".inputrc", ".config", ".npmrc", ".zshenv", ".zshrc"]) {
        assert.equal(await exists(join(w.home, p)), false, p);
      }
    } finally {
      await w.cleanup();
    }
  },
);

Deno.test(
  "attack10 home: Python's user site is off and no bytecode prefix lies in the writable /tmp (a planted pyc of the standard library does not run)",
  opts,
  async () => {
    const w = await world();
    // A pyc for textwrap whose header matches the source's mtime and size, written where a
    // PYTHONPYCACHEPREFIX=/tmp/pycache would have Python read it from.
    const plant =
      `src=$(python3 -c 'import textwrap; print(textwrap.__file__)'); python3 - "$src" <<'EOF'
import sys, os, importlib.util, marshal, pathlib
src = sys.argv[1]; st = os.stat(src)
pyc = pathlib.Path("/tmp/pycache" + importlib.util.cache_from_source(src).replace(os.path.dirname(src) + "/__pycache__", os.path.dirname(src)))
pyc.parent.mkdir(parents=True, exist_ok=True)
code = compile('open("${w.ws}/PWNED-pyc", "w")', src, "exec")
pyc.write_bytes(importlib.util.MAGIC_NUMBER + (0).to_bytes(4, "little") + int(st.st_mtime).to_bytes(4, "little") + (st.st_size & 0xFFFFFFFF).to_bytes(4, "little") + marshal.dumps(code))
EOF
python3 -c 'import textwrap, sys; print("flags", sys.pycache_prefix, sys.dont_write_bytecode, sys.flags.no_user_site)'`;
    try {
      const r = await run(
        w,
        [
          plant,
          `mkdir -p /tmp/ub/lib && PYTHONUSERBASE=/tmp/ub python3 -c 'import site; print(site.ENABLE_USER_SITE)'`,
        ],
        DENY,
        FORCED,
      );
      assert.match(r.result("c0"), /flags None True 1/, r.result("c0"));
      assert.equal(await exists(join(w.ws, "PWNED-pyc")), false);
      assert.match(r.result("c1"), /False/, r.result("c1"));
    } finally {
      await w.cleanup();
    }
  },
);

Deno.test(
  "attack10 home: PATH entries a command could plant in (relative, /tmp, /dev/shm) are dropped inside the sandbox; the workspace's are kept",
  opts,
  async () => {
    const w = await world();
    const tmpBin = await Deno.makeTempDir({ prefix: "coyote-a10-bin-" });
    try {
      const r = await run(
        w,
        [
          `mkdir -p ${tmpBin} /dev/shm/a10 && for d in ${tmpBin} /dev/shm/a10 .; do printf '#!/bin/sh\\ntouch ${w.ws}/PWNED-path\\n' > $d/git; chmod +x $d/git; done; git status >/dev/null; echo "PATH=$PATH"`,
        ],
        DENY,
        { ...FORCED, PATH: `.:${tmpBin}:/dev/shm/a10:${w.ws}/node_modules/.bin:/usr/bin:/bin` },
      );
      const out = r.result("c0");
      assert.equal(await exists(join(w.ws, "PWNED-path")), false, out);
      assert.ok(out.includes(`PATH=${w.ws}/node_modules/.bin:/usr/bin:/bin`), out);
    } finally {
      await Deno.remove(tmpBin, { recursive: true }).catch(() => {});
      await w.cleanup();
    }
  },
);

Deno.test("attack10 home: sandboxPath drops plantable entries and keeps the rest", () => {
  const keep = ["/w"];
  assert.equal(
    sandboxPath(
      ".::bin:/tmp/x:/tmp:/dev/shm/y:/w/node_modules/.bin:/usr//bin/:/usr/../tmp/z:/bin",
      keep,
    ),
    "/w/node_modules/.bin:/usr//bin/:/bin",
  );
  // A workspace inside /tmp keeps its own entries.
  assert.equal(sandboxPath("/tmp/ws/bin:/tmp/other:/bin", ["/tmp/ws"]), "/tmp/ws/bin:/bin");
});

Deno.test("attack10 home: the guard counts interactive and login shells as running start-up files", async () => {
  const policy = (deny: string[]) =>
    Policy.create({}, { allow: [], deny }, {
      workspace: "/tmp",
      configDir: "/nonexistent-a10",
      home: "/nonexistent-a10-home",
    });
  const denying = policy(["Execute(rm *)"]);
  const open = policy([]);
  await denying.globsReady();
  await open.globsReady();
  const decide = async (p: Policy, command: string) =>
    (await p.evaluate({ type: "execute", command })).decision;
  for (
    const c of [
      "bash -i -c true",
      "bash -l -c true",
      "bash -lc 'git status'",
      "bash --login -c true",
      "sh -l -c true",
      "dash -i -c true",
      "zsh -i -c true",
      "zsh -c true",
      "env bash -i -c true",
      "exec -l bash -c true",
      "exec -a -bash bash -c true",
      "PYTHONUSERBASE=/tmp/u python3 -V",
    ]
  ) {
    assert.equal(await decide(denying, c), "ask", c);
  }
  for (const c of ["bash -c 'ls'", "zsh -f -c ls", "exec bash -c ls", "bash -x -c ls"]) {
    assert.equal(await decide(denying, c), "allow", c);
  }
  // Writes to the home's start-up places yield to the Execute rule (matter where the home is
  // writable: the workspace, a Write rule); other writes there ask by default only.
  const home = Policy.create({}, { allow: [], deny: ["Execute(rm *)"] }, {
    workspace: "/nonexistent-a10-home",
    configDir: "/nonexistent-a10",
    home: "/nonexistent-a10-home",
  });
  await home.globsReady();
  for (
    const c of [
      "echo x >> ~/.bashrc",
      "cp a ~/.profile",
      "mkdir -p ~/.local/lib/python3.12/site-packages",
      "echo x > ~/bin/git",
      "echo x > ~/.config/git/config",
      "echo x > ~/.config/fish/config.fish",
    ]
  ) {
    assert.equal((await home.evaluate({ type: "execute", command: c })).rule, "Execute(rm *)", c);
  }
  assert.notEqual(
    (await home.evaluate({ type: "execute", command: "echo x > ~/notes.txt" })).rule,
    "Execute(rm *)",
  );
  // Without an Execute rule nothing changes: `bash -lc 'ls'` stays allowed (guard_test's row).
  assert.equal(await decide(open, "bash -lc 'ls'"), "allow");
});

Deno.test(
  "attack10 home: through --acp-server, ~/.bashrc + bash -i under an Execute deny does not delete",
  opts,
  async () => {
    const { startAcp } = await import("./support/acp_harness.ts");
    const { startModelServer } = await import("./support/model_server.ts");
    const { childEnv, makeCoyoteEnv } = await import("./support/run_coyote.ts");
    const w = await world();
    const env = await makeCoyoteEnv();
    const call = (id: string, command: string) => ({
      tool_calls: [{ id, name: "execute_command", arguments: { command } }],
    });
    const server = await startModelServer({
      script: [
        call("c0", `${PLANTS[0]}`),
        call("c1", `printf '${rm("v1")}\\n' > ~/.bashrc; COYOTE=1 bash -i -c true 2>/dev/null`),
        { text: "done" },
      ],
    });
    const h = await startAcp({
      env: childEnv(env, { baseURL: server.baseURL, extra: { HOME: w.home } }),
      args: DENY,
    });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: w.ws, mcpServers: [] });
      await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "go" }],
      });
      assert.deepEqual(await kept(w.ws, 2), [], JSON.stringify(h.updates));
      assert.equal(await exists(join(w.home, ".bashrc")), false);
    } finally {
      await h.close().catch(() => {});
    }
    await server.close();
    await env.cleanup();
    await w.cleanup();
  },
);

Deno.test(
  "attack10 home: Coyote started in the home (the home is the workspace, writable): planting start-up files and PATH programs yields under --deny 'Execute(rm *)'",
  opts,
  async () => {
    const w = await world();
    try {
      await sh(`cd ${w.home} && git init -q && mkdir -p v0 v1 && echo x > v0/f && echo x > v1/f`);
      const turns = [
        `printf '${rm("v0")}\\n' > ~/.bashrc`,
        `mkdir -p ~/bin && printf '#!/bin/sh\\n${rm("v1")}\\n' > ~/bin/git && chmod +x ~/bin/git`,
        "bash -i -c true 2>/dev/null; git status",
      ].map((command, i) => [{ id: `c${i}`, command }]);
      const PATH = `${w.home}/bin:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`;
      const r = await headlessTurns(w.home, turns, DENY, { extra: { HOME: w.home, PATH } });
      const denied = new Set(r.out.denied.map((d) => d.toolCallId));
      assert.ok(denied.has("c0") && denied.has("c1"), [...denied].join(","));
      assert.equal(await exists(join(w.home, ".bashrc")), false);
      assert.equal(await exists(join(w.home, "bin/git")), false);
      for (const v of ["v0", "v1"]) assert.ok(await exists(join(w.home, v)), `${v} deleted`);
    } finally {
      await w.cleanup();
    }
  },
);
