/**
 * `web_search` (plugins/web/search.ts; docs/web.md) against loopback fakes of each
 * backend's HTTP API — SearXNG (`/search?format=json`), Brave Search (`X-Subscription-Token`,
 * `web.results`), Tavily (`POST /search`, bearer key) — with their error shapes (HTTP errors,
 * HTML instead of JSON, JSON without results), the config checks, and a real run: the tool is
 * offered only when configured, sits under `Net` rules, and the librarian has it.
 * @module
 */
import assert from "node:assert/strict";
import type { ToolContext, ToolResult } from "../sdk/mod.ts";
import { type WebSearchSettings, webSearchTool } from "../plugins/web/search.ts";
import { loadConfig } from "../core/config/config.ts";
import { childEnv, makeCoyoteEnv, parseJsonLines, runCoyote } from "./support/run_coyote.ts";
import { type RecordedRequest, startModelServer } from "./support/model_server.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const BRAVE_KEY = "brave-SECRET-key-0123456789";
const TAVILY_KEY = "tvly-SECRET-key-0123456789";

interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Headers;
  body: string;
}

/** One loopback server faking the three APIs under /searx, /brave, /tavily (and broken variants). */
function fakeBackends() {
  const seen: Seen[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const u = new URL(req.url);
    const body = await req.text();
    seen.push({
      method: req.method,
      path: u.pathname,
      query: u.searchParams,
      headers: req.headers,
      body,
    });
    const json = (v: unknown, status = 200) =>
      new Response(JSON.stringify(v), { status, headers: { "content-type": "application/json" } });
    const q = u.searchParams.get("q") ?? "";
    switch (u.pathname) {
      case "/searx/search":
        if (u.searchParams.get("format") !== "json") {
          return new Response("html page", { status: 200 });
        }
        return json({
          query: q,
          results: [
            {
              title: "Deno &amp; <b>friends</b>",
              url: "https://deno.com/",
              content: "The <strong>Deno</strong> runtime",
            },
            { title: "Second", url: "https://example.org/2", content: "x".repeat(1000) },
            { title: "no url" },
            { title: "Third", url: "https://example.org/3", content: "" },
          ],
        });
      case "/searx403/search":
        return new Response("<html><title>403 Forbidden</title></html>", {
          status: 403,
          statusText: "Forbidden",
          headers: { "content-type": "text/html" },
        });
      case "/searxhtml/search":
        return new Response("<html><body>Welcome to my instance</body></html>", {
          headers: { "content-type": "text/html" },
        });
      case "/searxshape/search":
        return json({ answers: [] });
      case "/brave": {
        if (req.headers.get("x-subscription-token") !== BRAVE_KEY) {
          // Echoes what it got, as some gateways do: the key must not reach the result.
          return json({ error: `bad token ${req.headers.get("x-subscription-token")}` }, 401);
        }
        if (q === "nothing") return json({ type: "search", query: { original: q } });
        return json({
          type: "search",
          web: {
            results: [
              {
                title: "Brave one",
                url: "https://brave.example/1",
                description: "first <strong>hit</strong>",
              },
              { title: "Brave two", url: "https://brave.example/2", description: "second" },
            ],
          },
        });
      }
      case "/brave500":
        return new Response(`internal error for token ${req.headers.get("x-subscription-token")}`, {
          status: 500,
          statusText: "Internal Server Error",
        });
      case "/tavily/search": {
        if (req.method !== "POST") return json({ detail: "method" }, 405);
        if (req.headers.get("authorization") !== `Bearer ${TAVILY_KEY}`) {
          return json({ detail: { error: "Unauthorized: missing or invalid API key." } }, 401);
        }
        const b = JSON.parse(body);
        return json({
          query: b.query,
          results: Array.from({ length: 10 }, (_, i) => ({
            title: `Tavily ${i + 1}`,
            url: `https://tavily.example/${i + 1}`,
            content: `about ${b.query}`,
            score: 0.9,
          })),
        });
      }
      case "/tavilybad/search":
        return new Response("{not json", { headers: { "content-type": "application/json" } });
    }
    return new Response("not found", { status: 404 });
  });
  const base = `http://127.0.0.1:${server.addr.port}`;
  return { base, port: server.addr.port, seen, close: () => server.shutdown() };
}

