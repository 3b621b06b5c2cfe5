/**
 * git and the workspace's repository (view (a)): whether a read-only git
 * command is safe to allow by default ({@link gitUnsafe}: only in the
 * workspace root of a repository whose configuration sets known-harmless keys
 * only and that ships no active hook), and the network side of git commands
 * ({@link gitNetPart}: a repository argument's host, or a remote's URL from
 * the workspace's `.git/config`, judged by the `Net` rules).
 *
 * The repository's configuration and hooks are read by
 * shell/programs/git_repo.ts on every call (they may change between two
 * commands); an unreadable configuration makes git not safe.
 * @module
 */
import { pathsOverlap, resolvePath, type Rule, WILD } from "./rules.ts";
import { type Level, matcher, type PolicyCore, rulesOf, type ScriptCtx } from "./context.ts";
import { pathPart } from "./paths.ts";
import { gitContents } from "./shell/programs/git_contents.ts";
import { netPart } from "./net.ts";
import { activeHook, gitDirOf, readGitConfig, SAFE_GIT_CONFIG } from "./shell/programs/git_repo.ts";
import { gitRepoHost } from "./shell/commands.ts";
import type { GuardPart } from "./types.ts";
import { isFileSync as isFile, lexistsSync as exists } from "../util/files.ts";
import { by, q, worstPart } from "./verdict.ts";

/**
 * Why a read-only git command is not safe here, if it is not: git reads the
 * configuration of the repository it discovers from its working directory,
 * and a repository config (`core.fsmonitor`, `core.pager`, …) can run
 * commands. Only the workspace's own `.git/` is protected from the agent's
 * writes, so read-only git is allowed only in the workspace root of a
 * repository and without `cd` (a planted bare repository elsewhere in the
 * workspace would otherwise be picked up).
 */
export function gitUnsafe(core: PolicyCore, ctx: ScriptCtx): string | undefined {
  if (ctx.elsewhere || !ctx.cwds || ctx.cwds.length !== 1 || ctx.cwds[0] !== core.workspace) {
    return "git after cd may pick up a repository configuration written in the workspace";
  }
  const dir = gitDir(core);
  if (!dir) {
    return "the workspace has no .git/, so git may read a repository configuration written in the workspace";
  }
  // A Write allow rule over the git dir (`Write(.git/**)`, the docs' rule for `git commit`) lets a
  // command write a hook or `core.fsmonitor` and run git in the same line: the configuration read
  // here is not the one git will run with (eleventh attacker pass).
  const probes = [`${dir}/config`, `${dir}/hooks/pre-commit`];
  const rule = rulesOf(core, "write").find((r) =>
    r.decision === "allow" && probes.some((p) => matcher(core, r).test(p))
  );
  if (rule) {
    return `${rule.text} lets commands change the repository's configuration and hooks, so git may run what a command wrote`;
  }
  // A repository's own configuration can make git run programs (core.fsmonitor on
  // `git status`, diff.*.textconv on `git log -p`, filter.* on `git diff`, …). A hostile
  // repository may ship it: only configurations of known-harmless keys are trusted.
  const cfg = gitConfig(core);
  if (!cfg) return "the workspace's git configuration cannot be read";
  // Even `git status` runs hooks: it may rewrite the index, which runs `post-index-change`.
  // A repository may ship `.git/hooks/`; only the `*.sample` files `git init` writes are inert.
  const hook = gitHook(core);
  if (hook) return `the repository has a hook (${hook}), which read-only git commands may run`;
  for (const k of cfg.keys()) {
    if (!SAFE_GIT_CONFIG.test(k)) {
      return `the repository's git configuration sets ${
        k.replace("\u0000", "")
      }, which may make git run a program`;
    }
  }
  return undefined;
}

/**
 * A git repository argument as a `Net` decision (`git ls-remote URL`,
 * `git fetch origin`): a URL's host, a remote's URL from the workspace's
 * git configuration, nothing for a local path; unknown hosts ask (and are
 * denied by a bare `Net` deny rule).
 */
export function gitNetPart(
  core: PolicyCore,
  repo: string,
  display: string,
  level: Level,
): GuardPart {
  if (repo === "") {
    // No repository named: git uses the branch's remote (or all of them): judge every remote.
    const names = [...(gitConfig(core)?.keys() ?? [])]
      .map((k) => /^remote\.(.+)\.url$/.exec(k)?.[1])
      .filter((n): n is string => !!n);
    if (!names.length) return gitNetPart(core, WILD, display, level);
    return worstPart(names.map((n) => gitNetPart(core, n, display, level)));
  }
  let host = gitRepoHost(repo);
  if (host === "") host = gitRemoteHost(core, repo);
  if (host === null) {
    return {
      decision: "allow",
      reason: `${q(display)} uses a local repository`,
      rule: "default",
      subject: display,
    };
  }
  const s = host === WILD ? "a host only known from configuration or at run time" : host;
  if (host === WILD) {
    const deny = rulesOf(core, "net").find((r) => r.decision === "deny");
    const p: GuardPart = deny && deny.pattern === undefined
      ? {
        decision: "deny",
        reason: `${by(deny)} denies network access`,
        rule: deny.text,
        subject: s,
      }
      : level === "skip" && !deny
      ? {
        decision: "allow",
        reason: `--dangerously-skip-permissions allows ${s}`,
        rule: "default",
        subject: s,
      }
      : {
        decision: "ask",
        reason: `network access to ${s}`,
        rule: deny?.text ?? "default",
        subject: s,
      };
    return {
      ...p,
      reason: `${p.reason} — ${q(display)} connects to a remote repository`,
      subject: display,
    };
  }
  const p = netPart(core, host);
  return {
    ...p,
    reason: `${p.reason} — ${q(display)} connects to a remote repository`,
    subject: display,
  };
}

