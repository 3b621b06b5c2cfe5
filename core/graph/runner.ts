/**
 * A graph agent as an {@link AgentRunner} (issue 8 §1): the same seam the LLM engine implements,
 * so a session runs a graph exactly as it runs a model loop, and every frontend shows it through
 * the event envelope. One `prompt` runs the graph once from `start` with the prompt as
 * `{{initial_prompt}}`; it emits `turn_started` first and `turn_ended` last (usage summed over
 * every llm node), and never rejects for node or provider faults (a failed run ends the turn
 * with `error` `{code: "graph_failed"}`).
 *
 * The real {@link GraphHost} lives here too:
 * - llm nodes: a fresh {@link Engine} per node (per map branch), with the node's tools (∩ the
 *   graph's, ∩ the session's), the session's policy narrowed to them, the session's permission
 *   resolver and host services, `max_iterations` as its request cap, and for an `output_schema`
 *   a `submit_result` tool whose call ends the node's turn. Tool-call ids are prefixed per
 *   conversation (`<node>#<n>/…`) so concurrent branches never share one — in its events and
 *   in its permission requests and host services' scope alike, so a frontend ties a request to
 *   the call it shows (ACP: the announced call of a child's request gets the call's status).
 * - agent nodes: the session's `spawn` (a child session on the same workspace).
 * - script nodes: core/graph/script.ts; their `exec`/`read`/`write` are real tool calls of
 *   `execute_command`/`fs_read`/`fs_write` through the guard gate (announced as tool calls).
 * - approval/input nodes: the frontend's `askUser`; none (headless) = no answer.
 * @module
 */
import { basename, dirname, join, relative } from "../util/path.ts";
import type { HostServices } from "../../sdk/mod.ts";
import type * as acp from "@agentclientprotocol/sdk";
import type {
  AgentOrigin,
  AgentRunner,
  AnyTool,
  DeniedAction,
  EngineEvent,
  EventSink,
  HostFactory,
  PermissionResolver,
  PromptInput,
  SessionEvent,
  TurnResult,
  TurnUsage,
} from "../protocol/types.ts";
import { Engine, type ModelClient, type PolicyLike } from "../engine/mod.ts";
import { prepareCall } from "../engine/prepare.ts";
import { executeCall } from "../engine/execute.ts";
import { promptText } from "../engine/prompt.ts";
import type { TurnContext } from "../engine/types.ts";
import { filterTools, ToolRegistry } from "../tools/registry.ts";
import type { TranscriptWriter } from "../transcript/writer.ts";
import type { GraphSpec } from "../protocol/graph_spec.ts";
import { runGraph } from "./run.ts";
import { GraphRunError, NodeError } from "./errors.ts";
import type { GraphHost } from "./host.ts";
import { checkSchema, SUBMIT_RESULT, submitResultTool } from "./structured.ts";
import { runModuleScript, runShellScript, type ScriptServices } from "./script.ts";
import { scriptPath } from "./paths.ts";
import { RunMemory } from "./followup.ts";
import { prefixedHost, prefixedPermission } from "./call_ids.ts";

/** Provider error codes worth another attempt of an llm node (`max_attempts`). */
const TRANSIENT = new Set(["server_error", "rate_limited", "connection", "timeout", "stream_cut"]);

