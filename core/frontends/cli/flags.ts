/**
 * The program's flags as data ({@link FLAGS}): the one table that both the `commander` program
 * (./args.ts `buildProgram`, for `--help`, subcommands and every error message) and the small
 * parser of the common runs ({@link quickParse}: `coyote "prompt"`, `--headless`, `--acp-server`)
 * read. `commander` pulls Node's compatibility layer (≈ 26 ms at start, issue 22), so a run whose
 * argv this table fully explains never loads it; anything else — help, `-V` with other words, a
 * subcommand, an unknown or malformed flag, a value a flag's parser rejects — falls back to
 * `commander`, so its messages stay the only ones. `tests/cli_flags_test.ts` checks that both
 * parsers give the same {@link ParsedCli} for a set of argvs.
 * @module
 */
import { UsageError } from "./output.ts";

/** One option of the program, in `commander`'s terms. */
export interface FlagSpec {
  /** `commander` flags string: `-m, --model <model>`, `--headless`, `-p, --prompt [text]`, `--no-sandbox`. */
  flags: string;
  description: string;
  /** `commander`'s custom option processing: `(value, previous) => next`. May throw {@link UsageError}. */
  // deno-lint-ignore no-explicit-any
  parse?: (value: string, previous: any) => unknown;
  /** Default value (set even when the flag is absent). */
  default?: unknown;
  /** Allowed values (`commander`'s `Option.choices`). */
  choices?: string[];
}

const collect = (v: string, prev: string[]) => [...prev, v];

function positiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) {
    throw new UsageError(`--max-turns must be a positive integer, got ${JSON.stringify(v)}`);
  }
  return n;
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

/** The program's options, in `--help` order. Add a flag here (not on the commander chain). */
export const FLAGS: FlagSpec[] = [
  {
    flags: "-p, --prompt [text]",
    description:
      "the request as a flag value; prompt words after it are appended (a bare -p, as in Claude Code, is accepted)",
  },
  {
    flags: "-m, --model <model>",
    description: "model name (env COYOTE_MODEL; config model)",
    parse: nonEmpty("-m/--model"),
  },
  {
    flags: "--base-url <url>",
    description: "OpenAI-compatible base URL (env OPENAI_BASE_URL)",
    parse: nonEmpty("--base-url"),
  },
  { flags: "--api-key <key>", description: "API key (prefer env OPENAI_API_KEY)" },
  {
    flags: "-C, --cd <dir>",
    description: "work in DIR instead of the current directory (like git -C)",
  },
  {
    flags: "--headless",
    description: "never read from or prompt on the terminal; guard 'ask' is denied",
  },
  {
    flags: "--output-format <format>",
    description: "output format",
    choices: ["text", "json", "stream-json"],
    default: "text",
  },
  {
    flags: "--output-schema <file>",
    description:
      "the final answer must be JSON valid against this JSON Schema file (one repair turn; result structured_output)",
    parse: nonEmpty("--output-schema"),
  },
  {
    flags: "--record <file>",
    description:
      "write every model request and streamed response of the run to FILE (JSONL, secrets redacted; docs/ci.md)",
    parse: nonEmpty("--record"),
  },
  {
    flags: "--replay <file>",
    description:
      "serve the model from a --record FILE, no network; a request that differs fails the run",
    parse: nonEmpty("--replay"),
  },
  {
    flags: "-f, --file <path>",
    description: "add a file's contents to the prompt (repeatable; '-' waits for all of stdin)",
    parse: collect,
    default: [],
  },
  {
    flags: "--max-turns <n>",
    description: "model requests allowed per turn (default 50)",
    parse: positiveInt,
  },
  {
    flags: "--max-budget-usd <usd>",
    description: "end the run when its cost reaches USD (needs the model's price in models:)",
    parse: positiveNumber("--max-budget-usd"),
  },
  {
    flags: "--max-budget-tokens <n>",
    description: "end the run when its total tokens reach n",
    parse: positiveNumber("--max-budget-tokens", true),
  },
  {
    flags: "--allow <rule>",
    description: "add an allow rule, e.g. 'Execute(npm test)' (repeatable)",
    parse: collect,
    default: [],
  },
  {
    flags: "--deny <rule>",
    description: "add a deny rule, e.g. 'Execute(rm *)' (repeatable)",
    parse: collect,
    default: [],
  },
  {
    flags: "--mode <mode>",
    description:
      "permission mode: plan (read-only), default (asks for writes and commands), accept-edits, auto (default; config mode)",
    choices: ["plan", "default", "accept-edits", "auto"],
  },
  {
    flags: "--dangerously-skip-permissions",
    description: "allow everything except deny rules (commands stay in the OS sandbox)",
  },
  {
    flags: "--no-sandbox",
    description: "run commands without the OS sandbox (config sandbox: off)",
  },
  {
    flags: "--plugin <path>",
    description: "load a plugin module (repeatable)",
    parse: collect,
    default: [],
  },
  {
    flags: "--no-workspace-mcp",
    description: "ignore the workspace's .mcp.json / .coyote/mcp.json",
  },
  {
    flags: "--verbose",
    description: "record more in the transcript (graph agents: the state after each node)",
  },
  {
    flags: "-a, --agent <name>",
    description: "agent to use (default sisyphus; see `coyote agents list`)",
  },
  {
    flags: "--agent-variable <name value>",
    description:
      "set a variable of the agent's instructions: --agent-variable NAME VALUE (repeatable)",
    parse: collect,
    default: [],
  },
  {
    flags: "--skill <name>",
    description: "load a skill before the first request (repeatable)",
    parse: collect,
    default: [],
  },
  {
    flags: "--add-dir <dir>",
    description:
      "also discover skills in DIR/.coyote/skills, DIR/.claude/skills, DIR/.agents/skills (repeatable)",
    parse: collect,
    default: [],
  },
  {
    flags: "--session <id|name>",
    description:
      "continue the stored session with this id (or unique id prefix of 8+ chars) or name; else start one named so",
  },
  { flags: "-c, --continue", description: "continue the latest session of this directory" },
  {
    flags: "-r, --resume [id]",
    description:
      "continue the stored session with this id, unique id prefix or name (it must exist); bare: a picker on a terminal, else the latest one, like --continue",
  },
  { flags: "--list-sessions", description: "list this directory's stored sessions and exit" },
  // Sessions and workspace trust (core/transcript/store.ts, core/config/trust.ts).
  { flags: "--all", description: "with --list-sessions: list the sessions of every directory" },
  {
    flags: "--trust-workspace",
    description:
      "trust this workspace for this run: start its .mcp.json servers, load .coyote/ plugins and config",
  },
  { flags: "--acp-server", description: "serve the Agent Client Protocol over stdio" },
];

