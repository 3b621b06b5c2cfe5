/**
 * Which file contents a `git` command prints or copies elsewhere (seventh attacker pass; docs/
 * permissions.md "Auto-allow yields"): git reads the working tree and its object store (the
 * index, every commit, every blob), which the OS sandbox cannot hide, so a `Read` deny or ask
 * rule must see what git prints by the path it names. {@link gitContents} sorts a command's
 * operands into the paths it prints (`-- PATH` pathspecs, existing paths, `REV:PATH` and
 * `:PATH` names; core/policy/git.ts checks them as reads of those paths) and a reason when it
 * prints contents it cannot tie to a path: the whole tree or history (`git grep`, `git log -p`,
 * `git diff`/`git show` without paths, `git archive`, `git format-patch`, `git fast-export`,
 * `git bundle`), an object name (a blob id, `--batch*`), an unknown subcommand or alias.
 *
 * Subcommands the guard knows are listed ({@link KNOWN}); any other
 * (an alias, a new subcommand) counts as printing the whole tree (fail closed).
 * @module
 */
import { WILD } from "../../rules.ts";

/** What a git command prints of the files' contents. */
export interface GitContents {
  /** Pathspecs and existing paths, relative to the working directory. */
  paths: string[];
  /** Paths of `REV:PATH` / `:PATH` names, relative to the repository's top (`./`/`../`: the working directory). */
  rootPaths: string[];
  /** Why it prints contents the guard cannot tie to named paths, if it does. */
  whole?: string;
}

/** What the caller knows of the repository: whether a word is an existing path, a commit. */
export interface GitWorld {
  isPath(word: string): boolean;
  /** True when `name` (no `~`/`^` suffix) is a branch or remote-tracking branch (only commits). */
  isBranch(name: string): boolean;
}

/** Subcommands the guard knows: those printing no file contents (they may write them at the same paths), then the readers decided below. */
const KNOWN = new Set([
  "status",
  "rev-parse",
  "ls-files",
  "ls-tree",
  "describe",
  "shortlog",
  "show-ref",
  "merge-base",
  "name-rev",
  "count-objects",
  "version",
  "branch",
  "tag",
  "remote",
  "check-ignore",
  "check-attr",
  "check-ref-format",
  "ls-remote",
  "var",
  "config",
  "rev-list",
  "help",
  "init",
  "add",
  "commit",
  "push",
  "fetch",
  "pull",
  "checkout",
  "switch",
  "restore",
  "reset",
  "merge",
  "rebase",
  "cherry-pick",
  "revert",
  "rm",
  "mv",
  "clean",
  "gc",
  "prune",
  "am",
  "apply",
  "bisect",
  "submodule",
  "sparse-checkout",
  "maintenance",
  "blame",
  "annotate",
  "hash-object",
  "update-index",
  "update-ref",
  "symbolic-ref",
  "write-tree",
  "commit-tree",
  "mktag",
  "mktree",
  "verify-commit",
  "verify-tag",
  "verify-pack",
  "show-index",
  "cherry",
  "credential",
  "lfs",
  "for-each-ref",
  "show-branch",
  "mergetool",
  "difftool",
  "filter-branch",
  "fsck",
  "read-tree",
  "checkout-index",
  "worktree",
  "stash",
  "reflog",
  "notes",
  "whatchanged",
  "log",
  "show",
  "diff",
  "diff-tree",
  "diff-index",
  "diff-files",
  "grep",
  "cat-file",
]);

/** Options of log-like commands that print file contents (patches) or test them (pickaxe). */
const PATCH_LONG =
  /^--(patch|unified|word-diff|color-words|cc|patch-with-stat|patch-with-raw|function-context|binary|check|remerge-diff|ext-diff|textconv|full-diff|pickaxe)/;
/** Short letters of the same (`-p`, `-u`, `-U3`, `-W`, `-L…`, `-S…`, `-G…`, `-c`). */
const PATCH_SHORT = /^-[a-zA-Z0-9]*[puUWLSGc]/;
/**
 * Options of commands that otherwise print no contents that make them print hunks or lines of
 * files (tenth attacker pass): `status -v` (the staged diff; `-v -v` also the unstaged one), the
 * `-p`/`--patch`/`-i` modes of `add`, `checkout`, `restore`, `reset`, `stash`, `commit` (git shows
 * each hunk before asking), `commit -v`, and `blame`/`annotate` at all (the file's stored lines).
 */
const HUNKS: Record<string, RegExp> = {
  status: /^(-[a-zA-Z]*v|--verbose)$/,
  add: /^(-[a-zA-Z]*[pie]|--(patch|interactive|edit))$/,
  checkout: /^(-[a-zA-Z]*p|--patch)$/,
  restore: /^(-[a-zA-Z]*p|--patch)$/,
  reset: /^(-[a-zA-Z]*p|--patch)$/,
  stash: /^(-[a-zA-Z]*p|--patch)$/,
  commit: /^(-[a-zA-Z]*[pv]|--(patch|interactive|verbose))/,
  blame: /^-/,
  annotate: /^-/,
};

