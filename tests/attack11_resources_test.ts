/**
 * Eleventh attacker pass (issue 16), class 4 (resources), fixed (report: /work/notes/attack11.md
 * items 3 and 6):
 *
 * - a deep chain of folders made by a command stalled Coyote on the host: the checkpoint watcher
 *   laid one inotify watch per folder in one synchronous `Deno.watchFs` call whose cost grows with
 *   the square of each folder's depth (core/session/checkpoints/watch.ts now watches folders to a
 *   bounded depth and cost and scans the rest whole at every checkpoint);
 * - the after-command quarantine copied a hard-linked file once per new dot-folder when the data
 *   dir is on another file system (core/policy/sandbox/quarantine.ts now keeps one byte/entry
 *   budget and one set of copied inodes per command).
 *
 * Real bwrap, headless main.ts subprocesses with a scripted model (tests/support/headless_attack.ts).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { detectBackend } from "../core/policy/sandbox/mod.ts";
import { headlessTurns } from "./support/headless_attack.ts";

const dec = new TextDecoder();
const ON = !!(await detectBackend()).backend;
const opts = { sanitizeOps: false, sanitizeResources: false };

async function sh(cmd: string, cwd?: string): Promise<string> {
  const o = await new Deno.Command("bash", { args: ["-c", cmd], cwd }).output();
  return dec.decode(o.stdout) + dec.decode(o.stderr);
}
const exists = (p: string) => Deno.lstat(p).then(() => true, () => false);

/** A root in /var/tmp with `home` and `ws` (a git repository with folders `v0`…`v9`). */
async function world(setup = "") {
  const root = await Deno.realPath(
    await Deno.makeTempDir({ dir: "/var/tmp", prefix: "coyote-a11r-" }),
  );
  const home = join(root, "home"), ws = join(root, "ws");
  await sh(
    `set -e; mkdir -p ${home}/.cache ${ws}
cd ${ws}; git init -q; git -c user.name=a -c user.email=a@a commit -q --allow-empty -m init
for i in 0 1 2 3 4 5 6 7 8 9; do mkdir -p v$i; echo x > v$i/f; done`,
  );
  if (setup) await sh(setup, ws);
  return {
    root,
    home,
    ws,
    cleanup: async () => {
      await sh(`chmod -R u+rwx '${root}'`);
      await Deno.remove(root, { recursive: true });
    },
  };
}

/** One headless run, one turn per command (ids c0, c1, …), HOME = the world's. */
async function run(
  w: { home: string; ws: string },
  cmds: ({ command: string } | { name: string; args: Record<string, unknown> })[],
  flags: string[] = [],
  env: Record<string, string> = {},
) {
  const turns = cmds.map((c, i) => [{ id: `c${i}`, ...c }]);
  return await headlessTurns(w.ws, turns, flags, { extra: { HOME: w.home, ...env } });
}

Deno.test("the sandbox backend is there (these tests need real bwrap)", () => {
  assert.ok(ON, "no sandbox backend (bwrap)");
});

Deno.test(
  "attack11 class 4: a deep chain of folders (1800 levels, 1800 mkdirs) does not stall Coyote on the host (the checkpoint watcher's synchronous Deno.watchFs)",
  opts,
  async () => {
    // Depth 1000 took 13 s of Coyote's own time, 2200 more than the 120 s the run is given
    // (super-linear in depth): a trivially small command that stalled the session on the host.
    const w = await world();
    try {
      const t0 = Date.now();
      const r = await run(w, [
        { command: "cd v0; for i in $(seq 1 1800); do mkdir a; cd a; done; echo made" },
        { command: "echo second" },
      ]);
      const s = (Date.now() - t0) / 1000;
      console.log(`deep chain run: ${s.toFixed(1)} s`);
      assert.match(r.result("c1"), /second/);
      assert.ok(s < 20, `the run took ${s.toFixed(0)} s`);
    } finally {
      await w.cleanup();
    }
  },
);

const ROOT = Deno.uid() === 0;

