/**
 * Coyote plugin SDK — the public, versioned contract between Coyote and the
 * tools, agents and skills that extend it (first-party packs under `plugins/`
 * and third-party plugins alike).
 *
 * A plugin is an ES module whose default export is the value returned by
 * {@link definePlugin}. Third-party plugins run inside a Deno Worker whose
 * permissions are the intersection of what the plugin declares in
 * `permissions` and what the user's policy allows; see `docs/plugins.md`.
 *
 * Compatibility: {@link SDK_VERSION} follows semver. Fields may be added in a
 * minor version; removing or changing the meaning of a field needs a major.
 *
 * This module has no imports at run time, so a bundled plugin stays small and
 * self-contained.
 * @module
 */

/**
 * Semver of this SDK contract.
 *
 * @example Recording the SDK a plugin was built with
 * ```ts
 * import { definePlugin, SDK_VERSION } from "@coyote/sdk";
 * import assert from "node:assert/strict";
 *
 * assert.match(SDK_VERSION, /^\d+\.\d+\.\d+$/);
 * // The host refuses a plugin whose `sdkVersion` major differs from its own.
 * const plugin = definePlugin({ name: "hello", version: "1.0.0" });
 * assert.equal(plugin.sdkVersion, SDK_VERSION);
 * ```
 */
export const SDK_VERSION = "1.4.0";

/**
 * A JSON Schema object (draft 2020-12 subset understood by OpenAI tool calling).
 *
 * @example A tool with a plain JSON Schema input (no zod needed)
 * ```ts
 * import { defineTool, type JsonSchema, type ToolContext } from "@coyote/sdk";
 * import assert from "node:assert/strict";
 *
 * const input: JsonSchema = {
 *   type: "object",
 *   properties: { name: { type: "string", description: "Who to greet" } },
 *   required: ["name"],
 *   additionalProperties: false,
 * };
 * const greet = defineTool({
 *   name: "hello_greet",
 *   description: "Greets someone by name.",
 *   input,
 *   readOnly: true,
 *   // The host validates against the schema first; `args` is typed as a record of unknowns.
 *   run: (args) => `Hello, ${String(args.name)}!`,
 * });
 *
 * const ctx: ToolContext = {
 *   cwd: "/work/project",
 *   signal: new AbortController().signal,
 *   toolCallId: "call_1",
 *   log: { debug() {}, info() {}, warn() {}, error() {} },
 *   progress() {},
 *   requestPermission: () => Promise.resolve(false),
 * };
 * assert.equal(await greet.run({ name: "Ada" }, ctx), "Hello, Ada!");
 * ```
 */
export type JsonSchema = { [key: string]: unknown };

/**
 * The structural part of a zod (v4) schema that Coyote relies on. Any object with
 * `safeParse` is treated as a validator; zod schemas are converted to JSON
 * Schema with `z.toJSONSchema` by the host.
 *
 * @example A helper that takes any zod schema
 * ```ts
 * import type { ZodLike } from "@coyote/sdk";
 * import { z } from "zod";
 * import assert from "node:assert/strict";
 *
 * function parseOr<T>(schema: ZodLike<T>, value: unknown, fallback: T): T {
 *   const r = schema.safeParse(value);
 *   return r.success ? r.data : fallback;
 * }
 *
 * const Port = z.number().int().min(1).max(65535);
 * assert.equal(parseOr(Port, 8080, 80), 8080);
 * assert.equal(parseOr(Port, "8080", 80), 80);
 * ```
 */
export interface ZodLike<T = unknown> {
  safeParse(
    value: unknown,
  ): { success: true; data: T } | { success: false; error: { message: string } };
  /** Present on zod v4 schemas. */
  readonly _zod?: unknown;
  /** Type-level marker used for inference (zod's `_output`). */
  readonly _output?: T;
}

/**
 * Infers the input type of a tool from its schema (zod, or a {@link TypedJsonSchema}) or falls back
 * to a record.
 *
 * @example The input type `run` receives
 * ```ts
 * import type { InferInput } from "@coyote/sdk";
 * import { z } from "zod";
 *
 * const Search = z.object({ pattern: z.string(), limit: z.number().int().optional() });
 * type SearchInput = InferInput<typeof Search>; // { pattern: string; limit?: number }
 *
 * const ok: SearchInput = { pattern: "TODO", limit: 20 };
 * // @ts-expect-error: `pattern` is a string
 * const bad: SearchInput["pattern"] = 42;
 *
 * // A plain JSON Schema gives a record of unknowns, to be narrowed by hand.
 * const loose: InferInput<{ type: "object" }> = { pattern: "TODO", limit: 10 };
 * ```
 */
export type InferInput<S> = S extends ZodLike<infer T> ? T
  : S extends { readonly _output?: infer T } ? unknown extends T ? { [key: string]: unknown } : T
  : { [key: string]: unknown };

