/**
 * What the guard knows about `git`: which subcommands only read, the global
 * options that point it at other configuration (`-c`, `-C`, `--git-dir`),
 * options that name programs (`--upload-pack`, `ls-remote -u`), which
 * subcommands reach remote repositories (`Net` decisions), and the subcommand
 * behind global options for rule matching ({@link gitNormalized}).
 *
 * Examples (rows of tests/guard_test.ts): `git status` and `git log -n 5`
 * allowed in a plain repository; `git ls-remote --upl='cmd' .` asks;
 * `git fetch` is a `Net` decision for the remote's host;
 * `Execute(git push:*)` denies `git -c a.b=c push`.
 * @module
 */
import { WILD } from "../../rules.ts";
import { allow, ask, type Classification, hasWild, opaque, show } from "../classification.ts";
import { anyLongOpt, longOpt } from "../options.ts";
import { SAFE_GIT_CONFIG } from "./git_repo.ts";

/** `git` subcommands that only read (with extra checks below). */
const GIT_READ_ONLY = new Set([
  "status",
  "diff",
  "log",
  "show",
  "rev-parse",
  "ls-files",
  "ls-tree",
  "blame",
  "describe",
  "shortlog",
  "cat-file",
  "show-ref",
  "merge-base",
  "name-rev",
  "count-objects",
  "version",
  "whatchanged",
  "grep",
  "branch",
  "tag",
  "remote",
  "stash",
  "reflog",
  "worktree",
  "rev-list",
  "diff-tree",
  "diff-files",
  "diff-index",
  "for-each-ref",
  "check-ignore",
  "ls-remote",
  "var",
]);

/** git global options that change nothing the guard relies on. */
const GIT_SAFE_GLOBAL = new Set([
  "--no-pager",
  "-P",
  "--no-optional-locks",
  "--literal-pathspecs",
  "--glob-pathspecs",
  "--noglob-pathspecs",
  "--icase-pathspecs",
  "--no-replace-objects",
  "--no-lazy-fetch",
]);
/** git global options that take a separate value (`-c a.b=c`, `-C dir`). */
const GIT_VALUED_GLOBAL = [
  "-c",
  "-C",
  "--git-dir",
  "--work-tree",
  "--namespace",
  "--config-env",
  "--super-prefix",
  "--attr-source",
];

/**
 * `git`'s words with its global options removed (`git --no-pager -c a.b=c
 * push` → `git push`), so rules about a subcommand (`Execute(git push:*)`)
 * see it whatever precedes it. Undefined when the words are not a git command
 * with a literal subcommand.
 */
export function gitNormalized(words: string[]): string[] | undefined {
  if (words[0] !== "git" && !words[0]?.endsWith("/git")) return undefined;
  let i = 1;
  let alias = false;
  for (; i < words.length; i++) {
    const a = words[i];
    if (a.startsWith(WILD)) return undefined;
    if (!a.startsWith("-")) break;
    // `-c alias.p=push` makes `git p` run `git push` (or a shell command with `!`).
    const value = GIT_VALUED_GLOBAL.includes(a) ? words[++i] ?? "" : a.replace(/^[^=]*=?/, "");
    if (/^alias\./i.test(value) || (a === "-c" && value.includes(WILD))) alias = true;
  }
  if (i >= words.length || i === 1) return undefined;
  return ["git", ...(alias ? [WILD] : []), ...words.slice(alias ? i + 1 : i)];
}

/**
 * git subcommands that change the repository, the index or the working tree and run no program
 * beyond what the repository's configuration and hooks name (checked by core/policy/git.ts
 * `gitUnsafe`) and the options above: with {@link GIT_READ_ONLY}, what the guard understands of
 * git. Any other subcommand yields (see `git` below).
 */
const GIT_MODELLED = new Set([
  "add",
  "am",
  "apply",
  "archive",
  "bisect",
  "bundle",
  "checkout",
  "cherry-pick",
  "clean",
  "clone",
  "commit",
  "commit-graph",
  "config",
  "fetch",
  "format-patch",
  "fsck",
  "gc",
  "hash-object",
  "init",
  "maintenance",
  "merge",
  "mv",
  "notes",
  "pack-refs",
  "prune",
  "pull",
  "push",
  "read-tree",
  "rebase",
  "repack",
  "replace",
  "rerere",
  "reset",
  "restore",
  "revert",
  "rm",
  "sparse-checkout",
  "submodule",
  "switch",
  "symbolic-ref",
  "update-index",
  "update-ref",
  "write-tree",
]);

