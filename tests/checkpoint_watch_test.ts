/**
 * The checkpoint store's change detector (core/session/checkpoints/watch.ts, issue 18) on real
 * git repositories with real inotify watches: once the store watches, a checkpoint stages only the
 * paths that changed — an edit by the user between turns, a sandboxed command's writes (real
 * bwrap), renames (of a file and of a folder), deletions, new folders and edits inside them — and
 * every such checkpoint restores byte for byte; ignored files stay out; and on doubt (a changed
 * `.gitignore` or `.git/info/exclude`, dropped events, no watcher) the whole tree is rescanned.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CheckpointSkipped, CheckpointStore } from "../core/session/checkpoints/store.ts";
import { detectBackend, sandboxedCommand } from "../core/policy/sandbox/mod.ts";
import { Policy } from "../core/policy/policy.ts";
import { changingTurn, makeRepo, snapshot } from "./support/rewind_scene.ts";
import { startModelServer } from "./support/model_server.ts";
import { finishAcp, startAcp } from "./support/acp_harness.ts";

/** The workspace is `snap` byte for byte (every file but `.git/`, its bytes and executable bits). */
async function assertRestored(ws: string, snap: Record<string, string>): Promise<void> {
  assert.deepEqual(await snapshot(ws), snap);
}

/** A watched store of a fresh repository (first checkpoint taken, watches and baseline done). */
async function watched(prepare?: (ws: string) => Promise<void>) {
  const ws = await makeRepo("coyote-cpw-");
  await prepare?.(ws);
  const data = await Deno.makeTempDir({ prefix: "coyote-cpw-data-" });
  const store = await CheckpointStore.open(data, ws);
  const first = await store.create("first");
  const t0 = performance.now();
  await store.watch();
  const watchMs = performance.now() - t0;
  assert.equal(store.watchError, null);
  return {
    ws,
    store,
    first,
    watchMs,
    async cleanup() {
      await store.close();
      await Deno.remove(ws, { recursive: true });
      await Deno.remove(data, { recursive: true });
    },
  };
}

const read = (ws: string, p: string) => Deno.readTextFile(join(ws, p));
const exists = (ws: string, p: string) => Deno.lstat(join(ws, p)).then(() => true, () => false);

Deno.test("watch: an edit by the user between turns is staged alone (no rescan) and rewinds byte for byte", async () => {
  const w = await watched();
  try {
    const before = await snapshot(w.ws);
    // Nothing changed: the previous tree, the same checkpoint, no git run.
    assert.equal(await w.store.create("unchanged"), w.first);
    assert.deepEqual(w.store.lastStage, { how: "none", paths: 0 });
    await Deno.writeTextFile(join(w.ws, "README.md"), "# edited by the user\n");
    const second = await w.store.create("second");
    assert.deepEqual(w.store.lastStage, { how: "changed", paths: 1 });
    assert.notEqual(second, w.first);
    const edited = await snapshot(w.ws);
    await w.store.restore(w.first, "back");
    await assertRestored(w.ws, before);
    await w.store.restore(second, "forth");
    await assertRestored(w.ws, edited);
    // Names git quotes (a quote, a newline, a tab, non-ASCII) and pathspec magic (`*`, `:`).
    await Deno.writeTextFile(join(w.ws, 'we"ird\nna\tme ü.txt'), "odd\n");
    await Deno.writeTextFile(join(w.ws, ":(glob)*.md"), "magic\n");
    await Deno.writeTextFile(join(w.ws, "-n"), "dash\n");
    const third = await w.store.create("third");
    // The three, and README.md that the restore before wrote.
    assert.deepEqual(w.store.lastStage, { how: "changed", paths: 4 });
    const odd = await snapshot(w.ws);
    await w.store.restore(second, "no odd names");
    assert.equal(await exists(w.ws, ":(glob)*.md"), false);
    await w.store.restore(third, "odd names back");
    await assertRestored(w.ws, odd);
  } finally {
    await w.cleanup();
  }
});

