/**
 * Workspace trust (issue 11 §3, after Claude Code's "Do you trust the files in this folder?" and
 * Gemini CLI's trusted folders): a repository is **untrusted until the user trusts it**. In an
 * untrusted workspace Coyote does not start its `.mcp.json` / `.coyote/mcp.json` servers, does not
 * load `.coyote/plugins/`, and does not apply `.coyote/config.yaml` / `.coyote/config.local.yaml`
 * (their permission rules included). Instruction files and skills are text and still load.
 *
 * Where trust comes from, strongest first:
 * 1. `--trust-workspace` (this run only; `AppOptions.trustWorkspace`);
 * 2. the nearest entry, for the folder or one of its parents, among
 *    - `trusted_workspaces:` in the user's `config.yaml` (a listed folder trusts everything below
 *      it; on a tie with a stored entry the config wins), and
 *    - `<data dir>/trusted_folders.json` (`{"<abs path>": "trusted" | "untrusted"}`, Gemini CLI's
 *      `trustedFolders.json` shape) written by `coyote trust [--revoke] [DIR]` and by the
 *      one-time question on a terminal (a "no" is remembered as `untrusted`, so it asks once).
 * 3. otherwise untrusted (`source: "unknown"`): a one-shot run on a terminal asks once when the
 *    workspace has something trust would enable; headless and ACP runs never ask.
 *
 * Paths are compared after symlinks are resolved. The default folder to trust is the workspace
 * root: the enclosing git repository's top folder, else the directory itself.
 * @module
 */
import { safeText } from "../util/terminal_safe.ts";
import { exists } from "./workspace_dirs.ts";

/** What decided a workspace's trust. */
export type TrustSource = "flag" | "config" | "stored" | "unknown";

/** The trust of one workspace, as the runtime exposes it (`AgentSession.trust`). */
export interface TrustState {
  trusted: boolean;
  /** Where the decision came from; `unknown` = nobody decided (untrusted, may be asked). */
  source: TrustSource;
  /** The folder whose entry decided (for `flag`/`unknown`: the workspace root). */
  path: string;
  /** The workspace root: git top folder of the directory, else the directory (real path). */
  root: string;
}

/** What trust needs from the options (a subset of `AppOptions`). */
export interface TrustInput {
  dataDir: string;
  /** The user config (`trusted_workspaces` is only read from it, never from project config). */
  // deno-lint-ignore no-explicit-any
  config?: any;
  /** `--trust-workspace`. */
  trustWorkspace?: boolean;
}

/** File name of the trust store inside the data dir. */
export const TRUST_FILE = "trusted_folders.json";

type Stored = Record<string, "trusted" | "untrusted">;

function realOrSelf(p: string): string {
  try {
    return Deno.realPathSync(p);
  } catch {
    return p;
  }
}

function absolute(p: string, base: string = Deno.cwd()): string {
  const home = Deno.env.get("HOME") ?? "";
  let abs = p === "~" ? home : p.startsWith("~/") ? `${home}${p.slice(1)}` : p;
  if (!abs.startsWith("/")) abs = `${base.replace(/\/+$/, "")}/${abs}`;
  // normalise `.`/`..` and duplicate slashes
  const out: string[] = [];
  for (const seg of abs.split("/")) {
    if (!seg || seg === ".") continue;
    if (seg === "..") out.pop();
    else out.push(seg);
  }
  return realOrSelf("/" + out.join("/"));
}

/** True when `dir` is `parent` or lies below it. */
function within(dir: string, parent: string): boolean {
  return parent === "/" || dir === parent || dir.startsWith(parent + "/");
}

/**
 * The workspace root of `dir`: the nearest ancestor (or itself) holding `.git` (a folder, or a
 * file in worktrees and submodules), else `dir`. Real path.
 */
export function workspaceRoot(dir: string): string {
  const start = absolute(dir);
  let d = start;
  while (true) {
    try {
      Deno.statSync(`${d === "/" ? "" : d}/.git`);
      return d;
    } catch { /* keep looking */ }
    if (d === "/") return start;
    d = d.slice(0, d.lastIndexOf("/")) || "/";
  }
}

function storePath(dataDir: string): string {
  return `${dataDir.replace(/\/+$/, "")}/${TRUST_FILE}`;
}

/** Reads the trust store; a missing or unreadable file is empty (untrusted: fails closed). */
export function readTrustStore(dataDir: string): Stored {
  try {
    const doc = JSON.parse(Deno.readTextFileSync(storePath(dataDir)));
    const out: Stored = {};
    if (doc && typeof doc === "object" && !Array.isArray(doc)) {
      for (const [k, v] of Object.entries(doc)) {
        if (k.startsWith("/") && (v === "trusted" || v === "untrusted")) out[k] = v;
      }
    }
    return out;
  } catch {
    return {};
  }
}