/** Subcommand options that name a program git runs (`--upload-pack='cmd'`), prefixes included. */
const GIT_PROGRAM_OPTIONS = [
  "--upload-pack",
  "--receive-pack",
  "--exec",
  "--output",
  "--open-files-in-pager",
  // `git daemon --access-hook=CMD`; `git send-email`'s helper commands and sendmail program.
  "--access-hook",
  "--to-cmd",
  "--cc-cmd",
  "--header-cmd",
  "--sendmail-cmd",
  "--smtp-server",
];
/** git subcommands that connect to a remote repository. */
const GIT_NET = new Set([
  "fetch",
  "pull",
  "push",
  "clone",
  "ls-remote",
  "archive",
  "submodule",
  "remote",
  "fetch-pack",
  "send-pack",
  "lfs",
  "svn",
  "p4",
  "send-email",
  "request-pull",
]);

/**
 * Where a git repository argument lives: `host[:port]` for a URL
 * (`https://h/x`, `ssh://u@h:22/x`, scp-like `u@h:x`), null for a local path,
 * `""` for a remote's name (its URL is in the repository's configuration),
 * WILD when unknown or a transport that runs a program (`ext::cmd`).
 */
export function gitRepoHost(repo: string): string | null {
  if (repo.includes(WILD)) return WILD;
  if (/^[A-Za-z][A-Za-z0-9+.-]*::/.test(repo)) return WILD; // ext::, fd::, remote helpers
  const url = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)/i.exec(repo);
  if (url) {
    if (url[1].toLowerCase() === "file") return null;
    const hostPort = url[2].replace(/^[^@]*@/, "");
    return hostPort || WILD;
  }
  if (repo.startsWith("/") || repo.startsWith(".") || repo.startsWith("~")) return null;
  const scp = /^(?:[^@/:]+@)?(\[[^\]]+\]|[^/:]+):/.exec(repo);
  if (scp) return scp[1];
  if (repo.includes("/")) return null;
  return "";
}

export function git(args: string[]): Classification {
  const words = ["git", ...args];
  let i = 0;
  // A global option the guard knows to be harmless but not read-only (`-c color.ui=never`).
  let known: string | undefined;
  for (; i < args.length; i++) {
    const a = args[i];
    if (GIT_SAFE_GLOBAL.has(a)) continue;
    // -c, -C, --git-dir, --work-tree, --exec-path… point git at other configuration or
    // repositories (core.fsmonitor, core.pager, … run commands): not read-only. Every one is
    // looked at: a harmless `-c` first does not hide a `-c core.pager=…` after it.
    if (a.startsWith("-")) {
      // `-c KEY=VALUE` of a key known not to run a program (`-c color.ui=never`) is understood.
      const kv = a === "-c" ? args[i + 1] ?? "" : "";
      const key = kv.includes("=") && !hasWild(kv) ? kv.slice(0, kv.indexOf("=")) : "";
      if (key && SAFE_GIT_CONFIG.test(key.toLowerCase())) {
        known ??= a;
        i++;
        continue;
      }
      return opaque(
        words,
        `git option ${show(a)} may make git run a program (config keys, aliases)`,
      );
    }
    break;
  }
  const sub = args[i];
  if (sub === undefined) {
    return known === undefined ? allow(`"git" without a subcommand prints help`) : ask(
      words,
      `git option ${show(known)} is not known to be read-only`,
    );
  }
  const rest = args.slice(i + 1);
  const no = (why?: string) =>
    ask(words, why ?? `"git ${sub.replaceAll(WILD, "…")}" is not a read-only git command`);
  // A subcommand or an argument only known at run time may be an alias or an option that runs
  // a program (`--upload-pack=…`, `-O…`): the guard cannot analyse it.
  if (hasWild(sub)) return opaque(words, `the git subcommand is only known at run time`);
  if (rest.some((a) => a.startsWith(WILD))) {
    return opaque(words, `git ${sub} with an argument only known at run time`);
  }
  const runs = gitRunsCommands(sub, rest);
  if (runs) return opaque(words, runs);
  const progOpt = rest.find((a) => anyLongOpt(a, GIT_PROGRAM_OPTIONS));
  if (progOpt !== undefined) {
    return opaque(words, `git ${sub} ${show(progOpt)} runs a program or writes a file`);
  }
  if (sub === "ls-remote" && rest.some((a) => /^-[^-]*u/.test(a))) {
    return opaque(words, `git ls-remote -u runs the program it names`);
  }
  // `git grep -O[<pager>]` (also inside a cluster such as `-iOsh`) opens the matches with a
  // program: the one named, or the configured pager.
  if (sub === "grep" && rest.some((a) => /^-[^-]*O/.test(a))) {
    return opaque(words, `git grep -O runs a program on the matching files`);
  }
  if (known !== undefined) return no(`git option ${show(known)} is not known to be read-only`);
  const net = GIT_NET.has(sub) ? gitNetRepos(sub, rest) : [];
  if (!GIT_READ_ONLY.has(sub)) {
    // A subcommand the guard does not model (eleventh attacker pass: `git daemon --access-hook`,
    // `send-email`, `credential`, `lfs`, an alias) yields to an Execute deny or ask rule.
    const unmodelled = GIT_MODELLED.has(sub) ? {} : {
      projectCode:
        `the guard has no rule for what "git ${sub}" runs (a server, helper, external command or alias)`,
    };
    return { ...no(undefined), net, ...unmodelled };
  }
  if (rest.some((a) => a === "-O")) return no(`git ${sub} -O writes a file`);
  if (net.length) {
    const c = gitReadOnlyRest(sub, rest, no);
    return c.allowed ? { ...c, net, reason: `${c.reason} (connects to a remote repository)` } : c;
  }
  return gitReadOnlyRest(sub, rest, no);
}