function ctx(signal = new AbortController().signal): ToolContext {
  return {
    cwd: "/tmp",
    signal,
    toolCallId: "call_1",
    log: { debug() {}, info() {}, warn() {}, error() {} },
    progress() {},
    requestPermission: () => Promise.resolve(false),
  };
}

async function call(s: WebSearchSettings, input: Record<string, unknown>): Promise<ToolResult> {
  const r = await webSearchTool(s).run(input as never, ctx());
  return typeof r === "string" ? { content: r } : r;
}

function withEnv<T>(vars: Record<string, string | undefined>, f: () => Promise<T>): Promise<T> {
  const old: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(vars)) {
    old[k] = Deno.env.get(k);
    if (v === undefined) Deno.env.delete(k);
    else Deno.env.set(k, v);
  }
  return f().finally(() => {
    for (const [k, v] of Object.entries(old)) {
      if (v === undefined) Deno.env.delete(k);
      else Deno.env.set(k, v);
    }
  });
}

Deno.test("web_search: SearXNG — format=json, markup removed, snippets capped, results without a URL dropped, max_results", async () => {
  const f = await fakeBackends();
  try {
    const s: WebSearchSettings = { backend: "searxng", url: `${f.base}/searx/` };
    const tool = webSearchTool(s);
    assert.deepEqual(tool.access?.({ query: "deno" } as never, "/tmp"), [{
      type: "net",
      host: `127.0.0.1:${f.port}`,
    }]);
    const r = await call(s, { query: "deno runtime" });
    assert.ok(!r.isError, String(r.content));
    assert.equal(f.seen[0].path, "/searx/search");
    assert.equal(f.seen[0].query.get("q"), "deno runtime");
    assert.equal(f.seen[0].query.get("format"), "json");
    const text = String(r.content);
    assert.match(text, /^Results for "deno runtime" \(SearXNG\):/);
    assert.match(text, /1\. Deno & friends\n {3}https:\/\/deno\.com\/\n {3}The Deno runtime/);
    assert.match(text, /2\. Second\n {3}https:\/\/example\.org\/2\n {3}x{400}…/);
    assert.match(text, /3\. Third\n {3}https:\/\/example\.org\/3$/);
    assert.doesNotMatch(text, /no url/);
    const raw = r.rawOutput as Json;
    assert.equal(raw.results.length, 3);
    assert.deepEqual(Object.keys(raw.results[0]), ["title", "url", "snippet"]);
    const one = await call(s, { query: "deno", max_results: 1 });
    assert.equal((one.rawOutput as Json).results.length, 1);
  } finally {
    await f.close();
  }
});

