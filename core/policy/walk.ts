/**
 * The walk of a parsed shell script (view (a)): every part of a command line
 * is decided on its own — code-evaluating constructs, filename globs, simple
 * commands, declarations, redirections and expanded variables
 * ({@link scriptParts}) — and a simple command against the `Execute` rules
 * and the default read-only table of shell/commands.ts, with what it sets,
 * connects to, runs (`xargs cmd`, `find -exec`, `bash -c '…'`, `eval`),
 * writes and names ({@link simpleParts}).
 *
 * Deny and ask rules also see a command as normalized (`git --no-pager -c
 * a.b=c push` is `git push`, a git alias of the repository is unknown, a
 * program named by path is its basename) and, as a "may match", with leading
 * options skipped; allow rules see the words as written, and not behind an
 * environment prefix off the short safe list. A string run by a nested shell
 * is parsed and walked up to {@link MAX_DEPTH} levels deep; one that cannot be
 * parsed, or only known at run time, asks (fail closed). Working directories
 * are followed through `cd`/`pushd`/`popd` ({@link cwdsAfter}).
 * @module
 */
import { basename } from "../util/path.ts";
import { commandMatch, resolvePath, type Rule, starMatch, WILD } from "./rules.ts";
import { hasRules, type Level, type PolicyCore, rulesOf, type ScriptCtx } from "./context.ts";
import { argParts, globReadParts, pathTargetParts, readPathParts, urlParts } from "./arguments.ts";
import { gitConfig, gitContentParts, gitNetPart, gitUnsafe } from "./git.ts";
import { envSetPart, namePart } from "./names.ts";
import { physical } from "./paths.ts";
import { projectFileOperand } from "./project_files.ts";
import { codeVariablePart, yieldNote, yieldsTo } from "./yields.ts";
import { cdTarget, classify, gitNormalized, safePrefixName, secretName } from "./shell/commands.ts";
import { parseShell } from "./shell/parse.ts";
import type { ShellScript } from "./shell/script.ts";
import type { GuardPart } from "./types.ts";
import { by, clip, q } from "./verdict.ts";

/** Nesting limit for `bash -c '…'` / `eval` strings parsed recursively. */
const MAX_DEPTH = 4;
/**
 * Source text of a simple command whose unknown (WILD) words may be run-time
 * values (`$X`, `$(…)`, backticks, brace expansion, `~user`, extended globs)
 * rather than plain filename globs (`*.ts`) or process substitutions.
 */
