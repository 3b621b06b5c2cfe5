/**
 * Claude Code's lifecycle hooks in real runs (`coyote --headless --output-format stream-json`,
 * a subprocess of main.ts against the scripted model server): hook scripts written the way
 * Claude Code's documented examples are (python3 / node / bash reading the event's JSON on stdin,
 * answering with an exit code or `hookSpecificOutput` JSON), configured as Claude Code's settings
 * `hooks` object in config.yaml or `.claude/settings.json`. docs/hooks.md.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { childEnv, makeCoyoteEnv, parseJsonLines, runCoyote } from "./support/run_coyote.ts";
import { Renderer } from "../core/frontends/render/mod.ts";
import { acpTestEnv, finishAcp, startAcp } from "./support/acp_harness.ts";
import type { HookEvent } from "../core/protocol/types.ts";
import {
  type RecordedRequest,
  requestMessages,
  type Script,
  type ScriptedReply,
  startModelServer,
} from "./support/model_server.ts";

type HookEv = {
  sessionUpdate: "hook";
  hookEventName: string;
  decision: string;
  reason?: string;
  source: string;
  toolName?: string;
  matcher?: string;
};

interface Run {
  code: number;
  stderr: string;
  lines: Record<string, unknown>[];
  hooks: HookEv[];
  requests: RecordedRequest[];
  dir: string;
  /** The text of every message of request `i`, joined. */
  seen(i: number): string;
  result: Record<string, unknown>;
}

/**
 * Runs one headless turn in a fresh workspace with `settings` (Claude Code's `hooks` object) in
 * config.yaml (or, with `workspace`, in `.claude/settings.json`), hook scripts in `files`.
 */
