/**
 * Command-line interface (npm `commander`): parses flags, resolves
 * {@link AppOptions} (flag > env > config > default), and dispatches to the
 * one-shot/headless runner, the ACP server, or a subcommand.
 *
 * Usage errors (bad flags, missing prompt, bad config) print one line
 * `coyote: <message>` on stderr and exit 2; never a stack trace.
 * @module
 */
import type { Command as CommandT } from "commander";
import type { AppOptions } from "../../config/app_options.ts";
import type { PromptInput } from "../../protocol/types.ts";
import { loadConfig, resolveDirs } from "../../config/config.ts";
import { ConfigError } from "../../protocol/errors.ts";
import { sandboxSettings } from "../../policy/sandbox/settings.ts";
import { VERSION, versionLine } from "./version.ts";
import { safeCell, safeText } from "../../util/terminal_safe.ts";

export { VERSION };

const EXIT_HELP = `
Exit codes:
  0    success
  1    runtime failure (provider error after retries, stream cut, crash)
  2    usage or configuration error (bad flag, a --plugin/--add-dir/-f/-C path that is missing,
       no prompt, no provider, bad config, unknown agent/session; an invalid definition found by
       graph check, plugins check/list, agents list/show)
  3    turn limit reached (--max-turns; stop reason max_turn_requests)
  130  cancelled (SIGINT, SIGTERM or SIGHUP; stop reason cancelled)

Environment: OPENAI_BASE_URL, OPENAI_API_KEY, COYOTE_MODEL, COYOTE_CONFIG_DIR, COYOTE_DATA_DIR.
Docs: README.md, docs/permissions.md (rule syntax), docs/agents.md, docs/graphs.md, docs/plugins.md,
docs/mcp.md, docs/acp.md.`;

const collect = (v: string, prev: string[]) => [...prev, v];

/**
 * Writes all of `text` to stdout. A reader that went away (`coyote --help | head`) ends the
 * output quietly instead of failing with a broken pipe.
 */
function stdout(text: string): void {
  const bytes = new TextEncoder().encode(text);
  try {
    for (let off = 0; off < bytes.length;) off += Deno.stdout.writeSync(bytes.subarray(off));
  } catch (e) {
    if (!(e instanceof Deno.errors.BrokenPipe)) throw e;
  }
}

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