/** Everything a graph run needs from its session. */
export interface GraphRunnerOptions {
  spec: GraphSpec;
  /** The graph's folder (scripts resolve against it). */
  dir: string;
  /** Embedded files of a built-in graph by relative path (`scripts/verdict.ts` → text). */
  files?: Record<string, string>;
  sessionId: string;
  cwd: string;
  client: ModelClient;
  /** Model for llm nodes that name none (graph default, else the session's). */
  model: string;
  /** The session's tools (the universe is further narrowed by the graph's `tools`). */
  tools: AnyTool[];
  policy: PolicyLike;
  /**
   * What scripts' `exec` / `read` / `write` call (`execute_command`, `fs_read`, `fs_write`) and
   * the policy that guards them: a script is part of the graph, not of an llm node, so it is not
   * limited to the graph's `tools` (default: `tools` and `policy`).
   */
  scriptTools?: AnyTool[];
  scriptPolicy?: PolicyLike;
  permission: PermissionResolver;
  host?: HostServices | HostFactory;
  origin: AgentOrigin;
  /** Agent variables after defaults (`{{name}}`). */
  variables?: Record<string, unknown>;
  transcript?: TranscriptWriter;
  log?: (line: string) => void;
  /** Runs a sub-agent to completion for an agent node; its events go to `onEvent`. */
  spawn?: (
    req: { agent: string; prompt: string; toolCallId: string },
    signal: AbortSignal,
  ) => Promise<string>;
  /** Workers of scripts that declare permissions get this grant (policy ∩ declared). */
  scriptGrant?: (
    declared: Record<string, string[] | undefined>,
  ) => Deno.PermissionOptions | Promise<Deno.PermissionOptions>;
  /** Log a state snapshot after each node (`--verbose`, `settings.log_state_snapshots`). */
  snapshots?: boolean;
  /** Before a node's or script's tool call that may change the workspace (the checkpoint). */
  beforeChange?: (toolName: string) => Promise<void>;
}

/** Runs a graph agent; see the module doc. */
export class GraphRunner implements AgentRunner {
  #running = false;
  readonly updates: EngineEvent[] = [];
  #conv = 0;
  #calls = 0;
  /** The earlier runs of this session, for a follow-up's `followup`/`previous` (followup.ts). */
  #memory?: RunMemory;

  constructor(readonly opts: GraphRunnerOptions) {}

  get running(): boolean {
    return this.#running;
  }

  history(): EngineEvent[] {
    return [...this.updates];
  }

