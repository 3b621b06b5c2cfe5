/**
 * The host root as commands see it and the kernel state no namespace separates (issue 16, attack
 * pass 4 classes 1–2; core/policy/sandbox/root_view.ts, seccomp.ts; docs/permissions.md "The OS
 * sandbox"). Real bwrap, the launcher called directly (no guard in between), and one headless
 * session with the guard forced open (`COYOTE_TEST_GUARD=allow`).
 *
 * Siblings of the attacker's finds: FIFOs and socket files in `/run`, `/var/tmp`, `/srv`; a
 * service-account token under `/run/secrets`; `/etc/shadow` and a host key in `/etc` read as
 * root; `/root` with `HOME` elsewhere; keys added to the user keyring; BPF, perf and the kernel
 * log. Workspaces under `/var/tmp` and `/tmp` still work.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Policy } from "../core/policy/policy.ts";
import {
  deriveProfile,
  describeSandbox,
  detectBackend,
  sandboxedCommand,
} from "../core/policy/sandbox/mod.ts";
import {
  REFUSED_SYSCALLS,
  SECCOMP_ARCH,
  unixSocketFilter,
} from "../core/policy/sandbox/seccomp.ts";
import { rootEntry, rootView } from "../core/policy/sandbox/root_view.ts";
import { commandBatch, startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";

const dec = new TextDecoder();
const id = () => crypto.randomUUID().slice(0, 8);
const isRoot = Deno.uid() === 0;

/** A workspace (under `base`), a home elsewhere, and a runner of sandboxed shell commands. */
async function world(base?: string) {
  const root = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "coyote-rootview-", ...(base ? { dir: base } : {}) }),
  );
  const ws = join(root, "ws");
  const home = join(root, "home");
  for (const d of [ws, home, join(root, "cfg")]) await Deno.mkdir(d, { recursive: true });
  const policy = Policy.create({}, { allow: [], deny: [] }, {
    workspace: ws,
    configDir: join(root, "cfg"),
    home,
  });
  await policy.globsReady();
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed (.ci/run installs bubblewrap)");
  const run = async (command: string) => {
    const c = sandboxedCommand(policy, command, {
      cwd: ws,
      backend,
      baseEnv: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: home },
    });
    const o = await new Deno.Command(c.program, {
      args: c.args,
      cwd: ws,
      env: c.env,
      clearEnv: true,
      stdin: "null",
    }).output();
    return dec.decode(o.stdout) + dec.decode(o.stderr);
  };
  return { root, ws, home, policy, run, cleanup: () => Deno.remove(root, { recursive: true }) };
}

/** Runs the classic BPF program `prog` on a `seccomp_data` (nr, arch, args) as the kernel does. */
function runBpf(prog: Uint8Array, nr: number, arch: number, args: number[] = []): number {
  const data = new DataView(new ArrayBuffer(64));
  data.setInt32(0, nr, true);
  data.setUint32(4, arch, true);
  args.forEach((a, i) => data.setUint32(16 + i * 8, a, true));
  const v = new DataView(prog.buffer);
  let acc = 0;
  for (let pc = 0; pc < prog.length / 8;) {
    const code = v.getUint16(pc * 8, true);
    const jt = prog[pc * 8 + 2], jf = prog[pc * 8 + 3];
    const k = v.getUint32(pc * 8 + 4, true);
    if (code === 0x20) acc = data.getUint32(k, true);
    else if (code === 0x54) acc = (acc & k) >>> 0;
    else if (code === 0x15) {
      pc += 1 + (acc === k ? jt : jf);
      continue;
    } else if (code === 0x35) {
      pc += 1 + (acc >= k ? jt : jf);
      continue;
    } else if (code === 0x06) return k;
    else throw new Error(`unknown BPF code ${code}`);
    pc++;
  }
  throw new Error("fell off the program");
}

