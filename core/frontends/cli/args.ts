/**
 * The command line: the `commander` program (options, subcommands, `help`, the exit-code
 * epilogue), {@link parseArgs} into a {@link ParsedCli}, and the argv scans that run before or
 * without the parser ({@link joinAgentVariables}, {@link outputFormatFromArgv}). The options are
 * the table in ./flags.ts; `commander` itself loads lazily, inside {@link parseArgs}, and only when
 * the quick parser of ./flags.ts cannot explain argv (help, subcommands, any error).
 * @module
 */
import type { Command as CommandT } from "commander";
import { versionLine } from "./version.ts";
import { stdout, UsageError } from "./output.ts";
import { FLAGS, quickParse } from "./flags.ts";

const EXIT_HELP = `
Exit codes:
  0    success
  1    runtime failure (provider error after retries, stream cut, crash)
  2    usage or configuration error (bad flag, a --plugin/--add-dir/-f/-C path that is missing,
       no prompt, no provider, bad config, unknown agent/session; an invalid definition found by
       graph check, plugins check/list, agents list/show)
  3    turn limit reached (--max-turns; stop reason max_turn_requests)
  4    budget reached (--max-budget-usd, --max-budget-tokens, config budget:; stop reason max_budget)
  130  cancelled (SIGINT, SIGTERM or SIGHUP; stop reason cancelled)

Environment: OPENAI_BASE_URL, OPENAI_API_KEY, COYOTE_MODEL, COYOTE_CONFIG_DIR, COYOTE_DATA_DIR.
Docs: README.md, docs/permissions.md (rule syntax), docs/agents.md, docs/graphs.md, docs/plugins.md,
docs/mcp.md, docs/acp.md.`;

/** Everything `parseArgs` found. */
export interface ParsedCli {
  /** Subcommand to run, if any. */
  command?: {
    name:
      | "plugins"
      | "mcp"
      | "policy"
      | "agents"
      | "trust"
      | "sessions"
      | "graph"
      | "resume"
      | "rewind";
    sub: string;
    args: string[];
  };
  prompt: string[];
  // deno-lint-ignore no-explicit-any
  opts: Record<string, any>;
  /** Set when commander already printed help/version (exit code inside). */
  exit?: number;
}

type Commander = typeof import("commander");

