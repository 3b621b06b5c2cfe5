/**
 * The sandbox's host scans ahead of time, in a helper process (issue 22, peak RSS).
 *
 * The scan of the toolchain stores (./home_scan.ts `scanSecrets`: thousands of `lstat`s, the
 * cache file of folder records parsed and written back) cost the session's process ≈ 11 MB of
 * its peak resident memory and ≈ 30 ms on its one JS thread at the first command (a home with
 * Deno's, npm's and Maven's caches), the `/etc` scan of the root view (./root_view.ts: an
 * `lstat` per entry) ≈ 3 MB more. {@link prescanHome} runs the same code in a short-lived
 * process — `coyote __coyote_home_scan` in a compiled binary (main.ts), the entry module under
 * `deno run` — started once the first model request is out, and hands its findings to the
 * session ({@link takeScans}, {@link takeEtcScan}); the views then only mount them. Reading the
 * result is fail-closed: a helper that fails, times out or prints anything but the expected JSON
 * changes nothing, and the views scan in-process as before (nothing is shown unscanned).
 *
 * The helper's own rights under `deno run`: read everything, write only the data dir (its
 * cache files); no network, environment, subprocesses or FFI. The `/etc` scan is taken only
 * while the folders its key stamps are unchanged (./root_view.ts `rootViewKey`).
 * @module
 */
import { SCAN_TTL_MS, takeScans } from "./home_scan.ts";
import { selfCommand } from "../../util/self_command.ts";
import { storeSources } from "./home_view.ts";
import { type EtcScan, takeEtcScan } from "./root_view.ts";

/** The hidden first argument of a compiled binary that makes it the scan helper (main.ts). */
export const HOME_SCAN_ARG = "__coyote_home_scan";

/** The helper's entry under `deno run` (./home_scan_main.ts). */
const ENTRY = new URL("./home_scan_main.ts", import.meta.url);

/**
 * The helper's request on its stdin: the stores (real paths), the caches' folder, and whether
 * to scan `/etc` too (./root_view.ts, Linux).
 */
export interface HomeScanRequest {
  stores: string[];
  cacheDir?: string;
  etc?: boolean;
}

/** The helper's reply on its stdout: per store, the relative paths to hide; the `/etc` scan if asked. */
export interface HomeScanReply {
  found: Record<string, string[]>;
  etc?: EtcScan;
}

/** A helper that has not answered in this long (ms) is killed; the view scans in-process. */
export const PRESCAN_TIMEOUT_MS = 10_000;

/** A prescan is started again once the last one is this close (ms) to {@link SCAN_TTL_MS}. */
const RENEW_MARGIN_MS = 5_000;

let running: Promise<boolean> | undefined;
let last: { key: string; at: number } | undefined;
/** The helper now running, killed when Coyote exits (it must not write the data dir after). */
let live: Deno.ChildProcess | undefined;
let unloadHooked = false;

/**
 * Kills the running helper, if any: at exit (a session that ended before its first command), and
 * when a sandbox closes (./mod.ts: its data dir may be removed next). A session still waiting for
 * it then scans in-process.
 */
export function killLive(): void {
  try {
    live?.kill("SIGKILL");
  } catch { /* gone */ }
  live = undefined;
}

/** The helper's command line (compiled: the binary itself; else `deno run` of {@link ENTRY}). */
export function homeScanCommand(cacheDir: string | undefined): { cmd: string; args: string[] } {
  return selfCommand(HOME_SCAN_ARG, ENTRY, [
    "--allow-read",
    ...(cacheDir ? [`--allow-write=${cacheDir}`] : []),
  ]);
}

/**
 * Whether `v` answers a request for `stores`: a list for every store, each entry a non-empty
 * relative path (an absolute one or `""` would hide the wrong thing or show a store unscanned).
 */
export function isHomeScanReply(
  v: unknown,
  stores: readonly string[],
  etc = false,
): v is HomeScanReply {
  const f = (v as HomeScanReply)?.found;
  return !!f && typeof f === "object" &&
    stores.every((s) =>
      Array.isArray(f[s]) && f[s].every((x) => typeof x === "string" && x !== "" && x[0] !== "/")
    ) && (!etc || isEtcScan((v as HomeScanReply).etc));
}

/** Whether `v` is an {@link EtcScan} of paths below `/etc`. */
function isEtcScan(v: unknown): v is EtcScan {
  const e = v as EtcScan;
  const etcPath = (p: unknown) => typeof p === "string" && p.startsWith("/etc/");
  const num = (n: unknown) => typeof n === "number";
  return !!e && typeof e.key === "string" && Array.isArray(e.hidden) &&
    e.hidden.every((h) => etcPath(h?.path) && typeof h.dir === "boolean") &&
    Array.isArray(e.texts) &&
    e.texts.every((t) => etcPath(t?.path) && num(t.mtime) && num(t.ctime) && num(t.size)) &&
    Array.isArray(e.credentials) && e.credentials.every(etcPath);
}

/**
 * Scans the stores of `home` in a helper process and hands the findings to the home view;
 * resolves `true` when it did, `false` when the view must scan in-process (no stores, the helper
 * failed, timed out or answered nonsense). One helper at a time; a call while the last findings
 * are fresh resolves at once. Never rejects.
 */
export function prescanHome(
  home: string,
  cacheDir?: string,
  env: (name: string) => string | undefined = (n) => Deno.env.get(n),
): Promise<boolean> {
  const stores = storeSources(home, env);
  const etc = Deno.build.os === "linux";
  const key = [cacheDir ?? "", ...stores].join("\0");
  if (last?.key === key && Date.now() - last.at < SCAN_TTL_MS - RENEW_MARGIN_MS) {
    return Promise.resolve(true);
  }
  if (running) return running;
  if (!stores.length && !etc) return Promise.resolve(false);
  const at = Date.now();
  const p = run({ stores, ...(cacheDir ? { cacheDir } : {}), etc }).then((reply) => {
    if (!reply) return false;
    takeScans(reply.found, at);
    if (reply.etc) takeEtcScan(reply.etc);
    last = { key, at };
    return true;
  }).finally(() => {
    running = undefined;
  });
  running = p;
  return p;
}

async function run(request: HomeScanRequest): Promise<HomeScanReply | undefined> {
  const { cmd, args } = homeScanCommand(request.cacheDir);
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(cmd, {
      args, // the environment is inherited for Deno's own cache (`DENO_DIR`, `HOME`); the helper reads none
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
  } catch {
    return undefined;
  }
  live = child;
  if (!unloadHooked) {
    unloadHooked = true;
    globalThis.addEventListener("unload", killLive);
  }
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
  }, PRESCAN_TIMEOUT_MS);
  try {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(JSON.stringify(request)));
    await w.close();
    const out = await child.output();
    if (!out.success) return undefined;
    const reply = JSON.parse(new TextDecoder().decode(out.stdout));
    return isHomeScanReply(reply, request.stores, request.etc) ? reply : undefined;
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
    if (live === child) live = undefined;
  }
}