/** Options of the {@link HUNKS} commands whose value is the next word. */
const VALUED: Record<string, RegExp> = {
  commit:
    /^(-[a-zA-Z]*[mFCct]|--(message|file|author|date|template|reuse-message|reedit-message|fixup|squash|cleanup|trailer|pathspec-from-file))$/,
  stash: /^(-[a-zA-Z]*m|--(message|pathspec-from-file))$/,
  blame: /^(-[LS]|--(contents|ignore-rev|ignore-revs-file|date|abbrev))$/,
  annotate: /^(-[LS]|--(contents|ignore-rev|ignore-revs-file|date|abbrev))$/,
  checkout: /^(-[bB]|--orphan|--conflict|--pathspec-from-file)$/,
  restore: /^(-[s]|--source|--conflict|--pathspec-from-file)$/,
  add: /^--(chmod|pathspec-from-file)$/,
  status: /^--(ignored|untracked-files|ignore-submodules|column|find-renames)$/,
};

/** Options that turn `git show`/`git diff`'s patch off. */
const NO_PATCH =
  /^(-s|--no-patch|--stat.*|--name-only|--name-status|--raw|--shortstat|--numstat|--summary|--dirstat.*|--compact-summary|-q|--quiet|--exit-code)$/;

const patchOpt = (a: string) => PATCH_LONG.test(a) || (!a.startsWith("--") && PATCH_SHORT.test(a));

/** The word after global options, and whether those point git elsewhere. */
function subcommand(words: string[]): { i: number; elsewhere?: string } {
  for (let i = 1; i < words.length; i++) {
    const a = words[i];
    if (!a.startsWith("-")) return { i };
    if (/^(-C|--git-dir|--work-tree|--namespace|--super-prefix|--icase-pathspecs)(=|$)/.test(a)) {
      return { i, elsewhere: `git ${a} points git at another repository or tree` };
    }
    if (a === "-c" || a === "--config-env") {
      if (/^alias\./i.test(words[i + 1] ?? "") || (words[i + 1] ?? "").includes(WILD)) {
        return { i, elsewhere: `git ${a} ${words[i + 1]} may define an alias` };
      }
      i++;
    } else if (a === "--attr-source") i++;
  }
  return { i: words.length };
}

/**
 * What `words` (a `git` command line, WILD for unknown parts) prints of file contents, or
 * undefined when it prints none. See the module doc.
 */
