/**
 * Reading a file with its encoding and line ending, and writing it back in that encoding, for
 * `fs_write` and `fs_patch` (issue 10; the codecs are text.ts).
 * @module
 */
import type { ToolContext } from "../../sdk/mod.ts";
import { decodeBytes, dominantEol, encodeText, type Encoding, type TextFile } from "./text.ts";
import { writeText } from "./paths.ts";

/** A file as read for an edit: its text, encoding, line ending, and the bytes they came from. */
export type ExistingFile = TextFile & { bytes: Uint8Array };

/**
 * Reads the current file with its encoding and line ending (plugins/fs/text.ts), or null when it
 * does not exist. Through an ACP client's `fs` (editor buffers) the text is taken as UTF-8 and
 * `bytes` are its UTF-8 encoding. Other errors throw.
 */
export async function readExisting(ctx: ToolContext, abs: string): Promise<ExistingFile | null> {
  try {
    if (ctx.host?.readTextFile) {
      const text = await ctx.host.readTextFile(abs);
      return {
        text,
        encoding: "utf-8",
        eol: dominantEol(text),
        bytes: new TextEncoder().encode(text),
      };
    }
    const bytes = await Deno.readFile(abs);
    return { ...decodeBytes(bytes), bytes };
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

/** Writes `text` back in the file's encoding (UTF-8 for new files and editor buffers). */
export async function writeFaithful(
  ctx: ToolContext,
  abs: string,
  text: string,
  encoding: Encoding,
): Promise<void> {
  if (encoding === "utf-8" || ctx.host?.writeTextFile) return await writeText(ctx, abs, text);
  const bytes = encodeText(text, encoding);
  const dir = abs.slice(0, abs.lastIndexOf("/")) || "/";
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeFile(abs, bytes);
}