/** `trusted_workspaces` of the user config as absolute real paths (non-strings ignored). */
function configEntries(config: TrustInput["config"]): string[] {
  const list = config?.trusted_workspaces;
  if (!Array.isArray(list)) return [];
  return list.filter((x): x is string => typeof x === "string" && x.trim() !== "")
    .map((x) => absolute(x.trim(), Deno.env.get("HOME") ?? "/"));
}

/** The trust of the workspace at `cwd` (see the module doc for the order). Never throws. */
export function trustState(input: TrustInput, cwd: string): TrustState {
  const dir = absolute(cwd);
  const root = workspaceRoot(dir);
  if (input.trustWorkspace) return { trusted: true, source: "flag", path: root, root };
  let best: { path: string; trusted: boolean; source: TrustSource } | null = null;
  const consider = (path: string, trusted: boolean, source: TrustSource) => {
    if (!within(dir, path)) return;
    if (!best || path.length > best.path.length) best = { path, trusted, source };
  };
  for (const [path, v] of Object.entries(readTrustStore(input.dataDir))) {
    consider(path, v === "trusted", "stored");
  }
  // Config entries are considered last, so on a tie (same folder) they win.
  for (const path of configEntries(input.config)) {
    if (!within(dir, path)) continue;
    const b = best as { path: string } | null;
    if (!b || path.length >= b.path.length) best = { path, trusted: true, source: "config" };
  }
  if (best) {
    const b = best as { path: string; trusted: boolean; source: TrustSource };
    return { trusted: b.trusted, source: b.source, path: b.path, root };
  }
  return { trusted: false, source: "unknown", path: root, root };
}

/** `trustState(input, cwd).trusted`: the check other modules (plugins, MCP, agents) make. */
export function isTrusted(input: TrustInput, cwd: string): boolean {
  return trustState(input, cwd).trusted;
}

/**
 * The trust of `cwd` for options that may already carry it (`AppOptions.workspace`, set by
 * `applyWorkspace`); otherwise computed from the user config (never from project config).
 */
export function appTrusts(
  app: TrustInput & { workspace?: { cwd: string; trust: TrustState; userConfig?: unknown } },
  cwd: string,
): boolean {
  if (app.workspace?.cwd === cwd) return app.workspace.trust.trusted;
  return isTrusted({ ...app, config: app.workspace?.userConfig ?? app.config }, cwd);
}

/**
 * Records trust for `dir` (absolute real path taken) in the data dir's store: `true` trusts,
 * `false` marks it untrusted (a "no" answer, `coyote trust --revoke`). Written atomically
 * (temp file + rename). Returns the path recorded.
 */
export function setTrust(dataDir: string, dir: string, trusted: boolean): string {
  const path = absolute(dir);
  const store = readTrustStore(dataDir);
  store[path] = trusted ? "trusted" : "untrusted";
  Deno.mkdirSync(dataDir, { recursive: true });
  const file = storePath(dataDir);
  const tmp = `${file}.${crypto.randomUUID()}.tmp`;
  Deno.writeTextFileSync(tmp, JSON.stringify(store, null, 2) + "\n", { mode: 0o600 });
  Deno.renameSync(tmp, file);
  return path;
}

/**
 * What trust would enable in the workspace at `cwd`: the workspace files trust gates that exist
 * (relative names, e.g. `.mcp.json`, `.coyote/plugins/`). Empty = nothing to ask about.
 * Agent files (`.coyote/agents/`) are not among them: they are text and load untrusted
 * (docs/agents.md "Where agents are found"), so they neither trigger the question nor the note.
 * Custom slash commands (`.claude/commands/`, `.coyote/commands/`) are: they are prompts a user
 * runs by habit, so a cloned repository's load only when trusted (docs/commands.md).
 */
export function gatedWorkspaceFiles(cwd: string): string[] {
  const names = [
    ".mcp.json",
    ".coyote/.mcp.json",
    ".coyote/mcp.json",
    ".coyote/plugins/",
    ".coyote/config.yaml",
    ".coyote/config.local.yaml",
    ".claude/commands/",
    ".coyote/commands/",
  ];
  const base = cwd.replace(/\/+$/, "");
  // Claude Code's settings count when they hold hooks (trust would run them; docs/hooks.md).
  const claude = [".claude/settings.json", ".claude/settings.local.json"].filter((n) => {
    try {
      const v = JSON.parse(Deno.readTextFileSync(`${base}/${n}`));
      return !!v && typeof v === "object" && v.hooks !== undefined;
    } catch {
      return false;
    }
  });
  return [...names.filter((n) => exists(`${base}/${n.replace(/\/$/, "")}`)), ...claude];
}

/** Workspace roots whose question was answered "no" in this process (it said so itself). */
const refusedNow = new Set<string>();

/**
 * True when the user answered the terminal question for `root` with "no" in this process: its
 * answer line already said what is ignored, so the workspace does not say it again.
 */