/**
 * Why `git SUB REST` runs a command string of its arguments or of the configuration (issue 16
 * item 5: `git difftool -x CMD`, `git submodule foreach CMD`, `git rebase -x CMD`,
 * `git bisect run CMD`, `git filter-branch --tree-filter CMD`), or undefined. Such a command is
 * {@link opaque}: an allow rule on `git` does not cover it, and auto-allow yields to any
 * `Execute` deny or ask rule.
 */
function gitRunsCommands(sub: string, rest: string[]): string | undefined {
  const positional = rest.filter((a) => !a.startsWith("-"));
  if (sub.startsWith("remote-") && sub !== "remote-ext") {
    return `git ${sub} runs a remote helper program (git-${sub})`;
  }
  switch (sub) {
    case "difftool":
    case "mergetool":
      return `git ${sub} runs a tool command (-x/--extcmd, --tool, ${sub}.*.cmd)`;
    case "filter-branch":
    case "filter-repo":
      return `git ${sub} runs its filters and callbacks as commands or code`;
    case "instaweb":
    case "shell":
      return `git ${sub} runs a program or a command it is given`;
    // Remote helpers called directly (sixth attacker pass): `remote-ext` runs its argument as a
    // command (protocol.ext.allow guards only URLs), `remote-fd` talks to given descriptors;
    // any other `remote-*` is a helper program git would pick by URL scheme.
    case "remote-ext":
      return `git remote-ext runs its argument as a command`;
    case "submodule":
      return positional[0] === "foreach" ? `git submodule foreach runs a command` : undefined;
    case "bisect":
      return positional[0] === "run" ? `git bisect run runs a command` : undefined;
    case "rebase":
      // `-x CMD`, `-xCMD`, `-ix CMD`, `--exec` (also caught as a program option below).
      return rest.some((a) => /^-[^-X]*x/.test(a) || longOpt(a, "--exec"))
        ? `git rebase -x/--exec runs a command after each commit`
        : undefined;
    case "config": {
      // Setting a key that may name a program (`alias.x=!cmd`, `core.pager`, `core.fsmonitor`)
      // makes the next git command run it; `--edit` runs the editor.
      if (rest.some((a) => a === "-e" || longOpt(a, "--edit") || a === "edit")) {
        return `git config --edit runs an editor`;
      }
      const reads =
        rest.some((a) =>
          /^--(get|get-all|get-regexp|get-urlmatch|get-color|get-colorbool|list|show-origin|show-scope)/
            .test(a) || a === "-l"
        ) || ["get", "list"].includes(positional[0] ?? "");
      if (reads) return undefined;
      const keys = positional[0] === "set" || positional[0] === "unset"
        ? positional.slice(1)
        : positional;
      const key = (keys[0] ?? "").toLowerCase();
      return key && !SAFE_GIT_CONFIG.test(key)
        ? `git config sets ${key}, which may make git run a program`
        : undefined;
    }
    case "clone":
    case "init":
      // `--template=DIR` copies hooks that run; `-c`/`--config` set the new repository's keys.
      return rest.some((a) => anyLongOpt(a, ["--template", "--config"]) || /^-[^-]*[cu]/.test(a))
        ? `git ${sub} --template/-c/--config/-u sets hooks, configuration or a program it runs`
        : undefined;
    case "help":
      // The page is shown by a program chosen by configuration (man.viewer, help.browser).
      return positional.length || rest.some((a) => /^-[^-]*[wmi]|^--(web|man|info)/.test(a))
        ? `git help shows the page with a program chosen by configuration`
        : undefined;
    case "send-email":
      return rest.some((a) =>
          anyLongOpt(a, ["--to-cmd", "--cc-cmd", "--header-cmd", "--smtp-server", "--sendmail-cmd"])
        )
        ? `git send-email --to-cmd/--cc-cmd/--smtp-server runs a program`
        : undefined;
  }
  return undefined;
}

