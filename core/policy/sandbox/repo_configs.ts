/**
 * The git config files of the workspace's repository that a sandboxed command can read, for the
 * masking of credential lines (./secret_lines.ts `maskedCopy`; ./profile.ts; issue 16 class 2,
 * gap B; docs/permissions.md "The home directory inside the sandbox"). Git reads more than
 * `.git/config`, and each can carry `url.<base>.insteadOf` with a token, an `http.extraHeader`
 * or a credential helper with a password:
 *
 * - every git dir of the repository that is visible — `<ws>/.git`, a linked worktree's own git
 *   dir and its common dir (./home_view.ts `outsideGitDirs`) — with its `config` and
 *   `config.worktree` (`extensions.worktreeConfig`);
 * - below each, the git dirs of the other linked worktrees (`worktrees/<name>/`) and of
 *   submodules (`modules/<name>/`, nested), with theirs: the common dir is shown whole;
 * - the files those configs include (`include.path`, `includeIf.<cond>.path`, conditions not
 *   evaluated, followed through included files) that lie inside the workspace or one of those
 *   git dirs. An include elsewhere is outside the view (the hidden home, a store the home scan
 *   judges by content: ./store_kinds.ts).
 * @module
 */
import { dirname, isAbsolute, join } from "../../util/path.ts";
import { isInside } from "../rules.ts";
import { outsideGitDirs } from "./home_view.ts";
import { gitDirsBelow } from "./git_dir_tree.ts";

/** Config files taken at most (a workspace with thousands of vendored repositories). */
export const MAX_CONFIG_FILES = 2_000;

/** A `.git` file's git dir (`gitdir: <path>`, relative to the file's folder); else `p` itself. */
function gitFileTarget(p: string): string {
  try {
    if (!Deno.lstatSync(p).isFile) return p;
    const m = /^gitdir:\s*(.+?)\s*$/m.exec(readHead(p));
    if (m) return isAbsolute(m[1]) ? m[1] : join(dirname(p), m[1]);
  } catch { /* gone */ }
  return p;
}

function readHead(p: string): string {
  const f = Deno.openSync(p);
  try {
    const b = new Uint8Array(4096);
    const n = f.readSync(b) ?? 0;
    return new TextDecoder().decode(b.subarray(0, n));
  } finally {
    f.close();
  }
}

function real(p: string): string | undefined {
  try {
    return Deno.realPathSync(p);
  } catch {
    return undefined;
  }
}

/** `include.path` / `includeIf.*.path` values of a git config text, in order. */
export function includePaths(text: string): string[] {
  const out: string[] = [];
  let section = "";
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.trim();
    const sec = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"(?:[^"\\]|\\.)*")?\s*\]\s*(.*)$/.exec(line);
    if (sec) {
      section = sec[1].toLowerCase();
      line = sec[2];
    }
    const kv = /^path\s*=\s*(.*)$/i.exec(line);
    if (kv && (section === "include" || section === "includeif")) {
      const v = kv[1].replace(/\s+[#;].*$/, "").trim().replace(/^"(.*)"$/, "$1");
      if (v) out.push(v);
    }
  }
  return out;
}

/**
 * The config files (real paths, existing) of the workspace `ws`'s repository that a command
 * sees; see the module doc. `home`: what `~/` in an include means. `nested`: more git dirs or
 * `.git` entries to take the same way (tenth attacker pass: nested repositories, embedded bare
 * ones and repositories under `node_modules`, as the protected-path scan and ./node_modules_scan.ts
 * met them; a `.git` file is followed to the git dir it names); at most
 * {@link MAX_CONFIG_FILES} files in all.
 */
export function repoConfigFiles(
  ws: string,
  home = Deno.env.get("HOME") ?? "/",
  nested: readonly string[] = [],
): string[] {
  const rws = real(ws) ?? ws;
  // Nested ones only inside the workspace (a `.git` file may name any folder).
  const inner = nested.map((p) => real(gitFileTarget(p))).filter((d) => !!d && isInside(d, rws));
  const roots = [`${ws}/.git`, ...outsideGitDirs(ws)].map(real).concat(inner)
    .filter((d, i, a): d is string => !!d && a.indexOf(d) === i);
  const visible = [rws, ...roots];
  const out: string[] = [];
  const add = (p: string, depth: number) => {
    const r = real(p);
    if (
      !r || out.length >= MAX_CONFIG_FILES || out.includes(r) ||
      !visible.some((v) => isInside(r, v))
    ) return;
    let text: string;
    try {
      if (!Deno.statSync(r).isFile) return;
      text = Deno.readTextFileSync(r);
    } catch {
      return;
    }
    out.push(r);
    if (depth >= 10) return;
    for (const inc of includePaths(text)) {
      const abs = inc.startsWith("~/")
        ? join(home, inc.slice(2))
        : isAbsolute(inc)
        ? inc
        : join(dirname(r), inc);
      add(abs, depth + 1);
    }
  };
  for (const root of roots) {
    try {
      if (!Deno.statSync(root).isDirectory) continue;
    } catch {
      continue;
    }
    for (const d of gitDirsBelow(root)) {
      add(`${d}/config`, 0);
      add(`${d}/config.worktree`, 0);
    }
  }
  return out;
}
