/**
 * user__* (headless needs_human JSON and the askUser route), todo__write
 * (plan), web_fetch against a loopback Deno.serve, and the core tool set's
 * schema contract and size.
 */
import assert from "node:assert/strict";
import { ToolRegistry } from "../core/tools/registry.ts";
import type { HostServices, ToolContext, UserQuestion } from "../sdk/mod.ts";
import {
  userCheckboxTool,
  userConfirmTool,
  userInputTool,
  userSelectTool,
} from "../plugins/user/mod.ts";
import { todoWriteTool } from "../plugins/todo/mod.ts";
import { webFetchTool } from "../plugins/web/mod.ts";
import { corePlugins, toolSchemasSize } from "../plugins/mod.ts";
import { NAMED_ONLY_TOOLS } from "../core/agents/resolve.ts";
import { runTool, toolContext } from "./support/fixtures.ts";

const run = runTool;
function ctxFor(host?: HostServices, signal?: AbortSignal): ToolContext {
  return toolContext({ host, signal });
}

Deno.test("user__*: headless returns needs_human JSON at once", async () => {
  const cases = [
    [userSelectTool, { question: "Which db?", options: ["pg", "sqlite"] }, "select"],
    [userConfirmTool, { question: "Deploy?", default: false }, "confirm"],
    [userInputTool, { question: "Name?" }, "input"],
    [userCheckboxTool, { question: "Features?", options: ["a", "b"] }, "checkbox"],
  ] as const;
  for (const [tool, input, action] of cases) {
    const r = await run(tool, input, ctxFor());
    assert.equal(r.isError, undefined);
    const body = JSON.parse(r.content);
    assert.equal(body.needs_human, true);
    assert.equal(body.action, action);
    assert.equal(body.question, input.question);
    assert.deepEqual(body.options, "options" in input ? input.options : []);
    assert.match(body.guidance, /No human is available/);
    assert.match(body.guidance, /default/);
    assert.equal(tool.kind, "other");
    assert.equal(tool.readOnly, true);
  }
  const withDefault = JSON.parse(
    (await run(userConfirmTool, { question: "Go?", default: true }, ctxFor())).content,
  );
  assert.equal(withDefault.default, true);
});

Deno.test("user__*: asks through host.askUser and formats answers; failure falls back to needs_human", async () => {
  const asked: UserQuestion[] = [];
  const answers: (string | string[] | boolean)[] = ["pg", true, "Ada", ["a", "b"]];
  const host: HostServices = {
    askUser: (q) => {
      asked.push(q);
      return Promise.resolve(answers.shift()!);
    },
  };
  assert.equal(
    (await run(userSelectTool, { question: "Db?", options: ["pg", "x"] }, ctxFor(host))).content,
    "pg",
  );
  assert.equal((await run(userConfirmTool, { question: "Go?" }, ctxFor(host))).content, "yes");
  assert.equal(
    (await run(userInputTool, { question: "Name?", default: "Bob" }, ctxFor(host))).content,
    "Ada",
  );
  assert.equal(
    (await run(userCheckboxTool, { question: "F?", options: ["a", "b", "c"] }, ctxFor(host)))
      .content,
    '["a","b"]',
  );
  assert.deepEqual(asked.map((q) => q.action), ["select", "confirm", "input", "checkbox"]);
  assert.equal(asked[2].default, "Bob");

  const broken: HostServices = { askUser: () => Promise.reject(new Error("client went away")) };
  const r = await run(userConfirmTool, { question: "Go?" }, ctxFor(broken));
  const body = JSON.parse(r.content);
  assert.equal(body.needs_human, true);
  assert.match(body.guidance, /client went away/);

  const ac = new AbortController();
  const pending: HostServices = {
    askUser: (_q, signal) =>
      new Promise((_, reject) =>
        signal.addEventListener("abort", () => reject(new Error("aborted")))
      ),
  };
  const p = run(userInputTool, { question: "?" }, ctxFor(pending, ac.signal));
  ac.abort();
  const cancelled = await p;
  assert.equal(cancelled.isError, true);
  assert.match(cancelled.content, /cancelled/);
});

Deno.test("user__select: schema rejects an empty options list", async () => {
  const r = new ToolRegistry([userSelectTool]);
  assert.equal((await r.validate("user__select", { question: "q", options: [] })).ok, false);
  assert.equal((await r.validate("user__select", { question: "q", options: ["a"] })).ok, true);
});

