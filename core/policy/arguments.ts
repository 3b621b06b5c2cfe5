/**
 * What a simple command's words and redirections touch (view (a)): the paths
 * it writes or reads ({@link pathTargetParts}: redirection targets, `tee`
 * files, bash's `/dev/tcp` connections), the paths a command the default
 * policy allows reads ({@link readPathParts}, {@link globReadParts}: "reads
 * outside the workspace ask" as for `fs_read`), path-like arguments against
 * explicit Read/Write rules ({@link argParts}) and URLs against `Net` rules
 * ({@link urlParts}).
 *
 * Every relative path is judged against each candidate working directory of
 * the script walk (walk.ts); a path or working directory only known at run
 * time asks when a rule or default could see it (fail closed). A glob lists
 * at most {@link GLOB_LIMIT} directory entries before it asks; unreadable
 * directories match nothing.
 * @module
 */
import { pathsOverlap, resolvePath, type RuleDecision, WILD } from "./rules.ts";
import {
  guardOnlyPathRule,
  hasRules,
  type Level,
  matcher,
  type PolicyCore,
  rulesOf,
  type ScriptCtx,
} from "./context.ts";
import { netPart } from "./net.ts";
import { pathPart, resolveAll } from "./paths.ts";
import { readPaths } from "./shell/read_paths.ts";
import { basename } from "../util/path.ts";
import type { ShellGlob } from "./shell/script.ts";
import type { GuardPart } from "./types.ts";
import { by, q } from "./verdict.ts";

/** Directory entries a glob argument may make the guard examine before it asks. */
const GLOB_LIMIT = 2000;
// `/dev/fd/<WILD>` is a process substitution `<(…)` / `>(…)` (its command is checked on its own).
const SPECIAL_FILES = new RegExp(`^/dev/(null|stdout|stderr|stdin|tty|zero|fd/(\\d+|${WILD}))$`);

/**
 * URLs in the arguments of a command that is not read-only (`curl https://h/x`,
 * `deno run https://h/m.ts`, `pip install git+https://h/r`) are checked against `Net` deny and
 * ask rules, so `--deny 'Net(h)'` holds even when an `Execute` rule allows the program. (The
 * default "Net asks" is not applied here: the command itself already asks unless a rule allows
 * it.)
 */