/**
 * A plain JSON Schema that carries, at the type level only, the type of the values it accepts
 * (`_output`, the marker zod's schemas carry too; never set at run time). {@link InferInput} and
 * {@link defineTool} read it, so a tool with a JSON Schema input gets a typed `run(input)` without
 * loading zod. The type is a promise the author makes: the host validates against the schema,
 * nothing checks that the two agree. Added in SDK 1.4.
 *
 * @example A typed JSON Schema input
 * ```ts
 * import { defineTool, type InferInput, type TypedJsonSchema } from "@coyote/sdk";
 * import assert from "node:assert/strict";
 *
 * const input: TypedJsonSchema<{ path: string; limit?: number }> = {
 *   type: "object",
 *   properties: { path: { type: "string" }, limit: { type: "integer", minimum: 1 } },
 *   required: ["path"],
 * };
 * const head = defineTool({
 *   name: "notes_head",
 *   description: "Shows the first lines of a note.",
 *   input,
 *   readOnly: true,
 *   title: ({ path, limit }) => `Head ${path} (${limit ?? 10} lines)`, // `path` is a string
 *   run: ({ path }) => `nothing in ${path}`,
 * });
 * assert.equal(head.title?.({ path: "a.md" }), "Head a.md (10 lines)");
 *
 * type HeadInput = InferInput<typeof input>; // { path: string; limit?: number }
 * // @ts-expect-error: `path` is a string
 * const bad: HeadInput["path"] = 42;
 * ```
 */
export type TypedJsonSchema<T> = JsonSchema & { readonly _output?: T };

/**
 * What a tool does, as ACP's `ToolKind` (agent-client-protocol, schema `ToolKind`).
 * Frontends use it to pick an icon and to decide how much to show.
 *
 * @example Telling frontends what a tool does
 * ```ts
 * import { defineTool, type ToolKind } from "@coyote/sdk";
 * import { z } from "zod";
 * import assert from "node:assert/strict";
 *
 * const kind: ToolKind = "search";
 * const grep = defineTool({
 *   name: "notes_grep",
 *   description: "Finds lines of the notes that contain a word.",
 *   input: z.object({ word: z.string() }),
 *   kind,
 *   readOnly: true,
 *   run: ({ word }) => `no note mentions ${word}`,
 * });
 * assert.equal(grep.kind, "search");
 * ```
 */
export type ToolKind =
  | "read"
  | "edit"
  | "delete"
  | "move"
  | "search"
  | "execute"
  | "think"
  | "fetch"
  | "switch_mode"
  | "other";

/**
 * Permissions a plugin asks for. Nothing declared means nothing granted.
 * Relative paths resolve against the session's workspace (cwd); `~` expands to
 * the home directory. `net` entries are host names with an optional `:port`.
 * `run` entries are program names or absolute paths. `env` entries are
 * variable names.
 *
 * @example Declaring what a plugin needs
 * ```ts
 * import { definePlugin, type PluginPermissions } from "@coyote/sdk";
 * import assert from "node:assert/strict";
 *
 * const permissions: PluginPermissions = {
 *   read: ["."], // relative to the workspace; `~` is the home directory
 *   write: ["CHANGELOG.md"],
 *   net: ["api.github.com"], // host names, optionally `host:port`
 *   run: ["git"], // program names or absolute paths
 *   env: ["GITHUB_TOKEN"], // variable names
 * };
 * const plugin = definePlugin({ name: "release-notes", version: "1.2.0", permissions });
 * assert.deepEqual(plugin.permissions?.run, ["git"]);
 * ```
 */
export interface PluginPermissions {
  read?: string[];
  write?: string[];
  net?: string[];
  run?: string[];
  env?: string[];
}

/**
 * A file location a tool touched, as ACP's `ToolCallLocation` (absolute path, 1-based line).
 *
 * @example Pointing the user at the lines a search found
 * ```ts
 * import { defineTool, type ToolContext, type ToolLocation } from "@coyote/sdk";
 * import { z } from "zod";
 * import assert from "node:assert/strict";
 *
 * const todos = defineTool({
 *   name: "notes_todos",
 *   description: "Lists the TODO comments of the workspace.",
 *   input: z.object({}),
 *   readOnly: true,
 *   run: (_input, ctx) => {
 *     const hits: ToolLocation[] = [{ path: `${ctx.cwd}/src/main.ts`, line: 12 }];
 *     return { content: "src/main.ts:12: TODO: retry", locations: hits };
 *   },
 * });
 *
 * const ctx: ToolContext = {
 *   cwd: "/work/project",
 *   signal: new AbortController().signal,
 *   toolCallId: "call_1",
 *   log: { debug() {}, info() {}, warn() {}, error() {} },
 *   progress() {},
 *   requestPermission: () => Promise.resolve(false),
 * };
 * assert.deepEqual(await todos.run({}, ctx), {
 *   content: "src/main.ts:12: TODO: retry",
 *   locations: [{ path: "/work/project/src/main.ts", line: 12 }],
 * });
 * ```
 */
export interface ToolLocation {
  path: string;
  line?: number;
}

/**
 * A text diff of one file, as ACP's `Diff` content (absolute path; `oldText` null for new files).
 *
 * @example Showing the user what a tool changed
 * ```ts
 * import type { ToolDiff, ToolResult } from "@coyote/sdk";
 * import assert from "node:assert/strict";
 *
 * // A new file has no old text.
 * const created: ToolDiff = { path: "/work/project/NOTES.md", oldText: null, newText: "Hi\n" };
 * const edited: ToolDiff = { path: "/work/project/TODO.md", oldText: "Hi\n", newText: "Hello\n" };
 * const diffs = [created, edited];
 * const result: ToolResult = { content: "Created NOTES.md, edited TODO.md", diffs };
 * assert.equal(result.diffs?.filter((d) => d.oldText === null).length, 1);
 * ```
 */
export interface ToolDiff {
  path: string;
  oldText: string | null;
  newText: string;
}

