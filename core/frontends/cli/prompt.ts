/**
 * The request of a one-shot/headless run, assembled by {@link buildPrompt}: the prompt words,
 * each `-f FILE` (text as `<file path=…>`, an image attached for a model configured with
 * `images: true`), then piped stdin, waited on as {@link STDIN_GRACE_MS} says.
 * @module
 */
import { UsageError } from "./output.ts";

/**
 * How long a run that already has a prompt (argument or `-f`) waits for the first byte of a piped
 * stdin before going on without it. A launcher or supervisor may keep an empty pipe open for the
 * process's lifetime; headless runs must never block on it (issue 2: "never a hang").
 */
export const STDIN_GRACE_MS = 200;

/** What stdin is: a terminal (never read), a pipe/socket (may stay open), or anything else. */
function stdinKind(): "terminal" | "pipe" | "other" {
  if (Deno.stdin.isTerminal()) return "terminal";
  try {
    const s = Deno.statSync("/dev/stdin");
    return s.isFifo || s.isSocket ? "pipe" : "other";
  } catch {
    return "pipe"; // no /dev/stdin (Windows) or not statable: assume the cautious case
  }
}

function concat(chunks: Uint8Array[]): string {
  const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let off = 0;
  for (const c of chunks) all.set(c, off), off += c.length;
  return new TextDecoder().decode(all);
}

/**
 * Reads piped stdin to its end. With `graceMs`, gives up (returns null) when no byte and no EOF
 * arrived within that time; once the first byte is in, it reads to EOF.
 */
async function readStdin(graceMs?: number): Promise<string | null> {
  const reader = Deno.stdin.readable.getReader();
  const chunks: Uint8Array[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let abandoned = false;
  try {
    let first: ReadableStreamReadResult<Uint8Array> | null;
    if (graceMs === undefined) first = await reader.read();
    else {
      first = await Promise.race([
        reader.read(),
        new Promise<null>((res) => timer = setTimeout(() => res(null), graceMs)),
      ]);
      clearTimeout(timer);
    }
    if (first === null) {
      abandoned = true; // the pending read stays with the reader; main.ts exits explicitly
      return null;
    }
    if (first.done) return "";
    chunks.push(first.value);
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      chunks.push(r.value);
    }
    return concat(chunks);
  } finally {
    if (!abandoned) reader.releaseLock();
  }
}

/** Largest text file `-f FILE` adds to the prompt (bytes). */
export const MAX_PROMPT_FILE_BYTES = 256 * 1024;
/** Largest image `-f FILE` attaches (bytes), for models configured with `images: true`. */
export const MAX_PROMPT_IMAGE_BYTES = 5 * 1024 * 1024;

