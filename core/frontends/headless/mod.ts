/**
 * One-shot and headless frontends: run one prompt as one turn and print it.
 *
 * Output formats (`--output-format`):
 * - `text` (default): the final answer on stdout; tool progress and warnings on stderr.
 * - `json`: only the final {@link ResultEvent} object on stdout.
 * - `stream-json`: one JSON object per line on stdout: first an {@link InitEvent}
 *   (`schema_version` {@link STREAM_SCHEMA_VERSION}), then one `session_update` line per
 *   event envelope (core/protocol/types.ts `EventEnvelope`: `session_id`, `agent`, `agent_id`,
 *   `parent_id?`, `seq`, `update`) — the root's and every sub-agent's, `turn_started` /
 *   `turn_ended` included — then the {@link ResultEvent}. Nothing else.
 *
 * Every format renders from the session's envelope stream: the result is the root's
 * `turn_ended` event.
 *
 * Guard `ask`: headless (`--headless`) denies at once and never touches the
 * terminal, even when stdin is a TTY. One-shot without `--headless` asks y/n on
 * stderr when stdin is a terminal, else denies like headless.
 *
 * Exit codes ({@link EXIT}): 0 success, 1 runtime failure, 2 usage/config error,
 * 3 turn limit reached (`max_turn_requests`), 4 budget reached (`max_budget`: `--max-budget-usd`,
 * `--max-budget-tokens`, config `budget:`; issue 18), 130 cancelled (SIGINT, SIGTERM or SIGHUP).
 * @module
 */
import type { AppOptions } from "../../config/app_options.ts";
import type {
  AgentRunSummary,
  CallScope,
  DeniedAction,
  EventEnvelope,
  HostFactory,
  PermissionResolver,
  PromptInput,
  TurnEndedEvent,
  TurnResult,
  TurnUsage,
} from "../../protocol/types.ts";
import type { UserQuestion } from "../../../sdk/mod.ts";
import { type AgentSession, closeRun, createSession, UsageError } from "../../session/runtime.ts";
import { costUsd, modelInfo } from "../../config/models.ts";
import { safeLine, safeText } from "../../util/terminal_safe.ts";
import { listStoredSessions, resolveSessionRef } from "../../transcript/store.ts";
// The renderer (npm `diff`, `marked`) loads at first use: json / stream-json runs never need it.
import type { Renderer } from "../render/terminal.ts";
// `--output-schema` (./output_schema.ts) loads only for runs that pass it.
import type { OutputSchema } from "./output_schema.ts";

/** Process exit codes (README "Exit codes"). */
export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  maxTurns: 3,
  maxBudget: 4,
  cancelled: 130,
} as const;

/**
 * `schema_version` of the stream-json `init` line and of every `result` object (json and
 * stream-json). 2: `session_update` lines carry the event envelope (`agent`, `agent_id`,
 * `parent_id`, `seq`) and `turn_started` / `turn_ended` events; `init` has `agent_id`;
 * `result` has `agents`.
 */
export const STREAM_SCHEMA_VERSION = 2;

export type OutputFormat = "text" | "json" | "stream-json";

/** First line of `stream-json`. */
export interface InitEvent {
  type: "init";
  schema_version: number;
  session_id: string;
  cwd: string;
  model: string;
  agent: string;
  /** The OS sandbox of the session's commands (docs/permissions.md "The OS sandbox"). */
  sandbox?: {
    mode: "auto" | "required" | "off";
    active: boolean;
    backend: string | null;
    auto_allow: boolean;
    reason: string;
  };
  /** The run's permission mode at start (core/policy/mode.ts; Claude Code's field name). */
  permissionMode: string;
  /** The root agent's `agent_id` (the one of its `session_update` lines). */
  agent_id: string;
}

/** One `stream-json` line between `init` and `result`: an event envelope. */
export interface SessionUpdateLine extends EventEnvelope {
  type: "session_update";
}

