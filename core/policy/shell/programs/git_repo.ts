/**
 * The parts of a git repository that make even read-only git commands run
 * programs: its configuration (`core.fsmonitor` runs on `git status`,
 * `diff.*.textconv` on `git log -p`, `filter.*` on `git diff`,
 * `include.path` pulls in more) and its hooks (`git status` runs
 * `post-index-change` when it refreshes the index). A hostile repository may
 * ship both, so the policy allows read-only git only when every configuration
 * key is in {@link SAFE_GIT_CONFIG} and every hook is in {@link INERT_HOOKS}.
 *
 * Examples (rows of tests/guard_test.ts): `git status` asks when
 * `.git/config` sets `core.fsmonitor` or `.git/hooks/post-index-change`
 * exists; a `pre-commit` hook or `*.sample` files change nothing.
 * @module
 */
import { resolvePath } from "../../rules.ts";

/** The repository's git dir for `workspace`: `.git/`, or where a `.git` file's `gitdir:` points. */
export function gitDirOf(workspace: string): string | undefined {
  const dot = `${workspace}/.git`;
  try {
    const st = Deno.statSync(dot);
    if (st.isDirectory) return dot;
    const m = /^gitdir:\s*(.+?)\s*$/m.exec(Deno.readTextFileSync(dot));
    return m ? resolvePath(m[1], workspace, "/") : undefined;
  } catch {
    return undefined;
  }
}

/** The common dir of a git dir (a linked worktree keeps the shared configuration and hooks there). */
function commonDir(dir: string): string {
  try {
    return resolvePath(Deno.readTextFileSync(`${dir}/commondir`).trim(), dir, "/");
  } catch {
    return dir;
  }
}

/**
 * The configuration of the repository at `workspace` (`config` in its common
 * dir), keys as `section[.subsection].key` with section and key lower-cased
 * (the subsection keeps its case, as git does); undefined when there is no
 * repository or it cannot be read.
 */
export function readGitConfig(workspace: string): Map<string, string> | undefined {
  const dir = gitDirOf(workspace);
  if (!dir) return undefined;
  try {
    return parseGitConfig(Deno.readTextFileSync(`${commonDir(dir)}/config`));
  } catch {
    return undefined;
  }
}

/**
 * The first hook of the repository at `workspace` that a read-only command may
 * run: not a `*.sample` and not one of the {@link INERT_HOOKS}
 * (`post-index-change` and any name the guard does not know count); "?" when
 * the hooks folder cannot be read; undefined when there is none.
 */
export function activeHook(workspace: string): string | undefined {
  const dir = gitDirOf(workspace);
  if (!dir) return undefined;
  try {
    for (const e of Deno.readDirSync(`${commonDir(dir)}/hooks`)) {
      if (!e.name.endsWith(".sample") && !INERT_HOOKS.has(e.name)) return e.name;
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) return "?";
  }
  return undefined;
}

/**
 * Reads a git config file into `section[.subsection].key` → value (the last
 * value wins; section and key lower-cased). `[include]`/`[includeIf]`
 * entries are kept as keys, so a caller can refuse them.
 */
export function parseGitConfig(text: string): Map<string, string> {
  const out = new Map<string, string>();
  let section = "";
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/^\s+/, "");
    if (!line || line.startsWith("#") || line.startsWith(";")) continue;
    const sec = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$/.exec(line);
    if (sec) {
      section = sec[1].toLowerCase() + (sec[2] !== undefined ? `.${sec[2]}` : "");
      if (!sec[3] || /^[#;]/.test(sec[3])) continue;
      // `[core] fsmonitor = x` on one line
      const kv = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(sec[3]);
      if (kv) out.set(`${section}.${kv[1].toLowerCase()}`, kv[2] ?? "true");
      else out.set(`${section}.\u0000unparsed`, sec[3]);
      continue;
    }
    const kv = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line);
    if (kv) out.set(`${section}.${kv[1].toLowerCase()}`, (kv[2] ?? "true").trim());
    else out.set(`${section}.\u0000unparsed`, line);
  }
  return out;
}

