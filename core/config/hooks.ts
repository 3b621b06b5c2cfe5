/**
 * The shape of lifecycle hooks in configuration: Claude Code's settings `hooks` object
 * (`hooks: {PreToolUse: [{matcher: "Bash", hooks: [{type: "command", command, timeout}]}]}`),
 * accepted in config.yaml `hooks:` (beside Coyote's older `hooks.stop`), in a trusted workspace's
 * `.coyote/config*.yaml` and `.claude/settings*.json`, and from plugins (SDK `hooks`). What runs
 * them is core/extensions/hooks/; docs/hooks.md describes them.
 *
 * - Event names are Claude Code's ({@link HOOK_EVENTS}), case-sensitive.
 * - `matcher` (optional; `""`, `"*"` or absent match everything): Claude Code's rules — only
 *   letters, digits, `_` and `|` is an exact name or a `|` list; anything else is a JavaScript
 *   regular expression searched in the name (`mcp__github__.*`, `Notebook.*`). An invalid regular
 *   expression is a configuration error naming the field.
 * - `timeout` is in **seconds** (Claude Code's unit); default 60.
 * - Hook types other than `command` (`prompt`, `http`, `agent`) are skipped with a warning.
 * @module
 */
import { ConfigError } from "../protocol/errors.ts";

/** Claude Code's hook event names that Coyote runs. */
export const HOOK_EVENTS = [
  "PreToolUse",
  "PostToolUse",
  "UserPromptSubmit",
  "SessionStart",
  "SessionEnd",
  "Notification",
  "Stop",
  "SubagentStop",
  "PreCompact",
] as const;
/** Claude Code's project settings files whose `hooks` a trusted workspace runs (relative). */
export const CLAUDE_SETTINGS = [".claude/settings.json", ".claude/settings.local.json"];

/** One of {@link HOOK_EVENTS}. */
export type HookEventName = typeof HOOK_EVENTS[number];

/** One hook of a matcher group (Claude Code: `{type: "command", command, timeout?}`). */
export interface HookCommandSpec {
  type?: string;
  command?: string;
  /** Seconds; default 60. */
  timeout?: number;
  [extra: string]: unknown;
}

/** A matcher group: the hooks that run when `matcher` matches. */
export interface HookGroup {
  matcher?: string;
  hooks: HookCommandSpec[];
}

/** The lifecycle keys of a `hooks` object. */
export type LifecycleHooks = Partial<Record<HookEventName, HookGroup[]>>;

/** A `hooks` object's problem: the key path below `hooks` and what is wrong. */
export interface HookIssue {
  path: (string | number)[];
  message: string;
}

/**
 * Validates the lifecycle keys of a `hooks` value (other keys are the caller's business:
 * `stop`/`max_stop_blocks` in config.yaml). Returns the issues (empty: valid).
 */
export function hookIssues(
  value: Record<string, unknown>,
  keys: readonly string[] = HOOK_EVENTS,
): HookIssue[] {
  const out: HookIssue[] = [];
  for (const ev of keys) {
    const groups = value[ev];
    if (groups === undefined) continue;
    if (!Array.isArray(groups)) {
      out.push({ path: [ev], message: "expected a list of {matcher, hooks} mappings" });
      continue;
    }
    groups.forEach((g, i) => {
      if (!g || typeof g !== "object" || Array.isArray(g)) {
        out.push({ path: [ev, i], message: "expected a mapping {matcher?, hooks: [...]}" });
        return;
      }
      const m = (g as { matcher?: unknown }).matcher;
      if (m !== undefined && typeof m !== "string") {
        out.push({ path: [ev, i, "matcher"], message: "expected a string (a tool name or regex)" });
      } else if (typeof m === "string") {
        const bad = matcherError(m);
        if (bad) out.push({ path: [ev, i, "matcher"], message: bad });
      }
      const hooks = (g as { hooks?: unknown }).hooks;
      if (!Array.isArray(hooks)) {
        out.push({
          path: [ev, i, "hooks"],
          message: 'expected a list of {type: "command", command} mappings',
        });
        return;
      }
      hooks.forEach((h, j) => {
        const at = [ev, i, "hooks", j];
        if (!h || typeof h !== "object" || Array.isArray(h)) {
          out.push({
            path: at,
            message: 'expected a mapping {type: "command", command, timeout?}',
          });
          return;
        }
        const o = h as HookCommandSpec;
        if (o.type !== undefined && typeof o.type !== "string") {
          out.push({ path: [...at, "type"], message: "expected a string" });
        }
        const type = o.type ?? "command";
        if (type === "command" && (typeof o.command !== "string" || !o.command.trim())) {
          out.push({ path: [...at, "command"], message: "expected a shell command" });
        }
        if (
          o.timeout !== undefined &&
          (typeof o.timeout !== "number" || !(o.timeout > 0) || !Number.isFinite(o.timeout))
        ) {
          out.push({ path: [...at, "timeout"], message: "expected a positive number of seconds" });
        }
      });
    });
  }
  return out;
}