/**
 * Last line of `stream-json`; the only object of `json`.
 *
 * `stop_reason` is the ACP `StopReason` of the turn, or `null` when the run failed: before a turn
 * started (usage/config error, `error.code` `usage`) or on a runtime fault (provider error after
 * retries, stream cut, internal error; `exit_code` 1). A failed run always carries `error`, so a
 * script checking `stop_reason == "end_turn"` never mistakes a failure for success.
 */
export interface ResultEvent {
  type: "result";
  schema_version: number;
  stop_reason: string | null;
  usage: TurnUsage;
  /** Cost of `usage` in USD at the `models:` price of the model; null without a price. */
  cost_usd?: number | null;
  denied: DeniedAction[];
  session_id: string | null;
  text: string;
  is_error: boolean;
  exit_code: number;
  error?: { code: string; message: string };
  /** Sub-agents the turn ran (their usage is included in `usage`). */
  agents: AgentRunSummary[];
  /**
   * The workspace checkpoints the turn took before its first change (issue 18, docs/modes.md):
   * `coyote rewind SESSION --to ID` restores one. Empty when the turn changed nothing.
   */
  checkpoints: string[];
  /**
   * `--output-schema FILE`: the final answer parsed as JSON, validated against the schema (after
   * at most one repair turn; ./output_schema.ts). Absent when the flag is not given or the answer
   * could not be made to validate (then `error.code` is `output_schema`, exit code 1).
   */
  structured_output?: unknown;
  /** A coordinator's gates at the end (core/protocol/types.ts `GateOutcome`); else absent. */
  gates?: TurnResult["gates"];
}

export interface RunOptions {
  /** The request: text, or ACP content blocks (`-f IMAGE` attaches `image` blocks). */
  prompt: PromptInput;
  format: OutputFormat;
  /**
   * `--session X`: continue the stored session whose id is X (or starts with X, ≥ 8 chars, unique),
   * else the latest one named X; else start a new session named X.
   */
  sessionName?: string;
  /** `--continue`: continue the latest session of this working directory. */
  continueLatest?: boolean;
  /** `--output-schema FILE`, loaded (./output_schema.ts `loadOutputSchema`). */
  outputSchema?: OutputSchema;
}

/** The `result` of a run that failed before its turn started (no session, or a usage error). */
export function errorResult(exitCode: number, code: string, message: string): ResultEvent {
  return {
    type: "result",
    schema_version: STREAM_SCHEMA_VERSION,
    stop_reason: null,
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, requests: 0 },
    denied: [],
    session_id: null,
    text: "",
    is_error: true,
    exit_code: exitCode,
    error: { code, message },
    agents: [],
    checkpoints: [],
  };
}

/** Exit code for a finished turn. */
export function exitCodeFor(r: Pick<TurnResult, "stopReason" | "error">): number {
  if (r.stopReason === "cancelled") return EXIT.cancelled;
  if (r.error) return EXIT.failure;
  if (r.stopReason === "max_turn_requests") return EXIT.maxTurns;
  if (r.stopReason === "max_budget") return EXIT.maxBudget;
  return EXIT.ok;
}

const enc = new TextEncoder();
function writeAll(file: { writeSync(p: Uint8Array): number }, text: string) {
  const bytes = enc.encode(text);
  let off = 0;
  while (off < bytes.length) off += file.writeSync(bytes.subarray(off));
}
let stdoutGone = false;
/** Writes to stdout; a closed reader (`| head`) stops further output instead of failing the run. */
const out = (text: string) => {
  if (stdoutGone) return;
  try {
    writeAll(Deno.stdout, text);
  } catch (e) {
    if (e instanceof Deno.errors.BrokenPipe) stdoutGone = true;
    else throw e;
  }
};
const err = (text: string) => writeAll(Deno.stderr, text);

/**
 * One JSON line. U+0085, U+2028 and U+2029 are legal raw inside JSON strings, but line splitters
 * such as Python's `str.splitlines()` break lines there; escaped, every object is exactly one line
 * whatever the model or a tool printed.
 */
export function jsonLine(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u0085\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  ) + "\n";
}