/** Repository arguments of a networking git subcommand (see {@link gitRepoHost}); `""` = a remote named in config. */
function gitNetRepos(sub: string, rest: string[]): string[] {
  const positional = rest.filter((a) => !a.startsWith("-"));
  switch (sub) {
    case "remote":
      // `git remote show NAME` (unless -n) and `git remote update` contact remotes.
      if (positional[0] === "show" && !rest.includes("-n")) {
        return positional.length > 1 ? positional.slice(1) : [];
      }
      if (positional[0] === "update" || positional[0] === "prune") return [positional[1] ?? ""];
      if (positional[0] === "add" && rest.includes("-f")) return [positional[2] ?? WILD];
      return [];
    case "archive": {
      const r = rest.find((a) => longOpt(a, "--remote"));
      return r
        ? [r.includes("=") ? r.slice(r.indexOf("=") + 1) : rest[rest.indexOf(r) + 1] ?? WILD]
        : [];
    }
    case "lfs":
    case "svn":
    case "p4":
    case "send-email":
    case "request-pull":
      return [WILD];
    case "submodule":
      return positional[0] === "update" || positional[0] === "sync" || positional[0] === "add"
        ? [WILD]
        : [];
    default:
      // fetch/pull/push/ls-remote/clone [REPO]; without one (or `fetch --all`/`--multiple`),
      // "" stands for every remote the configuration names.
      if (sub === "fetch" && rest.some((a) => longOpt(a, "--all") || longOpt(a, "--multiple"))) {
        return [""];
      }
      return positional.length ? [positional[0]] : [""];
  }
}

function gitReadOnlyRest(
  sub: string,
  rest: string[],
  no: (why?: string) => Classification,
): Classification {
  const opts = rest.filter((a) => a.startsWith("-"));
  const positional = rest.filter((a) => !a.startsWith("-"));
  switch (sub) {
    case "branch": {
      const valued = new Set([
        "--contains",
        "--no-contains",
        "--merged",
        "--no-merged",
        "--points-at",
        "--sort",
        "--format",
      ]);
      const listing = rest.some((a) => a === "-l" || a === "--list");
      const listFlags =
        /^(-a|--all|-r|--remotes|-l|--list|-v|-vv|--verbose|--show-current|--color(=.*)?|--no-color|--column(=.*)?|--no-column|-i|--ignore-case|--abbrev(=.*)?|--no-abbrev|--omit-empty|(--contains|--no-contains|--merged|--no-merged|--points-at|--sort|--format)(=.*)?)$/;
      for (let k = 0; k < rest.length; k++) {
        const a = rest[k];
        if (a.startsWith("-")) {
          if (!listFlags.test(a)) return no(`git branch ${a} changes branches`);
          if (valued.has(a)) k++;
        } else if (!listing) return no(`git branch with a name creates a branch`);
      }
      return allow(`read-only git command "git branch" (listing)`);
    }
    case "tag":
      if (rest.length && !rest.some((a) => a === "-l" || a === "--list")) {
        return no(`git tag with arguments changes tags`);
      }
      if (
        opts.some((a) =>
          /^(-[adsfmFue]|--(delete|annotate|sign|force|message|file|local-user|edit))/.test(a)
        )
      ) {
        return no(`git tag ${opts.join(" ")} changes tags`);
      }
      return allow(`read-only git command "git tag" (listing)`);
    case "remote":
      if (positional.length && !["show", "get-url"].includes(positional[0])) {
        return no(`git remote ${positional[0]} changes remotes`);
      }
      if (
        opts.some((a) =>
          a !== "-v" && a !== "--verbose" && a !== "--all" && a !== "--push" && a !== "-n"
        )
      ) {
        return no();
      }
      return allow(`read-only git command "git remote"`);
    case "stash":
      if (!["list", "show"].includes(positional[0] ?? "")) {
        return no(`git stash ${positional[0] ?? ""} changes the stash`);
      }
      return allow(`read-only git command "git stash ${positional[0]}"`);
    case "reflog":
      if (positional.length && positional[0] !== "show") {
        return no(`git reflog ${positional[0]} changes the reflog`);
      }
      return allow(`read-only git command "git reflog"`);
    case "worktree":
      if (positional[0] !== "list") {
        return no(`git worktree ${positional[0] ?? ""} changes worktrees`);
      }
      return allow(`read-only git command "git worktree list"`);
  }
  return allow(`read-only git command "git ${sub}"`);
}