/**
 * What a tool returns. A plain string is shorthand for `{ content: string }`.
 * `content` is what the model sees; `isError` marks a failed call (the model
 * sees the content as an error and the `tool_call` ends `failed`).
 *
 * @example Returning content, structured output or an error
 * ```ts
 * import { defineTool, type ToolContext, type ToolResult } from "@coyote/sdk";
 * import { z } from "zod";
 * import assert from "node:assert/strict";
 *
 * const notes: Record<string, string> = { groceries: "milk, eggs" };
 * const read = defineTool({
 *   name: "notes_read",
 *   description: "Reads a note by name.",
 *   input: z.object({ name: z.string() }),
 *   readOnly: true,
 *   run: ({ name }): ToolResult =>
 *     name in notes
 *       ? { content: notes[name], rawOutput: { name, chars: notes[name].length } }
 *       : { content: `no note named ${name}`, isError: true }, // the model sees an error
 * });
 *
 * const ctx: ToolContext = {
 *   cwd: "/work/project",
 *   signal: new AbortController().signal,
 *   toolCallId: "call_1",
 *   log: { debug() {}, info() {}, warn() {}, error() {} },
 *   progress() {},
 *   requestPermission: () => Promise.resolve(false),
 * };
 * assert.deepEqual(await read.run({ name: "todo" }, ctx), {
 *   content: "no note named todo",
 *   isError: true,
 * });
 * ```
 */
export interface ToolResult {
  content: string;
  isError?: boolean;
  /** Diffs shown to the user (ACP `diff` tool-call content). */
  diffs?: ToolDiff[];
  locations?: ToolLocation[];
  /** Structured output for frontends (ACP `rawOutput`); must be JSON-serialisable. */
  rawOutput?: unknown;
  /** The model's full plan/todo list; the engine emits it as an ACP `plan` update. */
  plan?: PlanItem[];
  /**
   * Images for the model (base64 `data`, e.g. `mimeType: "image/png"`), sent as OpenAI
   * `image_url` data-URL parts when the model accepts images (`models.<name>.images: true`);
   * otherwise the model sees `content` alone, which should say an image was there.
   */
  images?: { data: string; mimeType: string }[];
}

/**
 * One plan entry, as ACP's `PlanEntry`.
 *
 * @example Publishing the model's plan
 * ```ts
 * import type { PlanItem, ToolResult } from "@coyote/sdk";
 * import assert from "node:assert/strict";
 *
 * const plan: PlanItem[] = [
 *   { content: "Reproduce the failing test", priority: "high", status: "completed" },
 *   { content: "Fix the off-by-one in paginate()", priority: "high", status: "in_progress" },
 *   { content: "Add a regression test", priority: "medium", status: "pending" },
 * ];
 * // The engine turns `plan` into an ACP `plan` update.
 * const result: ToolResult = { content: "Plan updated: 1 of 3 done.", plan };
 * assert.equal(result.plan?.filter((p) => p.status === "completed").length, 1);
 * ```
 */
export interface PlanItem {
  content: string;
  priority: "high" | "medium" | "low";
  status: "pending" | "in_progress" | "completed";
}

/**
 * A question for the human from the `user__*` tools (see `HostServices.askUser`).
 *
 * @example Asking the human through the host (first-party tools)
 * ```ts
 * import type { ToolContext, UserQuestion } from "@coyote/sdk";
 * import assert from "node:assert/strict";
 *
 * async function ask(ctx: ToolContext, q: UserQuestion): Promise<string> {
 *   if (!ctx.host?.askUser) return `needs a human: ${q.question}`; // headless
 *   return String(await ctx.host.askUser(q, ctx.signal));
 * }
 *
 * const q: UserQuestion = {
 *   action: "select",
 *   question: "Which database?",
 *   options: ["postgres", "sqlite"],
 *   default: "sqlite",
 * };
 * // A host that takes the default answer stands in for the REPL prompt.
 * const ctx: ToolContext = {
 *   cwd: "/work/project",
 *   signal: new AbortController().signal,
 *   toolCallId: "call_1",
 *   log: { debug() {}, info() {}, warn() {}, error() {} },
 *   progress() {},
 *   requestPermission: () => Promise.resolve(false),
 *   host: { askUser: (q) => Promise.resolve(q.default ?? "") },
 * };
 * assert.equal(await ask(ctx, q), "sqlite");
 * assert.equal(await ask({ ...ctx, host: undefined }, q), "needs a human: Which database?");
 * ```
 */
export interface UserQuestion {
  action: "select" | "confirm" | "input" | "checkbox";
  question: string;
  options?: string[];
  /** Default answer, if any. */
  default?: string | string[] | boolean;
}

/**
 * Progress reported while a tool runs; surfaces as an ACP `tool_call_update`.
 *
 * @example Reporting progress from a long tool call
 * ```ts
 * import { defineTool, type ToolContext, type ToolProgress } from "@coyote/sdk";
 * import { z } from "zod";
 * import assert from "node:assert/strict";
 *
 * const index = defineTool({
 *   name: "notes_index",
 *   description: "Indexes the given note files.",
 *   input: z.object({ files: z.array(z.string()) }),
 *   run: ({ files }, ctx) => {
 *     files.forEach((file, i) => {
 *       ctx.progress({ title: "Indexing notes", message: `${i + 1}/${files.length} ${file}` });
 *     });
 *     return `indexed ${files.length} files`;
 *   },
 * });
 *
 * const updates: ToolProgress[] = [];
 * const ctx: ToolContext = {
 *   cwd: "/work/project",
 *   signal: new AbortController().signal,
 *   toolCallId: "call_1",
 *   log: { debug() {}, info() {}, warn() {}, error() {} },
 *   progress: (u) => updates.push(u),
 *   requestPermission: () => Promise.resolve(false),
 * };
 * await index.run({ files: ["a.md", "b.md"] }, ctx);
 * assert.deepEqual(updates.map((u) => u.message), ["1/2 a.md", "2/2 b.md"]);
 * ```
 */