/** Reads one line from the terminal (stdin); null at end of input. */
async function readTtyLine(signal: AbortSignal): Promise<string | null> {
  const buf = new Uint8Array(1);
  const bytes: number[] = [];
  const aborted = new Promise<null>((res) =>
    signal.addEventListener("abort", () => res(null), { once: true })
  );
  while (!signal.aborted) {
    const n = await Promise.race([Deno.stdin.read(buf), aborted]);
    if (signal.aborted) return null;
    if (n === null) return bytes.length ? new TextDecoder().decode(new Uint8Array(bytes)) : null;
    if (buf[0] === 10) break;
    bytes.push(buf[0]);
  }
  return new TextDecoder().decode(new Uint8Array(bytes)).replace(/\r$/, "");
}

/** Headless permission: every `ask` is denied at once (never a prompt, never a hang). */
export const denyAll: PermissionResolver = () => Promise.resolve("reject_once");

/**
 * One terminal question at a time: parallel sub-agents may ask together, and each prompt must
 * get its own answer.
 */
let ttyQueue: Promise<unknown> = Promise.resolve();
function oneAtATime<T>(f: () => Promise<T>): Promise<T> {
  const run = ttyQueue.then(f, f);
  ttyQueue = run.catch(() => {});
  return run;
}

/**
 * Terminal permission prompt on stderr, answered with one key (core/frontends/render/permission.ts);
 * "always" answers are saved for the project when the workspace is trusted.
 */
function terminalPermission(
  ui: { renderer?: Renderer; cwd: string; trusted: () => boolean; interrupt: () => void },
): PermissionResolver {
  return (req, signal) =>
    oneAtATime(async () => {
      if (signal.aborted) return "cancelled";
      const { answerLine, outcomeForKey, permissionText, rememberAnswer } = await import(
        "../render/permission.ts"
      );
      const { answerKey } = await import("../render/keys.ts");
      const { colorFor, terminalWidth } = await import("../render/style.ts");
      const color = colorFor(Deno.stderr.isTerminal());
      ui.renderer?.suspend(req);
      try {
        const trusted = ui.trusted();
        err(`\n${permissionText(req, { color, width: terminalWidth(), cwd: ui.cwd, trusted })}`);
        const outcome = await answerKey(outcomeForKey, signal);
        if (outcome === null || signal.aborted) {
          err("\n");
          return "cancelled";
        }
        err(answerLine(outcome, trusted));
        // Ctrl+C at a prompt is an interrupt of the run (exit 130), also when the prompt is a
        // sub-agent's (its "cancelled" alone would end only that child).
        if (outcome === "cancelled") ui.interrupt();
        const note = await rememberAnswer(req, outcome, { cwd: ui.cwd, trusted });
        if (note) err(`  ${safeText(note)}\n`);
        return outcome;
      } finally {
        ui.renderer?.resume();
      }
    });
}

/** `user__*` questions on the terminal, per call: a sub-agent's question names the sub-agent. */
function terminalHost(): HostFactory {
  return (scope) => ({
    askUser: (q, signal) => oneAtATime(() => askOnTty(q, signal, scope)),
  });
}

async function askOnTty(
  q: UserQuestion,
  signal: AbortSignal,
  scope: CallScope,
): Promise<string | string[] | boolean> {
  if (signal.aborted) throw new Error("cancelled");
  const opts = q.options?.length
    ? `\n${q.options.map((o, i) => `  ${i + 1}. ${safeLine(o)}`).join("\n")}`
    : "";
  const who = scope.depth > 0 ? `sub-agent ${safeLine(scope.agentId)} asks: ` : "";
  // The question is the model's (or a plugin's): shown escaped (core/util/terminal_safe.ts).
  err(`\n${who}${safeText(q.question)}${opts}\n> `);
  const line = (await readTtyLine(signal)) ?? "";
  const t = line.trim();
  if (q.action === "confirm") return /^y(es)?$/i.test(t) || (t === "" && q.default === true);
  const pick = (s: string) => {
    const n = Number(s);
    return q.options && Number.isInteger(n) && n >= 1 && n <= q.options.length
      ? q.options[n - 1]
      : s;
  };
  if (q.action === "checkbox") return t.split(",").map((s) => pick(s.trim())).filter(Boolean);
  if (q.action === "select") return pick(t);
  return t || (typeof q.default === "string" ? q.default : "");
}