Deno.test("seccomp: keyrings, bpf, perf_event_open and syslog are refused with EPERM on x86_64 and aarch64", () => {
  const EPERM = 0x00050001, ALLOW = 0x7fff0000;
  for (const [arch, a] of Object.entries(SECCOMP_ARCH)) {
    const prog = unixSocketFilter(arch);
    for (const [name, nr] of Object.entries(REFUSED_SYSCALLS)) {
      const n = nr[arch as keyof typeof nr];
      assert.equal(runBpf(prog, n, a.audit), EPERM, `${arch} ${name} (${n})`);
    }
    // Ordinary calls pass; AF_INET sockets pass, AF_UNIX ones do not (the filter's first job).
    assert.equal(runBpf(prog, arch === "x86_64" ? 39 : 172, a.audit), ALLOW, `${arch} getpid`);
    assert.equal(runBpf(prog, a.socket, a.audit, [2, 1]), ALLOW);
    assert.equal(runBpf(prog, a.socket, a.audit, [1, 1]), EPERM);
  }
  // The numbers are the kernel's (x86_64 syscall_64.tbl, asm-generic/unistd.h).
  assert.deepEqual(REFUSED_SYSCALLS.keyctl, { x86_64: 250, aarch64: 219 });
  assert.deepEqual(REFUSED_SYSCALLS.add_key, { x86_64: 248, aarch64: 217 });
});

const py = (code: string) =>
  `python3 -c "import ctypes;l=ctypes.CDLL(None,use_errno=True);${code}"`;

Deno.test("sandbox keyring: a command can neither add to nor search the user keyring; bpf, perf and syslog fail with EPERM", async () => {
  const w = await world();
  const desc = `coyote-rootview-${id()}`;
  const nr = REFUSED_SYSCALLS;
  const arch = Deno.build.arch as "x86_64" | "aarch64";
  try {
    const out = await w.run([
      // add_key("user", desc, "x", 1, KEY_SPEC_USER_KEYRING) and keyctl(KEYCTL_SEARCH, …)
      py(
        `r=l.syscall(${
          nr.add_key[arch]
        },b'user',b'${desc}',b'x',1,-4);print('ADD',r,ctypes.get_errno())`,
      ),
      py(
        `r=l.syscall(${
          nr.keyctl[arch]
        },10,-4,b'user',b'${desc}',0);print('SEARCH',r,ctypes.get_errno())`,
      ),
      py(`r=l.syscall(${nr.bpf[arch]},0,0,0);print('BPF',r,ctypes.get_errno())`),
      py(
        `b=ctypes.create_string_buffer(128);r=l.syscall(${
          nr.perf_event_open[arch]
        },b,-1,0,-1,0);print('PERF',r,ctypes.get_errno())`,
      ),
      py(`r=l.syscall(${nr.syslog[arch]},10,0,0);print('SYSLOG',r,ctypes.get_errno())`),
    ].join("; "));
    for (const k of ["ADD", "SEARCH", "BPF", "PERF", "SYSLOG"]) {
      assert.match(out, new RegExp(`^${k} -1 1$`, "m"), out);
    }
    // Nothing was added on the host: the host's own search finds no such key (ENOKEY).
    const host = await new Deno.Command("bash", {
      args: [
        "-c",
        py(
          `r=l.syscall(${nr.keyctl[arch]},10,-4,b'user',b'${desc}',0);print(r,ctypes.get_errno())`,
        ),
      ],
    }).output();
    assert.match(dec.decode(host.stdout), /^-1 126$/m);
  } finally {
    await w.cleanup();
  }
});

