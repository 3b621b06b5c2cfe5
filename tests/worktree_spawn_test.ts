/**
 * Children in their own git worktrees through `agent__spawn` (issue 17: parallel coders do not
 * share one working tree; core/supervisor/worktree.ts, core/session/child_dir.ts), as a user runs
 * them: `coyote --headless --output-format stream-json` as a real subprocess on a real git
 * repository, the scripted model server answering per agent.
 *
 * - two coders spawned at once editing different files: the second (spawned while the first
 *   runs) gets a worktree by default; both changes land in the parent's tree;
 * - two coders in worktrees editing the same lines: one is applied, the other reported as a
 *   conflict (result text and a `worktree` event) with its patch kept; nothing merged over;
 * - a coder in a worktree: its file tool cannot write into the parent's tree (the guard's
 *   workspace is its worktree), its own writes come back as a patch;
 * - with the OS sandbox required (real bwrap): the child's command runs in its worktree, its
 *   writes land there (and come back), a write into the parent's tree fails read-only, and of the
 *   data dir (its worktree lies inside) it sees nothing but its worktree.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { childEnv, makeCoyoteEnv, parseJsonLines, runCoyote } from "./support/run_coyote.ts";
import {
  type RecordedRequest,
  type ScriptedReply,
  startModelServer,
} from "./support/model_server.ts";

// deno-lint-ignore no-explicit-any
type Json = any;
type Msg = { role: string; content: string | null; tool_calls?: Json[] };
const messages = (r: RecordedRequest) => (r.body as { messages: Msg[] }).messages;
const system = (r: RecordedRequest) => messages(r).find((m) => m.role === "system")?.content ?? "";
const firstUser = (r: RecordedRequest) => messages(r).find((m) => m.role === "user")!.content!;

async function git(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", {
    args: ["-c", "user.email=t@t", "-c", "user.name=t", ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (out.code !== 0) {
    throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return new TextDecoder().decode(out.stdout);
}

/** The lead: spawns what its prompt lists (all in one response), collects, answers with it. */
const LEAD = `name: lead
description: spawns coders
can_spawn_agents: true
instructions: LEADX spawns coders.
`;
/** The user's LLM coder (stands in for the built-in graph one), told its steps by its task. */
const CODER = "---\nname: coder\ndescription: The user's coder\n" +
  "tools: [fs_read, fs_write, execute_command]\n---\nCODERX agent: edits files as asked.\n";

type Step = { name: string; arguments: Record<string, unknown> };

/**
 * The scripted model: LEADX spawns `{spawn: [...]}` of its prompt in one response, collects, then
 * (with `send` in its prompt) sends the first child that task as a follow-up and collects again,
 * and answers with the last collect result. CODERX makes the tool calls `{steps: [...]}` of its
 * latest task one per request, then (after `barrier` coders reached their answer, if set) answers.
 */
function model(barrier = 0) {
  let waiting = 0;
  let release!: () => void;
  const all = new Promise<void>((r) => (release = r));
  return async (r: RecordedRequest): Promise<ScriptedReply> => {
    const ms = messages(r);
    const calls = ms.filter((m) => m.role === "assistant").flatMap((m) => m.tool_calls ?? []);
    const last = String(ms.at(-1)!.content);
    const call = (name: string, args: Record<string, unknown>) => ({
      tool_calls: [{ name, arguments: args }],
    });
    if (system(r).startsWith("LEADX")) {
      const { spawn, send } = JSON.parse(firstUser(r)) as {
        spawn: Record<string, unknown>[];
        send?: string;
      };
      const n = spawn.length;
      if (!calls.length) {
        return { tool_calls: spawn.map((a) => ({ name: "agent__spawn", arguments: a })) };
      }
      if (calls.length === n) return call("agent__collect", {});
      if (send && calls.length === n + 1) {
        const first = ms.find((m) => m.role === "tool" && String(m.content).startsWith('{"id"'));
        return call("agent__send", { agent_id: JSON.parse(first!.content!).id, message: send });
      }
      if (send && calls.length === n + 2) return call("agent__collect", {});
      return { text: `COLLECTED:\n${last}` };
    }
    if (system(r).startsWith("CODERX")) {
      const at = ms.findLastIndex((m) => m.role === "user");
      const steps = JSON.parse(ms[at].content!).steps as Step[];
      const done = ms.slice(at).filter((m) => m.role === "assistant" && m.tool_calls).length;
      if (done < steps.length) return { tool_calls: [steps[done]] };
      if (barrier && ++waiting === barrier) release();
      if (barrier) await all;
      return { text: `coder done; last: ${last.slice(0, 200)}` };
    }
    return { text: "unexpected request" };
  };
}

