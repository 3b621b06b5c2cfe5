/**
 * The size limits of a checkpoint (config `checkpoints: {max_files, max_mb}`, ./store.ts): the
 * check of the whole tree that runs at a store's first checkpoint in a process and again when a
 * later one comes near a limit, and the shadow index's entry count.
 * @module
 */
import { join } from "../../util/path.ts";
import { CheckpointError } from "./objects.ts";

/** Limits of one checkpoint (config `checkpoints:`; docs/modes.md). */
export interface CheckpointLimits {
  /** Most files a checkpoint may track (default {@link DEFAULT_MAX_FILES}). */
  maxFiles: number;
  /** Most bytes of new or changed content one checkpoint may store (default {@link DEFAULT_MAX_BYTES}). */
  maxBytes: number;
}
export const DEFAULT_MAX_FILES = 100_000;
export const DEFAULT_MAX_BYTES = 512 * 1024 * 1024;

/** A checkpoint was not taken (too big, no git, not a directory); `reason` says why. */
export class CheckpointSkipped extends Error {
  override name = "CheckpointSkipped";
}

/**
 * Checks what a checkpoint would store against `limits`: the changed, deleted and new files git
 * would stage (`git ls-files -m -o --exclude-standard`, streamed and stopped at the file limit:
 * a home folder must not be walked to its end), their bytes, and the files tracked already
 * (`git ls-files -c`, exact). `env` is the store's git environment.
 * @throws CheckpointSkipped past a limit, with the config key to raise; CheckpointError when git
 *   fails.
 */
export async function checkLimits(o: {
  gitDir: string;
  workTree: string;
  env: Record<string, string>;
  limits: CheckpointLimits;
}): Promise<void> {
  const { limits } = o;
  const tooMany = () =>
    new CheckpointSkipped(
      `the workspace has over ${limits.maxFiles} files (config checkpoints.max_files)`,
    );
  const tracked = (await indexEntries(o.gitDir)) ? await countListed(o, ["-c"]) : 0;
  const room = limits.maxFiles - tracked;
  const listed = await listUpTo(o, ["-m", "-o", "--exclude-standard"], room);
  if (!listed) throw tooMany();
  const paths = [...new Set(listed)]
    // A nested repository shows as `dir/`: its files are that repository's, not ours.
    .filter((p) => p && !p.endsWith("/"));
  let bytes = 0;
  let added = 0;
  for (const p of paths) {
    try {
      const st = await Deno.lstat(join(o.workTree, p));
      if (st.isFile) bytes += st.size;
      added++;
    } catch { /* deleted */ }
  }
  if (bytes > limits.maxBytes) {
    throw new CheckpointSkipped(
      `the workspace has ${mb(bytes)} of new or changed files to store, over the limit of ${
        mb(limits.maxBytes)
      } (config checkpoints.max_mb)`,
    );
  }
  if (tracked + added > limits.maxFiles) throw tooMany();
}

/** `git ls-files -z <args>`' paths, or null once more than `max` came (the run is killed). */
async function listUpTo(
  o: { workTree: string; env: Record<string, string> },
  args: string[],
  max: number,
): Promise<string[] | null> {
  const child = new Deno.Command("git", {
    args: ["ls-files", "-z", ...args],
    cwd: o.workTree,
    env: o.env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const parts: Uint8Array[] = [];
  let count = 0;
  let over = false;
  for await (const chunk of child.stdout) {
    parts.push(chunk);
    for (const b of chunk) if (b === 0) count++;
    if (count > max) {
      over = true;
      break;
    }
  }
  if (over) {
    try {
      child.kill("SIGKILL");
    } catch { /* ended */ }
  }
  const status = await child.status;
  if (over) return null;
  if (!status.success) throw new CheckpointError(`git ls-files failed (exit ${status.code})`);
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    all.set(p, off);
    off += p.length;
  }
  return new TextDecoder().decode(all).split("\0").filter(Boolean);
}

async function countListed(
  o: { workTree: string; env: Record<string, string> },
  args: string[],
): Promise<number> {
  return (await listUpTo(o, args, Infinity))!.length;
}

/**
 * The shadow index's entry count from file headers alone (0 before the first checkpoint), an
 * upper bound: the index is split (`core.splitIndex`), so it is the entries of its own file plus
 * those of the largest shared index beside it — entries the split part replaces or deletes count
 * twice. Good for "near a limit?"; {@link checkLimits} counts exactly.
 */
export async function indexEntries(gitDir: string): Promise<number> {
  let n = await headerCount(join(gitDir, "index"));
  let shared = 0;
  try {
    for await (const e of Deno.readDir(gitDir)) {
      if (e.name.startsWith("sharedindex.")) {
        shared = Math.max(shared, await headerCount(join(gitDir, e.name)));
      }
    }
  } catch { /* none */ }
  n += shared;
  return n;
}

/** The entry count in an index file's header ("DIRC", version, count; network byte order). */
async function headerCount(path: string): Promise<number> {
  let f: Deno.FsFile;
  try {
    f = await Deno.open(path);
  } catch {
    return 0;
  }
  try {
    const head = new Uint8Array(12);
    const n = await f.read(head);
    return n === 12 ? new DataView(head.buffer).getUint32(8) : 0;
  } finally {
    f.close();
  }
}

function mb(n: number): string {
  return `${Math.round(n / 1024 / 1024)} MB`;
}
