/**
 * Custom slash commands (issue 19): Markdown prompt files, Claude Code's format.
 *
 * Where they come from, later shadowing earlier of the same name (with a warning):
 * 1. the user's `<config dir>/commands/` (`~/.config/coyote/commands/`, `$COYOTE_CONFIG_DIR`),
 *    scope `user`;
 * 2. in a **trusted** workspace only, `.claude/commands/` then `.coyote/commands/` of each folder
 *    from the repository root down to the working directory (nearest last), scope `project`. An
 *    untrusted workspace's command files are not read (a warning says so): a cloned repository
 *    must not choose the prompts a user runs by habit.
 *
 * A file `NAME.md` is `/NAME`; a file in a subfolder is namespaced with `:` —
 * `frontend/component.md` is `/frontend:component` (Claude Code's earlier naming, the same colon
 * as MCP prompts' `/<server>:<prompt>`). Front matter is optional; its keys:
 * `description` (string; default: the body's first line), `argument-hint` (string, shown as is,
 * e.g. `[issue-number] [priority]`), `allowed-tools` (a comma-separated string or a list of tool
 * names or globs; Claude Code's names map to Coyote's, see {@link toolPatterns}), `model`
 * (string). Claude Code's `disable-model-invocation` is accepted and ignored. Any other key is a
 * warning; a key of the wrong type makes the file an error (naming the file and the field) and
 * the command is not offered. A file never throws out of {@link loadCustomCommands}.
 * @module
 */
import { join, relative } from "../../util/path.ts";
import { parseFrontMatter } from "../../util/frontmatter.ts";
import { CLAUDE_TOOL_NAMES } from "../../tools/claude_names.ts";
import {
  exists,
  MAX_WORKSPACE_FILE_BYTES,
  outsideWorkspace,
  workspaceDirs,
} from "../../config/workspace_dirs.ts";

/** One custom command, ready to expand. */
export interface CustomCommand {
  /** Name without the slash: `fix-issue`, `frontend:component`. */
  name: string;
  description: string;
  /** `argument-hint` (ACP `input.hint`). */
  hint?: string;
  /** `allowed-tools`: the tool-name patterns the command's turn is narrowed to. */
  allowedTools?: string[];
  /** `model`: the model of the command's turn. */
  model?: string;
  /** The prompt template (the file's body). */
  body: string;
  /** Absolute path of the file. */
  path: string;
  scope: "user" | "project";
  /** The subfolder path (`frontend`), when namespaced. */
  namespace?: string;
}

/** What {@link loadCustomCommands} found. */
export interface CommandsLoad {
  commands: CustomCommand[];
  /** Files that could not be used: `<path>: <field>: <problem>`. */
  errors: string[];
  /** Shadowed names, unknown keys, untrusted folders skipped, lenient front matter. */
  warnings: string[];
}

/** Where to look and what a command may not be named. */
export interface CommandsInput {
  /** The user's config dir (`AppOptions.configDir`). */
  configDir: string;
  /** The working directory of the session. */
  cwd: string;
  /** Workspace trust: workspace command folders load only when true. */
  trusted: boolean;
  /** Names a custom command may not take (the built-in commands): skipped with a warning. */
  reserved?: readonly string[];
}

const KNOWN_KEYS = new Set([
  "description",
  "argument-hint",
  "allowed-tools",
  "model",
  "disable-model-invocation",
]);
const SEGMENT = /^[A-Za-z0-9][\w.-]*$/;
/** Deepest subfolder nesting read below a commands folder. */
const MAX_DEPTH = 4;

/** The workspace command folders, relative to each workspace directory. */
export const WORKSPACE_COMMAND_DIRS = [".claude/commands", ".coyote/commands"] as const;

