/**
 * View (d) of the one policy: the OS sandbox profile of a shell command (issue 11 §1,
 * docs/permissions.md "The OS sandbox"). Derived from the {@link Policy}'s rules and roots the
 * same way the worker grants (b) and the Deno flags (c) are, so `tests/policy_views_test.ts` can
 * check that all four views agree.
 *
 * The profile says, as absolute real paths:
 * - `writable`: the workspace, the private temp dir (mounted at `/tmp`) and the roots of `Write`
 *   allow rules whose pattern is a literal path or `dir/**`; everything else is read-only. In
 *   `plan` mode (core/policy/mode.ts) only the private temp dir: the workspace is `readable`;
 * - `readable`: roots of `Read` allow rules, and the git dirs of a linked worktree or submodule
 *   workspace that lie outside it (./home_view.ts `outsideGitDirs`), re-mounted read-only
 *   (visible even under `/tmp` and the hidden home);
 * - `home`: the home directory as an empty read-only tmpfs with the toolchain stores read-only and a
 *   generated `.gitconfig` (./home_view.ts; Linux);
 * - `readOnly`: protected paths inside a writable root (`.git/`, `.coyote/`, `.mcp.json` at any
 *   depth of the workspace, any case (./protected.ts); the config and data dirs) and literal `Write` deny
 *   rules — unless an allow rule names the protected path itself;
 * - `hidden`: credential stores (`~/.ssh`, `~/.aws`, `~/.gnupg`, `~/.config/gh`, `~/.netrc`, …),
 *   Coyote's config and data dirs, well-known daemon sockets (`docker.sock`, `/run/user`), and the
 *   roots of `Read` deny rules (literal or `dir/**`) — replaced by an empty dir or file; a default
 *   entry is kept visible when a `Read` allow rule names it;
 * - `network`: `none` unless a `Net` allow rule exists; then `proxy` (core/policy/sandbox/netproxy.ts: the
 *   command's own network namespace stays empty and only HTTP(S) through Coyote's proxy, checked
 *   against the `Net` rules, leaves; `host` — the host network shared — only where the proxy cannot
 *   run: macOS, or no `socat`). Formerly: (then the host network is shared and the
 *   guard's `Net` rules are the only host filter — there is no filtering proxy);
 * - `env`: which variables pass ({@link envDecision}): the provider key's value (always dropped),
 *   `Env` deny rules, and names that look secret ({@link SECRET_NAME}: `*TOKEN*`, `*SECRET*`,
 *   `*KEY*`, `*PASSWORD*`, `MYSQL_PWD`, `GH_PAT`, …) or values that look like credentials
 *   ({@link secretValue}) unless an `Env` allow rule passes them;
 * - `notes`: rules the sandbox cannot express (globs such as `Read(**\/*.pem)`): guard-only.
 *
 * Paths that do not exist when the command starts are not mounted (a mount point would have to be
 * created on the host); the guard still decides them.
 * @module
 */
import type { Policy } from "../policy.ts";
import { HIDDEN_HOME_PATHS } from "../home.ts";
import { compilePath, isInside, type Rule, starMatch } from "../rules.ts";
import { findProtected } from "./protected.ts";
import { type HomeView, homeView, outsideGitDirs } from "./home_view.ts";
import { maskedCopy } from "./secret_lines.ts";
import { repoConfigFiles } from "./repo_configs.ts";
import { type RootView, rootView } from "./root_view.ts";
import { credentialValue } from "../../tools/secret_value.ts";
import { secretKey } from "../../tools/secret_keys.ts";

/** One path entry of a profile, with why it is there (printed by `policy show`). */
export interface ProfilePath {
  path: string;
  why: string;
}

