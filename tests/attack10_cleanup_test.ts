/**
 * Tenth attacker pass, findings 2, 5, 6 and 8 (part), closed (report: /work/notes/attack10.md):
 *
 * - **2**: every git config the sandbox's scans meet — nested repositories' `.git/config`,
 *   embedded bare repositories, submodules' git dirs (`.git/modules/<name>/config`, names with a
 *   slash too), repositories under `node_modules` — and Mercurial's `.hg/hgrc` / Jujutsu's
 *   `.jj/repo/config.toml` are shown to commands with their credential lines masked, and `fs_read`
 *   asks about (denies headless) the same files (core/policy/sandbox/profile.ts,
 *   core/policy/sandbox/git_dir_tree.ts, core/policy/paths.ts `maskedRead`);
 * - **5**: a quarantine copy across file systems keeps hard links and refuses past its cap
 *   (core/policy/sandbox/quarantine.ts `copyBounded`);
 * - **6**: a quarantine that cannot move an entry falls back to a private temp dir, then deletes
 *   it, then makes it inert, and says so — never "changed";
 * - **8**: build files editors evaluate on open (`Package.swift`, `mix.exs`, `*.csproj`, …) are
 *   flagged like `build.gradle` (core/policy/sandbox/host_run.ts).
 *
 * Real bwrap, headless main.ts subprocesses with a scripted model (default settings, and the
 * guard forced open: `COYOTE_TEST_GUARD=allow`), real git repositories.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { headlessTurns } from "./support/headless_attack.ts";
import { attackRoot, exists, sh } from "./support/sandbox_world.ts";
import { detectBackend } from "../core/policy/sandbox/mod.ts";
import {
  copyBounded,
  copyCost,
  quarantine,
  QUARANTINE_COPY_MAX_BYTES,
} from "../core/policy/sandbox/quarantine.ts";
import { hostRunFile } from "../core/policy/sandbox/host_run.ts";

const dec = new TextDecoder();
const ON = !!(await detectBackend()).backend;
const ROOT = Deno.uid() === 0;
const FORCED = { COYOTE_TEST_MODE: "1", COYOTE_TEST_GUARD: "allow" };

/** A temp root with `home` and `ws` (a git repository set up by `setup`). */
function world(setup = "") {
  return attackRoot("coyote-a10c-", (home, ws) =>
    `mkdir -p ${home}/.cache
cd ${ws}; git init -q; git -c user.name=a -c user.email=a@a commit -q --allow-empty -m init
${setup}`);
}

async function run(
  w: { home: string; ws: string },
  cmds: ({ command: string } | { name: string; args: Record<string, unknown> })[],
  env: Record<string, string> = {},
) {
  const turns = cmds.map((c, i) => [{ id: `c${i}`, ...c }]);
  const r = await headlessTurns(w.ws, turns, [], { extra: { HOME: w.home, ...env } });
  return { ...r, denied: new Set(r.out.denied.map((d) => d.toolCallId)) };
}

const opts = { ignore: !ON, sanitizeOps: false, sanitizeResources: false };

// Finding 2 ------------------------------------------------------------------------------------

