/**
 * What the REPL's modules share: {@link ReplContext}, the part of a running REPL that the slash
 * commands (core/frontends/repl/commands.ts) and `!cmd` (core/frontends/repl/shell.ts) may touch,
 * and the writers to the terminal ({@link out}, {@link err}).
 * @module
 */
import type { AppOptions } from "../../config/app_options.ts";
import type { PromptInput } from "../../protocol/types.ts";
import type { AgentSession, TurnOverrides } from "../../session/types.ts";
import type { Renderer } from "../render/terminal.ts";
import type { PermissionMode } from "../../policy/mode.ts";

const enc = new TextEncoder();
export function writeAll(file: { writeSync(p: Uint8Array): number }, text: string | Uint8Array) {
  const bytes = typeof text === "string" ? enc.encode(text) : text;
  let off = 0;
  while (off < bytes.length) off += file.writeSync(bytes.subarray(off));
}
export const out = (t: string) => writeAll(Deno.stdout, t);
export const err = (t: string) => writeAll(Deno.stderr, t);

/** What the slash commands may touch (core/frontends/repl/commands.ts). */
export interface ReplContext {
  app: AppOptions;
  session: AgentSession;
  say(text: string): void;
  /** Replaces the session (`/session new|switch`, `/clear`). */
  replaceSession(opts: { resumeId?: string }): Promise<void>;
  /** Runs a turn with this prompt (e.g. `/skill NAME text`; a custom command's overrides). */
  runTurn(input: PromptInput, overrides?: TurnOverrides): Promise<void>;
  /** The next key typed (raw sequence), for a picker; null when the REPL ends. */
  readKey(): Promise<string | null>;
  /** Writes to the terminal as is (stderr; a picker's drawing). */
  write(text: string): void;
  /** Runs `f` with the terminal handed over (line editing paused): `$EDITOR` of `/memory`. */
  withTerminal<T>(f: () => Promise<T>): Promise<T>;
  /** Whether the workspace is trusted now (`/trust` counts). */
  trusted(): boolean;
  /** Marks the workspace trusted for "always" answers (`/trust`). */
  trustNow(): void;
  exit(): void;
  /** Usage of this REPL's turns. */
  usage: {
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
    requests: number;
  };
  renderer: Renderer;
  /** After `/mode` switched from `before`: the notice, the prompt, the plan hand-over (./modes.ts). */
  modeChanged?(before: PermissionMode): void;
}
