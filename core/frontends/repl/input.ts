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

/** One file an `@path` mention attached: the path as typed, its size in bytes and lines. */
export interface Attachment {
  path: string;
  bytes: number;
  lines: number;
}

/** A size for people: `812 B`, `4.2 KB`, `1.3 MB`. */
export function humanBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** The line the REPL prints under the entry for an attached file. */
export function attachmentLine(a: Attachment): string {
  return `attached @${a.path} (${a.lines} ${a.lines === 1 ? "line" : "lines"}, ${
    humanBytes(a.bytes)
  })`;
}

function realOrNull(path: string): string | null {
  try {
    return Deno.realPathSync(path);
  } catch {
    return null;
  }
}

/**
 * The prompt for `text`: a text block, then one embedded resource per `@path` mention naming an
 * existing text file inside the workspace `cwd` (relative to it, or absolute; symlinks resolved).
 * A mention that names no file (an e-mail, a handle, a folder) stays plain text. A file outside
 * the workspace, larger than {@link MENTION_LIMIT} or not UTF-8 text is refused: one note each,
 * naming the path and why (the text still mentions it; the agent can read it with its tools,
 * which ask). `attached` lists what was attached, for the line under the entry
 * ({@link attachmentLine}).
 */
export function withMentions(
  text: string,
  cwd: string,
): { blocks: acp.ContentBlock[]; notes: string[]; attached: Attachment[] } {
  const blocks: acp.ContentBlock[] = [{ type: "text", text }];
  const notes: string[] = [];
  const attached: Attachment[] = [];
  const seen = new Set<string>();
  const root = realOrNull(cwd) ?? cwd;
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
    const real = realOrNull(abs) ?? abs;
    if (real !== root && !real.startsWith(root.endsWith("/") ? root : `${root}/`)) {
      notes.push(
        `@${rel} not attached: outside the workspace ${root} (ask the agent to read it; that asks)`,
      );
      continue;
    }
    if (st.size > MENTION_LIMIT) {
      notes.push(
        `@${rel} not attached: ${humanBytes(st.size)}, over the ${
          humanBytes(MENTION_LIMIT)
        } limit (ask the agent to read the part you need)`,
      );
      continue;
    }
    const bytes = Deno.readFileSync(abs);
    let body: string;
    try {
      body = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      if (body.includes("\0")) throw new Error("NUL");
    } catch {
      notes.push(`@${rel} not attached: a binary file, not text`);
      continue;
    }
    blocks.push({
      type: "resource",
      resource: { uri: `file://${abs}`, text: body, mimeType: "text/plain" },
    });
    const lines = body === "" ? 0 : body.split("\n").length - (body.endsWith("\n") ? 1 : 0);
    attached.push({ path: rel, bytes: st.size, lines });
  }
  return { blocks, notes, attached };
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