export interface ToolProgress {
  /** Free-form text appended to the tool call's content. */
  message?: string;
  title?: string;
  locations?: ToolLocation[];
}

/**
 * A question for the human, resolved by the frontend (terminal prompt, ACP permission request, or headless denial).
 *
 * @example Confirming an action with the human first
 * ```ts
 * import { defineTool, type PermissionQuestion, type ToolContext } from "@coyote/sdk";
 * import { z } from "zod";
 * import assert from "node:assert/strict";
 *
 * const upload = defineTool({
 *   name: "share_upload",
 *   description: "Uploads a file to the team's paste server.",
 *   input: z.object({ path: z.string() }),
 *   async run({ path }, ctx) {
 *     const question: PermissionQuestion = {
 *       title: `Upload ${path} to paste.example.com`,
 *       detail: "The file becomes readable by anyone with the link.",
 *     };
 *     if (!(await ctx.requestPermission(question))) return "The user declined the upload.";
 *     return `uploaded ${path}`; // (the upload itself is left out here)
 *   },
 * });
 *
 * const ctx: ToolContext = {
 *   cwd: "/work/project",
 *   signal: new AbortController().signal,
 *   toolCallId: "call_1",
 *   log: { debug() {}, info() {}, warn() {}, error() {} },
 *   progress() {},
 *   requestPermission: () => Promise.resolve(false),
 * };
 * // Headless sessions and rejections both resolve `false`.
 * assert.equal(await upload.run({ path: "build.log" }, ctx), "The user declined the upload.");
 * ```
 */
export interface PermissionQuestion {
  /** Short title, e.g. "Upload build.log to example.com". */
  title: string;
  /** Optional longer explanation. */
  detail?: string;
}

/**
 * Logger that writes to stderr / the event stream, never to stdout.
 *
 * @example Logging from a tool (never to stdout)
 * ```ts
 * import { defineTool, type ToolContext, type ToolLogger } from "@coyote/sdk";
 * import { z } from "zod";
 * import assert from "node:assert/strict";
 *
 * const tidy = defineTool({
 *   name: "notes_tidy",
 *   description: "Trims trailing spaces of a note.",
 *   input: z.object({ text: z.string() }),
 *   run: ({ text }, ctx) => {
 *     const out = text.replace(/[ \t]+$/gm, "");
 *     ctx.log.debug(`removed ${text.length - out.length} characters`);
 *     return out;
 *   },
 * });
 *
 * // A logger that keeps the lines, for a unit test.
 * const lines: string[] = [];
 * const log: ToolLogger = {
 *   debug: (m) => lines.push(`debug: ${m}`),
 *   info: (m) => lines.push(`info: ${m}`),
 *   warn: (m) => lines.push(`warn: ${m}`),
 *   error: (m) => lines.push(`error: ${m}`),
 * };
 * const ctx: ToolContext = {
 *   cwd: "/work/project",
 *   signal: new AbortController().signal,
 *   toolCallId: "call_1",
 *   log,
 *   progress() {},
 *   requestPermission: () => Promise.resolve(false),
 * };
 * assert.equal(await tidy.run({ text: "a  \nb" }, ctx), "a\nb");
 * assert.deepEqual(lines, ["debug: removed 2 characters"]);
 * ```
 */
export interface ToolLogger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/**
 * Host services that only first-party, in-process tools receive. When the
 * frontend is an ACP client offering `fs` or `terminal` capabilities these
 * route through the client (so unsaved editor buffers are seen); otherwise they
 * use the local filesystem / processes. Third-party worker plugins never get
 * these; they use Deno APIs under their granted permissions.
 *
 * @example Reading through the ACP client when there is one
 * ```ts
 * import type { HostServices, ToolContext } from "@coyote/sdk";
 * import assert from "node:assert/strict";
 *
 * // First-party tools prefer the host (it sees unsaved editor buffers) and fall back to Deno.
 * function readText(ctx: ToolContext, path: string): Promise<string> {
 *   return ctx.host?.readTextFile ? ctx.host.readTextFile(path) : Deno.readTextFile(path);
 * }
 *
 * const buffers = new Map([["/work/project/main.ts", "let unsaved = 1;\n"]]);
 * const host: HostServices = {
 *   readTextFile: async (path) => {
 *     const text = buffers.get(path);
 *     if (text === undefined) throw new Deno.errors.NotFound(`no such file: ${path}`);
 *     return text;
 *   },
 *   writeTextFile: async (path, content) => void buffers.set(path, content),
 * };
 * const ctx: ToolContext = {
 *   cwd: "/work/project",
 *   signal: new AbortController().signal,
 *   toolCallId: "call_1",
 *   log: { debug() {}, info() {}, warn() {}, error() {} },
 *   progress() {},
 *   requestPermission: () => Promise.resolve(false),
 *   host,
 * };
 * assert.equal(await readText(ctx, "/work/project/main.ts"), "let unsaved = 1;\n");
 * await assert.rejects(readText(ctx, "/work/project/gone.ts"), Deno.errors.NotFound);
 * ```
 */
