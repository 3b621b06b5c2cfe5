/**
 * Unix sockets in the OS sandbox (issue 16 §1, core/policy/sandbox/seccomp.ts, docs/permissions.md
 * "Unix sockets"), on real bwrap with real listeners on the host: a socket file in a
 * world-readable directory outside the workspace and a Docker socket under a fake HOME
 * (`~/.docker/run/docker.sock`) are not reachable, nor is an abstract socket; `socketpair`, pipes
 * and TCP sockets work; a `Net(unix:/path)` rule lets that socket through; the same holds in a
 * headless session with the guard forced open. Plus the generated BPF bytes, the SBPL text for
 * macOS and the environment scrub of daemon pointers.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Policy } from "../core/policy/policy.ts";
import {
  CommandSandbox,
  deriveProfile,
  describeSandbox,
  detectBackend,
  sandboxedCommand,
} from "../core/policy/sandbox/mod.ts";
import { runCommand } from "../plugins/exec/mod.ts";
import { SECCOMP_ARCH, unixSocketFilter } from "../core/policy/sandbox/seccomp.ts";
import { sbplProfile } from "../core/policy/sandbox/sbpl.ts";
import { commandEnvironment, daemonPointer } from "../core/policy/sandbox/env.ts";
import { commandBatch, startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";

/** A workspace, a fake home with a Docker socket, an outside dir with a socket; all listening. */
async function world() {
  let dir: string | undefined;
  try {
    if (Deno.statSync("/var/tmp").isDirectory) dir = "/var/tmp";
  } catch { /* default temp dir */ }
  const root = await Deno.realPath(await Deno.makeTempDir({ dir, prefix: "coyote-sock-" }));
  await Deno.chmod(root, 0o755);
  const ws = join(root, "ws");
  const home = join(root, "home");
  const out = join(root, "outside");
  for (const d of [ws, join(home, ".docker", "run"), out, join(root, "cfg"), join(root, "data")]) {
    await Deno.mkdir(d, { recursive: true });
  }
  const sockets = { outside: join(out, "svc.sock"), docker: join(home, ".docker/run/docker.sock") };
  const listeners: Deno.Listener[] = [];
  let accepted = 0;
  for (const path of Object.values(sockets)) {
    const l = Deno.listen({ transport: "unix", path });
    listeners.push(l);
    (async () => {
      for await (const c of l) {
        accepted++;
        await c.write(new TextEncoder().encode("HELLO")).catch(() => {});
        c.close();
      }
    })().catch(() => {});
  }
  await Deno.chmod(sockets.outside, 0o777);
  const policy = (allow: string[] = []) =>
    Policy.create({}, { allow, deny: [] }, {
      workspace: ws,
      configDir: join(root, "cfg"),
      dataDir: join(root, "data"),
      home,
    });
  return {
    root,
    ws,
    home,
    sockets,
    accepted: () => accepted,
    policy,
    cleanup: async () => {
      for (const l of listeners) l.close();
      await Deno.remove(root, { recursive: true }).catch(() => {});
    },
  };
}

async function inSandbox(policy: Policy, command: string, cwd: string) {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed for these tests (.ci/run installs bubblewrap)");
  const c = sandboxedCommand(policy, command, {
    cwd,
    backend,
    baseEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
  });
  const o = await new Deno.Command(c.program, {
    args: c.args,
    cwd,
    env: c.env,
    clearEnv: true,
    stdin: "null",
  }).output();
  const dec = new TextDecoder();
  return { code: o.code, out: dec.decode(o.stdout) + dec.decode(o.stderr) };
}

/** python3 that connects to a unix socket path (or `@name`: abstract) and prints what it reads. */
const connect = (target: string) =>
  `python3 -c 'import socket,sys
t=sys.argv[1]; t="\\0"+t[1:] if t.startswith("@") else t
try:
  s=socket.socket(socket.AF_UNIX); s.connect(t); print("GOT", s.recv(5).decode())
except OSError as e: print("ERR", e)' '${target}'`;