const task = (steps: Step[]) => JSON.stringify({ steps });
const read = (path: string): Step => ({ name: "fs_read", arguments: { path } });
const write = (path: string, content: string): Step => ({
  name: "fs_write",
  arguments: { path, content },
});
const run = (command: string): Step => ({ name: "execute_command", arguments: { command } });

/** One coder to spawn: its steps and the spawn's `worktree` flag. */
type Spawn = { steps: Step[]; worktree?: boolean };

/**
 * Runs the lead headless on a fresh repository (a.txt, b.txt committed; an uncommitted c.txt),
 * spawning the coders `spawns(repo)` lists.
 */
async function scene(
  spawns: (repo: string, dataDir: string) => Spawn[],
  opts: {
    barrier?: number;
    config?: string;
    send?: Step[];
    /** Where the repository and the data dir are made (default the system's temp dir). */
    under?: string;
  } = {},
) {
  const server = await startModelServer({ script: model(opts.barrier) });
  const env = await makeCoyoteEnv();
  if (opts.under) {
    await Deno.remove(env.dataDir, { recursive: true });
    env.dataDir = await Deno.makeTempDir({ dir: opts.under, prefix: "coyote-data-" });
  }
  const parent = await Deno.makeTempDir({ dir: opts.under, prefix: "coyote-wt-spawn-" });
  const repo = join(parent, "repo");
  await Deno.mkdir(repo);
  await git(repo, "init", "-q");
  await Deno.writeTextFile(join(repo, "a.txt"), "one\ntwo\nthree\n");
  await Deno.writeTextFile(join(repo, "b.txt"), "alpha\n");
  await git(repo, "add", ".");
  await git(repo, "commit", "-qm", "base");
  await Deno.writeTextFile(join(repo, "c.txt"), "uncommitted\n");
  await Deno.mkdir(join(env.configDir, "agents", "lead"), { recursive: true });
  await Deno.writeTextFile(join(env.configDir, "agents", "lead", "config.yaml"), LEAD);
  await Deno.writeTextFile(join(env.configDir, "agents", "coder.md"), CODER);
  if (opts.config) await Deno.writeTextFile(join(env.configDir, "config.yaml"), opts.config);
  const spawn = spawns(repo, env.dataDir).map((c) => ({
    agent: "coder",
    prompt: task(c.steps),
    ...(c.worktree === undefined ? {} : { worktree: c.worktree }),
  }));
  const r = await runCoyote(
    [
      "--headless",
      "--agent",
      "lead",
      "--output-format",
      "stream-json",
      JSON.stringify({
        spawn,
        ...(opts.send ? { send: task(opts.send) } : {}),
      }),
    ],
    { cwd: repo, env: childEnv(env, { baseURL: server.baseURL }), timeoutMs: 120_000 },
  );
  const cleanup = async () => {
    await server.close();
    await env.cleanup();
    await Deno.remove(env.dataDir, { recursive: true }).catch(() => {});
    await Deno.remove(parent, { recursive: true });
  };
  try {
    assert.equal(r.code, 0, r.stderr);
  } catch (e) {
    await cleanup();
    throw e;
  }
  const lines: Json[] = parseJsonLines(r.stdout);
  const events = lines.filter((l) => l.update?._meta?.coyote?.event === "worktree")
    .map((l) => ({ ...l.update._meta.coyote, line: l }));
  return {
    repo,
    env,
    lines,
    result: lines.at(-1)!,
    events,
    text: (f: string) => Deno.readTextFile(join(repo, f)),
    cleanup,
  };
}

/** The worktrees left under the data dir (checkouts, not patches). */
async function checkouts(dataDir: string): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const e of Deno.readDir(join(dataDir, "worktrees"))) {
      if (e.isDirectory) out.push(e.name);
    }
  } catch { /* none made */ }
  return out;
}