async function run(o: {
  hooks?: Record<string, unknown>;
  configYaml?: string;
  claudeSettings?: Record<string, unknown>;
  files?: Record<string, string>;
  script: Script;
  prompt?: string;
  args?: string[];
  check?: (dir: string) => Promise<void>;
  /** A plugin module written to the config dir's `plugins/`. */
  plugin?: string;
  /** More environment for the run. */
  env?: Record<string, string>;
}): Promise<Run> {
  const server = await startModelServer({ script: o.script });
  const env = await makeCoyoteEnv();
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-hooks-" }));
  try {
    for (const [name, text] of Object.entries(o.files ?? {})) {
      const path = join(dir, name);
      await Deno.mkdir(join(path, ".."), { recursive: true });
      await Deno.writeTextFile(path, text, { mode: 0o755 });
    }
    const yaml = o.configYaml ?? (o.hooks ? `hooks: ${JSON.stringify(o.hooks)}\n` : "");
    await Deno.writeTextFile(join(env.configDir, "config.yaml"), yaml);
    if (o.plugin) {
      await Deno.mkdir(join(env.configDir, "plugins"), { recursive: true });
      await Deno.writeTextFile(join(env.configDir, "plugins", "hooked.ts"), o.plugin);
    }
    if (o.claudeSettings) {
      await Deno.mkdir(join(dir, ".claude"), { recursive: true });
      await Deno.writeTextFile(
        join(dir, ".claude/settings.json"),
        JSON.stringify(o.claudeSettings, null, 2),
      );
    }
    const r = await runCoyote([
      "--headless",
      "--output-format",
      "stream-json",
      ...(o.args ?? []),
      o.prompt ?? "do the task",
    ], { cwd: dir, env: childEnv(env, { baseURL: server.baseURL, extra: o.env }) });
    const lines = r.code === 2 ? [] : parseJsonLines(r.stdout);
    const hooks = lines.filter((l) => l.type === "session_update").map((l) =>
      (l as { update: HookEv }).update
    ).filter((u) => u.sessionUpdate === "hook");
    await o.check?.(dir);
    return {
      code: r.code,
      stderr: r.stderr,
      lines,
      hooks,
      requests: server.requests,
      dir,
      seen: (i) => requestMessages(server.requests[i]).map((m) => JSON.stringify(m)).join("\n"),
      result: lines.at(-1) ?? {},
    };
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

const group = (matcher: string | undefined, command: string, timeout?: number) => ({
  ...(matcher !== undefined ? { matcher } : {}),
  hooks: [{ type: "command", command, ...(timeout ? { timeout } : {}) }],
});

// The shape of Claude Code's documented Bash validator example (python3, stdin JSON, a
// permissionDecision "deny" with a reason for Claude).
const DENY_RM_PY = `#!/usr/bin/env python3
import json, sys
data = json.load(sys.stdin)
if data.get("tool_name") == "Bash" and "rm " in data.get("tool_input", {}).get("command", ""):
    print(json.dumps({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "rm is not allowed here; move files to trash/ instead"}}))
sys.exit(0)
`;

Deno.test("PreToolUse: a deny blocks the command and its reason reaches the model", async () => {
  const r = await run({
    hooks: { PreToolUse: [group("Bash", "python3 $CLAUDE_PROJECT_DIR/deny_rm.py")] },
    files: { "deny_rm.py": DENY_RM_PY, "keep.txt": "x" },
    script: [
      { tool_calls: [{ name: "execute_command", arguments: { command: "rm keep.txt" } }] },
      { text: "ok" },
    ],
    check: async (dir) => {
      assert.equal(await Deno.readTextFile(join(dir, "keep.txt")), "x", "the command did not run");
    },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.seen(1), /blocked by a PreToolUse hook: rm is not allowed here/);
  const h = r.hooks.find((h) => h.hookEventName === "PreToolUse")!;
  assert.equal(h.decision, "deny");
  assert.equal(h.toolName, "execute_command");
  assert.equal(h.matcher, "Bash");
  assert.equal(h.source, "config");
  assert.equal((r.result.denied as unknown[]).length, 1);
});

Deno.test("PreToolUse: updatedInput rewrites the call's arguments", async () => {
  const js = `let s = "";
process.stdin.on("data", (d) => s += d).on("end", () => {
  const e = JSON.parse(s);
  const cmd = e.tool_input.command.replace("one", "two");
  console.log(JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse",
    permissionDecision: "allow", updatedInput: { command: cmd } } }));
});
`;
  const r = await run({
    hooks: { PreToolUse: [group("Write|Edit|Bash", "node rewrite.js")] },
    files: { "rewrite.js": js },
    script: [
      { tool_calls: [{ name: "execute_command", arguments: { command: "echo one" } }] },
      { text: "ok" },
    ],
  });
  assert.equal(r.code, 0, r.stderr);
  const tool = requestMessages(r.requests[1]).find((m) => m.role === "tool")!;
  assert.match(String(tool.content), /two/);
  assert.doesNotMatch(String(tool.content), /one/);
  const update = r.lines.find((l) =>
    (l as { update?: { sessionUpdate?: string; rawInput?: { command?: string } } }).update
      ?.rawInput?.command === "echo two"
  );
  assert.ok(update, "the rewrite is announced as a tool_call_update");
  assert.equal(r.hooks[0].decision, "allow");
});

Deno.test("PreToolUse: exit code 2 blocks with stderr fed back to the model", async () => {
  const r = await run({
    hooks: {
      PreToolUse: [group("Write", "echo 'generated files are read-only' >&2; exit 2")],
    },
    script: [
      { tool_calls: [{ name: "fs_write", arguments: { path: "gen.txt", content: "x" } }] },
      { text: "ok" },
    ],
    check: async (dir) => {
      await assert.rejects(Deno.stat(join(dir, "gen.txt")), Deno.errors.NotFound);
    },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.seen(1), /generated files are read-only/);
  assert.equal(r.hooks[0].decision, "deny");
});

Deno.test("PostToolUse: additionalContext and a block's reason reach the next request", async () => {
  const py = `import json, sys
e = json.load(sys.stdin)
path = e["tool_input"]["file_path"]
print(json.dumps({"decision": "block", "reason": "lint failed in " + path.split("/")[-1],
  "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "formatter ran"}}))
`;
  const r = await run({
    hooks: { PostToolUse: [group("Write|Edit", "python3 post.py")] },
    files: { "post.py": py },
    script: [
      { tool_calls: [{ name: "fs_write", arguments: { path: "a.ts", content: "x" } }] },
      { text: "ok" },
    ],
  });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.seen(1), /PostToolUse hook feedback: lint failed in a\.ts/);
  assert.match(r.seen(1), /PostToolUse hook context: formatter ran/);
  assert.equal(r.hooks[0].decision, "block");
});

Deno.test("UserPromptSubmit: a block stops the prompt before any model request", async () => {
  const py = `import json, sys
e = json.load(sys.stdin)
if "password" in e["prompt"]:
    print(json.dumps({"decision": "block", "reason": "the prompt holds a secret"}))
`;
  const r = await run({
    hooks: { UserPromptSubmit: [group(undefined, "python3 ups.py")] },
    files: { "ups.py": py },
    prompt: "my password is hunter2",
    script: [{ text: "should not be asked" }],
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.requests.length, 0);
  assert.equal(r.hooks[0].decision, "block");
  assert.match(r.stderr, /blocked by a UserPromptSubmit hook: the prompt holds a secret/);
});

Deno.test("UserPromptSubmit and SessionStart: plain stdout and additionalContext reach the model", async () => {
  const r = await run({
    hooks: {
      UserPromptSubmit: [group(undefined, "echo 'Current branch: feature-x'")],
      SessionStart: [group(
        "startup",
        `echo '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"on-call: Ada"}}'`,
      )],
    },
    script: [{ text: "ok" }],
  });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.seen(0), /UserPromptSubmit hook context: Current branch: feature-x/);
  assert.match(r.seen(0), /SessionStart hook context: on-call: Ada/);
  assert.deepEqual(r.hooks.map((h) => [h.hookEventName, h.decision]), [
    ["SessionStart", "context"],
    ["UserPromptSubmit", "context"],
  ]);
});

Deno.test("SessionEnd runs when the session closes, with Claude Code's stdin fields; a prompt hook is skipped with a warning", async () => {
  let seen: Record<string, unknown> = {};
  const r = await run({
    hooks: {
      SessionEnd: [{
        hooks: [{ type: "command", command: "cat > end.json" }, {
          type: "prompt",
          prompt: "Summarise the session",
        }],
      }],
    },
    script: [{ text: "ok" }],
    check: async (dir) => {
      seen = JSON.parse(await Deno.readTextFile(join(dir, "end.json")));
    },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(seen.hook_event_name, "SessionEnd");
  assert.match(r.stderr, /hooks\.SessionEnd\[0\]\.hooks\[1\]: type "prompt" is not supported/);
  assert.equal(seen.reason, "other");
  assert.equal(seen.session_id, r.result.session_id);
  assert.equal(seen.cwd, r.dir);
  assert.equal(typeof seen.transcript_path, "string");
});

Deno.test("SubagentStop: a sub-agent's end runs it (and not the root's Stop)", async () => {
  let lines: string[] = [];
  const r = await run({
    hooks: {
      SubagentStop: [group(undefined, "cat >> stops.jsonl; echo >> stops.jsonl")],
    },
    args: ["-a", "sisyphus"],
    // The child (first user message "look") answers; the root spawns, collects, ends.
    script: (req) => {
      const msgs = requestMessages(req);
      if (msgs.find((m) => m.role === "user")?.content === "look") return { text: "found it" };
      const results = msgs.filter((m) => m.role === "tool").length;
      if (results === 0) {
        return {
          tool_calls: [{ name: "agent__spawn", arguments: { agent: "explore", prompt: "look" } }],
        };
      }
      if (results === 1) return { tool_calls: [{ name: "agent__collect", arguments: {} }] };
      return { text: "done" };
    },
    check: async (dir) => {
      lines = (await Deno.readTextFile(join(dir, "stops.jsonl"))).split("\n").filter(Boolean);
    },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(lines.length, 1, "once, for the child only");
  const e = JSON.parse(lines[0]);
  assert.equal(e.hook_event_name, "SubagentStop");
  assert.equal(e.stop_hook_active, false);
  assert.equal(e.agent, "explore");
});

Deno.test("PreCompact: runs with trigger auto before older turns are summarised", async () => {
  let seen: Record<string, unknown> = {};
  const r = await run({
    configYaml: `models: { scripted: { context_window: 2000 } }\nhooks: ${
      JSON.stringify({ PreCompact: [group("auto", "cat > compact.json")] })
    }\n`,
    script: [{ text: "ok" }],
    check: async (dir) => {
      seen = JSON.parse(await Deno.readTextFile(join(dir, "compact.json")));
    },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(seen.hook_event_name, "PreCompact");
  assert.equal(seen.trigger, "auto");
  assert.equal(seen.custom_instructions, "");
});

Deno.test("Notification: a permission question runs it (permission_prompt)", async () => {
  let seen: Record<string, unknown> = {};
  const r = await run({
    configYaml: `permissions: { ask: ["Execute(touch *)"] }\nhooks: ${
      JSON.stringify({ Notification: [group("permission_prompt", "cat > note.json")] })
    }\n`,
    script: [
      { tool_calls: [{ name: "execute_command", arguments: { command: "touch x" } }] },
      { text: "ok" },
    ],
    check: async (dir) => {
      seen = JSON.parse(await Deno.readTextFile(join(dir, "note.json")));
    },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(seen.hook_event_name, "Notification");
  assert.equal(seen.notification_type, "permission_prompt");
  assert.equal(seen.message, "Coyote needs your permission to use Bash");
});

Deno.test("a hanging hook is timed out and a junk-printing one ignored: one message each, the call runs", async () => {
  const r = await run({
    hooks: {
      PreToolUse: [
        group("Bash", "sleep 30", 1),
        group("*", "echo '{not json'"),
      ],
    },
    script: [
      { tool_calls: [{ name: "execute_command", arguments: { command: "echo ran-anyway" } }] },
      { text: "ok" },
    ],
  });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.seen(1), /ran-anyway/);
  assert.equal(r.stderr.match(/timed out after 1 s/g)?.length, 1, r.stderr);
  assert.equal(r.stderr.match(/printed something that is not JSON/g)?.length, 1, r.stderr);
  assert.deepEqual(r.hooks.map((h) => h.decision), ["error", "error"]);
});

const SETTINGS = {
  permissions: { allow: [] },
  hooks: {
    PreToolUse: [group("Bash", '"$CLAUDE_PROJECT_DIR"/.claude/hooks/no_echo.sh')],
  },
};
const NO_ECHO_SH = `#!/bin/bash
input=$(cat)
case "$input" in *'"command":"echo'*) echo "echo is banned in this repo" >&2; exit 2;; esac
exit 0
`;

Deno.test(".claude/settings.json hooks: ignored in an untrusted workspace, run when trusted", async () => {
  const script = (): ScriptedReply[] => [
    { tool_calls: [{ name: "execute_command", arguments: { command: "echo hi" } }] },
    { text: "ok" },
  ];
  const files = { ".claude/hooks/no_echo.sh": NO_ECHO_SH };
  const untrusted = await run({ claudeSettings: SETTINGS, files, script: script() });
  assert.equal(untrusted.code, 0, untrusted.stderr);
  assert.equal(untrusted.hooks.length, 0);
  assert.doesNotMatch(untrusted.seen(1), /banned/);
  assert.match(untrusted.stderr, /not trusted: ignoring .*\.claude\/settings\.json/);

  const trusted = await run({
    claudeSettings: SETTINGS,
    files,
    script: script(),
    args: ["--trust-workspace"],
  });
  assert.equal(trusted.code, 0, trusted.stderr);
  assert.match(trusted.seen(1), /echo is banned in this repo/);
  assert.equal(trusted.hooks[0].source.endsWith(".claude/settings.json"), true);
});

Deno.test("plugin hooks (SDK hooks.PreToolUse): a deny in the OS sandbox; its allow is ignored", async () => {
  const plugin = `import { definePlugin } from "@coyote/sdk";
export default definePlugin({
  name: "hooked",
  version: "1.0.0",
  hooks: {
    PreToolUse: [
      { matcher: "Bash", hooks: [{ type: "command", command: "echo 'no curl from plugins' >&2; exit 2" }] },
      { matcher: "Write", hooks: [{ type: "command", command: ${
    JSON.stringify(
      `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'`,
    )
  } }] },
    ],
  },
});
`;
  const r = await run({
    plugin,
    script: [
      {
        tool_calls: [
          { name: "execute_command", arguments: { command: "echo hi" } },
          { name: "fs_write", arguments: { path: "w.txt", content: "x" } },
        ],
      },
      { text: "ok" },
    ],
  });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.seen(1), /no curl from plugins/);
  const byTool = Object.fromEntries(r.hooks.map((h) => [h.toolName, h]));
  assert.equal(byTool.execute_command.decision, "deny");
  assert.equal(byTool.execute_command.source, "plugin hooked");
  assert.equal(byTool.fs_write.decision, "none", "a plugin may not approve");
});

Deno.test("Stop (Claude Code's shape): a block sends the agent back with the reason; continue:false ends a turn", async () => {
  const py = `import json, sys
e = json.load(sys.stdin)
assert e["hook_event_name"] == "Stop"
if not e["stop_hook_active"]:
    print(json.dumps({"decision": "block", "reason": "run the tests before stopping"}))
`;
  const stop = await run({
    hooks: { Stop: [group(undefined, "python3 stop.py")] },
    files: { "stop.py": py },
    script: [{ text: "done" }, { text: "tests pass, done" }],
  });
  assert.equal(stop.code, 0, stop.stderr);
  assert.equal(stop.requests.length, 2);
  assert.match(stop.seen(1), /run the tests before stopping/);
  assert.equal(stop.result.text, "tests pass, done");
  assert.deepEqual(stop.hooks.map((h) => [h.hookEventName, h.decision]), [["Stop", "block"]]);

  const halt = await run({
    hooks: {
      PostToolUse: [group(
        "Bash",
        `echo '{"continue": false, "stopReason": "the build is red: stopping here"}'`,
      )],
    },
    script: [
      { tool_calls: [{ name: "execute_command", arguments: { command: "echo built" } }] },
      { text: "should not be asked" },
    ],
  });
  assert.equal(halt.code, 0, halt.stderr);
  assert.equal(halt.requests.length, 1, "no request after the tool calls");
  assert.equal(halt.hooks[0].decision, "stop");
  assert.equal(halt.hooks[0].reason, "the build is red: stopping here");
});

Deno.test("PreToolUse allow: your config's hook skips the rules' ask; a workspace's allow is ignored", async () => {
  const allow =
    `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'`;
  const script = (): ScriptedReply[] => [
    { tool_calls: [{ name: "execute_command", arguments: { command: "touch made.txt" } }] },
    { text: "ok" },
  ];
  const ask = `permissions: { ask: ["Execute(touch *)"] }\n`;
  const mine = await run({
    configYaml: `${ask}hooks: ${JSON.stringify({ PreToolUse: [group("Bash", allow)] })}\n`,
    script: script(),
  });
  assert.equal(mine.code, 0, mine.stderr);
  assert.equal((mine.result.denied as unknown[]).length, 0, "approved: no question, no denial");
  assert.equal(mine.hooks[0].decision, "allow");

  const theirs = await run({
    configYaml: ask,
    claudeSettings: { hooks: { PreToolUse: [group("Bash", allow)] } },
    args: ["--trust-workspace"],
    script: script(),
  });
  assert.equal(theirs.code, 0, theirs.stderr);
  assert.equal((theirs.result.denied as unknown[]).length, 1, "headless denies the ask");
  assert.equal(theirs.hooks[0].decision, "none");
  assert.match(theirs.hooks[0].reason ?? "", /allow ignored/);
});

Deno.test("where hooks run: your config's as you (it writes your home), a workspace's inside the OS sandbox (it cannot)", async () => {
  const home = await Deno.makeTempDir({ prefix: "coyote-hook-home-" });
  try {
    const probe = (name: string) => group("Bash", `touch "$HOME/${name}" 2>/dev/null; exit 0`);
    const r = await run({
      hooks: { PreToolUse: [probe("from-config")] },
      claudeSettings: { hooks: { PreToolUse: [probe("from-workspace")] } },
      args: ["--trust-workspace"],
      env: { HOME: home },
      script: [
        { tool_calls: [{ name: "execute_command", arguments: { command: "echo ran" } }] },
        { text: "ok" },
      ],
    });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.hooks.map((h) => h.decision), ["none", "none"], "both ran to exit 0");
    await Deno.stat(join(home, "from-config"));
    await assert.rejects(Deno.stat(join(home, "from-workspace")), Deno.errors.NotFound);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("malformed hooks: an error naming the file and the field", async () => {
  const bad = await run({
    configYaml: "hooks:\n  PreToolUse:\n    - matcher: '(Bash'\n      hooks: [{command: x}]\n",
    script: [],
  });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /config\.yaml: hooks\.PreToolUse\[0\]\.matcher: not a valid regular/);
  const noCommand = await run({
    claudeSettings: {
      hooks: { PostToolUse: [{ matcher: "Write", hooks: [{ type: "command" }] }] },
    },
    args: ["--trust-workspace"],
    script: [],
  });
  assert.equal(noCommand.code, 2);
  assert.match(
    noCommand.stderr,
    /\.claude\/settings\.json: hooks\.PostToolUse\[0\]\.hooks\[0\]\.command: expected a shell command/,
  );
});

Deno.test("the renderer shows a hook's decision and system message, not its silent or failed runs", () => {
  let err = "";
  const r = new Renderer({
    out: () => {},
    err: (t) => (err += t),
    color: false,
    cwd: "/w",
    now: () => 0,
  });
  const ev = (h: Partial<HookEvent>) =>
    r.onEnvelope({
      session_id: "s1",
      agent: "coyote",
      agent_id: "coyote-1",
      seq: 1,
      update: {
        sessionUpdate: "hook",
        hookEventName: "PreToolUse",
        command: "check.sh",
        source: "config",
        decision: "none",
        ...h,
      },
    });
  ev({ decision: "deny", reason: "rm is not allowed\u001b[2J" });
  ev({ decision: "none" });
  ev({ decision: "error", reason: "timed out after 1 s" });
  ev({ hookEventName: "PostToolUse", decision: "context", systemMessage: "formatted 2 files" });
  assert.equal(
    err,
    "↪ PreToolUse hook denied: rm is not allowed\\u001b[2J\n↪ PostToolUse hook formatted 2 files\n",
  );
});

Deno.test("ACP: a hook's decision reaches the client as an agent_thought_chunk with _meta.coyote", async () => {
  const e = await acpTestEnv([
    { tool_calls: [{ name: "execute_command", arguments: { command: "echo hi" } }] },
    { text: "ok" },
  ], "coyote-acp-hooks");
  try {
    await Deno.mkdir(e.env.COYOTE_CONFIG_DIR, { recursive: true });
    await Deno.writeTextFile(
      join(e.env.COYOTE_CONFIG_DIR, "config.yaml"),
      `hooks: ${
        JSON.stringify({ PreToolUse: [group("Bash", "echo 'not in the editor' >&2; exit 2")] })
      }\n`,
    );
    const h = await startAcp({ env: e.env });
    try {
      const s = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
      await h.agent.request("session/prompt", {
        sessionId: s.sessionId,
        prompt: [{ type: "text", text: "say hi" }],
      });
      const hook = h.updatesFor(s.sessionId).find((u) =>
        u.sessionUpdate === "agent_thought_chunk" &&
        (u._meta as { coyote?: { event?: string } } | undefined)?.coyote?.event === "hook"
      ) as { content: { text: string }; _meta: { coyote: Record<string, unknown> } } | undefined;
      assert.ok(hook, "a hook thought");
      assert.equal(hook._meta.coyote.hookEventName, "PreToolUse");
      assert.equal(hook._meta.coyote.decision, "deny");
      assert.match(hook.content.text, /hook PreToolUse deny: not in the editor/);
      assert.ok(
        !h.updatesFor(s.sessionId).some((u) => (u.sessionUpdate as string) === "hook"),
        "no sessionUpdate ACP does not know",
      );
    } finally {
      await finishAcp(h);
    }
  } finally {
    await e.close();
  }
});
