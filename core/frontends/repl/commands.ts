/**
 * The REPL's slash commands: exactly the shared list of core/frontends/slash_commands.ts (`/help`,
 * `/init`, `/review`, `/status`, `/agent`, `/agents`, `/model`, `/session`, `/resume`, `/skill`,
 * `/skills`, `/mcp`, `/tools`, `/permissions`, `/memory`, `/compact`, `/clear`, `/todo`,
 * `/policy`, `/cost`, `/trust`, `/exit`), each also as `.name` for users of the original Coyote,
 * then the custom commands (Markdown prompt files, core/frontends/slash/custom.ts) and the
 * session's MCP prompts as `/<server>:<prompt>`.
 * @module
 */
import { hintText, type SlashCommand, slashCommands } from "../slash_commands.ts";
import { costUsd, modelInfo } from "../../config/models.ts";
import { formatDuration, formatTokens } from "../render/mod.ts";
import type { ReplContext } from "./context.ts";
import { asSlashCommand, customCommands, customTurn, findCustom } from "../slash/custom.ts";

const KEYS = [
  "Keys: Enter sends · \\ at the end of a line, Alt+Enter or a paste continue on the next line",
  "      Tab completes commands, agents, skills and @files · Up/Down history",
  "      Esc interrupts the turn · Ctrl+C cancels it (twice at an empty prompt exits) · Ctrl+D exits",
  "      Shift+Tab: next permission mode (/mode lists them)",
  "      !cmd runs a shell command (guard + sandbox) · @path attaches a file",
].join("\n");

/**
 * Runs `/name args`; returns false when `name` is no command (the text then goes to the model,
 * like ACP does with text that merely starts with `/`).
 */