Deno.test("watch: a command in the sandbox (real bwrap, the workspace bound into its mount namespace) is seen", async () => {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed for this test");
  const w = await watched();
  try {
    const before = await snapshot(w.ws);
    const policy = Policy.create({}, { allow: [], deny: [] }, {
      workspace: w.ws,
      configDir: join(w.ws, ".coyote"),
    });
    await policy.globsReady();
    const c = sandboxedCommand(
      policy,
      "echo made > made.txt && printf 'more\\n' >> README.md && rm src/deep/b.ts && chmod -x run.sh",
      { cwd: w.ws, backend, baseEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" } },
    );
    const o = await new Deno.Command(c.program, {
      args: c.args,
      cwd: w.ws,
      env: c.env,
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(o.code, 0, new TextDecoder().decode(o.stderr));
    assert.equal(await read(w.ws, "made.txt"), "made\n");
    const second = await w.store.create("after the command");
    assert.equal(w.store.lastStage?.how, "changed");
    assert.equal(w.store.lastStage?.paths, 4);
    const after = await snapshot(w.ws);
    await w.store.restore(w.first, "back");
    await assertRestored(w.ws, before);
    await w.store.restore(second, "forth");
    await assertRestored(w.ws, after);
  } finally {
    await w.cleanup();
  }
});

Deno.test("watch: renames of a file and of a folder, deletions, a new folder and later edits inside both are staged and restored", async () => {
  const w = await watched();
  try {
    await Deno.rename(join(w.ws, "old.txt"), join(w.ws, "moved.txt"));
    await Deno.remove(join(w.ws, "src/deep"), { recursive: true });
    await Deno.mkdir(join(w.ws, "pkg/sub"), { recursive: true });
    await Deno.writeTextFile(join(w.ws, "pkg/sub/x.ts"), "one\n");
    const second = await w.store.create("second");
    assert.equal(w.store.lastStage?.how, "changed");
    const s2 = await snapshot(w.ws);
    // The new folders had no watch when they were made; edits inside them still count — and in
    // a folder whose watch moved with it (inotify follows the inode, not the name).
    await Deno.writeTextFile(join(w.ws, "pkg/sub/x.ts"), "two\n");
    await Deno.mkdir(join(w.ws, "pkg/sub/deeper"));
    await Deno.writeTextFile(join(w.ws, "pkg/sub/deeper/y.ts"), "y\n");
    await Deno.rename(join(w.ws, "src"), join(w.ws, "lib"));
    await Deno.writeTextFile(join(w.ws, "lib/a.ts"), "edited after the move\n");
    const third = await w.store.create("third");
    assert.equal(w.store.lastStage?.how, "changed");
    const s3 = await snapshot(w.ws);
    // Once more after the watcher was laid again over the new folders (in the background).
    await new Promise((r) => setTimeout(r, 500));
    await w.store.create("flush the relay");
    await Deno.writeTextFile(join(w.ws, "pkg/sub/deeper/y.ts"), "y2\n");
    await Deno.writeTextFile(join(w.ws, "lib/a.ts"), "edited again\n");
    const fourth = await w.store.create("fourth");
    assert.equal(w.store.lastStage?.how, "changed");
    const s4 = await snapshot(w.ws);
    await w.store.restore(second, "to second");
    await assertRestored(w.ws, s2);
    assert.equal(await read(w.ws, "pkg/sub/x.ts"), "one\n");
    assert.equal(await exists(w.ws, "old.txt"), false);
    await w.store.restore(third, "to third");
    await assertRestored(w.ws, s3);
    await w.store.restore(fourth, "to fourth");
    await assertRestored(w.ws, s4);
    await w.store.restore(w.first, "to first");
    assert.equal(await exists(w.ws, "pkg"), false);
    assert.equal(await exists(w.ws, "src/deep/b.ts"), true);
    assert.equal(await exists(w.ws, "old.txt"), true);
  } finally {
    await w.cleanup();
  }
});

Deno.test("watch: an ignored file is not staged (the same checkpoint) and a rewind leaves it alone", async () => {
  const w = await watched();
  try {
    await Deno.writeTextFile(join(w.ws, "build/new.txt"), "ignored\n");
    await Deno.writeTextFile(join(w.ws, "build/out.txt"), "ignored, changed\n");
    assert.equal(await w.store.create("only ignored changes"), w.first);
    assert.equal(w.store.lastStage?.how, "none");
    // An ignored folder made at the top: its creation is an event, its files are still ignored.
    await Deno.writeTextFile(join(w.ws, ".gitignore"), "build/\nnode_modules/\n");
    await w.store.create("new ignore rules");
    assert.equal(w.store.lastStage?.how, "all"); // the .gitignore changed
    await w.store.watch(); // the new watcher (laid over the new rules) and its baseline
    await Deno.mkdir(join(w.ws, "node_modules/pkg"), { recursive: true });
    await Deno.writeTextFile(join(w.ws, "node_modules/pkg/index.js"), "x\n");
    await Deno.writeTextFile(join(w.ws, "README.md"), "# changed with the ignored ones\n");
    const id = await w.store.create("one tracked change");
    assert.equal(w.store.lastStage?.how, "changed");
    await Deno.writeTextFile(join(w.ws, "README.md"), "# later\n");
    const r = await w.store.restore(id, "back");
    assert.deepEqual(r.changes.map((c) => `${c.status} ${c.path}`), ["modified README.md"]);
    assert.equal(await read(w.ws, "build/new.txt"), "ignored\n");
    assert.equal(await read(w.ws, "node_modules/pkg/index.js"), "x\n");
  } finally {
    await w.cleanup();
  }
});

Deno.test("watch: a changed .gitignore, a changed .git/info/exclude and dropped events rescan the whole tree", async () => {
  const w = await watched(async (ws) => {
    // A link to a big folder outside: not followed (a recursive watch would walk all of /usr).
    await Deno.symlink("/usr", join(ws, "usr-link"));
    await Deno.writeTextFile(join(ws, ".git/info/exclude"), "extra/\n");
    await Deno.mkdir(join(ws, "extra"));
    await Deno.writeTextFile(join(ws, "extra/keep.txt"), "excluded\n");
  });
  try {
    assert.ok(w.watchMs < 1_500, `laying the watches took ${w.watchMs} ms`);
    // build/ is no longer ignored: its file never changed, only a rescan can find it.
    await Deno.writeTextFile(join(w.ws, ".gitignore"), "");
    const a = await w.store.create("gitignore changed");
    assert.equal(w.store.lastStage?.how, "all");
    assert.match(w.store.lastStage?.why ?? "", /\.gitignore changed/);
    await Deno.remove(join(w.ws, "build/out.txt"));
    await w.store.restore(a, "build back");
    assert.equal(await read(w.ws, "build/out.txt"), "ignored build output\n");
    // No longer excluded by the workspace's own exclude file: a rescan finds the file.
    await w.store.watch();
    await Deno.writeTextFile(join(w.ws, ".git/info/exclude"), "");
    const b = await w.store.create("exclude changed");
    assert.equal(w.store.lastStage?.how, "all");
    assert.match(w.store.lastStage?.why ?? "", /exclude/);
    await Deno.remove(join(w.ws, "extra/keep.txt"));
    await w.store.restore(b, "extra back");
    assert.equal(await read(w.ws, "extra/keep.txt"), "excluded\n");
    await w.store.watch();
    // Back to incremental, then more events than the watcher's queue holds while this thread is
    // blocked: the drop is reported (`rescan`) and the whole tree is scanned.
    await Deno.writeTextFile(join(w.ws, "README.md"), "x\n");
    await w.store.create("incremental");
    assert.equal(w.store.lastStage?.how, "changed");
    new Deno.Command("sh", {
      args: [
        "-c",
        "for r in 1 2 3 4; do for i in $(seq 1 400); do echo $i$r > src/f$i.txt; done; done",
      ],
      cwd: w.ws,
    }).outputSync();
    const c = await w.store.create("after a burst");
    assert.equal(w.store.lastStage?.how, "all");
    assert.match(w.store.lastStage?.why ?? "", /dropped events/);
    await Deno.remove(join(w.ws, "src/f400.txt"));
    await w.store.restore(c, "burst back");
    assert.equal(await read(w.ws, "src/f400.txt"), "4004\n");
    // The watches are still good: the next change is staged alone again.
    await w.store.create("after the restore");
    await Deno.writeTextFile(join(w.ws, "src/f1.txt"), "again\n");
    await w.store.create("incremental again");
    assert.deepEqual(w.store.lastStage, { how: "changed", paths: 1 });
  } finally {
    await w.cleanup();
  }
});

Deno.test("watch: without a watcher every checkpoint rescans; a closed store stops watching", async () => {
  const ws = await makeRepo("coyote-cpw-");
  const data = await Deno.makeTempDir({ prefix: "coyote-cpw-data-" });
  try {
    const store = await CheckpointStore.open(data, ws);
    await store.create("first");
    await Deno.writeTextFile(join(ws, "README.md"), "y\n");
    await store.create("second");
    assert.equal(store.lastStage?.how, "all");
    await store.watch();
    await store.close();
    await Deno.writeTextFile(join(ws, "README.md"), "z\n");
    const id = await store.create("third");
    assert.equal(store.lastStage?.how, "all");
    await Deno.writeTextFile(join(ws, "README.md"), "w\n");
    await store.restore(id, "back");
    assert.equal(await Deno.readTextFile(join(ws, "README.md")), "z\n");
  } finally {
    await Deno.remove(ws, { recursive: true });
    await Deno.remove(data, { recursive: true });
  }
});

Deno.test("acp (sandbox required): turn 1 changes files, the user edits between turns, turn 2 runs a command; /rewind 2 restores the user's edit byte for byte", async () => {
  const ws = await makeRepo("coyote-cpw-acp-");
  const server = await startModelServer({
    script: [
      ...changingTurn(),
      {
        tool_calls: [{
          id: "x2",
          name: "execute_command",
          arguments: {
            command:
              "echo t2 >> README.md && rm notes/user.txt && mkdir -p gen && echo g > gen/g.txt",
          },
        }],
      },
      { text: "done 2" },
    ],
  });
  const data = await Deno.makeTempDir({ prefix: "coyote-cpw-acp-data-" });
  await Deno.mkdir(`${data}/config`, { recursive: true });
  await Deno.writeTextFile(`${data}/config/config.yaml`, "sandbox: required\n");
  const h = await startAcp({
    args: [],
    env: {
      COYOTE_DATA_DIR: `${data}/data`,
      COYOTE_CONFIG_DIR: `${data}/config`,
      OPENAI_BASE_URL: server.baseURL,
      OPENAI_API_KEY: "test-key",
      COYOTE_MODEL: "scripted",
    },
  });
  try {
    const { sessionId } = await h.agent.request("session/new", { cwd: ws, mcpServers: [] });
    const prompt = (text: string) =>
      h.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
    assert.equal((await prompt("change things")).stopReason, "end_turn");
    // The user's own edits between the turns (the watcher's baseline scan ran meanwhile).
    await new Promise((r) => setTimeout(r, 300));
    await Deno.writeTextFile(join(ws, "README.md"), "# the user's version\n");
    await Deno.writeTextFile(join(ws, "notes/user.txt"), "mine\n");
    const userState = await snapshot(ws);
    const second = await prompt("second");
    // deno-lint-ignore no-explicit-any
    assert.equal((second._meta as any)?.coyote?.checkpoints?.length, 1);
    assert.equal(await read(ws, "gen/g.txt"), "g\n");
    assert.equal(await exists(ws, "notes/user.txt"), false);
    // The session watched the workspace (the watcher's sentinel folder is in the store).
    const store = await CheckpointStore.dirFor(`${data}/data`, ws);
    assert.ok((await Deno.stat(join(store, "watch"))).isDirectory);
    const r = await prompt("/rewind 2");
    assert.equal(r.stopReason, "end_turn");
    await assertRestored(ws, userState);
    await finishAcp(h);
  } finally {
    await server.close();
    await Deno.remove(ws, { recursive: true }).catch(() => {});
    await Deno.remove(data, { recursive: true }).catch(() => {});
  }
});

Deno.test("limits: max_files counts every tracked file of a split shadow index (a later session's first checkpoint)", async () => {
  const ws = await makeRepo("coyote-cpw-");
  const data = await Deno.makeTempDir({ prefix: "coyote-cpw-data-" });
  try {
    // Enough files for git to split the index (a small one is written whole).
    await Deno.mkdir(join(ws, "many"));
    for (let i = 0; i < 3000; i++) Deno.writeTextFileSync(join(ws, `many/f${i}.txt`), `${i}\n`);
    // Older than the index git writes next: not "racily clean" (on a loaded machine git re-hashes
    // such entries at the next write and may write them all into the split index's own file).
    const past = new Date(Date.now() - 60_000);
    for (let i = 0; i < 3000; i++) Deno.utimeSync(join(ws, `many/f${i}.txt`), past, past);
    const store = await CheckpointStore.open(data, ws);
    await store.create("first");
    await Deno.writeTextFile(join(ws, "one.txt"), "1\n");
    await Deno.writeTextFile(join(ws, "two.txt"), "2\n");
    await store.create("second"); // a small split index beside the shared one
    const o = await new Deno.Command("git", {
      args: ["ls-files", "-z"],
      env: { GIT_DIR: store.gitDir, GIT_INDEX_FILE: join(store.gitDir, "index") },
    }).output();
    const tracked = new TextDecoder().decode(o.stdout).split("\0").filter(Boolean).length;
    assert.ok(tracked > 3000, `${tracked} tracked`);
    const index = await Deno.readFile(join(store.gitDir, "index"));
    const own = new DataView(index.buffer).getUint32(8);
    assert.ok(own < 100, `the split index's own file holds ${own} entries`);
    // As a later session: a new store object over the same repository.
    assert.match(
      await (await CheckpointStore.open(data, ws, { maxFiles: tracked })).create("ok"),
      /^[0-9a-f]{40}$/,
    );
    await assert.rejects(
      async () =>
        await (await CheckpointStore.open(data, ws, { maxFiles: tracked - 1 })).create("x"),
      (e) => e instanceof CheckpointSkipped && /checkpoints\.max_files/.test(e.message),
    );
  } finally {
    await Deno.remove(ws, { recursive: true });
    await Deno.remove(data, { recursive: true });
  }
});