const DYNAMIC_TEXT = /[$`]|\{[^}]*(,|\.\.)|~[^/\s]|[@!+*?]\(/;

/**
 * The working directories `script` may leave the shell in, given the
 * candidates `cwds` (null = unknown): every `cd`/`pushd` (also behind
 * `builtin`/`command`, and inside a literal `eval` string) adds its
 * targets; `popd`, `cd -`, an unknown target, a non-literal `eval`,
 * `source`, and a relative target that `CDPATH` may redirect make it
 * unknown. A target with `..` also adds its physical resolution (`cd -P`).
 */
function cwdsAfter(
  core: PolicyCore,
  script: ShellScript,
  cwds: string[] | null,
  depth = 0,
): string[] | null {
  if (cwds === null) return null;
  let out: string[] | null = [...cwds];
  const cdpath = cdpathSet();
  for (const c of script.commands) {
    if (out === null) break;
    const name = c.words[0];
    if (name === "eval" || name === "source" || name === ".") {
      const src = name === "eval" && !c.words.some((w) => w.includes(WILD))
        ? c.words.slice(1).join(" ")
        : undefined;
      const sub = src !== undefined && depth < MAX_DEPTH ? safeParse(src, core.home) : undefined;
      out = sub?.ok ? cwdsAfter(core, sub.script, out, depth + 1) : null;
      continue;
    }
    const target = cdTarget(c.words);
    if (target === undefined) continue;
    if (
      target.includes(WILD) ||
      (cdpath && !/^(\/|~|\.\.?(\/|$))/.test(target))
    ) {
      out = null;
      break;
    }
    const next: string[] = [];
    for (const d of out) {
      next.push(resolvePath(target, d, core.home));
      if (target.split("/").includes("..")) next.push(physical(core, target, d));
    }
    out.push(...next);
    out = [...new Set(out)];
    if (out.length > 16) out = null;
  }
  return out;
}

export function scriptParts(
  core: PolicyCore,
  script: ShellScript,
  outer: ScriptCtx,
  parts: GuardPart[],
): void {
  // Working directories a relative path may be resolved against (cd/pushd/popd anywhere).
  const ctx: ScriptCtx = { ...outer, cwds: cwdsAfter(core, script, outer.cwds) };
  ctx.gitEnv ??= [
    ...script.decls.flatMap((d) => d.names),
    ...script.commands.filter((c) => !c.words.length).flatMap((c) => c.assigns),
  ].find((n) => n.startsWith("GIT_"));
  for (const h of script.hazards ?? []) {
    // The user approved this exact line; under --dangerously-skip-permissions only a
    // deny rule the hidden code might hit keeps the question.
    if (ctx.approved) continue;
    if (ctx.level === "skip" && !hasRules(core, ["execute", "read", "write"], ["deny"])) continue;
    const y = yieldsTo(core, ctx.level);
    parts.push({
      decision: "ask",
      reason: `${q(clip(h.text, 80))} is ${h.what}, which Bash evaluates as code; the guard asks${
        y ? yieldNote(y) : ""
      }`,
      rule: y?.text ?? "default",
      subject: clip(h.text, 80),
    });
  }
  if (ctx.level === "full") {
    for (const g of script.globs ?? []) globReadParts(core, g, ctx, parts);
  }

  for (const c of script.commands) {
    simpleParts(core, c.words, c.assigns, c.text, ctx, ctx.level, parts);
  }

  for (const d of script.decls) {
    for (const n of d.names) {
      const p = envSetPart(core, n, d.text, ctx.level);
      if (p) parts.push(p);
      codeVariablePart(core, n, d.text, ctx, ctx.level, parts);
    }
    if (
      ctx.level === "full" && (!d.names.length || d.flags.some((f) => /^-[a-zA-Z]*p/.test(f)))
    ) {
      parts.push({
        decision: "ask",
        reason: `${q(d.text)} prints shell variables (may contain secrets)`,
        rule: "default",
        subject: d.text,
      });
    }
  }

  for (const r of script.redirects) {
    if (r.access === "none" || r.target === undefined) continue;
    // An explicitly allowed command line (or a command run by one) keeps its redirections
    // to the rules and protected paths; otherwise the defaults apply too.
    const level: Level = core.dangerouslySkipPermissions ? "skip" : ctx.level;
    if (r.access === "write" || r.access === "readwrite") {
      pathTargetParts(core, "write", r.target, r.text, ctx, level, parts, "redirection");
    }
    if (r.access === "read" || r.access === "readwrite") {
      pathTargetParts(core, "read", r.target, r.text, ctx, level, parts, "redirection");
    }
  }

  const envRules = hasRules(core, ["env"], ["deny", "ask"]);
  for (const p of script.params) {
    if (p.name === undefined) {
      if (envRules && (ctx.level !== "skip" || hasRules(core, ["env"], ["deny"]))) {
        parts.push({
          decision: "ask",
          reason:
            "an indirect variable expansion (${!x}) may read a restricted environment variable",
          rule: "default",
          subject: "${!…}",
        });
      }
      continue;
    }
    const part = namePart(core, "env", p.name, ctx.level);
    if (part) {
      if (part.decision !== "allow") {
        parts.push({ ...part, reason: `${part.reason} ($${p.name} is expanded)` });
      }
      continue;
    }
    // A variable whose name looks secret (`$GITHUB_TOKEN`) would be shown to the model.
    if (ctx.level !== "skip" && !ctx.approved && secretName(p.name)) {
      parts.push({
        decision: "ask",
        reason:
          `$${p.name} looks like a secret (its name); the default policy asks before expanding it (allow with Env(${p.name}))`,
        rule: "default",
        subject: `$${p.name}`,
      });
    }
  }
}

/** Decides one simple command (and what it runs) at `level`, appending parts. */
export function simpleParts(
  core: PolicyCore,
  words: string[],
  assigns: string[],
  text: string,
  ctx: ScriptCtx,
  level: Level,
  parts: GuardPart[],
  dynamic?: boolean,
  findItems = false,
  chosen = false,
): void {
  const display = clip(text || words.join(" ").replaceAll(WILD, "…"));
  // May an unknown word be a run-time value (not a filename glob)?
  const dyn = dynamic ?? DYNAMIC_TEXT.test(text);
  for (const a of assigns) {
    // `IFS= read -r line`: IFS only changes how `read` splits its input (Bash does not import
    // IFS from the environment, so it cannot reach another program).
    if (a === "IFS" && /^(read|mapfile|readarray)$/.test(words[0] ?? "")) continue;
    const p = envSetPart(core, a, display, level, ctx);
    if (p) parts.push(p);
    codeVariablePart(
      core,
      a,
      display,
      ctx,
      level,
      parts,
      () => !words.length || classify(words).allowed,
    );
  }
  if (!words.length) return;
  const name = words[0];
  const line = words.join(" ");
  const base = name.includes("/") && !name.includes(WILD)
    ? [basename(name), ...words.slice(1)]
    : undefined;
  // Deny and ask rules also see the command with its global options removed
  // (`git --no-pager -c a.b=c push` is `git push`); for other programs, leading
  // options (and the word after each) are skipped as a possible match.
  const gw = base ?? words;
  let norm = gitNormalized(gw);
  // An alias in the repository's configuration (`[alias] p = push`) makes `git p` another command.
  const sub = gw[0] === "git" ? (norm ?? gw)[1] : undefined;
  // A repository alias that starts with `!` is a shell command git runs: code the guard does not
  // see, which an allow rule on git does not cover.
  let shellAlias: string | undefined;
  if (sub && !sub.includes(WILD) && hasRules(core, ["execute"], ["deny", "ask"])) {
    const alias = gitConfig(core)?.get(`alias.${sub.toLowerCase()}`);
    if (alias !== undefined) {
      norm = ["git", WILD, ...(norm ?? gw).slice(2)];
      if (alias.trimStart().startsWith("!")) {
        shellAlias = `the repository's git alias ${q(sub)} runs a shell command`;
      }
    }
  }
  const sure = [base, norm].filter((w): w is string[] => !!w).map((w) => w.join(" "));
  const possible = optionSkips(base ?? words).map((w) => w.join(" "));
  // An environment prefix not on the short safe list makes allow rules not match.
  const prefixed = assigns.find((a) => !safePrefixName(a));

  let deny: Rule | undefined,
    maybeDeny: Rule | undefined,
    ask: Rule | undefined,
    allow: Rule | undefined;
  for (const r of rulesOf(core, "execute")) {
    if (r.decision === "allow") {
      if (!allow && !prefixed && commandMatch(execPattern(r), line, false) === "yes") allow = r;
      continue;
    }
    let m = commandMatch(execPattern(r), line, true);
    for (const alt of sure) {
      if (m === "yes") break;
      const m2 = commandMatch(execPattern(r), alt, true);
      if (m2 === "yes" || m === "no") m = m2;
    }
    for (const alt of possible) {
      if (m !== "no") break;
      if (commandMatch(execPattern(r), alt, true) !== "no") m = "maybe";
    }
    if (m === "no") continue;
    if (r.decision === "deny") {
      if (m === "yes") deny ??= r;
      else maybeDeny ??= r;
    } else ask ??= r;
  }
  if (deny) {
    parts.push({
      decision: "deny",
      reason: `${by(deny)} denies ${q(display)}`,
      rule: deny.text,
      subject: display,
    });
    return;
  }
  if (maybeDeny) {
    parts.push({
      decision: "ask",
      reason: `${q(display)} may match ${
        by(maybeDeny)
      } (part of it is only known at run time, or options precede its subcommand)`,
      rule: maybeDeny.text,
      subject: display,
    });
  }
  if (ask && level !== "skip") {
    parts.push({
      decision: "ask",
      reason: `${by(ask)} asks before ${q(display)}`,
      rule: ask.text,
      subject: display,
    });
  }
  if (name.includes(WILD)) {
    const y = ctx.approved ? undefined : yieldsTo(core, level);
    if (y) {
      parts.push({
        decision: "ask",
        reason: `the command name of ${q(display)} is only known at run time${yieldNote(y)}`,
        rule: y.text,
        subject: display,
      });
    } else if (level === "full" && !allow) {
      parts.push({
        decision: "ask",
        reason: `the command name of ${q(display)} is only known at run time`,
        rule: "default",
        subject: display,
      });
    } else if (allow) {
      parts.push({
        decision: "allow",
        reason: `${by(allow)} allows ${q(display)}`,
        rule: allow.text,
        subject: display,
      });
    }
    return;
  }

  const c = classify(words);
  if (shellAlias) c.opaque ??= shellAlias;
  // gitUnsafe's finding, once computed (null: not yet).
  let gitWhy: string | undefined | null = null;
  let inner: Level = level;
  if (allow) {
    parts.push({
      decision: "allow",
      reason: `${by(allow)} allows ${q(display)}`,
      rule: allow.text,
      subject: display,
    });
    if (inner === "full") inner = "explicit";
  } else if (level === "skip") {
    parts.push({
      decision: "allow",
      reason: `--dangerously-skip-permissions allows ${q(display)}`,
      rule: "default",
      subject: display,
    });
  } else if (level === "full") {
    if (c.allowed && name === "git") {
      const why = gitWhy = gitUnsafe(core, ctx);
      if (why) {
        c.allowed = false;
        c.reason = why;
      }
    }
    parts.push({
      decision: c.allowed ? "allow" : "ask",
      reason: c.allowed
        ? `${c.reason}: ${q(display)}`
        : `${q(display)}: ${c.reason}; the default policy asks`,
      rule: "default",
      subject: display,
    });
    if (c.allowed) readPathParts(core, words, display, ctx, dyn, findItems, parts);
  }
  // A command that runs code the guard does not see is not understood: while an Execute deny or
  // ask rule exists it asks with that rule (the sandbox's auto-allow yields; an allow rule on
  // the program does not cover what it runs).
  const y = ctx.approved ? undefined : yieldsTo(core, level);
  if (y) {
    // What the command line itself evaluates asks even under an allow rule on the program; the
    // project's code (scripts, build files, repository configuration) only without one.
    const why = c.opaque ?? restrictedMention(core, c.mentions, name) ??
      (allow || chosen ? undefined : c.projectCode ??
        projectFileOperand(name, c.operands, ctx.cwds, core.home) ??
        (name === "git" ? (gitWhy === null ? gitUnsafe(core, ctx) : gitWhy) : undefined));
    if (why) {
      parts.push({
        decision: "ask",
        reason: `${q(display)}: ${why}${yieldNote(y)}`,
        rule: y.text,
        subject: display,
      });
    }
  }

  if (level !== "skip" || hasRules(core, ["env"], ["deny"])) {
    for (const n of c.sets ?? []) {
      const p = envSetPart(core, n, display, level, ctx);
      if (p) parts.push(p);
    }
  }
  for (const n of c.sets ?? []) codeVariablePart(core, n, display, ctx, level, parts, c.allowed);
  for (const repo of c.net ?? []) {
    const p = gitNetPart(core, repo, display, level);
    // A line approved as it is ("allow always") lifts the default question, not a Net rule.
    if (ctx.approved && p.rule === "default") continue;
    parts.push(p);
  }
  for (const i of c.inner) {
    const unknownArgs = dyn || !!i.unknownArgs;
    // A command a runner runs is chosen with it when an allow rule covers the runner.
    const chosenInner = !!i.chosen && (!!allow || chosen);
    simpleParts(
      core,
      i.words,
      i.assigns,
      "",
      i.elsewhere ? elsewhereCtx(ctx, i.words) : ctx,
      inner,
      parts,
      unknownArgs,
      !!i.findItems,
      chosenInner,
    );
  }
  for (const s of c.scripts) {
    let sub: ReturnType<typeof parseShell> | undefined;
    try {
      sub = s.src === null ? undefined : parseShell(s.src, core.home);
    } catch (e) {
      sub = { ok: false, error: (e as Error).message };
    }
    if (s.src === null || !sub?.ok || ctx.depth + 1 >= MAX_DEPTH) {
      const why = s.src === null
        ? `${s.via} runs a string only known at run time`
        : !sub?.ok
        ? `the shell parser cannot parse the string run by ${s.via} (${
          sub && !sub.ok ? sub.error : ""
        })`
        : `${s.via} is nested too deeply`;
      const ys = ctx.approved ? undefined : yieldsTo(core, inner);
      if (
        ys || inner === "full" ||
        hasRules(
          core,
          ["execute", "read", "write", "env"],
          inner === "skip" ? ["deny"] : ["deny", "ask"],
        )
      ) {
        parts.push({
          decision: "ask",
          reason: `${q(display)}: ${why}; the guard asks (fail closed)${ys ? yieldNote(ys) : ""}`,
          rule: ys?.text ?? "default",
          subject: display,
        });
      }
      continue;
    }
    scriptParts(core, sub.script, {
      depth: ctx.depth + 1,
      cwds: ctx.cwds,
      level: inner,
      approved: ctx.approved,
      gitEnv: ctx.gitEnv,
      elsewhere: ctx.elsewhere,
    }, parts);
  }
  const wlevel: Level = inner;
  for (const w of c.writes) {
    pathTargetParts(core, "write", w, display, ctx, wlevel, parts, "argument");
  }
  argParts(core, words, c.readOnly, display, ctx, level === "skip" ? "skip" : "explicit", parts);
  // What git prints of file contents (its object store is not hidden by the sandbox).
  if ((base ?? words)[0] === "git") {
    gitContentParts(core, base ?? words, assigns, display, ctx, level, parts);
  }
  if (!c.readOnly && !c.net && name !== "git") urlParts(core, words, display, parts);
}