/** The derived sandbox profile; see the module doc. */
export interface SandboxProfile {
  workspace: string;
  writable: ProfilePath[];
  /** Roots of `Read` allow rules, mounted read-only (they stay visible even under the private `/tmp`). */
  readable: ProfilePath[];
  readOnly: ProfilePath[];
  hidden: ProfilePath[];
  network: { mode: "none" | "proxy" | "host"; why: string };
  /** Rules only the guard enforces (the sandbox cannot express them), with the reason. */
  notes: string[];
  /**
   * `Write` deny rules whose path does not exist when the command starts (nothing to mount
   * read-only): what a command creates there is taken out after it (./deny_created.ts).
   */
  writeDeniedMissing?: { path: string; rule: string }[];
  /** Env allow/deny rules, for {@link envDecision}. */
  envRules: Rule[];
  /**
   * Every `.git`/`.coyote`/`.mcp.json` (any case, any depth) in the workspace when the profile
   * was derived, as found (not resolved): what a command creates beyond these is removed after it.
   */
  protectedPaths: string[];
  /** Folders the scan for {@link protectedPaths} did not examine (it stopped at its limit). */
  protectedUnchecked?: string[];
  /** The `node_modules` folders the scan met and did not enter (./node_modules_scan.ts). */
  nodeModules?: string[];
  /** The dot-entries the same scan fingerprinted (./protected.ts `ScanExtras.dots`; ./cleanup.ts). */
  dotEntries?: Map<string, string>;
  /**
   * The folders that scan could not read, the other entries it could not name, those whose
   * `CACHEDIR.TAG` it honoured, the host-run entries it fingerprinted (./host_run.ts; ./cleanup.ts).
   */
  dotScan?: {
    unreadable: string[];
    undecodable: string[];
    cacheTags: Set<string>;
    hostRun: Map<string, string>;
  };
  /**
   * The home as commands see it (./home_view.ts): an empty read-only tmpfs with the toolchain
   * stores and a generated `.gitconfig`; undefined when a visible root contains the home (then
   * the credential stores of core/policy/home.ts are hidden instead).
   */
  home?: HomeView;
  /**
   * Socket paths `Net(unix:/path)` allow rules name (existing sockets only; a directory or a
   * file is not mounted): mounted read-only into the sandbox,
   * and while any is named the unix-socket filter (./seccomp.ts) is off.
   */
  unixSockets: string[];
  /**
   * Linux: the parts of the host root commands see (./root_view.ts); everything else of `/` is
   * absent. Its hidden `/etc` entries are in {@link hidden}. Undefined on macOS (the whole root
   * is readable there, minus {@link hidden}).
   */
  root?: RootView;
  /**
   * Files shown with their credential lines masked (./secret_lines.ts): the copy `source` bound
   * read-only over `path` — world-readable `/etc` files ({@link RootView.etcMasked}) and the
   * workspace repository's git config files (its `.git/config`, a linked worktree's common
   * `config` and `config.worktree`). Linux only.
   */
  masked?: (ProfilePath & { source: string })[];
}

/** Daemon sockets and per-user runtime dirs hidden by default (a socket on a read-only mount still connects). */
export const HIDDEN_SYSTEM_PATHS: readonly string[] = [
  "/run/user",
  "/run/docker.sock",
  "/var/run/docker.sock",
  "/run/containerd",
  "/run/podman",
  "/run/dbus",
];

/** A URL whose user info carries a password (`scheme://user:password@host`). */
export const URL_WITH_PASSWORD = /^[a-z][a-z0-9+.-]*:\/\/[^/\s:@]*:[^/\s@]+@/i;

/**
 * Names of variables that look secret (case-insensitive): substrings (`*TOKEN*`, `*SECRET*`,
 * `*KEY*`, `*PASSWORD*`, `*PASSPHRASE*`, `*CREDENTIAL*`, `*CREDS*`, `*AUTH*`, `*PRIVATE*`,
 * `*WEBHOOK*`, `*COOKIE*`), or one of the short words `PWD`, `PASS`, `PAT`, `JWT`, `TKN`, `DSN`
 * as a whole `_`/`-`/`.`-separated part of the name (`MYSQL_PWD`, `DB_PASS`, `GH_PAT`,
 * `CI_JOB_JWT`, `HF_HUB_TKN`, `SENTRY_DSN`) — but not `PWD` and `OLDPWD` themselves (the shell's
 * working directory). Issue 16, attack trial 2 item 6. The key rule of core/tools/secret_keys.ts
 * (`secretKey`, by the name's last words) drops more (tenth attacker pass): `SSHPASS`,
 * `SMTP_PASSCODE`, `WALLET_MNEMONIC`, `TOTP_SEED`, `SEED_PHRASE`, `MFA_OTP`, `SIM_PIN`,
 * `API_BEARER` — not `SEED`, `RANDOM_SEED`, `PIN_MEMORY`, `TERM_SESSION_ID`, `GPG_TTY`.
 */