/**
 * Repository configuration keys known not to make git run a program or
 * reach the network on its own (what `git init`/`git clone` write, branch
 * tracking, identity, display options). Anything else — `core.fsmonitor`,
 * `core.pager`, `diff.*.textconv`, `filter.*`, `include.path`, … — makes
 * read-only git ask (issue 11 §2: git runs configured programs).
 */
export const SAFE_GIT_CONFIG = new RegExp(
  "^(" + [
    String
      .raw`core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase|precomposeunicode|symlinks|autocrlf|eol|safecrlf|quotepath|abbrev|compression|looseCompression|packedgitlimit|packedgitwindowsize|bigfilethreshold|checkstat|trustctime|untrackedcache|splitindex|preloadindex|fscache|longpaths|commentchar|commentstring|whitespace|warnambiguousrefs|sharedrepository)`,
    String.raw`extensions\.(objectformat|noop)`,
    String
      .raw`remote\.[^\u0000]+\.(url|fetch|pushurl|push|tagopt|prune|prunetags|mirror|skipdefaultupdate|skipfetchall)`,
    String.raw`branch\.[^\u0000]+\.(remote|merge|rebase|pushremote|description)`,
    String.raw`user\.(name|email|signingkey|usecofigonly|useconfigonly)`,
    String.raw`author\.(name|email)`,
    String.raw`committer\.(name|email)`,
    String.raw`init\.defaultbranch`,
    String.raw`pull\.(rebase|ff)`,
    String.raw`push\.(default|autosetupremote|followtags)`,
    String.raw`fetch\.(prune|prunetags)`,
    String.raw`color\.[a-z.]+`,
    String.raw`column\.[a-z]+`,
    String.raw`log\.(date|decorate|abbrevcommit|follow|mailmap|showroot)`,
    String
      .raw`diff\.(renames|renamelimit|algorithm|mnemonicprefix|noprefix|context|interhunkcontext|indentheuristic|colormoved|submodule|statgraphwidth|relative|orderfile|ignoresubmodules)`,
    String
      .raw`status\.(showuntrackedfiles|short|branch|relativepaths|submodulesummary|renames|aheadbehind)`,
    String.raw`merge\.(conflictstyle|ff|log|renames|renamelimit)`,
    String.raw`rebase\.(autosquash|autostash|updaterefs)`,
    String.raw`gc\.(auto|autodetach|reflogexpire|reflogexpireunreachable|pruneexpire)`,
    String.raw`index\.(version|threads|skiphash)`,
    String.raw`pack\.(threads|windowmemory)`,
    String.raw`advice\.[a-z]+`,
    String.raw`submodule\.[^\u0000]+\.(url|active|branch)`,
    String.raw`lfs\.[^\u0000]+\.(access|locksverify)`,
    String.raw`lfs\.repositoryformatversion`,
    String.raw`maintenance\.(auto|strategy)`,
    String.raw`feature\.manyfiles`,
    String.raw`fetch\.writecommitgraph`,
  ].join("|") + ")$",
  "i",
);

/**
 * Hooks (githooks(5)) that only commits, merges, rebases, checkouts, pushes, `am` and `gc` run —
 * never the read-only git commands the default policy allows. Any other file in the hooks folder
 * (`post-index-change`, which `git status` runs when it refreshes the index, or an unknown name)
 * makes read-only git ask.
 */
export const INERT_HOOKS = new Set([
  "applypatch-msg",
  "pre-applypatch",
  "post-applypatch",
  "pre-commit",
  "pre-merge-commit",
  "prepare-commit-msg",
  "commit-msg",
  "post-commit",
  "pre-rebase",
  "post-checkout",
  "post-merge",
  "pre-push",
  "pre-receive",
  "update",
  "proc-receive",
  "post-receive",
  "post-update",
  "push-to-checkout",
  "pre-auto-gc",
  "post-rewrite",
  "sendemail-validate",
]);