const NESTED = [
  // [path, token, setup]
  [
    "vendor/lib/.git/config",
    "ghp_NESTEDTOKENabc123XYZ",
    "mkdir -p vendor/lib && git -C vendor/lib init -q && git -C vendor/lib remote add origin https://ghp_NESTEDTOKENabc123XYZ@github.com/x/y",
  ],
  [
    "node_modules/dep/.git/config",
    "ghp_NMTOKEN1234567890abcd",
    "mkdir -p node_modules/dep && git -C node_modules/dep init -q && git -C node_modules/dep remote add origin https://x:ghp_NMTOKEN1234567890abcd@github.com/a/b",
  ],
  [
    ".git/modules/sub/config",
    "glpat-SUBMODTOKEN12345",
    `mkdir -p .git/modules/sub && printf '[core]\\n\\tbare = false\\n[remote "origin"]\\n\\turl = https://oauth2:glpat-SUBMODTOKEN12345@gitlab.com/x/sub.git\\n' > .git/modules/sub/config`,
  ],
  [
    ".git/modules/grp/inner/config",
    "glpat-SLASHNAMETOKEN987",
    `mkdir -p .git/modules/grp/inner && printf '[remote "origin"]\\n\\turl = https://oauth2:glpat-SLASHNAMETOKEN987@gitlab.com/x/i.git\\n' > .git/modules/grp/inner/config`,
  ],
  [
    "tools/bare.git/config",
    "ghp_BARETOKEN0987654321zz",
    "git init -q --bare tools/bare.git && git -C tools/bare.git remote add origin https://u:ghp_BARETOKEN0987654321zz@github.com/b/b",
  ],
  [
    "hgrepo/.hg/hgrc",
    "HgPassw0rdSecret",
    `mkdir -p hgrepo/.hg && printf '[paths]\\ndefault = https://vic:HgPassw0rdSecret@hg.example.com/r\\n[auth]\\nx.prefix = hg.example.com\\nx.username = vic\\nx.password = HgPassw0rdSecret\\n' > hgrepo/.hg/hgrc`,
  ],
  [
    "jjrepo/.jj/repo/config.toml",
    "ghp_JJTOKEN11223344556677",
    `mkdir -p jjrepo/.jj/repo && printf '[git]\\nfetch = "origin"\\n[remote]\\nurl = "https://x:ghp_JJTOKEN11223344556677@github.com/j/j"\\n' > jjrepo/.jj/repo/config.toml`,
  ],
] as const;

for (const forced of [false, true]) {
  Deno.test(
    `attack10 cleanup: every VCS config the scans meet is masked for commands${
      forced ? " (guard forced open)" : "; fs_read asks about the same files"
    }`,
    opts,
    async () => {
      const w = await world(NESTED.map(([, , s]) => s).join("\n"));
      try {
        const cmds = NESTED.map(([p]) => ({ command: `cat ${p}` }));
        const reads = NESTED.map(([p]) => ({ name: "fs_read", args: { path: p } }));
        const r = await run(
          w,
          [...cmds, { command: "git -C vendor/lib remote -v" }, ...(forced ? [] : reads)],
          forced ? FORCED : {},
        );
        NESTED.forEach(([p, token], i) => {
          const out = r.result(`c${i}`);
          assert.ok(!out.includes(token), `${p} shown unmasked: ${out}`);
          assert.match(out, /exit code 0/, `${p} is still readable: ${out}`);
          if (!forced) {
            const id = `c${NESTED.length + 1 + i}`;
            assert.ok(r.denied.has(id), `fs_read ${p} not asked about: ${r.result(id)}`);
          }
        });
        // git still reads the masked config: the remote without its token.
        const remote = r.result(`c${NESTED.length}`);
        assert.match(remote, /origin\\thttps:\/\/github\.com\/x\/y \(fetch\)/, remote);
        assert.ok(!r.sent.includes("NESTEDTOKEN") && !r.sent.includes("HgPassw0rd"), r.sent);
      } finally {
        await w.cleanup();
      }
    },
  );
}

/** {@link quarantine} in a fresh process (its temp dir is cached per process) with `TMPDIR`. */
function quarantineIn(tmpdir: string, p: string, ws: string, data: string, id: string): string {
  const mod = new URL("../core/policy/sandbox/quarantine.ts", import.meta.url);
  const a = [p, ws, data, id].map((x) => JSON.stringify(x)).join(", ");
  const r = new Deno.Command(Deno.execPath(), {
    args: ["eval", `import { quarantine } from "${mod}"; console.log(quarantine(${a}));`],
    env: { TMPDIR: tmpdir },
  }).outputSync();
  return (dec.decode(r.stdout) + dec.decode(r.stderr)).trim();
}

// Finding 5 ------------------------------------------------------------------------------------

