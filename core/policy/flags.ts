/**
 * View (c) of the one policy: the `deno run` / `deno compile` flags of Coyote
 * itself (scripts/compile.ts, `policy show`). `--no-prompt` and the allow
 * flags the binary needs ({@link BASE_FLAGS}), plus a Deno deny flag for each
 * deny rule Deno can express: a literal path, host or variable name, or a
 * whole program; every other rule stays guard-only, and {@link flagFor} says
 * why (globs, argument-specific command patterns, bare kinds that would stop
 * Coyote itself).
 * @module
 */
import { type Rule, wholeProgram } from "./rules.ts";
import { matcher, type PolicyCore } from "./context.ts";

/** Default Deno flags of the binary: no prompts, the permissions Coyote needs. */
const BASE_FLAGS = [
  "--no-prompt",
  "--allow-read",
  "--allow-write",
  "--allow-net",
  "--allow-env",
  "--allow-run",
  "--allow-sys",
];

/**
 * How a deny rule maps to a Deno flag: the flag value, or why it stays
 * guard-only (globs, argument-specific command patterns, bare kinds that
 * would stop Coyote itself).
 */
export function flagFor(
  core: PolicyCore,
  r: Rule,
): { flag?: string; value?: string; note: string } {
  if (r.decision !== "deny") return { note: `${r.decision} rules are guard-only` };
  switch (r.kind) {
    case "read":
    case "write": {
      if (r.pattern === undefined) {
        return { note: "guard-only: a Deno-level deny of every path would stop Coyote itself" };
      }
      const m = matcher(core, r);
      if (m.flagPath) {
        return {
          flag: `--deny-${r.kind}`,
          value: m.flagPath,
          note: `--deny-${r.kind}=${m.flagPath}`,
        };
      }
      return { note: "guard-only: Deno flags take literal paths, not globs" };
    }
    case "net": {
      if (r.pattern === undefined) {
        return {
          note: "guard-only: a Deno-level deny of all hosts would stop Coyote reaching its model",
        };
      }
      if (/[*]/.test(r.pattern)) {
        return { note: "guard-only: Deno flags take literal hosts, not globs" };
      }
      if (r.pattern.startsWith("unix:")) {
        return { note: "sandbox-only: a unix socket path (core/policy/sandbox/seccomp.ts)" };
      }
      const v = r.pattern.toLowerCase();
      return { flag: "--deny-net", value: v, note: `--deny-net=${v}` };
    }
    case "env":
      if (r.pattern === undefined) {
        return {
          note: "guard-only: a Deno-level deny of all variables would stop Coyote itself",
        };
      }
      if (/[*?]/.test(r.pattern)) {
        return { note: "guard-only: Deno flags take literal names, not globs" };
      }
      return { flag: "--deny-env", value: r.pattern, note: `--deny-env=${r.pattern}` };
    case "execute": {
      if (r.pattern === undefined) {
        return { flag: "--deny-run", note: "--deny-run (no programs at all)" };
      }
      const prog = wholeProgram(r.pattern);
      if (prog && !prog.includes(",")) {
        return { flag: "--deny-run", value: prog, note: `--deny-run=${prog}` };
      }
      return { note: "guard-only: the rule depends on the command's arguments" };
    }
    case "tool":
      return { note: "guard-only: tools are not a Deno permission" };
  }
}

/**
 * Flags for `deno run` / `deno compile` of Coyote itself: `--no-prompt`, the
 * allow flags the binary needs, and `--deny-read=`/`--deny-write=`/
 * `--deny-net=`/`--deny-env=`/`--deny-run=` for literal deny rules.
 */
export function denoFlags(core: PolicyCore): string[] {
  const flags = [...BASE_FLAGS];
  const values = new Map<string, string[] | null>();
  for (const r of core.rules) {
    const f = flagFor(core, r);
    if (!f.flag) continue;
    if (f.value === undefined) values.set(f.flag, null);
    else if (values.get(f.flag) !== null) {
      const xs = values.get(f.flag) ?? [];
      if (!xs.includes(f.value)) xs.push(f.value);
      values.set(f.flag, xs);
    }
  }
  for (const flag of ["--deny-read", "--deny-write", "--deny-net", "--deny-env", "--deny-run"]) {
    if (!values.has(flag)) continue;
    const xs = values.get(flag);
    flags.push(xs === null ? flag : `${flag}=${xs!.join(",")}`);
  }
  return flags;
}