export const SECRET_NAME =
  /TOKEN|SECRET|KEY|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|CREDS|AUTH|PRIVATE|WEBHOOK|COOKIE|(^|[_.-])(PWD|PASS|PAT|JWT|TKN|DSN)($|[_.-])/i;

/** Names that match {@link SECRET_NAME} yet are ordinary: the shell's working directories. */
const ORDINARY_NAME = /^(PWD|OLDPWD)$/;

/**
 * Why a variable's value looks like a credential whatever its name, or undefined: the one value
 * rule of core/tools/secret_value.ts `credentialValue` (URLs with user info, auth headers,
 * webhook URLs, known token prefixes, random-looking tokens, …).
 */
export function secretValue(value: string): string | undefined {
  return credentialValue(value);
}

/**
 * The folders under `/home` that are not `home` (nor hold it) and hold no root in `roots`: other
 * users' homes, hidden by default (a command running as root reads their world-readable files).
 */
function otherHomes(home: string, roots: readonly string[]): string[] {
  const out: string[] = [];
  const own = real(home) ?? home;
  try {
    for (const e of Deno.readDirSync("/home")) {
      if (!e.isDirectory) continue;
      const d = real(`/home/${e.name}`);
      if (!d || isInside(own, d) || isInside(d, own)) continue;
      if (roots.some((r) => isInside(r, d) || isInside(d, r))) continue;
      out.push(d);
    }
  } catch { /* no /home */ }
  return out;
}

/** True when `p` is (a link to) an existing socket file: what a `Net(unix:…)` rule may mount. */
function isSocketFile(p: string): boolean {
  try {
    return Deno.statSync(p).isSocket === true;
  } catch {
    return false;
  }
}

/** Real path of `p`, or undefined when it does not exist. */
function real(p: string): string | undefined {
  try {
    return Deno.realPathSync(p);
  } catch {
    return undefined;
  }
}

/** The literal root a Read/Write rule covers wholly (`/x` for `/x` and `/x/**`), if any. */
function ruleRoot(policy: Policy, r: Rule): string | undefined {
  if (r.pattern === undefined) return undefined;
  const m = compilePath(r.pattern, policy.workspace, policy.home);
  return m.flagPath;
}

function pathRuleDecision(
  policy: Policy,
  kind: "read" | "write",
  p: string,
): "allow" | "deny" | "ask" | undefined {
  let found: "allow" | "deny" | "ask" | undefined;
  for (const r of policy.rules()) {
    if (r.kind !== kind || r.pattern === undefined) continue;
    if (!compilePath(r.pattern, policy.workspace, policy.home).test(p)) continue;
    if (r.decision === "deny") return "deny";
    if (r.decision === "ask") found = "ask";
    else if (!found) found = "allow";
  }
  return found;
}

/** Adds `p` (and its real path) to `list` unless already there. */
function add(list: ProfilePath[], p: string | undefined, why: string): void {
  if (!p) return;
  const r = real(p);
  if (!r) return;
  if (!list.some((x) => x.path === r)) list.push({ path: r, why });
}

/** What {@link deriveProfile} takes besides the policy. */
export interface ProfileOptions {
  /**
   * Called with the `node_modules` folders the scan met; returns the `.git` entries and git dirs
   * under them (./node_modules_scan.ts `NodeModulesWatch.gitDirsOf`), whose configs are masked.
   */
  nodeModulesGitDirs?: (roots: readonly string[]) => readonly string[];
}

