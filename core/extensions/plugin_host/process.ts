/**
 * One plugin's child process, seen from the host: a `postMessage`-shaped
 * channel over the child's stdin/stdout (one JSON message per line; the child
 * side is host_main.ts), that can be killed outright.
 *
 * Why a process: a Deno Worker stuck in a loop that never yields cannot be
 * stopped on Deno 2.9.6 (`terminate()` waits for the loop to yield,
 * denoland/deno#35657) and keeps a core until Coyote exits; a process is
 * ended by SIGKILL whatever it runs. Its heap is capped by V8 flags
 * (`--max-old-space-size`): reaching it aborts the child, not Coyote.
 *
 * The command (see {@link pluginHostCommand}):
 * - under `deno run` / `deno test`: `deno run --no-config --no-prompt
 *   --unstable-worker-options <grant as flags> --v8-flags=--max-old-space-size=N
 *   core/extensions/plugin_host/host_main.ts` — the whole child, its module loading
 *   included, runs with exactly the plugin's grant ({@link grantFlags}, derived
 *   from `Policy.workerPermissions`, and the plugin runs in its main isolate);
 * - in a `deno compile` binary (`Deno.build.standalone`), where there is no
 *   `deno` and the binary's own permission and V8 flags are fixed: the binary
 *   itself with the hidden argument `__coyote_plugin_host` (main.ts
 *   dispatches it with a literal import). There the grant is enforced by the
 *   permission-scoped Worker inside the child, and the heap by the host's
 *   memory watchdog over the child's RSS (compiled binaries ignore
 *   `DENO_V8_FLAGS`).
 *
 * The child gets a scrubbed environment ({@link processEnvFor}): the base
 * variables a runtime needs plus the plugin's `env` grant, never the session's
 * secrets. Its stderr (where everything the plugin prints goes) is forwarded to
 * Coyote's stderr, except V8's out-of-memory report, which becomes the reason.
 *
 * Graph script nodes use the same process (core/graph/script.ts, with the
 * `module` entry of host_main.ts): `label` names them in exit reasons and
 * `maxMessageBytes` bounds what the host buffers of one message.
 * @module
 */
import { PLUGIN_HOST_ARG } from "./host_main.ts";
import { CHILD_BASE_ENV } from "./grant.ts";
import { selfCommand } from "../../util/self_command.ts";

/**
 * Variables every plugin process gets (when set) besides its `env` grant: those its child
 * processes get ({@link CHILD_BASE_ENV}) and where Deno finds its cache.
 */
export const PROCESS_BASE_ENV = [...CHILD_BASE_ENV, "DENO_DIR", "XDG_CACHE_HOME"];

const HOST_ENTRY = new URL("./host_main.ts", import.meta.url);

/**
 * `deno run` flags granting exactly `perms` (every Deno permission key of a
 * Worker grant): `--allow-KIND=a,b` for a list, `--allow-KIND` for `true`,
 * nothing for `false`/empty; `--deny-import` always (plugins never import).
 * @throws Error when a value contains a comma (Deno splits flag values on
 *   commas, so the flag would grant more than the list says)
 */
export function grantFlags(perms: Deno.PermissionOptionsObject): string[] {
  const flags: string[] = [];
  for (const kind of ["read", "write", "net", "env", "run", "sys", "ffi"] as const) {
    const v = perms[kind] as unknown;
    if (v === true || v === "inherit") flags.push(`--allow-${kind}`);
    else if (Array.isArray(v) && v.length) {
      const values = v.map((x) => String(x instanceof URL ? x.pathname : x));
      const bad = values.find((x) => x.includes(","));
      if (bad !== undefined) {
        throw new Error(`its ${kind} grant ${JSON.stringify(bad)} contains a comma`);
      }
      flags.push(`--allow-${kind}=${values.join(",")}`);
    }
  }
  flags.push("--deny-import");
  return flags;
}