export async function runCommand(ctx: ReplContext, name: string, args: string): Promise<boolean> {
  const session = ctx.session;
  const custom = await customCommands(ctx.app, session, (l) => ctx.say(l));
  const all = await commandList(ctx);
  const leaf = findCustom(custom, name);
  const found = all.find((c) => c.name === name) ?? all.find((c) => c.name === leaf?.name);
  if (!found) return false;
  const say = ctx.say;
  if (typeof found.source === "object" && "file" in found.source) {
    const cmd = custom.find((c) => c.name === found.name)!;
    const t = customTurn(cmd, args, session);
    for (const n of t.notes) say(`note: ${n}`);
    await ctx.runTurn(t.prompt, t.overrides);
    return true;
  }
  if (found.source !== "builtin") {
    const mcp = session.mcp!;
    const { mcpServer, prompt } = found.source;
    try {
      const msgs = await mcp.getPrompt(mcpServer, prompt, args ? { input: args } : {});
      const text = msgs.map((m) => {
        const c = m.content as { type?: string; text?: string };
        return c.type === "text" ? c.text ?? "" : "";
      }).filter(Boolean).join("\n\n");
      await ctx.runTurn(text || `/${name} ${args}`);
    } catch (e) {
      say(`/${name} failed: ${(e as Error).message}`);
    }
    return true;
  }
  switch (found.name) {
    case "help":
      say(
        all.map((c) => `/${c.name}${hintText(c.hint)}  ${c.description}`).join("\n") +
          "\n\n" + KEYS,
      );
      return true;
    case "init": {
      const { initPrompt } = await import("../slash/prompts.ts");
      await ctx.runTurn(initPrompt(args));
      return true;
    }
    case "review": {
      const { reviewPrompt } = await import("../slash/prompts.ts");
      await ctx.runTurn(reviewPrompt(session, args));
      return true;
    }
    case "status": {
      const { statusText } = await import("../slash/info.ts");
      say(statusText(session, ctx.usage, custom.length));
      return true;
    }
    case "agents": {
      const { agentsText } = await import("../slash/info.ts");
      say(agentsText(session));
      return true;
    }
    case "skills": {
      const { skillsText } = await import("../slash/info.ts");
      say(skillsText(session));
      return true;
    }
    case "permissions": {
      const { permissionsCommand } = await import("../slash/permissions.ts");
      say(await permissionsCommand(session, args, { trusted: ctx.trusted() }));
      return true;
    }
    case "memory":
      await memory(ctx, args);
      return true;
    case "resume":
      await resume(ctx, args);
      return true;
    case "agent":
      if (args) {
        try {
          session.agent = args;
        } catch (e) {
          const msg = (e as Error).message;
          // Variables are given on the command line, for the agent the session starts with.
          say(
            msg.includes("--agent-variable")
              ? `${msg}\n(the REPL cannot set variables: start it with \`coyote -a ${args} --agent-variable NAME VALUE\`)`
              : msg,
          );
          return true;
        }
      }
      say(
        `agent: ${session.agent}` +
          (args ? "" : `\navailable: ${session.workspace.agents.names().join(", ")}`),
      );
      return true;
    case "model":
      if (args) session.model = args;
      say(
        `model: ${session.model} (context window ${
          modelInfo(ctx.app.config, session.model).contextWindow
        } tokens)`,
      );
      return true;
    case "session": {
      const [sub, ref] = args.split(/\s+/);
      const { listStoredSessions, resolveSessionRef, localTime } = await import(
        "../../transcript/store.ts"
      );
      if (sub === "list") {
        const list = await listStoredSessions(ctx.app.dataDir, { cwd: session.cwd });
        say(
          list.length
            ? list.slice(0, 30).map((x) =>
              `${x.id === session.id ? "*" : " "} ${x.id.slice(0, 8)}  ${
                localTime(x.updated)
              }  ${x.title}`
            ).join("\n")
            : "No stored sessions for this workspace.",
        );
        return true;
      }
      if (sub === "new") {
        await ctx.replaceSession({});
        say(`new session ${ctx.session.id}`);
        return true;
      }
      if (sub === "switch") {
        if (!ref) {
          say("usage: /session switch ID|NAME");
          return true;
        }
        try {
          const r = resolveSessionRef(await listStoredSessions(ctx.app.dataDir), ref);
          if (!("id" in r)) {
            say(`no stored session ${ref}`);
            return true;
          }
          await ctx.replaceSession({ resumeId: r.id });
          say(`switched to session ${ctx.session.id}`);
        } catch (e) {
          say((e as Error).message);
        }
        return true;
      }
      say(
        `session ${session.id}\nworkspace ${session.cwd}\nagent ${session.agent} · model ${session.model}\n` +
          "(/session list · /session new · /session switch ID)",
      );
      return true;
    }
    case "skill": {
      const skills = session.workspace.skills;
      const [first, ...rest] = args.split(/\s+/).filter(Boolean);
      if (!first || first === "list") {
        say(
          skills.length
            ? skills.map((k) =>
              `${k.name}${
                session.skills.loaded.includes(k.name) ? " (loaded)" : ""
              } — ${k.description}`
            ).join("\n")
            : "No skills in this workspace (.coyote/skills/, plugins).",
        );
        return true;
      }
      const state = session.skills;
      if (first === "unload") {
        const name = rest[0] ?? "";
        say(
          state.unload(name)
            ? `unloaded skill ${name}`
            : `skill "${name}" is not loaded (loaded: ${state.loaded.join(", ") || "none"})`,
        );
        return true;
      }
      // `/skill NAME [text]` or `/skill load NAME [text]`: load it (its instructions join the
      // system prompt from the next request), then send the text, if any.
      const skillName = first === "load" ? rest.shift() : first;
      const skill = skills.find((k) => k.name === skillName);
      if (!skill || !state.load(skill.name)) {
        say(
          `unknown skill "${skillName ?? ""}"; available: ${
            skills.map((k) => k.name).join(", ") || "none"
          }`,
        );
        return true;
      }
      say(`loaded skill ${skill.name}`);
      if (rest.length) await ctx.runTurn(rest.join(" "));
      return true;
    }
    case "mcp": {
      const mcp = session.mcp;
      if (!mcp) {
        say("No MCP servers are configured for this workspace.");
        return true;
      }
      say(
        mcp.servers.map((x) =>
          `${x.name} (${x.type}): ${x.status}${
            x.status === "connected" ? `, ${x.tools} tools` : ""
          }${x.error ? ` — ${x.error}` : ""}`
        ).join("\n"),
      );
      return true;
    }
    case "tools": {
      const names = session.toolNames();
      say(names.length ? names.join("\n") : "This agent has no tools.");
      return true;
    }
    case "compact": {
      // A spinner with the elapsed time while the model writes the summary (issue 20).
      const p = ctx.renderer.progress("compacting…");
      let took = 0;
      const r = await session.compact({
        focus: args || undefined,
        keep: 1,
        onStart: ({ turns }) => p.label(`compacting ${turns} earlier turn(s)…`),
      }).finally(() => (took = p.stop()));
      say(
        r.compacted
          ? `compacted ${r.turns} earlier turn(s) in ${formatDuration(took)}: ~${
            formatTokens(r.before)
          } → ~${formatTokens(r.after)} tokens`
          : `nothing to compact (${r.reason})`,
      );
      return true;
    }
    case "rewind": {
      const { rewindSlashCommand } = await import("../rewind_command.ts");
      const { pick } = await import("../slash/picker.ts");
      await rewindSlashCommand(
        session,
        args,
        say,
        (title, choices, opts) =>
          pick(choices, () => ctx.readKey(), (t) => ctx.write(t), title, opts),
      );
      return true;
    }
    case "clear":
      await ctx.replaceSession({});
      say(`cleared: new session ${ctx.session.id}`);
      return true;
    case "todo": {
      const plans = session.history().filter((u) => u.sessionUpdate === "plan") as {
        entries: { content: string; status: string }[];
      }[];
      const last = plans.at(-1);
      say(
        last?.entries.length
          ? last.entries.map((e) =>
            `${
              e.status === "completed" ? "[x]" : e.status === "in_progress" ? "[~]" : "[ ]"
            } ${e.content}`
          ).join("\n")
          : "No plan yet.",
      );
      return true;
    }
    case "mode": {
      const { modeCommand } = await import("../slash/mode.ts");
      const r = modeCommand(session, args);
      if (r.before && ctx.modeChanged) ctx.modeChanged(r.before);
      else say(r.text);
      return true;
    }
    case "policy": {
      const { policyCommand } = await import("../policy_show.ts");
      // The session's mode now (Shift+Tab and /mode change it), not the one it started in.
      await policyCommand({ ...ctx.app, mode: session.mode }, (t) => say(t));
      return true;
    }
    case "cost": {
      const u = ctx.usage;
      const c = costUsd(u, modelInfo(ctx.app.config, session.model).price);
      say(
        // No usage from the server: "tokens not reported", as the turn footers say.
        `${
          u.total_tokens || !u.requests
            ? `${u.total_tokens} tokens (${u.prompt_tokens} in, ${u.completion_tokens} out)`
            : "tokens not reported"
        } in ${u.requests} model request(s)` +
          (c !== undefined
            ? ` · $${c.toFixed(4)}`
            : " · no price for this model (models: in config.yaml)") +
          (ctx.renderer.context
            ? `\ncontext: ${ctx.renderer.context.used} of ${ctx.renderer.context.size} tokens`
            : ""),
      );
      return true;
    }
    case "trust": {
      const { setTrust } = await import("../../config/trust.ts");
      const path = setTrust(ctx.app.dataDir, session.cwd, true);
      ctx.trustNow();
      say(
        `trusted ${path}; "always" answers are now saved. Restart coyote to load the project config.`,
      );
      return true;
    }
    case "exit":
      ctx.exit();
      return true;
  }
  return false;
}