/** A workspace folder on the disk and a data folder on /dev/shm (another file system). */
function twoFileSystems() {
  const fsOf = (p: string) =>
    dec.decode(new Deno.Command("stat", { args: ["-f", "-c", "%d:%T", p] }).outputSync().stdout)
      .trim();
  const dir = fsOf("/tmp") === fsOf("/dev/shm") ? Deno.cwd() : "/tmp";
  const ws = Deno.makeTempDirSync({ dir, prefix: ".coyote-a10c-ws-" });
  const data = Deno.makeTempDirSync({ dir: "/dev/shm", prefix: "coyote-a10c-data-" });
  assert.notEqual(fsOf(ws), fsOf(data), "the test needs two file systems (disk and /dev/shm)");
  return {
    ws,
    data,
    cleanup: () => {
      Deno.removeSync(ws, { recursive: true });
      Deno.removeSync(data, { recursive: true });
    },
  };
}

const duMb = (p: string) =>
  Number(
    dec.decode(
      new Deno.Command("du", { args: ["-s", "--block-size=1M", p] }).outputSync().stdout,
    ).split("\t")[0],
  );

Deno.test("attack10 cleanup: a quarantine copy across file systems keeps hard links as links (10 MB × 101 links writes 10 MB)", () => {
  const t = twoFileSystems();
  try {
    Deno.mkdirSync(`${t.ws}/.q`);
    new Deno.Command("bash", {
      args: [
        "-c",
        `cd '${t.ws}/.q' && head -c 10000000 /dev/urandom > a && for i in $(seq 1 100); do ln a l$i; done`,
      ],
    }).outputSync();
    assert.equal(copyCost(`${t.ws}/.q`, true).bytes, 10_000_000, "each inode counted once");
    assert.ok(copyCost(`${t.ws}/.q`, false).bytes > QUARANTINE_COPY_MAX_BYTES, "BSD cp: each link");
    const to = quarantine(`${t.ws}/.q`, t.ws, t.data, "q1");
    assert.equal(to, `${t.data}/quarantine/q1/.q`);
    assert.ok(duMb(t.data) < 20, `the quarantine wrote ${duMb(t.data)} MB for 10 MB`);
    assert.equal(Deno.statSync(`${to}/l7`).ino, Deno.statSync(`${to}/a`).ino, "links kept");
    assert.equal(Deno.statSync(`${to}/a`).size, 10_000_000);
    assert.throws(() => Deno.lstatSync(`${t.ws}/.q`), Deno.errors.NotFound);
  } finally {
    t.cleanup();
  }
});

Deno.test("attack10 cleanup: past the cap a quarantine copy writes nothing; the entry is deleted and the result says so", () => {
  const t = twoFileSystems();
  try {
    Deno.mkdirSync(`${t.ws}/.big`);
    // Sparse: 300 MiB apparent size, no disk used.
    const f = Deno.openSync(`${t.ws}/.big/x`, { write: true, create: true });
    f.truncateSync(QUARANTINE_COPY_MAX_BYTES + (44 << 20));
    f.close();
    assert.throws(
      () => copyBounded(`${t.ws}/.big`, `${t.data}/direct`),
      /would write more than 256 MiB/,
    );
    assert.throws(() => Deno.lstatSync(`${t.data}/direct`), Deno.errors.NotFound);
    // The private temp dir fallback: on the workspace's file system it would rename; force a
    // cross-device one by pointing TMPDIR at /dev/shm (in a subprocess: the temp dir is cached).
    const out = quarantineIn(t.data, `${t.ws}/.big`, t.ws, t.data, "q2");
    assert.match(out, /not quarantined: .*would write more than 256 MiB.*; deleted instead/, out);
    assert.throws(() => Deno.lstatSync(`${t.ws}/.big`), Deno.errors.NotFound);
    assert.ok(duMb(t.data) < 5, `wrote ${duMb(t.data)} MB`);
  } finally {
    t.cleanup();
  }
});

