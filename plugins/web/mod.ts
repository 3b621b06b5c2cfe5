/**
 * The `web` tool pack: `web_fetch {url, max_chars?}` (issue 3: first-party
 * packs include a `web_fetch` tool).
 *
 * - http(s) only; the guard checks `{type: "net", host}` (host with port)
 *   before `run`.
 * - Redirects are followed only within the same origin (up to 5); a redirect to
 *   another host is reported to the model instead of followed, so the guard
 *   sees every host contacted (Claude Code's WebFetch does the same).
 * - HTML becomes readable text through npm `html-to-text` (the well-known
 *   converter; headings, lists, tables and link targets survive; scripts,
 *   styles and images are dropped). Other `text/*`, JSON and XML bodies are
 *   returned as they are; other types get a one-line description.
 * - Bounded: at most {@link MAX_BODY_BYTES} of body are read, the text is cut
 *   to `max_chars` (default {@link DEFAULT_MAX_CHARS}) with the cut marked;
 *   the whole request times out after {@link FETCH_TIMEOUT_MS}.
 * @module
 */
import { builtinInputs } from "../../core/tools/lazy.ts";
import type { WEB_INPUTS } from "./inputs.ts";
import { definePlugin, defineTool } from "../../sdk/mod.ts";
import type { ToolResult } from "../../sdk/mod.ts";
import { headText } from "../../core/util/text.ts";

export const DEFAULT_MAX_CHARS = 20_000;
export { MAX_MAX_CHARS } from "./limits.ts";
export const MAX_BODY_BYTES = 5 * 1024 * 1024;
export const FETCH_TIMEOUT_MS = 30_000;
const MAX_REDIRECTS = 5;

type Convert = (html: string, options?: Record<string, unknown>) => string;
let convertFn: Convert | undefined;
/** npm `html-to-text`, loaded on first use (kept out of the start-up path). */
async function htmlToText(html: string): Promise<string> {
  if (!convertFn) {
    const mod = await import("html-to-text");
    convertFn = (mod as unknown as { convert: Convert }).convert;
  }
  return convertFn(html, {
    wordwrap: false,
    selectors: [
      { selector: "img", format: "skip" },
      { selector: "nav", format: "skip" },
      { selector: "a", options: { hideLinkHrefIfSameAsText: true } },
    ],
  });
}

/** `host[:port]` of a URL, or the input itself when it does not parse (the run then fails). */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

async function readBounded(res: Response): Promise<{ bytes: Uint8Array; cut: boolean }> {
  if (!res.body) return { bytes: new Uint8Array(), cut: false };
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let n = 0;
  let cut = false;
  while (true) {
    const { value, done } = await reader.read();
    if (done) break;
    parts.push(value);
    n += value.length;
    if (n >= MAX_BODY_BYTES) {
      cut = true;
      await reader.cancel().catch(() => {});
      break;
    }
  }
  const out = new Uint8Array(Math.min(n, MAX_BODY_BYTES));
  let o = 0;
  for (const p of parts) {
    const take = p.subarray(0, out.length - o);
    out.set(take, o);
    o += take.length;
    if (o >= out.length) break;
  }
  return { bytes: out, cut };
}

function decode(bytes: Uint8Array, contentType: string): string {
  const m = /charset=["']?([\w-]+)/i.exec(contentType);
  try {
    return new TextDecoder(m?.[1] ?? "utf-8").decode(bytes);
  } catch {
    return new TextDecoder().decode(bytes);
  }
}

/** `web_fetch {url, max_chars?}`; see the module doc. */
export const webFetchTool = defineTool({
  name: "web_fetch",
  description:
    "Fetch an http(s) URL and return its content as text (HTML converted to readable text).",
  input: builtinInputs<typeof WEB_INPUTS>("plugins")("web_fetch"),
  kind: "fetch",
  readOnly: true,
  title: (i) => `Fetch ${i.url}`,
  access: (i) => [{ type: "net", host: hostOf(i.url) }],
  async run(input, ctx): Promise<ToolResult> {
    let url: URL;
    try {
      url = new URL(input.url);
    } catch {
      return { content: `invalid URL: ${input.url}`, isError: true };
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      return {
        content: `only http and https URLs are supported, got ${url.protocol}`,
        isError: true,
      };
    }
    const maxChars = input.max_chars ?? DEFAULT_MAX_CHARS;
    const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(FETCH_TIMEOUT_MS)]);
    let res: Response;
    try {
      for (let hop = 0;; hop++) {
        res = await fetch(url, {
          signal,
          redirect: "manual",
          headers: {
            "user-agent": "coyote-web-fetch/1.0",
            accept: "text/html,text/plain,*/*;q=0.8",
          },
        });
        if (res.status < 300 || res.status >= 400 || !res.headers.get("location")) break;
        await res.body?.cancel();
        const next = new URL(res.headers.get("location")!, url);
        if (next.origin !== url.origin) {
          return {
            content:
              `${url.href} redirects (${res.status}) to another host: ${next.href}\nCall web_fetch with that URL to follow it.`,
            rawOutput: { status: res.status, redirect: next.href },
          };
        }
        if (hop >= MAX_REDIRECTS) {
          return { content: `too many redirects from ${input.url}`, isError: true };
        }
        url = next;
      }
    } catch (err) {
      if (ctx.signal.aborted) return { content: "cancelled", isError: true };
      if (signal.aborted) {
        return { content: `timed out after ${FETCH_TIMEOUT_MS} ms: ${url.href}`, isError: true };
      }
      return { content: `fetch failed for ${url.href}: ${(err as Error).message}`, isError: true };
    }
    const contentType = res!.headers.get("content-type") ?? "";
    let body: { bytes: Uint8Array; cut: boolean };
    try {
      body = await readBounded(res!);
    } catch (err) {
      if (ctx.signal.aborted) return { content: "cancelled", isError: true };
      return { content: `reading ${url.href} failed: ${(err as Error).message}`, isError: true };
    }
    const type = contentType.split(";")[0].trim().toLowerCase();
    const isHtml = type === "text/html" || type === "application/xhtml+xml";
    const isText = isHtml || type === "" || type.startsWith("text/") ||
      /json|xml|javascript|yaml|toml/.test(type);
    let text: string;
    if (!isText) {
      text = `[${type} content, ${body.bytes.length}${body.cut ? "+" : ""} bytes, not shown]`;
    } else {
      text = decode(body.bytes, contentType);
      if (isHtml) text = (await htmlToText(text)).replace(/\n{3,}/g, "\n\n").trim();
    }
    const total = text.length;
    if (total > maxChars) {
      text = `${headText(text, maxChars)}\n[… truncated: ${maxChars} of ${total} chars shown …]`;
    } else if (body.cut) {
      text += `\n[… body cut at ${MAX_BODY_BYTES} bytes …]`;
    }
    const head = `URL: ${url.href}\nStatus: ${res!.status} ${res!.statusText}\nContent-Type: ${
      contentType || "unknown"
    }`;
    return {
      content: `${head}\n\n${text}`,
      isError: !res!.ok,
      rawOutput: { url: url.href, status: res!.status, contentType, chars: total },
    };
  },
});

/** The `web` plugin. */
export const webPlugin = definePlugin({
  name: "web",
  version: "1.0.0",
  description: "Fetch web pages as text.",
  tools: [webFetchTool],
});

export default webPlugin;