function buildProgram({ Command, Option }: Commander, result: ParsedCli): CommandT {
  const program = new Command("coyote")
    .description("Coyote: a coding agent for your terminal, CI and editors (ACP).")
    .version(versionLine(), "-V, --version")
    .argument(
      "[prompt...]",
      "the request; piped stdin is appended (no prompt on a terminal: the REPL)",
    )
    .helpCommand(false) // our own `help` below: an unknown command is a usage error
    .addHelpText("after", EXIT_HELP)
    .showSuggestionAfterError(true);
  // The options: one table (./flags.ts), read by the quick parser too.
  for (const f of FLAGS) {
    const opt = new Option(f.flags, f.description);
    if (f.choices) opt.choices(f.choices);
    if (f.parse) opt.argParser(f.parse);
    if (f.default !== undefined) opt.default(f.default);
    program.addOption(opt);
  }
  program.action((prompt: string[], opts) => {
    result.prompt = prompt;
    result.opts = opts;
  });

  const plugins = program.command("plugins").description("list or check plugins");
  plugins.command("list").description("show each plugin, its tools and its effective grant")
    .option("--json", "print JSON").action(
      (o: { json?: boolean }) => {
        result.command = { name: "plugins", sub: "list", args: o.json ? ["--json"] : [] };
      },
    );
  plugins.command("check").argument("<path>").description(
    "validate a plugin without running a session",
  ).option("--json", "print JSON").action(
    (path: string, o: { json?: boolean }) => {
      result.command = {
        name: "plugins",
        sub: "check",
        args: [path, ...(o.json ? ["--json"] : [])],
      };
    },
  );
  const mcp = program.command("mcp").description("MCP servers");
  mcp.command("list").description(
    "show configured MCP servers, their source, status and tool counts",
  ).option("--json", "print one JSON object").option(
    "--timeout <ms>",
    "start-up timeout per server in ms (default 10000)",
  )
    .option("--no-connect", "show the configuration only, without starting servers")
    .action((o: { json?: boolean; timeout?: string; connect?: boolean }) => {
      const args = [
        ...(o.json ? ["--json"] : []),
        ...(o.timeout ? ["--timeout", o.timeout] : []),
        ...(o.connect === false ? ["--no-connect"] : []),
      ];
      result.command = { name: "mcp", sub: "list", args };
    });
  mcp.command("login").argument("<name>", "a remote (http/sse) server of the configuration")
    .description(
      "log in to an OAuth MCP server: print the URL (a browser opens on a terminal), wait for the redirect, store the tokens",
    )
    .option("--timeout <ms>", "how long to wait for the browser's redirect (default 300000)")
    .option("--no-browser", "only print the URL")
    .action((name: string, o: { timeout?: string; browser?: boolean }) => {
      const args = [
        name,
        ...(o.timeout ? ["--timeout", o.timeout] : []),
        ...(o.browser === false ? ["--no-browser"] : []),
      ];
      result.command = { name: "mcp", sub: "login", args };
    });
  mcp.command("logout").argument("<name>", "a remote server of the configuration")
    .description("delete the server's stored OAuth tokens and client registration")
    .action((name: string) => {
      result.command = { name: "mcp", sub: "logout", args: [name] };
    });
  const agents = program.command("agents").description("list or show agents");
  agents.command("list").description("show every agent: name, kind, source, description")
    .option("--json", "print JSON").action((o: { json?: boolean }) => {
      result.command = { name: "agents", sub: "list", args: o.json ? ["--json"] : [] };
    });
  agents.command("show").argument("<name>").description("print an agent's resolved definition")
    .option("--json", "print JSON").action((name: string, o: { json?: boolean }) => {
      result.command = { name: "agents", sub: "show", args: [name, ...(o.json ? ["--json"] : [])] };
    });
  program.command("graph").description("graph agents").command("check").argument("<path>")
    .description("validate a graph agent (folder, graph.yaml or agent name) without running it")
    .action((path: string) => {
      result.command = { name: "graph", sub: "check", args: [path] };
    });
  program.command("policy").description("guard policy").command("show").description(
    "print the effective policy and the derived Deno flags",
  ).action(() => {
    result.command = { name: "policy", sub: "show", args: [] };
  });

  // Workspace trust (core/config/trust.ts) and stored sessions (core/transcript/store.ts).
  program.command("trust").argument("[dir]", "folder to trust (default: this repository's root)")
    .description("trust a folder: its .mcp.json, .coyote/plugins/ and .coyote/config.yaml apply")
    .option("--revoke", "mark the folder untrusted again")
    .option("--list", "list trusted and untrusted folders")
    .action((dir: string | undefined, o: { revoke?: boolean; list?: boolean }) => {
      if (o.list && (dir !== undefined || o.revoke)) {
        const err = new UsageError(
          `trust --list takes no ${dir !== undefined ? "DIR" : "--revoke"} (it lists every folder)`,
        );
        err.help = "coyote trust --help";
        throw err;
      }
      result.command = {
        name: "trust",
        sub: o.list ? "list" : o.revoke ? "revoke" : "trust",
        args: dir ? [dir] : [],
      };
    });
  const sessions = program.command("sessions").description("stored sessions");
  sessions.command("list").description("list this directory's sessions (--all: every directory)")
    .option("--all", "every directory").option("--json", "print JSON")
    .action((o: { all?: boolean; json?: boolean }) => {
      result.command = {
        name: "sessions",
        sub: "list",
        // `--all` is also a program option (for --list-sessions), which may take it first.
        args: [...(o.all || program.opts().all ? ["--all"] : []), ...(o.json ? ["--json"] : [])],
      };
    });
  sessions.command("rm").argument("<id...>", "session id, unique id prefix or name")
    .description("delete stored sessions").action((ids: string[]) => {
      result.command = { name: "sessions", sub: "rm", args: ids };
    });
  // `coyote resume [ID]`: `coyote --resume [ID]` without a prompt (the REPL; piped stdin: one turn).
  program.command("resume").argument(
    "[id]",
    "session id, unique id prefix or name (default: the latest)",
  )
    .description("continue a stored session of this directory (like --resume)")
    .action((id: string | undefined) => {
      result.command = { name: "resume", sub: "", args: id === undefined ? [] : [id] };
    });

  // `coyote rewind [SESSION]` (issue 18, ./rewind.ts, docs/modes.md "Checkpoints and rewind").
  program.command("rewind").argument(
    "[session]",
    "session id, unique id prefix or name (default: the latest of this directory)",
  )
    .description("restore the files and the conversation of a session to before a turn")
    .option("--to <turn>", "turn number or checkpoint id (default: the last turn)")
    .option("--files-only", "restore the files, keep the conversation")
    .option("--conversation-only", "rewind the conversation, keep the files")
    .option("--list", "list the session's turns and their checkpoints")
    .action(
      (
        session: string | undefined,
        o: { to?: string; filesOnly?: boolean; conversationOnly?: boolean; list?: boolean },
      ) => {
        if (o.filesOnly && o.conversationOnly) {
          const err = new UsageError("use either --files-only or --conversation-only");
          err.help = "coyote rewind --help";
          throw err;
        }
        result.command = {
          name: "rewind",
          sub: "",
          args: [
            ...(o.to !== undefined ? ["--to", o.to] : []),
            ...(o.filesOnly ? ["--files-only"] : []),
            ...(o.conversationOnly ? ["--conversation-only"] : []),
            ...(o.list ? ["--list"] : []),
            ...(session !== undefined ? [session] : []),
          ],
        };
      },
    );

  // `coyote help [command...]` prints help (never a prompt for the model); `help plugins check`
  // walks down to the nested command.
  program.command("help").argument("[command...]").description("show help for a command")
    .action((names: string[]) => {
      let c: CommandT = program;
      for (const n of names) {
        const next = c.commands.find((x) => x.name() === n || x.aliases().includes(n));
        if (!next) {
          throw new UsageError(
            `unknown command '${n}' for help (commands: ${
              c.commands.map((x) => x.name()).join(", ")
            })`,
          );
        }
        c = next;
      }
      c.help();
    });

  for (const c of [program, ...program.commands, ...program.commands.flatMap((c) => c.commands)]) {
    c.exitOverride();
    c.configureOutput({
      writeOut: stdout,
      writeErr: (s) => Deno.stderr.writeSync(new TextEncoder().encode(s)),
      outputError: () => {}, // printed by parseArgs as one line
    });
  }
  return program;
}

