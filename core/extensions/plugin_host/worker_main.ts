/**
 * The code that runs inside every plugin Worker, as a self-contained function
 * whose source text (`Function.prototype.toString`) becomes the Worker's
 * `data:` URL module. Keeping it a function (rather than a file the Worker
 * loads by path) makes it type-checked here and loadable from a `deno compile`
 * binary, where there is no file to load.
 *
 * Protocol (host ⇄ worker, `postMessage`, all plain JSON-cloneable objects):
 *
 * | direction | message |
 * | --- | --- |
 * | host → worker | `{type:"load", name, permissions, code, limits:{maxResultBytes}, childEnv}` — evaluate the plugin text (no imports inside); `permissions` is the Worker's grant (used by host_main.ts) |
 * | worker → host | `{type:"ready", manifest}` or `{type:"loadError", message}` |
 * | host → worker | `{type:"call", id, tool, input, cwd, toolCallId}` |
 * | worker → host | `{type:"progress", id, update}`, `{type:"log", id?, level, message}`, `{type:"permission", id, reqId, question}` |
 * | host → worker | `{type:"permissionReply", reqId, granted}`, `{type:"cancel", id}` |
 * | worker → host | `{type:"result", id, json}` (JSON text of a ToolResult) or `{type:"error", id, message}` |
 * | worker → host | `{type:"crash", message}` — uncaught error / unhandled rejection / `self.close()` |
 *
 * Before the plugin's text runs, the bootstrap neutralises
 * `Deno.permissions.request` (always `denied`, so a plugin cannot prompt the
 * user for more rights), removes `BroadcastChannel` (no side channel between
 * plugin Workers) and `Deno[Deno.internal]`, sends everything the plugin
 * prints (console, `Deno.stdout`, node's `process.stdout`) to stderr, and
 * hooks `self.close`, `error` and
 * `unhandledrejection` so that a crash is reported instead of hanging a call.
 * The plugin code is evaluated from a `data:` URL (compile-safe, like the
 * bootstrap's own; `blob:` module URLs are "not found" in a `deno compile`
 * binary) under the Worker's own permissions; it has already been checked to
 * contain no imports.
 *
 * The bootstrap's one outside name is `stdoutToStderr` (core/util/child_stdout.ts, itself
 * self-contained): {@link workerSource} puts its source text before `workerMain`'s, and a direct
 * call of `workerMain` (host_main.ts) sees this module's import of it.
 * @module
 */
import { stdoutToStderr } from "../../util/child_stdout.ts";

/**
 * The worker's entry point. Must not reference anything outside its own body but
 * `stdoutToStderr`, which {@link workerSource} defines alongside it.
 * @param opts.role who runs under it, as crash and refusal messages name it (default
 *   `"plugin"`; graph scripts, core/graph/script_main.ts, pass `"script"`)
 * @param opts.childEnv the environment of child processes before a `load` message sets it
 */