  async prompt(
    input: PromptInput,
    o: { signal?: AbortSignal; onEvent: EventSink },
  ): Promise<TurnResult> {
    if (this.#running) throw new Error("a turn is already running");
    this.#running = true;
    const signal = o.signal ?? new AbortController().signal;
    const usage: TurnUsage = {
      prompt_tokens: 0,
      completion_tokens: 0,
      total_tokens: 0,
      requests: 0,
    };
    const denied: DeniedAction[] = [];
    const record = (ev: SessionEvent) => {
      try {
        o.onEvent(ev);
      } catch { /* a sink must not break the run */ }
      if (
        ev.sessionUpdate === "turn_started" || ev.sessionUpdate === "turn_ended" ||
        ev.sessionUpdate === "hook"
      ) return;
      this.opts.transcript?.update(ev);
      this.updates.push(ev);
      memory.watch(ev);
    };
    const memory = (this.#memory ??= new RunMemory(this.opts.cwd));
    memory.begin();
    const text = promptText(input);
    record({ sessionUpdate: "turn_started", prompt: text });
    this.opts.transcript?.message({ role: "user", content: text });
    let result: TurnResult;
    try {
      const r = await runGraph(this.opts.spec, {
        host: this.#host(usage, denied, record),
        prompt: text,
        // A follow-up (a later prompt to this session) sees the earlier runs (followup.ts).
        variables: { ...this.opts.variables, ...memory.variables() },
        emit: record,
        signal,
        snapshot: this.opts.snapshots || this.opts.spec.settings?.log_state_snapshots
          ? (node, state) =>
            this.opts.transcript?.graphState(node, JSON.parse(JSON.stringify(state)))
          : undefined,
      });
      this.opts.transcript?.message({ role: "assistant", content: r.output });
      memory.end(text, { output: r.output, state: r.state });
      result = { stopReason: "end_turn", usage, denied, text: r.output };
    } catch (e) {
      memory.end(text, {
        output: "",
        error: signal.aborted ? "cancelled" : (e as Error)?.message ?? String(e),
      });
      if (signal.aborted) {
        result = { stopReason: "cancelled", usage, denied, text: "" };
      } else {
        const message = (e as Error)?.message ?? String(e);
        (this.opts.log ?? console.error)(`coyote: graph ${this.opts.spec.name}: ${message}`);
        result = {
          stopReason: "end_turn",
          usage,
          denied,
          text: "",
          error: { code: e instanceof GraphRunError ? "graph_failed" : "internal", message },
        };
      }
    } finally {
      this.#running = false;
    }
    this.opts.transcript?.turnEnd(result.stopReason, usage, result.error);
    record({ sessionUpdate: "turn_ended", ...result });
    return result;
  }

  /** Tool-call ids unique per conversation: `<prefix>/<id>`. */
  #prefixed(prefix: string, emit: (u: acp.SessionUpdate) => void) {
    return (u: acp.SessionUpdate) => {
      if (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update") {
        emit({ ...u, toolCallId: `${prefix}/${u.toolCallId}` });
      } else emit(u);
    };
  }

  #host(usage: TurnUsage, denied: DeniedAction[], record: (ev: SessionEvent) => void): GraphHost {
    const o = this.opts;
    // `mcp:<server>` (in `tools` or a node's tools) and `mcp_servers` entries mean the server's
    // `mcp__<server>__*` tools (R4; core/agents/resolve.ts `selectTools`).
    const universe = o.spec.tools
      ? filterTools(o.tools, [
        ...o.spec.tools.map(mcpGlob),
        ...(o.spec.mcp_servers ?? []).map((s) => `mcp__${s}__*`),
      ])
      : o.tools;
    const addUsage = (u: TurnUsage) => {
      usage.prompt_tokens += u.prompt_tokens;
      usage.completion_tokens += u.completion_tokens;
      usage.total_tokens += u.total_tokens;
      usage.requests += u.requests;
    };
    const hostServices = (toolCallId: string, toolName: string): HostServices | undefined =>
      typeof o.host === "function"
        ? o.host({
          ...o.origin,
          rootToolCallId: o.origin.depth === 0 ? toolCallId : o.origin.rootToolCallId,
          sessionId: o.sessionId,
          toolCallId,
          toolName,
        })
        : o.host;

    /** One tool call through prepare (validation, guard) and execute, outside a model turn. */
    const callTool = async (
      name: string,
      args: Record<string, unknown>,
      signal: AbortSignal,
    ): Promise<
      { content: string; refused?: string; rawOutput?: Record<string, unknown>; failed: boolean }
    > => {
      const registry = new ToolRegistry((o.scriptTools ?? o.tools).filter((t) => t.name === name));
      if (!registry.get(name)) {
        return {
          content: "",
          refused: `tool ${name} is not available to this agent`,
          failed: true,
        };
      }
      let content = "";
      let rawOutput: Record<string, unknown> | undefined;
      let failed = false;
      const id = `script-${++this.#calls}`;
      const t: TurnContext = {
        opts: {
          sessionId: o.sessionId,
          cwd: o.cwd,
          client: o.client,
          model: o.model,
          registry,
          policy: o.scriptPolicy ?? o.policy,
          permission: o.permission,
          host: o.host,
          systemPrompt: "",
          maxTurns: 1,
          origin: o.origin,
          log: o.log,
          beforeChange: o.beforeChange,
        },
        signal,
        emit: (ev) => {
          if (ev.sessionUpdate === "tool_call_update") {
            if (ev.status === "failed") failed = true;
            if (ev.rawOutput && typeof ev.rawOutput === "object") {
              rawOutput = ev.rawOutput as Record<string, unknown>;
            }
          }
          record(ev);
        },
        pushMessage: (m) => {
          if (m.role === "tool" && typeof m.content === "string") content = m.content;
        },
        log: o.log ?? ((l) => console.error(l)),
        denied,
        answered: new Set(),
        repeat: { key: "", count: 0 },
        origin: o.origin,
      };
      const p = await prepareCall(t, { id, name, arguments: JSON.stringify(args) });
      if (p.refusal) {
        await executeCall(t, p);
        return { content, refused: p.refusal.replace(/^error: /, ""), failed: true };
      }
      await executeCall(t, p);
      return { content, rawOutput, failed };
    };

    const services: ScriptServices = {
      async exec(command, opts, signal) {
        const started = Date.now();
        const cmd = opts.cwd && opts.cwd !== "." ? `cd ${shq(opts.cwd)} && ${command}` : command;
        const r = await callTool("execute_command", {
          command: cmd,
          ...(opts.timeout_ms ? { timeout_ms: Math.max(1, Math.round(opts.timeout_ms)) } : {}),
        }, signal);
        if (r.refused) {
          return { exit_code: null, stdout: "", stderr: "", duration_ms: 0, denied: r.refused };
        }
        const exit = typeof r.rawOutput?.exitCode === "number"
          ? r.rawOutput.exitCode
          : (r.failed ? 1 : 0);
        return { exit_code: exit, ...splitStreams(r.content), duration_ms: Date.now() - started };
      },
      async read(path, signal) {
        const r = await callTool("fs_read", { path, limit: 100_000 }, signal);
        if (r.refused) throw new Error(`fs_read ${path}: ${r.refused}`);
        if (r.failed) return undefined;
        return stripLineNumbers(r.content);
      },
      async write(path, text, signal) {
        const r = await callTool("fs_write", { path, content: text }, signal);
        if (r.refused || r.failed) throw new Error(`fs_write ${path}: ${r.refused ?? r.content}`);
      },
      event(name, data) {
        record({
          sessionUpdate: "agent_thought_chunk",
          content: { type: "text", text: `${name}: ${JSON.stringify(data)}\n` },
          _meta: { coyote: { event: name, ...data } },
        } as EngineEvent);
      },
    };

    return {
      llm: (cfg, emit) => {
        const prefix = `${cfg.node}#${++this.#conv}`;
        let submitted: unknown;
        const tools = filterTools(universe, cfg.tools.map(mcpGlob));
        const own = cfg.tools.length ? tools : [];
        const registry = new SubmitRegistry([
          ...own,
          ...(cfg.outputSchema ? [submitResultTool(cfg.outputSchema, (v) => submitted = v)] : []),
        ]);
        const names = new Set(registry.names());
        const engine = new Engine({
          sessionId: o.sessionId,
          cwd: o.cwd,
          client: o.client,
          model: cfg.model ?? o.model,
          temperature: cfg.temperature,
          registry,
          policy: {
            evaluate: (a) =>
              a.type === "tool" && !names.has(a.name)
                ? Promise.resolve({
                  decision: "deny",
                  reason: `tool ${a.name} is not among this node's tools`,
                  access: a,
                })
                : o.policy.evaluate(a),
            addRule: (d, r, s) => o.policy.addRule(d, r, s),
          },
          // Its permission requests and host services name each call as its events do.
          permission: prefixedPermission(prefix, o.permission),
          host: prefixedHost(prefix, o.host),
          systemPrompt: cfg.instructions ?? "",
          maxTurns: cfg.maxIterations,
          origin: o.origin,
          log: o.log,
          beforeChange: o.beforeChange,
          endTurnAfterTools: () => submitted !== undefined,
        });
        const forward = this.#prefixed(prefix, emit);
        return {
          send: async (prompt, signal) => {
            submitted = undefined;
            let ended: TurnResult | undefined;
            const r = await engine.prompt(prompt, {
              signal,
              onEvent: (ev) => {
                // A node's engine runs no lifecycle hooks; its hook events would be none.
                if (ev.sessionUpdate === "turn_started" || ev.sessionUpdate === "hook") return;
                if (ev.sessionUpdate === "turn_ended") return void (ended = ev);
                forward(ev);
              },
            });
            addUsage(r.usage);
            denied.push(...r.denied);
            if (r.stopReason === "cancelled") throw signal.reason ?? new Error("cancelled");
            if (r.error) {
              throw new NodeError(
                `model request failed: ${r.error.message}`,
                TRANSIENT.has(r.error.code),
              );
            }
            if (r.stopReason === "max_turn_requests" && submitted === undefined) {
              throw new NodeError(
                `no result within max_iterations (${cfg.maxIterations} model requests)`,
              );
            }
            void ended;
            return { text: r.text, submitted };
          },
        };
      },
      agent: async (req, signal, emit) => {
        if (!o.spawn) {
          throw new NodeError(
            `agent nodes need a session that can run sub-agents (agent "${req.agent}")`,
          );
        }
        const toolCallId = `graph:${req.node}:agent-${++this.#calls}`;
        emit({
          sessionUpdate: "tool_call",
          toolCallId,
          title: `agent ${req.agent}`,
          kind: "other",
          status: "in_progress",
          rawInput: { agent: req.agent, prompt: req.prompt },
        });
        try {
          const text = await o.spawn({ agent: req.agent, prompt: req.prompt, toolCallId }, signal);
          emit({ sessionUpdate: "tool_call_update", toolCallId, status: "completed" });
          return text;
        } catch (e) {
          emit({ sessionUpdate: "tool_call_update", toolCallId, status: "failed" });
          throw e instanceof NodeError ? e : new NodeError((e as Error).message);
        }
      },
      script: async (req, signal) => {
        const rel = req.script;
        const embedded = o.files?.[rel];
        if (rel.endsWith(".sh")) {
          // A script outside the workspace (an agent in the user's config dir, as the original
          // Coyote installs them) runs from a copy inside it: the sandbox sees only the
          // workspace, and the guard never lets a command touch Coyote's config dir.
          const own = scriptPath(o.dir, rel);
          const outside = embedded === undefined && relative(o.cwd, own).startsWith("..");
          const path = embedded !== undefined
            ? await materialise(o.cwd, rel, embedded)
            : outside
            ? await copyAgentFolder(o.cwd, o.dir, rel)
            : own;
          const argv0 = typeof path === "string" ? path : path.argv0;
          try {
            return await runShellScript({
              name: rel,
              path: typeof path === "string" ? path : path.path,
              state: req.state,
              // The original Coyote's script contract (R4): variables as LLM_AGENT_VAR_<NAME>,
              // AUTO_CONFIRM, and `$0` the script's own path (its scripts source files beside it).
              env: {
                AUTO_CONFIRM: "true",
                ...Object.fromEntries(
                  (o.spec.variables ?? []).map((v) => [
                    `LLM_AGENT_VAR_${v.name.toUpperCase()}`,
                    typeof req.state[v.name] === "string"
                      ? req.state[v.name] as string
                      : JSON.stringify(req.state[v.name] ?? ""),
                  ]),
                ),
              },
              ...(argv0 ? { argv0 } : {}),
              timeoutMs: req.timeoutMs,
              services,
              stateFile: async (json) => {
                const dir = join(o.cwd, ".coyote", "tmp");
                await Deno.mkdir(dir, { recursive: true });
                const file = join(dir, `graph-state-${crypto.randomUUID()}.json`);
                await Deno.writeTextFile(file, json);
                return { path: file, cleanup: () => Deno.remove(file).catch(() => {}) };
              },
            }, signal);
          } finally {
            if (typeof path !== "string") await path.cleanup();
          }
        }
        const text = embedded ?? await Deno.readTextFile(scriptPath(o.dir, rel)).catch((e) => {
          throw new NodeError(`cannot read script ${rel}: ${(e as Error).message}`);
        });
        const permissions: Deno.PermissionOptions = req.permissions && o.scriptGrant
          ? await o.scriptGrant(req.permissions as Record<string, string[] | undefined>)
          : "none";
        return await runModuleScript({
          name: rel,
          text,
          state: req.state,
          timeoutMs: req.timeoutMs,
          permissions,
          services,
        }, signal);
      },
      ask: async (q, signal) => {
        const host = hostServices(`graph:${q.node}:ask`, "user__select");
        if (!host?.askUser) return undefined;
        const a = await host.askUser(
          {
            action: q.action,
            question: q.question,
            ...(q.options ? { options: q.options } : {}),
            ...(q.default !== undefined ? { default: q.default } : {}),
          },
          signal,
        );
        return Array.isArray(a) ? a.join(", ") : typeof a === "boolean" ? (a ? "yes" : "no") : a;
      },
      checkSchema,
    };
  }
}

