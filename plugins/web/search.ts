/**
 * `web_search {query, max_results?}`: a web search through a backend with a plain HTTP API,
 * chosen in config.yaml (docs/web.md):
 *
 * ```yaml
 * web_search:
 *   backend: searxng          # searxng | brave | tavily
 *   url: http://localhost:8888  # SearXNG: the instance (required); others: the API endpoint (optional)
 *   api_key_env: BRAVE_API_KEY  # the variable holding the key (brave, tavily; defaults shown below)
 *   max_results: 5            # default results per search (1–20)
 * ```
 *
 * - SearXNG: `GET {url}/search?q=…&format=json` (the instance must allow the `json` format,
 *   `search.formats` in its settings.yml); answer `{results: [{title, url, content}]}`.
 * - Brave Search API: `GET https://api.search.brave.com/res/v1/web/search?q=…&count=N` with
 *   `X-Subscription-Token: $BRAVE_API_KEY`; answer `{web: {results: [{title, url, description}]}}`.
 * - Tavily: `POST https://api.tavily.com/search` `{query, max_results}` with
 *   `Authorization: Bearer $TAVILY_API_KEY`; answer `{results: [{title, url, content}]}`.
 *
 * The tool exists only when `web_search` is configured (core/session/workspace.ts adds it; as
 * peers do, an unavailable tool is not offered). The guard checks `{type: "net", host}` of the
 * backend before each call, as for `web_fetch` (`Net(host)` rules; asked or denied otherwise). The
 * key is read from the environment at each call and sent only in its header; it is never in a
 * result or a message (and, its variable being secret-named, redacted from every tool result
 * anyway, core/tools/redact.ts). Results: title, URL and snippet (markup removed, each snippet at
 * most {@link SNIPPET_CHARS}), at most `max_results` ({@link MAX_RESULTS}), the whole text at most
 * {@link MAX_TEXT_CHARS}. An HTTP error, a body that is not JSON or has no result list is a tool
 * error naming the backend and what came back; the request times out after
 * {@link SEARCH_TIMEOUT_MS}.
 * @module
 */
import { builtinSchema } from "../../core/tools/lazy.ts";
import type { webSearchInput } from "./inputs.ts";
import { defineTool } from "../../sdk/mod.ts";
import type { InferInput, ToolResult } from "../../sdk/mod.ts";
import { headText } from "../../core/util/text.ts";
import { hostOf } from "./mod.ts";
import { DEFAULT_RESULTS, MAX_RESULTS } from "./limits.ts";
import type { WebSearchSettings } from "../../core/config/config.ts";

export type { WebSearchSettings };

export { DEFAULT_RESULTS, MAX_RESULTS };
export const SNIPPET_CHARS = 400;
export const MAX_TEXT_CHARS = 12_000;
export const SEARCH_TIMEOUT_MS = 20_000;
const MAX_BODY_CHARS = 2_000_000;

/** The default endpoint and key variable of each backend. */
export const BACKENDS = {
  searxng: { url: undefined, keyEnv: undefined, name: "SearXNG" },
  brave: {
    url: "https://api.search.brave.com/res/v1/web/search",
    keyEnv: "BRAVE_API_KEY",
    name: "Brave Search",
  },
  tavily: { url: "https://api.tavily.com/search", keyEnv: "TAVILY_API_KEY", name: "Tavily" },
} as const;

/** One search result. */
export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

/** The endpoint a search goes to (SearXNG: `{url}/search`). */
export function endpointOf(s: WebSearchSettings): string {
  if (s.backend === "searxng") return `${(s.url ?? "").replace(/\/+$/, "")}/search`;
  return s.url ?? BACKENDS[s.backend].url;
}

const ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
  "#39": "'",
};

