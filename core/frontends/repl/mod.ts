/**
 * The interactive REPL (`coyote` with no prompt on a terminal): the third frontend, a view of
 * the session's event envelope stream rendered by core/frontends/render/ exactly like one-shot text mode.
 *
 * - Line editing, history and completion: Node's built-in `node:readline` (runs under Deno and
 *   in the compiled binary). History per workspace (core/frontends/repl/input.ts). Multi-line input: a
 *   trailing `\`, Alt+Enter, or a paste (lines arriving within {@link PASTE_MS} of each other
 *   are one entry).
 * - Slash commands: the shared list of core/frontends/slash_commands.ts, also as `.name` (core/frontends/repl/commands.ts),
 *   and the custom commands (core/frontends/slash/custom.ts; Tab completes them too);
 *   an unknown `/name` gets a note with a did-you-mean and is not sent to the model.
 *   `!cmd` runs a shell command through the guard (deny rules hold) in the session's OS sandbox
 *   (core/frontends/repl/shell.ts).
 * - Keys: Ctrl+C cancels the running turn (its tools and sub-agents end with it) and keeps the
 *   REPL; at the prompt it clears the line, and a second Ctrl+C within 2 s on an empty prompt
 *   exits; Ctrl+D on an empty line exits.
 * - Permission prompts take one key (core/frontends/render/permission.ts); sub-agent questions name the
 *   asking agent.
 * @module
 */
import process from "node:process";
import * as readline from "node:readline";
import { Writable } from "node:stream";
import type { AppOptions } from "../../config/app_options.ts";
import type { HostServices, UserQuestion } from "../../../sdk/mod.ts";
import type {
  CallScope,
  EventEnvelope,
  PermissionOutcome,
  PermissionRequest,
  PromptInput,
} from "../../protocol/types.ts";
import type { AgentSession, TurnOverrides } from "../../session/types.ts";
import { modelInfo } from "../../config/models.ts";
import { BUILTIN_COMMANDS, unknownCommandNote } from "../slash_commands.ts";
// The renderer, the permission prompt and the commands load with the session (after the prompt
// is on screen): literal dynamic imports, compile-ready.
import type { Renderer } from "../render/terminal.ts";
import { colorFor, styles, terminalWidth } from "../render/style.ts";
import { KeyHandoff } from "../render/keys.ts";
import { hasControls, safeLine, safeText } from "../../util/terminal_safe.ts";
import { err, out, type ReplContext, writeAll } from "./context.ts";
import { shell } from "./shell.ts";
import { ModeKeys } from "./modes.ts";
import {
  appendHistory,
  attachmentLine,
  complete,
  historyPath,
  loadHistory,
  MultiLine,
  withMentions,
} from "./input.ts";

/** Lines closer together than this (ms) are one pasted entry. */
export const PASTE_MS = 12;
/** A second Ctrl+C at an empty prompt within this many ms exits. */
export const EXIT_WINDOW_MS = 2000;

/** Options for {@link runRepl}. */
export interface ReplOptions {
  sessionName?: string;
  continueLatest?: boolean;
}

