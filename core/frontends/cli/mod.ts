/**
 * Command-line interface (npm `commander`): parses flags, resolves
 * {@link AppOptions} (flag > env > config > default), and dispatches to the
 * one-shot/headless runner, the ACP server, or a subcommand.
 *
 * Usage errors (bad flags, missing prompt, bad config) print one line
 * `coyote: <message>` on stderr and exit 2; never a stack trace.
 *
 * This module is {@link main} and the dispatch. Its parts: ./args.ts (the flags), ./resolve.ts
 * (`resolveApp`), ./prompt.ts (the request: words, `-f` files, stdin, images), ./output.ts
 * (stdout, usage errors), and one module per subcommand (./agents.ts, ./graph.ts, ./mcp.ts,
 * ./plugins.ts, ./sessions.ts, ./trust.ts; `policy show` is ../policy_show.ts, shared with the
 * REPL), each loaded when its command runs.
 * @module
 */
import type { AppOptions } from "../../config/app_options.ts";
import type { PromptInput } from "../../protocol/types.ts";
import { ConfigError } from "../../protocol/errors.ts";
import { VERSION } from "./version.ts";
import { safeText } from "../../util/terminal_safe.ts";
import { outputFormatFromArgv, parseArgs, type ParsedCli, promptWords } from "./args.ts";
import { setJsonErrors, stdout, UsageError, usageExit } from "./output.ts";
import type { buildPrompt } from "./prompt.ts";
import { resolveApp } from "./resolve.ts";
import { ownTreeWarning, taskWorkdir } from "./workdir.ts";

export { VERSION };