/** The text-mode renderer for a session (stdout: answer; stderr: status, spinner on a terminal). */
async function textRenderer(
  session: AgentSession,
  ui: { renderer?: Renderer },
  answerToStderr = false,
): Promise<(env: EventEnvelope) => void> {
  const { createTerminalRenderer } = await import("../render/terminal.ts");
  const r = await createTerminalRenderer({
    // `--output-schema`: stdout is kept for the validated JSON alone.
    out: answerToStderr ? err : out,
    err,
    cwd: session.cwd,
    price: () => modelInfo(session.workspace.app.config, session.model).price,
  });
  ui.renderer = r;
  return (env) => r.onEnvelope(env);
}

function isUserError(e: unknown): boolean {
  const name = (e as Error)?.name;
  return e instanceof UsageError || name === "ConfigError" || name === "UsageError" ||
    name === "PolicyError";
}

/** `prompt` with `extra` appended to its text (a text block added to content blocks). */
function withText(prompt: PromptInput, extra: string): PromptInput {
  if (typeof prompt === "string") return prompt + extra;
  return [...prompt, { type: "text", text: extra.trimStart() }];
}

/** The sum of two turns' usage, field by field. */
function addUsage(a: TurnUsage, b: TurnUsage): TurnUsage {
  return {
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
    requests: a.requests + b.requests,
  };
}

/** Picks the stored session `--session NAME` / `--continue` refer to. */
export async function pickSession(
  app: AppOptions,
  o: Pick<RunOptions, "sessionName" | "continueLatest">,
): Promise<{ resumeId?: string; name?: string }> {
  if (o.sessionName !== undefined) {
    // An exact id, a unique 8+ char prefix or a name; a typo'd id is an error (core/transcript/store.ts).
    const r = resolveSessionRef(await listStoredSessions(app.dataDir), o.sessionName);
    return "id" in r ? { resumeId: r.id } : { name: r.name };
  }
  if (o.continueLatest) {
    // The latest conversation of this directory, not a sub-agent's transcript.
    const [latest] = (await listStoredSessions(app.dataDir, { cwd: app.cwd }))
      .filter((s) => !s.parent);
    if (!latest) throw new UsageError(`no earlier session for ${app.cwd} to continue`);
    return { resumeId: latest.id };
  }
  return {};
}

/**
 * Runs one prompt as one turn and prints it in `o.format`; returns the exit code.
 * Installs SIGINT/SIGTERM/SIGHUP handlers for the duration (a closed terminal or a dropped SSH
 * connection is a SIGHUP and behaves like SIGTERM): the turn is aborted (children killed by
 * their tools), the result is written, the transcript stays intact, exit 130.
 */