export function refusedJustNow(root: string): boolean {
  return refusedNow.has(root);
}

/** One line for a run in an untrusted workspace that has gated files (stderr). */
export function untrustedNote(state: TrustState, files: string[]): string {
  return `coyote: workspace ${state.root} is not trusted: ignoring ${files.join(", ")} ` +
    `(trust it with \`coyote trust\`, or pass --trust-workspace for one run)`;
}

/** Reads one line from the terminal (raw bytes up to a newline); null at end of input. */
async function readTerminalLine(): Promise<string | null> {
  const buf = new Uint8Array(1);
  const bytes: number[] = [];
  while (true) {
    const n = await Deno.stdin.read(buf);
    if (n === null) return bytes.length ? new TextDecoder().decode(new Uint8Array(bytes)) : null;
    if (buf[0] === 10) return new TextDecoder().decode(new Uint8Array(bytes));
    bytes.push(buf[0]);
  }
}

/**
 * The one-time question on a terminal ("Trust this folder? [y/N]", asked once in the block, which
 * names the folder and its gated files), on stderr; the answer is remembered for the workspace
 * root (`y`/`yes` trusts, anything else records `untrusted`) and acknowledged in one line (after
 * a "no", {@link refusedJustNow} keeps the workspace from repeating it). Returns the new state.
 */
export async function askTrust(
  input: TrustInput,
  state: TrustState,
  files: string[],
): Promise<TrustState> {
  const enc = new TextEncoder();
  // The folder's path (a cloned repository chose its name) is shown escaped (core/util/terminal_safe.ts).
  Deno.stderr.writeSync(enc.encode(safeText(
    `\nThe folder ${state.root} has workspace configuration that can run programs: ` +
      `${files.join(", ")}.\n` +
      `Trusting it starts its MCP servers, loads its plugins and applies its .coyote/ config.\n` +
      `Only trust folders whose contents you trust. Trust this folder? [y/N] `,
  )));
  const answer = ((await readTerminalLine()) ?? "").trim();
  const yes = /^y(es)?$/i.test(answer);
  setTrust(input.dataDir, state.root, yes);
  // One line either way; after a "no" the workspace's own untrusted note is not repeated.
  if (!yes) refusedNow.add(state.root);
  Deno.stderr.writeSync(enc.encode(safeText(
    yes
      ? `coyote: trusted ${state.root} (undo with \`coyote trust --revoke\`)\n`
      : `coyote: not trusted: ignoring ${files.join(", ")} (change with \`coyote trust\`)\n`,
  )));
  return trustState(input, state.root);
}

/**
 * `coyote trust [DIR]`, `coyote trust --revoke [DIR]`, `coyote trust --list`: prints one line
 * per action on stdout (`--list` with no entries: a note on stderr, stdout empty); returns the exit
 * code (2 when DIR is not a directory).
 */
export function trustCommand(
  input: TrustInput,
  opts: { dir?: string; revoke?: boolean; list?: boolean },
  out: (line: string) => void,
  err: (line: string) => void,
): number {
  if (opts.list) {
    const stored = readTrustStore(input.dataDir);
    for (const [path, v] of Object.entries(stored).sort()) out(`${v}\t${path}\t(${TRUST_FILE})`);
    const fromConfig = configEntries(input.config);
    for (const path of fromConfig) out(`trusted\t${path}\t(config.yaml)`);
    // Nothing listed: say so on stderr (stdout stays empty for scripts), as `--list-sessions` does.
    if (!Object.keys(stored).length && !fromConfig.length) {
      err("no trusted or untrusted folders yet (`coyote trust [DIR]` trusts one)");
    }
    return 0;
  }
  const target = opts.dir ? absolute(opts.dir) : workspaceRoot(Deno.cwd());
  const home = realOrSelf(Deno.env.get("HOME") ?? "");
  if (!opts.dir && !opts.revoke && (target === "/" || target === home)) {
    // Trust covers every folder below: never that wide by accident.
    err(
      `coyote: not trusting ${target} implicitly: it would trust every folder below it; ` +
        `name it (coyote trust ${
          target === "/" ? "/" : "~"
        }) if you mean it, or run this in a repository`,
    );
    return 2;
  }
  try {
    if (!Deno.statSync(target).isDirectory) throw new Error("not a directory");
  } catch (e) {
    err(`coyote: cannot trust ${opts.dir ?? target}: ${(e as Error).message}`);
    return 2;
  }
  const path = setTrust(input.dataDir, target, !opts.revoke);
  const now = trustState({ ...input, trustWorkspace: false }, path);
  if (opts.revoke) {
    out(`untrusted ${path}`);
    if (now.trusted) {
      err(
        `coyote: note: ${path} is still trusted by trusted_workspaces entry ${now.path} in config.yaml`,
      );
    }
  } else out(`trusted ${path}`);
  return 0;
}