/**
 * A registry that lets `submit_result` arguments through unvalidated: the graph validates the
 * result itself, so that a bad one gets exactly one repair turn (then the node's fallback)
 * instead of the engine's open-ended retries.
 */
class SubmitRegistry extends ToolRegistry {
  override validate(
    name: string,
    value: unknown,
  ): Promise<{ ok: true; value: unknown } | { ok: false; message: string }> {
    if (name === SUBMIT_RESULT) return Promise.resolve({ ok: true, value });
    return super.validate(name, value);
  }
}

function shq(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** Splits execute_command's text (`--- stdout ---` / `--- stderr ---` sections) into streams. */
export function splitStreams(content: string): { stdout: string; stderr: string } {
  const out = content.match(/^--- stdout ---\n([\s\S]*?)(?=^--- stderr ---$|(?![\s\S]))/m)?.[1] ??
    "";
  const err = content.match(/^--- stderr ---\n([\s\S]*)$/m)?.[1] ?? "";
  const term = content.match(/^--- output(?: \(truncated\))? ---\n([\s\S]*)$/m)?.[1];
  if (term !== undefined && !out && !err) return { stdout: term, stderr: "" };
  return { stdout: out.replace(/\n$/, out ? "\n" : ""), stderr: err };
}

/** fs_read shows `N\tline`; scripts want the text. */
function stripLineNumbers(content: string): string {
  if (/ is empty \(0 lines\)\.$/.test(content)) return "";
  const lines = content.split("\n");
  if (!lines.every((l) => l === "" || /^\s*\d+\t/.test(l) || /^\[/.test(l))) return content;
  return lines.filter((l) => !/^\[/.test(l)).map((l) => l.replace(/^\s*\d+\t/, "")).join("\n");
}

/** `mcp:<server>` → the glob of that server's tools; anything else as it is. */
function mcpGlob(t: string): string {
  return t.startsWith("mcp:") ? `mcp__${t.slice(4)}__*` : t;
}

/** Writes an embedded `.sh` script to a temp file inside the workspace (visible in the sandbox). */
async function materialise(cwd: string, rel: string, text: string) {
  const dir = join(cwd, ".coyote", "tmp");
  await Deno.mkdir(dir, { recursive: true });
  const path = join(dir, `script-${crypto.randomUUID()}-${rel.replace(/[^A-Za-z0-9._-]/g, "_")}`);
  await Deno.writeTextFile(path, text);
  return { path, argv0: undefined, cleanup: () => Deno.remove(path).catch(() => {}) };
}

/**
 * A graph folder outside the workspace (an agent in the user's config dir, where the original
 * Coyote installs them): copied, with the agents dir's `.shared/` beside it, into a temp dir inside
 * the workspace, since the sandbox sees only the workspace and the original's scripts source
 * `$(dirname "$0")/../../.shared/utils.sh`. The copy's script path is its `$0`.
 */
async function copyAgentFolder(cwd: string, dir: string, rel: string) {
  const tmp = join(cwd, ".coyote", "tmp");
  await Deno.mkdir(tmp, { recursive: true });
  const root = await Deno.makeTempDir({ dir: tmp, prefix: "agent-" });
  const copyTree = async (from: string, to: string) => {
    await Deno.mkdir(to, { recursive: true });
    for await (const e of Deno.readDir(from)) {
      if (e.isDirectory) await copyTree(join(from, e.name), join(to, e.name));
      else if (e.isFile) await Deno.copyFile(join(from, e.name), join(to, e.name));
    }
  };
  const cleanup = () => Deno.remove(root, { recursive: true }).catch(() => {});
  try {
    await copyTree(dir, join(root, basename(dir)));
    const shared = join(dirname(dir), ".shared");
    if (await Deno.stat(shared).then((s) => s.isDirectory, () => false)) {
      await copyTree(shared, join(root, ".shared"));
    }
  } catch (e) {
    await cleanup();
    throw new NodeError(`cannot copy script ${rel} into the workspace: ${(e as Error).message}`);
  }
  const path = scriptPath(join(root, basename(dir)), rel);
  return { path, argv0: path, cleanup };
}