/** Loads every custom command (see the module doc). Never throws. */
export async function loadCustomCommands(input: CommandsInput): Promise<CommandsLoad> {
  const out: CommandsLoad = { commands: [], errors: [], warnings: [] };
  const byName = new Map<string, CustomCommand>();
  const reserved = new Set(input.reserved ?? []);
  const roots: { dir: string; scope: "user" | "project"; top?: string }[] = [
    { dir: join(input.configDir, "commands"), scope: "user" },
  ];
  const dirs = workspaceDirs(input.cwd).reverse();
  const top = dirs[0];
  for (const d of dirs) {
    for (const rel of WORKSPACE_COMMAND_DIRS) {
      const dir = join(d, rel);
      if (!exists(dir)) continue;
      if (!input.trusted) {
        // The working directory's folders are named by the untrusted-workspace note already
        // (core/config/trust.ts gatedWorkspaceFiles); an ancestor's are not.
        if (d !== dirs.at(-1)) {
          out.warnings.push(
            `${dir}: not read, the workspace is not trusted (coyote trust, or --trust-workspace)`,
          );
        }
        continue;
      }
      roots.push({ dir, scope: "project", top });
    }
  }
  for (const root of roots) {
    for (const file of markdownFiles(root.dir)) {
      const cmd = await readCommand(file, root, out);
      if (!cmd) continue;
      if (reserved.has(cmd.name)) {
        out.warnings.push(
          `${file}: /${cmd.name} is a built-in command; this file is ignored (rename it)`,
        );
        continue;
      }
      const earlier = byName.get(cmd.name);
      if (earlier) out.warnings.push(`${file}: /${cmd.name} shadows ${earlier.path}`);
      byName.set(cmd.name, cmd);
    }
  }
  out.commands = [...byName.values()].sort((a, b) => a.name < b.name ? -1 : 1);
  return out;
}

/** `*.md` files below `dir` (sorted, up to {@link MAX_DEPTH} folders deep); none when missing. */
function markdownFiles(dir: string, depth = 0): string[] {
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir)];
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const e of entries.sort((a, b) => a.name < b.name ? -1 : 1)) {
    const p = join(dir, e.name);
    if (e.isDirectory && depth < MAX_DEPTH) out.push(...markdownFiles(p, depth + 1));
    else if (!e.isDirectory && e.name.endsWith(".md")) out.push(p);
  }
  return out;
}