Deno.test(
  "attack11 class 4: a data dir on another file system (tmpfs, as root): many new dot-folders sharing one hard-linked file are not copied once each",
  opts,
  async () => {
    assert.ok(ROOT, "mounting the tmpfs needs root (a container's root will do)");
    const w = await world();
    const mnt = join(w.root, "mnt");
    await Deno.mkdir(mnt);
    const mounted = (await new Deno.Command("mount", {
      args: ["-t", "tmpfs", "-o", "size=1g", "tmpfs", mnt],
      stderr: "null",
    }).output()).success;
    try {
      assert.ok(mounted, "mount a tmpfs (root)");
      // 10 MB written by the command; 30 more dot-folders each hold a hard link to it. Each is
      // under the per-entry cap, so each was copied whole (296 MB).
      const r = await run(
        w,
        [{
          command:
            "mkdir .q0 && head -c 10000000 /dev/urandom > .q0/a && for i in $(seq 1 30); do mkdir .q$i && ln .q0/a .q$i/a; done; echo made",
        }],
        [],
        { COYOTE_DATA_DIR: join(mnt, "data") },
      );
      const out = r.result("c0");
      assert.match(out, /made/, out);
      const mb = Number((await sh(`du -sm '${mnt}' | cut -f1`)).trim());
      assert.ok(mb < 40, `the quarantine wrote ${mb} MB for a 10 MB command`);
      for (let i = 0; i <= 30; i++) {
        assert.equal(await exists(join(w.ws, `.q${i}`)), false, `.q${i} is taken out`);
      }
      // Kept, not deleted: every entry is in the quarantine, the links as one inode.
      const q = (await sh(`ls -d '${mnt}'/data/quarantine/*/`)).trim();
      const inodes = new Set<number>();
      for (let i = 0; i <= 30; i++) {
        const st = await Deno.stat(join(q, `.q${i}`, "a"));
        assert.equal(st.size, 10_000_000);
        inodes.add(st.ino!);
      }
      assert.equal(inodes.size, 1, "one copy, linked");
    } finally {
      if (mounted) await sh(`umount '${mnt}'`);
      await w.cleanup();
    }
  },
);

Deno.test(
  "attack11 class 4: past one command's copy budget (tmpfs data dir) the remaining dot-folders are deleted, not copied, and the result says so",
  opts,
  async () => {
    assert.ok(ROOT, "mounting the tmpfs needs root (a container's root will do)");
    const w = await world();
    const mnt = join(w.root, "mnt");
    await Deno.mkdir(mnt);
    const mounted = (await new Deno.Command("mount", {
      args: ["-t", "tmpfs", "-o", "size=1g", "tmpfs", mnt],
      stderr: "null",
    }).output()).success;
    try {
      assert.ok(mounted, "mount a tmpfs (root)");
      await Deno.mkdir(join(mnt, "tmp"));
      // Six dot-folders of 60 MB each (sparse: no disk used by the command), distinct files:
      // each is under the 256 MiB per-entry cap, all together are not.
      const r = await run(
        w,
        [{
          command: "for i in 1 2 3 4 5 6; do mkdir .b$i && truncate -s 60M .b$i/x; done; echo made",
        }],
        [],
        // The private temp dir the quarantine falls back to on the tmpfs too: a copy as well.
        { COYOTE_DATA_DIR: join(mnt, "data"), TMPDIR: join(mnt, "tmp") },
      );
      const out = r.result("c0");
      assert.match(out, /made/, out);
      const mb = Number((await sh(`du -sm '${mnt}' | cut -f1`)).trim());
      assert.ok(mb <= 257, `the quarantine wrote ${mb} MB`);
      for (let i = 1; i <= 6; i++) {
        assert.equal(await exists(join(w.ws, `.b${i}`)), false, `.b${i} is taken out`);
      }
      assert.match(out, /this command's quarantine copies together[^"]*deleted instead/, out);
      const kept = (await sh(`ls -d '${mnt}'/data/quarantine/*/.b* | wc -l`)).trim();
      assert.equal(kept, "4", out);
    } finally {
      if (mounted) await sh(`umount '${mnt}'`);
      await w.cleanup();
    }
  },
);