Deno.test("sandbox root view: FIFOs and socket files in /run, /var/tmp and /srv are absent", async () => {
  const w = await world();
  const dirs = ["/run", "/var/tmp", "/srv"].filter((d) => {
    try {
      return Deno.statSync(d).isDirectory;
    } catch {
      return false;
    }
  });
  assert.ok(dirs.includes("/var/tmp"));
  const tag = id();
  const fifos = dirs.map((d) => `${d}/coyote-rootview-${tag}.fifo`);
  const socks = dirs.map((d) => `${d}/coyote-rootview-${tag}.sock`);
  const listeners: Deno.Listener[] = [];
  for (const f of fifos) {
    assert.equal((await new Deno.Command("mkfifo", { args: [f] }).output()).code, 0);
  }
  for (const s of socks) listeners.push(Deno.listen({ transport: "unix", path: s }));
  // A reader on the /var/tmp FIFO (what the attacker wrote into).
  const reader = new Deno.Command("bash", {
    args: ["-c", `exec cat ${fifos[dirs.indexOf("/var/tmp")]} > ${w.root}/fifo.out`],
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    const out = await w.run(
      [...fifos, ...socks].map((p) =>
        `test -e ${p} && echo "SEEN ${p}"; (echo PWNED > ${p}) 2>/dev/null && echo "WROTE ${p}"`
      ).join("; ") + "; ls /run /var /srv 2>&1",
    );
    assert.doesNotMatch(out, /SEEN|WROTE/, out);
    assert.match(out, /cannot access '\/run'/);
    await new Promise((r) => setTimeout(r, 200));
    assert.doesNotMatch(
      await Deno.readTextFile(`${w.root}/fifo.out`).catch(() => ""),
      /PWNED/,
    );
  } finally {
    try {
      reader.kill();
    } catch { /* ended */ }
    await reader.status;
    for (const l of listeners) l.close();
    for (const p of [...fifos, ...socks]) await Deno.remove(p).catch(() => {});
    await w.cleanup();
  }
});

/** Host files the attacker read, made for the test (root only can write there). */
async function systemSecrets() {
  const tag = id();
  const made: string[] = [];
  const secretsRoot = "/run/secrets";
  const hadSecrets = await Deno.lstat(secretsRoot).then(() => true, () => false);
  const token = join(secretsRoot, `coyote-${tag}`, "kubernetes.io/serviceaccount/token");
  await Deno.mkdir(join(token, ".."), { recursive: true });
  await Deno.writeTextFile(token, "SATOKEN");
  made.push(hadSecrets ? join(secretsRoot, `coyote-${tag}`) : secretsRoot);
  const rootFile = `/root/.coyote-rootview-${tag}`;
  await Deno.writeTextFile(rootFile, "ROOTSECRET");
  made.push(rootFile);
  // A host key in a world-readable folder of /etc, as /etc/ssh/ssh_host_ed25519_key is.
  const etcDir = `/etc/coyote-rootview-${tag}`;
  await Deno.mkdir(etcDir, { mode: 0o755 });
  await Deno.chmod(etcDir, 0o755);
  const hostKey = join(etcDir, "ssh_host_ed25519_key");
  await Deno.writeTextFile(hostKey, "HOSTKEY");
  await Deno.chmod(hostKey, 0o600);
  const pub = join(etcDir, "ssh_host_ed25519_key.pub");
  await Deno.writeTextFile(pub, "PUBLICKEY\n");
  await Deno.chmod(pub, 0o644);
  made.push(etcDir);
  return {
    token,
    rootFile,
    hostKey,
    pub,
    cleanup: async () => {
      for (const p of made) await Deno.remove(p, { recursive: true }).catch(() => {});
    },
  };
}

Deno.test("sandbox root view: /run/secrets, /root (HOME elsewhere) and /etc files others may not read stay hidden as root; system dirs work", async () => {
  assert.ok(isRoot, "these rows are about Coyote running as root (the test machine runs as root)");
  const w = await world();
  // A first command before the secrets exist: the /etc scan is cached and must see the new key.
  assert.match(await w.run("cat /etc/passwd | head -1"), /^root:/);
  const s = await systemSecrets();
  try {
    const out = await w.run(
      [
        `cat ${s.token}`,
        `cat ${s.rootFile}`,
        "ls -A /root",
        `cat ${s.hostKey}`,
        `cat ${s.pub}`,
        "wc -c < /etc/shadow",
        "cat /etc/gshadow",
        "grep -rh SECRET /etc 2>/dev/null | head -3",
        "git --version",
        "python3 -c 'print(40 + 2)'",
        "ls /",
      ].map((c) => `${c} 2>&1`).join("; "),
    );
    for (const leak of ["SATOKEN", "ROOTSECRET", "HOSTKEY", "root:"]) {
      assert.ok(!out.includes(leak), `${leak} in ${out}`);
    }
    assert.match(out, /PUBLICKEY/, "a world-readable file in /etc stays readable");
    assert.match(out, /^0$/m, `/etc/shadow reads as empty: ${out}`);
    assert.match(out, /git version/);
    assert.match(out, /^42$/m);
    assert.doesNotMatch(out, /^(var|run|root|home|srv|mnt|boot|media)$/m, out);
    // The host's /etc/shadow has content: the test is not vacuous.
    assert.ok((await Deno.stat("/etc/shadow")).size > 0);
    // `policy show` says what is visible and that the rest is absent.
    const profile = deriveProfile(w.policy);
    const text = describeSandbox(
      profile,
      {
        mode: "auto",
        active: true,
        backend: "bwrap",
        autoAllow: true,
      } as Parameters<typeof describeSandbox>[1],
    );
    assert.match(text, /read: {5}of the host root only \(read-only\): \/usr .*\/etc/);
    assert.match(text, /Everything else of \/ is absent/);
    assert.match(text, new RegExp(`${s.hostKey}  \\(not readable by others`));
    // A Read allow rule naming one opens it.
    const open = Policy.create({ allow: [`Read(${s.hostKey})`] }, { allow: [], deny: [] }, {
      workspace: w.ws,
      configDir: join(w.root, "cfg"),
      home: w.home,
    });
    await open.globsReady();
    assert.ok(!deriveProfile(open).hidden.some((h) => h.path === s.hostKey));
  } finally {
    await s.cleanup();
    await w.cleanup();
  }
});

Deno.test("sandbox root view: workspaces under /var/tmp and /tmp still work (bound explicitly)", async () => {
  for (const base of ["/var/tmp", "/tmp"]) {
    const w = await world(base);
    try {
      const out = await w.run(
        "echo made > f.txt && cat f.txt && pwd && git init -q . && git status --short | head -1",
      );
      assert.match(out, /^made$/m, out);
      assert.equal(await Deno.readTextFile(join(w.ws, "f.txt")), "made\n");
      assert.ok(out.includes(w.ws), out);
    } finally {
      await w.cleanup();
    }
  }
});

Deno.test("sandbox root view e2e: with the guard forced open, a headless session reads no system secret", async () => {
  assert.ok(isRoot, "rows about Coyote running as root");
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed");
  const s = await systemSecrets();
  const w = await world();
  const env = await makeCoyoteEnv();
  const fifo = `/var/tmp/coyote-rootview-${id()}.fifo`;
  await new Deno.Command("mkfifo", { args: [fifo] }).output();
  const calls: Record<string, string> = {
    token: `cat ${s.token}; ls -R /run/secrets`,
    root: `cat ${s.rootFile}; ls -A /root`,
    shadow: "cat /etc/shadow /etc/gshadow",
    key: `cat ${s.hostKey}`,
    fifo: `echo PWNED > ${fifo}; ls /var/tmp`,
    keyring: py(
      `r=l.syscall(${
        REFUSED_SYSCALLS.add_key[Deno.build.arch as "x86_64"]
      },b'user',b'coyote-e2e',b'x',1,-4);print('ADD',r,ctypes.get_errno())`,
    ),
  };
  const server = await startModelServer({ script: commandBatch(calls) });
  try {
    const e = childEnv(env, {
      baseURL: server.baseURL,
      extra: { HOME: w.home, COYOTE_TEST_MODE: "1", COYOTE_TEST_GUARD: "allow" },
    });
    const r = await runCoyote(["--headless", "--output-format", "stream-json", "go"], {
      cwd: w.ws,
      env: e,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /TEST MODE/);
    const text = new Map<string, string>();
    for (const l of r.stdout.trim().split("\n").map((x) => JSON.parse(x))) {
      const u = l.update;
      if (u?.sessionUpdate === "tool_call_update" && u.content) {
        text.set(u.toolCallId, JSON.stringify(u.content));
      }
    }
    assert.equal(text.size, Object.keys(calls).length, r.stdout);
    const all = [...text.values()].join("\n");
    for (const leak of ["SATOKEN", "ROOTSECRET", "HOSTKEY", "root:$", "root:*", "root:!"]) {
      assert.ok(!all.includes(leak), `${leak} in ${all}`);
    }
    assert.match(text.get("keyring")!, /ADD -1 1/);
    assert.match(text.get("fifo")!, /No such file or directory/);
  } finally {
    await server.close();
    await env.cleanup();
    await w.cleanup();
    await s.cleanup();
    await Deno.remove(fifo).catch(() => {});
  }
});

Deno.test("sandbox root view: Homebrew's Linux prefix shows (read-only), the rest of /home does not", async () => {
  assert.ok(isRoot, "creating /home/linuxbrew needs root (the test machine runs as root)");
  const made = !(await Deno.lstat("/home/linuxbrew").then(() => true, () => false));
  const prefix = "/home/linuxbrew/.linuxbrew";
  const tool = join(prefix, "bin", `coyote-brew-${id()}`);
  await Deno.mkdir(join(tool, ".."), { recursive: true });
  await Deno.writeTextFile(tool, "#!/bin/sh\necho BREW_OK\n", { mode: 0o755 });
  await Deno.chmod(tool, 0o755);
  // A file of that user's home outside the prefix (only where the test made the home).
  const other = made ? "/home/linuxbrew/.bash_history" : join(prefix, "..", `.coyote-${id()}`);
  await Deno.writeTextFile(other, "SECRET_HISTORY\n");
  const w = await world();
  try {
    const out = await w.run(
      `${tool}; cat ${other} 2>&1; ls /home 2>&1; touch ${prefix}/x 2>&1`,
    );
    assert.match(out, /^BREW_OK$/m, out);
    assert.doesNotMatch(out, /SECRET_HISTORY|agent|cloudsdk/, out);
    assert.match(out, /Read-only file system/, out);
  } finally {
    await w.cleanup();
    if (made) await Deno.remove("/home/linuxbrew", { recursive: true });
    else for (const p of [tool, other]) await Deno.remove(p);
  }
});

Deno.test("root view: a top-level link into the list is made again, a link out of it binds its target folder, a dangling one is left out", async () => {
  const t = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-rootentry-" }));
  try {
    await Deno.mkdir(join(t, "usr", "bin"), { recursive: true });
    await Deno.mkdir(join(t, "var", "opt"), { recursive: true });
    await Deno.symlink("usr/bin", join(t, "bin"));
    await Deno.symlink(join(t, "var", "opt"), join(t, "opt"));
    await Deno.symlink(join(t, "nowhere"), join(t, "snap"));
    await Deno.writeTextFile(join(t, "file"), "");
    const roots = ["usr", "bin", "opt", "snap"].map((n) => join(t, n));
    assert.deepEqual(rootEntry(join(t, "usr"), roots), { path: join(t, "usr") });
    assert.deepEqual(rootEntry(join(t, "bin"), roots), { path: join(t, "bin"), link: "usr/bin" });
    assert.deepEqual(rootEntry(join(t, "opt"), roots), {
      path: join(t, "opt"),
      from: join(t, "var", "opt"),
    });
    assert.equal(rootEntry(join(t, "snap"), roots), undefined);
    assert.equal(rootEntry(join(t, "file"), roots), undefined);
    assert.equal(rootEntry(join(t, "absent"), roots), undefined);
    // This machine: /usr and /etc are in, nothing of /var, /run, /root, /home but the prefixes.
    const v = rootView();
    assert.ok(v.entries.some((e) => e.path === "/usr") && v.entries.some((e) => e.path === "/etc"));
    for (const e of v.entries) {
      assert.ok(
        !/^\/(var|run|root|home|srv|mnt|tmp)(\/|$)/.test(e.path) ||
          e.path === "/home/linuxbrew/.linuxbrew" || e.path === "/run/current-system",
        e.path,
      );
    }
  } finally {
    await Deno.remove(t, { recursive: true });
  }
});
