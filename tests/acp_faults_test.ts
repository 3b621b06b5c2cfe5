/**
 * Issue 10, "ACP": field faults of `coyote --acp-server`, each against a real subprocess driven
 * by the official ACP client (tests/support/acp_harness.ts) and the scripted model server.
 * Kinds: oversized input, children writing into the protocol stream, a bad config.yaml
 * before `initialize`, crash replay of unfinished tool calls, `user__*` questions of every
 * kind (permission fallback and elicitation forms, secret marker, escalation timeout),
 * `$/cancel_request`, session titles and the slash-command list.
 */
import assert from "node:assert/strict";
import type * as acp from "@agentclientprotocol/sdk";
import { acpTestEnv, finishAcp, startAcp, waitFor } from "./support/acp_harness.ts";
import type { ScriptedReply } from "./support/model_server.ts";
import { BUILTIN_COMMANDS } from "../core/frontends/slash_commands.ts";
import { runCoyote } from "./support/run_coyote.ts";

const setup = (script: ScriptedReply[]) => acpTestEnv(script, "coyote-acpf");
const finish = finishAcp;

type Upd = acp.SessionUpdate;
const finalStatus = (u: Upd[], id: string) => {
  let st: string | undefined | null;
  for (const x of u) {
    if (
      (x.sessionUpdate === "tool_call" || x.sessionUpdate === "tool_call_update") &&
      x.toolCallId === id && x.status
    ) st = x.status;
  }
  return st;
};
const toolCallIds = (u: Upd[]) =>
  u.filter((x) => x.sessionUpdate === "tool_call").map((x) =>
    (x as { toolCallId: string }).toolCallId
  );
/** The text of each completed tool call's result, in order. */
const results = (u: Upd[]) =>
  u.filter((x) => x.sessionUpdate === "tool_call_update" && x.status === "completed")
    .map((x) => JSON.stringify((x as { content?: unknown }).content ?? ""));

Deno.test("acp faults: a line over 32 MiB is refused with -32600 for its id and the agent keeps running", async () => {
  const e = await setup([{ text: "still here" }]);
  try {
    const h = await startAcp({ env: e.env });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
      const huge = "x".repeat(33 * 1024 * 1024);
      await assert.rejects(
        h.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: huge }] }),
        (err: { code?: number; message?: string }) =>
          err.code === -32600 && /33554432-byte limit/.test(String(err.message)),
      );
      // Same process, same session: the next prompt is answered.
      const r = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "hello" }],
      });
      assert.equal(r.stopReason, "end_turn");
      assert.match(h.stderr(), /refused an ACP message of \d+ bytes/);
      assert.equal(e.bodies().length, 1, "the oversized prompt never reached the model");
    } finally {
      await finish(h);
    }
  } finally {
    await e.close();
  }
});

Deno.test("acp faults: a plugin's child with inherited stdio writes to stderr, never into the protocol stream", async () => {
  const e = await setup([{ tool_calls: [{ name: "spawn_echo", arguments: {} }] }, {
    text: "done",
  }]);
  try {
    const plugin = new URL("./fixtures/acp/spawn_plugin.ts", import.meta.url).pathname;
    const h = await startAcp({
      env: e.env,
      args: ["--plugin", plugin, "--allow", "Execute(echo:*)"],
    });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
      const r = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "spawn" }],
      });
      assert.equal(r.stopReason, "end_turn");
      const upd = h.updatesFor(sessionId);
      assert.equal(finalStatus(upd, toolCallIds(upd)[0]), "completed", h.stderr().slice(-1500));
      assert.ok(results(upd).some((x) => x.includes("exits 0 0")), JSON.stringify(results(upd)));
    } finally {
      await finish(h);
    }
    assert.equal(h.lines.filter((l) => l.includes("SPAWNED-JUNK")).length, 0);
    assert.match(h.stderr(), /SPAWNED-JUNK-default/);
    assert.match(h.stderr(), /SPAWNED-JUNK-inherit/);
  } finally {
    await e.close();
  }
});

Deno.test("headless stream-json: a plugin's child with inherited stdio cannot write into the event stream", async () => {
  const e = await setup([{ tool_calls: [{ name: "spawn_echo", arguments: {} }] }, {
    text: "done",
  }]);
  try {
    const plugin = new URL("./fixtures/acp/spawn_plugin.ts", import.meta.url).pathname;
    const r = await runCoyote([
      "--plugin",
      plugin,
      "--allow",
      "Execute(echo:*)",
      "--output-format",
      "stream-json",
      "spawn",
    ], {
      cwd: e.ws,
      env: {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        HOME: Deno.env.get("HOME") ?? "/tmp",
        ...(Deno.env.get("DENO_DIR") ? { DENO_DIR: Deno.env.get("DENO_DIR")! } : {}),
        ...e.env,
      },
    });
    assert.equal(r.code, 0, r.stderr.slice(-1500));
    for (const line of r.stdout.split("\n").filter(Boolean)) JSON.parse(line);
    assert.ok(!r.stdout.includes("SPAWNED-JUNK"));
    assert.match(r.stderr, /SPAWNED-JUNK-default/);
    assert.match(r.stdout, /exits 0 0/);
  } finally {
    await e.close();
  }
});