export function workerMain(opts: { role?: string; childEnv?: Record<string, string> } = {}): void {
  // deno-lint-ignore no-explicit-any
  type Any = any;
  const g = globalThis as Any;
  const post: (m: unknown) => void = g.postMessage.bind(g);
  const origClose: () => void = g.close.bind(g);
  const stringify = JSON.stringify;
  const encoder = new TextEncoder();
  let maxResultBytes = 1024 * 1024;
  const role = String(opts?.role ?? "plugin");

  // 1. No escalation: requests are answered "denied" without prompting.
  const denied = (desc: Any) => {
    const status = { state: "denied", name: desc?.name, partial: false, onchange: null };
    return status;
  };
  const permProto = Object.getPrototypeOf(Deno.permissions);
  for (const target of [permProto, Deno.permissions]) {
    Object.defineProperty(target, "request", {
      value: (desc: Any) => Promise.resolve(denied(desc)),
      writable: false,
      configurable: false,
    });
    Object.defineProperty(target, "requestSync", {
      value: (desc: Any) => denied(desc),
      writable: false,
      configurable: false,
    });
  }
  // Internal runtime hooks are no business of a plugin (defence in depth).
  try {
    delete (Deno as Any)[(Deno as Any).internal];
  } catch { /* not configurable: leave it */ }
  // No side channel between plugin Workers (two plugins must not pool their grants).
  try {
    delete g.BroadcastChannel;
  } catch { /* ignore */ }
  // Process-wide state belongs to the host. In Deno a Worker shares the process's
  // working directory, environment and signal handlers, so a plugin with a read
  // grant could move the host's cwd (`Deno.chdir`), one with an env grant could
  // rewrite the host's PATH (`Deno.env.set`), and any plugin could make the
  // session ignore SIGINT/SIGTERM (`Deno.addSignalListener`). The host's argv is
  // none of its business either (`Deno.args`: prompts may carry secrets).
  const refuse = (what: string) => () => {
    throw new Deno.errors.NotCapable(
      `a ${role} cannot ${what}: it is process-wide state that belongs to Coyote`,
    );
  };
  const lock = (target: Any, key: string, value: unknown) => {
    try {
      Object.defineProperty(target, key, { value, writable: false, configurable: false });
    } catch { /* a runtime that freezes it keeps it */ }
  };
  lock(Deno, "chdir", refuse("change the working directory"));
  lock(Deno, "addSignalListener", refuse("listen to process signals"));
  lock(Deno, "removeSignalListener", refuse("listen to process signals"));
  lock(Deno, "args", Object.freeze([]));
  lock(Deno.env, "set", refuse("change environment variables"));
  lock(Deno.env, "delete", refuse("change environment variables"));
  // Child processes get only the environment the host sends at load (base variables
  // plus the plugin's env grant): Deno would otherwise hand them the WHOLE process
  // environment, whatever this Worker's env permission (see childEnvFor in grant.ts).
  // A function, not a subclass, so that the original class is not its prototype;
  // the shared prototype's `constructor` points back here. (Defence in depth: a
  // program the plugin may run works outside the sandbox with the user's rights.)
  let childEnv: Record<string, string> = { ...(opts?.childEnv ?? {}) };
  const OrigCommand = Deno.Command;
  function Command(command: string | URL, options?: Deno.CommandOptions): Deno.Command {
    if (!new.target) throw new TypeError("Deno.Command must be called with new");
    const o = options ?? {};
    // No child inherits fd 1 (the frontend's protocol stream in ACP / stream-json): what a
    // child would print there (default `spawn()` stdio, or "inherit") is copied to stderr.
    const toErr = o.stdout === undefined || o.stdout === "inherit";
    const cmd = new OrigCommand(command, {
      ...o,
      clearEnv: true,
      env: { ...childEnv, ...(o.env ?? {}) },
      ...(toErr ? { stdout: "piped" as const } : {}),
    });
    return toErr ? stdoutToStderr(cmd, o.stdout === "inherit") : cmd;
  }
  Command.prototype = OrigCommand.prototype;
  lock(OrigCommand.prototype, "constructor", Command);
  lock(Deno, "Command", Command);
  // stdout belongs to the frontend's protocol (ACP, stream-json): plugin output goes to stderr.
  const toStderr = (...a: unknown[]) => console.error(...a);
  for (const m of ["log", "info", "debug", "warn", "dir", "dirxml", "table"]) {
    (console as Any)[m] = toStderr;
  }
  try {
    const err = Deno.stderr;
    for (
      const [k, v] of [
        ["write", (p: Uint8Array) => err.write(p)],
        ["writeSync", (p: Uint8Array) => err.writeSync(p)],
        ["writable", err.writable],
      ] as const
    ) {
      Object.defineProperty(Deno.stdout, k, { value: v, writable: false, configurable: false });
    }
  } catch { /* a runtime that freezes Deno.stdout keeps it */ }
  // 2. Crashes are reported, not silently hung.
  Object.defineProperty(g, "close", {
    value: () => {
      post({ type: "crash", message: `the ${role} closed its worker (self.close())` });
      origClose();
    },
    writable: false,
    configurable: false,
  });
  // `Deno.exit()` / `process.exit()` in a Worker end it silently: report it as a crash.
  const exitHook = (via: string) => (code?: number) => {
    post({ type: "crash", message: `the ${role} called ${via}(${Number(code ?? 0)})` });
    origClose();
    throw new Error(`${via}() ends the ${role}'s worker`);
  };
  lock(Deno, "exit", exitHook("Deno.exit"));
  // Node's `process` is built on first access, which costs tens of milliseconds: lock its
  // exit functions when the plugin first reads the global, not at every start. (Through
  // `node:process` a plugin's exit is still seen: as its process or Worker ending.)
  const lockProcess = (proc: Any) => {
    if (proc && typeof proc === "object") {
      lock(proc, "exit", exitHook("process.exit"));
      lock(proc, "reallyExit", exitHook("process.exit"));
    }
    return proc;
  };
  const procDesc = Object.getOwnPropertyDescriptor(g, "process");
  if (procDesc?.get && procDesc.configurable) {
    let locked = false;
    Object.defineProperty(g, "process", {
      get() {
        const proc = procDesc.get!.call(g);
        if (!locked) {
          locked = true;
          lockProcess(proc);
        }
        return proc;
      },
      set: procDesc.set,
      enumerable: procDesc.enumerable,
      configurable: false,
    });
  } else lockProcess(g.process);
  const errText = (e: Any): string => {
    try {
      if (e instanceof Error) return `${e.name}: ${e.message}`;
      return String(e);
    } catch {
      return "unknown error";
    }
  };
  g.addEventListener("error", (ev: Any) => {
    ev.preventDefault();
    post({ type: "crash", message: `uncaught error: ${errText(ev.error ?? ev.message)}` });
  });
  g.addEventListener("unhandledrejection", (ev: Any) => {
    ev.preventDefault();
    post({ type: "crash", message: `unhandled rejection: ${errText(ev.reason)}` });
  });

  let plugin: Any = null;
  const tools = new Map<string, Any>();
  const calls = new Map<number, AbortController>();
  const permissionWaiters = new Map<number, (granted: boolean) => void>();
  let nextReq = 1;

  const isZod = (s: Any) => s && typeof s === "object" && typeof s.safeParse === "function";

  function schemaOf(tool: Any): Any {
    const input = tool.input;
    if (isZod(input)) {
      if (typeof input.toJSONSchema === "function") {
        let js: Any;
        try {
          js = input.toJSONSchema({ io: "input", unrepresentable: "any" });
        } catch {
          js = input.toJSONSchema();
        }
        return JSON.parse(stringify(js));
      }
      throw new Error(
        `tool "${tool.name}": its zod schema has no toJSONSchema() (zod/mini?); give a plain JSON Schema instead`,
      );
    }
    if (input && typeof input === "object" && !Array.isArray(input)) {
      return JSON.parse(stringify(input));
    }
    throw new Error(
      `tool "${String(tool?.name)}": input must be a zod schema or a JSON Schema object`,
    );
  }

  function plainData(value: Any, what: string): Any {
    if (value === undefined) return undefined;
    try {
      return JSON.parse(stringify(value));
    } catch (e) {
      throw new Error(`${what} is not JSON data: ${errText(e)}`);
    }
  }

  function manifest(p: Any): Any {
    if (!p || typeof p !== "object") {
      throw new Error(
        "the module's default export is not a plugin (use `export default definePlugin({...})`)",
      );
    }
    const toolList = Array.isArray(p.tools) ? p.tools : [];
    const outTools = [];
    for (const t of toolList) {
      if (!t || typeof t !== "object" || typeof t.run !== "function") {
        throw new Error(`tool "${String(t?.name)}" has no run() function`);
      }
      tools.set(String(t.name), t);
      outTools.push({
        name: String(t.name),
        description: String(t.description ?? ""),
        inputSchema: schemaOf(t),
        kind: typeof t.kind === "string" ? t.kind : undefined,
        readOnly: t.readOnly === true,
        concurrency: typeof t.concurrency === "string" ? t.concurrency : undefined,
      });
    }
    return {
      name: p.name,
      version: p.version,
      description: p.description,
      sdkVersion: p.sdkVersion,
      permissions: plainData(p.permissions, "permissions") ?? {},
      tools: outTools,
      agents: plainData(p.agents, "agents") ?? [],
      skills: plainData(p.skills, "skills") ?? [],
      hooks: plainData(p.hooks, "hooks") ?? {},
    };
  }

  function checkSerialisable(value: Any, path: string, seen: Set<unknown>): void {
    const t = typeof value;
    if (t === "function" || t === "symbol" || t === "bigint") {
      throw new Error(`${path} is a ${t}`);
    }
    if (value === null || t !== "object") return;
    if (seen.has(value)) throw new Error(`${path} is circular`);
    seen.add(value);
    if (Array.isArray(value)) {
      value.forEach((v, i) => checkSerialisable(v, `${path}[${i}]`, seen));
    } else {
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) {
        throw new Error(`${path} is a ${proto?.constructor?.name ?? "non-plain"} object`);
      }
      for (const k of Object.keys(value)) checkSerialisable(value[k], `${path}.${k}`, seen);
      if (Object.getOwnPropertySymbols(value).length) throw new Error(`${path} has symbol keys`);
    }
    seen.delete(value);
  }

  function encodeResult(raw: Any): string {
    const result = typeof raw === "string" ? { content: raw } : raw;
    if (!result || typeof result !== "object" || typeof result.content !== "string") {
      throw new Error("the tool returned neither a string nor a {content: string} result");
    }
    checkSerialisable(result, "result", new Set());
    const json = stringify(result);
    const size = encoder.encode(json).length;
    if (size > maxResultBytes) {
      throw new Error(`result too large (${size} bytes > limit ${maxResultBytes})`);
    }
    return json;
  }

  async function runCall(m: Any): Promise<void> {
    const ac = new AbortController();
    calls.set(m.id, ac);
    try {
      const tool = tools.get(m.tool);
      if (!tool) throw new Error(`unknown tool "${m.tool}"`);
      let input = m.input;
      if (isZod(tool.input)) {
        const parsed = tool.input.safeParse(input);
        if (!parsed.success) throw new Error(`invalid input: ${parsed.error?.message}`);
        input = parsed.data;
      }
      const log = (level: string) => (message: unknown) =>
        post({ type: "log", id: m.id, level, message: String(message).slice(0, 4096) });
      const ctx = {
        cwd: m.cwd,
        signal: ac.signal,
        toolCallId: m.toolCallId,
        log: { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") },
        progress(update: Any) {
          try {
            post({ type: "progress", id: m.id, update: plainData(update, "progress") });
          } catch { /* ignore bad progress */ }
        },
        requestPermission(question: Any): Promise<boolean> {
          if (ac.signal.aborted) return Promise.resolve(false);
          const reqId = nextReq++;
          return new Promise<boolean>((resolve) => {
            permissionWaiters.set(reqId, resolve);
            post({
              type: "permission",
              id: m.id,
              reqId,
              question: {
                title: String(question?.title ?? ""),
                detail: question?.detail === undefined ? undefined : String(question.detail),
              },
            });
          });
        },
      };
      const raw = await tool.run(input, ctx);
      // Always answer (also after a cancel) so the host knows the call has stopped.
      post({ type: "result", id: m.id, json: encodeResult(raw) });
    } catch (e) {
      post({ type: "error", id: m.id, message: errText(e) });
    } finally {
      calls.delete(m.id);
    }
  }

  const onMessage = async (ev: { data: unknown }) => {
    const m: Any = ev.data;
    if (!m || typeof m !== "object") return;
    if (m.type === "load") {
      if (typeof m.limits?.maxResultBytes === "number") maxResultBytes = m.limits.maxResultBytes;
      if (m.childEnv && typeof m.childEnv === "object") childEnv = { ...m.childEnv };
      try {
        // A data: URL, not a blob: URL: a `deno compile` binary resolves data: URLs
        // but reports "Module not found" for blob: ones (denoland/deno#29962, #33218).
        const mod = await import(`data:application/javascript,${encodeURIComponent(m.code)}`);
        plugin = mod.default;
        post({ type: "ready", manifest: manifest(plugin) });
      } catch (e) {
        post({ type: "loadError", message: errText(e) });
      }
    } else if (m.type === "call") {
      runCall(m);
    } else if (m.type === "cancel") {
      const ac = calls.get(m.id);
      calls.delete(m.id);
      ac?.abort(new DOMException("cancelled by the host", "AbortError"));
    } else if (m.type === "permissionReply") {
      const w = permissionWaiters.get(m.reqId);
      permissionWaiters.delete(m.reqId);
      w?.(m.granted === true);
    }
  };
  // The dispatcher is `self.onmessage`, as a plugin written for a Worker expects.
  g.onmessage = onMessage;
}

/**
 * The bootstrap as module source text: `stdoutToStderr`'s declaration, then `workerMain`
 * called with `opts` (JSON; none when omitted). The one place that builds it.
 */
export function workerSource(opts?: { role?: string; childEnv?: Record<string, string> }): string {
  const args = opts === undefined ? "" : JSON.stringify(opts);
  return `${stdoutToStderr.toString()}\n(${workerMain.toString()})(${args});\n`;
}

/** The bootstrap as module source text (what the Worker's `data:` URL contains). */
export const WORKER_SOURCE = workerSource();
