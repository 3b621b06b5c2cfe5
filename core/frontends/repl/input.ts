/**
 * REPL input helpers: per-workspace history (`<data dir>/history/<hash of cwd>.jsonl`, one
 * JSON string per entry so multi-line entries survive), tab completion (slash commands and their
 * `.name` aliases, agents, skills, models, `@path` files) and `@path` mentions that attach files
 * to the prompt as ACP embedded resources.
 * @module
 */
import type * as acp from "@agentclientprotocol/sdk";

/** Most entries kept in a history file. */
export const HISTORY_LIMIT = 1000;

/** The history file of a workspace. */
export async function historyPath(dataDir: string, cwd: string): Promise<string> {
  const hash = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(cwd));
  const hex = [...new Uint8Array(hash)].slice(0, 8).map((b) => b.toString(16).padStart(2, "0"))
    .join("");
  return `${dataDir}/history/${hex}.jsonl`;
}

/** Loads history, newest first (node:readline's `history` order); [] when there is none. */
export function loadHistory(path: string): string[] {
  let text = "";
  try {
    text = Deno.readTextFileSync(path);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const line of text.split("\n")) {
    if (!line) continue;
    try {
      const v = JSON.parse(line);
      if (typeof v === "string") out.push(v);
    } catch { /* a torn line */ }
  }
  return out.slice(-HISTORY_LIMIT).reverse();
}

/** Appends one entry (best effort: history never fails the REPL). */
export function appendHistory(path: string, entry: string): void {
  try {
    Deno.mkdirSync(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    Deno.writeTextFileSync(path, JSON.stringify(entry) + "\n", { append: true });
  } catch { /* read-only data dir */ }
}

/** What completion can offer besides files. */
export interface CompletionSource {
  commands(): string[];
  agents(): string[];
  skills(): string[];
  models(): string[];
  cwd: string;
}

/** Files and folders under `cwd` matching a partial path (folders end with `/`). */
export function completePath(cwd: string, partial: string): string[] {
  const slash = partial.lastIndexOf("/");
  const dir = slash >= 0 ? partial.slice(0, slash + 1) : "";
  const base = slash >= 0 ? partial.slice(slash + 1) : partial;
  const abs = dir.startsWith("/") ? dir : `${cwd}/${dir}`;
  const out: string[] = [];
  try {
    for (const e of Deno.readDirSync(abs || ".")) {
      if (!e.name.startsWith(base)) continue;
      if (e.name.startsWith(".") && !base.startsWith(".")) continue;
      out.push(dir + e.name + (e.isDirectory ? "/" : ""));
    }
  } catch { /* no such folder */ }
  return out.sort().slice(0, 200);
}

/** node:readline completer: `[candidates, substring being completed]`. */
export function complete(line: string, src: CompletionSource): [string[], string] {
  const at = /(?:^|\s)@(\S*)$/.exec(line);
  if (at) {
    return [completePath(src.cwd, at[1]).map((p) => `@${p}`), `@${at[1]}`];
  }
  const cmd = /^([/.])(\S*)$/.exec(line);
  if (cmd) {
    const hits = src.commands().filter((c) => c.startsWith(cmd[2])).map((c) => cmd[1] + c);
    return [hits, line];
  }
  const arg = /^[/.](agent|skill|model|session)\s+(\S*)$/.exec(line);
  if (arg) {
    const pool = arg[1] === "agent"
      ? src.agents()
      : arg[1] === "skill"
      ? ["list", "unload", ...src.skills()]
      : arg[1] === "model"
      ? src.models()
      : ["list", "new", "switch"];
    return [pool.filter((x) => x.startsWith(arg[2])), arg[2]];
  }
  return [[], line];
}

/** Largest file attached by an `@path` mention (bytes). */
export const MENTION_LIMIT = 256 * 1024;

/**
 * The prompt for `text`: a text block, then one embedded resource per `@path` mention naming an
 * existing file (relative to `cwd`; folders, missing files and binary files stay plain text).
 * Returns notes for mentions that were not attached.
 */
export function withMentions(
  text: string,
  cwd: string,
): { blocks: acp.ContentBlock[]; notes: string[] } {
  const blocks: acp.ContentBlock[] = [{ type: "text", text }];
  const notes: string[] = [];
  const seen = new Set<string>();
  for (const m of text.matchAll(/(?:^|\s)@([^\s@]+)/g)) {
    const rel = m[1].replace(/[,.;:!?)]+$/, "");
    const abs = rel.startsWith("/") ? rel : `${cwd}/${rel}`;
    if (seen.has(abs)) continue;
    seen.add(abs);
    let st: Deno.FileInfo;
    try {
      st = Deno.statSync(abs);
    } catch {
      continue; // not a path (an e-mail, a handle)
    }
    if (!st.isFile) continue;
    if (st.size > MENTION_LIMIT) {
      notes.push(`@${rel} not attached: ${st.size} bytes (limit ${MENTION_LIMIT})`);
      continue;
    }
    const bytes = Deno.readFileSync(abs);
    let body: string;
    try {
      body = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      notes.push(`@${rel} not attached: not a text file`);
      continue;
    }
    blocks.push({
      type: "resource",
      resource: { uri: `file://${abs}`, text: body, mimeType: "text/plain" },
    });
  }
  return { blocks, notes };
}

/**
 * Joins input lines into one entry: a line ending in `\` continues on the next line (the `\`
 * is dropped). `push` returns the finished entry, or null while it continues.
 */
export class MultiLine {
  #parts: string[] = [];

  get continuing(): boolean {
    return this.#parts.length > 0;
  }

  /** Adds a line; `more` forces a continuation (Alt+Enter, a pasted line). */
  push(line: string, more = false): string | null {
    if (line.endsWith("\\") && !line.endsWith("\\\\")) {
      this.#parts.push(line.slice(0, -1));
      return null;
    }
    this.#parts.push(line);
    if (more) return null;
    const entry = this.#parts.join("\n");
    this.#parts = [];
    return entry;
  }

  /** Drops a half-typed entry (Ctrl+C). */
  reset(): void {
    this.#parts = [];
  }
}