export function urlParts(
  core: PolicyCore,
  words: string[],
  display: string,
  parts: GuardPart[],
): void {
  if (!hasRules(core, ["net"], ["deny", "ask"])) return;
  for (const w of words.slice(1)) {
    const m = /(?:^|[=+@])([a-z][a-z0-9+.-]*):\/\/([^/?#\s]*)/i.exec(w);
    if (!m) continue;
    const hostPort = m[2].replace(/^[^@]*@/, "");
    if (!hostPort || hostPort.includes(WILD)) {
      const deny = rulesOf(core, "net").find((r) => r.decision !== "allow");
      parts.push({
        decision: "ask",
        reason: `${q(display)} names a URL whose host is only known at run time and ${
          deny ? by(deny) : "a Net rule"
        } restricts hosts`,
        rule: deny?.text ?? "default",
        subject: display,
      });
      continue;
    }
    const p = netPart(core, hostPort);
    if (p.decision !== "allow" && p.rule !== "default") {
      parts.push({ ...p, reason: `${p.reason} — URL in ${q(display)}`, subject: display });
    }
  }
}

/** Decides a path a command writes or reads (redirect target, tee file), for every candidate cwd. */
export function pathTargetParts(
  core: PolicyCore,
  kind: "read" | "write",
  target: string,
  display: string,
  ctx: ScriptCtx,
  level: Level,
  parts: GuardPart[],
  what: string,
): void {
  if (SPECIAL_FILES.test(target)) return;
  const sock = /^\/dev\/(tcp|udp)\/([^/]+)\/([^/]+)$/.exec(target);
  if (sock || /^\/dev\/(tcp|udp)\//.test(target)) {
    // Bash opens a network connection for these redirections.
    const host = sock && !target.includes(WILD) ? `${sock[2]}:${sock[3]}` : "*";
    const p = host === "*"
      ? {
        decision: "ask" as const,
        reason: `a network connection to a host only known at run time`,
        rule: "default",
        subject: display,
      }
      : netPart(core, host);
    // A line approved as it is ("allow always") lifts the default question, not a Net rule.
    if (ctx.approved && p.rule === "default" && !hasRules(core, ["net"], ["deny", "ask"])) return;
    if (p.decision !== "allow" || level === "full") {
      parts.push({
        ...p,
        reason: `${p.reason} — bash ${what} in ${q(display)} opens a network connection`,
        subject: display,
      });
    }
    return;
  }
  if (target.includes(WILD) || (!target.startsWith("/") && ctx.cwds === null)) {
    const relevant = level === "full" ||
      hasRules(core, [kind], level === "skip" ? ["deny"] : ["deny", "ask"]) ||
      (kind === "write" && level !== "skip");
    if (relevant) {
      parts.push({
        decision: "ask",
        reason: `${q(display)} ${
          kind === "write" ? "writes" : "reads"
        } a path only known at run time (${q(target)})`,
        rule: "default",
        subject: display,
      });
    }
    return;
  }
  for (const cwd of ctx.cwds ?? [core.workspace]) {
    for (const abs of resolveAll(core, target, cwd)) {
      const p = pathPart(core, kind, abs, level);
      if (p.decision === "allow" && level !== "full") continue;
      parts.push({ ...p, reason: `${p.reason} — ${what} in ${q(display)}`, subject: display });
    }
  }
}

/**
 * The default "reads outside the workspace ask" (as for `fs_read`) applied to
 * the paths a command the default policy allows reads ({@link readPaths}:
 * file operands, `--file=PATH` values, start paths, the working directory of
 * a bare `ls`), against every candidate working directory. `Read` allow rules
 * cover a path; `/dev/null` and the other {@link SPECIAL_FILES} and `-`
 * (stdin) are not reads of a file. An unknown word asks (fail closed), except
 * a plain filename glob (`dynamic` false) whose directory part is checked
 * instead; `dynamic` is true when an unknown word may be a run-time value.
 * Explicit Read deny/ask rules on the words are {@link argParts}' job.
 */
export function readPathParts(
  core: PolicyCore,
  words: string[],
  display: string,
  ctx: ScriptCtx,
  dynamic: boolean,
  findItems: boolean,
  parts: GuardPart[],
): void {
  const paths = readPaths(words);
  if (!paths) return;
  const unknown = (why: string) =>
    parts.push({
      decision: "ask",
      reason: `${q(display)} reads ${why}; the default policy asks for reads outside the workspace`,
      rule: "default",
      subject: display,
    });
  for (const w of paths) {
    if (w === "-" || SPECIAL_FILES.test(w)) continue;
    let target = w;
    // A `find -exec` `{}`: beneath find's start paths, which are checked on find itself.
    const found = findItems && w === WILD;
    if (found) target = ".";
    else if (w.includes(WILD)) {
      const at = w.indexOf(WILD);
      const after = w.slice(w.lastIndexOf("/", at) + 1).split("/");
      // A glob segment starting with "." may match "..".
      if (
        dynamic || after.includes("..") ||
        after.some((s) => s.startsWith(".") && s.includes(WILD))
      ) {
        unknown(`a path only known at run time (${q(w)})`);
        return;
      }
      const head = w.slice(0, at);
      target = head.includes("/") ? head.slice(0, head.lastIndexOf("/")) || "/" : ".";
    }
    if (!target.startsWith("/") && ctx.cwds === null) {
      unknown(`${q(w)} relative to a working directory only known at run time`);
      return;
    }
    for (const cwd of ctx.cwds ?? [core.workspace]) {
      for (const abs of resolveAll(core, target, cwd)) {
        if (SPECIAL_FILES.test(abs)) {
          continue;
        }
        let p = pathPart(core, "read", abs, "full");
        if (p.decision === "allow" && w !== target && !found) {
          // A glob inside the workspace may match a symbolic link that leads outside.
          const matches = globMatches(resolvePath(w, cwd, core.home));
          if (!matches) {
            unknown(`${q(w)}, a glob matching more than ${GLOB_LIMIT} paths`);
            return;
          }
          for (const m of matches) {
            const mp = pathPart(core, "read", m, "full");
            if (mp.decision !== "allow") {
              p = mp;
              break;
            }
          }
        }
        if (p.decision === "allow") {
          const y = LISTERS.has(basename(words[0] ?? ""))
            ? undefined
            : dirUnderGuardOnly(core, abs);
          if (!y) continue;
          // A folder read whole (`grep -r s3 .`, `cp -r`, `tar c .`) may read the files a rule
          // only the guard enforces denies (`Read(secret*)`): ask with it (auto-allow yields).
          parts.push({
            decision: "ask",
            reason: `${by(y)} is enforced by the guard alone and ${
              q(display)
            } reads a folder it may cover (${q(w)}), so it asks (auto-allow yields)`,
            rule: y.text,
            subject: display,
          });
          continue;
        }
        // Explicit rules on a word as written are reported by argParts.
        if (p.rule !== "default" && target === w) continue;
        parts.push({
          ...p,
          reason: `${p.reason} — ${
            w !== target ? q(w) : words.includes(w) ? "argument" : "working directory"
          } of ${q(display)}`,
          subject: display,
        });
      }
    }
  }
}

/**
 * A filename glob lists its directory (`echo /*`, `printf '%s\n' ~/.ssh/*`,
 * `for f in ../x/*`): the default "reads outside the workspace ask" applies
 * to the directories it may list, as for `ls` (issue 11 §2). A glob whose
 * other parts are run-time values, or whose `..`/dot segments may climb
 * out, asks.
 */
export function globReadParts(
  core: PolicyCore,
  g: ShellGlob,
  ctx: ScriptCtx,
  parts: GuardPart[],
): void {
  const display = g.text.replaceAll(WILD, "*");
  const before = parts.length;
  // What matters is the directories listed: the glob without its last segment
  // (`*` lists `.`; `*/*` lists every folder `*` matches, a link leading out among them).
  const cut = g.text.lastIndexOf("/");
  // With run-time parts (`$X/*`, `{/etc,/root}/*`) the folder itself is unknown.
  const dir = g.dynamic ? g.text : cut < 0 ? "." : cut === 0 ? "/" : g.text.slice(0, cut);
  readPathParts(core, ["ls", "-d", "--", dir], display, ctx, g.dynamic, false, parts);
  for (let i = before; i < parts.length; i++) {
    parts[i] = {
      ...parts[i],
      reason: `${parts[i].reason} (the glob ${q(display)} lists a directory)`,
    };
  }
}

/**
 * The existing paths a filename glob (absolute, WILD for its unknown parts)
 * may match, segment by segment, with the directories matched on the way:
 * WILD matches any run of characters, a superset of `*`, `?` and `[…]`. Undefined when more than
 * {@link GLOB_LIMIT} directory entries would have to be examined.
 */
function globMatches(pattern: string): string[] | undefined {
  const segs = pattern.split("/").slice(1);
  let cur = [""];
  const all: string[] = [];
  let seen = 0;
  for (const seg of segs) {
    const next: string[] = [];
    if (!seg.includes(WILD)) {
      for (const d of cur) next.push(`${d}/${seg}`);
    } else {
      const parts = seg.split(WILD);
      for (const d of cur) {
        try {
          for (const e of Deno.readDirSync(d || "/")) {
            if (++seen > GLOB_LIMIT) return undefined;
            if (wildMatch(parts, e.name)) next.push(`${d}/${e.name}`);
          }
        } catch { /* not a readable directory: no matches */ }
      }
      // Every match counts, also a directory further segments look inside.
      all.push(...next);
    }
    cur = next;
    if (!cur.length) break;
  }
  return [...all, ...cur];
}

/**
 * Path-like arguments of a command checked against explicit Read rules (and
 * Write rules plus protected paths when the command is not read-only).
 */
export function argParts(
  core: PolicyCore,
  words: string[],
  readOnly: boolean,
  display: string,
  ctx: ScriptCtx,
  level: Level,
  parts: GuardPart[],
): void {
  const decisions: RuleDecision[] = level === "skip" ? ["deny"] : ["deny", "ask"];
  const kinds: ("read" | "write")[] = readOnly ? ["read"] : ["read", "write"];
  const anyRules = hasRules(core, kinds, decisions);
  const checkProtected = !readOnly && level !== "skip";
  if (!anyRules && !checkProtected) return;
  let operandsOnly = false;
  for (const w of words.slice(1)) {
    let a = w;
    if (a === "--" && !operandsOnly) {
      operandsOnly = true;
      continue;
    }
    // After `--` every word is an operand; a word like `-/../../x` may be one too.
    if (a.startsWith("-") && !operandsOnly && !a.includes("/")) {
      const eq = a.indexOf("=");
      if (eq < 0) continue;
      a = a.slice(eq + 1);
    } else if (a.startsWith("-") && !operandsOnly && a.includes("=")) {
      a = a.slice(a.indexOf("=") + 1);
    }
    if (!a) continue;
    if (a.includes(WILD) || (!a.startsWith("/") && ctx.cwds === null)) {
      if (!anyRules) continue;
      // Fail closed only when some rule could see this unknown path.
      const prefix = a.split(WILD)[0];
      const overlaps = core.rules.some((r) =>
        kinds.includes(r.kind as "read") && decisions.includes(r.decision) &&
        (r.pattern === undefined || !prefix.startsWith("/") ||
          pathsOverlap(matcher(core, r).base, prefix.replace(/\/[^/]*$/, "") || "/"))
      );
      if (overlaps) {
        parts.push({
          decision: "ask",
          reason: `${q(display)} names a path only known at run time (${
            q(a)
          }) and path rules are in effect`,
          rule: "default",
          subject: display,
        });
        return;
      }
      continue;
    }
    for (const cwd of ctx.cwds ?? [core.workspace]) {
      for (const abs of resolveAll(core, a, cwd)) {
        for (const kind of kinds) {
          const p = pathPart(core, kind, abs, level === "skip" ? "skip" : "explicit");
          if (p.decision === "allow") continue;
          if (kind === "write" && p.rule === "default" && !checkProtected) continue;
          parts.push({
            ...p,
            reason: `${p.reason} — argument of ${q(display)}`,
            subject: display,
          });
        }
      }
    }
  }
}

/**
 * Whether `name` is `parts` joined by runs of any characters (a glob segment split at WILD).
 * Linear: the first part is a prefix, the last a suffix, each one between found leftmost in
 * order — a regular expression `^a.*a.*…b$` backtracks for minutes on a long file name the
 * model can create, and the guard would block the event loop while judging the command.
 */
function wildMatch(parts: string[], name: string): boolean {
  const first = parts[0], last = parts[parts.length - 1];
  if (parts.length === 1) return name === first;
  if (!name.startsWith(first)) return false;
  let pos = first.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const at = name.indexOf(parts[i], pos);
    if (at < 0) return false;
    pos = at + parts[i].length;
  }
  return name.length - last.length >= pos && name.endsWith(last);
}

/** Programs that read a folder's names, not its files' contents. */
const LISTERS = new Set(["ls", "tree", "du", "stat", "cd", "pwd", "test", "["]);

/**
 * The `Read` rule only the guard enforces (./context.ts `guardOnlyPathRule`) when `abs` is an
 * existing folder that may hold what such a rule covers, else undefined.
 */
function dirUnderGuardOnly(core: PolicyCore, abs: string) {
  const y = guardOnlyPathRule(core, core.dangerouslySkipPermissions ? "skip" : "full", "read");
  if (!y) return undefined;
  try {
    if (!Deno.statSync(abs).isDirectory) return undefined;
  } catch {
    return undefined;
  }
  return y;
}
