/**
 * Faithful text files for the fs tools (issue 10, "Edits that change only what was asked"): what
 * encoding and line ending a file has, so an edit changes only the bytes it was asked to change.
 *
 * - Encodings: UTF-8 (with or without a BOM, kept as found), UTF-16 LE/BE with a BOM, and
 *   anything else that is not valid UTF-8 read as ISO-8859-1 (Latin-1: every byte is one
 *   character, so the round trip is byte-exact and no byte outside an edit can change). Writing a
 *   character the file's encoding cannot hold is refused, not replaced.
 * - Line endings: a file whose lines mostly end in CRLF is a CRLF file; text written into it takes
 *   CRLF (issue 10: inserting lines into a CRLF file must not leave mixed endings).
 * - Near misses: when an exact string is not found, {@link nearMiss} says whether it matches
 *   after normalising line endings, trailing whitespace, tabs/spaces or Unicode (NFC/NFD), and
 *   where, so the model can copy the exact text instead of guessing.
 * @module
 */

export type Encoding = "utf-8" | "utf-8-bom" | "utf-16le" | "utf-16be" | "latin-1";

/** A decoded file: its text (BOM removed), how to write it back, and its line ending. */
export interface TextFile {
  text: string;
  encoding: Encoding;
  eol: "\n" | "\r\n";
}

/** Human name of an encoding, for notes and errors. */
export function encodingName(e: Encoding): string {
  return {
    "utf-8": "UTF-8",
    "utf-8-bom": "UTF-8 with a byte-order mark",
    "utf-16le": "UTF-16 LE",
    "utf-16be": "UTF-16 BE",
    "latin-1": "ISO-8859-1 (Latin-1)",
  }[e];
}

/** The dominant line ending of `text` (CRLF when most line breaks are CRLF). */
export function dominantEol(text: string): "\n" | "\r\n" {
  let crlf = 0, lf = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) {
    if (i > 0 && text.charCodeAt(i - 1) === 13) crlf++;
    else lf++;
  }
  return crlf > lf ? "\r\n" : "\n";
}

/** Decodes file bytes; see the module doc for the encodings recognised. */
export function decodeBytes(bytes: Uint8Array): TextFile {
  let text: string;
  let encoding: Encoding;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    encoding = "utf-8-bom";
    text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes.subarray(3));
  } else if (bytes[0] === 0xff && bytes[1] === 0xfe) {
    encoding = "utf-16le";
    text = new TextDecoder("utf-16le").decode(bytes.subarray(2));
  } else if (bytes[0] === 0xfe && bytes[1] === 0xff) {
    encoding = "utf-16be";
    text = new TextDecoder("utf-16be").decode(bytes.subarray(2));
  } else {
    try {
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
      encoding = "utf-8";
    } catch {
      let s = "";
      for (let i = 0; i < bytes.length; i += 0x4000) {
        s += String.fromCharCode(...bytes.subarray(i, i + 0x4000));
      }
      text = s;
      encoding = "latin-1";
    }
  }
  return { text, encoding, eol: dominantEol(text) };
}

/** A character the target encoding cannot hold. */
export class UnencodableError extends Error {
  override name = "UnencodableError";
}

/**
 * Encodes `text` in `encoding` (the BOM restored where the file had one).
 * @throws UnencodableError naming the first character Latin-1 cannot hold.
 */
export function encodeText(text: string, encoding: Encoding): Uint8Array {
  switch (encoding) {
    case "utf-8":
      return new TextEncoder().encode(text);
    case "utf-8-bom": {
      const body = new TextEncoder().encode(text);
      const out = new Uint8Array(body.length + 3);
      out.set([0xef, 0xbb, 0xbf]);
      out.set(body, 3);
      return out;
    }
    case "utf-16le":
    case "utf-16be": {
      const out = new Uint8Array(2 + text.length * 2);
      const le = encoding === "utf-16le";
      out.set(le ? [0xff, 0xfe] : [0xfe, 0xff]);
      for (let i = 0; i < text.length; i++) {
        const c = text.charCodeAt(i);
        out[2 + 2 * i + (le ? 0 : 1)] = c & 0xff;
        out[2 + 2 * i + (le ? 1 : 0)] = c >> 8;
      }
      return out;
    }
    case "latin-1": {
      const out = new Uint8Array(text.length);
      for (let i = 0; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (c > 0xff) {
          const line = text.slice(0, i).split("\n").length;
          throw new UnencodableError(
            `the file is ${encodingName(encoding)} and cannot hold ${
              JSON.stringify(String.fromCodePoint(text.codePointAt(i)!))
            } (U+${
              c.toString(16).toUpperCase().padStart(4, "0")
            }, line ${line}); write only characters Latin-1 has`,
          );
        }
        out[i] = c;
      }
      return out;
    }
  }
}

/** `text` with every line break made `eol`. */
export function withEol(text: string, eol: "\n" | "\r\n"): string {
  return text.replace(/\r?\n/g, eol);
}

function lineOf(text: string, index: number): number {
  return text.slice(0, index).split("\n").length;
}

/**
 * Why `needle` was not found in `text`, when a normalised comparison finds it: the first rule
 * under which it matches, with the line. `null` when nothing close is there.
 */
export function nearMiss(text: string, needle: string): string | null {
  type Rule = [string, (s: string) => string];
  const rules: Rule[] = [
    ["line endings (CRLF vs LF)", (s) => s.replace(/\r\n/g, "\n")],
    [
      "trailing whitespace at line ends",
      (s) => s.replace(/\r\n/g, "\n").replace(/[ \t]+\n/g, "\n").replace(/[ \t]+$/, ""),
    ],
    [
      "tabs vs spaces (indentation or spacing)",
      (s) => s.replace(/\r\n/g, "\n").replace(/[ \t]+/g, " "),
    ],
    [
      "the Unicode form (NFC vs NFD: the same letters as different code points)",
      (s) => s.normalize("NFC"),
    ],
    [
      "the Unicode form and whitespace",
      (s) => s.normalize("NFC").replace(/\r\n/g, "\n").replace(/[ \t]+/g, " "),
    ],
  ];
  for (const [what, norm] of rules) {
    const n = norm(needle);
    if (!n.trim()) continue;
    // Map the match back to a line of the original by normalising line by line prefixes.
    const hay = norm(text);
    const at = hay.indexOf(n);
    if (at === -1) continue;
    const line = lineOf(hay, at);
    return `old_string does not match exactly, but matches after normalising ${what} at line ${line}: ` +
      "read those lines with fs_read and copy them exactly";
  }
  return null;
}