/** Text without tags (`<strong>` in Brave and SearXNG snippets), entities decoded, one line. */
export function plain(s: unknown): string {
  if (typeof s !== "string") return "";
  return s.replace(/<[^>]*>/g, "")
    .replace(/&(#\d+|#x[0-9a-f]+|[a-z]+);/gi, (all, e: string) => {
      const k = e.toLowerCase();
      if (ENTITIES[k] !== undefined) return ENTITIES[k];
      const code = k.startsWith("#x")
        ? parseInt(k.slice(2), 16)
        : k.startsWith("#")
        ? parseInt(k.slice(1), 10)
        : NaN;
      return Number.isFinite(code) && code > 0 && code < 0x110000
        ? String.fromCodePoint(code)
        : all;
    })
    .replace(/\s+/g, " ").trim();
}

/** The result list of a backend's JSON answer, or undefined when it has none. */
export function resultsOf(
  backend: WebSearchSettings["backend"],
  body: unknown,
): SearchResult[] | undefined {
  if (!body || typeof body !== "object" || Array.isArray(body)) return undefined;
  const b = body as Record<string, unknown>;
  let list: unknown = b.results;
  if (backend === "brave") {
    // Brave leaves `web` out when a query has no web results.
    if (b.web === undefined) return b.type === "search" ? [] : undefined;
    list = (b.web as Record<string, unknown> | null)?.results;
  }
  if (!Array.isArray(list)) return undefined;
  const out: SearchResult[] = [];
  for (const r of list) {
    if (!r || typeof r !== "object") continue;
    const x = r as Record<string, unknown>;
    const url = typeof x.url === "string" ? x.url : "";
    if (!url) continue;
    const snippet = plain(backend === "brave" ? x.description : x.content);
    out.push({
      title: plain(x.title) || url,
      url,
      snippet: snippet.length > SNIPPET_CHARS ? headText(snippet, SNIPPET_CHARS) + "…" : snippet,
    });
  }
  return out;
}

/** The HTTP request of one search. */
function requestOf(
  s: WebSearchSettings,
  query: string,
  count: number,
  key: string | undefined,
): { url: string; init: RequestInit } {
  const endpoint = endpointOf(s);
  const headers: Record<string, string> = {
    accept: "application/json",
    "user-agent": "coyote-web-search/1.0",
  };
  if (s.backend === "tavily") {
    if (key) headers.authorization = `Bearer ${key}`;
    headers["content-type"] = "application/json";
    return {
      url: endpoint,
      init: { method: "POST", headers, body: JSON.stringify({ query, max_results: count }) },
    };
  }
  const u = new URL(endpoint);
  u.searchParams.set("q", query);
  if (s.backend === "searxng") u.searchParams.set("format", "json");
  else {
    u.searchParams.set("count", String(count));
    if (key) headers["x-subscription-token"] = key;
  }
  return { url: u.href, init: { method: "GET", headers } };
}

/** What a failed answer says, in one short line (its body's head, markup removed). */
function bodyHead(text: string): string {
  const t = plain(text);
  return t ? `: ${headText(t, 200)}${t.length > 200 ? "…" : ""}` : "";
}

/**
 * Runs one search. Never throws: failures are returned as `{error}` naming the backend.
 * `key` is the API key (brave, tavily) and appears in no message.
 */
export async function search(
  s: WebSearchSettings,
  query: string,
  count: number,
  key: string | undefined,
  signal: AbortSignal,
): Promise<{ results: SearchResult[] } | { error: string }> {
  const name = BACKENDS[s.backend].name;
  const { url, init } = requestOf(s, query, count, key);
  const scrub = (m: string) => (key ? m.split(key).join("[redacted]") : m);
  let res: Response;
  let text: string;
  try {
    res = await fetch(url, { ...init, signal, redirect: "manual" });
    text = await res.text();
  } catch (e) {
    if (signal.aborted) return { error: `${name} did not answer within ${SEARCH_TIMEOUT_MS} ms` };
    return { error: scrub(`cannot reach ${name} at ${hostOf(url)}: ${(e as Error).message}`) };
  }
  if (text.length > MAX_BODY_CHARS) text = text.slice(0, MAX_BODY_CHARS);
  if (!res.ok) {
    const hint = s.backend === "searxng" && res.status === 403
      ? " (SearXNG refuses format=json unless `json` is in search.formats of its settings.yml)"
      : res.status === 401 || res.status === 403
      ? ` (check the key in $${s.api_key_env ?? BACKENDS[s.backend].keyEnv})`
      : "";
    return {
      error: scrub(
        `${name} answered HTTP ${res.status}${res.statusText ? " " + res.statusText : ""}${
          bodyHead(text)
        }${hint}`,
      ),
    };
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    const type = res.headers.get("content-type") ?? "no content type";
    return {
      error: scrub(`${name} answered something that is not JSON (${type})${bodyHead(text)}`),
    };
  }
  const results = resultsOf(s.backend, body);
  if (!results) {
    return {
      error: `${name} answered JSON without a result list (${
        s.backend === "brave" ? "web.results" : "results"
      })`,
    };
  }
  return { results: results.slice(0, count) };
}