/** Every command of this REPL's session: built-ins, custom commands, MCP prompts. */
export async function commandList(ctx: ReplContext): Promise<SlashCommand[]> {
  const session = ctx.session;
  const mcpPrompts: SlashCommand[] = (session.mcp?.prompts() ?? []).map((p) => ({
    name: `${p.server}:${p.name}`,
    description: p.description ?? `MCP prompt ${p.name} of server ${p.server}`,
    source: { mcpServer: p.server, prompt: p.name },
  }));
  const custom = (await customCommands(ctx.app, session, (l) => ctx.say(l))).map(asSlashCommand);
  return slashCommands([...custom, ...mcpPrompts]);
}

/** `/memory [N]`: the instruction files; `N` opens that one in `$VISUAL` / `$EDITOR`. */
async function memory(ctx: ReplContext, args: string): Promise<void> {
  const { instructionFiles, memoryText } = await import("../slash/info.ts");
  const files = instructionFiles(ctx.session);
  const editor = Deno.env.get("VISUAL") || Deno.env.get("EDITOR");
  if (!args) {
    ctx.say(memoryText(ctx.session, true));
    return;
  }
  const n = Number(args);
  const file = Number.isInteger(n) && n >= 1 && n <= files.length ? files[n - 1] : undefined;
  if (!file) {
    ctx.say(`usage: /memory N (1–${files.length || 1}); /memory lists the files`);
    return;
  }
  if (!editor) {
    ctx.say(`${file}\n(set $EDITOR to open it from here)`);
    return;
  }
  const [cmd, ...rest] = editor.trim().split(/\s+/);
  try {
    const code = await ctx.withTerminal(async () =>
      (await new Deno.Command(cmd, {
        args: [...rest, file],
        stdin: "inherit",
        stdout: "inherit",
        stderr: "inherit",
      }).spawn().status).code
    );
    ctx.say(
      code === 0
        ? `edited ${file} (the instructions apply to new sessions: /clear)`
        : `${editor} exited with ${code}`,
    );
  } catch (e) {
    ctx.say(`cannot run $EDITOR (${editor}): ${(e as Error).message}`);
  }
}