Deno.test("todo__write: replaces the list, returns an ACP plan and counts", async () => {
  const r = await run(todoWriteTool, {
    todos: [
      { content: "Read the failing test", status: "completed", priority: "high" },
      { content: "Fix the bug", status: "in_progress" },
      { content: "Run the suite", status: "pending", priority: "low" },
      { content: "Write notes", status: "pending" },
    ],
  }, ctxFor());
  assert.equal(r.content, "Todo list updated: 1 completed, 1 in progress, 2 pending.");
  assert.deepEqual(r.plan, [
    { content: "Read the failing test", status: "completed", priority: "high" },
    { content: "Fix the bug", status: "in_progress", priority: "medium" },
    { content: "Run the suite", status: "pending", priority: "low" },
    { content: "Write notes", status: "pending", priority: "medium" },
  ]);
  assert.equal(todoWriteTool.kind, "think");
  const cleared = await run(todoWriteTool, { todos: [] }, ctxFor());
  assert.deepEqual(cleared.plan, []);
  const bad = await new ToolRegistry([todoWriteTool]).validate("todo__write", {
    todos: [{ content: "x", status: "done" }],
  });
  assert.equal(bad.ok, false);
});

/** A loopback site: HTML, text, JSON, binary, 404, redirects (same host and cross host), slow. */
function site() {
  const ac = new AbortController();
  let port = 0;
  const server: Deno.HttpServer<Deno.NetAddr> = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    signal: ac.signal,
    onListen() {},
  }, (req: Request): Response => {
    const u = new URL(req.url);
    switch (u.pathname) {
      case "/page":
        return new Response(
          `<!doctype html><html><head><title>T</title><style>.x{color:red}</style>
          <script>var secret = "do-not-show";</script></head><body>
          <h1>Release notes</h1><p>Coyote &amp; friends <b>ship</b> v1.</p>
          <ul><li>fast grep</li><li>guard</li></ul><img src="a.png" alt="pic"></body></html>`,
          { headers: { "content-type": "text/html; charset=utf-8" } },
        );
      case "/text":
        return new Response("plain text body", { headers: { "content-type": "text/plain" } });
      case "/json":
        return Response.json({ ok: true });
      case "/bin":
        return new Response(new Uint8Array([0, 1, 2, 3]), {
          headers: { "content-type": "image/png" },
        });
      case "/long":
        return new Response("z".repeat(5000), { headers: { "content-type": "text/plain" } });
      case "/moved":
        return new Response(null, { status: 302, headers: { location: "/text" } });
      case "/away": {
        return new Response(null, {
          status: 301,
          headers: { location: `http://localhost:${port}/text` },
        });
      }
      default:
        return new Response("<p>nothing here</p>", {
          status: 404,
          headers: { "content-type": "text/html" },
        });
    }
  });
  port = server.addr.port;
  const base = `http://127.0.0.1:${port}`;
  return { base, close: async () => (ac.abort(), await server.finished) };
}

Deno.test("web_fetch: HTML to readable text, text and JSON as is, binary described", async () => {
  const s = site();
  try {
    const page = await run(webFetchTool, { url: `${s.base}/page` }, ctxFor());
    assert.equal(page.isError, false);
    assert.match(
      page.content,
      new RegExp(`^URL: ${s.base}/page\\nStatus: 200 OK\\nContent-Type: text/html`),
    );
    assert.match(page.content, /RELEASE NOTES/i);
    assert.match(page.content, /Coyote & friends ship v1\./);
    assert.match(page.content, /\* fast grep\n \* guard/);
    assert.ok(!page.content.includes("do-not-show"), "script content removed");
    assert.ok(!page.content.includes("color:red"), "style content removed");
    assert.ok(!page.content.includes("<"), "no tags left");

    const text = await run(webFetchTool, { url: `${s.base}/text` }, ctxFor());
    assert.match(text.content, /\n\nplain text body$/);
    const json = await run(webFetchTool, { url: `${s.base}/json` }, ctxFor());
    assert.match(json.content, /\{"ok":true\}$/);
    const bin = await run(webFetchTool, { url: `${s.base}/bin` }, ctxFor());
    assert.match(bin.content, /\[image\/png content, 4 bytes, not shown\]$/);
  } finally {
    await s.close();
  }
});