Deno.test("web_search: SearXNG errors — HTTP 403 (json format off), HTML instead of JSON, JSON without results, unreachable", async () => {
  const f = await fakeBackends();
  try {
    const r403 = await call({ backend: "searxng", url: `${f.base}/searx403` }, { query: "q" });
    assert.equal(r403.isError, true);
    assert.match(
      String(r403.content),
      /^web_search: SearXNG answered HTTP 403 Forbidden: 403 Forbidden \(SearXNG refuses format=json unless `json` is in search\.formats/,
    );
    const html = await call({ backend: "searxng", url: `${f.base}/searxhtml` }, { query: "q" });
    assert.equal(html.isError, true);
    assert.match(
      String(html.content),
      /SearXNG answered something that is not JSON \(text\/html\): Welcome to my instance/,
    );
    const shape = await call({ backend: "searxng", url: `${f.base}/searxshape` }, { query: "q" });
    assert.equal(shape.isError, true);
    assert.match(String(shape.content), /SearXNG answered JSON without a result list \(results\)/);
    const port = f.port;
    await f.close();
    const gone = await call({ backend: "searxng", url: `http://127.0.0.1:${port}` }, {
      query: "q",
    });
    assert.equal(gone.isError, true);
    assert.match(
      String(gone.content),
      new RegExp(`cannot reach SearXNG at 127\\.0\\.0\\.1:${port}`),
    );
  } finally {
    await f.close().catch(() => {});
  }
});

Deno.test("web_search: Brave — key from the env variable in X-Subscription-Token, count, no web results, the key never in a result", async () => {
  const f = await fakeBackends();
  try {
    const s: WebSearchSettings = {
      backend: "brave",
      url: `${f.base}/brave`,
      api_key_env: "TEST_BRAVE_KEY",
    };
    await withEnv({ TEST_BRAVE_KEY: BRAVE_KEY }, async () => {
      const r = await call(s, { query: "rust async", max_results: 2 });
      assert.ok(!r.isError, String(r.content));
      assert.equal(f.seen[0].query.get("count"), "2");
      assert.equal(f.seen[0].headers.get("x-subscription-token"), BRAVE_KEY);
      assert.match(
        String(r.content),
        /Brave Search\):\n\n1\. Brave one\n {3}https:\/\/brave\.example\/1\n {3}first hit/,
      );
      const none = await call(s, { query: "nothing" });
      assert.ok(!none.isError);
      assert.equal(none.content, 'No results for "nothing" (Brave Search).');
      const r500 = await call({ ...s, url: `${f.base}/brave500` }, { query: "x" });
      assert.equal(r500.isError, true);
      assert.match(
        String(r500.content),
        /Brave Search answered HTTP 500 Internal Server Error: internal error for token \[redacted\]/,
      );
      assert.ok(!JSON.stringify(r500).includes(BRAVE_KEY));
    });
    await withEnv({ TEST_BRAVE_KEY: "wrong-key-abcdefghijkl" }, async () => {
      const bad = await call(s, { query: "x" });
      assert.equal(bad.isError, true);
      assert.match(String(bad.content), /HTTP 401.*\(check the key in \$TEST_BRAVE_KEY\)/);
      assert.ok(!String(bad.content).includes("wrong-key-abcdefghijkl"));
    });
    await withEnv({ TEST_BRAVE_KEY: undefined }, async () => {
      const missing = await call(s, { query: "x" });
      assert.equal(missing.isError, true);
      assert.match(
        String(missing.content),
        /Brave Search needs an API key: \$TEST_BRAVE_KEY is not set/,
      );
    });
  } finally {
    await f.close();
  }
});