export interface HostServices {
  /**
   * Asks the human a question (REPL prompt, ACP client). Undefined when nobody can
   * answer (headless): the `user__*` tools then return `{"needs_human": true, ...}` at once.
   */
  askUser?(question: UserQuestion, signal: AbortSignal): Promise<string | string[] | boolean>;
  /** Reads a UTF-8 text file (absolute path). Throws `Deno.errors.NotFound` style errors. */
  readTextFile?(path: string): Promise<string>;
  /** Writes a UTF-8 text file (absolute path), creating parent folders. */
  writeTextFile?(path: string, content: string): Promise<void>;
  /**
   * Runs a shell command in a client-side terminal (ACP `terminal/*`).
   * Resolves when the command exits or the signal aborts (then the terminal is killed).
   */
  runInTerminal?(
    command: string,
    opts: {
      cwd: string;
      timeoutMs?: number;
      outputByteLimit?: number;
      signal: AbortSignal;
      /** The calling tool call (`ToolContext.toolCallId`): the ACP host embeds the terminal in it. */
      toolCallId?: string;
    },
  ): Promise<
    { exitCode: number | null; signal: string | null; output: string; truncated: boolean }
  >;
}

/**
 * The context a tool's `run` receives.
 *
 * @example Unit-testing a tool with a context you build
 * ```ts
 * import { defineTool, type ToolContext } from "@coyote/sdk";
 * import { z } from "zod";
 * import assert from "node:assert/strict";
 *
 * const where = defineTool({
 *   name: "notes_where",
 *   description: "Says where the notes of this workspace live.",
 *   input: z.object({ folder: z.string().default("notes") }),
 *   readOnly: true,
 *   run: ({ folder }, ctx) => {
 *     if (ctx.signal.aborted) return { content: "cancelled", isError: true };
 *     ctx.log.info(`call ${ctx.toolCallId}`);
 *     return `${ctx.cwd}/${folder}`;
 *   },
 * });
 *
 * function testContext(): ToolContext {
 *   return {
 *     cwd: "/work/project",
 *     signal: new AbortController().signal,
 *     toolCallId: "test",
 *     log: { debug() {}, info() {}, warn() {}, error() {} },
 *     progress() {},
 *     requestPermission: () => Promise.resolve(false),
 *   };
 * }
 * assert.equal(await where.run({ folder: "docs" }, testContext()), "/work/project/docs");
 * ```
 */
export interface ToolContext {
  /** Absolute path of the session's working directory (workspace root). */
  cwd: string;
  /** Aborted when the turn is cancelled or the call times out. */
  signal: AbortSignal;
  /** The id of this tool call (ACP `toolCallId`). */
  toolCallId: string;
  /**
   * The id of the calling session (one conversation; a sub-agent has its own). First-party `fs_*`
   * tools key their read stamps by it (plugins/fs/stamps.ts); undefined inside plugin workers.
   */
  sessionId?: string;
  log: ToolLogger;
  /** Reports progress; shows up as a `tool_call_update`. */
  progress(update: ToolProgress): void;
  /**
   * Asks the user for permission through the frontend. Resolves `true` when
   * allowed; `false` when rejected, when headless, or when cancelled.
   */
  requestPermission(question: PermissionQuestion): Promise<boolean>;
  /** First-party tools only; undefined inside plugin workers. */
  host?: HostServices;
  /**
   * The session's guard on one access, as the engine would decide it before a call (the rules,
   * session answers, permission mode). First-party tools that read many files in one call
   * (`fs_grep`, `ast_grep`) ask it about each file they would show, so a `Read` deny or ask rule
   * covers what a search prints as it covers `fs_read` (issue 16). Nothing is asked of the user.
   * Undefined inside plugin workers.
   */
  guard?(
    access: ToolAccess,
  ): Promise<{ decision: "allow" | "ask" | "deny"; rule?: string; reason: string }>;
}

/**
 * What a tool call needs from the policy; the engine checks these before `run`.
 *
 * @example Declaring what a first-party tool's call needs from the policy
 * ```ts
 * import { defineTool } from "@coyote/sdk";
 * import { z } from "zod";
 * import assert from "node:assert/strict";
 *
 * const copy = defineTool({
 *   name: "files_copy",
 *   description: "Copies a file.",
 *   input: z.object({ from: z.string(), to: z.string() }),
 *   // The engine checks these against the policy before `run`; paths may be relative to `cwd`.
 *   access: ({ from, to }) => [{ type: "read", path: from }, { type: "write", path: to }],
 *   run: ({ from, to }) => `copied ${from} to ${to}`,
 * });
 *
 * assert.deepEqual(copy.access?.({ from: "a.txt", to: "b.txt" }, "/work/project"), [
 *   { type: "read", path: "a.txt" },
 *   { type: "write", path: "b.txt" },
 * ]);
 * ```
 */
export type ToolAccess =
  | { type: "execute"; command: string }
  | { type: "read"; path: string }
  | { type: "write"; path: string }
  | { type: "net"; host: string }
  | { type: "tool"; name: string };