Deno.test("web_fetch: bounded, 404 is an error, redirects, bad URLs, access", async () => {
  const s = site();
  try {
    const long = await run(webFetchTool, { url: `${s.base}/long`, max_chars: 1000 }, ctxFor());
    assert.match(long.content, /\n\nz{1000}\n\[… truncated: 1000 of 5000 chars shown …\]$/);

    const missing = await run(webFetchTool, { url: `${s.base}/nope` }, ctxFor());
    assert.equal(missing.isError, true);
    assert.match(missing.content, /Status: 404/);
    assert.match(missing.content, /nothing here/);

    const moved = await run(webFetchTool, { url: `${s.base}/moved` }, ctxFor());
    assert.match(moved.content, new RegExp(`^URL: ${s.base}/text\\n`));
    assert.match(moved.content, /plain text body$/);

    const away = await run(webFetchTool, { url: `${s.base}/away` }, ctxFor());
    assert.equal(away.isError, undefined);
    assert.match(away.content, /redirects \(301\) to another host: http:\/\/localhost:\d+\/text/);

    const bad = await run(webFetchTool, { url: "not a url" }, ctxFor());
    assert.equal(bad.isError, true);
    const ftp = await run(webFetchTool, { url: "file:///etc/passwd" }, ctxFor());
    assert.equal(ftp.isError, true);
    assert.match(ftp.content, /only http and https/);

    const closedPort = await run(webFetchTool, { url: "http://127.0.0.1:1/" }, ctxFor());
    assert.equal(closedPort.isError, true);
    assert.match(closedPort.content, /fetch failed/);

    const host = new URL(s.base).host;
    assert.deepEqual(webFetchTool.access!({ url: `${s.base}/x` }, "/"), [{ type: "net", host }]);
    assert.equal(webFetchTool.kind, "fetch");
  } finally {
    await s.close();
  }
});

Deno.test("core tools: contract names, valid JSON Schemas, total size within budget", () => {
  const names = corePlugins.flatMap((p) => (p.tools ?? []).map((t) => t.name));
  assert.deepEqual(names.sort(), [
    "ast_grep",
    "execute_command",
    "fs_cat",
    "fs_glob",
    "fs_grep",
    "fs_ls",
    "fs_patch",
    "fs_read",
    "fs_write",
    "todo__write",
    "user__checkbox",
    "user__confirm",
    "user__input",
    "user__select",
    "web_fetch",
  ]);
  for (const n of names) assert.match(n, /^[a-zA-Z0-9_-]{1,64}$/);
  // The budget is what an agent listing no tools sends: without the named-only fs_cat, ast_grep.
  const size = toolSchemasSize(corePlugins.map((p) => ({
    ...p,
    tools: (p.tools ?? []).filter((t) => !NAMED_ONLY_TOOLS.has(t.name)),
  })));
  assert.ok(size.chars <= 10_000, `tool schemas are ${size.chars} chars`);
  for (const t of size.tools as { function: { parameters: { type: string } } }[]) {
    assert.equal(t.function.parameters.type, "object");
  }
  const byName = Object.fromEntries(
    (size.tools as {
      function: { name: string; parameters: { properties: object; required?: string[] } };
    }[])
      .map((t) => [t.function.name, t.function.parameters]),
  );
  assert.deepEqual(Object.keys(byName.fs_read.properties), ["path", "offset", "limit"]);
  assert.deepEqual(byName.fs_read.required, ["path"]);
  assert.deepEqual(Object.keys(byName.fs_grep.properties), [
    "pattern",
    "path",
    "glob",
    "ignore_case",
  ]);
  assert.deepEqual(Object.keys(byName.fs_patch.properties), [
    "path",
    "old_string",
    "new_string",
    "replace_all",
  ]);
  assert.deepEqual(Object.keys(byName.execute_command.properties), ["command", "timeout_ms"]);
  assert.deepEqual(Object.keys(byName.web_fetch.properties), ["url", "max_chars"]);
  // The rest of issue 2's contract: names and arguments, required exactly as listed there.
  const contract: Record<string, [string[], string[]]> = {
    fs_ls: [["path"], []],
    fs_glob: [["pattern", "path"], ["pattern"]],
    fs_grep: [["pattern", "path", "glob", "ignore_case"], ["pattern"]],
    fs_write: [["path", "content"], ["path", "content"]],
    fs_patch: [["path", "old_string", "new_string", "replace_all"], [
      "path",
      "old_string",
      "new_string",
    ]],
    execute_command: [["command", "timeout_ms"], ["command"]],
  };
  for (const [name, [props, required]] of Object.entries(contract)) {
    assert.deepEqual(Object.keys(byName[name].properties), props, name);
    assert.deepEqual(byName[name].required ?? [], required, name);
  }
  for (const n of ["user__select", "user__confirm", "user__input", "user__checkbox"]) {
    assert.ok("question" in byName[n].properties, n);
  }
});