export async function runPrompt(app: AppOptions, o: RunOptions): Promise<number> {
  const interactive = !app.headless && Deno.stdin.isTerminal();
  const ctrl = new AbortController();
  let interrupts = 0;
  const onSignal = () => {
    interrupts++;
    if (interrupts > 1) Deno.exit(EXIT.cancelled);
    ctrl.abort(new Error("interrupted"));
  };
  const signals: Deno.Signal[] = Deno.build.os === "windows"
    ? ["SIGINT"]
    : ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const s of signals) Deno.addSignalListener(s, onSignal);
  // stdout carries only the answer / protocol lines: stray console output of any dependency goes to stderr.
  const saved = { log: console.log, info: console.info, debug: console.debug };
  console.log = console.info = console.debug = (...a: unknown[]) => console.error(...a);

  const emitResult = (r: ResultEvent) => {
    // Text mode streamed the answer already (core/frontends/render/).
    if (o.format !== "text") out(jsonLine(r));
  };

  let session: AgentSession | null = null;
  // Text mode renders the envelope stream (core/frontends/render/): streamed text, tool lines, diffs.
  const ui = {
    renderer: undefined as Renderer | undefined,
    cwd: app.cwd,
    trusted: () => false,
    interrupt: () => ctrl.abort(new Error("interrupted")),
  };
  try {
    let pick: { resumeId?: string; name?: string };
    try {
      pick = await pickSession(app, o);
      session = await createSession(app, {
        cwd: app.cwd,
        permission: interactive ? terminalPermission(ui) : denyAll,
        host: interactive ? terminalHost() : undefined,
        ...pick,
      });
    } catch (e) {
      const code = isUserError(e) ? EXIT.usage : EXIT.failure;
      err(`coyote: ${safeText((e as Error)?.message ?? String(e))}\n`);
      if (o.format !== "text") {
        emitResult(
          errorResult(
            code,
            code === EXIT.usage ? "usage" : "internal",
            (e as Error)?.message ?? String(e),
          ),
        );
      }
      return code;
    }

    const sid = session.id;
    const opened = session;
    ui.cwd = session.cwd;
    ui.trusted = () => opened.workspace.trust.trusted;
    if (o.format === "stream-json") {
      const init: InitEvent = {
        type: "init",
        schema_version: STREAM_SCHEMA_VERSION,
        session_id: sid,
        cwd: session.cwd,
        model: session.model,
        agent: session.agent,
        ...(session.sandbox
          ? {
            sandbox: {
              mode: session.sandbox.mode,
              active: session.sandbox.active,
              backend: session.sandbox.backend,
              auto_allow: session.mode === "auto", // docs/modes.md
              reason: session.sandbox.reason,
            },
          }
          : {}),
        permissionMode: session.mode,
        agent_id: session.agentId,
      };
      out(jsonLine(init));
    }
    // The result is the root's `turn_ended` event of this stream.
    let ended: TurnEndedEvent | null = null;
    const render = o.format === "stream-json"
      ? (env: EventEnvelope) => out(jsonLine({ type: "session_update", ...env }))
      : o.format === "text"
      ? await textRenderer(session, ui, !!o.outputSchema)
      : () => {};
    const onEvent = (env: EventEnvelope) => {
      if (env.update.sessionUpdate === "turn_ended" && env.session_id === sid) ended = env.update;
      render(env);
    };

    let result: TurnResult;
    let structured: { value: unknown } | undefined;
    try {
      const schema = o.outputSchema;
      const S = schema ? await import("./output_schema.ts") : undefined;
      // `coyote -p "/fix-issue 42"`: a custom command (or /init, /review) runs its prompt.
      let input = o.prompt;
      let overrides;
      if (typeof input === "string" && input.trimStart().startsWith("/")) {
        const { promptCommand } = await import("../slash/custom.ts");
        const cmd = await promptCommand(app, session, input, (l) => err(`${safeText(l)}\n`));
        for (const n of cmd?.notes ?? []) err(`coyote: ${safeText(n)}\n`);
        if (cmd) ({ prompt: input, overrides } = cmd);
      }
      await session.prompt(schema ? withText(input, S!.schemaInstruction(schema)) : input, {
        signal: ctrl.signal,
        onEvent,
        overrides,
      });
      if (!ended) throw new Error("the turn ended without a turn_ended event");
      result = ended;
      if (schema && !result.error && result.stopReason === "end_turn") {
        let check = await S!.checkAnswer(schema, result.text);
        if ("error" in check) {
          // One repair turn quoting the validation error (as the graph engine's llm nodes do).
          const first: TurnResult = result;
          ended = null;
          await session.prompt(S!.repairPrompt(check.error), { signal: ctrl.signal, onEvent });
          if (!ended) throw new Error("the turn ended without a turn_ended event");
          const again: TurnResult = ended;
          result = {
            ...again,
            usage: addUsage(first.usage, again.usage),
            denied: [...first.denied, ...again.denied],
            agents: [...(first.agents ?? []), ...(again.agents ?? [])],
            checkpoints: [...(first.checkpoints ?? []), ...(again.checkpoints ?? [])],
          };
          if (!result.error && result.stopReason === "end_turn") {
            check = await S!.checkAnswer(schema, result.text);
          }
        }
        if ("value" in check) structured = check;
        else if (!result.error && result.stopReason === "end_turn") {
          result = {
            ...result,
            error: {
              code: "output_schema",
              message: `the answer does not match --output-schema ${schema.path} ` +
                `after one repair turn: ${check.error}`,
            },
          };
        }
      }
    } catch (e) {
      // An engine bug: report it as a runtime failure, never a stack trace on stdout.
      err(`coyote: internal error: ${(e as Error)?.stack ?? String(e)}\n`);
      result = {
        stopReason: "end_turn",
        usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, requests: 0 },
        denied: [],
        text: "",
        error: { code: "internal", message: (e as Error)?.message ?? String(e) },
      };
    }
    ui.renderer?.close();
    const code = exitCodeFor(result);
    // Cost at the `models:` price of the session's model (undefined without a price).
    const cost = session
      ? costUsd(result.usage, modelInfo(app.config, session.model).price)
      : undefined;
    // json/stream-json: the failure on stderr too, for people reading a CI log (text mode's
    // renderer printed it as `coyote: …`; an internal error was printed above with its stack).
    if (o.format !== "text" && result.error && result.error.code !== "internal") {
      err(`coyote: ${safeText(result.error.message)}\n`);
    }
    if (result.stopReason === "cancelled" && o.format !== "text") err("coyote: cancelled\n");
    else if (result.stopReason === "max_turn_requests") {
      const n = result.usage.requests;
      err(`coyote: stopped after ${n} model request${n === 1 ? "" : "s"} (--max-turns)\n`);
    } else if (result.stopReason === "max_budget") {
      err(
        `coyote: budget reached after ${result.usage.total_tokens} tokens${
          cost === undefined ? "" : ` ($${cost.toFixed(4)})`
        } (--max-budget-usd / --max-budget-tokens)\n`,
      );
    }
    if (o.format === "text" && result.denied.length) {
      err(`coyote: ${result.denied.length} action(s) denied${app.headless ? " (headless)" : ""}\n`);
    }
    // A run the model never answered (server down, HTTP 401/404) leaves no stored session.
    const kept = await closeRun(app, session, pick.resumeId !== undefined);
    // Text mode: the id on stderr, so `--session ID` can find this conversation again.
    if (o.format === "text" && kept) {
      // A session run by name (`--session mywork`) is continued by that name.
      const name = o.sessionName !== undefined && !sid.startsWith(o.sessionName)
        ? o.sessionName
        : undefined;
      const ref = name === undefined
        ? sid.slice(0, 8)
        : /^[\w.@:+-]+$/.test(name)
        ? name
        : `'${name.replace(/'/g, `'\\''`)}'`;
      err(`coyote: session ${sid} (continue with --session ${ref})\n`);
    }
    emitResult({
      type: "result",
      schema_version: STREAM_SCHEMA_VERSION,
      // A runtime fault is not a stop reason: null, with `error` saying what failed.
      stop_reason: code === EXIT.failure ? null : result.stopReason,
      usage: result.usage,
      cost_usd: cost ?? null,
      denied: result.denied,
      session_id: sid,
      text: result.text,
      is_error: code !== EXIT.ok,
      exit_code: code,
      ...(result.error ? { error: result.error } : {}),
      agents: result.agents ?? [],
      checkpoints: result.checkpoints ?? [],
      ...(structured ? { structured_output: structured.value } : {}),
      ...(result.gates ? { gates: result.gates } : {}),
    });
    // Text mode with --output-schema: stdout is the validated JSON alone.
    if (o.format === "text" && structured) out(`${JSON.stringify(structured.value)}\n`);
    return code;
  } finally {
    for (const s of signals) Deno.removeSignalListener(s, onSignal);
    Object.assign(console, saved);
    await session?.close().catch(() => {});
  }
}
