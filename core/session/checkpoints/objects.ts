/**
 * Git data of the checkpoint store (./store.ts) handled in-process: the commit object of a
 * checkpoint, written as `git commit-tree` would — one git process less per turn: git's loose
 * object format (zlib of `commit <size>\0<body>`, named by its SHA-1) under `<gitDir>/objects/`,
 * author and committer `coyote <coyote@localhost>`; and the changes of a restore read from
 * `git diff-tree -r -z -M --raw`.
 * @module
 */
import { join } from "../../util/path.ts";

/** One file the restore changes, from the workspace as it is to the checkpoint. */
export interface RestoreChange {
  /** `added`: the checkpoint has it and the workspace not (it is written back); `deleted`: created since (it is removed). */
  status: "added" | "modified" | "deleted" | "renamed";
  path: string;
  /** `renamed`: the path in the workspace now (it becomes `path`). */
  from?: string;
  /** Git modes when they differ (`100644` → `100755`). */
  mode?: { from: string; to: string };
}

/** A git run that failed; the message has git's stderr. */
export class CheckpointError extends Error {
  override name = "CheckpointError";
}

/** The changes of `git diff-tree -r -z -M --raw --no-commit-id` output (see {@link RestoreChange}). */
export function parseRawDiff(raw: string): RestoreChange[] {
  const parts = raw.split("\0");
  const out: RestoreChange[] = [];
  for (let i = 0; i < parts.length;) {
    const head = parts[i++];
    if (!head.startsWith(":")) continue;
    const [fromMode, toMode, , , status] = head.slice(1).split(" ");
    const path = parts[i++];
    const mode = fromMode !== toMode && fromMode !== "000000" && toMode !== "000000"
      ? { mode: { from: fromMode, to: toMode } }
      : {};
    if (status.startsWith("R")) {
      out.push({ status: "renamed", from: path, path: parts[i++], ...mode });
    } else {
      const s = status === "A" ? "added" : status === "D" ? "deleted" : "modified";
      out.push({ status: s, path, ...mode });
    }
  }
  return out;
}

/**
 * Writes the commit of `tree` (40 hex) with `parent` (40 hex, or null for the first) and
 * `message` into the repository at `gitDir`; resolves its id (40 hex).
 * @throws the file system's errors (the object directory not writable).
 */
export async function writeCommit(
  gitDir: string,
  tree: string,
  parent: string | null,
  message: string,
): Promise<string> {
  const when = `${Math.floor(Date.now() / 1000)} +0000`;
  const who = `coyote <coyote@localhost> ${when}`;
  const body = new TextEncoder().encode(
    `tree ${tree}\n${parent ? `parent ${parent}\n` : ""}author ${who}\ncommitter ${who}\n\n${
      message.replace(/\n*$/, "")
    }\n`,
  );
  const head = new TextEncoder().encode(`commit ${body.length}\0`);
  const raw = new Uint8Array(head.length + body.length);
  raw.set(head);
  raw.set(body, head.length);
  const id = [...new Uint8Array(await crypto.subtle.digest("SHA-1", raw))]
    .map((b) => b.toString(16).padStart(2, "0")).join("");
  const packed = new Uint8Array(
    await new Response(new Blob([raw]).stream().pipeThrough(new CompressionStream("deflate")))
      .arrayBuffer(),
  );
  const dir = join(gitDir, "objects", id.slice(0, 2));
  await Deno.mkdir(dir, { recursive: true });
  const tmp = join(dir, `tmp_${crypto.randomUUID()}`);
  await Deno.writeFile(tmp, packed, { mode: 0o444 });
  await Deno.rename(tmp, join(dir, id.slice(2)));
  return id;
}
