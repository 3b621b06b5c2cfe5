/**
 * The slash commands of issue 19 in the REPL, in a real pseudo-terminal (tmux), read off the
 * screen: Tab completes a custom command (a namespaced one too) and running it sends its expanded
 * prompt to the scripted model server; `/status` shows model, agent, workspace, trust, sandbox,
 * tokens and MCP; a mistyped command gets a did-you-mean and costs no model request; `/resume`
 * opens the session picker (arrow keys, Enter) and continues the picked session; `coyote -r`
 * without an id on a terminal opens the same picker (a number picks).
 */
import assert from "node:assert/strict";
import { requestMessages, startModelServer } from "./support/model_server.ts";
import { childEnv, coyoteCommand, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";
import { Tmux } from "./support/tmux.ts";

const hasTmux = await new Deno.Command("tmux", { args: ["-V"], stdout: "null", stderr: "null" })
  .output().then((o) => o.success, () => false);
if (!hasTmux) {
  throw new Error("tests/slash_commands_repl_test.ts needs tmux (installed by .ci/run)");
}

const lastUserText = (r: { body: unknown }) =>
  JSON.stringify(
    requestMessages(r as Parameters<typeof requestMessages>[0]).filter((m) => m.role === "user")
      .at(-1)?.content ?? "",
  );

Deno.test("repl: Tab completes a custom command and runs it expanded; /status; did-you-mean; /resume picker", async () => {
  const server = await startModelServer({
    script: (req) => ({ text: `REPLY-${req.index}` }),
  });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-slash-repl-" }));
  await Deno.mkdir(`${env.configDir}/commands/frontend`, { recursive: true });
  await Deno.writeTextFile(
    `${env.configDir}/commands/fix-issue.md`,
    "---\ndescription: Fix an issue\nargument-hint: [number]\n---\nPlease fix issue number $1 now.\n",
  );
  await Deno.writeTextFile(
    `${env.configDir}/commands/frontend/component.md`,
    "Build the $ARGUMENTS component.\n",
  );
  const envVars = childEnv(env, { baseURL: server.baseURL });
  // Two stored sessions of this workspace for the picker (headless runs).
  for (const word of ["ALPHA-SESSION", "BETA-SESSION"]) {
    const r = await runCoyote(["--headless", "--output-format", "json", `remember ${word}`], {
      cwd,
      env: envVars,
    });
    assert.equal(r.code, 0, r.stderr);
  }
  const t = new Tmux();
  try {
    const { cmd, args } = coyoteCommand(["--no-sandbox"]);
    await t.start([cmd, ...args], { cwd, env: envVars });
    await t.waitFor(/› $/m);

    // /help lists the custom commands with their description and hint.
    await t.type("/help");
    await t.keys("Enter");
    await t.waitFor(/\/fix-issue \[number\]\s+Fix an issue \(user\)/);
    await t.waitFor(/\/frontend:component\s+Build the \$ARGUMENTS component\. \(user:frontend\)/);

    // Tab completion of a custom command (after the session is open, the list is loaded).
    await t.type("/fix-i");
    await t.keys("Tab");
    await t.waitFor(/› \/fix-issue$/m);
    await t.type(" 42");
    const before = server.requests.length;
    await t.keys("Enter");
    await t.waitFor(new RegExp(`REPLY-${before}`));
    assert.equal(server.requests.length, before + 1);
    assert.match(lastUserText(server.requests.at(-1)!), /Please fix issue number 42 now\./);

    await t.type("/frontend:comp");
    await t.keys("Tab");
    await t.waitFor(/› \/frontend:component$/m);
    await t.type(" Button");
    await t.keys("Enter");
    await t.waitFor(new RegExp(`REPLY-${before + 1}`));
    assert.match(lastUserText(server.requests.at(-1)!), /Build the Button component\./);

    // /status
    await t.type("/status");
    await t.keys("Enter");
    const status = await t.waitFor(/commands\s+2 custom/);
    assert.match(status, /^model\s+scripted \(context window \d+ tokens\)/m);
    assert.match(status, new RegExp(`^provider\\s+${server.baseURL}$`, "m"));
    assert.match(status, /^agent\s+\S+/m);
    assert.match(
      status,
      new RegExp(`^workspace\\s+${cwd.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`, "m"),
    );
    assert.match(status, /^trust\s+not trusted/m);
    assert.match(status, /^sandbox\s+off/m);
    assert.match(status, /^mode\s+(plan|default|accept-edits|auto)$/m);
    assert.match(status, /^tokens\s+\d+ \(\d+ in, \d+ out\) in 2 model request\(s\)/m);
    assert.match(status, /^mcp\s+no servers/m);

    // A mistyped command: a did-you-mean, no model request.
    const n = server.requests.length;
    await t.type("/stauts");
    await t.keys("Enter");
    await t.waitFor(
      /unknown command \/stauts \(did you mean \/status\?\); \/help lists the commands/,
    );
    await t.type("/fix-isue 1");
    await t.keys("Enter");
    await t.waitFor(/unknown command \/fix-isue \(did you mean \/fix-issue\?\)/);
    assert.equal(server.requests.length, n);

    // /resume: the picker lists the other sessions, newest first; Down then Enter picks the
    // older one (ALPHA), and the next turn carries its conversation.
    await t.type("/resume");
    await t.keys("Enter");
    const picker = await t.waitFor(
      /Resume which session\?[\s\S]*1\. \S{8} .*remember BETA-SESSION[\s\S]*2\. \S{8} .*remember ALPHA-SESSION/,
    );
    // It names the session it would leave, and after the pick the one it resumed.
    const here = picker.match(/^session\s+([0-9a-f-]{36})$/m)?.[1];
    assert.ok(here, picker);
    assert.match(picker, new RegExp(`Resume which session\\? \\(this one is ${here.slice(0, 8)};`));
    await t.keys("Down");
    await t.waitFor(/› 2\. \S{8} .*remember ALPHA-SESSION/);
    await t.keys("Enter");
    await t.waitFor(/^resumed session [0-9a-f-]{36}: remember ALPHA-SESSION$/m);
    await t.type("which word?");
    const asked = server.requests.length;
    await t.keys("Enter");
    // This turn's own reply (an earlier REPLY on the screen would match a looser pattern).
    await t.waitFor(new RegExp(`REPLY-${asked}[\\s\\S]*› $`, "m"));
    const sent = JSON.stringify(requestMessages(server.requests.at(-1)!));
    assert.match(sent, /ALPHA-SESSION/);
    assert.doesNotMatch(sent, /BETA-SESSION/);
  } finally {
    await t.kill();
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
  }
});

Deno.test("coyote -r without an id on a terminal opens the session picker (a number picks); off a terminal it continues the latest", async () => {
  const server = await startModelServer({ script: (req) => ({ text: `REPLY-${req.index}` }) });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-resume-pick-" }));
  const envVars = childEnv(env, { baseURL: server.baseURL });
  for (const word of ["FIRST-WORD", "SECOND-WORD"]) {
    const r = await runCoyote(["--headless", "--output-format", "json", `remember ${word}`], {
      cwd,
      env: envVars,
    });
    assert.equal(r.code, 0, r.stderr);
  }
  const t = new Tmux();
  try {
    const { cmd, args } = coyoteCommand(["--no-sandbox", "-r"]);
    await t.start([cmd, ...args], { cwd, env: envVars });
    await t.waitFor(/Resume which session\?[\s\S]*1\. .*SECOND-WORD[\s\S]*2\. .*FIRST-WORD/);
    await t.keys("2");
    await t.waitFor(/› $/m);
    await t.type("which word?");
    await t.keys("Enter");
    await t.waitFor(/REPLY-2/);
    const sent = JSON.stringify(requestMessages(server.requests.at(-1)!));
    assert.match(sent, /FIRST-WORD/);
    assert.doesNotMatch(sent, /SECOND-WORD/);

    // Esc cancels: no session opens, exit 130.
    const t2 = new Tmux();
    try {
      await t2.start([cmd, ...args], { cwd, env: envVars });
      await t2.waitFor(/Resume which session\?/);
      await t2.keys("Escape");
      const end = await t2.waitFor(/\[exited \d+\]/);
      assert.match(end, /cancelled[\s\S]*\[exited 130\]/);
    } finally {
      await t2.kill();
    }

    // Off a terminal: today's behaviour, the latest session is continued (FIRST, just used).
    const off = await runCoyote(["--headless", "--output-format", "json", "-r", "-p", "which?"], {
      cwd,
      env: envVars,
    });
    assert.equal(off.code, 0, off.stderr);
    const latest = JSON.stringify(requestMessages(server.requests.at(-1)!));
    assert.match(latest, /FIRST-WORD[\s\S]*which word\?/);
    assert.doesNotMatch(latest, /SECOND-WORD/);
  } finally {
    await t.kill();
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
  }
});

Deno.test("repl: /permissions adds a rule for the session and the project and removes it; /memory lists the instruction files and opens one in $EDITOR; /agents, /skills", async () => {
  const server = await startModelServer({ script: (req) => ({ text: `REPLY-${req.index}` }) });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-perm-repl-" }));
  await Deno.mkdir(`${cwd}/.git`);
  await Deno.writeTextFile(`${cwd}/AGENTS.md`, "Use tabs.\n");
  // The editor: appends a line to the file it is given, reads nothing from the terminal.
  const editor = `${cwd}/.fake-editor.sh`;
  await Deno.writeTextFile(editor, '#!/bin/sh\necho "EDITED-BY-EDITOR" >> "$1"\n');
  await Deno.chmod(editor, 0o755);
  const t = new Tmux();
  try {
    const { cmd, args } = coyoteCommand(["--no-sandbox", "--trust-workspace"]);
    await t.start([cmd, ...args], {
      cwd,
      env: { ...childEnv(env, { baseURL: server.baseURL }), EDITOR: editor },
    });
    await t.waitFor(/› $/m);
    await t.type("/permissions allow Execute(make lint) --project");
    await t.keys("Enter");
    await t.waitFor(
      /allow Execute\(make lint\): added for this session and saved to .*config\.local\.yaml/,
    );
    const saved = await Deno.readTextFile(`${cwd}/.coyote/config.local.yaml`);
    assert.match(saved, /allow:[\s\S]*Execute\(make lint\)/);
    await t.type("/permissions");
    await t.keys("Enter");
    await t.waitFor(/Added in this session:\s*\n\s*allow Execute\(make lint\)/);
    await t.type("/permissions deny Nonsense(");
    await t.keys("Enter");
    await t.waitFor(/invalid permission rule/);
    await t.type("/permissions remove Execute(make lint)");
    await t.keys("Enter");
    await t.waitFor(/Execute\(make lint\): removed from permissions\.allow/);
    assert.doesNotMatch(await Deno.readTextFile(`${cwd}/.coyote/config.local.yaml`), /make lint/);

    await t.type("/memory");
    await t.keys("Enter");
    await t.waitFor(new RegExp(`1\\. ${cwd}/AGENTS\\.md`));
    await t.type("/memory 1");
    await t.keys("Enter");
    await t.waitFor(/edited .*AGENTS\.md/);
    assert.match(await Deno.readTextFile(`${cwd}/AGENTS.md`), /Use tabs\.\nEDITED-BY-EDITOR/);

    await t.type("/agents");
    await t.keys("Enter");
    await t.waitFor(/code-reviewer — [\s\S]*\(\/agent NAME switches\)/);
    await t.type("/skills");
    await t.keys("Enter");
    await t.waitFor(/code-review — [\s\S]*\(\/skill NAME loads one\)/);
    // The REPL still answers afterwards.
    await t.type("hello");
    await t.keys("Enter");
    await t.waitFor(/REPLY-0/);
  } finally {
    await t.kill();
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
  }
});
