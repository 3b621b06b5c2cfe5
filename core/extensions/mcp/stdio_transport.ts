/**
 * stdio transport for MCP servers on `Deno.Command` (instead of the SDK's
 * `StdioClientTransport`, which spawns through `node:child_process` in Coyote's own process
 * group and drops undecodable lines without saying what they were):
 * - the server leads its own process group and carries a tree marker (`./process_tree.ts`),
 *   so `close()` ends the server and everything it started (a `sh -c` wrapper's children,
 *   daemons that left the group);
 * - stdin/stdout/stderr are pipes: no server inherits fd 1;
 * - each stdout line that is not a JSON-RPC message is passed to `onJunk` (logged under
 *   `COYOTE_DEBUG`) and skipped; stderr goes to `onStderr`.
 * @module
 */
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { endTree, newMarker, SERVER_MARKER, type ServerTree, trackTree } from "./process_tree.ts";

/** Options of {@link DenoStdioTransport}. */
export interface DenoStdioOptions {
  command: string;
  args: string[];
  /** Full environment of the server (the marker is added). */
  env: Record<string, string>;
  cwd: string;
  onStderr?: (text: string) => void;
  onJunk?: (line: string) => void;
  /** A stdout line longer than {@link MAX_LINE_CHARS} was dropped (`chars` read so far). */
  onOversized?: (chars: number) => void;
}

/** Longest stdout line accepted from a server, in UTF-16 code units (about 32 MiB of text). */
export const MAX_LINE_CHARS = 32 * 1024 * 1024;

/** An MCP `Transport` over a child process's stdio, with whole-tree shutdown. */
export class DenoStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** The server's pid once started. */
  pid?: number;
  tree?: ServerTree;
  private child?: Deno.ChildProcess;
  private writer?: WritableStreamDefaultWriter<Uint8Array>;
  private closed = false;

  constructor(private readonly opts: DenoStdioOptions) {}

  start(): Promise<void> {
    const marker = newMarker();
    this.child = new Deno.Command(this.opts.command, {
      args: this.opts.args,
      env: { ...this.opts.env, [SERVER_MARKER]: marker },
      clearEnv: true,
      cwd: this.opts.cwd,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      detached: true,
    }).spawn();
    this.pid = this.child.pid;
    this.tree = { pid: this.child.pid, marker };
    trackTree(this.tree);
    this.writer = this.child.stdin.getWriter();
    void this.readStdout(this.child.stdout);
    void this.readStderr(this.child.stderr);
    this.child.status.then(() => this.finish(), () => this.finish());
    return Promise.resolve();
  }

  private async readStdout(s: ReadableStream<Uint8Array>): Promise<void> {
    const dec = new TextDecoder();
    let parts: string[] = [];
    let size = 0;
    let dropping = false;
    try {
      for await (const chunk of s) {
        let text = dec.decode(chunk, { stream: true });
        let i;
        // Only the new text is scanned for line ends (a long line costs O(its length)).
        while ((i = text.indexOf("\n")) >= 0) {
          const head = text.slice(0, i);
          text = text.slice(i + 1);
          if (dropping) dropping = false;
          else this.line((parts.join("") + head).replace(/\r$/, ""));
          parts = [];
          size = 0;
        }
        if (dropping || !text) continue;
        parts.push(text);
        size += text.length;
        if (size > MAX_LINE_CHARS) {
          // The SDK's own transport gives up at 10 MiB; a server's answer this large is dropped
          // (its request then fails on its timeout), the connection lives on.
          this.opts.onOversized?.(size);
          parts = [];
          size = 0;
          dropping = true;
        }
      }
      if (!dropping && parts.length) this.line(parts.join(""));
    } catch (e) {
      if (!this.closed) this.onerror?.(e as Error);
    }
  }

  private line(text: string): void {
    if (!text.trim()) return;
    let msg: JSONRPCMessage;
    try {
      msg = JSONRPCMessageSchema.parse(JSON.parse(text)) as JSONRPCMessage;
    } catch {
      this.opts.onJunk?.(text);
      return;
    }
    this.onmessage?.(msg);
  }

  private async readStderr(s: ReadableStream<Uint8Array>): Promise<void> {
    const dec = new TextDecoder();
    try {
      for await (const chunk of s) this.opts.onStderr?.(dec.decode(chunk, { stream: true }));
    } catch { /* closed */ }
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.writer || this.closed) throw new Error("the MCP server is not running");
    await this.writer.write(new TextEncoder().encode(JSON.stringify(message) + "\n"));
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }

  /**
   * Closes stdin, gives the server `graceMs` to exit by itself, then ends its whole tree
   * (SIGTERM, then SIGKILL) — also when the leader already exited but left children behind.
   */
  async close(graceMs = 300): Promise<void> {
    const child = this.child;
    if (!child) return;
    try {
      await this.writer?.close();
    } catch { /* already closed */ }
    let t: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([child.status, new Promise((r) => (t = setTimeout(r, graceMs)))]);
    clearTimeout(t);
    if (this.tree) await endTree(this.tree);
    await child.status.catch(() => {});
    this.finish();
  }
}
