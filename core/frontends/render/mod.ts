/**
 * The terminal renderer shared by one-shot text mode (core/frontends/headless/mod.ts) and the REPL
 * (core/frontends/repl/): a view of the session's event envelope stream (core/protocol/types.ts `EventEnvelope`).
 *
 * - Assistant text streams to `out` as it arrives — every message of the turn, not only the
 *   last. With markdown on (a colour terminal) each completed block is rendered
 *   (core/frontends/render/markdown.ts); otherwise the text is written as is, chunk by chunk.
 * - Status goes to `err`: tool calls as one compact line each (`• title`, turned into `✓`/`✗`
 *   in place on a terminal), edits as unified diffs (ACP `diff` content), the plan when it
 *   changes, each sub-agent (envelopes with `parent_id`) — live on a line of its own under the
 *   spinner while it runs (terminal; id, elapsed time, last action: core/frontends/render/status.ts),
 *   then one line with its outcome — and a footer per turn: tokens, cost (when the model has a
 *   `price` in `models:`), time; each gate decision and the Phase 0 intent of a coordinator
 *   (core/supervisor/gate_keeper.ts) as one dim line (./event_lines.ts).
 * - A spinner with the elapsed time (and what is running) on `err` while waiting, only when
 *   `spinner` is set (stderr is a terminal); it draws only at the start of a line and is erased
 *   (all its rows) before anything else is written. {@link Renderer.progress} shows it between
 *   turns (`/compact`).
 * - Text meant for the model is not shown: a failed call's advice after ` — ` and the `error:`
 *   prefix are dropped.
 * @module
 */
import type { EventEnvelope } from "../../protocol/types.ts";
import type { ModelPrice } from "../../config/models.ts";
import { BlockSplitter, rowsAbove } from "./blocks.ts";
import { unifiedDiff } from "./diff.ts";
import type { MarkdownRenderer } from "./markdown.ts";
import { type Style, styles } from "./style.ts";
import { type ChildStatus, statusLines } from "./status.ts";
import { escapeCharRefs, keepStylingOnly, safeLine, safeText } from "../../util/terminal_safe.ts";
import { formatDuration, formatTokens, gateLine, hookLine, turnFooter } from "./event_lines.ts";

export { formatDuration, formatTokens, turnFooter };

export { colorFor, terminalWidth, wrap } from "./style.ts";
export { gateLine, hookLine } from "./event_lines.ts";

/** How a renderer writes and what it may do. */
export interface RenderOptions {
  /** Assistant text (stdout). */
  out: (text: string) => void;
  /** Status lines, diffs, spinner (stderr). */
  err: (text: string) => void;
  /** ANSI colours on `err` (and on `out` when `markdown` is set). */
  color: boolean;
  /** Renders completed markdown blocks; null: text is written as it arrives. */
  markdown?: MarkdownRenderer | null;
  /** Draw a spinner on `err` (a terminal). */
  spinner?: boolean;
  /** `out` and `err` are the same terminal (cursor moves in place are safe). */
  sameTerminal?: boolean;
  /** Columns (for wrapping). */
  width?: () => number;
  /** Rows of the terminal (how much of an open markdown block can be shown raw). Default 24. */
  height?: () => number;
  /** Workspace root: paths below it are shown relative. */
  cwd?: string;
  /** The current model's price (USD per million tokens), for the footer's cost. */
  price?: () => ModelPrice | undefined;
  /** Print the per-turn footer (tokens, cost, time). Default true. */
  footer?: boolean;
  /** Clock in ms (tests, benchmarks). */
  now?: () => number;
}

const SPIN = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/** The user-facing part of a failed tool call's text (no `error:` prefix, no advice to the model). */
export function userFacingError(text: string): string {
  let t = text.trim().replace(/^error:\s*/i, "");
  const dash = t.indexOf(" — ");
  if (dash > 0) t = t.slice(0, dash);
  const line = t.split("\n").find((l) => l.trim()) ?? "failed";
  return line.length > 300 ? line.slice(0, 299) + "…" : line;
}

