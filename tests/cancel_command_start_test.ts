/**
 * A cancel at any moment of a command's start ends the turn cancelled and leaves no process of
 * the command behind (the REPL's Ctrl+C right after "sleep 30" shows, ACP `session/cancel`,
 * headless SIGINT all abort the same engine signal). Real parts: the engine against the scripted
 * model server, the real `execute_command` tool under the session's real bwrap sandbox
 * (core/policy/sandbox/mod.ts `CommandSandbox`, with its process limit: the nested setup), and
 * the tree's marker variable (plugins/exec/tree.ts) to count what survived. The guard is an
 * allow-all `PolicyLike` (the sandbox decides what the command may do).
 *
 * The turn is cancelled (1) while the checkpoint before the turn's first change runs
 * (`EngineOptions.beforeChange`, issue 18) — the abort event fired before the call's own signal
 * listened, so the command started anyway and ran to its end — and (2) the moment the command's
 * tree is registered, while bwrap is still setting up.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Engine, type ModelClient, type PolicyLike } from "../core/engine/mod.ts";
import { ToolRegistry } from "../core/tools/registry.ts";
import { createProvider } from "../core/provider/provider.ts";
import { TranscriptWriter } from "../core/transcript/writer.ts";
import { Policy } from "../core/policy/policy.ts";
import { CommandSandbox, detectBackend } from "../core/policy/sandbox/mod.ts";
import { type CommandLauncher, makeExecuteCommandTool } from "../plugins/exec/mod.ts";
import { pidsWithEnv, TREE_MARKER } from "../plugins/exec/tree.ts";
import type { ToolAccess } from "../sdk/mod.ts";
import type { SessionEvent } from "../core/protocol/types.ts";
import { startModelServer } from "./support/model_server.ts";

const allowAll: PolicyLike = {
  evaluate: (access: ToolAccess) =>
    Promise.resolve({ decision: "allow" as const, reason: "test", access }),
  addRule: () => {},
};

async function world(
  hooks: {
    beforeChange?: (abort: () => void) => Promise<void>;
    started?: (abort: () => void) => void;
  },
) {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed for these tests (.ci/run installs bubblewrap)");
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-cancel-start-" }));
  const ws = join(root, "ws");
  for (const d of [ws, join(root, "cfg"), join(root, "home")]) {
    await Deno.mkdir(d, { recursive: true });
  }
  const policy = Policy.create({}, { allow: [], deny: [] }, {
    workspace: ws,
    configDir: join(root, "cfg"),
    home: join(root, "home"),
  });
  const sb = await CommandSandbox.create(policy, { mode: "auto", autoAllow: true });
  const ctrl = new AbortController();
  const abort = () => ctrl.abort(new Error("interrupted"));
  const markers: string[] = [];
  // The session's sandbox as the launcher; only told, besides, which trees started.
  const launcher: CommandLauncher = {
    prepare: (command, cwd, shell) => sb.prepare(command, cwd, shell),
    started(tree) {
      markers.push(tree.marker);
      sb.started(tree);
      hooks.started?.(abort);
    },
    finished: (tree) => sb.finished(tree),
  };
  const server = await startModelServer({
    script: [
      { tool_calls: [{ id: "s1", name: "execute_command", arguments: { command: "sleep 30" } }] },
      { text: "the model was asked again: the turn was not cancelled" },
    ],
  });
  const transcript = TranscriptWriter.create(root, {
    id: "s1",
    cwd: ws,
    created: new Date().toISOString(),
    model: "scripted",
    agent: "test",
  });
  const engine = new Engine({
    sessionId: "s1",
    cwd: ws,
    client: createProvider({
      baseURL: server.baseURL,
      apiKey: "k",
      model: "scripted",
      timeoutMs: 5000,
      maxRetries: 0,
      retryBaseMs: 1,
    }) as unknown as ModelClient,
    model: "scripted",
    registry: new ToolRegistry([makeExecuteCommandTool(launcher)]),
    policy: allowAll,
    permission: () => Promise.resolve("reject_once"),
    systemPrompt: "You are a test.",
    maxTurns: 4,
    transcript,
    log: () => {},
    ...(hooks.beforeChange ? { beforeChange: () => hooks.beforeChange!(abort) } : {}),
  });
  const events: SessionEvent[] = [];
  return {
    markers,
    events,
    run: () =>
      engine.prompt("wait a while", { signal: ctrl.signal, onEvent: (e) => events.push(e) }),
    survivors: () => markers.flatMap((m) => pidsWithEnv(`${TREE_MARKER}=${m}`)),
    async close() {
      // Whatever a failing run left: ended here, never by the next test.
      for (const pid of markers.flatMap((m) => pidsWithEnv(`${TREE_MARKER}=${m}`))) {
        try {
          Deno.kill(pid, "SIGKILL");
        } catch { /* gone */ }
      }
      sb.close();
      transcript.close();
      await server.close();
      await Deno.remove(root, { recursive: true }).catch(() => {});
    },
  };
}

function lastStatus(events: SessionEvent[], id: string): string | undefined {
  const u = events.filter((e) => e.sessionUpdate === "tool_call_update" && e.toolCallId === id);
  return (u.at(-1) as { status?: string } | undefined)?.status;
}

Deno.test("cancel during the checkpoint before execute_command: cancelled, the command never starts", async () => {
  const w = await world({
    // The checkpoint takes a moment (git); the user's Ctrl+C lands in it.
    beforeChange: async (abort) => {
      await new Promise((r) => setTimeout(r, 10));
      abort();
      await new Promise((r) => setTimeout(r, 10));
    },
  });
  try {
    const r = await w.run();
    assert.equal(r.stopReason, "cancelled");
    assert.deepEqual(w.markers, [], "no process tree was started after the cancel");
    assert.deepEqual(w.survivors(), []);
    assert.equal(lastStatus(w.events, "s1"), "failed");
  } finally {
    await w.close();
  }
});

Deno.test("cancel while the sandboxed command's tree starts: cancelled, no process of it survives", async () => {
  // At once (bwrap just spawned), then at a few points of the sandbox's setup and the command.
  for (const after of [-1, 0, 5, 20, 60]) {
    const w = await world({
      started: (abort) => after < 0 ? abort() : setTimeout(abort, after),
    });
    try {
      const r = await w.run();
      assert.equal(r.stopReason, "cancelled", `cancel ${after} ms after the start`);
      assert.equal(w.markers.length, 1, "the command was started");
      assert.deepEqual(w.survivors(), [], `no process of the tree is left (${after} ms)`);
      assert.equal(lastStatus(w.events, "s1"), "failed");
    } finally {
      await w.close();
    }
  }
});
