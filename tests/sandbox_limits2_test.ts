/**
 * Socket buffers, open files and file size of a sandboxed command (issue 16 §4, attacker pass on
 * the limits; core/policy/sandbox/limits.ts, cgroup.ts): a loopback TCP hog in the sandbox's own
 * network namespace is held at the cgroup's socket share (cgroup v1 leaves socket buffers out of
 * `memory.limit_in_bytes`), `RLIMIT_NOFILE` and `RLIMIT_FSIZE` are hard inside (root cannot raise
 * them: every capability is dropped), hitting either is a clear tool error, and node and deno
 * still start. Real bwrap and the machine's writable cgroup v1 (root in a container).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { cgroupHost } from "../core/policy/sandbox/cgroup.ts";
import { describeSandbox } from "../core/policy/sandbox/mod.ts";
import { deriveProfile } from "../core/policy/sandbox/profile.ts";
import { type SandboxLimits, tcpShareMb } from "../core/policy/sandbox/limits.ts";
import { limitsWorld } from "./support/sandbox_world.ts";

const LIMITS: SandboxLimits = {
  processes: 64,
  memoryMb: 256,
  tmpfsMb: 64,
  openFiles: 300,
  fileMb: 8,
};

/**
 * Python: `n` loopback TCP connections (large send buffers, the receiver never reads), each
 * filled until a send would block, until `capMb` is queued; prints `queued_mb=N`.
 */
const TCP_HOG = (capMb: number, n: number) =>
  `python3 -c '
import socket
cap, total, keep, chunk = ${capMb} << 20, 0, [], b"x" * 65536
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(4096)
for i in range(${n}):
    if total >= cap: break
    c = socket.socket(); c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 24)
    c.connect(l.getsockname()); s, _ = l.accept()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 24)
    c.setblocking(False); keep += [c, s]
    while total < cap:
        try: total += c.send(chunk)
        except OSError: break
print("queued_mb=%d" % (total >> 20))'`;

Deno.test("limits: TCP socket buffers of a command are held at its cgroup's socket share (v1 kmem.tcp)", async () => {
  const h = cgroupHost();
  assert.ok(h?.version === 1, "this machine has a writable cgroup v1 (root in a container)");
  const w = await limitsWorld("coyote-limits2-", LIMITS);
  try {
    // 140 connections could queue far over 512 MB here (wmem_max 4 MB, autotuned receivers);
    // the command's share is a quarter of 256 MB. A full socket waits: the command succeeds.
    const r = await w.run(TCP_HOG(512, 140));
    assert.equal(r.isError, false, r.content);
    const mb = Number(/queued_mb=(\d+)/.exec(r.content)?.[1]);
    assert.ok(
      mb <= tcpShareMb(256) * 1.5,
      `${mb} MB queued in socket buffers, share ${tcpShareMb(256)} MB:\n${r.content}`,
    );
    const next = await w.run("echo alive");
    assert.match(next.content, /alive/);
  } finally {
    await w.cleanup();
  }
});

Deno.test("limits: RLIMIT_NOFILE is hard in the sandbox (root cannot raise it) and hitting it is named", async () => {
  const w = await limitsWorld("coyote-limits2-", LIMITS);
  try {
    const r = await w.run([
      "echo hard=$(ulimit -Hn) soft=$(ulimit -Sn)",
      "ulimit -Hn 100000 && echo RAISED",
      "ulimit -Sn 100000 && echo RAISED",
      `python3 -c 'import resource as r; r.setrlimit(r.RLIMIT_NOFILE, (4096, 4096)); print("RAISED")'`,
      "echo done",
    ].join("; "));
    assert.match(r.content, /hard=300 soft=300/);
    assert.doesNotMatch(r.content, /RAISED/);
    assert.match(r.content, /done/);
    const many = await w.run(`python3 -c 'fs = [open("/dev/null") for i in range(1000)]'`);
    assert.equal(many.isError, true);
    assert.match(
      many.content,
      /^command hit the open files limit \(300 per process, RLIMIT_NOFILE; sandbox\.limits\.open_files\)/,
    );
    assert.match(many.content, /Too many open files/);
  } finally {
    await w.cleanup();
  }
});

