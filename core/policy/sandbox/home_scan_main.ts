/**
 * The home-scan helper process (./home_prescan.ts): reads a `HomeScanRequest` (JSON) from stdin,
 * scans each store with ./home_scan.ts `scanSecrets` (the cache file of the request's data dir
 * read and, when a folder changed, written back) and, if asked, `/etc` (./root_view.ts), prints a `HomeScanReply` (JSON) on stdout and
 * exits 0; on bad input exit 2, on any other error exit 1 (the session then scans in-process).
 * Started as `deno run` of this file or as `coyote __coyote_home_scan` (main.ts).
 * @module
 */
import { openScanCache, saveScanCache, scanSecrets } from "./home_scan.ts";
import { etcScanNow } from "./root_view.ts";
import type { HomeScanReply, HomeScanRequest } from "./home_prescan.ts";

/** Runs the helper to completion; never returns. */
export async function runHomeScan(): Promise<never> {
  let req: HomeScanRequest;
  try {
    req = JSON.parse(await new Response(Deno.stdin.readable).text());
    if (
      !Array.isArray(req?.stores) || !req.stores.every((s) => typeof s === "string") ||
      (req.cacheDir !== undefined && typeof req.cacheDir !== "string") ||
      (req.etc !== undefined && typeof req.etc !== "boolean")
    ) throw new Error("bad request");
  } catch {
    Deno.exit(2);
  }
  try {
    const disk = req.cacheDir ? openScanCache(req.cacheDir) : undefined;
    const reply: HomeScanReply = { found: {} };
    for (const s of req.stores) reply.found[s] = scanSecrets(s, disk);
    if (disk) saveScanCache(disk);
    if (req.etc) reply.etc = etcScanNow(req.cacheDir);
    const bytes = new TextEncoder().encode(JSON.stringify(reply));
    for (let off = 0; off < bytes.length;) off += Deno.stdout.writeSync(bytes.subarray(off));
  } catch {
    Deno.exit(1);
  }
  Deno.exit(0);
}

if (import.meta.main) await runHomeScan();