/** The results as the model reads them (numbered; capped at {@link MAX_TEXT_CHARS}). */
export function formatResults(query: string, backend: string, results: SearchResult[]): string {
  if (!results.length) return `No results for ${JSON.stringify(query)} (${backend}).`;
  let out = `Results for ${JSON.stringify(query)} (${backend}):\n`;
  let shown = 0;
  for (const [i, r] of results.entries()) {
    const item = `\n${i + 1}. ${r.title}\n   ${r.url}${r.snippet ? `\n   ${r.snippet}` : ""}\n`;
    if (out.length + item.length > MAX_TEXT_CHARS) break;
    out += item;
    shown++;
  }
  if (shown < results.length) out += `\n[… ${results.length - shown} more results cut …]\n`;
  return out.trimEnd();
}

/**
 * `web_search`'s input as JSON Schema (it is not generated data: its description names the
 * configured default), as `z.toJSONSchema` makes ./inputs.ts `webSearchInput(defaultResults)`
 * (tests/web_search_test.ts compares them), so zod does not load with the tool.
 */
export function webSearchSchema(defaultResults: number) {
  return builtinSchema<InferInput<ReturnType<typeof webSearchInput>>>({
    type: "object",
    properties: {
      query: { type: "string", minLength: 1, description: "What to search for" },
      max_results: {
        description: `Results wanted (default ${defaultResults}, at most ${MAX_RESULTS})`,
        type: "integer",
        minimum: 1,
        maximum: MAX_RESULTS,
      },
    },
    required: ["query"],
  });
}

/** The `web_search` tool for these settings (see the module doc). */
export function webSearchTool(s: WebSearchSettings) {
  const name = BACKENDS[s.backend].name;
  const endpoint = endpointOf(s);
  return defineTool({
    name: "web_search",
    description:
      "Search the web; returns up to max_results results (title, URL, snippet). Fetch a result's page with web_fetch.",
    input: webSearchSchema(s.max_results ?? DEFAULT_RESULTS),
    kind: "fetch",
    readOnly: true,
    title: (i) => `Search the web: ${i.query}`,
    access: () => [{ type: "net", host: hostOf(endpoint) }],
    async run(input, ctx): Promise<ToolResult> {
      const keyEnv = s.api_key_env ?? BACKENDS[s.backend].keyEnv;
      let key: string | undefined;
      if (keyEnv) {
        try {
          key = Deno.env.get(keyEnv)?.trim() || undefined;
        } catch {
          key = undefined;
        }
        if (!key && s.backend !== "searxng") {
          return {
            content: `web_search: ${name} needs an API key: $${keyEnv} is not set ` +
              `(config web_search.api_key_env names the variable; docs/web.md)`,
            isError: true,
          };
        }
      }
      const count = input.max_results ?? s.max_results ?? DEFAULT_RESULTS;
      const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(SEARCH_TIMEOUT_MS)]);
      const out = await search(s, input.query, count, key, signal);
      if ("error" in out) {
        if (ctx.signal.aborted) return { content: "cancelled", isError: true };
        return { content: `web_search: ${out.error}`, isError: true };
      }
      return {
        content: formatResults(input.query, name, out.results),
        rawOutput: { backend: s.backend, query: input.query, results: out.results },
      };
    },
  });
}
