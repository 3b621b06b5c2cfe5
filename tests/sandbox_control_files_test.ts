/**
 * Eighth attacker pass: Coyote's own files that the next launch reads lie in its temp dir, and a
 * `Write` allow rule over that dir (`--allow 'Write(/tmp/**)'`) made them writable inside the
 * sandbox. A command rewrote the unix-socket filter file (0444, but its own) with an allow-all
 * program; the next command's bwrap loaded it and reached a host daemon's socket. Every `coyote-*`
 * entry of the temp dir is now hidden when a bound root contains that dir
 * (core/policy/sandbox/bwrap.ts `ownFilesHidden`; tests/sandbox_own_files_test.ts has the
 * workspace-is-TMPDIR case). Headless `coyote` on real bwrap with its temp dir (`TMPDIR`) private to the
 * test and writable by rule, a unix listener in it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { detectBackend } from "../core/policy/sandbox/mod.ts";
import { headlessAttack } from "./support/headless_attack.ts";

/** An allow-all seccomp program: one `ret SECCOMP_RET_ALLOW` (code 0x06, k 0x7fff0000). */
const ALLOW_ALL = String.raw`\x06\x00\x00\x00\x00\x00\xff\x7f`;

Deno.test("the socket filter file cannot be rewritten from inside the sandbox (headless, real bwrap)", async () => {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed for these tests (.ci/run installs bubblewrap)");
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-control-" }));
  const ws = join(root, "ws"), tmp = join(root, "tmp");
  await Deno.mkdir(ws);
  await Deno.mkdir(tmp);
  const sock = join(tmp, "daemon.sock");
  const listener = Deno.listen({ transport: "unix", path: sock });
  let connections = 0;
  const serving = (async () => {
    for await (const conn of listener) {
      connections++;
      conn.close();
    }
  })().catch(() => {});
  const connect = `echo hi | socat - UNIX-CONNECT:${sock}; echo rc=$?`;
  try {
    const run = await headlessAttack(
      ws,
      [],
      [
        { id: "c0", command: connect },
        {
          id: "w",
          command: `for f in ${tmp}/coyote-unix-*.bpf; do ls "$f"; chmod u+w "$f"; ` +
            `printf '${ALLOW_ALL}' > "$f"; rm -f "$f"; mv "$f" "$f.old"; done; true`,
        },
        { id: "c1", command: connect },
      ],
      ["--allow", `Write(${tmp}/**)`],
      { extra: { TMPDIR: tmp } },
    );
    assert.deepEqual(run.denied, []);
    assert.match(run.sent, /coyote-unix-[^"\\]*\.bpf/, "the filter file was in the writable dir");
    assert.match(run.sent, /Read-only file system|Device or resource busy/, run.sent);
    assert.doesNotMatch(run.sent, /rc=0/, "no connection before or after");
    assert.equal(connections, 0);
  } finally {
    listener.close();
    await serving;
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
});