/** The host of remote `name` per the workspace's `.git/config` (null for a local path, WILD when unknown). */
function gitRemoteHost(core: PolicyCore, name: string): string | null {
  const cfg = gitConfig(core);
  const url = cfg?.get(`remote.${name}.url`);
  if (!url) return WILD;
  const h = gitRepoHost(url);
  return h === "" ? WILD : h;
}

/** The workspace repository's own configuration (see {@link readGitConfig}). */
export function gitConfig(core: PolicyCore): Map<string, string> | undefined {
  return readGitConfig(core.workspace);
}

/** The first hook of the workspace repository read-only commands may run (see {@link activeHook}). */
function gitHook(core: PolicyCore): string | undefined {
  return activeHook(core.workspace);
}

function gitDir(core: PolicyCore): string | undefined {
  return gitDirOf(core.workspace);
}

/**
 * The `Read` deny and ask rules (deny only under `skip`) against what a git command prints of
 * file contents (./shell/programs/git_contents.ts `gitContents`, seventh attacker pass): a
 * pathspec or `REV:PATH` is checked as a read of the path it names (`git show HEAD:secret.txt`
 * is denied by `Read(secret*)`), a folder or the repository's top asks with a rule that may
 * cover a file in it, and contents not tied to a path (the whole tree or history, an object id)
 * ask with the first such rule — the rule decides, so the sandbox's auto-allow does not lift it
 * (git's object store is not hidden by the sandbox). A `GIT_*` variable in `assigns` (set for
 * the command) or set by the script (`ctx.gitEnv`) counts as the whole tree. Nothing without such a rule.
 */
export function gitContentParts(
  core: PolicyCore,
  words: string[],
  assigns: string[],
  display: string,
  ctx: ScriptCtx,
  level: Level,
  parts: GuardPart[],
): void {
  const decisions = level === "skip" ? ["deny"] : ["deny", "ask"];
  const rules = core.rules.filter((r) => r.kind === "read" && decisions.includes(r.decision));
  if (!rules.length) return;
  const cwds = ctx.cwds ?? [];
  const dir = gitDir(core);
  // `GIT_DIR`, `GIT_ICASE_PATHSPECS`, `GIT_NAMESPACE`… set for the command: paths not as written.
  const env = assigns.find((a) => a.startsWith("GIT_")) ?? ctx.gitEnv;
  const c = env
    ? { paths: [], rootPaths: [], whole: `${env} changes what git reads` }
    : gitContents(words, {
      isPath: (w) => cwds.some((d) => exists(resolvePath(w, d, core.home))),
      isBranch: (n) => !!dir && isBranch(dir, n),
    });
  if (!c) return;
  const covering = (abs: string) =>
    rules.find((r) => r.pattern === undefined || pathsOverlap(matcher(core, r).base, abs));
  const yieldPart = (r: Rule, why: string) =>
    parts.push({
      decision: "ask",
      reason: `${q(display)}: ${why}, and ${by(r)} restricts reads (git's stored copies are not ` +
        `hidden by the sandbox), so it asks (auto-allow yields)`,
      rule: r.text,
      subject: display,
    });
  const unknownDir = ctx.cwds === null || ctx.elsewhere;
  if (c.whole || unknownDir) {
    if (ctx.approved) return;
    const r = unknownDir ? rules[0] : [core.workspace, ...cwds].map(covering).find((x) => x);
    if (r) {
      yieldPart(r, c.whole ?? `git runs in a working directory only known at run time`);
    }
    return;
  }
  const check = (abs: string, what: string) => {
    const p = pathPart(core, "read", abs, level === "skip" ? "skip" : "explicit");
    if (p.decision !== "allow") {
      parts.push({ ...p, reason: `${p.reason} — ${what} of ${q(display)}`, subject: display });
      return;
    }
    if (isFile(abs) || ctx.approved) return;
    const r = covering(abs);
    if (r) yieldPart(r, `it prints stored or current files under ${q(abs)}`);
  };
  for (const d of cwds) {
    for (const w of c.paths) check(resolvePath(w, d, core.home), "a path git prints");
    for (const w of c.rootPaths) {
      // `REV:./x` is relative to the working directory, `REV:x` to the repository's top (the
      // workspace, or a repository found from the working directory).
      const tops = /^\.\.?(\/|$)/.test(w) ? [d] : [...new Set([core.workspace, d])];
      for (const t of tops) check(resolvePath(w || ".", t, core.home), "a stored file git prints");
    }
  }
}

/** Whether `refs/heads/NAME` or `refs/remotes/NAME` exists, loose or packed (only commits). */
function isBranch(dir: string, name: string): boolean {
  if (name.split("/").includes("..")) return false;
  const refs = [`refs/heads/${name}`, `refs/remotes/${name}`];
  if (refs.some((r) => isFile(`${dir}/${r}`))) return true;
  try {
    const packed = Deno.readTextFileSync(`${dir}/packed-refs`);
    return packed.split("\n").some((l) => refs.some((r) => l.endsWith(` ${r}`)));
  } catch {
    return false;
  }
}
