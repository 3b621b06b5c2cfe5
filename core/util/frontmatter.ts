/**
 * Markdown front matter (`---` YAML `---` then the body), as `SKILL.md` files (Agent Skills) and
 * Claude Code's `.claude/agents/*.md` are written.
 *
 * Strict YAML first (npm `yaml`, loaded on first use). Hand-written files often hold what strict
 * YAML rejects — most often an unquoted `: ` inside a description
 * (`description: Use when: the user asks`). Such front matter still loads through a line-based
 * reading (the same one Claude Code's loader effectively applies): each `key: rest of line` at
 * column 0 is one string value; `key:` followed by `- item` lines is a list; `[a, b]` is a list;
 * `true`/`false` and plain numbers are themselves; indented lines continue the previous value.
 * The result then carries a `warning` the caller shows to the user.
 * @module
 */

/** A parsed front-matter document. */
export interface FrontMatter {
  /** The front-matter mapping (empty when the block is empty). */
  data: Record<string, unknown>;
  /** The markdown after the closing `---`, trimmed. */
  body: string;
  /** Set when strict YAML rejected the block and the line-based reading was used. */
  warning?: string;
}

const BLOCK_RE = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n?---[ \t]*(?:\r?\n([\s\S]*))?$/;

/**
 * Splits and parses front matter.
 * @throws Error when the text has no front-matter block or the block is not a mapping.
 */
export async function parseFrontMatter(text: string): Promise<FrontMatter> {
  const m = BLOCK_RE.exec(text);
  if (!m) throw new Error("missing front matter (a `---` line, YAML keys, then a `---` line)");
  const block = m[1];
  const body = (m[2] ?? "").trim();
  const { parse } = await import("yaml");
  let data: unknown;
  try {
    data = parse(block);
  } catch (e) {
    // The yaml package counts lines within the block; the file has the `---` line above it.
    const pos = (e as { linePos?: { line: number; col: number }[] }).linePos?.[0];
    const head = (e as Error).message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "");
    const first = pos ? `${head} at line ${pos.line + 1}, column ${pos.col}` : head;
    return {
      data: lineBased(block),
      body,
      warning: `front matter is not strict YAML (${first}); read it line by line instead ` +
        '(quote values that contain ": " to silence this)',
    };
  }
  if (data === null || data === undefined) return { data: {}, body };
  if (typeof data !== "object" || Array.isArray(data)) {
    throw new Error("front matter must be a mapping of keys");
  }
  return { data: data as Record<string, unknown>, body };
}

function scalar(raw: string): unknown {
  const v = raw.trim();
  if (/^(["']).*\1$/.test(v) && v.length >= 2) return v.slice(1, -1);
  if (v === "true" || v === "false") return v === "true";
  if (v === "" || v === "~" || v === "null") return null;
  if (/^-?\d+(\.\d+)?$/.test(v)) return Number(v);
  if (v.startsWith("[") && v.endsWith("]")) {
    return v.slice(1, -1).split(",").map((x) => scalar(x)).filter((x) => x !== null);
  }
  return v;
}

/** The line-based reading described in the module doc. Never throws. */
export function lineBased(block: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let key: string | null = null;
  for (const line of block.split(/\r?\n/)) {
    if (!line.trim() || /^\s*#/.test(line)) continue;
    const kv = /^([A-Za-z_][\w.-]*)\s*:(?:\s+(.*)|\s*)$/.exec(line);
    if (kv) {
      key = kv[1];
      const rest = kv[2] ?? "";
      out[key] = rest.trim() === "" ? null : scalar(rest);
      continue;
    }
    if (key === null) continue;
    const item = /^\s*-\s+(.*)$/.exec(line);
    const cur = out[key];
    if (item && (cur === null || Array.isArray(cur))) {
      out[key] = [...(Array.isArray(cur) ? cur : []), scalar(item[1])];
    } else if (/^\s/.test(line)) {
      // A continuation line of a folded value.
      const text = line.trim();
      out[key] = cur === null || cur === undefined ? text : `${String(cur)} ${text}`;
    }
  }
  for (const [k, v] of Object.entries(out)) if (v === null) delete out[k];
  return out;
}
