/**
 * The terminal permission prompt shared by the REPL and one-shot text mode: one key —
 * `y` allow once, `a` allow always, `n` deny, `d` deny always —
 * after the full request: the right verb (run / write / fetch / read / use), the whole command or
 * path wrapped to the terminal width (never cut), the guard's reason (wrapped at spaces), and for
 * a file write the diff it would make; the answer goes on a line of its own ({@link answerLine}).
 *
 * "Always" answers are written to `.coyote/config.local.yaml` (core/config/project.ts
 * `appendPermissionRule`) when the workspace is trusted, so later runs, `--continue` and ACP
 * sessions there apply them; the engine also adds the rule to the running session
 * (core/engine/gate.ts). In an untrusted workspace nothing is written: the legend, the answer
 * line and nothing else say so once ("this session only").
 * @module
 */
import type { ToolAccess } from "../../../sdk/mod.ts";
import type { PermissionOutcome, PermissionRequest } from "../../protocol/types.ts";
import { unifiedDiff } from "./diff.ts";
import { type Style, styles } from "./style.ts";
import { wrap, wrapWords } from "./style.ts";
import { safeLine, safeText } from "../../util/terminal_safe.ts";

/** The verb for an access: what the agent wants to do. */
export function verbFor(a: ToolAccess): string {
  switch (a.type) {
    case "execute":
      return "run";
    case "write":
      return "write";
    case "net":
      return "fetch from";
    case "read":
      return "read";
    case "tool":
      return "use the tool";
  }
}

function target(a: ToolAccess): string {
  switch (a.type) {
    case "execute":
      return a.command;
    case "write":
    case "read":
      return a.path;
    case "net":
      return a.host;
    case "tool":
      return a.name;
  }
}

/** The diff a write request would make (fs_write / fs_patch arguments), or "". */
export function requestDiff(req: PermissionRequest, color: boolean, cwd: string): string {
  const input = req.rawInput as Record<string, unknown> | null;
  if (!input || typeof input !== "object" || typeof input.path !== "string") return "";
  const abs = input.path.startsWith("/") ? input.path : `${cwd}/${input.path}`;
  if (typeof input.content === "string") {
    let old: string | null = null;
    try {
      old = Deno.readTextFileSync(abs);
    } catch { /* a new file */ }
    return unifiedDiff({ path: abs, oldText: old, newText: input.content }, { color, cwd });
  }
  if (typeof input.old_string === "string" && typeof input.new_string === "string") {
    // The file as the patch would leave it, so the diff has the file's lines and context (the
    // same diff the finished call shows); the fragments alone when the file or the text is gone.
    let oldText = input.old_string;
    let newText = input.new_string;
    try {
      const file = Deno.readTextFileSync(abs);
      const at = input.old_string ? file.indexOf(input.old_string) : -1;
      if (at >= 0) {
        oldText = file;
        newText = input.replace_all === true
          ? file.split(input.old_string).join(input.new_string)
          : file.slice(0, at) + input.new_string + file.slice(at + input.old_string.length);
      }
    } catch { /* unreadable: the fragments */ }
    return unifiedDiff({ path: abs, oldText, newText }, { color, cwd });
  }
  return "";
}

/** The prompt text for a request (ends with the key legend, no newline). */
export function permissionText(
  req: PermissionRequest,
  opts: { color: boolean; width: number; cwd: string; trusted?: boolean },
): string {
  const s: Style = styles(opts.color);
  const who = req.scope && req.scope.depth > 0
    ? `sub-agent ${s.bold(safeLine(req.scope.agentId))} wants to`
    : "coyote wants to";
  const lines: string[] = [];
  for (const v of req.verdicts) {
    lines.push(`${s.yellow("?")} ${who} ${s.bold(verbFor(v.access))}:`);
    // The command, path, host or tool name and the reason come from the model's call (or a
    // plugin): sanitised before styling, so they cannot hide or rewrite what is asked.
    lines.push(s.cyan(wrap(safeText(target(v.access), { tabs: false }), opts.width, "    ")));
    // The reason is prose: wrapped at spaces (a command or path above is wrapped exactly).
    lines.push(s.dim(wrapWords(`(${safeText(v.reason, { tabs: false })})`, opts.width, "  ")));
  }
  if (req.verdicts.some((v) => v.access.type === "write")) {
    const d = requestDiff(req, opts.color, opts.cwd);
    if (d) lines.push(d.replace(/\n$/, ""));
  }
  const where = opts.trusted === false ? "this session" : "this project";
  lines.push(
    `  ${s.bold("y")} yes once · ${s.bold("a")} always (${where}) · ${s.bold("n")} no · ${
      s.bold("d")
    } deny always `,
  );
  return lines.join("\n");
}

/**
 * The outcome of one key; null for a key that means nothing (ask again). Enter or Escape is
 * `n`; Ctrl+C is `cancelled`.
 */
export function outcomeForKey(key: string): PermissionOutcome | null {
  // A chunk of several keys (typed ahead, `y\n`) counts by its first key.
  const k = key.startsWith("\x1b") ? key : key.slice(0, 1);
  switch (k.toLowerCase()) {
    case "y":
      return "allow_once";
    case "a":
      return "allow_always";
    case "n":
    case "\r":
    case "\n":
    case "\x1b":
      return "reject_once";
    case "d":
      return "reject_always";
    case "\x03":
      return "cancelled";
    default:
      return null;
  }
}

/**
 * Label printed after the answer. An "always" answer is saved for the project only in a trusted
 * workspace (`trusted`, default true); in an untrusted one the label says "this session only",
 * once, and {@link rememberAnswer} adds nothing.
 */
export function outcomeLabel(o: PermissionOutcome, trusted = true): string {
  const kept = trusted
    ? "saved for this project"
    : "this session only: the workspace is not trusted, /trust keeps rules";
  return o === "allow_once"
    ? "allowed once"
    : o === "allow_always"
    ? `allowed always (${kept})`
    : o === "reject_always"
    ? `denied always (${kept})`
    : o === "cancelled"
    ? "cancelled"
    : "denied";
}

/**
 * The answer as printed after the key legend (the cursor waits at its end): on a line of its
 * own, `  → allowed once`, so it never runs into the legend.
 */
export function answerLine(o: PermissionOutcome, trusted = true): string {
  return `\n  → ${outcomeLabel(o, trusted)}\n`;
}

/**
 * Saves an "always" answer for every access of the request to `.coyote/config.local.yaml`
 * (core/config/project.ts), when the workspace is trusted; returns a note for the user (where it
 * was saved, or why not), or null when there is nothing to add — an untrusted workspace's
 * "session only" is already in {@link outcomeLabel}.
 */
export async function rememberAnswer(
  req: PermissionRequest,
  outcome: PermissionOutcome,
  ws: { cwd: string; trusted: boolean },
): Promise<string | null> {
  if (outcome !== "allow_always" && outcome !== "reject_always") return null;
  if (!ws.trusted) return null;
  const { ruleFor } = await import("../../engine/gate.ts");
  const { appendPermissionRule } = await import("../../config/project.ts");
  const decision = outcome === "allow_always" ? "allow" : "deny";
  let path = "";
  for (const v of req.verdicts) {
    try {
      path = await appendPermissionRule(ws.cwd, decision, ruleFor(v.access));
    } catch (e) {
      return `could not save the rule: ${(e as Error).message}`;
    }
  }
  return path ? `saved to ${path}` : null;
}
