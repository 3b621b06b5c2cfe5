/**
 * Small builders shared by tests and benches: a tool context for calling a
 * tool's `run` directly, and resolved `AppOptions` with test defaults.
 * @module
 */
import assert from "node:assert/strict";
import type { HostServices, ToolContext, ToolResult } from "../../sdk/mod.ts";
import type { AppOptions } from "../../core/config/app_options.ts";

/** A `ToolContext` with no-op logging/progress and permission always refused. */
export function toolContext(
  opts: { cwd?: string; signal?: AbortSignal; host?: HostServices; toolCallId?: string } = {},
): ToolContext {
  const noop = () => {};
  return {
    cwd: opts.cwd ?? "/",
    signal: opts.signal ?? new AbortController().signal,
    toolCallId: opts.toolCallId ?? "t1",
    log: { debug: noop, info: noop, warn: noop, error: noop },
    progress: noop,
    requestPermission: () => Promise.resolve(false),
    host: opts.host,
  };
}

/** Calls a tool's `run` and normalises a string result to `{content}`. */
export async function runTool(
  // deno-lint-ignore no-explicit-any
  tool: { run: (i: any, c: ToolContext) => unknown },
  input: unknown,
  ctx: ToolContext,
): Promise<ToolResult> {
  const r = await tool.run(input, ctx);
  return typeof r === "string" ? { content: r } : r as ToolResult;
}

/**
 * `AppOptions` for tests: headless, no rules, no plugins, 10 turns, and the workspace trusted
 * (`trustWorkspace: true`, as `--trust-workspace`: tests of workspace MCP servers and plugins need
 * it; trust's own tests pass `trustWorkspace: false`); `extra` overrides.
 */
export function testApp(
  dirs: { cwd: string; configDir: string; dataDir: string },
  extra: Partial<AppOptions> = {},
): AppOptions {
  return {
    ...dirs,
    config: {},
    allow: [],
    deny: [],
    dangerouslySkipPermissions: false,
    plugins: [],
    noWorkspaceMcp: false,
    headless: true,
    maxTurns: 10,
    trustWorkspace: true,
    ...extra,
  };
}

/** Asserts `r` is a tool error matching `pattern` whose text contains none of `mustNotContain`. */
export function assertToolError(r: ToolResult, pattern: RegExp, ...mustNotContain: string[]): void {
  assert.equal(r.isError, true, `expected a tool error, got: ${r.content.slice(0, 300)}`);
  assert.match(r.content, pattern);
  for (const s of mustNotContain) assert.ok(!r.content.includes(s), `result leaks ${s}`);
}
