/**
 * A model's context window from the server's own model metadata (`GET {baseURL}/models`, the
 * OpenAI "list models" endpoint), for models missing from the `models:` table. Servers name it
 * differently: vLLM `max_model_len`, OpenRouter and LM Studio `context_length`, some proxies
 * `context_window` / `max_context_length`, llama.cpp `meta.n_ctx_train`. One request per server
 * and process, at most {@link METADATA_TIMEOUT_MS}; any failure means "unknown" (never an error).
 * @module
 */

/** The longest wait for the model list (ms). */
export const METADATA_TIMEOUT_MS = 1000;

const cache = new Map<string, Promise<Map<string, number>>>();

/** The window (tokens) one `/models` entry states, if any. */
export function windowOf(entry: Record<string, unknown>): number | undefined {
  const meta = entry.meta as Record<string, unknown> | undefined;
  for (
    const v of [
      entry.context_window,
      entry.context_length,
      entry.max_model_len,
      entry.max_context_length,
      meta?.n_ctx_train,
      meta?.n_ctx,
    ]
  ) {
    if (typeof v === "number" && Number.isInteger(v) && v > 0) return v;
  }
  return undefined;
}

async function fetchWindows(
  baseURL: string,
  apiKey: string,
  headers: Record<string, string> | undefined,
  fetchFn: typeof fetch = fetch,
): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), METADATA_TIMEOUT_MS);
  try {
    const res = await fetchFn(`${baseURL.replace(/\/+$/, "")}/models`, {
      headers: { ...headers, authorization: `Bearer ${apiKey}` },
      signal: ctrl.signal,
    });
    if (!res.ok) {
      await res.body?.cancel();
      return out;
    }
    const body = await res.json() as { data?: Record<string, unknown>[] };
    for (const e of Array.isArray(body?.data) ? body.data : []) {
      const w = e && typeof e.id === "string" ? windowOf(e) : undefined;
      if (w) out.set(e.id as string, w);
    }
  } catch {
    /* unknown */
  } finally {
    clearTimeout(timer);
  }
  return out;
}

/** Starts (or reuses) the lookup for a server; resolves with model id → window. */
export function serverWindows(p: {
  baseURL: string;
  apiKey: string;
  headers?: Record<string, string>;
  /** The provider's `fetch` (core/provider/types.ts `ProviderConfig.fetch`), default the global one. */
  fetch?: typeof fetch;
}): Promise<Map<string, number>> {
  let hit = cache.get(p.baseURL);
  if (!hit) {
    hit = fetchWindows(p.baseURL, p.apiKey, p.headers, p.fetch);
    cache.set(p.baseURL, hit);
  }
  return hit;
}

/** The window learned for `model` from `baseURL`, once the lookup has finished. */
export function learnedWindow(baseURL: string, model: string): number | undefined {
  return settled.get(baseURL)?.get(model);
}
const settled = new Map<string, Map<string, number>>();

/** Like {@link serverWindows}, remembering the result for {@link learnedWindow}. */
export async function learnServerWindows(p: {
  baseURL: string;
  apiKey: string;
  headers?: Record<string, string>;
  fetch?: typeof fetch;
}): Promise<void> {
  settled.set(p.baseURL, await serverWindows(p));
}