/**
 * `env` with every string of its event sanitised for the terminal (core/util/terminal_safe.ts,
 * newlines kept) except assistant text chunks, which are sanitised per rendered block (a
 * character reference may be split across chunks). One-line contexts add {@link safeLine}.
 */
export function safeEnvelope(env: EventEnvelope): EventEnvelope {
  const u = env.update;
  if (u.sessionUpdate === "agent_message_chunk" || u.sessionUpdate === "agent_thought_chunk") {
    return env;
  }
  return { ...env, agent_id: safeLine(env.agent_id), update: deepSafe(u) as typeof u };
}

const KEEP = new Set(["rawInput", "rawOutput", "oldText", "newText"]);

function deepSafe(v: unknown): unknown {
  if (typeof v === "string") return safeText(v);
  if (Array.isArray(v)) return v.map(deepSafe);
  if (v && typeof v === "object") {
    const o: Record<string, unknown> = {};
    // Raw tool input/output is never shown by the renderer (and may be large); a diff's texts
    // are sanitised line by line by unifiedDiff (so a CR the edit adds stays visible).
    for (const [k, x] of Object.entries(v)) o[k] = KEEP.has(k) ? x : deepSafe(x);
    return o;
  }
  return v;
}

/** Renders envelopes to a terminal or a pipe; see the module doc. */
export class Renderer {
  readonly o: RenderOptions;
  readonly s: Style;
  #split = new BlockSplitter();
  #messageOpen = false;
  /** Column 0 on the terminal (spinner may draw). */
  #atLineStart = true;
  #spinTimer?: ReturnType<typeof setInterval>;
  /** Rows of the status block on screen (0: none). */
  #spinRows = 0;
  #spinFrame = 0;
  #label = "";
  #turnStart = 0;
  /** The model answered in this turn (text, a tool call, usage; not Coyote's own notes). */
  #replied = false;
  #titles = new Map<string, string>();
  /** The tool call whose `•` line is the last line printed (rewritten in place when it ends). */
  #lastCallLine: string | null = null;
  #plan = "";
  #children = new Map<string, ChildStatus>();
  #suspended = 0;
  /** Output that arrived while suspended (a prompt owns the terminal), written at resume. */
  #held: ["out" | "err", string][] = [];
  /** Held `•` lines by tool call id (their index in {@link #held}). */
  #heldCall = new Map<string, number>();
  /** Calls a permission prompt asked about: `true` when the prompt showed the write's diff. */
  #prompted = new Map<string, boolean>();
  /** Context use from the last `usage_update` (tokens used / window). */
  context: { used: number; size: number } | null = null;

  constructor(o: RenderOptions) {
    this.o = o;
    this.s = styles(o.color);
  }