/** The environment of a plugin process: {@link PROCESS_BASE_ENV} plus the `env` grant. */
export function processEnvFor(perms: Deno.PermissionOptionsObject): Record<string, string> {
  const names = [...PROCESS_BASE_ENV, ...(Array.isArray(perms.env) ? perms.env.map(String) : [])];
  const out: Record<string, string> = { DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" };
  for (const n of names) {
    const v = Deno.env.get(n);
    if (v !== undefined) out[n] = v;
  }
  return out;
}

/** True in a `deno compile` binary. */
export const IS_COMPILED = Deno.build.standalone === true;

/**
 * The command line that starts a plugin process.
 * @param perms the plugin's grant (all keys explicit)
 * @param maxHeapMB V8 old-generation limit in MB; 0 = V8's default
 */
export function pluginHostCommand(
  perms: Deno.PermissionOptionsObject,
  maxHeapMB: number,
): { cmd: string; args: string[] } {
  const v8 = maxHeapMB > 0 ? [`--v8-flags=--max-old-space-size=${maxHeapMB}`] : [];
  return selfCommand(PLUGIN_HOST_ARG, HOST_ENTRY, [
    "--unstable-worker-options",
    ...grantFlags(perms),
    ...v8,
  ]);
}

/** Plugin processes still running; killed when Coyote exits (`unload`). */
const live = new Set<PluginProcess>();
let unloadHooked = false;

const OOM_RE = /Fatal JavaScript out of memory|Reached heap limit|JavaScript heap out of memory/;

/** A plugin's child process as a message channel. */
export class PluginProcess {
  /** Receives every message the child sends (parsed JSON; untrusted). */
  onmessage?: (data: unknown) => void;
  /** Called once when the child has exited on its own (not after {@link terminate}). */
  onexit?: (reason: string) => void;
  /** Resolves when the child has exited and its pipes are drained. */
  readonly closed: Promise<void>;
  readonly pid: number;
  #child: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #writing: Promise<void> = Promise.resolve();
  #terminated = false;
  #oom = false;
  #tooBig?: number;
  #label: string;
  #maxLine: number;
  #encoder = new TextEncoder();

  /**
   * Spawns the child.
   * @throws Error when the process cannot be started
   */
  constructor(
    readonly name: string,
    readonly permissions: Deno.PermissionOptionsObject,
    readonly maxHeapMB: number,
    opts: {
      stderr?: (text: string) => void;
      /** Who runs in the child, as exit reasons name it (default `"plugin"`). */
      label?: string;
      /**
       * Longest message (line) the host buffers, in characters of its JSON text; a longer one
       * kills the child with the reason "sent a message larger than N bytes" (default:
       * unbounded). Stderr lines longer than this are forwarded in pieces.
       */
      maxMessageBytes?: number;
    } = {},
  ) {
    this.#label = opts.label ?? "plugin";
    this.#maxLine = opts.maxMessageBytes ?? Infinity;
    const { cmd, args } = pluginHostCommand(permissions, maxHeapMB);
    this.#child = new Deno.Command(cmd, {
      args,
      clearEnv: true,
      env: processEnvFor(permissions),
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.pid = this.#child.pid;
    live.add(this);
    if (!unloadHooked) {
      unloadHooked = true;
      // A plugin process exits by itself when its stdin closes, unless its code never yields:
      // kill every one on the way out (Deno.exit and a normal end fire `unload`).
      globalThis.addEventListener("unload", () => {
        for (const p of [...live]) p.terminate();
      });
    }
    this.#writer = this.#child.stdin.getWriter();
    const stderrSink = opts.stderr ?? defaultStderr;
    const out = this.#readLines(this.#child.stdout, "kill", (line) => {
      let m: unknown;
      try {
        m = JSON.parse(line);
      } catch {
        return; // not ours: a plugin writing to the raw stdout only garbles its own channel
      }
      this.onmessage?.(m);
    });
    let dumping = false;
    const err = this.#readLines(this.#child.stderr, "split", (line) => {
      if (OOM_RE.test(line) || line.startsWith("<--- Last few GCs")) {
        if (OOM_RE.test(line)) this.#oom = true;
        dumping = true; // V8's report (GC trace, C stack) is no use to the user
      }
      if (!dumping) stderrSink(line + "\n");
    });
    this.closed = Promise.all([this.#child.status, out, err]).then(([status]) => {
      live.delete(this);
      if (this.#terminated) return;
      this.#terminated = true;
      this.onexit?.(this.#exitReason(status));
    });
  }

  #exitReason(status: Deno.CommandStatus): string {
    const who = this.#label;
    if (this.#oom) {
      return this.maxHeapMB > 0
        ? `out of memory: the ${who}'s JavaScript heap reached its limit of ${this.maxHeapMB} MB`
        : `out of memory: the ${who}'s JavaScript heap reached V8's limit`;
    }
    if (this.#tooBig !== undefined) {
      return `the ${who} sent a message larger than ${this.#tooBig} bytes (its process was killed)`;
    }
    return status.signal
      ? `the ${who}'s process was killed (${status.signal})`
      : `the ${who}'s process exited (code ${status.code})`;
  }

  async #readLines(
    stream: ReadableStream<Uint8Array>,
    overlong: "kill" | "split",
    fn: (line: string) => void,
  ): Promise<void> {
    const decoder = new TextDecoder();
    // Pieces of the current line: joined once its end arrives (linear in the line's length).
    let parts: string[] = [];
    let size = 0;
    try {
      for await (const chunk of stream) {
        if (overlong === "kill" && this.#tooBig !== undefined) continue; // drained, unread
        let text = decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = text.indexOf("\n")) >= 0) {
          const line = parts.join("") + text.slice(0, nl);
          parts = [];
          size = 0;
          text = text.slice(nl + 1);
          if (line) fn(line);
        }
        if (text) {
          parts.push(text);
          size += text.length;
        }
        if (size > this.#maxLine) {
          if (overlong === "split") fn(parts.join(""));
          else {
            // Not buffered further: the child is killed and its reason says why.
            this.#tooBig = this.#maxLine;
            try {
              this.#child.kill("SIGKILL");
            } catch { /* already gone */ }
          }
          parts = [];
          size = 0;
        }
      }
      if (parts.length) fn(parts.join(""));
    } catch { /* the child is gone */ }
  }

  /**
   * Sends one message (JSON data) to the child.
   * @throws TypeError when `m` is not JSON-serialisable
   */
  postMessage(m: unknown): void {
    if (this.#terminated) return;
    const bytes = this.#encoder.encode(JSON.stringify(m) + "\n");
    this.#writing = this.#writing.then(() => this.#writer.write(bytes)).catch(() => {});
  }

  /** The child's resident set size in MiB (Linux `/proc`; undefined elsewhere or when gone). */
  rssMiB(): number | undefined {
    try {
      const statm = Deno.readTextFileSync(`/proc/${this.pid}/statm`).split(" ");
      return (Number(statm[1]) * 4096) / 2 ** 20;
    } catch {
      return undefined;
    }
  }

  /** Kills the child (SIGKILL); {@link onexit} is not called. Idempotent. */
  terminate(): void {
    if (this.#terminated) return;
    this.#terminated = true;
    try {
      this.#child.kill("SIGKILL");
    } catch { /* already gone */ }
    this.#writer.close().catch(() => {});
  }
}

function defaultStderr(text: string): void {
  try {
    Deno.stderr.writeSync(new TextEncoder().encode(text));
  } catch { /* stderr closed */ }
}