Deno.test("seccomp: the generated program for x86_64 and aarch64", () => {
  for (const [arch, a] of Object.entries(SECCOMP_ARCH)) {
    const b = unixSocketFilter(arch);
    const v = new DataView(b.buffer);
    assert.equal(b.length % 8, 0);
    const n = b.length / 8;
    // first: load arch; second: compare with the audit value
    assert.equal(v.getUint16(0, true), 0x20);
    assert.equal(v.getUint32(4, true), 4);
    assert.equal(v.getUint32(12, true), a.audit);
    // the last three are returns: allow, errno|EPERM, kill process
    assert.deepEqual(
      [n - 3, n - 2, n - 1].map((i) => [v.getUint16(i * 8, true), v.getUint32(i * 8 + 4, true)]),
      [[6, 0x7fff0000], [6, 0x00050001], [6, 0x80000000]],
    );
    const ks = Array.from({ length: n }, (_, i) => v.getUint32(i * 8 + 4, true));
    assert.ok(ks.includes(a.socket) && ks.includes(a.ioUringSetup) && ks.includes(a.socketpair));
    // every jump lands inside the program
    for (let i = 0; i < n; i++) {
      if ((v.getUint16(i * 8, true) & 7) !== 5) continue;
      assert.ok(i + 1 + b[i * 8 + 2] < n && i + 1 + b[i * 8 + 3] < n, `jump at ${i}`);
    }
  }
  assert.equal(unixSocketFilter("x86_64").length, 23 * 8);
  assert.equal(unixSocketFilter("aarch64").length, 22 * 8);
  assert.throws(() => unixSocketFilter("riscv64"), /no seccomp filter for architecture riscv64/);
});