Deno.test("acp faults: a bad config.yaml answers initialize and is reported from session/new", async () => {
  const e = await setup([]);
  try {
    await Deno.mkdir(`${e.data}/config`, { recursive: true });
    await Deno.writeTextFile(`${e.data}/config/config.yaml`, "model: [unclosed\n  oops: :\n");
    const h = await startAcp({ env: e.env });
    try {
      assert.equal(h.init?.protocolVersion, 1);
      await assert.rejects(
        h.agent.request("session/new", { cwd: e.ws, mcpServers: [] }),
        (err: { code?: number; message?: string }) =>
          err.code === -32603 && /^Configuration error: config error in .*config\.yaml/
            .test(String(err.message)),
      );
      assert.match(h.stderr(), /config\.yaml/);
    } finally {
      await finish(h);
    }
  } finally {
    await e.close();
  }
});

Deno.test("acp faults: after a crash mid-call, session/load replays the unfinished call as failed", async () => {
  const marker = `sleep ${51 + Math.floor(Math.random() * 1000) / 1000}`;
  const e = await setup([{
    tool_calls: [{ name: "execute_command", arguments: { command: marker } }],
  }]);
  try {
    const h = await startAcp({ env: e.env, args: ["--allow", "Execute(sleep:*)"] });
    const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
    const p = h.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "run" }],
    });
    p.catch(() => {});
    await waitFor(
      () => h.updatesFor(sessionId).some((u) => u.sessionUpdate === "tool_call_update"),
      10_000,
      "the call to start",
    );
    // A crash: no shutdown, no final update.
    h.child.kill("SIGKILL");
    await h.close();
    // The killed agent could not end its command: end it here, by pid.
    const ps = new Deno.Command("ps", { args: ["-eo", "pid=,args="], stdout: "piped" })
      .outputSync();
    for (const line of new TextDecoder().decode(ps.stdout).split("\n")) {
      const [pid, ...args] = line.trim().split(/\s+/);
      if (args.join(" ") === marker) {
        try {
          Deno.kill(Number(pid), "SIGKILL");
        } catch { /* gone */ }
      }
    }

    const h2 = await startAcp({ env: e.env });
    try {
      await h2.agent.request("session/load", { sessionId, cwd: e.ws, mcpServers: [] });
      const upd = h2.updatesFor(sessionId);
      const [id] = toolCallIds(upd);
      assert.ok(id, "the tool call is replayed");
      assert.equal(finalStatus(upd, id), "failed");
      assert.ok(JSON.stringify(upd).includes("did not finish"));
    } finally {
      await finish(h2);
    }
  } finally {
    await e.close();
  }
});

Deno.test("acp faults: every user__* kind reaches a client without forms; secret marker; timeout → needs_human", async () => {
  const e = await setup([
    {
      tool_calls: [{
        name: "user__checkbox",
        arguments: { question: "Which files?", options: ["a.txt", "b.txt", "c.txt"] },
      }],
    },
    { tool_calls: [{ name: "user__input", arguments: { question: "Branch name?" } }] },
    {
      tool_calls: [{
        name: "user__input",
        arguments: { question: "Enter the device code shown at github.com/login/device" },
      }],
    },
    { tool_calls: [{ name: "user__confirm", arguments: { question: "Deploy now?" } }] },
    { text: "ok" },
  ]);
  try {
    const h = await startAcp({
      env: { ...e.env, COYOTE_QUESTION_TIMEOUT_MS: "400" },
      // checkbox: c, a, Done; input: answer in chat; device code: skipped; confirm: never answered.
      permissionAnswers: ["option-2", "option-0", "done", "answer_in_chat", "skip", "hold"],
    });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
      const r = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "ask me" }],
      });
      assert.equal(r.stopReason, "end_turn");
      const reqs = h.permissionRequests;
      assert.equal(reqs.length, 6);
      assert.deepEqual(reqs[0].options.map((o) => o.name), ["a.txt", "b.txt", "c.txt", "Done"]);
      assert.deepEqual(reqs[1].options.map((o) => o.name), ["a.txt", "b.txt", "Done"]);
      assert.match(reqs[2].toolCall.title ?? "", /selected so far: c\.txt, a\.txt/);
      const meta = (i: number) =>
        (reqs[i]._meta as { coyote?: { classification?: string; question?: string } })?.coyote;
      assert.deepEqual(meta(3), { question: "input", classification: "plain" });
      assert.deepEqual(meta(4), { question: "input", classification: "secret" });
      const upd = h.updatesFor(sessionId);
      const out = results(upd);
      assert.ok(
        out[0].includes('[\\\\\\"c.txt\\\\\\",\\\\\\"a.txt\\\\\\"]') || out[0].includes("c.txt"),
        out[0],
      );
      assert.match(out[1], /answer in their next message/);
      assert.match(out[2], /needs_human/);
      // The unanswered confirm: withdrawn after the escalation timeout, headless answer.
      assert.match(out[3], /needs_human/);
      assert.match(out[3], /no answer within/);
    } finally {
      await finish(h);
    }
  } finally {
    await e.close();
  }
});