/**
 * Why a program without a rule may run what an `Execute` deny or ask rule restricts: one of the
 * words of its arguments (`mentions`, ./shell/classification.ts) is that rule's program (its
 * first word, a `*` pattern matched). Undefined when none is.
 */
function restrictedMention(
  core: PolicyCore,
  mentions: readonly string[] | undefined,
  name: string,
): string | undefined {
  if (!mentions?.length) return undefined;
  for (const r of rulesOf(core, "execute")) {
    if (r.decision === "allow" || r.pattern === undefined) continue;
    const prog = r.pattern.trim().split(/\s+/)[0];
    const hit = prog && mentions.find((m) => starMatch(prog, m));
    if (hit) {
      return `"${name}" has no rule in the guard and its arguments name "${hit}", which ${
        by(r)
      } restricts: it may run it`;
    }
  }
  return undefined;
}

/** The context of a command run beneath `ctx`'s folders (a word that climbs: folder unknown). */
const elsewhereCtx = (ctx: ScriptCtx, words: string[]): ScriptCtx => ({
  ...ctx,
  elsewhere: true,
  cwds: words.some((w) => /(^|\/)\.\.(\/|$)/.test(w)) ? null : ctx.cwds,
});

/** The star pattern of an Execute rule (`*` escaped for exact session rules). */
function execPattern(r: Rule): string | undefined {
  return r.exact && r.pattern !== undefined ? r.pattern.replaceAll("*", "\\*") : r.pattern;
}