for (const forced of [false, true]) {
  Deno.test(
    `attack10 cleanup: headless, a data dir on another file system (tmpfs, as root) gets one copy of a hard-linked file${
      forced ? " (guard forced open)" : ""
    }`,
    { ...opts, ignore: !ON || !ROOT },
    async () => {
      const w = await world();
      const mnt = join(w.root, "mnt");
      await Deno.mkdir(mnt);
      const mounted = (await new Deno.Command("mount", {
        args: ["-t", "tmpfs", "-o", "size=2g", "tmpfs", mnt],
        stderr: "null",
      }).output()).success;
      try {
        assert.ok(mounted, "mount a tmpfs (root)");
        const r = await run(w, [{
          command:
            "mkdir .q && head -c 10000000 /dev/urandom > .q/a && for i in $(seq 1 100); do ln .q/a .q/l$i; done",
        }], { COYOTE_DATA_DIR: join(mnt, "data"), ...(forced ? FORCED : {}) });
        const out = r.result("c0");
        assert.match(out, new RegExp(`\\.q → ${mnt}/data/quarantine/`), out);
        assert.ok(duMb(mnt) < 20, `the quarantine wrote ${duMb(mnt)} MB for a 10 MB command`);
        assert.equal(await exists(join(w.ws, ".q")), false);
      } finally {
        if (mounted) await sh(`umount '${mnt}'`);
        await w.cleanup();
      }
    },
  );
}

// Finding 6 ------------------------------------------------------------------------------------