Deno.test("acp faults: a client with elicitation forms gets input and checkbox as forms", async () => {
  const e = await setup([
    { tool_calls: [{ name: "user__input", arguments: { question: "Your password?" } }] },
    {
      tool_calls: [{
        name: "user__checkbox",
        arguments: { question: "Pick", options: ["x", "y", "z"] },
      }],
    },
    { text: "ok" },
  ]);
  try {
    const h = await startAcp({
      env: e.env,
      clientCapabilities: { elicitation: { form: {} } } as acp.ClientCapabilities,
      elicitationAnswers: [
        { action: "accept", content: { answer: "hunter2-typed" } },
        { action: "accept", content: { answer: ["x", "z"] } },
      ],
    });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
      const r = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "ask" }],
      });
      assert.equal(r.stopReason, "end_turn");
      assert.equal(h.permissionRequests.length, 0);
      assert.equal(h.elicitations.length, 2, JSON.stringify(results(h.updatesFor(sessionId))));
      const [a, b] = h.elicitations as {
        mode: string;
        requestedSchema: { properties: { answer: { type: string; items?: { enum: string[] } } } };
        _meta: { coyote: { classification: string } };
      }[];
      assert.equal(a.mode, "form");
      assert.equal(a.requestedSchema.properties.answer.type, "string");
      assert.equal(a._meta.coyote.classification, "secret");
      assert.equal(b.requestedSchema.properties.answer.type, "array");
      assert.deepEqual(b.requestedSchema.properties.answer.items?.enum, ["x", "y", "z"]);
      const out = results(h.updatesFor(sessionId));
      assert.match(out[0], /hunter2-typed/);
      assert.match(out[1], /x.*z/);
    } finally {
      await finish(h);
    }
  } finally {
    await e.close();
  }
});

Deno.test("acp faults: $/cancel_request cancels a running prompt; titles; the slash-command list; /help", async () => {
  const e = await setup([
    { text: "slow ".repeat(200), chunk_size: 5, chunk_delay_ms: 40 },
    { text: "second" },
  ]);
  try {
    const h = await startAcp({ env: e.env });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
      await waitFor(
        () => h.updatesFor(sessionId).some((u) => u.sessionUpdate === "available_commands_update"),
        5000,
        "available_commands_update",
      );
      const cmds = h.updatesFor(sessionId).find((u) =>
        u.sessionUpdate === "available_commands_update"
      ) as { availableCommands: acp.AvailableCommand[] };
      assert.deepEqual(
        cmds.availableCommands.map((c) => c.name),
        BUILTIN_COMMANDS.map((c) => c.name),
      );
      for (
        const n of ["help", "agent", "model", "session", "skill", "mcp", "tools", "compact"]
      ) assert.ok(cmds.availableCommands.some((c) => c.name === n), n);
      assert.equal(cmds.availableCommands.find((c) => c.name === "model")?.input?.hint, "model id");

      const ac = new AbortController();
      const p = h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "Write a   long\nessay" }],
      }, { cancellationSignal: ac.signal });
      await waitFor(
        () => h.updatesFor(sessionId).some((u) => u.sessionUpdate === "agent_message_chunk"),
        10_000,
        "streaming",
      );
      ac.abort();
      assert.equal((await p).stopReason, "cancelled");
      await waitFor(
        () => h.updatesFor(sessionId).some((u) => u.sessionUpdate === "session_info_update"),
        5000,
        "session_info_update",
      );
      const info = h.updatesFor(sessionId).find((u) =>
        u.sessionUpdate === "session_info_update"
      ) as { title?: string };
      assert.equal(info.title, "Write a long essay");

      const before = e.bodies().length;
      const help = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "/help" }],
      });
      assert.equal(help.stopReason, "end_turn");
      assert.equal(e.bodies().length, before, "/help does not reach the model");
      const texts = h.updatesFor(sessionId).filter((u) => u.sessionUpdate === "agent_message_chunk")
        .map((u) => (u as { content: { text?: string } }).content.text ?? "").join("");
      assert.match(texts, /\/compact <what to keep> — Summarise/);
      // Text that only starts with a slash is a normal prompt.
      const r = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "/etc/hosts is what?" }],
      });
      assert.equal(r.stopReason, "end_turn");
    } finally {
      await finish(h);
    }
  } finally {
    await e.close();
  }
});