/** The image type of `bytes` by its magic number (PNG, JPEG, GIF, WebP), or undefined. */
function imageType(bytes: Uint8Array): string | undefined {
  const at = (i: number, ...b: number[]) => b.every((x, k) => bytes[i + k] === x);
  if (at(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png";
  if (at(0, 0xff, 0xd8, 0xff)) return "image/jpeg";
  if (at(0, 0x47, 0x49, 0x46, 0x38)) return "image/gif";
  if (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50)) return "image/webp";
  return undefined;
}

/** An image `-f` attaches (ACP `image` content block). */
interface PromptImage {
  mimeType: string;
  /** Base64. */
  data: string;
}

/**
 * Reads one `-f FILE`: text, or an image when `images` names the model that accepts them.
 * Refused with a usage error: a text file over {@link MAX_PROMPT_FILE_BYTES} (an image over
 * {@link MAX_PROMPT_IMAGE_BYTES}), a binary file (a NUL byte, or not valid UTF-8), an image for
 * a model not configured with `images: true`, a directory.
 */
async function readPromptFile(
  f: string,
  images?: { model?: string; accepted: boolean },
): Promise<string | PromptImage> {
  let bytes: Uint8Array;
  try {
    const st = await Deno.stat(f);
    if (st.isDirectory) throw new Error("is a directory");
    const head = new Uint8Array(12);
    const file = await Deno.open(f);
    try {
      await file.read(head);
    } finally {
      file.close();
    }
    const mime = imageType(head);
    if (mime) {
      if (!images?.accepted) {
        throw new UsageError(
          `-f ${f} is an image (${mime}); the model ${images?.model ?? "(none chosen)"} is not ` +
            `configured to accept images (models.<name>.images: true in config.yaml)`,
        );
      }
      if (st.size > MAX_PROMPT_IMAGE_BYTES) {
        throw new UsageError(
          `-f ${f} is ${(st.size / 1048576).toFixed(1)} MiB; images may be at most ${
            MAX_PROMPT_IMAGE_BYTES / 1048576
          } MiB`,
        );
      }
      const raw = await Deno.readFile(f);
      let bin = "";
      for (let i = 0; i < raw.length; i += 0x8000) {
        bin += String.fromCharCode(...raw.subarray(i, i + 0x8000));
      }
      return { mimeType: mime, data: btoa(bin) };
    }
    if (st.size > MAX_PROMPT_FILE_BYTES) {
      throw new UsageError(
        `-f ${f} is ${(st.size / 1024).toFixed(0)} KiB; -f adds files of at most ${
          MAX_PROMPT_FILE_BYTES / 1024
        } KiB (let the model read the parts it needs, or pipe an excerpt: sed -n 1,200p ${f} | coyote -f - …)`,
      );
    }
    bytes = await Deno.readFile(f);
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(`cannot read --file ${f}: ${(e as Error).message}`);
  }
  if (bytes.length > MAX_PROMPT_FILE_BYTES) {
    throw new UsageError(`-f ${f} grew past ${MAX_PROMPT_FILE_BYTES / 1024} KiB while read`);
  }
  const binary = (why: string) =>
    new UsageError(
      `-f ${f} is a binary file (${why}); -f adds text files only (ask the model to inspect it with a tool instead)`,
    );
  if (bytes.includes(0)) throw binary("it contains NUL bytes");
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw binary("not valid UTF-8 text");
  }
}

/**
 * The prompt: argument words, then each `-f FILE` as `<file path=…>`, then piped stdin.
 * Stdin: a terminal is never read; a regular file or /dev/null is read to its end; a pipe is read to
 * its end when it is the only source of the prompt, else only if its first byte comes within
 * {@link STDIN_GRACE_MS}. `-f -` reads stdin to its end in any case (without a `<file>` wrapper).
 */
export async function buildPrompt(
  words: string[],
  files: string[],
  images?: { model?: string; accepted: boolean },
): Promise<{ text: string; images: PromptImage[] }> {
  let prompt = words.join(" ").trim();
  const attached: PromptImage[] = [];
  let stdinRead = false;
  for (const f of files) {
    if (f === "-") {
      // `-f -`: stdin, read to its end whatever it is (the explicit way to wait for a slow pipe).
      if (stdinRead) throw new UsageError("-f - (stdin) given twice");
      // Never read the terminal (headless runs must not wait on it): `-f -` is for piped input.
      if (Deno.stdin.isTerminal()) {
        throw new UsageError("-f - reads piped stdin, but stdin is a terminal");
      }
      stdinRead = true;
      const piped = ((await readStdin()) ?? "").trim();
      if (piped) prompt += `${prompt ? "\n\n" : ""}${piped}`;
      continue;
    }
    const text = await readPromptFile(f, images);
    if (typeof text !== "string") {
      attached.push(text);
      continue;
    }
    prompt += `${prompt ? "\n\n" : ""}<file path="${f}">\n${text}\n</file>`;
  }
  const kind = stdinRead ? "terminal" : stdinKind();
  if (kind !== "terminal") {
    // Nothing else to go on: wait for the whole input. With a prompt already, a pipe that stays
    // silent is not waited on (a supervisor's open pipe); files and /dev/null never block.
    const wait = prompt && kind === "pipe";
    const piped = await readStdin(wait ? STDIN_GRACE_MS : undefined);
    if (piped === null) {
      Deno.stderr.writeSync(
        new TextEncoder().encode(
          `coyote: note: stdin is an open pipe with no data after ${STDIN_GRACE_MS} ms; going on without it (-f - waits for it)\n`,
        ),
      );
    } else if (piped.trim()) prompt += `${prompt ? "\n\n" : ""}${piped.trim()}`;
  }
  return { text: prompt, images: attached };
}