  #now() {
    return (this.o.now ?? performance.now.bind(performance))();
  }

  #write(stream: "out" | "err", text: string) {
    if (!text) return;
    if (this.#suspended) {
      // A permission prompt or question is on screen: printing now would land on its key legend
      // (another agent's tool line after "deny always"), so hold it until the prompt is answered.
      this.#held.push([stream, text]);
      this.#lastCallLine = null;
      return;
    }
    this.#hideSpinner();
    (stream === "out" ? this.o.out : this.o.err)(text);
    if (stream === "err" || this.o.sameTerminal) this.#atLineStart = text.endsWith("\n");
    this.#lastCallLine = null;
  }

  /**
   * One status line on `err`. It ends the assistant message being streamed, except for a line
   * that can come at any moment (a sub-agent's outcome) in markdown mode: there the unfinished
   * block is still buffered, not on screen, and is kept whole instead of rendered in two halves
   * (a code fence or paragraph cut where the line came).
   */
  #statusLine(line: string, anyMoment = false) {
    if (!(anyMoment && this.o.markdown)) this.#endMessage();
    // The open block's raw text goes below the line, so it stays the last thing on screen.
    const shown = this.#shown;
    this.#eraseShown();
    this.#write("err", line + "\n");
    if (shown) {
      this.#write("out", shown);
      this.#shown = shown;
    }
  }

  /**
   * Markdown on a terminal: the open (unfinished) block is shown as raw text as it arrives, then
   * erased in place and replaced by its rendering when it ends (a blank line, a closing fence,
   * the message's end), so text is visible from its first token. This is that raw text as
   * written (with the blank line before it), "" when none is on screen.
   */
  #shown = "";
  /** The open block outgrew the screen: the rest of it waits for its rendering. */
  #rawStopped = false;

  /** True when the open block can be shown raw and erased in place (markdown on one terminal). */
  #live(): boolean {
    return !!this.o.markdown && !!this.o.sameTerminal && !!this.o.spinner && !this.#suspended;
  }

  /** Erases {@link #shown} (cursor up over its rows, clear to the end of the screen). */
  #eraseShown() {
    this.#rawStopped = false;
    if (!this.#shown) return;
    const rows = rowsAbove(this.#shown, this.o.width?.() ?? 80);
    this.#shown = "";
    this.#hideSpinner();
    this.o.out(`${rows ? `\x1b[${rows}A` : ""}\r\x1b[J`);
    this.#atLineStart = true;
  }

  /**
   * Shows more of the open block raw (sanitised). A block taller than the screen would scroll
   * out of reach of the cursor-up: past that it waits for its rendering, as before.
   */
  #showRaw(raw: string) {
    const text = safeText(raw);
    if (!text || this.#rawStopped) return;
    const next = this.#shown + (!this.#shown && this.#blocks ? "\n" : "") + text;
    const cols = this.o.width?.() ?? 80;
    if (rowsAbove(next, cols) >= (this.o.height?.() ?? 24) - 2) {
      this.#rawStopped = true;
      return;
    }
    this.#write("out", next.slice(this.#shown.length));
    this.#shown = next;
  }

  /** Ends the assistant message being streamed: flushes the last block, ends the line. */
  #endMessage() {
    if (!this.#messageOpen) return;
    this.#messageOpen = false;
    const rest = this.#split.flush();
    if (this.o.markdown) {
      this.#eraseShown();
      if (rest.trim()) this.#block(rest);
      this.#blocks = 0;
    } else if (this.#outCol !== 0) {
      this.#write("out", "\n");
    }
    this.#outCol = 0;
  }
  #outCol = 0;
  #blocks = 0;

  /** One rendered markdown block; blocks of a message are separated by a blank line. */
  #block(md: string) {
    // The model's markdown cannot emit raw controls: escaped before rendering (character
    // references too: the renderer decodes `&#27;`), and only the renderer's styling passes after.
    const rendered = this.o.markdown!(escapeCharRefs(safeText(md)));
    this.#write("out", (this.#blocks++ ? "\n" : "") + keepStylingOnly(rendered));
  }

  #text(raw: string) {
    if (!raw) return;
    if (!this.#messageOpen) {
      this.#messageOpen = true;
      this.#outCol = 0;
    }
    if (this.o.markdown) {
      const shownBefore = this.#shown.length;
      const done = this.#split.push(raw);
      if (done) this.#eraseShown();
      if (done.trim()) this.#block(done);
      if (!this.#live()) return;
      // The open block: all of it after a rendered block, else what this chunk added (all of it
      // too when an earlier part could not be shown).
      this.#showRaw(done || !shownBefore ? this.#split.rest : raw);
      return;
    }
    const chunk = safeText(raw);
    this.#write("out", chunk);
    const nl = chunk.lastIndexOf("\n");
    this.#outCol = nl < 0 ? this.#outCol + chunk.length : chunk.length - nl - 1;
  }

  /** Handles one envelope (root or sub-agent). Never throws. */
  onEnvelope(env: EventEnvelope): void {
    try {
      // Every string of the event was chosen by a model, a tool, an MCP server or a plugin:
      // sanitised here, the renderer's one boundary, before any styling (core/util/terminal_safe.ts).
      // Assistant text is kept raw until its block is rendered (see #text, #block).
      env = safeEnvelope(env);
      if (env.parent_id) this.#child(env);
      else this.#root(env);
    } catch {
      // A rendering problem must never end a turn.
    }
  }

  #root(env: EventEnvelope) {
    const ev = env.update;
    const s = this.s;
    const k = ev.sessionUpdate;
    if (k === "agent_message_chunk" || k === "tool_call" || k === "usage_update") {
      this.#replied = true;
    } else if (k === "agent_thought_chunk" && !ev._meta?.coyote) this.#replied = true;
    switch (ev.sessionUpdate) {
      case "turn_started":
        this.#replied = false;
        this.#turnStart = this.#now();
        this.#titles.clear();
        this.#label = "";
        this.#startSpinner();
        return;
      case "agent_message_chunk":
        if (ev.content.type === "text") this.#text(ev.content.text);
        this.#label = "";
        return;
      case "agent_thought_chunk": {
        this.#label = "thinking";
        const line = gateLine(ev._meta, s, this.o.width?.() ?? 80);
        if (line) {
          this.#statusLine(line);
          this.#lastCallLine = null;
        }
        return;
      }
      case "hook": {
        // A hook's decision (docs/hooks.md); a failed hook is already one line on stderr.
        const line = hookLine(ev, s);
        if (!line) return;
        this.#statusLine(line);
        this.#lastCallLine = null;
        return;
      }
      case "tool_call": {
        const title = safeLine(ev.title || ev.toolCallId);
        this.#titles.set(ev.toolCallId, title);
        this.#label = title;
        this.#statusLine(`${s.dim("•")} ${title}`);
        // Held lines are not the last line on screen, so they are never rewritten in place.
        this.#lastCallLine = this.#suspended ? null : ev.toolCallId;
        if (this.#suspended) this.#heldCall.set(ev.toolCallId, this.#held.length - 1);
        return;
      }
      case "tool_call_update": {
        if (ev.title) this.#titles.set(ev.toolCallId, safeLine(ev.title));
        const title = this.#titles.get(ev.toolCallId) ?? safeLine(ev.toolCallId);
        if (ev.status === "in_progress") this.#label = title;
        if (ev.status !== "completed" && ev.status !== "failed") return;
        const diffs = (ev.content ?? []).filter((c) => c.type === "diff");
        const tty = this.o.sameTerminal && this.o.spinner;
        // A call whose `•` line is still held (a prompt is on screen) gets its mark in place.
        const heldAt = this.#heldCall.get(ev.toolCallId);
        const markedHeld = tty && heldAt !== undefined && !!this.#suspended;
        if (markedHeld) {
          this.#heldCall.delete(ev.toolCallId);
          this.#held[heldAt] = [
            "err",
            `${ev.status === "failed" ? s.red("✗") : s.green("✓")} ${title}\n`,
          ];
        }
        // The call's `•` line is the last line written (a parallel batch or other output can come
        // between them; then the failure line names the call).
        const above = this.#lastCallLine === ev.toolCallId;
        const rewrite = above && tty && !this.#suspended;
        if (ev.status === "failed") {
          const c = (ev.content ?? []).find((c) => c.type === "content");
          const text = c && c.type === "content" && c.content.type === "text"
            ? c.content.text
            : "failed";
          const why = userFacingError(text);
          if (rewrite) {
            this.#hideSpinner();
            this.o.err(`\x1b[1A\r\x1b[K${s.red("✗")} ${title}\n`);
            this.#write("err", `  ${s.red(why)}\n`);
          } else this.#statusLine(`  ${s.red("✗")} ${above ? "" : `${title}: `}${why}`);
        } else if (rewrite) {
          this.#hideSpinner();
          this.o.err(`\x1b[1A\r\x1b[K${s.green("✓")} ${title}\n`);
        } else if (this.#prompted.has(ev.toolCallId) && !markedHeld) {
          this.#statusLine(`${s.green("✓")} ${title}`);
        }
        // An approved write: its prompt showed the diff already.
        if (this.#prompted.get(ev.toolCallId)) diffs.length = 0;
        this.#prompted.delete(ev.toolCallId);
        for (const d of diffs) {
          if (d.type !== "diff") continue;
          this.#endMessage();
          this.#write(
            "err",
            unifiedDiff(d, { color: this.o.color, cwd: this.o.cwd }),
          );
        }
        this.#label = "";
        return;
      }
      case "plan": {
        const key = JSON.stringify(ev.entries);
        if (key === this.#plan) return;
        this.#plan = key;
        const mark = (st: string) =>
          st === "completed" ? s.green("[x]") : st === "in_progress" ? s.yellow("[~]") : "[ ]";
        this.#statusLine(
          [s.bold("Plan"), ...ev.entries.map((e) => `  ${mark(e.status)} ${safeLine(e.content)}`)]
            .join("\n"),
        );
        return;
      }
      case "usage_update": {
        // The engine reports usage when a model request ends: the message it streamed is over,
        // so the next request's text (an automatic continuation) starts on its own line.
        this.#endMessage();
        this.context = { used: ev.used, size: ev.size };
        const c = (ev._meta as { compaction?: { turns: number; before: number; after: number } })
          ?.compaction;
        if (c) {
          this.#statusLine(
            s.dim(
              `context compacted: ${c.turns} earlier turn(s) summarised, ~${
                formatTokens(c.before)
              } → ~${formatTokens(c.after)} tokens`,
            ),
          );
        }
        return;
      }
      case "turn_ended": {
        this.#endMessage();
        this.#stopSpinner();
        if (ev.error) this.#statusLine(s.red(`coyote: ${ev.error.message}`));
        if (ev.stopReason === "cancelled") this.#statusLine(s.yellow("cancelled"));
        // A turn that failed before the model answered (server down, HTTP 401/404) has no
        // usage to show: the error line is all.
        if (this.o.footer !== false && (this.#replied || !ev.error)) {
          const ctx = this.context && this.context.size
            ? ` · context ${Math.round(100 * this.context.used / this.context.size)}%`
            : "";
          this.#statusLine(
            s.dim(
              `─ ${turnFooter(ev.usage, this.#now() - this.#turnStart, this.o.price?.())}${ctx}`,
            ),
          );
        }
        return;
      }
      default:
        return;
    }
  }

  #child(env: EventEnvelope) {
    const ev = env.update;
    const s = this.s;
    const id = env.agent_id;
    if (ev.sessionUpdate === "turn_started") {
      // Running: a line of its own under the spinner (terminal); one line when it ends.
      this.#children.set(id, { id: safeLine(id), start: this.#now(), action: "thinking" });
    } else if (ev.sessionUpdate === "tool_call") {
      const c = this.#children.get(id);
      if (c) c.action = safeLine(ev.title || ev.toolCallId);
    } else if (ev.sessionUpdate === "agent_thought_chunk") {
      const c = this.#children.get(id);
      if (c) c.action = "thinking";
    } else if (ev.sessionUpdate === "turn_ended") {
      const c = this.#children.get(id);
      this.#children.delete(id);
      const how = ev.error
        ? s.red(`failed: ${userFacingError(ev.error.message)}`)
        : ev.stopReason === "end_turn"
        ? s.green(ev.stopReason)
        : s.yellow(ev.stopReason);
      const ms = c ? this.#now() - c.start : 0;
      this.#statusLine(
        `${s.magenta("↳")} ${s.bold(safeLine(id))} ${how} ${
          s.dim(
            `(${ev.usage.requests} request(s), ${formatTokens(ev.usage.total_tokens)} tokens, ${
              formatDuration(ms)
            })`,
          )
        }`,
        true,
      );
    }
  }

  // ---- spinner ----

  #startSpinner() {
    if (!this.o.spinner || this.#spinTimer !== undefined) return;
    const timer = setInterval(() => this.#drawSpinner(), 100);
    Deno.unrefTimer(timer);
    this.#spinTimer = timer;
  }

  #stopSpinner() {
    if (this.#spinTimer !== undefined) clearInterval(this.#spinTimer);
    this.#spinTimer = undefined;
    this.#hideSpinner();
  }

  #drawSpinner() {
    if (this.#suspended || !this.#atLineStart) return;
    if (this.#messageOpen && !this.o.markdown && this.#outCol !== 0) return;
    const now = this.#now();
    const lines = statusLines({
      frame: SPIN[this.#spinFrame++ % SPIN.length],
      elapsedMs: now - this.#turnStart,
      label: this.#label,
      children: [...this.#children.values()],
      now,
      width: this.o.width?.() ?? 80,
      height: this.o.height?.() ?? 24,
    });
    const up = this.#spinRows > 1 ? `\x1b[${this.#spinRows - 1}A` : "";
    this.o.err(`${up}\r\x1b[J${lines.map((l) => this.s.dim(l)).join("\n")}`);
    this.#spinRows = lines.length;
  }

  /** Erases the status block, all its rows; the cursor is back where it started. */
  #hideSpinner() {
    if (!this.#spinRows) return;
    const up = this.#spinRows > 1 ? `\x1b[${this.#spinRows - 1}A` : "";
    this.#spinRows = 0;
    this.o.err(`${up}\r\x1b[J`);
  }

  /**
   * The spinner between turns (`/compact`): `label` and the time since this call, until `stop`
   * (which erases it and returns the elapsed ms). A terminal only (`spinner`); else nothing shows.
   */
  progress(label: string): { label(text: string): void; stop(): number } {
    const start = this.#now();
    this.#turnStart = start;
    this.#label = label;
    this.#atLineStart = true;
    this.#startSpinner();
    if (this.o.spinner) this.#drawSpinner();
    return {
      label: (text) => (this.#label = text),
      stop: () => {
        this.#stopSpinner();
        this.#label = "";
        return this.#now() - start;
      },
    };
  }

  /**
   * A prompt owns the terminal until {@link resume}: no spinner, and every line the stream
   * produces meanwhile (other agents go on running) is held back, in order. `about`: the
   * permission request the prompt shows — its call ends with a `✓` line of its own (the prompt
   * came between the call's `•` line and its end), and an approved write's diff, shown in the
   * prompt (./permission.ts), is not shown again.
   */
  suspend(about?: { toolCallId: string; verdicts: { access: { type: string } }[] }): void {
    if (about) {
      this.#prompted.set(about.toolCallId, about.verdicts.some((v) => v.access.type === "write"));
    }
    this.#endMessage();
    this.#hideSpinner();
    this.#suspended++;
    this.#lastCallLine = null;
  }

  /** Undoes one {@link suspend}; the last one writes what was held back. */
  resume(): void {
    if (this.#suspended) this.#suspended--;
    this.#atLineStart = true;
    if (this.#suspended) return;
    const held = this.#held;
    // A still-running call whose `•` line ends the held output can be marked in place later.
    const last = [...this.#heldCall].find(([, i]) => i === held.length - 1)?.[0] ?? null;
    this.#held = [];
    this.#heldCall.clear();
    for (const [stream, text] of held) this.#write(stream, text);
    if (held.length) this.#lastCallLine = last;
  }

  /** Stops the spinner for good and flushes buffered text (held text too). */
  close(): void {
    if (this.#suspended) {
      this.#suspended = 1;
      this.resume();
    }
    this.#endMessage();
    this.#stopSpinner();
  }
}