/**
 * The program's subcommand names (`commander` dispatches a first operand that is one of them).
 * `tests/cli_flags_test.ts` checks this list against the commands ./args.ts registers.
 */
export const COMMAND_NAMES = [
  "plugins",
  "mcp",
  "agents",
  "graph",
  "policy",
  "trust",
  "sessions",
  "resume",
  "rewind",
  "help",
];

interface Parsed {
  short?: string;
  long: string;
  key: string;
  value: "none" | "required" | "optional";
  negate: boolean;
  spec: FlagSpec;
}

const camel = (s: string) => s.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

function parseSpec(spec: FlagSpec): Parsed {
  const m = /^(?:-(\w), )?--([\w-]+)(?: ([<[]).*[>\]])?$/.exec(spec.flags);
  if (!m) throw new Error(`flags.ts: cannot read flags ${JSON.stringify(spec.flags)}`);
  const negate = m[2].startsWith("no-");
  return {
    short: m[1],
    long: m[2],
    key: camel(negate ? m[2].slice(3) : m[2]),
    value: m[3] === "<" ? "required" : m[3] === "[" ? "optional" : "none",
    negate,
    spec,
  };
}

let table: Map<string, Parsed> | undefined;

function lookup(): Map<string, Parsed> {
  if (table) return table;
  table = new Map();
  for (const s of FLAGS) {
    const p = parseSpec(s);
    table.set(`--${p.long}`, p);
    if (p.short) table.set(`-${p.short}`, p);
  }
  return table;
}

/** Something `commander` reads as an option rather than a value (its `maybeOption`). */
const dashed = (a: string) => a.length > 1 && a[0] === "-";

/**
 * Parses argv (after ./args.ts `joinAgentVariables`) the way `commander` would, using only
 * {@link FLAGS}: `--flag`, `--flag value`, `--flag=value`, `-x value`, operands, `--`. Returns
 * undefined for anything it does not fully explain (help, version, a subcommand, an unknown,
 * combined or malformed flag, a value a parser rejects, an invalid choice): the caller then runs
 * `commander`, whose result and messages are the reference.
 */
export function quickParse(
  argv: string[],
): { prompt: string[]; opts: Record<string, unknown> } | undefined {
  const flags = lookup();
  const opts: Record<string, unknown> = {};
  for (const p of new Set(flags.values())) {
    if (p.negate) opts[p.key] = true;
    else if (p.spec.default !== undefined) opts[p.key] = p.spec.default;
  }
  const prompt: string[] = [];
  const set = (p: Parsed, value: string | undefined) => {
    if (value === undefined) {
      opts[p.key] = p.negate ? false : true;
      return true;
    }
    if (p.spec.choices && !p.spec.choices.includes(value)) return false;
    if (p.spec.parse) {
      try {
        opts[p.key] = p.spec.parse(value, opts[p.key]);
      } catch {
        return false; // commander says it, in its words
      }
    } else opts[p.key] = value;
    return true;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") {
      prompt.push(...argv.slice(i + 1));
      break;
    }
    if (!dashed(a)) {
      prompt.push(a);
      continue;
    }
    const eq = a.startsWith("--") ? a.indexOf("=") : -1;
    const name = eq > 0 ? a.slice(0, eq) : a;
    const p = flags.get(name);
    if (!p) return undefined;
    if (eq > 0) {
      if (p.value === "none" || !set(p, a.slice(eq + 1))) return undefined;
      continue;
    }
    if (p.value === "none") {
      set(p, undefined);
      continue;
    }
    const next = argv[i + 1];
    if (p.value === "required") {
      if (next === undefined || dashed(next) || !set(p, next)) return undefined;
      i++;
      continue;
    }
    // Optional value: taken when the next word is not option-like.
    if (next !== undefined && !dashed(next)) {
      if (!set(p, next)) return undefined;
      i++;
    } else set(p, undefined);
  }
  // A first operand naming a subcommand (`--` included) is commander's dispatch.
  if (prompt.length && COMMAND_NAMES.includes(prompt[0])) return undefined;
  return { prompt, opts };
}