Deno.test("spawn in worktrees: two coders at once editing different files — the second gets a worktree by default, both changes land in the parent's tree", async () => {
  const s = await scene(() => [
    { steps: [read("a.txt"), write("a.txt", "ONE\ntwo\nthree\n")] },
    { steps: [read("b.txt"), write("b.txt", "alpha\nbeta\n"), write("new.txt", "new\n")] },
  ]);
  try {
    assert.equal(await s.text("a.txt"), "ONE\ntwo\nthree\n");
    assert.equal(await s.text("b.txt"), "alpha\nbeta\n");
    assert.equal(await s.text("new.txt"), "new\n");
    assert.equal(await s.text("c.txt"), "uncommitted\n");
    // One worktree (the coder spawned while the other ran), created then applied.
    const created = s.events.filter((e) => e.status === "created");
    assert.equal(created.length, 1, JSON.stringify(s.events));
    const id = created[0].agent_id;
    assert.match(id, /^coder-[0-9a-f]{8}$/);
    assert.ok(created[0].path.startsWith(join(s.env.dataDir, "worktrees")), created[0].path);
    const applied = s.events.find((e) => e.agent_id === id && e.status === "applied");
    assert.ok(applied, JSON.stringify(s.events));
    assert.deepEqual(applied.files.sort(), ["b.txt", "new.txt"]);
    // Emitted in the lead's stream (its own agent id, not a child's).
    assert.equal(applied.line.agent_id, s.lines[0].agent_id);
    // The collect result says so; the child's events came from inside its worktree.
    assert.match(s.result.text, new RegExp(`${id} completed:[^]*its change was applied`));
    const childCwd = s.lines.find((l) =>
      l.agent_id === id && l.update?.sessionUpdate === "tool_call_update" &&
      JSON.stringify(l.update).includes("new.txt")
    );
    assert.ok(childCwd, "the worktree child wrote new.txt");
    // Gone: its checkout and git's entry; the user's HEAD and index untouched.
    assert.deepEqual(await checkouts(s.env.dataDir), []);
    assert.doesNotMatch(await git(s.repo, "worktree", "list"), /worktrees/);
    assert.equal((await git(s.repo, "log", "--oneline")).trim().split("\n").length, 1);
    assert.equal(await git(s.repo, "diff", "--cached", "--name-only"), "");
  } finally {
    await s.cleanup();
  }
});

Deno.test("spawn in worktrees: two coders editing the same lines — one applied, the other reported as a conflict with its patch kept, never merged over", async () => {
  const s = await scene(() => [
    { worktree: true, steps: [read("a.txt"), write("a.txt", "one\nTWO by first\nthree\n")] },
    { worktree: true, steps: [read("a.txt"), write("a.txt", "one\nTWO by second\nthree\n")] },
  ], { barrier: 2 });
  try {
    assert.equal(s.events.filter((e) => e.status === "created").length, 2);
    const applied = s.events.filter((e) => e.status === "applied");
    const conflict = s.events.filter((e) => e.status === "conflict");
    assert.equal(applied.length, 1, JSON.stringify(s.events));
    assert.equal(conflict.length, 1, JSON.stringify(s.events));
    assert.notEqual(applied[0].agent_id, conflict[0].agent_id);
    assert.deepEqual(conflict[0].files, ["a.txt"]);
    // The parent's file is the applied child's, without conflict markers.
    const winner = (await Deno.readTextFile(applied[0].patch)).match(/\+TWO by (\w+)/)![1];
    assert.equal(await s.text("a.txt"), `one\nTWO by ${winner}\nthree\n`);
    // The other's patch is kept where the event and the result say.
    assert.equal(
      conflict[0].patch,
      join(s.env.dataDir, "worktrees", `${conflict[0].agent_id}.patch`),
    );
    assert.match(await Deno.readTextFile(conflict[0].patch), /\+TWO by (first|second)/);
    assert.match(
      s.result.text,
      new RegExp(
        `${
          conflict[0].agent_id
        } completed:[^]*CONFLICTS with the workspace and was NOT applied \\(conflicting: a\\.txt\\); the patch is kept at ${
          conflict[0].patch
        }`,
      ),
    );
    assert.deepEqual(await checkouts(s.env.dataDir), []);
  } finally {
    await s.cleanup();
  }
});

Deno.test("spawn in worktrees: a coder's file tool cannot write into the parent's tree while in its worktree; its own writes come back", async () => {
  const s = await scene((repo) => [{
    worktree: true,
    steps: [write(join(repo, "intruder.txt"), "x\n"), write("mine.txt", "mine\n")],
  }]);
  try {
    await assert.rejects(Deno.stat(join(s.repo, "intruder.txt")));
    // Refused by the guard (outside its workspace, the worktree; headless refuses an ask).
    const denied = s.result.denied as Json[];
    assert.equal(denied.length, 1, JSON.stringify(denied));
    assert.match(denied[0].agent_id, /^coder-/);
    assert.equal(denied[0].access.path, join(s.repo, "intruder.txt"));
    assert.match(JSON.stringify(denied[0]), /outside the workspace/);
    // What it wrote in its worktree came back.
    assert.equal(await s.text("mine.txt"), "mine\n");
    const applied = s.events.find((e) => e.status === "applied");
    assert.deepEqual(applied?.files, ["mine.txt"]);
  } finally {
    await s.cleanup();
  }
});

