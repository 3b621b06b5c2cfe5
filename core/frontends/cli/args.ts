/**
 * The command line: the `commander` program (options, subcommands, `help`, the exit-code
 * epilogue), {@link parseArgs} into a {@link ParsedCli}, and the argv scans that run before or
 * without the parser ({@link joinAgentVariables}, {@link outputFormatFromArgv}). `commander`
 * itself loads lazily, inside {@link parseArgs}.
 * @module
 */
import type { Command as CommandT } from "commander";
import { versionLine } from "./version.ts";
import { stdout, UsageError } from "./output.ts";

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

const collect = (v: string, prev: string[]) => [...prev, v];

/** Everything `parseArgs` found. */
export interface ParsedCli {
  /** Subcommand to run, if any. */
  command?: {
    name: "plugins" | "mcp" | "policy" | "agents" | "trust" | "sessions" | "graph";
    sub: string;
    args: string[];
  };
  prompt: string[];
  // deno-lint-ignore no-explicit-any
  opts: Record<string, any>;
  /** Set when commander already printed help/version (exit code inside). */
  exit?: number;
}

/** A positive number (an integer when `int`) for `flag`, else a usage error naming it. */
function positiveNumber(flag: string, int = false): (v: string) => number {
  return (v) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0 || (int && !Number.isInteger(n))) {
      throw new UsageError(
        `${flag} must be a positive ${int ? "integer" : "number"}, got ${JSON.stringify(v)}`,
      );
    }
    return n;
  };
}

function positiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) {
    throw new UsageError(`--max-turns must be a positive integer, got ${JSON.stringify(v)}`);
  }
  return n;
}

/**
 * A flag value that must not be empty: `-m "$MODEL"` with MODEL unset would otherwise fall back to
 * COYOTE_MODEL or the config without a word.
 */
function nonEmpty(flag: string): (v: string) => string {
  return (v) => {
    if (!v.trim()) throw new UsageError(`${flag} needs a value, got an empty string`);
    return v;
  };
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
    .option(
      "-p, --prompt [text]",
      "the request as a flag value; prompt words after it are appended (a bare -p, as in Claude Code, is accepted)",
    )
    .option(
      "-m, --model <model>",
      "model name (env COYOTE_MODEL; config model)",
      nonEmpty("-m/--model"),
    )
    .option(
      "--base-url <url>",
      "OpenAI-compatible base URL (env OPENAI_BASE_URL)",
      nonEmpty("--base-url"),
    )
    .option("--api-key <key>", "API key (prefer env OPENAI_API_KEY)")
    .option("-C, --cd <dir>", "work in DIR instead of the current directory (like git -C)")
    .option("--headless", "never read from or prompt on the terminal; guard 'ask' is denied")
    .addOption(
      new Option("--output-format <format>", "output format").choices([
        "text",
        "json",
        "stream-json",
      ]).default(
        "text",
      ),
    )
    .option(
      "-f, --file <path>",
      "add a file's contents to the prompt (repeatable; '-' waits for all of stdin)",
      collect,
      [],
    )
    .option("--max-turns <n>", "model requests allowed per turn (default 50)", positiveInt)
    .option(
      "--max-budget-usd <usd>",
      "end the run when its cost reaches USD (needs the model's price in models:)",
      positiveNumber("--max-budget-usd"),
    )
    .option(
      "--max-budget-tokens <n>",
      "end the run when its total tokens reach n",
      positiveNumber("--max-budget-tokens", true),
    )
    .option(
      "--allow <rule>",
      "add an allow rule, e.g. 'Execute(npm test)' (repeatable)",
      collect,
      [],
    )
    .option("--deny <rule>", "add a deny rule, e.g. 'Execute(rm *)' (repeatable)", collect, [])
    .option(
      "--dangerously-skip-permissions",
      "allow everything except deny rules (commands stay in the OS sandbox)",
    )
    .option("--no-sandbox", "run commands without the OS sandbox (config sandbox: off)")
    .option("--plugin <path>", "load a plugin module (repeatable)", collect, [])
    .option("--no-workspace-mcp", "ignore the workspace's .mcp.json / .coyote/mcp.json")
    .option("--verbose", "record more in the transcript (graph agents: the state after each node)")
    .option("-a, --agent <name>", "agent to use (default sisyphus; see `coyote agents list`)")
    .option(
      "--agent-variable <name value>",
      "set a variable of the agent's instructions: --agent-variable NAME VALUE (repeatable)",
      collect,
      [],
    )
    .option("--skill <name>", "load a skill before the first request (repeatable)", collect, [])
    .option(
      "--add-dir <dir>",
      "also discover skills in DIR/.coyote/skills, DIR/.claude/skills, DIR/.agents/skills (repeatable)",
      collect,
      [],
    )
    .option(
      "--session <id|name>",
      "continue the stored session with this id (or unique id prefix of 8+ chars) or name; else start one named so",
    )
    .option("--continue", "continue the latest session of this directory")
    .option("--list-sessions", "list this directory's stored sessions and exit")
    // Sessions and workspace trust (core/transcript/store.ts, core/config/trust.ts).
    .option("--all", "with --list-sessions: list the sessions of every directory")
    .option(
      "--trust-workspace",
      "trust this workspace for this run: start its .mcp.json servers, load .coyote/ plugins and config",
    )
    .option("--acp-server", "serve the Agent Client Protocol over stdio")
    .helpCommand(false) // our own `help` below: an unknown command is a usage error
    .addHelpText("after", EXIT_HELP)
    .showSuggestionAfterError(true)
    .action((prompt: string[], opts) => {
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
  program.command("mcp").description("MCP servers").command("list").description(
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