Deno.test("sandbox sockets: socket files and abstract sockets are closed; socketpair, pipes, TCP work", async () => {
  const w = await world();
  // An abstract socket on the host (no file at all).
  const abstract = `coyote-test-${crypto.randomUUID()}`;
  const py = new Deno.Command("python3", {
    args: [
      "-c",
      `import socket,sys
s=socket.socket(socket.AF_UNIX); s.bind("\\0"+sys.argv[1]); s.listen(); print("up", flush=True)
while True:
  c,_=s.accept(); c.send(b"HELLO"); c.close()`,
      abstract,
    ],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = py.stdout.getReader();
  await reader.read();
  try {
    // The host side can reach all three (the listeners work).
    const host = await new Deno.Command("bash", {
      args: ["-c", [w.sockets.outside, w.sockets.docker, `@${abstract}`].map(connect).join(";")],
    }).output();
    assert.equal(new TextDecoder().decode(host.stdout).match(/GOT HELLO/g)?.length, 3);
    const before = w.accepted();

    const r = await inSandbox(
      w.policy(),
      [
        connect(w.sockets.outside),
        connect(w.sockets.docker),
        connect(`@${abstract}`),
        `socat -u UNIX-CONNECT:${w.sockets.outside} - ; echo socat=$?`,
        `python3 -c 'import socket; a,b=socket.socketpair(); a.send(b"pair"); print(b.recv(4).decode())'`,
        // Attack trial 2 item 3: a datagram pair could sendto any socket file; seqpacket works.
        `python3 -c 'import socket
for t in (socket.SOCK_DGRAM, socket.SOCK_DGRAM|socket.SOCK_CLOEXEC|socket.SOCK_NONBLOCK, socket.SOCK_RAW):
  try: socket.socketpair(socket.AF_UNIX, t); print("DGRAM PAIR MADE")
  except OSError as e: print("PAIR REFUSED", e)
a,b=socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET|socket.SOCK_CLOEXEC); a.send(b"seq"); print(b.recv(3).decode())
a,b=socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM|socket.SOCK_NONBLOCK); a.send(b"nb"); print(b.recv(2).decode())'`,
        "echo piped | cat",
        `python3 -c 'import socket
l=socket.socket(socket.AF_INET); l.bind(("127.0.0.1",0)); l.listen()
c=socket.create_connection(l.getsockname()); s,_=l.accept(); c.send(b"tcp"); print(s.recv(3).decode())
socket.socket(socket.AF_INET6); print("inet6")'`,
      ].join("\n"),
      w.ws,
    );
    assert.doesNotMatch(r.out, /GOT/, r.out);
    assert.equal(r.out.match(/ERR \[Errno 1\] Operation not permitted/g)?.length, 3, r.out);
    assert.match(r.out, /socat=1/);
    assert.match(r.out, /^pair$/m);
    assert.doesNotMatch(r.out, /DGRAM PAIR MADE/);
    assert.equal(
      r.out.match(/PAIR REFUSED \[Errno 1\] Operation not permitted/g)?.length,
      3,
      r.out,
    );
    assert.match(r.out, /^seq$/m);
    assert.match(r.out, /^nb$/m);
    assert.match(r.out, /^piped$/m);
    assert.match(r.out, /^tcp$/m);
    assert.match(r.out, /^inet6$/m);
    assert.equal(w.accepted(), before, "no connection reached a host listener");
  } finally {
    py.kill();
    await reader.cancel();
    await py.status;
    await w.cleanup();
  }
});

Deno.test("sandbox sockets: with Net(host) rules the proxy works and sockets stay closed (the bridge alone is unfiltered)", async () => {
  const w = await world();
  const web = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("web-body"),
  );
  const p = w.policy(["Net(127.0.0.1)"]);
  const sb = await CommandSandbox.create(p, { mode: "required", autoAllow: true });
  try {
    const before = w.accepted();
    const o = await runCommand(
      [
        `curl -s --max-time 5 http://127.0.0.1:${web.addr.port}/; echo`,
        connect(w.sockets.outside),
        connect("/tmp/.coyote-net.sock"),
        `python3 -c 'import socket; socket.socketpair(); print("pair")'`,
        "grep CapEff /proc/self/status",
      ].join("\n"),
      { cwd: w.ws, timeoutMs: 20_000, signal: new AbortController().signal, launcher: sb },
    );
    assert.equal(o.sandboxed, true);
    assert.match(o.stdout, /^web-body$/m, o.stderr);
    assert.equal(o.stdout.match(/ERR \[Errno 1\] Operation not permitted/g)?.length, 2, o.stdout);
    assert.match(o.stdout, /^pair$/m);
    assert.match(o.stdout, /CapEff:\s+0+$/m, "the command has no capability");
    assert.equal(w.accepted(), before);
  } finally {
    sb.close();
    await web.shutdown();
    await w.cleanup();
  }
});

Deno.test("sandbox sockets: a Net(unix:/path) rule lets that socket through", async () => {
  const w = await world();
  try {
    const p = w.policy([`Net(unix:${w.sockets.outside})`]);
    await p.globsReady();
    const prof = deriveProfile(p);
    assert.deepEqual(prof.unixSockets, [w.sockets.outside]);
    // A rule naming a directory or a plain file mounts nothing (a socket is what it opens).
    const dirRule = w.policy([`Net(unix:${w.home})`, `Net(unix:${w.root}/none.sock)`]);
    await dirRule.globsReady();
    assert.deepEqual(deriveProfile(dirRule).unixSockets, []);
    assert.equal(prof.network.mode, "none", "a unix rule opens no network");
    const show = (pr: typeof prof) =>
      describeSandbox(pr, {
        mode: "auto",
        active: true,
        backend: "bwrap",
        autoAllow: true,
        reason: "",
      });
    assert.match(show(prof), /sockets: +unix sockets open .*bound in: .*svc\.sock/);
    assert.match(show(deriveProfile(w.policy())), /sockets: +no unix sockets \(seccomp/);
    const r = await inSandbox(p, connect(w.sockets.outside), w.ws);
    assert.match(r.out, /GOT HELLO/, r.out);
    // Also a socket inside the home, which commands otherwise see as an empty tmpfs.
    const inHome = await inSandbox(
      w.policy([`Net(unix:${w.sockets.docker})`]),
      `${connect(w.sockets.docker)}; ls ${w.home}/.docker/run`,
      w.ws,
    );
    assert.match(inHome.out, /GOT HELLO/, inHome.out);
    // The guard decides the rule; the Deno-flag view leaves it out (Deno knows no socket paths).
    const denyUnix = w.policy([]);
    denyUnix.addRule("deny", `Net(unix:${w.sockets.docker})`, "test");
    assert.ok(
      !denyUnix.denoFlags().some((f) => f.includes("unix:")),
      denyUnix.denoFlags().join(" "),
    );
    assert.equal(p.decide({ type: "net", host: `unix:${w.sockets.outside}` }).decision, "allow");
    assert.throws(
      () => w.policy(["Net(unix:relative.sock)"]),
      /expected unix: and an absolute socket path/,
    );
    // macOS: the SBPL profile denies unix-socket connects except the named paths.
    const sb = sbplProfile(prof, {});
    assert.match(sb, /\(deny network-outbound \(remote unix-socket\)\)/);
    assert.ok(
      sb.includes(
        `(allow network-outbound (remote unix-socket (path-literal "${w.sockets.outside}")))`,
      ),
      sb,
    );
    assert.ok(
      sb.indexOf("(deny network-outbound (remote unix-socket))") <
        sb.indexOf("(allow network-outbound (remote unix-socket"),
      "the allow comes later (later rules win)",
    );
    const none = sbplProfile(deriveProfile(w.policy()), {});
    assert.match(none, /\(deny network-outbound \(remote unix-socket\)\)/);
    assert.doesNotMatch(none, /path-literal/);
  } finally {
    await w.cleanup();
  }
});

Deno.test("sandbox env: variables that point at daemons or sockets do not enter the sandbox", async () => {
  const w = await world();
  try {
    const base = {
      PATH: "/usr/bin:/bin",
      DOCKER_HOST: "unix:///var/run/docker.sock",
      CONTAINER_HOST: "ssh://core@host/run/podman.sock",
      SSH_AUTH_SOCK: "/tmp/ssh-x/agent.1",
      GPG_AGENT_SOCK: "/x",
      MY_SOCKET: "/y",
      DBUS_SESSION_BUS_ADDRESS: "unix:path=/run/user/1000/bus",
      XDG_RUNTIME_DIR: "/run/user/1000",
      SERVICE_URL: "unix:///run/svc.sock",
      SOME_PATH: w.sockets.docker,
      ORDINARY: "value",
      HOME_DIR: w.home,
    };
    const { env, dropped } = commandEnvironment({ base, sandboxed: true });
    for (const k of Object.keys(base)) {
      if (["PATH", "ORDINARY", "HOME_DIR"].includes(k)) assert.ok(k in env, `${k} kept`);
      else assert.ok(dropped.includes(k) && !(k in env), `${k} dropped`);
    }
    // Unsandboxed commands keep them (they reach the host anyway); an Env allow rule passes one.
    assert.ok("DOCKER_HOST" in commandEnvironment({ base }).env);
    const rules = w.policy(["Env(DOCKER_HOST)"]).rules().filter((r) => r.kind === "env");
    assert.ok("DOCKER_HOST" in commandEnvironment({ base, rules, sandboxed: true }).env);
    assert.equal(daemonPointer("SOME_PATH", w.sockets.docker), "its value is a socket file");
    assert.equal(daemonPointer("SOME_PATH", w.home), undefined);

    // And for real: sandboxedCommand's environment.
    const { backend } = await detectBackend();
    assert.ok(backend);
    const c = sandboxedCommand(w.policy(), "env", { cwd: w.ws, backend, baseEnv: base });
    assert.ok(!("DOCKER_HOST" in c.env) && !("XDG_RUNTIME_DIR" in c.env) && "ORDINARY" in c.env);
  } finally {
    await w.cleanup();
  }
});

Deno.test("sandbox sockets e2e: with the guard forced open, a headless session reaches no socket", async () => {
  const w = await world();
  const env = await makeCoyoteEnv();
  const attacks: Record<string, string> = {
    outside: connect(w.sockets.outside),
    docker: `${connect(w.sockets.docker)}; echo DH=$DOCKER_HOST`,
    socat: `socat -u UNIX-CONNECT:${w.sockets.docker} -; echo socat=$?`,
  };
  const server = await startModelServer({ script: commandBatch(attacks) });
  try {
    const before = w.accepted();
    const r = await runCoyote(["--headless", "--output-format", "stream-json", "go"], {
      cwd: w.ws,
      env: childEnv(env, {
        baseURL: server.baseURL,
        extra: {
          HOME: w.home,
          COYOTE_TEST_MODE: "1",
          COYOTE_TEST_GUARD: "allow",
          DOCKER_HOST: `unix://${w.sockets.docker}`,
        },
      }),
    });
    assert.equal(r.code, 0, r.stderr);
    const text = new Map<string, string>();
    for (const l of r.stdout.trim().split("\n").map((l) => JSON.parse(l))) {
      const u = l.update;
      if (u?.sessionUpdate === "tool_call_update" && u.content) {
        text.set(u.toolCallId, JSON.stringify(u.content));
      }
    }
    assert.equal(text.size, 3, r.stdout);
    for (const [id, t] of text) assert.doesNotMatch(t, /GOT HELLO/, id);
    assert.match(text.get("outside")!, /Operation not permitted/);
    assert.match(text.get("docker")!, /DH=\\n|DH=$|DH=(\\\\n)?"/);
    assert.match(text.get("socat")!, /socat=1/);
    assert.equal(w.accepted(), before);
  } finally {
    await server.close();
    await w.cleanup();
  }
});