/**
 * Variants of a command with leading options skipped (`npm --registry x
 * publish` → `npm publish`, `npm x publish`): each option word, and the word
 * after an option without `=` (it may be its value), may be dropped. Used
 * for a "may match" of deny and ask rules only.
 */
function optionSkips(words: string[]): string[][] {
  if (words.length < 3 || !words[1].startsWith("-") || words[1] === "--") return [];
  const out: string[][] = [];
  let i = 1;
  while (i < words.length && i < 8) {
    const a = words[i];
    if (!a.startsWith("-")) break;
    i++;
    out.push([words[0], ...words.slice(i)]);
    if (!a.includes("=") && i < words.length && !words[i].startsWith("-")) {
      out.push([words[0], ...words.slice(i + 1)]);
      // the next word may be a value or the subcommand: continue past it only as a value
      if (i + 1 < words.length && words[i + 1].startsWith("-")) i++;
    }
  }
  return out;
}

/** True when `CDPATH` is set for the commands Coyote runs (then `cd name` may go elsewhere). */
function cdpathSet(): boolean {
  try {
    return !!Deno.env.get("CDPATH") || /(^|:)cdable_vars(:|$)/.test(Deno.env.get("BASHOPTS") ?? "");
  } catch {
    return true; // cannot tell: fail closed
  }
}

/** {@link parseShell} that never throws (the parser may not be loaded for a fast-path line). */
function safeParse(src: string, home: string): ReturnType<typeof parseShell> {
  try {
    return parseShell(src, home);
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
}