/** Why a matcher is not usable (an invalid regular expression), or undefined. */
export function matcherError(m: string): string | undefined {
  if (isSimpleMatcher(m)) return undefined;
  try {
    new RegExp(m);
    return undefined;
  } catch (e) {
    return `not a valid regular expression: ${(e as Error).message}`;
  }
}

function isSimpleMatcher(m: string): boolean {
  return m === "" || m === "*" || /^[A-Za-z0-9_|]+$/.test(m);
}

/**
 * Does `matcher` match any of `names` (Claude Code's rules, see the module doc)?
 * An invalid regex matches nothing (it was reported when the config was read).
 */
export function matcherMatches(matcher: string | undefined, names: string[]): boolean {
  if (matcher === undefined || matcher === "" || matcher === "*") return true;
  if (isSimpleMatcher(matcher)) {
    const alts = matcher.split("|").filter(Boolean);
    return names.some((n) => alts.includes(n));
  }
  let re: RegExp;
  try {
    re = new RegExp(matcher);
  } catch {
    return false;
  }
  return names.some((n) => re.test(n));
}

/** `a.b[0].c` for a key path. */
export function keyPath(segs: (string | number)[]): string {
  return segs.map((s, i) => typeof s === "number" ? `[${s}]` : (i ? "." : "") + String(s)).join(
    "",
  );
}

/**
 * The lifecycle hooks of a Claude Code settings file (`.claude/settings.json`,
 * `.claude/settings.local.json`): its `hooks` key only (other keys are Claude Code's own and
 * ignored). Null when the file does not exist.
 * @throws ConfigError naming the file and the field (bad JSON, malformed `hooks`).
 */
export async function readClaudeSettingsHooks(path: string): Promise<LifecycleHooks | null> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw new ConfigError(`config error in ${path}: cannot read: ${(e as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`config error in ${path}: not valid JSON: ${(e as Error).message}`);
  }
  if (!data || typeof data !== "object" || Array.isArray(data)) {
    throw new ConfigError(`config error in ${path}: expected a JSON object at the top level`);
  }
  const hooks = (data as { hooks?: unknown }).hooks;
  if (hooks === undefined) return null;
  if (!hooks || typeof hooks !== "object" || Array.isArray(hooks)) {
    throw new ConfigError(`config error in ${path}: hooks: expected an object of hook events`);
  }
  const issues = hookIssues(hooks as Record<string, unknown>);
  if (issues.length) {
    throw new ConfigError(
      `config error in ${path}: ${
        issues.map((i) => `${keyPath(["hooks", ...i.path])}: ${i.message}`).join("; ")
      }`,
    );
  }
  const out: LifecycleHooks = {};
  for (const ev of HOOK_EVENTS) {
    const g = (hooks as LifecycleHooks)[ev];
    if (g) out[ev] = g;
  }
  return out;
}