/** Runs the CLI; returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const format = outputFormatFromArgv(argv);
  const jsonErrors = format === "json" || format === "stream-json";
  setJsonErrors(jsonErrors);
  // stdout carries the JSON result / events: no child process may inherit fd 1 (docs/acp.md).
  if (jsonErrors) (await import("../acp/stdio.ts")).keepChildrenOffStdout();
  let parsed: ParsedCli;
  try {
    // Editors start `coyote --acp-server` with no other flag: skip the parser (start-up matters there).
    parsed = argv.length === 1 && argv[0] === "--acp-server"
      ? { prompt: [], opts: { acpServer: true } }
      : await parseArgs(argv);
  } catch (e) {
    if (e instanceof UsageError) return await usageExit(e.message, e.help);
    throw e;
  }
  if (parsed.exit !== undefined) return parsed.exit;
  const o = parsed.opts;
  // `coyote resume [ID]` is `coyote --resume [ID]` with no prompt words (args.ts).
  if (parsed.command?.name === "resume") {
    if (o.resume !== undefined) return await usageExit("coyote resume takes no --resume");
    o.resume = parsed.command.args[0] ?? true;
    parsed.command = undefined;
  }
  // `-r/--resume [ID]` (the Claude Code habit): `--session ID` for a session that must exist, or
  // bare: on a terminal a picker of this directory's sessions (../slash/picker.ts), else
  // `--continue` (the latest session of this directory).
  let resumeRef: string | undefined;
  const pickResume = o.resume === true && !o.headless && Deno.stdin.isTerminal() &&
    Deno.stderr.isTerminal();
  if (o.resume !== undefined) {
    if (o.session !== undefined || o.continue) {
      return await usageExit("use one of --session ID|NAME, --continue or --resume [ID]");
    }
    if (typeof o.resume === "string") o.session = resumeRef = o.resume;
    else o.continue = true;
  }
  // `deno task coyote` starts in Coyote's own folder: back to where it was typed (INIT_CWD,
  // ./workdir.ts), before -C DIR and -f FILE, which are relative to it.
  const taskDir = taskWorkdir();
  if (taskDir) Deno.chdir(taskDir);
  if (o.cd !== undefined) {
    // `-C DIR` (Codex CLI's `--cd`, git's `-C`): everything after, `-f FILE` included, is relative
    // to DIR.
    try {
      if (!Deno.statSync(o.cd).isDirectory) throw new Error("not a directory");
      Deno.chdir(o.cd);
    } catch (e) {
      return await usageExit(`cannot work in -C ${o.cd}: ${(e as Error).message}`, false);
    }
  }
  if (o.plugin?.length || o.addDir?.length) {
    // A --plugin or --add-dir naming something missing stops every frontend and subcommand
    // before anything runs (core/frontends/cli/targets.ts); --add-dir values become absolute here.
    const { checkFlagTargets, FlagTargetError } = await import("./targets.ts");
    try {
      o.addDir = (await checkFlagTargets(o, Deno.cwd())).addDirs;
    } catch (e) {
      if (e instanceof FlagTargetError) return await usageExit(e.message, false);
      throw e;
    }
  }
  let app: AppOptions;
  let configError: string | undefined;
  try {
    // `coyote trust` and `coyote sessions` must work even when a config file is broken (to revoke
    // trust from a repository whose .coyote/config.yaml fails, for one): a warning instead.
    const cmd = parsed.command?.name;
    const lenient = cmd === "trust" || cmd === "sessions"
      ? (e: ConfigError) =>
        void Deno.stderr.writeSync(
          new TextEncoder().encode(`coyote: warning: ${safeText(e.message)}\n`),
        )
      : undefined;
    app = await resolveApp(o, o.acpServer ? (e) => (configError = e.message) : lenient);
  } catch (e) {
    if (e instanceof ConfigError) return await usageExit(e.message, false);
    if (e instanceof UsageError) return await usageExit(e.message);
    throw e;
  }

  if (parsed.command) {
    const { name, sub, args } = parsed.command;
    if (typeof o.prompt === "string") return await usageExit(`${name} ${sub} takes no prompt`);
    // Flags that name what a run reads or switch to another mode would be silently ignored by a
    // subcommand (`coyote -f notes.txt agents list`). Run settings an alias may always pass
    // (-m, --base-url, -a, --headless, --max-turns, --output-format) are let through.
    const runOnly = [
      ...(o.file?.length ? ["-f/--file"] : []),
      ...(o.session !== undefined ? ["--session"] : []),
      ...(o.continue ? ["--continue"] : []),
      ...(o.listSessions ? ["--list-sessions"] : []),
      ...(o.outputSchema !== undefined ? ["--output-schema"] : []),
      ...(o.record !== undefined ? ["--record"] : []),
      ...(o.replay !== undefined ? ["--replay"] : []),
      ...(o.acpServer ? ["--acp-server"] : []),
      ...(o.skill?.length ? ["--skill"] : []),
      ...(o.agentVariable?.length ? ["--agent-variable"] : []),
    ];
    if (runOnly.length) {
      return await usageExit(
        `${runOnly.join(", ")} ${
          runOnly.length > 1 ? "do" : "does"
        } not apply to \`coyote ${name} ${sub}\``,
        `coyote ${name} --help`,
      );
    }
    // Listings show text that files, plugins and servers chose: escaped for the terminal
    // (core/util/terminal_safe.ts); `--json` output is data, escaped by JSON.
    const textOut = (t: string) => stdout(args.includes("--json") ? t : safeText(t));
    if (name === "plugins") {
      return await (await import("./plugins.ts")).pluginsCommand(app, sub, args);
    }
    if (name === "agents") {
      return await (await import("./agents.ts")).agentsCommand(app, sub, args, stdout);
    }
    if (name === "trust") {
      return await (await import("./trust.ts")).trustCommand(app, sub, args);
    }
    if (name === "sessions") {
      return await (await import("./sessions.ts")).sessionsCommand(
        app,
        sub as "list" | "rm",
        args,
        args.includes("--json"),
      );
    }
    if (name === "rewind") return await (await import("./rewind.ts")).rewindCommand(app, args);
    if (name === "mcp") {
      return await (await import("./mcp.ts")).mcpCommand(app, sub, args);
    }
    if (name === "graph") {
      return await (await import("./graph.ts")).graphCommand(app, sub, args, textOut);
    }
    return await (await import("../policy_show.ts")).policyCommand(
      app,
      (s: string) => textOut(s.endsWith("\n") ? s : s + "\n"),
    );
  }
  if (o.listSessions) {
    if (promptWords(parsed).length) {
      return await usageExit(
        `--list-sessions takes no prompt (got ${JSON.stringify(promptWords(parsed).join(" "))})`,
      );
    }
    const json = o.outputFormat === "json" || o.outputFormat === "stream-json";
    const { sessionsCommand } = await import("./sessions.ts");
    return await sessionsCommand(app, "list", o.all ? ["--all"] : [], json);
  }
  // `--all` alone would be ignored and the run would go on as if it were not given.
  if (o.all) {
    return await usageExit("--all goes with --list-sessions (coyote --list-sessions --all)");
  }
  if (o.acpServer) {
    if (promptWords(parsed).length) return await usageExit("--acp-server takes no prompt");
    // The editor opens, loads and prompts sessions (session/new, session/load, session/prompt):
    // these flags would be silently ignored.
    const ignored = [
      ...(o.session !== undefined ? ["--session"] : []),
      ...(o.continue ? ["--continue"] : []),
      ...(o.file?.length ? ["-f/--file"] : []),
    ];
    if (ignored.length) {
      return await usageExit(
        `${ignored.join(", ")} ${ignored.length > 1 ? "do" : "does"} not apply to --acp-server ` +
          "(the editor opens and loads sessions: ACP session/new, session/load)",
      );
    }
    return await (await import("../acp/server.ts")).runAcpServer(app, { configError });
  }
  if (o.session !== undefined && o.continue) {
    return await usageExit("use either --session ID|NAME or --continue, not both");
  }
  // `coyote agent list` is a slip for `coyote agents list`, not a request (core/frontends/cli/slips.ts).
  if (typeof parsed.opts.prompt !== "string") {
    const { mistypedCommand } = await import("./slips.ts");
    const meant = mistypedCommand(parsed.prompt);
    if (meant) {
      return await usageExit(
        `"${parsed.prompt.join(" ")}" looks like a mistyped command: did you mean \`${meant}\`? ` +
          `(to send it to the model as a request, use -p "${parsed.prompt.join(" ")}")`,
        false,
      );
    }
  }

  let built: Awaited<ReturnType<typeof buildPrompt>>;
  try {
    // `-f IMAGE` attaches the image when the model is configured with `images: true`.
    const { configuredModel, modelInfo } = await import("../../config/models.ts");
    const model = configuredModel(o.model, app.config);
    const accepted = !!model && modelInfo(app.config, model).images === true;
    built = await (await import("./prompt.ts")).buildPrompt(promptWords(parsed), o.file ?? [], {
      model,
      accepted,
    });
  } catch (e) {
    if (e instanceof UsageError) return await usageExit(e.message);
    throw e;
  }
  const prompt: PromptInput = built.images.length
    ? [
      ...(built.text ? [{ type: "text" as const, text: built.text }] : []),
      ...built.images.map((i) => ({ type: "image" as const, ...i })),
    ]
    : built.text;
  const empty = !built.text && !built.images.length;
  // No prompt on a terminal: the interactive REPL (core/frontends/repl/).
  const repl = empty && !o.headless && Deno.stdin.isTerminal() && Deno.stdout.isTerminal();
  if (empty && !repl) {
    return await usageExit(
      o.headless
        ? "--headless needs a prompt (argument, -f FILE, or piped stdin)"
        : o.resume !== undefined
        ? `no prompt given: coyote -r ${resumeRef ?? ""}${
          resumeRef ? " " : ""
        }"your request" continues the session without a terminal (the interactive REPL needs one)`
        : 'no prompt given: coyote "your request" (the interactive REPL needs a terminal)',
    );
  }
  // An agent let loose in Coyote's own clone is rarely what was meant: say so (./workdir.ts).
  const own = ownTreeWarning();
  if (own) Deno.stderr.writeSync(new TextEncoder().encode(safeText(own)));
  // A terminal run in a workspace nobody decided about asks once (core/config/trust.ts).
  const ws = app.workspace;
  if (
    !o.headless && ws && ws.trust.source === "unknown" && ws.ignored.length &&
    Deno.stdin.isTerminal()
  ) {
    const { askTrust } = await import("../../config/trust.ts");
    await askTrust({ dataDir: app.dataDir, config: ws.userConfig }, ws.trust, ws.ignored);
    try {
      app = await resolveApp(o);
    } catch (e) {
      if (e instanceof ConfigError) return await usageExit(e.message, false);
      throw e;
    }
  }
  // The REPL and its `--resume` picker check the provider before drawing anything: a session
  // that cannot start gets the one-shot run's error (exit 2, README "Exit codes"), no banner.
  if ((repl || pickResume) && !app.replay) {
    const { resolveProvider } = await import("../../config/config.ts");
    try {
      const flags = { model: app.model, baseURL: app.baseURL, apiKey: app.apiKey };
      resolveProvider({
        flags,
        env: Deno.env,
        config: app.config ?? {},
        configPath: app.configPath,
      });
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      Deno.stderr.writeSync(new TextEncoder().encode(`coyote: ${safeText(e.message)}\n`));
      return 2;
    }
  }
  if (pickResume) {
    const { pick, sessionChoices } = await import("../slash/picker.ts");
    const { openTerminalKeys } = await import("../render/keys.ts");
    const choices = await sessionChoices(app.dataDir, app.cwd);
    if (!choices.length) {
      return await usageExit(`no earlier session for ${app.cwd} to resume`, false);
    }
    const write = (t: string) => Deno.stderr.writeSync(new TextEncoder().encode(t));
    const keys = openTerminalKeys();
    const id = await pick(choices, () => keys.read(), write).finally(() => keys.close());
    if (!id) return 130;
    o.continue = false;
    o.session = id;
  }
  if (resumeRef !== undefined) {
    // --resume never starts a new session: a name matching nothing is an error (--session starts one).
    const { listStoredSessions, resolveSessionRef } = await import("../../transcript/store.ts");
    try {
      const r = resolveSessionRef(await listStoredSessions(app.dataDir), resumeRef, "--resume");
      if (!("id" in r)) {
        return await usageExit(
          `--resume ${resumeRef}: no stored session has this id or name (coyote --list-sessions)`,
          false,
        );
      }
    } catch (e) {
      if ((e as Error)?.name === "UsageError") return await usageExit((e as Error).message, false);
      throw e;
    }
  }
  if (repl && o.outputSchema !== undefined) {
    return await usageExit("--output-schema needs a prompt (it shapes a one-shot run's answer)");
  }
  if (repl) {
    const { runRepl } = await import("../repl/mod.ts");
    return await runRepl(app, { sessionName: o.session, continueLatest: !!o.continue });
  }
  let outputSchema;
  if (o.outputSchema !== undefined) {
    // A bad schema file is a usage error naming it, before any model request (issue 19).
    try {
      outputSchema = await (await import("../headless/output_schema.ts")).loadOutputSchema(
        o.outputSchema,
        app.cwd,
      );
    } catch (e) {
      // ./output_schema.ts throws the session layer's UsageError (a class of its own).
      if ((e as Error)?.name === "UsageError") return await usageExit((e as Error).message, false);
      throw e;
    }
  }
  const { runPrompt } = await import("../headless/mod.ts");
  return await runPrompt(app, {
    outputSchema,
    prompt,
    format: o.outputFormat ?? "text",
    sessionName: o.session,
    continueLatest: !!o.continue,
  });
}