Deno.test("limits: a file past RLIMIT_FSIZE fails with the file size message (workspace, /tmp, /dev/shm), the cap is hard", async () => {
  const w = await limitsWorld("coyote-limits2-", LIMITS);
  try {
    const cap = 8 * 1024 * 1024;
    // A program killed by SIGXFSZ (head), one that ignores it (python: EFBIG), a sparse file.
    for (
      const [dir, cmd] of [
        [w.ws, `head -c 20M /dev/zero > ${w.ws}/big`],
        ["/tmp", "dd if=/dev/zero of=/tmp/big bs=1M count=20"],
        ["/dev/shm", `python3 -c 'open("/dev/shm/big", "wb").write(b"x" * (20 << 20))'`],
        [w.ws, `truncate -s 1G ${w.ws}/big`],
      ]
    ) {
      const r = await w.run(`${cmd}; s=$?; echo size=$(stat -c %s ${dir}/big); exit $s`);
      assert.equal(r.isError, true, r.content);
      assert.match(
        r.content,
        /^command hit the file size limit \(8 MB per file, RLIMIT_FSIZE; sandbox\.limits\.file_mb\)/,
        cmd,
      );
      assert.ok(Number(/size=(\d+)/.exec(r.content)?.[1]) <= cap, r.content);
    }
    // The command as a whole killed by SIGXFSZ (the shell execs the writer), and no raising
    // (bash's `ulimit -f` counts 1024-byte blocks: 8 MB is 8192).
    const bare = await w.run(`exec head -c 20M /dev/zero > ${w.ws}/big2`);
    assert.match(bare.content, /^command hit the file size limit \(8 MB per file/, bare.content);
    assert.ok((await Deno.stat(join(w.ws, "big2"))).size <= cap);
    const raise = await w.run(
      "echo hard=$(ulimit -Hf); ulimit -f unlimited && echo RAISED; ulimit -Hf 99999999 && echo RAISED; echo done",
    );
    assert.match(raise.content, /hard=8192\b/);
    assert.doesNotMatch(raise.content, /RAISED/);
    // Under the cap: a normal write works.
    const ok = await w.run(`head -c 1M /dev/zero > ${w.ws}/small && stat -c %s ${w.ws}/small`);
    assert.equal(ok.isError, false, ok.content);
    assert.match(ok.content, /1048576/);
  } finally {
    await w.cleanup();
  }
});

Deno.test("limits: node and deno start and run under the open-files and file-size limits", async () => {
  // V8's code range needs more than 256 MB of RLIMIT_DATA (deno fails to start under 512 MB).
  const w = await limitsWorld("coyote-limits2-", { ...LIMITS, memoryMb: 2048 });
  try {
    const r = await w.run(
      `node -e 'console.log("node", require("fs").readdirSync(".").length >= 0)' && ` +
        `deno eval 'console.log("deno", Deno.build.os)' && ulimit -Hn && ulimit -Hf`,
    );
    assert.equal(r.isError, false, r.content);
    assert.match(r.content, /node true\ndeno linux\n300\n8192/);
  } finally {
    await w.cleanup();
  }
});

Deno.test("limits: policy show names the socket share, open files and file size", async () => {
  const w = await limitsWorld("coyote-limits2-", LIMITS);
  try {
    const text = describeSandbox(deriveProfile(w.policy), w.sb.status);
    assert.match(
      text,
      /socket buffers 64 MB for the tree's TCP\/UDP \(memory\.kmem\.tcp\.limit_in_bytes/,
    );
    assert.match(text, /open files 300 per process \(RLIMIT_NOFILE, hard\)/);
    assert.match(text, /file size 8 MB per file \(RLIMIT_FSIZE, hard; the total written/);
  } finally {
    await w.cleanup();
  }
});