Deno.test("acp faults: built-in slash commands answer without the model", async () => {
  const e = await setup([{ text: "one turn" }]);
  try {
    await Deno.mkdir(`${e.ws}/.coyote/skills/tidy`, { recursive: true });
    await Deno.writeTextFile(
      `${e.ws}/.coyote/skills/tidy/SKILL.md`,
      "---\nname: tidy\ndescription: Tidy things up\n---\nTIDY-SKILL-BODY\n",
    );
    const h = await startAcp({ env: e.env });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
      const ask = async (text: string) => {
        const before = h.updatesFor(sessionId).length;
        const r = await h.agent.request("session/prompt", {
          sessionId,
          prompt: [{ type: "text", text }],
        });
        assert.equal(r.stopReason, "end_turn");
        return h.updatesFor(sessionId).slice(before).filter((u) =>
          u.sessionUpdate === "agent_message_chunk"
        ).map((u) => (u as { content: { text?: string } }).content.text ?? "").join("");
      };
      assert.match(await ask("/tools"), /^fs_read$/m);
      assert.match(await ask("/cost"), /No model requests yet/);
      assert.equal(await ask("hello"), "one turn");
      assert.match(await ask("/cost"), /prompt \+ \d+ completion tokens in 1 model request/);
      assert.equal(await ask("/todo"), "No plan yet.");
      assert.match(await ask("/skill"), /tidy — Tidy things up/);
      assert.match(await ask("/clear"), /terminal REPL/);
      assert.match(await ask("/model other-model"), /model: other-model/);
      assert.match(await ask("/session"), new RegExp(`session ${sessionId}`));
      assert.match(await ask("/mcp"), /No MCP servers/);
      assert.equal(e.bodies().length, 1, "only the plain prompt reached the model");
    } finally {
      await finish(h);
    }
  } finally {
    await e.close();
  }
});

Deno.test("keepChildrenOffStdout: default and inherited stdout of a child go to stderr; piped stays piped", async () => {
  const stdio = new URL("../core/frontends/acp/stdio.ts", import.meta.url).href;
  const code = `
    import { keepChildrenOffStdout } from "${stdio}";
    keepChildrenOffStdout();
    await new Deno.Command("echo", { args: ["A-default"] }).spawn().status;
    await new Deno.Command("echo", { args: ["B-inherit"], stdout: "inherit" }).spawn().status;
    await new Deno.Command("echo", { args: ["C-inherit-output"], stdout: "inherit" }).output();
    const p = await new Deno.Command("echo", { args: ["D-piped"] }).output();
    console.error("piped:" + new TextDecoder().decode(p.stdout).trim());
    console.error("instanceof:" + (new Deno.Command("true") instanceof Deno.Command));
  `;
  const out = await new Deno.Command("deno", {
    args: ["eval", "--ext=ts", code],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  assert.equal(stdout, "", "nothing reached fd 1");
  for (
    const s of ["A-default", "B-inherit", "C-inherit-output", "piped:D-piped", "instanceof:true"]
  ) {
    assert.ok(stderr.includes(s), `${s} in ${stderr}`);
  }
});

Deno.test("acp output limit: an update over the clients' message limit is sent reduced", async () => {
  const { limitUpdate, MAX_TEXT_CHARS, MAX_UPDATE_CHARS } = await import(
    "../core/frontends/acp/output_limit.ts"
  );
  const small: acp.SessionUpdate = {
    sessionUpdate: "tool_call_update",
    toolCallId: "a",
    status: "completed",
    rawOutput: { ok: true },
  };
  assert.equal(limitUpdate(small), small);
  const big = "z".repeat(MAX_UPDATE_CHARS);
  const r = limitUpdate({
    sessionUpdate: "tool_call_update",
    toolCallId: "b",
    status: "completed",
    rawOutput: { text: big },
    content: [{ type: "content", content: { type: "text", text: big } }],
  }) as Record<string, unknown> & { content: { content: { text: string } }[] };
  assert.equal(r.rawOutput, undefined);
  assert.equal(r.status, "completed");
  assert.ok(r.content[0].content.text.length < MAX_TEXT_CHARS + 200);
  assert.match(r.content[0].content.text, /more characters not sent/);
  assert.deepEqual((r._meta as { coyote: unknown }).coyote, { truncated: true });
  assert.ok(JSON.stringify(r).length <= MAX_UPDATE_CHARS);
});