/**
 * Derives the sandbox profile of `policy` (view (d)). Reads the file system to resolve real
 * paths and find nested protected names; cheap enough to run per command (< 1 ms typical).
 * @throws GlobEngineNotLoaded (core/policy/rules.ts) when a rule's glob cannot compile yet
 *   (await `policy.globsReady()` first; `CommandSandbox` does, and refuses the command if not).
 */
export function deriveProfile(policy: Policy, opts: ProfileOptions = {}): SandboxProfile {
  const ws = real(policy.workspace) ?? policy.workspace;
  // Plan mode (core/policy/mode.ts) is read-only: nothing but the private /tmp is writable.
  const plan = policy.mode === "plan";
  const writable: ProfilePath[] = plan ? [] : [{ path: ws, why: "the workspace" }];
  const readOnly: ProfilePath[] = [];
  const hidden: ProfilePath[] = [];
  const notes: string[] = [];
  const rules = policy.rules();
  const readable: ProfilePath[] = [];
  if (plan) add(readable, ws, "the workspace (read-only: plan mode)");

  const writeDeniedMissing: { path: string; rule: string }[] = [];
  // Writable roots from Write allow rules.
  for (const r of rules) {
    if (plan) break;
    if (r.kind !== "write" || r.decision !== "allow") continue;
    if (r.pattern === undefined) {
      notes.push(
        `${r.text}: guard-only (the sandbox keeps the file system outside the workspace read-only)`,
      );
      continue;
    }
    const root = ruleRoot(policy, r);
    if (!root) {
      notes.push(`${r.text}: guard-only (a glob; the sandbox mounts whole directories)`);
      continue;
    }
    if (pathRuleDecision(policy, "write", root) === "deny") continue;
    add(writable, root, `${r.text} (from ${r.source})`);
  }

  for (const r of rules) {
    if (r.kind !== "read" || r.decision !== "allow") continue;
    const root = ruleRoot(policy, r);
    if (root && pathRuleDecision(policy, "read", root) !== "deny") {
      add(readable, root, `${r.text} (from ${r.source})`);
    }
  }

  // A linked worktree's or submodule's git dirs outside the workspace: read-only, so git works.
  for (const g of outsideGitDirs(ws)) {
    if (pathRuleDecision(policy, "read", g) !== "deny") {
      add(readable, g, "the repository's git dir (linked worktree or submodule)");
    }
  }
  // `Net(unix:/path)` allow rules: these sockets are mounted in and the unix-socket filter is off.
  const unixSockets = rules.filter((r) => r.kind === "net" && r.decision === "allow" && isUnix(r))
    .map((r) => r.pattern!.slice(5)).filter(isSocketFile);
  // Linux (bwrap) only: the macOS profile (./sbpl.ts) keeps the deny list.
  const home = Deno.build.os === "linux"
    ? homeView(
      policy.home,
      ws,
      [...writable, ...readable].map((r) => r.path),
      undefined,
      policy.dataDir,
      unixSockets,
    )
    : undefined;
  if (home && plan) home.readOnly = true;

  // Protected paths stay read-only unless an allow rule names them.
  const nodeModules: string[] = [];
  const protectedUnchecked: string[] = [];
  const dotEntries = new Map<string, string>();
  const dotScan = {
    unreadable: [] as string[],
    undecodable: [] as string[],
    cacheTags: new Set<string>(),
    hostRun: new Map<string, string>(),
  };
  const vcs = { gitDirs: [] as string[], configs: [] as string[] };
  const special: string[] = [];
  const protectedPaths = findProtected(ws, undefined, nodeModules, protectedUnchecked, {
    dots: dotEntries,
    ...dotScan,
    vcs,
    special,
  });
  const prot: [string | undefined, string][] = [
    ...protectedPaths.map((
      p,
    ): [string, string] => [p, "protected (git/Coyote loads it)"]),
    [policy.configDir, "Coyote's config dir"],
    [policy.dataDir, "Coyote's data dir"],
  ];
  for (const [p, why] of prot) {
    if (!p) continue;
    const rp = real(p);
    if (!rp) continue;
    if (!writable.some((w) => isInside(rp, w.path))) continue;
    if (pathRuleDecision(policy, "write", rp) === "allow") continue;
    add(readOnly, rp, why);
  }
  for (const r of rules) {
    if (r.kind !== "write" || r.decision === "allow") continue;
    const root = ruleRoot(policy, r);
    if (!root) {
      if (r.pattern !== undefined) notes.push(`${r.text}: guard-only (a glob)`);
      continue;
    }
    const rp = real(root);
    if (rp && writable.some((w) => isInside(rp, w.path))) add(readOnly, rp, `${r.text}`);
    else if (
      !rp && [policy.workspace, ...writable.map((w) => w.path)].some((w) => isInside(root, w))
    ) {
      writeDeniedMissing.push({ path: root, rule: r.text });
    }
  }

  // Hidden: credential stores, Coyote's dirs, daemon sockets, Read deny rules.
  const defaults: [string | undefined, string][] = [
    ...HIDDEN_HOME_PATHS.map((h): [string, string] => [
      `${policy.home}/${h}`,
      "credentials (default)",
    ]),
    [policy.configDir, "Coyote's config dir"],
    [policy.dataDir, "Coyote's data dir"],
    ...HIDDEN_SYSTEM_PATHS.map((h): [string, string] => [h, "daemon sockets (default)"]),
    // Other users' homes (world-readable dotfiles such as a `.gitconfig` with a token), unless
    // a writable or readable root lies in one.
    ...otherHomes(policy.home, [...writable, ...readable].map((r) => r.path)).map((
      h,
    ): [string, string] => [h, "another user's home (default)"]),
  ];
  // Sockets, FIFOs and device nodes the same walk met in the workspace (eleventh attacker pass,
  // class 1: a host daemon's socket there is reachable while a `Net(unix:…)` rule lifts the
  // filter; a FIFO a host process reads, always): hidden by type unless a rule names the socket.
  const named = new Set(unixSockets.flatMap((u) => [u, real(u) ?? u]));
  for (const p of special) {
    if (
      !named.has(p) && !named.has(real(p) ?? p) && pathRuleDecision(policy, "read", p) !== "allow"
    ) {
      add(hidden, p, "a socket, FIFO or device in the workspace (by type)");
    }
  }
  for (const [p, why] of defaults) {
    if (!p) continue;
    const rp = real(p);
    if (!rp) continue;
    // The workspace itself is never hidden by a default (e.g. a workspace inside the config dir).
    // A workspace inside the data dir (a sub-agent's git worktree, core/session/child_dir.ts): the
    // data dir is hidden around it (bwrap binds the workspace over the empty dir; Linux only).
    const around = p === policy.dataDir && ws !== rp && Deno.build.os === "linux";
    if (isInside(ws, rp) && !around) continue;
    if (pathRuleDecision(policy, "read", p) === "allow") continue;
    add(hidden, rp, why);
  }
  // Linux: only an allow list of the root is visible; in /etc what others may not read is hidden.
  const sysRoot = Deno.build.os === "linux" ? rootView(policy.dataDir) : undefined;
  const masked: (ProfilePath & { source: string })[] = [];
  for (const m of sysRoot?.etcMasked ?? []) {
    if (pathRuleDecision(policy, "read", m.path) === "allow") continue;
    masked.push({ ...m, why: "holds a credential line (masked), in /etc" });
  }
  if (sysRoot) {
    // Every git config the scans met (nested repositories, submodules' and worktrees' git dirs,
    // node_modules repositories) and Mercurial's and Jujutsu's: what fs_read asks about
    // (core/policy/paths.ts `maskedRead`), a command does not read unmasked.
    const nested = [...vcs.gitDirs, ...opts.nodeModulesGitDirs?.(nodeModules) ?? []];
    for (const p of repoConfigFiles(ws, undefined, nested)) {
      const source = maskedCopy(p);
      if (source) masked.push({ path: p, source, why: "git config holding a credential (masked)" });
    }
    for (const c of vcs.configs) {
      const p = real(c), source = p && maskedCopy(p);
      if (p && source) {
        masked.push({ path: p, source, why: "VCS config holding a credential (masked)" });
      }
    }
  }
  for (const e of sysRoot?.etcHidden ?? []) {
    if (pathRuleDecision(policy, "read", e.path) === "allow") continue;
    if (!hidden.some((h) => h.path === e.path)) {
      hidden.push({ path: e.path, why: "not readable by others (its mode), in /etc" });
    }
  }
  for (const r of rules) {
    if (r.kind !== "read" || r.decision !== "deny") continue;
    if (r.pattern === undefined) {
      notes.push(`${r.text}: guard-only (hiding every path would stop every command)`);
      continue;
    }
    const root = ruleRoot(policy, r);
    if (!root) {
      notes.push(`${r.text}: guard-only (a glob; the sandbox hides whole paths)`);
      continue;
    }
    add(hidden, root, `${r.text} (from ${r.source})`);
  }

  // Network.
  const network = networkOf(rules);

  return {
    workspace: ws,
    writable,
    readable: readable.filter((r) => !writable.some((w) => isInside(r.path, w.path))),
    readOnly,
    hidden,
    network,
    notes,
    envRules: rules.filter((r) => r.kind === "env"),
    protectedPaths,
    protectedUnchecked,
    ...(writeDeniedMissing.length ? { writeDeniedMissing } : {}),
    nodeModules,
    dotEntries,
    dotScan,
    home,
    unixSockets,
    root: sysRoot,
    masked,
  };
}