/**
 * `--agent-variable NAME VALUE` (two words, the original Coyote's form) becomes one commander
 * value `NAME=VALUE`; `--agent-variable NAME=VALUE` is accepted as is. Stops at `--`.
 * @throws UsageError when the name or the value is missing.
 */
export function joinAgentVariables(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") {
      out.push(...argv.slice(i));
      break;
    }
    if (a !== "--agent-variable") {
      out.push(a);
      continue;
    }
    const name = argv[i + 1];
    if (name === undefined || name.startsWith("-")) {
      throw new UsageError("--agent-variable needs NAME VALUE");
    }
    if (name.includes("=")) {
      out.push(a, name);
      i += 1;
      continue;
    }
    const value = argv[i + 2];
    if (value === undefined) throw new UsageError(`--agent-variable ${name} needs a VALUE`);
    out.push(a, `${name}=${value}`);
    i += 2;
  }
  return out;
}

/**
 * Parses argv (without the program name). Throws {@link UsageError} for bad input.
 * `commander` is loaded here (lazily), so paths that need no parsing stay fast.
 */
export async function parseArgs(argv: string[]): Promise<ParsedCli> {
  argv = joinAgentVariables(argv);
  // The common runs (a prompt, --headless, --acp-server) need no commander (./flags.ts).
  const quick = quickParse(argv);
  if (quick) return quick;
  return await commanderParse(argv);
}

/** {@link parseArgs} by `commander` alone (argv already through {@link joinAgentVariables}). */
export async function commanderParse(argv: string[]): Promise<ParsedCli> {
  const commander = await import("commander");
  const result: ParsedCli = { prompt: [], opts: {} };
  const program = buildProgram(commander, result);
  try {
    program.parse(argv, { from: "user" });
  } catch (e) {
    if (e instanceof commander.CommanderError) {
      if (e.code === "commander.helpDisplayed" || e.code === "commander.version") {
        return { ...result, exit: 0 };
      }
      // Help shown because a command was incomplete (`coyote plugins`): a usage error.
      if (e.code === "commander.help") return { ...result, exit: e.exitCode === 0 ? 0 : 2 };
      if (e.exitCode === 0) return { ...result, exit: 0 };
      const err = new UsageError(e.message.replace(/^error: /, ""));
      // An error inside a subcommand (`coyote agents show`): point at that command's help.
      const sub = argv.find((w) => program.commands.some((c) => c.name() === w));
      if (sub && sub !== "help") err.help = `coyote ${sub} --help`;
      throw err;
    }
    throw e;
  }
  // Global options given before a subcommand land on the program.
  if (result.command) result.opts = program.opts();
  return result;
}

/** The subcommand names the `commander` program registers (for tests/cli_flags_test.ts). */
export async function registeredCommands(): Promise<string[]> {
  const program = buildProgram(await import("commander"), { prompt: [], opts: {} });
  return program.commands.map((c) => c.name());
}

/**
 * The `--output-format` argv asks for, found by scanning argv (last one wins, up to `--`), so a
 * usage error that stops the parser still knows it: `json` / `stream-json` callers then get their
 * `result` object. Undefined when absent.
 */
export function outputFormatFromArgv(argv: string[]): string | undefined {
  let format: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") break;
    if (a === "--output-format") format = argv[++i];
    else if (a.startsWith("--output-format=")) format = a.slice("--output-format=".length);
  }
  return format;
}

/** The prompt words: `-p TEXT` first, then the positional words. */
export function promptWords(parsed: ParsedCli): string[] {
  const p = parsed.opts.prompt;
  return [...(typeof p === "string" ? [p] : []), ...parsed.prompt];
}