export function gitContents(words: string[], world: GitWorld): GitContents | undefined {
  const c = contents(words, world);
  if (!c || c.whole) return c;
  // A pathspec with glob characters matches files anywhere under its literal folder; one with
  // magic (`:(icase)`, `:!x`) is not read as a path.
  for (const [k, w] of c.paths.entries()) {
    if (w.startsWith(":")) return { ...c, whole: `the pathspec ${JSON.stringify(w)} uses magic` };
    const at = w.search(/[*?[\\]/);
    if (at >= 0) c.paths[k] = w.slice(0, w.lastIndexOf("/", at) + 1) || ".";
  }
  return c;
}

function contents(words: string[], world: GitWorld): GitContents | undefined {
  const { i, elsewhere } = subcommand(words);
  const sub = words[i];
  const out: GitContents = { paths: [], rootPaths: [] };
  const whole = (why: string) => ({ ...out, whole: why });
  if (elsewhere) return whole(elsewhere);
  if (sub === undefined) return undefined;
  if (sub.includes(WILD)) return whole(`the git subcommand is only known at run time`);
  const rest = words.slice(i + 1);
  if (rest.some((a) => a.includes(WILD))) return whole(`an argument is only known at run time`);
  if (!KNOWN.has(sub)) {
    return whole(`git ${sub} may print or copy the contents of any file in the repository`);
  }
  const dd = rest.indexOf("--");
  const before = dd < 0 ? rest : rest.slice(0, dd);
  const specs = dd < 0 ? [] : rest.slice(dd + 1);
  const opts = before.filter((a) => a.startsWith("-"));
  let pos = before.filter((a) => !a.startsWith("-"));
  const positional = pos;
  const patch = opts.some(patchOpt);
  // Sorts revisions and paths: REV:PATH names a stored file, a commit is limited by pathspecs,
  // any other object name (a blob or tree id, a tag) prints what the guard cannot tie to a path.
  let unmapped: string | undefined;
  let commits = 0;
  const sort = (ws: string[]) => {
    for (const w of ws) {
      const colon = /^(?:(:\d:)|([^:]*):)(.*)$/.exec(w);
      if (colon && !w.startsWith(":/") && !/^[a-z][a-z0-9+.-]*:\/\//i.test(w)) {
        out.rootPaths.push(colon[3]);
      } else if (world.isPath(w)) out.paths.push(w);
      else if (commitish(w, world)) commits++;
      else unmapped ??= w;
    }
  };
  const limited = (what: string) => {
    if (unmapped !== undefined) {
      return whole(`git ${sub} prints ${JSON.stringify(unmapped)}, an object not tied to a path`);
    }
    out.paths.push(...specs);
    if (!out.paths.length && (commits || !out.rootPaths.length)) return whole(what);
    return out;
  };
  const hunks = HUNKS[sub];
  const always = sub === "blame" || sub === "annotate";
  if (hunks && (always || opts.some((a) => hunks.test(a)))) {
    // `add -p`, `checkout -p`, `status -v`, `blame`: the diff or the stored lines of every file
    // the pathspecs match (all of them without one); a tree-ish operand names commits.
    // The value of an option that takes one (`-m msg`, `-L 1,2`) is no operand.
    const valued = VALUED[sub];
    const operands = before.filter((w, k) =>
      !w.startsWith("-") && !(valued && k > 0 && valued.test(before[k - 1]))
    );
    sort(operands.filter((w, k) => !(sub === "stash" && k === 0 && /^(push|save|show)$/.test(w))));
    const how = always ? "" : ` ${opts.find((a) => hunks.test(a))}`;
    return limited(`git ${sub}${how} prints the diff or stored lines of every file it covers`);
  }
  switch (sub) {
    case "log":
    case "whatchanged":
    case "reflog":
    case "stash":
    case "diff-tree":
    case "diff-index":
    case "diff-files":
      if (!patch) return undefined;
      if (sub === "stash" || sub === "reflog") {
        pos = pos.filter((w, k) => k || !/^(show|list)$/.test(w));
      }
      sort(pos);
      return limited(`git ${sub} -p prints the patches of the whole history or tree`);
    case "show":
      sort(pos);
      if (!pos.length) commits++; // HEAD
      if (unmapped === undefined && !patch && opts.some((a) => NO_PATCH.test(a))) {
        return out.rootPaths.length ? out : undefined;
      }
      return limited(`git show prints the whole commit's patch`);
    case "difftool":
    case "diff":
      if (opts.includes("--no-index")) {
        out.paths.push(...positional, ...specs);
        return out;
      }
      if (!patch && opts.some((a) => NO_PATCH.test(a))) return undefined;
      sort(pos);
      return limited(`git diff prints the changes of every file`);
    case "grep": {
      const pattern = opts.some((a) => /^-[a-zA-Z]*[ef]|^--(regexp|file|and|or|not)/.test(a));
      sort(pattern ? pos : pos.slice(1));
      return limited(`git grep searches every file of the tree`);
    }
    case "cat-file": {
      if (opts.some((a) => /^--batch(=|$)|^--batch-command/.test(a))) {
        return whole(`git cat-file --batch prints the objects named on its input`);
      }
      if (opts.some((a) => /^-[tse]$|^--batch-check/.test(a))) return undefined;
      sort(pos.filter((w) => !/^(blob|tree|commit|tag)$/.test(w)));
      if (unmapped !== undefined) return limited("");
      return out.rootPaths.length || out.paths.length ? out : undefined;
    }
    case "fsck":
      return opts.includes("--lost-found")
        ? whole(`git fsck --lost-found writes unreachable blobs into .git/lost-found`)
        : undefined;
    case "read-tree":
    case "checkout-index":
      return opts.some((a) => /^--(prefix|temp)/.test(a))
        ? whole(`git ${sub} --prefix/--temp writes stored files at other paths`)
        : undefined;
    case "worktree":
      return positional[0] === "add"
        ? whole(`git worktree add checks the tree out at another path`)
        : undefined;
    case "notes":
      return positional.length && positional[0] !== "list"
        ? whole(`git notes ${positional[0]} prints or copies note objects`)
        : undefined;
    case "for-each-ref":
      return rest.some((a) => /%\((raw|contents)/.test(a))
        ? whole(`git for-each-ref %(raw)/%(contents) prints the objects refs name`)
        : undefined;
  }
  return undefined;
}

/** True when revision `w` can only name commits (`HEAD`, `X~2`, `A..B`, a branch). */
function commitish(w: string, world: GitWorld): boolean {
  const ends = w.split(/\.\.\.?/);
  if (ends.length > 1) return ends.every((e) => e === "" || commitish(e, world));
  const v = w.replace(/^\^/, "");
  if (/([~^]\d*|\^\{commit\}|@\{[^}]*\})$/.test(v)) return true;
  if (v === "HEAD" || v === "@" || v.startsWith(":/")) return true;
  return /^[A-Za-z0-9._/-]+$/.test(v) && world.isBranch(v);
}