async function readCommand(
  file: string,
  root: { dir: string; scope: "user" | "project"; top?: string },
  out: CommandsLoad,
): Promise<CustomCommand | null> {
  const segments = relative(root.dir, file).replace(/\.md$/, "").split("/");
  const bad = segments.find((s) => !SEGMENT.test(s));
  if (bad !== undefined) {
    out.errors.push(
      `${file}: name: "${bad}" is not a command name (letters, digits, ".", "_", "-"; first a letter or digit)`,
    );
    return null;
  }
  // A workspace file is read only when it really lies inside the workspace (no symlink out).
  const why = root.top ? outsideWorkspace(file, root.top) : tooBig(file);
  if (why) {
    out.errors.push(`${file}: ${why}`);
    return null;
  }
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (e) {
    out.errors.push(`${file}: cannot read: ${(e as Error).message}`);
    return null;
  }
  let data: Record<string, unknown> = {};
  let body = text.trim();
  if (/^\uFEFF?---[ \t]*\r?\n/.test(text)) {
    try {
      const fm = await parseFrontMatter(text);
      data = fm.data;
      body = fm.body;
      if (fm.warning) out.warnings.push(`${file}: ${fm.warning}`);
    } catch (e) {
      out.errors.push(`${file}: front matter: ${(e as Error).message}`);
      return null;
    }
  }
  const name = segments.join(":");
  const cmd: CustomCommand = {
    name,
    description: "",
    body,
    path: file,
    scope: root.scope,
    ...(segments.length > 1 ? { namespace: segments.slice(0, -1).join("/") } : {}),
  };
  for (const [key, value] of Object.entries(data)) {
    if (!KNOWN_KEYS.has(key)) {
      out.warnings.push(
        `${file}: ${key}: unknown front matter key, ignored (known: ${[...KNOWN_KEYS].join(", ")})`,
      );
      continue;
    }
    const problem = setField(cmd, key, value, text);
    if (problem) {
      out.errors.push(`${file}: ${key}: ${problem}`);
      return null;
    }
  }
  if (!cmd.description) {
    const first = body.split("\n").map((l) => l.replace(/^#+\s*/, "").trim()).find(Boolean);
    cmd.description = first ? first.slice(0, 80) : `custom command from ${file}`;
  }
  const label = cmd.namespace ? `${cmd.scope}:${cmd.namespace}` : cmd.scope;
  cmd.description = `${cmd.description} (${label})`;
  return cmd;
}

function tooBig(file: string): string | undefined {
  try {
    const st = Deno.statSync(file);
    if (!st.isFile) return "not a regular file; not read";
    if (st.size > MAX_WORKSPACE_FILE_BYTES) {
      return `${st.size} bytes, over the ${MAX_WORKSPACE_FILE_BYTES} byte limit; not read`;
    }
  } catch (e) {
    return `cannot read: ${(e as Error).message}`;
  }
  return undefined;
}

/** Applies one known key to `cmd`; returns the problem with its value, or undefined. */
function setField(cmd: CustomCommand, key: string, value: unknown, text: string) {
  switch (key) {
    case "description":
      if (typeof value !== "string") return `must be a string, not ${typeName(value)}`;
      cmd.description = value.trim();
      return;
    case "argument-hint": {
      // `argument-hint: [issue-number] [priority]` (Claude Code's documented form) is a YAML
      // list, or not YAML at all: the raw text of the line is what the user wrote.
      const raw = /^argument-hint:[ \t]*(.*)$/m.exec(text)?.[1]?.trim();
      const v = raw && Array.isArray(value) ? raw.replace(/^(["'])(.*)\1$/, "$2") : value;
      if (typeof v !== "string" && typeof v !== "number") {
        return `must be a string, not ${typeName(value)}`;
      }
      cmd.hint = String(v).trim() || undefined;
      return;
    }
    case "allowed-tools": {
      const list = typeof value === "string"
        ? splitTools(value)
        : Array.isArray(value) && value.every((x) => typeof x === "string")
        ? value.flatMap((x) => splitTools(x))
        : null;
      if (!list) return `must be a string or a list of strings, not ${typeName(value)}`;
      if (!list.length) return "names no tool";
      cmd.allowedTools = list;
      return;
    }
    case "model":
      if (typeof value !== "string" || !value.trim()) {
        return `must be a model id (a string), not ${typeName(value)}`;
      }
      cmd.model = value.trim();
      return;
    case "disable-model-invocation":
      if (typeof value !== "boolean") return `must be true or false, not ${typeName(value)}`;
      return;
  }
}

/** `"Bash(git add:*), Read"` → `["Bash(git add:*)", "Read"]` (commas inside parentheses kept). */
function splitTools(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = "";
  for (const ch of s) {
    if (ch === "(") depth++;
    if (ch === ")") depth = Math.max(0, depth - 1);
    if ((ch === "," || /\s/.test(ch)) && depth === 0) {
      if (cur.trim()) out.push(cur.trim());
      cur = "";
      continue;
    }
    cur += ch;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

function typeName(v: unknown): string {
  return v === null
    ? "null"
    : Array.isArray(v)
    ? "a list"
    : typeof v === "object"
    ? "a mapping"
    : `a ${typeof v}`;
}

/**
 * The tool-name globs of `allowed-tools` entries: a Coyote name or glob as is (`fs_read`,
 * `mcp__github__*`); a Claude Code name mapped (core/tools/claude_names.ts: `Bash` →
 * `execute_command`, `Read` → `fs_read`, `Edit` → `fs_patch`, `Task` → `agent__*`, …). `Bash(git add:*)`'s specifier only names the
 * tool here: it narrows the turn's tools and grants nothing (the permission rules still decide
 * each command).
 */
export function toolPatterns(allowed: string[]): string[] {
  return allowed.flatMap((e) => {
    const name = e.replace(/\(.*\)$/s, "").trim();
    return CLAUDE_TOOL_NAMES[name] ?? [name];
  });
}

/** True when `tool` matches one of the globs (`*` any run of characters). */
export function toolAllowed(tool: string, patterns: string[]): boolean {
  return patterns.some((p) =>
    p === tool ||
    (p.includes("*") &&
      new RegExp(`^${p.split("*").map((x) => x.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`)
        .test(tool))
  );
}

/**
 * Words of an argument line: whitespace-separated, `"double"` or `'single'` quotes keep spaces.
 */
export function argumentWords(args: string): string[] {
  const out: string[] = [];
  for (const m of args.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) out.push(m[1] ?? m[2] ?? m[3]);
  return out;
}

/**
 * The prompt of `/name args`: `$ARGUMENTS` → the whole argument line, `$1`…`$9` → its words
 * (quotes group words; a missing one is empty). A body with neither placeholder gets the
 * arguments appended as `ARGUMENTS: …` (as Claude Code does), when there are any.
 */
export function expandCommand(cmd: Pick<CustomCommand, "body">, args: string): string {
  const words = argumentWords(args);
  const uses = /\$ARGUMENTS|\$[1-9]/.test(cmd.body);
  const text = cmd.body
    .replace(/\$ARGUMENTS/g, () => args)
    .replace(/\$([1-9])(?![0-9])/g, (_m, d: string) => words[Number(d) - 1] ?? "");
  return !uses && args ? `${text}\n\nARGUMENTS: ${args}` : text;
}