/** Runs the REPL until `/exit`, Ctrl+D or a double Ctrl+C; returns the exit code. */
export async function runRepl(app: AppOptions, o: ReplOptions = {}): Promise<number> {
  const s = styles(colorFor(Deno.stdout.isTerminal()));
  // stdout is the terminal; a dependency's console.log goes to stderr like in text mode.
  const saved = { log: console.log, info: console.info, debug: console.debug };
  console.log = console.info = console.debug = (...a: unknown[]) => console.error(...a);

  // node:readline writes through this stream: muted while a turn or a key prompt owns the screen.
  let muted = false;
  const rlOut = new Writable({
    write(chunk, _enc, cb) {
      if (!muted) writeAll(Deno.stdout, chunk as Uint8Array);
      cb();
    },
  });
  Object.defineProperty(rlOut, "columns", { get: () => terminalWidth() });
  Object.defineProperty(rlOut, "isTTY", { value: true });

  let trustedOverride = false;
  let session!: AgentSession;
  let renderer!: Renderer;
  let turn: AbortController | null = null;
  let lineWaiter: ((line: string) => void) | null = null;
  let exiting = false;
  let resolveDone!: (code: number) => void;
  const done = new Promise<number>((r) => (resolveDone = r));
  const exit = (code = 0) => {
    if (exiting) return;
    exiting = true;
    turn?.abort(new Error("exit"));
    resolveDone(code);
  };
  const usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, requests: 0 };

  // Permission prompts and questions one at a time (parallel calls and sub-agents ask too).
  let dialog: Promise<unknown> = Promise.resolve();
  const serial = <T>(f: () => Promise<T>): Promise<T> => {
    const next = dialog.then(f, f);
    dialog = next.catch(() => {});
    return next;
  };

  // One-key prompts and pickers: the keys of one read are handed over in order (../render/keys.ts).
  const keys = new KeyHandoff();
  const waitKey = (signal: AbortSignal) => keys.next(signal);

  const permission = (req: PermissionRequest, signal: AbortSignal) =>
    serial(async (): Promise<PermissionOutcome> => {
      if (signal.aborted) return "cancelled";
      const { answerLine, outcomeForKey, permissionText, rememberAnswer } = await import(
        "../render/permission.ts"
      );
      renderer.suspend(req);
      const trusted = trustedOverride || session.workspace.trust.trusted;
      try {
        err(
          `\n${
            permissionText(req, {
              color: colorFor(Deno.stderr.isTerminal()),
              width: terminalWidth(),
              cwd: session.cwd,
              trusted,
            })
          }`,
        );
        let outcome: PermissionOutcome | null = null;
        while (!outcome) {
          const key = await waitKey(signal);
          if (key === null) {
            err("\n");
            return "cancelled";
          }
          outcome = outcomeForKey(key);
        }
        err(answerLine(outcome, trusted));
        const note = await rememberAnswer(req, outcome, { cwd: session.cwd, trusted });
        if (note) err(s.dim(`  ${safeText(note)}\n`));
        return outcome;
      } finally {
        renderer.resume();
      }
    });

  const ask = (q: UserQuestion, signal: AbortSignal, scope?: CallScope) =>
    serial(async () => {
      renderer.suspend();
      const who = scope && scope.depth > 0 ? `${s.bold(safeLine(scope.agentId))} asks: ` : "";
      const opts = q.options?.length
        ? `\n${q.options.map((x, i) => `  ${i + 1}. ${safeLine(x)}`).join("\n")}`
        : "";
      err(`\n${s.cyan("?")} ${who}${safeText(q.question)}${opts}\n`);
      const line = await new Promise<string>((res) => {
        const onAbort = () => {
          lineWaiter = null;
          res("");
        };
        signal.addEventListener("abort", onAbort, { once: true });
        lineWaiter = (l) => {
          signal.removeEventListener("abort", onAbort);
          res(l);
        };
        muted = false;
        rl.setPrompt("answer› ");
        rl.prompt();
      });
      muted = true;
      rl.setPrompt(modePrompt());
      renderer.resume();
      const t = line.trim();
      if (q.action === "confirm") return /^y(es)?$/i.test(t) || (t === "" && q.default === true);
      const pick = (x: string) => {
        const n = Number(x);
        return q.options && Number.isInteger(n) && n >= 1 && n <= q.options.length
          ? q.options[n - 1]
          : x;
      };
      if (q.action === "checkbox") return t.split(",").map((x) => pick(x.trim())).filter(Boolean);
      if (q.action === "select") return pick(t);
      return t || (typeof q.default === "string" ? q.default : "");
    });
  const host = (scope: CallScope): HostServices => ({
    askUser: (q, signal) => ask(q, signal, scope),
  });

  // Warnings that arrive while the prompt is idle on screen (the workspace opens in the
  // background: an untrusted-workspace note, an MCP server that failed to start) clear the
  // prompt line, print, and redraw the prompt with what was typed so far.
  let promptShown = false;
  const log = (raw: string) => {
    const line = safeText(raw);
    if (promptShown && !muted && !exiting) {
      err(`\r\x1b[2K${line}\n`);
      rl.prompt(true);
    } else err(`${line}\n`);
  };
  /** Sessions opened from a stored one: always kept (a fresh one without a reply is not). */
  const resumedIds = new Set<string>();
  const closeRun = async (sess: AgentSession) =>
    (await import("../../session/runtime.ts")).closeRun(app, sess, resumedIds.has(sess.id));
  const open = async (init: { resumeId?: string; name?: string }) => {
    const { createSession } = await import("../../session/runtime.ts");
    // A prompt does not wait for MCP servers still starting (core/session/mcp_startup.ts).
    const next = await createSession(app, {
      cwd: app.cwd,
      permission,
      host,
      log,
      mcpStartup: "background",
      ...init,
    });
    const sess = next;
    if (init.resumeId) resumedIds.add(sess.id);
    const { createTerminalRenderer } = await import("../render/terminal.ts");
    renderer = await createTerminalRenderer({
      out,
      err,
      cwd: sess.cwd,
      price: () => modelInfo(app.config, sess.model).price,
    });
    return next;
  };

  // The session (workspace: plugins, MCP, sandbox probe) opens in the background: the prompt is
  // ready for typing at once, and the first entry waits for it.
  let started = false;
  /** Names of the custom commands (Tab completion), once loaded. */
  let customNames: string[] = [];
  const ready: Promise<boolean> = (async () => {
    try {
      const { pickSession } = await import("../headless/mod.ts");
      session = await open(await pickSession(app, o));
      started = true;
      const { customCommands } = await import("../slash/custom.ts");
      void customCommands(app, session, log).then((l) => (customNames = l.map((c) => c.name)));
      return true;
    } catch (e) {
      muted = true;
      err(`\ncoyote: ${safeText((e as Error)?.message ?? String(e))}\n`);
      const name = (e as Error)?.name;
      exit(name === "UsageError" || name === "ConfigError" || name === "PolicyError" ? 2 : 1);
      return false;
    }
  })();

  const histFile = await historyPath(app.dataDir, app.cwd);
  const PROMPT = s.bold(s.cyan("› "));
  // The permission mode shows in the prompt, Shift+Tab cycles it (./modes.ts).
  const modes = new ModeKeys(s);
  const modePrompt = () => modes.prompt(started ? session.mode : app.mode, PROMPT);
  const CONT = s.dim("… ");
  const rl = readline.createInterface({
    input: process.stdin,
    output: rlOut,
    terminal: true,
    history: loadHistory(histFile),
    historySize: 1000,
    // A lone Esc (interrupt) is told from an escape sequence after this long (Node's default, 500
    // ms, made Esc feel ignored); terminals send a sequence's bytes together.
    escapeCodeTimeout: 50,
    removeHistoryDuplicates: true,
    prompt: PROMPT,
    // Candidates (file names, skill and agent names) are printed by readline as they are: one
    // holding a control character (a cloned repository's file name) is not offered.
    completer: (line: string) =>
      safeCompletions(complete(line, {
        cwd: app.cwd,
        commands: () => [...BUILTIN_COMMANDS.map((c) => c.name), ...customNames],
        agents: () => started ? session.workspace.agents.names() : [],
        skills: () => started ? session.workspace.skills.map((k) => k.name) : [],
        models: () => [
          ...new Set([
            ...(started ? [session.model] : []),
            ...Object.keys(app.config?.models ?? {}),
          ]),
        ],
      })),
  });
  const rlAny = rl as unknown as { line: string; cursor: number; prevRows: number };
  // A resized terminal reflows the wrapped input line (tmux, iTerm2, GNOME Terminal, kitty), but
  // readline redraws it from where it left the cursor at the old width, leaving rows of the old
  // line behind (issue 20). On SIGWINCH: where the cursor is now, in rows below the prompt's row,
  // then readline's own redraw (the `resize` event its TTY output would emit).
  const onResize = () => {
    if (muted || exiting) return;
    const cols = Math.max(1, terminalWidth());
    const promptCols = 2; // "› " and "… " are both two columns wide
    rlAny.prevRows = Math.floor((promptCols + rlAny.cursor) / cols);
    rlOut.emit("resize");
  };
  try {
    Deno.addSignalListener("SIGWINCH", onResize);
  } catch { /* no SIGWINCH (Windows) */ }
  const clearLine = () => {
    rlAny.line = "";
    rlAny.cursor = 0;
  };

  const ml = new MultiLine();
  let pasteTimer: ReturnType<typeof setTimeout> | undefined;
  let pending: string[] = [];
  let altEnter = false;
  const queue: string[] = [];
  let busy = false;
  let lastCtrlC = 0;

  const showPrompt = () => {
    if (exiting) return;
    muted = false;
    rl.setPrompt(ml.continuing ? CONT : modePrompt());
    rl.prompt(true);
    promptShown = true;
  };

  const runTurn = async (input: PromptInput, overrides?: TurnOverrides) => {
    const ctrl = new AbortController();
    turn = ctrl;
    muted = true;
    try {
      const r = await session.prompt(input, {
        overrides,
        signal: ctrl.signal,
        onEvent: (env: EventEnvelope) => renderer.onEnvelope(env),
      });
      modes.turnEnded(session, r.stopReason);
      usage.prompt_tokens += r.usage.prompt_tokens;
      usage.completion_tokens += r.usage.completion_tokens;
      usage.total_tokens += r.usage.total_tokens;
      usage.requests += r.usage.requests;
    } catch (e) {
      err(s.red(`coyote: ${safeText(String((e as Error)?.message ?? e))}\n`));
    } finally {
      renderer.close();
      turn = null;
    }
  };

  /** Shows a mode switch's lines above the prompt and redraws it with the new mode. */
  const modeSwitched = (lines: string[]) => {
    renderer.suspend();
    err(`\r\x1b[2K${lines.join("\n")}\n`);
    renderer.resume();
    if (!muted) showPrompt();
  };
  const ctx: ReplContext = {
    modeChanged: (before) => modeSwitched(modes.changed(session, before)),
    app,
    get session() {
      return session;
    },
    // Slash-command output lists what MCP servers, skills, plugins and transcripts chose (names,
    // descriptions, titles) and carries no styling of ours: sanitised whole.
    say: (t) => out(safeText(t.endsWith("\n") ? t : t + "\n")),
    async replaceSession(init) {
      const old = session;
      session = await open(init);
      await closeRun(old);
    },
    runTurn,
    readKey: async () => {
      const key = await waitKey(new AbortController().signal);
      // readline saw the key too (a digit, `j`, an arrow's history recall): not a line to keep.
      setTimeout(clearLine, 0);
      return key;
    },
    write: (t) => err(t),
    async withTerminal(f) {
      rl.pause();
      const stdin = process.stdin as unknown as { setRawMode?: (on: boolean) => void };
      stdin.setRawMode?.(false);
      try {
        return await f();
      } finally {
        stdin.setRawMode?.(true);
        rl.resume();
      }
    },
    trusted: () => trustedOverride || session.workspace.trust.trusted,
    trustNow: () => (trustedOverride = true),
    exit: () => exit(0),
    usage,
    get renderer() {
      return renderer;
    },
  };

  const submit = async (entry: string) => {
    const text = entry.trim();
    const plan = modes.take();
    if (!text && plan && (await ready)) return await runTurn(plan);
    if (!text) return;
    appendHistory(histFile, entry);
    if (!(await ready)) return;
    if (text.startsWith("!")) {
      muted = true;
      await shell(ctx, text.slice(1).trim());
      return;
    }
    const m = /^([/.])([A-Za-z][\w:-]*)(?:\s+([\s\S]*))?$/.exec(text);
    if (m && (m[1] === "/" || BUILTIN_COMMANDS.some((c) => c.name === m[2]))) {
      muted = true;
      const { runCommand } = await import("./commands.ts");
      const handled = await runCommand(ctx, m[2], (m[3] ?? "").trim());
      if (handled) return;
      // A mistyped `/command` is not sent to the model (a paid turn the user did not ask for).
      if (m[1] === "/") {
        const { commandList } = await import("./commands.ts");
        const names = (await commandList(ctx)).map((c) => c.name);
        err(s.yellow(`${safeText(unknownCommandNote(m[2], names))}\n`));
        return;
      }
    }
    const { blocks, notes, attached } = withMentions(entry, session.cwd);
    for (const a of attached) err(s.dim(`  ⎿ ${safeText(attachmentLine(a))}\n`));
    for (const n of notes) err(s.yellow(`  ⎿ ${safeText(n)}\n`));
    await runTurn(blocks.length > 1 ? blocks : entry);
  };

  const pump = async () => {
    if (busy) return;
    busy = true;
    try {
      while (queue.length && !exiting) await submit(queue.shift()!);
    } finally {
      busy = false;
    }
    showPrompt();
  };

  // node:readline keeps each line of a multi-line entry as its own history item, so Up recalled
  // only the last one: once the entry is whole, its lines (the newest items) become one item.
  let entryLines: string[] = [];
  const keepWhole = (entry: string) => {
    const lines = entryLines;
    entryLines = [];
    const h = (rl as unknown as { history?: string[] }).history;
    if (lines.length < 2 || !Array.isArray(h)) return;
    for (const l of lines.reverse()) if (h[0] === l) h.shift();
    const older = h.indexOf(entry);
    if (older >= 0) h.splice(older, 1);
    h.unshift(entry);
  };

  const flushPending = () => {
    pasteTimer = undefined;
    const lines = pending;
    pending = [];
    lines.forEach((l, i) => {
      entryLines.push(l);
      const entry = ml.push(l, i < lines.length - 1);
      if (entry !== null) {
        keepWhole(entry);
        queue.push(entry);
      }
    });
    if (queue.length) void pump();
    else showPrompt();
  };

  rl.on("line", (line: string) => {
    if (lineWaiter) {
      const w = lineWaiter;
      lineWaiter = null;
      w(line);
      return;
    }
    if (keys.active || (busy && !line)) return;
    if (altEnter) {
      altEnter = false;
      entryLines.push(line);
      ml.push(line, true);
      showPrompt();
      return;
    }
    pending.push(line);
    if (pasteTimer !== undefined) clearTimeout(pasteTimer);
    pasteTimer = setTimeout(flushPending, PASTE_MS);
  });

  process.stdin.on(
    "keypress",
    (
      str: string | undefined,
      key: { sequence?: string; name?: string; meta?: boolean; ctrl?: boolean; shift?: boolean },
    ) => {
      if (keys.offer(key?.sequence ?? str ?? "")) return clearLine();
      if (key?.name === "tab" && key.shift && started && !lineWaiter) {
        modeSwitched(modes.cycle(session));
        return;
      }
      if (key?.name === "escape" && turn) {
        // Esc interrupts the running turn, as in Claude Code and Codex; what streamed stays on
        // screen and in the conversation ("[interrupted: cancelled]", core/engine/loop.ts).
        interruptTurn("Esc (interrupted)");
        return;
      }
      if (key?.meta && (key.name === "return" || key.name === "enter")) {
        // Alt+Enter: the line continues (readline submits it on our write of a return).
        altEnter = true;
        rl.write("\r");
      }
    },
  );

  /** Ctrl+C or Esc during a turn: cancel it (the partial answer is kept). */
  const interruptTurn = (label: string) => {
    if (!turn) return;
    // Through the renderer, so the spinner line is cleared first (it stayed on screen, "^C"
    // appended, above the turn's end).
    renderer.suspend();
    err(s.yellow(`${label}\n`));
    renderer.resume();
    turn.abort(new Error("interrupted"));
  };

  rl.on("SIGINT", () => {
    if (turn) return interruptTurn("^C");
    if (lineWaiter) {
      const w = lineWaiter;
      lineWaiter = null;
      w("");
      return;
    }
    const now = Date.now();
    if (!rlAny.line && !ml.continuing && now - lastCtrlC < EXIT_WINDOW_MS) {
      out("\n");
      exit(0);
      return;
    }
    lastCtrlC = now;
    const hadText = !!rlAny.line || ml.continuing;
    clearLine();
    ml.reset();
    entryLines = [];
    out("^C\n");
    if (!hadText) err(s.dim("(Ctrl+C again to exit, or Ctrl+D)\n"));
    if (!busy) showPrompt();
  });

  rl.on("close", () => {
    if (!exiting) out("\n");
    exit(0);
  });

  // A SIGINT/SIGTERM from outside (kill) cancels the turn or ends the REPL.
  const onSignal = () => (turn ? turn.abort(new Error("interrupted")) : exit(130));
  const signals: Deno.Signal[] = ["SIGTERM", "SIGHUP"];
  for (const sig of signals) Deno.addSignalListener(sig, onSignal);

  // A flag only the opened session can check (`-a NAME`, `--agent-variable`: the agents load with
  // the workspace) is a usage error before anything is shown (README "Exit codes"): wait for it.
  if (app.agent !== undefined || Object.keys(app.agentVariables ?? {}).length) await ready;
  // A session that already failed to open (its error is on screen, exit is on its way) gets no
  // welcome banner after the error.
  if (!muted) {
    err(s.dim(`coyote · ${app.cwd}\n/help for commands, Ctrl+C cancels, Ctrl+D exits\n`));
    showPrompt();
  }

  const code = await done;
  for (const sig of signals) Deno.removeSignalListener(sig, onSignal);
  try {
    Deno.removeSignalListener("SIGWINCH", onResize);
  } catch { /* never added */ }
  await dialog.catch(() => {});
  rl.close();
  process.stdin.pause?.();
  Object.assign(console, saved);
  // A session the model never answered (server down, HTTP 401/404) is not kept (runtime.ts).
  if (await ready && await closeRun(session)) {
    err(s.dim(`session ${session.id} (continue with --session ${session.id.slice(0, 8)})\n`));
  }
  return code;
}

/** Completion candidates without those holding a control character (see the completer). */
function safeCompletions([cands, sub]: [string[], string]): [string[], string] {
  return [cands.filter((c) => !hasControls(c)), sub];
}