class UsageError extends Error {
  /** The help to point at, e.g. `coyote agents --help` for an error inside `agents`. */
  help = "coyote --help";
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

/** `["k=v", …]` → `{k: "v"}` (last wins). @throws UsageError for an entry without a name. */
function agentVariables(pairs: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of pairs) {
    const eq = p.indexOf("=");
    if (eq <= 0) {
      throw new UsageError(`--agent-variable needs NAME VALUE, got ${JSON.stringify(p)}`);
    }
    out[p.slice(0, eq)] = p.slice(eq + 1);
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
 * How long a run that already has a prompt (argument or `-f`) waits for the first byte of a piped
 * stdin before going on without it. A launcher or supervisor may keep an empty pipe open for the
 * process's lifetime; headless runs must never block on it (issue 2: "never a hang").
 */
export const STDIN_GRACE_MS = 200;

/** What stdin is: a terminal (never read), a pipe/socket (may stay open), or anything else. */
function stdinKind(): "terminal" | "pipe" | "other" {
  if (Deno.stdin.isTerminal()) return "terminal";
  try {
    const s = Deno.statSync("/dev/stdin");
    return s.isFifo || s.isSocket ? "pipe" : "other";
  } catch {
    return "pipe"; // no /dev/stdin (Windows) or not statable: assume the cautious case
  }
}

function concat(chunks: Uint8Array[]): string {
  const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let off = 0;
  for (const c of chunks) all.set(c, off), off += c.length;
  return new TextDecoder().decode(all);
}

/**
 * Reads piped stdin to its end. With `graceMs`, gives up (returns null) when no byte and no EOF
 * arrived within that time; once the first byte is in, it reads to EOF.
 */
async function readStdin(graceMs?: number): Promise<string | null> {
  const reader = Deno.stdin.readable.getReader();
  const chunks: Uint8Array[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let abandoned = false;
  try {
    let first: ReadableStreamReadResult<Uint8Array> | null;
    if (graceMs === undefined) first = await reader.read();
    else {
      first = await Promise.race([
        reader.read(),
        new Promise<null>((res) => timer = setTimeout(() => res(null), graceMs)),
      ]);
      clearTimeout(timer);
    }
    if (first === null) {
      abandoned = true; // the pending read stays with the reader; main.ts exits explicitly
      return null;
    }
    if (first.done) return "";
    chunks.push(first.value);
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      chunks.push(r.value);
    }
    return concat(chunks);
  } finally {
    if (!abandoned) reader.releaseLock();
  }
}

/** Resolves AppOptions from parsed flags, environment and config file. */
export async function resolveApp(
  opts: ParsedCli["opts"],
  onConfigError?: (e: ConfigError) => void,
): Promise<AppOptions> {
  const { configDir, dataDir } = resolveDirs(Deno.env);
  let loaded: Awaited<ReturnType<typeof loadConfig>>;
  try {
    loaded = await loadConfig(configDir);
  } catch (e) {
    // ACP: the error is reported from `session/new` instead (docs/acp.md "Bad input").
    if (!(e instanceof ConfigError) || !onConfigError) throw e;
    onConfigError(e);
    loaded = { config: {} };
  }
  const { config, path } = loaded;
  const app: AppOptions = {
    cwd: Deno.cwd(),
    configDir,
    dataDir,
    config,
    configPath: path,
    model: opts.model,
    baseURL: opts.baseUrl,
    apiKey: opts.apiKey,
    allow: opts.allow ?? [],
    deny: opts.deny ?? [],
    dangerouslySkipPermissions: !!opts.dangerouslySkipPermissions,
    sandbox: sandboxSettings(config.sandbox, { noSandbox: opts.sandbox === false }),
    plugins: opts.plugin ?? [],
    noWorkspaceMcp: opts.workspaceMcp === false,
    verbose: !!opts.verbose,
    headless: !!opts.headless || !!opts.acpServer,
    maxTurns: opts.maxTurns ?? config.max_turns ?? 50,
    agent: opts.agent ?? config.agent,
    trustWorkspace: !!opts.trustWorkspace,
    agentVariables: agentVariables(opts.agentVariable ?? []),
    skills: opts.skill ?? [],
    addDirs: opts.addDir ?? [],
  };
  // Project config (.coyote/config.yaml, trusted workspaces only) is merged under the flags.
  const { applyWorkspace } = await import("../../config/project.ts");
  try {
    return await applyWorkspace(app, app.cwd, {
      userConfig: config,
      flags: { agent: opts.agent, maxTurns: opts.maxTurns },
    });
  } catch (e) {
    // ACP: reported from `session/new`, where the runtime applies the workspace again.
    if (!(e instanceof ConfigError) || !onConfigError) throw e;
    if (!opts.acpServer) onConfigError(e);
    return app;
  }
}

/** Largest text file `-f FILE` adds to the prompt (bytes). */
export const MAX_PROMPT_FILE_BYTES = 256 * 1024;
/** Largest image `-f FILE` attaches (bytes), for models configured with `images: true`. */
export const MAX_PROMPT_IMAGE_BYTES = 5 * 1024 * 1024;

/** The image type of `bytes` by its magic number (PNG, JPEG, GIF, WebP), or undefined. */
function imageType(bytes: Uint8Array): string | undefined {
  const at = (i: number, ...b: number[]) => b.every((x, k) => bytes[i + k] === x);
  if (at(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png";
  if (at(0, 0xff, 0xd8, 0xff)) return "image/jpeg";
  if (at(0, 0x47, 0x49, 0x46, 0x38)) return "image/gif";
  if (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50)) return "image/webp";
  return undefined;
}

/** An image `-f` attaches (ACP `image` content block). */
interface PromptImage {
  mimeType: string;
  /** Base64. */
  data: string;
}

/**
 * Reads one `-f FILE`: text, or an image when `images` names the model that accepts them.
 * Refused with a usage error: a text file over {@link MAX_PROMPT_FILE_BYTES} (an image over
 * {@link MAX_PROMPT_IMAGE_BYTES}), a binary file (a NUL byte, or not valid UTF-8), an image for
 * a model not configured with `images: true`, a directory.
 */
async function readPromptFile(
  f: string,
  images?: { model?: string; accepted: boolean },
): Promise<string | PromptImage> {
  let bytes: Uint8Array;
  try {
    const st = await Deno.stat(f);
    if (st.isDirectory) throw new Error("is a directory");
    const head = new Uint8Array(12);
    const file = await Deno.open(f);
    try {
      await file.read(head);
    } finally {
      file.close();
    }
    const mime = imageType(head);
    if (mime) {
      if (!images?.accepted) {
        throw new UsageError(
          `-f ${f} is an image (${mime}); the model ${images?.model ?? "(none chosen)"} is not ` +
            `configured to accept images (models.<name>.images: true in config.yaml)`,
        );
      }
      if (st.size > MAX_PROMPT_IMAGE_BYTES) {
        throw new UsageError(
          `-f ${f} is ${(st.size / 1048576).toFixed(1)} MiB; images may be at most ${
            MAX_PROMPT_IMAGE_BYTES / 1048576
          } MiB`,
        );
      }
      const raw = await Deno.readFile(f);
      let bin = "";
      for (let i = 0; i < raw.length; i += 0x8000) {
        bin += String.fromCharCode(...raw.subarray(i, i + 0x8000));
      }
      return { mimeType: mime, data: btoa(bin) };
    }
    if (st.size > MAX_PROMPT_FILE_BYTES) {
      throw new UsageError(
        `-f ${f} is ${(st.size / 1024).toFixed(0)} KiB; -f adds files of at most ${
          MAX_PROMPT_FILE_BYTES / 1024
        } KiB (let the model read the parts it needs, or pipe an excerpt: sed -n 1,200p ${f} | coyote -f - …)`,
      );
    }
    bytes = await Deno.readFile(f);
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(`cannot read --file ${f}: ${(e as Error).message}`);
  }
  if (bytes.length > MAX_PROMPT_FILE_BYTES) {
    throw new UsageError(`-f ${f} grew past ${MAX_PROMPT_FILE_BYTES / 1024} KiB while read`);
  }
  const binary = (why: string) =>
    new UsageError(
      `-f ${f} is a binary file (${why}); -f adds text files only (ask the model to inspect it with a tool instead)`,
    );
  if (bytes.includes(0)) throw binary("it contains NUL bytes");
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw binary("not valid UTF-8 text");
  }
}

/**
 * The prompt: argument words, then each `-f FILE` as `<file path=…>`, then piped stdin.
 * Stdin: a terminal is never read; a regular file or /dev/null is read to its end; a pipe is read to
 * its end when it is the only source of the prompt, else only if its first byte comes within
 * {@link STDIN_GRACE_MS}. `-f -` reads stdin to its end in any case (without a `<file>` wrapper).
 */
async function buildPrompt(
  words: string[],
  files: string[],
  images?: { model?: string; accepted: boolean },
): Promise<{ text: string; images: PromptImage[] }> {
  let prompt = words.join(" ").trim();
  const attached: PromptImage[] = [];
  let stdinRead = false;
  for (const f of files) {
    if (f === "-") {
      // `-f -`: stdin, read to its end whatever it is (the explicit way to wait for a slow pipe).
      if (stdinRead) throw new UsageError("-f - (stdin) given twice");
      // Never read the terminal (headless runs must not wait on it): `-f -` is for piped input.
      if (Deno.stdin.isTerminal()) {
        throw new UsageError("-f - reads piped stdin, but stdin is a terminal");
      }
      stdinRead = true;
      const piped = ((await readStdin()) ?? "").trim();
      if (piped) prompt += `${prompt ? "\n\n" : ""}${piped}`;
      continue;
    }
    const text = await readPromptFile(f, images);
    if (typeof text !== "string") {
      attached.push(text);
      continue;
    }
    prompt += `${prompt ? "\n\n" : ""}<file path="${f}">\n${text}\n</file>`;
  }
  const kind = stdinRead ? "terminal" : stdinKind();
  if (kind !== "terminal") {
    // Nothing else to go on: wait for the whole input. With a prompt already, a pipe that stays
    // silent is not waited on (a supervisor's open pipe); files and /dev/null never block.
    const wait = prompt && kind === "pipe";
    const piped = await readStdin(wait ? STDIN_GRACE_MS : undefined);
    if (piped === null) {
      Deno.stderr.writeSync(
        new TextEncoder().encode(
          `coyote: note: stdin is an open pipe with no data after ${STDIN_GRACE_MS} ms; going on without it (-f - waits for it)\n`,
        ),
      );
    } else if (piped.trim()) prompt += `${prompt ? "\n\n" : ""}${piped.trim()}`;
  }
  return { text: prompt, images: attached };
}

/**
 * The `--list-sessions` / `sessions list` table: short unique id, local time, name, (with
 * `--all`) directory, and the first prompt as title. Empty: a note on stderr.
 */
function printSessions(
  list: {
    sessionId: string;
    updatedAt: string;
    name?: string;
    cwd: string;
    title: string;
    parentId?: string;
    agentId?: string;
  }[],
  all: boolean,
  short: Map<string, string>,
  localTime: (iso: string) => string,
) {
  const enc = new TextEncoder();
  if (!list.length) {
    Deno.stderr.writeSync(
      enc.encode(
        all
          ? "no stored sessions\n"
          : "no stored sessions for this directory (--all lists every one)\n",
      ),
    );
    return;
  }
  // Sub-agent transcripts are listed under their parent session, indented by depth; the NAME
  // column shows their agent id.
  const children = new Map<string, typeof list>();
  const ids = new Set(list.map((s) => s.sessionId));
  for (const s of list) {
    if (s.parentId && ids.has(s.parentId)) {
      children.set(s.parentId, [...(children.get(s.parentId) ?? []), s]);
    }
  }
  const lines = [all ? "ID\tUPDATED\tNAME\tCWD\tTITLE" : "ID\tUPDATED\tNAME\tTITLE"];
  const add = (s: (typeof list)[number], depth: number) => {
    const short1 = short.get(s.sessionId) ?? s.sessionId;
    const id = depth ? `${"  ".repeat(depth - 1)}└ ${short1}` : short1;
    const name = s.agentId ? `${s.name ?? ""}${s.name ? " " : ""}(${s.agentId})` : s.name ?? "-";
    // Titles are the first words of a prompt (or a name) anyone could have chosen: escaped.
    const cols = [id, localTime(s.updatedAt), name, ...(all ? [s.cwd] : []), s.title];
    lines.push(cols.map((c) => safeCell(c ?? "")).join("\t"));
    for (const c of children.get(s.sessionId) ?? []) add(c, depth + 1);
  };
  for (const s of list) if (!s.parentId || !ids.has(s.parentId)) add(s, 0);
  stdout(lines.join("\n") + "\n");
}

/** `--list-sessions` and `coyote sessions list|rm`. Returns the exit code. */
async function sessionsCommand(
  app: AppOptions,
  sub: "list" | "rm",
  args: string[],
  json: boolean,
): Promise<number> {
  const s = await import("../../transcript/store.ts");
  if (sub === "list") {
    const all = args.includes("--all");
    const { listSessions } = await import("../../session/runtime.ts");
    const list = await listSessions(app, all ? {} : { cwd: app.cwd });
    if (json) stdout(JSON.stringify(list) + "\n");
    else {
      const short = s.shortIds((await s.listStoredSessions(app.dataDir)).map((x) => x.id));
      printSessions(list, all, short, s.localTime);
    }
    return 0;
  }
  const stored = await s.listStoredSessions(app.dataDir);
  let code = 0;
  for (const ref of args) {
    let r: { id: string } | { name: string };
    try {
      r = s.resolveSessionRef(stored, ref, "sessions rm");
    } catch (e) {
      code = await usageExit((e as Error).message, false);
      continue;
    }
    if (!("id" in r) || !(await s.removeSession(app.dataDir, r.id))) {
      code = await usageExit(`no stored session matches ${ref}`, false);
      continue;
    }
    // Its sub-agents' transcripts go with it (and theirs, recursively).
    const gone = new Set([r.id]);
    let children = 0;
    for (let grew = true; grew;) {
      grew = false;
      for (const c of stored) {
        if (c.parent && gone.has(c.parent) && !gone.has(c.id)) {
          gone.add(c.id);
          grew = true;
          if (await s.removeSession(app.dataDir, c.id)) children++;
        }
      }
    }
    stdout(
      `removed session ${r.id}${children ? ` and ${children} sub-agent transcript(s)` : ""}\n`,
    );
  }
  return code;
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

/** Set by {@link main}: usage/config errors also print a `result` object on stdout. */
let jsonErrors = false;

/**
 * Reports a usage or configuration error: one `coyote: …` line on stderr (plus a `--help` hint
 * for command-line mistakes) and, with `--output-format json|stream-json`, one `result` object
 * on stdout (`is_error: true`, `exit_code: 2`, `error: {code: "usage", message}`; no `init`).
 * Returns exit code 2.
 */
async function usageExit(message: string, hint: boolean | string = true): Promise<number> {
  const help = typeof hint === "string" ? hint : "coyote --help";
  Deno.stderr.writeSync(
    new TextEncoder().encode(
      `coyote: ${safeText(message).split("\n").join("\n  ")}\n${hint ? `(see ${help})\n` : ""}`,
    ),
  );
  if (jsonErrors) {
    const { EXIT, errorResult, jsonLine } = await import("../headless/mod.ts");
    stdout(jsonLine(errorResult(EXIT.usage, "usage", message)));
  }
  return 2;
}

/** The prompt words: `-p TEXT` first, then the positional words. */
function promptWords(parsed: ParsedCli): string[] {
  const p = parsed.opts.prompt;
  return [...(typeof p === "string" ? [p] : []), ...parsed.prompt];
}

/** Runs the CLI; returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const format = outputFormatFromArgv(argv);
  jsonErrors = format === "json" || format === "stream-json";
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
  if (o.cd !== undefined) {
    // `-C DIR` (Codex CLI's `--cd`, git's `-C`): everything after, `-f FILE` included, is relative
    // to DIR. This is how `deno task coyote`, which always starts in Coyote's own folder, works
    // on another repository.
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
      const { trustCommand } = await import("../../config/trust.ts");
      return trustCommand(
        { dataDir: app.dataDir, config: app.workspace?.userConfig ?? app.config },
        { dir: args[0], revoke: sub === "revoke", list: sub === "list" },
        (l) => stdout(safeText(l) + "\n"),
        (l) => Deno.stderr.writeSync(new TextEncoder().encode(safeText(l) + "\n")),
      );
    }
    if (name === "sessions") {
      return await sessionsCommand(app, sub as "list" | "rm", args, args.includes("--json"));
    }
    if (name === "mcp") {
      return await (await import("./mcp.ts")).mcpCommand(app, sub as "list", args);
    }
    if (name === "graph") {
      return await (await import("./graph.ts")).graphCommand(app, sub, args, textOut);
    }
    return await (await import("./policy.ts")).policyCommand(
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
    built = await buildPrompt(promptWords(parsed), o.file ?? [], { model, accepted });
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
        : 'no prompt given: coyote "your request" (the interactive REPL needs a terminal)',
    );
  }
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
  if (repl) {
    const { runRepl } = await import("../repl/mod.ts");
    return await runRepl(app, { sessionName: o.session, continueLatest: !!o.continue });
  }
  const { runPrompt } = await import("../headless/mod.ts");
  return await runPrompt(app, {
    prompt,
    format: o.outputFormat ?? "text",
    sessionName: o.session,
    continueLatest: !!o.continue,
  });
}
