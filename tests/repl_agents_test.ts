/**
 * The REPL (core/frontends/repl/) with sub-agents and agent files, in a real pseudo-terminal (tmux): a
 * child's permission prompt stays whole while its parent goes on (the parent's tool lines wait
 * until the prompt is answered instead of landing after its key legend), and `/agent NAME` for
 * an agent whose variable is required says how to give it. A one-shot run on a terminal: Ctrl+C
 * at a sub-agent's permission prompt interrupts the whole run (exit 130), not only that child.
 * Ctrl+C while children run clears the spinner line (it stayed on screen with "^C" appended) and
 * every child's status line. Parallel children: one status line each under the spinner (agent id,
 * elapsed time, last action), at most 6 rows then `+N more`, gone when the child ends.
 */
import assert from "node:assert/strict";
import {
  type RecordedRequest,
  type ScriptedReply,
  startModelServer,
} from "./support/model_server.ts";
import { childEnv, coyoteCommand, makeCoyoteEnv } from "./support/run_coyote.ts";
import { Tmux } from "./support/tmux.ts";

const hasTmux = await new Deno.Command("tmux", { args: ["-V"], stdout: "null", stderr: "null" })
  .output().then((o) => o.success, () => false);
if (!hasTmux) throw new Error("tests/repl_agents_test.ts needs tmux (installed by .ci/run)");

// deno-lint-ignore no-explicit-any
type Json = any;
const isChild = (r: RecordedRequest) =>
  JSON.stringify((r.body as Json).messages[0]?.content ?? "").includes("You are security-reviewer");