for (const forced of [false, true]) {
  Deno.test(
    `attack10 cleanup: headless, a data dir Coyote may not write (/dev/shm): the new dot-folder is still taken out and the result says where${
      forced ? " (guard forced open)" : ""
    }`,
    opts,
    async () => {
      const w = await world();
      const data = await Deno.makeTempDir({ dir: "/dev/shm", prefix: "a10c-data-" });
      try {
        const r = await run(w, [{
          command: "mkdir -p .github/workflows && echo 'on: push' > .github/workflows/x.yml",
        }], { COYOTE_DATA_DIR: data, ...(forced ? FORCED : {}) });
        const out = r.result("c0");
        assert.equal(await exists(join(w.ws, ".github")), false, `kept: ${out}`);
        assert.doesNotMatch(out, /changed \(kept/, out);
        // Moved to the private temp dir (the data dir refused), or deleted: named either way.
        assert.match(
          out,
          /\.github → (\/\S*coyote-quarantine-\S*\/\.github|\(not quarantined)/,
          out,
        );
      } finally {
        await Deno.remove(data, { recursive: true }).catch(() => {});
        await w.cleanup();
      }
    },
  );
}

Deno.test("attack10 cleanup: when no quarantine folder can be written the entry is deleted, and said so", () => {
  const ws = Deno.makeTempDirSync({ prefix: "coyote-a10c-q-" });
  try {
    Deno.mkdirSync(`${ws}/.github/workflows`, { recursive: true });
    Deno.writeTextFileSync(`${ws}/.github/workflows/x.yml`, "on: push\n");
    // A data dir below a file (ENOTDIR) and no temp dir (TMPDIR missing): in a subprocess, as
    // the temp dir is cached per process.
    const out = quarantineIn(`${ws}/no-such-dir`, `${ws}/.github`, ws, "/dev/null/data", "q3");
    assert.match(out, /^\(not quarantined: .*; deleted instead\)/, out);
    assert.throws(() => Deno.lstatSync(`${ws}/.github`), Deno.errors.NotFound);
  } finally {
    Deno.removeSync(ws, { recursive: true });
  }
});

Deno.test(
  "attack10 cleanup: an entry that can be neither moved nor deleted (a mount point inside, as root) is made inert in place",
  { ignore: !ROOT },
  async () => {
    const ws = await Deno.makeTempDir({ prefix: "coyote-a10c-inert-" });
    const m = join(ws, ".envrc.d", "m");
    await Deno.mkdir(m, { recursive: true });
    await Deno.writeTextFile(join(ws, ".envrc.d", "run.sh"), "id\n");
    const mounted =
      (await new Deno.Command("mount", { args: ["-t", "tmpfs", "tmpfs", m], stderr: "null" })
        .output()).success;
    try {
      assert.ok(mounted);
      // Neither folder writable (no temp dir either), and rm fails on the mount point (EBUSY).
      const to = quarantineIn(
        join(ws, "none"),
        join(ws, ".envrc.d"),
        ws,
        "/dev/null/d",
        "x-inert123",
      );
      assert.match(
        to,
        /^\(not quarantined: .*renamed to .*\.envrc\.d\.coyote-blocked-inert123, mode 000\)$/,
      );
      assert.equal(await exists(join(ws, ".envrc.d")), false, to);
      const st = await Deno.lstat(join(ws, ".envrc.d.coyote-blocked-inert123"));
      assert.equal((st.mode ?? 1) & 0o777, 0, "mode 000");
    } finally {
      await sh(`umount -l '${ws}'/.envrc.d*/m 2>/dev/null; chmod -R u+rwx '${ws}'`);
      await Deno.remove(ws, { recursive: true });
    }
  },
);

// Finding 8 ------------------------------------------------------------------------------------

const EDITOR_BUILD = [
  "Package.swift",
  "mix.exs",
  "app.csproj",
  "lib/x.fsproj",
  "v.vbproj",
  "build.sbt",
  "project/plugins.sbt",
  "meson.build",
  "build.zig",
  "pkg.cabal",
  "cabal.project",
  "stack.yaml",
  "dune-project",
  "Makefile.PL",
  "Build.PL",
  "rebar.config",
  "Directory.Packages.props",
  "global.json",
];

Deno.test("attack10 cleanup: editors' build files are host-run names (any case; project files by their ending)", () => {
  for (const f of EDITOR_BUILD) {
    const name = f.slice(f.lastIndexOf("/") + 1);
    assert.equal(hostRunFile(name, false, false), "r", name);
    assert.equal(hostRunFile(name.toUpperCase(), false, false), "r", name.toUpperCase());
  }
  for (const n of ["csproj", ".csproj.txt", "notes.md", "README"]) {
    assert.notEqual(hostRunFile(n, false, false), "r", n);
  }
});

for (const forced of [false, true]) {
  Deno.test(
    `attack10 cleanup: headless, build files editors evaluate on open are flagged like build.gradle${
      forced ? " (guard forced open)" : ""
    }`,
    opts,
    async () => {
      const w = await world();
      try {
        const r = await run(w, [{
          command: `mkdir -p lib project && for f in ${
            EDITOR_BUILD.join(" ")
          } build.gradle; do echo x > $f; done`,
        }], forced ? FORCED : {});
        const out = r.result("c0");
        assert.match(out, /build\.gradle/, out);
        for (const f of EDITOR_BUILD) assert.ok(out.includes(f), `${f} not flagged: ${out}`);
        for (const f of EDITOR_BUILD) assert.ok(await exists(join(w.ws, f)), `${f} kept`);
      } finally {
        await w.cleanup();
      }
    },
  );
}

Deno.test(
  "attack10 cleanup: replaced build output a tool runs as it is (cargo target/ under CACHEDIR.TAG) is flagged, also in a new target/",
  opts,
  async () => {
    const w = await world(
      `mkdir -p target/debug/build/x-1 target/x86_64-unknown-linux-gnu/release && echo 'Signature: 8a477f597d28d172789f06886806bc55' > target/CACHEDIR.TAG && printf '#!/bin/sh\\necho ok\\n' > target/debug/build/x-1/build-script-build && printf '#!/bin/sh\\necho app\\n' > target/debug/app && chmod +x target/debug/app target/debug/build/x-1/build-script-build`,
    );
    try {
      const r = await run(w, [
        {
          command:
            "printf '#!/bin/sh\\nid > /tmp/pwned\\n' | tee target/debug/build/x-1/build-script-build > target/debug/app; printf x > target/debug/notes.txt; printf '#!/bin/sh\\n' > target/x86_64-unknown-linux-gnu/release/tool; chmod +x target/x86_64-unknown-linux-gnu/release/tool",
        },
        {
          command:
            "mkdir -p out2/release && echo 'Signature: 8a477f597d28d172789f06886806bc55' > out2/CACHEDIR.TAG && printf '#!/bin/sh\\n' > out2/release/app && chmod +x out2/release/app",
        },
      ]);
      const c0 = r.result("c0");
      for (const f of ["build-script-build", "target/debug/app", "release/tool"]) {
        assert.ok(c0.includes(f), `${f} not flagged: ${c0}`);
      }
      assert.ok(!c0.includes("notes.txt"), "a file that is not executable is not named");
      assert.match(r.result("c1"), /out2\/release\/app/);
      assert.ok(await exists(join(w.ws, "target/debug/app")), "kept");
    } finally {
      await w.cleanup();
    }
  },
);