Deno.test("spawn in worktrees: a follow-up (agent__send) to a worktree child works on in the same worktree; its next change comes back as its own patch", async () => {
  const s = await scene(() => [{ worktree: true, steps: [write("one.txt", "first run\n")] }], {
    send: [read("one.txt"), write("one.txt", "first run\nsecond run\n")],
  });
  try {
    assert.equal(await s.text("one.txt"), "first run\nsecond run\n");
    const created = s.events.filter((e) => e.status === "created");
    assert.equal(created.length, 1, "one worktree for both runs");
    const id = created[0].agent_id;
    const applied = s.events.filter((e) => e.status === "applied");
    assert.deepEqual(applied.map((e) => e.patch), [
      join(s.env.dataDir, "worktrees", `${id}.patch`),
      join(s.env.dataDir, "worktrees", `${id}-2.patch`),
    ]);
    // The second patch holds the second run's change only.
    const second = await Deno.readTextFile(applied[1].patch);
    assert.match(second, /^ first run$/m);
    assert.match(second, /^\+second run$/m);
    assert.match(s.result.text, /its change was applied[^]*-2\.patch/);
    assert.deepEqual(await checkouts(s.env.dataDir), []);
  } finally {
    await s.cleanup();
  }
});

Deno.test("spawn in worktrees: with the OS sandbox (real bwrap) the child's commands run in its worktree, their writes land there and come back; a write into the parent's tree does not land", async () => {
  const s = await scene((repo) => [{
    worktree: true,
    steps: [
      run("pwd; echo made-by-command > cmd.txt; git status --short cmd.txt"),
      run(`echo direct > ${join(repo, "direct.txt")} || echo WRITE-FAILED`),
    ],
  }], { config: "sandbox: required\n" });
  try {
    const outputs = s.lines.filter((l) =>
      l.update?.sessionUpdate === "tool_call_update" && l.update.status === "completed" &&
      l.agent_id?.startsWith("coder-")
    ).map((l) => JSON.stringify(l.update.content ?? l.update.rawOutput ?? ""));
    const created = s.events.find((e) => e.status === "created");
    assert.ok(created, JSON.stringify(s.events));
    // It ran in the worktree (bwrap's --chdir), where git sees the new file as untracked.
    assert.ok(outputs.some((o) => o.includes(created.path)), outputs.join("\n"));
    assert.ok(outputs.some((o) => o.includes("?? cmd.txt")), outputs.join("\n"));
    // The parent's tree is out of its reach (the root is read-only in bwrap, and a tree under
    // /tmp, as here, is not even in its view: its /tmp is private): the write did not land.
    await assert.rejects(Deno.stat(join(s.repo, "direct.txt")));
    // Its change came back as a patch.
    assert.equal(await s.text("cmd.txt"), "made-by-command\n");
    assert.deepEqual(s.events.find((e) => e.status === "applied")?.files, ["cmd.txt"]);
  } finally {
    await s.cleanup();
  }
});

Deno.test("spawn in worktrees: with the OS sandbox (real bwrap), outside the private /tmp — the parent's tree is read-only to the child's commands and of the data dir it sees only its own worktree", async () => {
  const under = await Deno.makeTempDir({ dir: "/var/tmp", prefix: "coyote-wt-" });
  try {
    const s = await scene((repo, data) => [{
      worktree: true,
      steps: [
        run(`echo direct > ${join(repo, "direct.txt")} || echo WRITE-FAILED`),
        run(`echo mine > mine.txt; ls -A ${data} ${join(data, "worktrees")}; echo LISTED`),
      ],
    }], { config: "sandbox: required\n", under });
    try {
      const outputs = s.lines.filter((l) =>
        l.update?.sessionUpdate === "tool_call_update" && l.update.status === "completed" &&
        l.agent_id?.startsWith("coder-")
      ).map((l) => JSON.stringify(l.update.content ?? ""));
      assert.ok(outputs.some((o) => /Read-only file system/.test(o)), outputs.join("\n"));
      // The data dir (transcripts, caches, other worktrees and patches) is an empty dir there but
      // for the way to its own worktree.
      const id = s.events.find((e) => e.status === "created")!.agent_id;
      const listing = JSON.parse(outputs.find((o) => o.includes("LISTED"))!)[0].content.text;
      const lines = listing.split("--- stdout ---\n")[1].split("\n").filter(Boolean);
      assert.deepEqual(lines, [
        `${s.env.dataDir}:`,
        "worktrees",
        `${join(s.env.dataDir, "worktrees")}:`,
        id,
        "LISTED",
      ]);
      // On the host the data dir holds more (this run's transcripts at least).
      assert.ok([...Deno.readDirSync(s.env.dataDir)].length > 1);
      await assert.rejects(Deno.stat(join(s.repo, "direct.txt")));
      assert.equal(await s.text("mine.txt"), "mine\n");
    } finally {
      await s.cleanup();
    }
  } finally {
    await Deno.remove(under, { recursive: true }).catch(() => {});
  }
});
