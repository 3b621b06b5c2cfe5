/**
 * Checkpoints and rewind (issue 18, docs/modes.md "Checkpoints and rewind") on real git
 * repositories: the store (core/session/checkpoints/store.ts) restores byte for byte and never
 * touches the user's `.git`; a huge tree is skipped; the transcript's `rewind` line truncates the
 * conversation on load; and real headless runs (sandbox on under real bwrap, and `--no-sandbox`)
 * name their checkpoint in the stream and the result, after which `coyote rewind` restores the
 * workspace and the conversation, and its undo checkpoint brings the turn's state back.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CheckpointSkipped, CheckpointStore } from "../core/session/checkpoints/store.ts";
import { parseTranscript } from "../core/transcript/load.ts";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, parseJsonLines, runCoyote } from "./support/run_coyote.ts";
import {
  assertChanged,
  assertRestored,
  changingTurn,
  makeRepo,
  RESTORE_LINES,
  snapshot,
  userGitState,
} from "./support/rewind_scene.ts";

Deno.test("store: a checkpoint restores text, binary, deleted, new, renamed files and the executable bit byte for byte; the user's .git is untouched", async () => {
  const ws = await makeRepo();
  const data = await Deno.makeTempDir({ prefix: "coyote-cp-data-" });
  try {
    const before = await snapshot(ws);
    const git = await userGitState(ws);
    const store = await CheckpointStore.open(data, ws);
    const id = await store.create("test");
    assert.match(id, /^[0-9a-f]{40}$/);
    // The store lives under the data dir, not in the workspace.
    assert.ok(store.gitDir.startsWith(join(data, "checkpoints")));
    await Deno.remove(join(ws, "src"), { recursive: true });
    await Deno.rename(join(ws, "old.txt"), join(ws, "renamed.txt"));
    await Deno.chmod(join(ws, "run.sh"), 0o644);
    await Deno.writeFile(join(ws, "data.bin"), new Uint8Array([1, 2, 3]));
    await Deno.mkdir(join(ws, "notes"));
    await Deno.writeTextFile(join(ws, "notes/new.txt"), "new\n");
    await Deno.writeTextFile(join(ws, "README.md"), "# changed\n");
    await Deno.writeTextFile(join(ws, "build/more.txt"), "ignored\n");
    const seen: string[] = [];
    const r = await store.restore(id, "undo", (changes) => {
      seen.push(...changes.map((c) => `${c.status} ${c.from ? `${c.from}→` : ""}${c.path}`));
    });
    assert.deepEqual(seen.sort(), [
      "added src/a.ts",
      "added src/deep/b.ts",
      "added src/logo.bin",
      "deleted notes/new.txt",
      "modified README.md",
      "modified data.bin",
      "modified run.sh",
      "renamed renamed.txt→old.txt",
    ]);
    assert.equal(r.changes.find((c) => c.path === "run.sh")?.mode?.to, "100755");
    await assertRestored(ws, before);
    assert.equal(await userGitState(ws), git, "the user's index, HEAD and refs are unchanged");
    // The restore was checkpointed first: restoring its undo brings the changed state back.
    const back = await store.restore(r.undo, "redo");
    assert.ok(back.changes.length > 0);
    assert.equal(await Deno.readTextFile(join(ws, "README.md")), "# changed\n");
    assert.equal(await Deno.stat(join(ws, "src")).then(() => true, () => false), false);
  } finally {
    await Deno.remove(ws, { recursive: true });
    await Deno.remove(data, { recursive: true });
  }
});

Deno.test("store: a tree past max_files or max_mb is skipped with the reason; nothing is stored", async () => {
  const ws = await makeRepo();
  const data = await Deno.makeTempDir({ prefix: "coyote-cp-data-" });
  try {
    const few = await CheckpointStore.open(data, ws, { maxFiles: 3 });
    await assert.rejects(
      () => few.create("x"),
      (e) =>
        e instanceof CheckpointSkipped && /over 3 files.*checkpoints\.max_files/.test(e.message),
    );
    assert.equal(await few.head(), null);
    const small = await CheckpointStore.open(data, ws, { maxBytes: 1000 });
    await assert.rejects(
      () => small.create("x"),
      (e) =>
        e instanceof CheckpointSkipped && /over the limit.*checkpoints\.max_mb/.test(e.message),
    );
  } finally {
    await Deno.remove(ws, { recursive: true });
    await Deno.remove(data, { recursive: true });
  }
});

Deno.test("store: a data dir inside the workspace is not part of its checkpoints", async () => {
  const ws = await makeRepo();
  try {
    const store = await CheckpointStore.open(join(ws, ".coyote-data"), ws);
    const a = await store.create("one");
    const b = await store.create("two");
    // The second checkpoint added objects to the store: had the store been in its own tree, the
    // trees would differ.
    assert.deepEqual(await store.diff(a, b), []);
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("transcript: a rewind line drops its turn and the later ones on load; the lines before stay whole", () => {
  const lines = [
    { type: "session", id: "s", cwd: "/w", created: "", model: "m", agent: "a" },
    {
      type: "update",
      update: { sessionUpdate: "user_message_chunk", content: { type: "text", text: "one" } },
    },
    { type: "message", message: { role: "user", content: "one" } },
    { type: "checkpoint", id: "c1" },
    { type: "message", message: { role: "assistant", content: "ok 1" } },
    { type: "turn_end", stopReason: "end_turn", usage: {} },
    {
      type: "update",
      update: { sessionUpdate: "user_message_chunk", content: { type: "text", text: "two" } },
    },
    { type: "message", message: { role: "user", content: "two" } },
    { type: "checkpoint", id: "c2" },
    { type: "message", message: { role: "assistant", content: "ok 2" } },
    { type: "turn_end", stopReason: "end_turn", usage: {} },
  ].map((l) => JSON.stringify(l));
  const full = parseTranscript(lines.join("\n"))!;
  assert.deepEqual(full.turns, [
    { prompt: "one", checkpoints: ["c1"] },
    { prompt: "two", checkpoints: ["c2"] },
  ]);
  const cut = parseTranscript([...lines, JSON.stringify({ type: "rewind", turn: 2 })].join("\n"))!;
  assert.deepEqual(cut.messages.map((m) => m.content), ["one", "ok 1"]);
  assert.deepEqual(cut.turns, [{ prompt: "one", checkpoints: ["c1"] }]);
  // A new turn after the rewind is turn 2 again.
  const next = [
    ...lines,
    JSON.stringify({ type: "rewind", turn: 1 }),
    JSON.stringify({ type: "message", message: { role: "user", content: "three" } }),
    JSON.stringify({ type: "turn_end", stopReason: "end_turn", usage: {} }),
  ];
  const again = parseTranscript(next.join("\n"))!;
  assert.deepEqual(again.messages.map((m) => m.content), ["three"]);
  assert.equal(again.turns?.length, 1);
});

for (const sandbox of ["required", "off"] as const) {
  Deno.test(`headless (sandbox ${sandbox}): the turn's checkpoint is in stream-json and json; coyote rewind restores files and conversation byte for byte; its undo restores the turn's state`, async () => {
    const ws = await makeRepo();
    const before = await snapshot(ws);
    const git = await userGitState(ws);
    const env = await makeCoyoteEnv();
    const server = await startModelServer({ script: [...changingTurn(), ...changingTurn()] });
    try {
      if (sandbox === "required") {
        await Deno.writeTextFile(join(env.configDir, "config.yaml"), "sandbox: required\n");
      }
      const e = childEnv(env, { baseURL: server.baseURL });
      const flags = sandbox === "off" ? ["--no-sandbox", "--allow", "Execute(*)"] : [];
      const r = await runCoyote(
        ["--headless", "--output-format", "stream-json", ...flags, "change things"],
        { cwd: ws, env: e },
      );
      assert.equal(r.code, 0, r.stderr);
      const out = parseJsonLines(r.stdout);
      // deno-lint-ignore no-explicit-any
      const init = out[0] as any;
      assert.equal(init.sandbox?.active ?? false, sandbox === "required", JSON.stringify(init));
      // deno-lint-ignore no-explicit-any
      const cps = out.filter((l: any) => l.update?.sessionUpdate === "checkpoint") as any[];
      assert.equal(cps.length, 1, "one checkpoint per turn");
      const id = cps[0].update.checkpointId as string;
      assert.match(id, /^[0-9a-f]{40}$/);
      // The checkpoint comes before the first change's tool call starts running.
      const firstRun = out.findIndex((l: Record<string, unknown>) =>
        // deno-lint-ignore no-explicit-any
        (l as any).update?.status === "in_progress"
      );
      assert.ok(out.indexOf(cps[0]) < firstRun);
      // deno-lint-ignore no-explicit-any
      const result = out.at(-1) as any;
      assert.deepEqual(result.checkpoints, [id]);
      await assertChanged(ws);

      const rw = await runCoyote(["rewind", "--to", "1"], { cwd: ws, env: e });
      assert.equal(rw.code, 0, rw.stderr);
      for (const re of RESTORE_LINES) assert.match(rw.stdout, re);
      // The summary is printed before the outcome.
      assert.ok(rw.stdout.indexOf("restoring") < rw.stdout.indexOf("files restored"));
      assert.match(rw.stdout, /conversation rewound: it now ends before turn 1/);
      await assertRestored(ws, before);
      assert.equal(await userGitState(ws), git);
      const list = await runCoyote(["rewind", "--list"], { cwd: ws, env: e });
      assert.match(list.stdout, /has no turns/);

      // The rewind is undone by its own checkpoint (files only).
      const undo = /--to ([0-9a-f]{12}) --files-only/.exec(rw.stdout)?.[1];
      assert.ok(undo, rw.stdout);
      const un = await runCoyote(["rewind", "--to", undo, "--files-only"], { cwd: ws, env: e });
      assert.equal(un.code, 0, un.stderr);
      // A checkpoint id is no turn: the header names the checkpoint, not "turn -".
      assert.match(un.stdout, new RegExp(`: files set back to checkpoint ${undo}\n`));
      assert.doesNotMatch(un.stdout, /before turn -/);
      await assertChanged(ws);

      // json output: the result names the checkpoint too (a second session on the same store).
      const j = await runCoyote(
        ["--headless", "--output-format", "json", ...flags, "again"],
        { cwd: ws, env: e },
      );
      // The second scripted turn finds src/ gone already: rm -rf still succeeds.
      assert.equal(j.code, 0, j.stderr);
      const res = JSON.parse(j.stdout);
      assert.equal(res.checkpoints.length, 1);
      assert.match(res.checkpoints[0], /^[0-9a-f]{40}$/);
      // A bad --to is a usage error naming the turns there are.
      const bad = await runCoyote(["rewind", "--to", "9"], { cwd: ws, env: e });
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /no turn 9: this session has turns 1 to 1/);
    } finally {
      await server.close();
      await env.cleanup();
      await Deno.remove(ws, { recursive: true });
    }
  });
}

Deno.test("headless graph agent at the root: its llm node's command is checkpointed first and coyote rewind restores it", async () => {
  const ws = await makeRepo();
  await Deno.mkdir(join(ws, ".coyote/agents/g"), { recursive: true });
  await Deno.writeTextFile(
    join(ws, ".coyote/agents/g/graph.yaml"),
    "name: g\ndescription: one node\ntools: [execute_command]\nstart: a\nnodes:\n" +
      "  a: { type: llm, prompt: '{{initial_prompt}}', tools: [execute_command], next: z }\n" +
      "  z: { type: end, output: 'graph done' }\n",
  );
  const before = await snapshot(ws);
  const env = await makeCoyoteEnv();
  const server = await startModelServer({
    script: [
      { tool_calls: [{ id: "g1", name: "execute_command", arguments: { command: "rm -rf src" } }] },
      { text: "removed" },
    ],
  });
  try {
    const e = childEnv(env, { baseURL: server.baseURL });
    const r = await runCoyote(
      ["-a", "g", "--headless", "--output-format", "json", "remove src"],
      { cwd: ws, env: e },
    );
    assert.equal(r.code, 0, r.stderr);
    const res = JSON.parse(r.stdout);
    assert.equal(res.text, "graph done");
    assert.equal(res.checkpoints.length, 1, r.stdout);
    assert.equal(await Deno.stat(join(ws, "src")).then(() => true, () => false), false);
    const rw = await runCoyote(["rewind"], { cwd: ws, env: e });
    assert.equal(rw.code, 0, rw.stderr);
    assert.match(rw.stdout, /added\s+src\/deep\/b\.ts/);
    assert.deepEqual(await snapshot(ws), before);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(ws, { recursive: true });
  }
});