Deno.test("web_search: Tavily — POST {query, max_results} with a bearer key, results capped; bad JSON is a clear error", async () => {
  const f = await fakeBackends();
  try {
    await withEnv({ TAVILY_API_KEY: TAVILY_KEY }, async () => {
      const s: WebSearchSettings = {
        backend: "tavily",
        url: `${f.base}/tavily/search`,
        max_results: 3,
      };
      const r = await call(s, { query: "zod v4" });
      assert.ok(!r.isError, String(r.content));
      assert.equal(f.seen[0].method, "POST");
      assert.deepEqual(JSON.parse(f.seen[0].body), { query: "zod v4", max_results: 3 });
      assert.equal((r.rawOutput as Json).results.length, 3, "the server sent 10; max_results is 3");
      assert.match(
        String(r.content),
        /3\. Tavily 3\n {3}https:\/\/tavily\.example\/3\n {3}about zod v4$/,
      );
      const bad = await call({ ...s, url: `${f.base}/tavilybad/search` }, { query: "x" });
      assert.equal(bad.isError, true);
      assert.match(
        String(bad.content),
        /Tavily answered something that is not JSON \(application\/json\): \{not json/,
      );
    });
    await withEnv({ TAVILY_API_KEY: "tvly-wrong-0123456789" }, async () => {
      const r = await call({ backend: "tavily", url: `${f.base}/tavily/search` }, { query: "x" });
      assert.equal(r.isError, true);
      assert.match(
        String(r.content),
        /Tavily answered HTTP 401.*Unauthorized: missing or invalid API key.*\$TAVILY_API_KEY/,
      );
    });
  } finally {
    await f.close();
  }
});

Deno.test("web_search: config — an unknown backend, SearXNG without url, a bad url are errors naming the field", async () => {
  const dir = await Deno.makeTempDir({ prefix: "coyote-ws-cfg-" });
  try {
    const check = async (yaml: string, re: RegExp) => {
      await Deno.writeTextFile(`${dir}/config.yaml`, yaml);
      await assert.rejects(() => loadConfig(dir), (e: Error) => {
        assert.match(e.message, re);
        return true;
      });
    };
    await check(
      "web_search:\n  backend: google\n",
      /web_search\.backend.*searxng, brave or tavily/,
    );
    await check(
      "web_search:\n  backend: searxng\n",
      /web_search\.url.*SearXNG needs the instance URL/,
    );
    await check(
      "web_search:\n  backend: brave\n  url: ftp://x\n",
      /web_search\.url.*http\(s\) URL/,
    );
    await check("web_search:\n  backend: brave\n  max_results: 50\n", /web_search\.max_results/);
    await Deno.writeTextFile(`${dir}/config.yaml`, "web_search:\n  backend: brave\n");
    assert.deepEqual((await loadConfig(dir)).config.web_search, { backend: "brave" });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("web_search: a run offers the tool only when configured, under Net rules; the librarian has it", async () => {
  const f = await fakeBackends();
  const env = await makeCoyoteEnv();
  const ws = await Deno.makeTempDir({ prefix: "coyote-ws-run-" });
  const requests: RecordedRequest[] = [];
  const server = await startModelServer({
    script: (req) => {
      const msgs = (req.body as Json).messages;
      if (msgs.at(-1).role === "tool") {
        return { text: `saw: ${String(msgs.at(-1).content).slice(0, 60)}` };
      }
      return { tool_calls: [{ name: "web_search", arguments: { query: "deno" } }] };
    },
    onRequest: (r) => requests.push(r),
  });
  const toolNames = (r: RecordedRequest) =>
    ((r.body as Json).tools ?? []).map((t: Json) => t.function.name);
  try {
    const run = (args: string[]) =>
      runCoyote(["--headless", "--output-format", "stream-json", ...args, "search deno"], {
        cwd: ws,
        env: childEnv(env, { baseURL: server.baseURL }),
      });
    // Not configured: not offered (the model's call names an unknown tool).
    const off = await run([]);
    assert.equal(off.code, 0, off.stderr);
    assert.ok(!toolNames(requests[0]).includes("web_search"));
    assert.ok(toolNames(requests[0]).includes("web_fetch"));

    await Deno.writeTextFile(
      `${env.configDir}/config.yaml`,
      `web_search:\n  backend: searxng\n  url: ${f.base}/searx\n`,
    );
    // Configured, no Net rule: headless denies the ask, the backend is never contacted.
    const n = requests.length;
    const denied = await run([]);
    assert.equal(denied.code, 0, denied.stderr);
    assert.ok(toolNames(requests[n]).includes("web_search"));
    const res: Json = parseJsonLines(denied.stdout).at(-1);
    assert.equal(res.denied.length, 1, JSON.stringify(res.denied));
    assert.equal(res.denied[0].access.host, `127.0.0.1:${f.port}`);
    assert.equal(f.seen.length, 0);
    // Allowed by a Net rule: results reach the model.
    const ok = await run(["--allow", `Net(127.0.0.1:${f.port})`]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(f.seen.length, 1);
    assert.match(
      parseJsonLines(ok.stdout).at(-1)!.text as string,
      /saw: Results for "deno" \(SearXNG\)/,
    );
    // The librarian's tools include it.
    const m = requests.length;
    const lib = await run(["-a", "librarian", "--allow", `Net(127.0.0.1:${f.port})`]);
    assert.equal(lib.code, 0, lib.stderr);
    assert.ok(toolNames(requests[m]).includes("web_search"), toolNames(requests[m]).join(","));
  } finally {
    await server.close();
    await f.close();
    await env.cleanup();
    await Deno.remove(ws, { recursive: true }).catch(() => {});
  }
});
