/**
 * Client-side host services of an ACP session (`HostServices` of `sdk/mod.ts`), per the
 * capabilities the client offered in `initialize`:
 * - `fs.readTextFile` / `fs.writeTextFile` → `fs/read_text_file` / `fs/write_text_file`
 *   (unsaved editor buffers are seen; a read error counts as "not found" when it is
 *   `-32002`, says so, or the file is absent from the disk);
 * - `terminal` → `execute_command` runs in a client terminal (`terminal/create`, embedded in
 *   the tool call, killed on timeout/cancel, always released);
 * - `askUser` → `user__*` questions (see `./questions.ts`).
 * A pending `fs/*` or `terminal/create` request is withdrawn with `$/cancel_request` when the
 * turn is cancelled ({@link cancelWithTurn}).
 * @module
 */
import type { HostServices } from "../../../sdk/mod.ts";
import type { CallScope } from "../../protocol/types.ts";
import { type AcpPeer, errText, type SessionHolder, within } from "./peer.ts";
import { askUser } from "./questions.ts";

/** The SDK's client-terminal host service (`HostServices.runInTerminal`). */
type RunInTerminal = NonNullable<HostServices["runInTerminal"]>;

/**
 * Host services of one tool call (`scope`) of a session, routed through the client where it
 * offers them: the terminal is embedded in that call, a question is asked about it.
 */
export function hostServices(
  peer: AcpPeer,
  holder: SessionHolder,
  scope: CallScope,
): HostServices {
  const caps = peer.clientCaps;
  const host: HostServices = {};
  const sid = () => {
    const l = holder.get();
    if (!l) throw new Error("session is not open");
    return l.session.id;
  };
  if (caps.fs?.readTextFile) {
    host.readTextFile = async (path) => {
      try {
        const r = await peer.client.request(
          "fs/read_text_file",
          { sessionId: sid(), path },
          cancelWithTurn(holder),
        );
        return r.content;
      } catch (e) {
        if (isCancelled(e)) throw e;
        const msg = errText(e);
        const code = (e as { code?: number }).code;
        if (code === -32002 || /not found|no such file|ENOENT|does not exist/i.test(msg)) {
          throw new Deno.errors.NotFound(`${path}: ${msg}`);
        }
        // Editors word "missing" differently (or not at all): a file absent from the disk
        // is not found, so fs_write can create it (its diff then has oldText null).
        if (await missingOnDisk(path)) throw new Deno.errors.NotFound(`${path}: ${msg}`);
        throw new Error(`${path}: the editor could not read the file: ${msg}`);
      }
    };
  }
  if (caps.fs?.writeTextFile) {
    host.writeTextFile = async (path, content) => {
      const dir = path.replace(/\/[^/]*$/, "");
      if (dir && dir !== path) await Deno.mkdir(dir, { recursive: true }).catch(() => {});
      await peer.client.request(
        "fs/write_text_file",
        { sessionId: sid(), path, content },
        cancelWithTurn(holder),
      );
    };
  }
  if (caps.terminal) {
    host.runInTerminal = (command, opts) => runInTerminal(peer, holder, scope, command, opts);
  }
  host.askUser = (q, signal) => askUser(peer, holder, q, signal, scope);
  return host;
}

async function runInTerminal(
  peer: AcpPeer,
  holder: SessionHolder,
  scope: CallScope,
  command: string,
  opts: Parameters<RunInTerminal>[1],
): ReturnType<RunInTerminal> {
  const live = holder.get();
  if (!live) throw new Error("session is not open");
  const sessionId = live.session.id;
  const term = await peer.client.createTerminal({
    sessionId,
    command: "/bin/sh",
    args: ["-c", command],
    cwd: opts.cwd,
    outputByteLimit: opts.outputByteLimit ?? 1_000_000,
  }, cancelWithTurn(holder));
  try {
    // The terminal is embedded in the call that runs it; a sub-agent's calls are not shown to
    // the client as tool calls of their own, so its terminals are not embedded.
    const callId = scope.depth === 0 ? opts.toolCallId ?? scope.toolCallId : undefined;
    if (callId) {
      live.terminalCalls.set(callId, term.id);
      await peer.notify(sessionId, {
        sessionUpdate: "tool_call_update",
        toolCallId: callId,
        content: [{ type: "terminal", terminalId: term.id }],
      });
    }
    let killed: string | null = null;
    const exit = term.waitForExit();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort = () => {};
    const stopped = new Promise<"abort" | "timeout">((resolve) => {
      onAbort = () => resolve("abort");
      if (opts.signal.aborted) resolve("abort");
      opts.signal.addEventListener("abort", onAbort, { once: true });
      if (opts.timeoutMs && opts.timeoutMs > 0) {
        timer = setTimeout(() => resolve("timeout"), opts.timeoutMs);
      }
    });
    const first = await Promise.race([exit.then(() => "exit" as const), stopped]);
    clearTimeout(timer);
    opts.signal.removeEventListener("abort", onAbort);
    if (first !== "exit") {
      killed = first === "timeout" ? "SIGTERM (timeout)" : "SIGTERM (cancelled)";
      // A client that holds these after a cancel does not hold the turn (at most 1 s each).
      await within(term.kill().catch(() => {}), 1000);
      await Promise.race([
        exit.catch(() => {}),
        // Short enough that the terminal is released within the engine's cancel grace.
        new Promise((r) => (timer = setTimeout(r, 1000))),
      ]);
      clearTimeout(timer);
    }
    const status = await Promise.race([
      exit,
      new Promise<null>((r) => setTimeout(() => r(null), 10)),
    ]).catch(() => null);
    const output = term.currentOutput();
    const out = killed
      ? await Promise.race([
        output,
        new Promise<{ output: string; truncated: boolean; exitStatus?: null }>((r) =>
          setTimeout(() => r({ output: "", truncated: false }), 1000)
        ),
      ]).catch(() => ({ output: "", truncated: false, exitStatus: null }))
      : await output;
    const exitStatus = status ?? out.exitStatus ?? null;
    return {
      exitCode: exitStatus?.exitCode ?? null,
      signal: exitStatus?.signal ?? killed,
      output: out.output,
      truncated: out.truncated,
    };
  } finally {
    const released = term.release().catch(() => {});
    await (opts.signal.aborted ? within(released, 1000) : released);
  }
}

/**
 * Request options tying a client request (`fs/*`, `terminal/create`) to the running turn: when
 * `session/cancel` aborts the turn, the SDK sends `$/cancel_request {requestId}` for it and
 * rejects at once with `-32800` (`stopWaitingOnCancel`), so the tool ends now instead of
 * holding the turn for the engine's cancel grace. Outside a turn, no signal.
 */
export function cancelWithTurn(
  holder: SessionHolder,
): { cancellationSignal?: AbortSignal; stopWaitingOnCancel?: boolean } {
  const signal = holder.get()?.turn?.ac.signal;
  return signal ? { cancellationSignal: signal, stopWaitingOnCancel: true } : {};
}

/** A `-32800` request-cancelled error (the turn was cancelled while the client held it). */
function isCancelled(e: unknown): boolean {
  return (e as { code?: number })?.code === -32800;
}

/** True when `path` does not exist on the local disk. */
async function missingOnDisk(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return false;
  } catch (e) {
    return e instanceof Deno.errors.NotFound;
  }
}