const isUnix = (r: Rule) => r.pattern?.startsWith("unix:") ?? false;

/**
 * The network part of the profile alone, from the rules: `proxy` when a `Net` allow rule names a
 * host (not a `unix:` socket), else `none`. Cheap (no file system, no subprocess), so what a
 * session shows before its first request (the status line, `execute_command`'s note) does not
 * derive the whole profile (home scan, protected-path walk, git config).
 */
export function networkOf(rules: readonly Rule[]): SandboxProfile["network"] {
  const netAllow = rules.filter((r) => r.kind === "net" && r.decision === "allow" && !isUnix(r));
  return netAllow.length
    ? {
      mode: "proxy",
      why: `${
        netAllow.map((r) => r.text).join(", ")
      } allow hosts: reached only through Coyote's filtering HTTP(S) proxy, which asks the same rules; nothing else leaves`,
    }
    : { mode: "none", why: "no Net allow rule: no network (loopback only, of its own)" };
}

/**
 * Whether variable `name` (value `value`) passes into a command, and why. A value equal to a
 * known secret (the provider key, under any name) never passes — not even with an `Env` allow
 * rule, which the guard also uses to let a command *expand* the variable. Otherwise an `Env` deny
 * rule drops it, an `Env` allow rule (a bare `Env` allows every name) passes it, and a
 * secret-looking name ({@link SECRET_NAME}) or value ({@link secretValue}) drops it.
 */
export function envDecision(
  rules: readonly Rule[],
  name: string,
  value: string,
  secrets: readonly string[] = [],
): { pass: boolean; why: string } {
  if (value.length > 0 && secrets.includes(value)) {
    return { pass: false, why: "its value is the provider key" };
  }
  let allow: Rule | undefined;
  for (const r of rules) {
    if (r.kind !== "env") continue;
    const hit = r.pattern === undefined || starMatch(r.pattern, name);
    if (!hit) continue;
    if (r.decision === "deny") return { pass: false, why: `${r.text} denies it` };
    if (r.decision === "allow") allow ??= r;
  }
  if (allow) return { pass: true, why: `${allow.text} passes it` };
  if ((SECRET_NAME.test(name) || secretKey(name) === "strong") && !ORDINARY_NAME.test(name)) {
    return { pass: false, why: "its name looks secret" };
  }
  // `DATABASE_URL=postgres://app:s3cret@db/x`, `CONN=…;Password=…`, `X=ghp_…`: a credential in
  // the value, whatever the name.
  const v = secretValue(value);
  if (v) return { pass: false, why: v };
  return { pass: true, why: "ordinary variable" };
}