/**
 * A tool, as the model sees it (`name`, `description`, `input` schema) plus its implementation.
 *
 * @example Working with a plugin's tools
 * ```ts
 * import { definePlugin, defineTool, type ToolDefinition } from "@coyote/sdk";
 * import { z } from "zod";
 * import assert from "node:assert/strict";
 *
 * const plugin = definePlugin({
 *   name: "notes",
 *   version: "1.0.0",
 *   tools: [
 *     defineTool({
 *       name: "notes_search",
 *       description: "Searches the notes.",
 *       input: z.object({ query: z.string() }),
 *       readOnly: true,
 *       title: ({ query }) => `Search notes for ${query}`,
 *       run: ({ query }) => `nothing found for ${query}`,
 *     }),
 *   ],
 * });
 *
 * // Without `concurrency`, a read-only tool runs in parallel and any other one serially.
 * const schedule = (t: ToolDefinition) => t.concurrency ?? (t.readOnly ? "parallel" : "serial");
 * assert.deepEqual(plugin.tools?.map(schedule), ["parallel"]);
 * ```
 */
export interface ToolDefinition<S = ZodLike | JsonSchema> {
  /** Model-facing name: `^[a-zA-Z0-9_-]{1,64}$` (OpenAI function-name rule). */
  name: string;
  description: string;
  /** zod schema or plain JSON Schema (`type: "object"`). */
  input: S;
  kind?: ToolKind;
  /** True when the tool never changes anything (the guard and frontends may rely on it). */
  readOnly?: boolean;
  /**
   * Scheduling: `parallel` — safe to run beside other `parallel` calls of the same model
   * response; `serial` — runs alone, in order. Omitted: `parallel` when `readOnly`, else
   * `serial` (the SDK 1.0 behaviour). Added in SDK 1.1.
   */
  concurrency?: "parallel" | "serial";
  /** Human title for a call, e.g. `Read src/main.ts`. */
  title?(input: InferInput<S>): string;
  /**
   * What the call needs from the policy (first-party tools). Paths may be relative
   * to `cwd`. Omitted: the tool is checked as `{type: "tool", name}`.
   */
  access?(input: InferInput<S>, cwd: string): ToolAccess[];
  run(input: InferInput<S>, ctx: ToolContext): Promise<ToolResult | string> | ToolResult | string;
}

/**
 * Defines a tool; returns it unchanged with its input type inferred from the schema.
 *
 * @example A tool with a zod schema
 * ```ts
 * import { defineTool, type ToolContext } from "@coyote/sdk";
 * import { z } from "zod";
 * import assert from "node:assert/strict";
 *
 * const count = defineTool({
 *   name: "wordstats_count",
 *   description: "Counts the words of a text.",
 *   input: z.object({ text: z.string().describe("The text to count") }),
 *   readOnly: true,
 *   title: ({ text }) => `Count words (${text.length} characters)`,
 *   run: ({ text }) => `${text.split(/\s+/).filter(Boolean).length} words`, // `text` is a string
 * });
 *
 * const ctx: ToolContext = {
 *   cwd: "/work/project",
 *   signal: new AbortController().signal,
 *   toolCallId: "call_1",
 *   log: { debug() {}, info() {}, warn() {}, error() {} },
 *   progress() {},
 *   requestPermission: () => Promise.resolve(false),
 * };
 * assert.equal(count.title?.({ text: "one two three" }), "Count words (13 characters)");
 * assert.equal(await count.run({ text: "one two three" }, ctx), "3 words");
 * ```
 */
export function defineTool<S extends ZodLike | JsonSchema>(
  def: ToolDefinition<S>,
): ToolDefinition<S> {
  return def;
}

/**
 * An agent: instructions plus the tools it may use and model settings.
 * Built-in agents (Sisyphus and its specialists) load through this same shape; an agent
 * folder's `config.yaml` (snake_case keys, docs/agents.md) maps onto it field by field.
 * Every field past `maxTurns` is optional, new in SDK 1.1 and named like its `config.yaml` key
 * (snake_case), so a plugin written for SDK 1.0 still fits.
 *
 * @example An agent contributed by a plugin
 * ```ts
 * import { type AgentDefinition, definePlugin } from "@coyote/sdk";
 * import assert from "node:assert/strict";
 *
 * const reviewer: AgentDefinition = {
 *   name: "reviewer",
 *   description: "Reviews the working tree's changes and lists problems.",
 *   instructions: "Review the changes in {{__cwd__}} for {{focus}}. Your tools: {{__tools__}}.",
 *   tools: ["fs_read", "fs_grep", "execute_command"],
 *   temperature: 0.2,
 *   maxTurns: 30,
 *   variables: [{ name: "focus", description: "What to look for", default: "correctness" }],
 *   can_spawn_agents: false,
 * };
 * const plugin = definePlugin({ name: "review", version: "0.3.0", agents: [reviewer] });
 * assert.equal(plugin.agents?.[0].name, "reviewer");
 * ```
 */