/** `/resume [ID]`: continue a stored session of this workspace; without ID, a picker. */
async function resume(ctx: ReplContext, args: string): Promise<void> {
  let id: string | null = null;
  if (args) {
    const { listStoredSessions, resolveSessionRef } = await import("../../transcript/store.ts");
    try {
      const r = resolveSessionRef(await listStoredSessions(ctx.app.dataDir), args, "/resume");
      if (!("id" in r)) {
        ctx.say(`no stored session ${args}`);
        return;
      }
      id = r.id;
    } catch (e) {
      ctx.say((e as Error).message);
      return;
    }
  } else {
    const { pick, sessionChoices } = await import("../slash/picker.ts");
    const choices = (await sessionChoices(ctx.app.dataDir, ctx.session.cwd))
      .filter((c) => c.id !== ctx.session.id);
    if (!choices.length) {
      ctx.say("No other stored session for this workspace.");
      return;
    }
    // The picker names the session it would leave (the list holds the others).
    const title = `Resume which session? (this one is ${
      ctx.session.id.slice(0, 8)
    }; ↑/↓ or number, Enter picks, Esc cancels)`;
    id = await pick(choices, () => ctx.readKey(), (t) => ctx.write(t), title);
    if (!id) return;
  }
  if (id === ctx.session.id) {
    ctx.say("that is this session");
    return;
  }
  await ctx.replaceSession({ resumeId: id });
  // Named by its id and first prompt (its title in --list-sessions), so it is clear what resumed.
  const { listStoredSessions } = await import("../../transcript/store.ts");
  const info = (await listStoredSessions(ctx.app.dataDir)).find((x) => x.id === ctx.session.id);
  const what = info ? (info.name ? `[${info.name}] ${info.title}` : info.title) : "";
  ctx.say(`resumed session ${ctx.session.id}${what ? `: ${what}` : ""}`);
}
