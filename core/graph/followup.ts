/**
 * A graph agent's memory of its earlier runs in one session (issue 17: a graph child resumed by
 * `agent__send` keeps its context). A graph run starts from `start` over a fresh state each time;
 * a later `prompt` to the same session (a follow-up: `agent__send`, a second REPL prompt) is
 * given what the earlier runs did, as two state keys every node can read:
 *
 * - `followup` (string): "" on a session's first run; on a later one a text block naming each
 *   earlier run's request, the files it changed (paths relative to the graph's `cwd`, from its
 *   edit tools' diffs) and its result (the end node's output, or its error); this run's message
 *   is not repeated in it (it is `{{initial_prompt}}`). Safe in strict templates (`{{followup}}`
 *   always exists).
 * - `previous` (object | null): the last run, `{initial_prompt, output, error, changed_files,
 *   state}` (`state`: its final state without `followup`/`previous`); null on a first run.
 *
 * `{{initial_prompt}}` stays this run's own prompt (the follow-up message).
 * @module
 */
import { relative } from "../util/path.ts";
import type { SessionEvent } from "../protocol/types.ts";

/** One earlier run of the graph in this session. */
export interface EarlierRun {
  initial_prompt: string;
  /** The end node's output ("" when the run failed). */
  output: string;
  /** The run's error message, when it failed. */
  error?: string;
  /** Files its tools changed (relative to the graph's working directory), in first-change order. */
  changed_files: string[];
  /** Its final state (without `followup` and `previous`); absent when the run failed early. */
  state?: Record<string, unknown>;
}

/** At most this many characters of an earlier result go into `followup` (the rest is elided). */
export const FOLLOWUP_RESULT_CHARS = 8_000;

/** See the module doc. One per graph runner (a session's runner lives across its turns). */
export class RunMemory {
  readonly runs: EarlierRun[] = [];
  #changed = new Set<string>();

  constructor(readonly cwd: string) {}

  /** Starts a run: forgets the changes seen so far. */
  begin(): void {
    this.#changed = new Set();
  }

  /** Watches the run's events: an edit tool's diff names a changed file. */
  watch(ev: SessionEvent): void {
    if (ev.sessionUpdate !== "tool_call_update" || ev.status !== "completed") return;
    for (const c of ev.content ?? []) {
      if (c.type === "diff" && c.path) {
        const rel = relative(this.cwd, c.path);
        this.#changed.add(rel && !rel.startsWith("..") ? rel : c.path);
      }
    }
  }

  /** Ends a run: remembers it. */
  end(prompt: string, r: { output: string; error?: string; state?: Record<string, unknown> }) {
    const state = r.state ? { ...r.state } : undefined;
    if (state) {
      delete state.followup;
      delete state.previous;
    }
    this.runs.push({
      initial_prompt: prompt,
      output: r.output,
      ...(r.error ? { error: r.error } : {}),
      changed_files: [...this.#changed],
      ...(state ? { state: JSON.parse(JSON.stringify(state)) } : {}),
    });
  }

  /** The state keys of the next run (see the module doc). */
  variables(): { followup: string; previous: EarlierRun | null } {
    if (!this.runs.length) return { followup: "", previous: null };
    const parts = [
      `This is a follow-up: you already ran ${this.runs.length} time${
        this.runs.length > 1 ? "s" : ""
      } in this session. Continue from that work; do not start over.`,
    ];
    this.runs.forEach((r, i) => {
      const result = r.error ? `it failed: ${r.error}` : clip(r.output) || "(no output)";
      parts.push(
        `## Earlier run ${i + 1}\nRequest:\n${r.initial_prompt}\n\nFiles you changed: ${
          r.changed_files.length ? r.changed_files.join(", ") : "none"
        }\n\nYour result:\n${result}`,
      );
    });
    parts.push("## Now\nThe follow-up message is this run's request (`initial_prompt`).");
    return { followup: parts.join("\n\n") + "\n", previous: this.runs.at(-1)! };
  }
}

function clip(s: string): string {
  const t = s.trim();
  return t.length > FOLLOWUP_RESULT_CHARS
    ? `${t.slice(0, FOLLOWUP_RESULT_CHARS)}\n… (${
      t.length - FOLLOWUP_RESULT_CHARS
    } more characters)`
    : t;
}