export interface AgentDefinition {
  name: string;
  description: string;
  /**
   * System-prompt text. Templated when the agent starts: `{{__os__}}`, `{{__cwd__}}`,
   * `{{__now__}}` (ISO-8601), `{{__tools__}}` (the agent's tool names) and `{{var}}` for each
   * of {@link AgentDefinition.variables}.
   */
  instructions: string;
  /**
   * Tool names (globs allowed, e.g. `fs_*`, `mcp__github__*`; `mcp:<server>` means every tool of
   * that MCP server). Omitted: all tools.
   */
  tools?: string[];
  model?: string;
  temperature?: number;
  maxTurns?: number;
  /** Semver-ish version of the definition (informational). @since 1.1 */
  version?: string;
  /** Nucleus sampling (OpenAI `top_p`, 0..1). @since 1.1 */
  top_p?: number;
  /** OpenAI `reasoning_effort` (e.g. `low`, `medium`, `high`). @since 1.1 */
  reasoning_effort?: string;
  /** Template variables; one without `default` must be given (`--agent-variable NAME VALUE`). @since 1.1 */
  variables?: AgentVariable[];
  /** MCP servers (by configured name) whose tools this agent gets. @since 1.1 */
  mcp_servers?: string[];
  /** Skills this agent sees (names); omitted: every discovered skill. @since 1.1 */
  enabled_skills?: string[];
  /** May start sub-agents (`agent__*` tools). @since 1.1 */
  can_spawn_agents?: boolean;
  /** Agents it may start; omitted: any, `[]`: none. @since 1.1 */
  spawnable_agents?: string[];
  /**
   * Also the custom agents — the user's (`<config dir>/agents/`) and the workspace's
   * (`.coyote/agents/`, `.claude/agents/`) — besides those `spawnable_agents` names; an untrusted
   * workspace's agents stay unspawnable by this rule. Plugin agents only by name. @since 1.2
   */
  spawn_custom_agents?: boolean;
  /** Children running at once (more are queued). @since 1.1 */
  max_concurrent_agents?: number;
  /** Depth of the sub-agent tree below the root (root = 0). @since 1.1 */
  max_agent_depth?: number;
  /** Sub-agents it may spawn in one turn (more are refused with a tool error). Default 50. @since 1.1 */
  max_spawns_per_turn?: number;
  /**
   * Live (queued + running) sub-agent sessions in the whole tree when this agent is the root
   * session's; more are refused (graph agent/map nodes too). Default 64. @since 1.1
   */
  max_live_agents?: number;
  /** A child's final answer longer than this many characters is summarised for its parent. @since 1.1 */
  summarization_threshold?: number;
  /** Seconds a child's question to the human waits before the child decides alone. @since 1.1 */
  escalation_timeout?: number;
  /**
   * Whether this agent, spawned as a child, works in its own git worktree and its change comes
   * back as a patch (docs/subagents.md): `always`, `never`, or `auto` (default: a `coder` spawned
   * while another coder child of the same parent runs). A spawn's `worktree` flag wins. @since 1.3
   */
  worktree?: "auto" | "always" | "never";
  /** Re-prompt while the todo list has open items at the end of a turn. @since 1.1 */
  auto_continue?: boolean;
  /** Re-prompts allowed per user turn under {@link AgentDefinition.auto_continue}. @since 1.1 */
  max_auto_continues?: number;
  /**
   * Tokens (the turn's prompt + completion total so far) past which
   * {@link AgentDefinition.auto_continue} stops re-prompting, whatever `max_auto_continues`
   * allows (default 100,000). @since 1.2
   */
  max_auto_continue_tokens?: number;
  /** Example first prompts a frontend may offer. @since 1.1 */
  conversation_starters?: string[];
  /**
   * A graph agent: the text of its `graph.yaml` (docs/graphs.md). With it, `instructions` is
   * ignored and the agent runs with the graph engine. @since 1.2
   */
  graph_yaml?: string;
  /**
   * A graph agent's scripts by path relative to its folder (`scripts/verdict.ts` → source text),
   * as its `script` nodes name them. `.ts` scripts run in a Worker with no permissions unless the
   * node declares some. @since 1.2
   */
  graph_files?: Record<string, string>;
}

/**
 * A template variable of an agent: `{{name}}` in its instructions.
 *
 * @example Required and optional template variables
 * ```ts
 * import type { AgentVariable } from "@coyote/sdk";
 * import assert from "node:assert/strict";
 *
 * // Used as `{{ticket}}` and `{{tone}}` in the agent's instructions.
 * const variables: AgentVariable[] = [
 *   { name: "ticket", description: "The issue to work on, e.g. ABC-123" },
 *   { name: "tone", description: "Voice of the summary", default: "neutral" },
 * ];
 * // `ticket` has no default: the user must give it (`--agent-variable ticket ABC-123`).
 * const required = variables.filter((v) => v.default === undefined).map((v) => v.name);
 * assert.deepEqual(required, ["ticket"]);
 * ```
 */
export interface AgentVariable {
  name: string;
  description?: string;
  /** Value used when none is given; absent means the variable is required. */
  default?: string;
}

/**
 * A skill, as Agent Skills' `SKILL.md`: a folder named after the skill holding front matter
 * (`description`, optional `allowed-tools`/`enabled_tools`, `enabled_mcp_servers`, `auto_unload`)
 * and a markdown body. The optional fields use the original Coyote's front-matter names.
 *
 * @example A skill shipped in a plugin
 * ```ts
 * import { definePlugin, type SkillDefinition } from "@coyote/sdk";
 * import assert from "node:assert/strict";
 *
 * const releaseNotes: SkillDefinition = {
 *   name: "release-notes",
 *   description: "How to write release notes for this project.",
 *   content: "# Release notes\n\nGroup changes by component; newest first.\n",
 *   enabled_tools: ["fs_read", "fs_write"], // loading the skill adds these to the agent's tools
 *   auto_unload: true, // unloaded again when the turn that loaded it ends
 * };
 * const plugin = definePlugin({ name: "release", version: "1.0.0", skills: [releaseNotes] });
 * assert.equal(plugin.skills?.length, 1);
 * ```
 */