Deno.test("repl: a child's permission prompt is not interleaved with its parent's tool lines; /agent names how to give a variable", async () => {
  let shown!: () => void;
  const promptShown = new Promise<void>((r) => (shown = r));
  const requests: RecordedRequest[] = [];
  const server = await startModelServer({
    onRequest: (r) => requests.push(r),
    script: async (req): Promise<ScriptedReply> => {
      const mine = requests.filter((r) => isChild(r) === isChild(req)).length;
      if (isChild(req)) {
        return mine === 1
          ? { tool_calls: [{ name: "execute_command", arguments: { command: "touch made.txt" } }] }
          : { text: "child done" };
      }
      switch (mine) {
        case 1:
          return {
            tool_calls: [{
              name: "agent__spawn",
              arguments: { agent: "security-reviewer", prompt: "check" },
            }],
          };
        case 2:
          // Once the child's prompt is on screen, the parent lists a folder meanwhile.
          await promptShown;
          return { tool_calls: [{ name: "fs_ls", arguments: { path: "." } }] };
        case 3:
          return { tool_calls: [{ name: "agent__collect", arguments: {} }] };
        default:
          return { text: "ALL-DONE" };
      }
    },
  });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-repl-agents-" }));
  await Deno.mkdir(`${cwd}/.coyote/agents/checker`, { recursive: true });
  await Deno.writeTextFile(
    `${cwd}/.coyote/agents/checker/config.yaml`,
    "description: c\nvariables:\n  - {name: target}\ninstructions: check {{target}}\n",
  );
  const t = new Tmux();
  try {
    const { cmd, args } = coyoteCommand(["--no-sandbox"]);
    await t.start([cmd, ...args], { cwd, env: childEnv(env, { baseURL: server.baseURL }) });
    await t.waitFor(/› $/m);
    await t.type("please check");
    await t.keys("Enter");
    await t.waitFor(/sub-agent security-reviewer-[0-9a-f]{8} wants to run:[\s\S]*deny always/);
    shown();
    // The parent's third request means its fs_ls call has run (and been rendered, or held).
    const end = Date.now() + 30_000;
    while (requests.filter((r) => !isChild(r)).length < 3 && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const during = await t.screen();
    const legend = during.split("\n").find((l) => l.includes("deny always"))!;
    assert.match(legend, /deny always\s*$/, `nothing after the key legend:\n${during}`);
    await t.keys("n");
    const after = await t.waitFor(/ALL-DONE[\s\S]*› $/m);
    assert.match(after, /deny always\s*\n {2}→ denied\s*$/m);
    assert.match(after, /^. List/m, "the held tool line is shown once the prompt is answered");

    await t.type("/agent checker");
    await t.keys("Enter");
    const hint = await t.waitFor(/the REPL cannot set variables/);
    assert.match(hint, /needs variable target[\s\S]*coyote -a checker --agent-variable NAME VALUE/);
  } finally {
    await t.kill();
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
  }
});

Deno.test("one-shot on a terminal: Ctrl+C at a sub-agent's permission prompt cancels the run (exit 130)", async () => {
  const requests: RecordedRequest[] = [];
  const server = await startModelServer({
    onRequest: (r) => requests.push(r),
    script: (req): ScriptedReply => {
      const mine = requests.filter((r) => isChild(r) === isChild(req)).length;
      if (isChild(req)) {
        return mine === 1
          ? { tool_calls: [{ name: "execute_command", arguments: { command: "touch made.txt" } }] }
          : { text: "child done" };
      }
      if (mine === 1) {
        return {
          tool_calls: [{
            name: "agent__spawn",
            arguments: { agent: "security-reviewer", prompt: "check" },
          }],
        };
      }
      if (mine === 2) return { tool_calls: [{ name: "agent__collect", arguments: {} }] };
      return { text: "PARENT-WENT-ON" };
    },
  });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-oneshot-agents-" }));
  const t = new Tmux();
  try {
    const { cmd, args } = coyoteCommand(["--no-sandbox", "please check"]);
    await t.start([cmd, ...args], { cwd, env: childEnv(env, { baseURL: server.baseURL }) });
    await t.waitFor(/sub-agent security-reviewer-[0-9a-f]{8} wants to run:[\s\S]*deny always/);
    await t.keys("C-c");
    const end = await t.waitFor(/\[exited \d+\]/);
    assert.match(end, /\[exited 130\]/, end);
    assert.doesNotMatch(end, /PARENT-WENT-ON/);
    await assert.rejects(Deno.lstat(`${cwd}/made.txt`));
  } finally {
    await t.kill();
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
  }
});

Deno.test("repl: Ctrl+C while children run cancels them and leaves no spinner line behind", async () => {
  let release!: () => void;
  const hold = new Promise<void>((r) => (release = r));
  const requests: RecordedRequest[] = [];
  const explore = (r: RecordedRequest) =>
    JSON.stringify((r.body as Json).messages[0]?.content ?? "").includes("You are explore");
  const server = await startModelServer({
    onRequest: (r) => requests.push(r),
    script: async (req): Promise<ScriptedReply> => {
      if (explore(req)) {
        await hold; // the children are still running when Ctrl+C comes
        return { text: "late" };
      }
      const mine = requests.filter((r) => !explore(r)).length;
      if (mine === 1) {
        return {
          tool_calls: ["a", "b"].map((q) => ({
            name: "agent__spawn",
            arguments: { agent: "explore", prompt: `where is ${q}?` },
          })),
        };
      }
      if (mine === 2) return { tool_calls: [{ name: "agent__collect", arguments: {} }] };
      return { text: "answer" };
    },
  });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-repl-cancel-" }));
  const t = new Tmux();
  try {
    const { cmd, args } = coyoteCommand([]);
    await t.start([cmd, ...args], { cwd, env: childEnv(env, { baseURL: server.baseURL }) });
    await t.waitFor(/› $/m);
    await t.type("find things");
    await t.keys("Enter");
    await t.waitFor(/\d+s Collect sub-agents\n {2}↳ explore-[0-9a-f]{8} \d+s · thinking\n/);
    await t.keys("C-c");
    const after = await t.waitFor(/↳ explore-[0-9a-f]{8} cancelled[\s\S]*› $/m);
    assert.doesNotMatch(after, /\d+s Collect sub-agents/, "the spinner line is gone");
    assert.doesNotMatch(after, /↳ explore-[0-9a-f]{8} \d+s ·/, "no child's status line is left");
    assert.match(after, /^\^C$/m);
  } finally {
    release();
    await t.kill();
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
  }
});

Deno.test("repl: parallel sub-agents get a status line each (id, time, last action), capped with +N more, gone when they end", async () => {
  let release!: () => void;
  const hold = new Promise<void>((r) => (release = r));
  const requests: RecordedRequest[] = [];
  const explore = (r: RecordedRequest) =>
    JSON.stringify((r.body as Json).messages[0]?.content ?? "").includes("You are explore");
  const asks = (r: RecordedRequest) => /where is ([a-h])\?/.exec(JSON.stringify(r.body))?.[1] ?? "";
  const server = await startModelServer({
    onRequest: (r) => requests.push(r),
    script: async (req): Promise<ScriptedReply> => {
      if (explore(req)) {
        const q = asks(req);
        const first = requests.filter((r) => explore(r) && asks(r) === q).length === 1;
        // a–d list a folder first (their last action), e–h are still at their first request.
        if (first && "abcd".includes(q)) {
          return { tool_calls: [{ name: "fs_ls", arguments: { path: "." } }] };
        }
        await hold;
        return { text: `found ${q}` };
      }
      const mine = requests.filter((r) => !explore(r)).length;
      if (mine === 1) {
        return {
          tool_calls: [..."abcdefgh"].map((q) => ({
            name: "agent__spawn",
            arguments: { agent: "explore", prompt: `where is ${q}?` },
          })),
        };
      }
      if (mine === 2) return { tool_calls: [{ name: "agent__collect", arguments: {} }] };
      return { text: "ALL-FOUND" };
    },
  });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-repl-kids-" }));
  const t = new Tmux();
  try {
    const { cmd, args } = coyoteCommand([]);
    await t.start([cmd, ...args], { cwd, env: childEnv(env, { baseURL: server.baseURL }) });
    await t.waitFor(/› $/m);
    await t.type("find them all");
    await t.keys("Enter");
    // Eight running, the four listers past their first call: 5 lines, then "+3 more".
    const kid = /^ {2}↳ explore-[0-9a-f]{8} \d+s · (List \.|thinking)$/;
    // (Waited for until a lister's fs_ls shows: on a loaded machine the first frames are all
    // "thinking".)
    const during = await t.waitFor(
      /\d+s Collect sub-agents\n(?=(?: {2}↳ .*\n){0,4} {2}↳ explore-[0-9a-f]{8} \d+s · List \.\n)(?: {2}↳ explore-[0-9a-f]{8} \d+s · .*\n){5} {2}\+3 more\s*$/,
    );
    const block = during.slice(during.lastIndexOf("Collect sub-agents\n")).trimEnd().split("\n")
      .slice(1);
    assert.equal(block.length, 6, `at most 6 rows under the spinner:\n${during}`);
    for (const l of block.slice(0, 5)) assert.match(l, kid);
    assert.equal(new Set(block.slice(0, 5).map((l) => l.split(" ")[3])).size, 5, "one line each");
    assert.ok(block.some((l) => l.endsWith("· List .")), `a lister's last call:\n${during}`);
    assert.ok(
      block.some((l) => l.endsWith("· thinking")),
      `a child still at its request:\n${during}`,
    );
    release();
    const end = await t.waitFor(/ALL-FOUND[\s\S]*› $/m);
    assert.equal(end.match(/↳ explore-[0-9a-f]{8} end_turn/g)?.length, 8, end);
    assert.doesNotMatch(end, /↳ explore-[0-9a-f]{8} \d+s ·|\+\d+ more/, "no status line is left");
  } finally {
    release();
    await t.kill();
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
  }
});
