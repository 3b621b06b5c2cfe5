/**
 * Issue 16 (leak pass, left open there): Coyote keeps the files a command's sandbox is built from
 * in the host temp dir — the seccomp filter bwrap reads, the mount plans, the empty and masked
 * copies — and a workspace that contains that dir (`cd /tmp && coyote`, a root of `/`) showed them
 * to commands, writable: one command could rewrite the next one's seccomp filter. Now every
 * `coyote-*` entry of the temp dir is hidden when a bound root contains it (core/policy/sandbox/
 * bwrap.ts `ownFilesHidden`). Driven headless on real bwrap with TMPDIR as the workspace.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { detectBackend } from "../core/policy/sandbox/mod.ts";
import { ownFilesHidden } from "../core/policy/sandbox/bwrap.ts";
import { headlessTurns } from "./support/headless_attack.ts";

Deno.test("sandbox: with the temp dir inside the workspace, Coyote's own files there are hidden and cannot be rewritten", async () => {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed for these tests (.ci/run installs bubblewrap)");
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "ws-own-files-" }));
  const probe = [
    'for f in coyote-*; do printf \'%s=\' "$f"; if [ -d "$f" ]; then ls -A "$f" | wc -l; else wc -c < "$f"; fi; done',
    'for f in coyote-unix-*; do echo pwned > "$f" 2>/dev/null; cat "$f"; done',
    "echo probe-done",
  ].join("; ");
  try {
    const { result } = await headlessTurns(
      ws,
      [
        [{ id: "c1", command: "true" }],
        [{ id: "c2", command: probe }],
        // The next command's sandbox is built from the same filter file: it still starts.
        [{ id: "c3", command: "echo third-ok" }],
      ],
      [],
      { extra: { TMPDIR: ws } },
    );
    const sent = result("c2");
    assert.match(sent, /probe-done/, "the probe ran");
    assert.doesNotMatch(sent, /pwned/, "what a command writes there is not what the host holds");
    assert.match(result("c3"), /third-ok/, "the next command's seccomp filter was not rewritten");
    // Every own entry is unreadable (files: /dev/null on a nodev mount) or empty (folders).
    assert.match(sent, /coyote-unix-[\w.-]+\.bpf/, `the filter file lies in TMPDIR: ${sent}`);
    assert.doesNotMatch(sent, /coyote-[\w.-]+=\s*[1-9]/, `no own entry shows its content: ${sent}`);
  } finally {
    await Deno.remove(ws, { recursive: true }).catch(() => {});
  }
});

Deno.test("ownFilesHidden: nothing unless a root contains the temp dir; an entry holding a root stays", async () => {
  const tmp = await Deno.realPath(await Deno.makeTempDir({ prefix: "tmpdir-own-" }));
  // The temp dir is passed, not set in TMPDIR: the variable is process-wide, and a test module
  // running beside this one (limits) made its world inside `tmp` and lost it to the cleanup below.
  try {
    await Deno.mkdir(join(tmp, "coyote-plan-x"));
    await Deno.writeTextFile(join(tmp, "coyote-unix-1.bpf"), "x");
    await Deno.mkdir(join(tmp, "coyote-ws"));
    await Deno.writeTextFile(join(tmp, "other"), "x");
    assert.deepEqual(ownFilesHidden(["/elsewhere"], [], tmp), []);
    const m = ownFilesHidden([tmp, join(tmp, "coyote-ws", "project")], [], tmp);
    const paths = m.map((x) => x.path).sort();
    assert.deepEqual(paths, [join(tmp, "coyote-plan-x"), join(tmp, "coyote-unix-1.bpf")]);
    assert.ok(!paths.includes(join(tmp, "coyote-ws")) && !paths.includes(join(tmp, "other")));
    const file = m.find((x) => x.path.endsWith(".bpf"))!;
    assert.deepEqual(file.args, ["--ro-bind", "/dev/null", file.path]);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