export interface SkillDefinition {
  name: string;
  description: string;
  /** The markdown body (instructions), loaded when the skill is used. */
  content: string;
  /** Tool names or globs the skill needs; loading it adds them to the agent's tools. @since 1.1 */
  enabled_tools?: string[];
  /** MCP servers whose tools loading the skill adds. @since 1.1 */
  enabled_mcp_servers?: string[];
  /** Unload the skill again when the turn that loaded it ends. @since 1.1 */
  auto_unload?: boolean;
}

/**
 * A plugin: a named, versioned bundle of tools, agents and skills plus the permissions it needs.
 *
 * @example A plugin's `mod.ts`
 * ```ts
 * import { definePlugin, defineTool, type PluginDefinition } from "@coyote/sdk";
 * import { z } from "zod";
 *
 * const manifest: PluginDefinition = {
 *   name: "changelog",
 *   version: "1.0.0",
 *   description: "Keeps CHANGELOG.md up to date.",
 *   permissions: { read: ["."], write: ["CHANGELOG.md"], run: ["git"] },
 *   tools: [
 *     defineTool({
 *       name: "changelog_path",
 *       description: "Tells where the changelog lives.",
 *       input: z.object({}),
 *       readOnly: true,
 *       run: (_input, ctx) => `${ctx.cwd}/CHANGELOG.md`,
 *     }),
 *   ],
 *   // Runs in the OS sandbox of the user's policy, not with the plugin's grant.
 *   hooks: { stop: [{ command: "deno task check", timeout_ms: 120_000 }] },
 * };
 *
 * export default definePlugin(manifest);
 * ```
 */
export interface PluginDefinition {
  name: string;
  version: string;
  description?: string;
  /** SDK major the plugin was written for; defaults to the SDK it was built with. */
  sdkVersion?: string;
  permissions?: PluginPermissions;
  // deno-lint-ignore no-explicit-any
  tools?: ToolDefinition<any>[];
  agents?: AgentDefinition[];
  skills?: SkillDefinition[];
  /**
   * Hooks the plugin contributes. `stop` commands run when an agent is about to end its turn,
   * exactly as `hooks.stop` of config.yaml (docs/graphs.md "Stop hooks"; @since 1.2). The other
   * keys are Claude Code's lifecycle events in its settings shape (docs/hooks.md; @since 1.3):
   * `PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command, timeout }] }]`. A
   * plugin's command always runs inside the OS sandbox derived from the user's policy (never with
   * the plugin's grant or Coyote's own rights); its `PreToolUse` may deny, ask or rewrite a call,
   * but its `allow` is ignored. A malformed lifecycle section skips the plugin's hooks with a
   * warning.
   */
  hooks?: PluginHooks;
}

/**
 * Claude Code's hook events a plugin may hook (docs/hooks.md).
 *
 * @example The keys of a plugin's lifecycle hooks
 * ```ts
 * import type { HookEventName, PluginHooks } from "@coyote/sdk";
 * import assert from "node:assert/strict";
 *
 * const event: HookEventName = "PostToolUse";
 * const hooks: PluginHooks = {
 *   [event]: [{ matcher: "Write|Edit", hooks: [{ command: "deno fmt" }] }],
 * };
 * assert.equal(Object.keys(hooks)[0], "PostToolUse");
 * ```
 */
export type HookEventName =
  | "PreToolUse"
  | "PostToolUse"
  | "UserPromptSubmit"
  | "SessionStart"
  | "SessionEnd"
  | "Notification"
  | "Stop"
  | "SubagentStop"
  | "PreCompact";

/**
 * A plugin's hooks (see {@link PluginDefinition.hooks}): Coyote's `stop` commands and Claude
 * Code's lifecycle events, each a list of matcher groups. `matcher` is a tool name, an `A|B`
 * list or a regular expression (Claude Code's names match Coyote's tools: `Bash` is
 * `execute_command`); `timeout` is in seconds (default 60).
 *
 * @example A PreToolUse hook in a plugin
 * ```ts
 * import { definePlugin, type PluginHooks } from "@coyote/sdk";
 * import assert from "node:assert/strict";
 *
 * const hooks: PluginHooks = {
 *   PreToolUse: [{
 *     matcher: "Bash",
 *     hooks: [{ type: "command", command: "./scripts/check-command.sh", timeout: 10 }],
 *   }],
 * };
 * const plugin = definePlugin({ name: "guarded", version: "1.0.0", hooks });
 * assert.equal(plugin.hooks?.PreToolUse?.[0].matcher, "Bash");
 * ```
 */
export type PluginHooks =
  & { stop?: { command: string; timeout_ms?: number }[] }
  & {
    [E in HookEventName]?: {
      matcher?: string;
      hooks: { type?: "command"; command: string; timeout?: number }[];
    }[];
  };

/**
 * Defines a plugin; the module's default export. Returns it with `sdkVersion` filled in.
 *
 * @example Defining a plugin
 * ```ts
 * import { definePlugin, SDK_VERSION } from "@coyote/sdk";
 * import assert from "node:assert/strict";
 *
 * const plugin = definePlugin({ name: "hello", version: "1.0.0", description: "Says hello." });
 * assert.equal(plugin.sdkVersion, SDK_VERSION); // filled in
 * // An explicit `sdkVersion` is kept.
 * const old = definePlugin({ name: "old", version: "0.1.0", sdkVersion: "1.0.0" });
 * assert.equal(old.sdkVersion, "1.0.0");
 * ```
 */
export function definePlugin(def: PluginDefinition): PluginDefinition {
  return { sdkVersion: SDK_VERSION, ...def };
}
