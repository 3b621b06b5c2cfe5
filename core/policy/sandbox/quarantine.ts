/**
 * The OS sandbox's quarantine (docs/permissions.md "New dot-entries"): what the after-command
 * review (./cleanup.ts) takes out of the workspace is moved to `<data dir>/quarantine/<id>/<path>`,
 * nothing deleted — when the move works.
 *
 * Tenth attacker pass:
 * - **Across file systems the copy is bounded** (class 4): rename(2) cannot cross devices, so the
 *   entry is copied and removed, hard links as links (`cp -pPR` had written each of 100 links to
 *   one 10 MB file as a whole file, 964 MB). Before copying, the bytes the copy would write are
 *   summed ({@link copyCost}: file sizes, each inode once); past {@link QUARANTINE_COPY_MAX_BYTES}
 *   or {@link QUARANTINE_COPY_MAX_ENTRIES} nothing is copied.
 * - **The bound is per command, not per entry** (eleventh attacker pass, class 4: 30 new
 *   dot-folders each holding a link to one 10 MB file were copied once each, 296 MB): one
 *   {@link CopyBudget} for all entries a command's cleanup takes out — bytes and entries left, and
 *   the inodes (`dev:ino`) already copied, so a link in a later entry is linked to the earlier
 *   copy. Past the budget an entry fails closed (below).
 * - **A failed move fails closed** (class 3): the entry was created by the command, so when it
 *   cannot be moved (data dir not writable, full disk, a name too long, the cap above) it is moved
 *   to a private temp dir instead, else deleted, else made inert in place (renamed to
 *   `<name>.coyote-blocked-<id>`, mode 000: no tool loads that name). The returned text says
 *   which ({@link quarantine}); it is never left as it was without saying so.
 * @module
 */

/** Bytes a quarantine copy across file systems may write at most (256 MiB). */
export const QUARANTINE_COPY_MAX_BYTES = 256 * 1024 * 1024;

/** Entries a quarantine copy across file systems may hold at most. */
export const QUARANTINE_COPY_MAX_ENTRIES = 100_000;

/**
 * What all quarantine copies across file systems of one command may still write (eleventh
 * attacker pass: 30 new dot-folders each holding a hard link to one 10 MB file were copied once
 * each, 296 MB; the caps were per entry): `bytes` and `entries` left, and `links` — each inode
 * (`dev:ino`) already copied for this command, to the path of its copy, so a later link to it is
 * a hard link to that copy, not another copy. Made by {@link copyBudget}; one per command.
 */
export interface CopyBudget {
  bytes: number;
  entries: number;
  links: Map<string, string>;
}

/** A fresh {@link CopyBudget}: {@link QUARANTINE_COPY_MAX_BYTES} and {@link QUARANTINE_COPY_MAX_ENTRIES}. */
export function copyBudget(
  bytes = QUARANTINE_COPY_MAX_BYTES,
  entries = QUARANTINE_COPY_MAX_ENTRIES,
): CopyBudget {
  return { bytes, entries, links: new Map() };
}

/**
 * What copying `p` would write: `bytes` (sum of file sizes; each inode once when `links`, and
 * none for an inode `known` already holds a copy of; every link whole otherwise) and `entries`.
 * Stops past the caps (the totals then exceed one).
 * @throws when an entry cannot be examined (a name that does not round-trip, no permission).
 */
export function copyCost(
  p: string,
  links = true,
  caps = { bytes: QUARANTINE_COPY_MAX_BYTES, entries: QUARANTINE_COPY_MAX_ENTRIES },
  known: ReadonlyMap<string, string> = new Map(),
): { bytes: number; entries: number } {
  const seen = new Set<string>();
  let bytes = 0, entries = 0;
  const stack = [p];
  while (stack.length && bytes <= caps.bytes && entries <= caps.entries) {
    const q = stack.pop()!;
    const st = Deno.lstatSync(q);
    entries++;
    if (st.isDirectory) {
      for (const e of Deno.readDirSync(q)) stack.push(`${q}/${e.name}`);
    } else if (st.isFile) {
      const key = inodeKey(st);
      const linked = links && (st.nlink ?? 1) > 1;
      if (!(links && known.has(key)) && !(linked && seen.has(key))) bytes += st.size;
      if (linked) seen.add(key);
    }
  }
  return { bytes, entries };
}

/**
 * An inode's key in {@link CopyBudget.links}: `dev:ino`, and size and mtime (an inode number freed
 * and reused meanwhile is not the same file).
 */
const inodeKey = (st: Deno.FileInfo) => `${st.dev}:${st.ino}:${st.size}:${st.mtime?.getTime()}`;

/** The text of a copy refused by the budget. */
function overBudget(what: string, shared: boolean): Error {
  return new Error(
    `a copy to another file system would write more than ${what}${
      shared ? " (all of this command's quarantine copies together)" : ""
    }`,
  );
}

/**
 * Copies `src` to `dest` (a path that does not exist yet): folders, files (contents, mode and
 * times), symlinks as links, other entries (FIFOs, sockets, devices) by `cp -PR`; a file whose
 * inode `budget.links` holds (copied earlier for the same command, or within this copy) becomes a
 * hard link to that copy. Checks first, with {@link copyCost}, and while copying, that the bytes
 * and entries written stay within `budget` (default: a fresh one of `maxBytes`), and takes them
 * from it.
 * @throws Error naming why (over the budget, a copy failed); a partial `dest` is removed and
 * `budget` is left as it was.
 */
export function copyBounded(
  src: string,
  dest: string,
  maxBytes = QUARANTINE_COPY_MAX_BYTES,
  budget: CopyBudget = copyBudget(maxBytes),
) {
  const shared = budget.bytes < maxBytes;
  const limit = `${Math.max(0, budget.bytes) >> 20} MiB`;
  const cost = copyCost(src, true, budget, budget.links);
  if (cost.bytes > budget.bytes) throw overBudget(limit, shared);
  if (cost.entries > budget.entries) throw overBudget(`${budget.entries} entries`, shared);
  const added: string[] = [];
  let bytes = 0, entries = 0;
  try {
    const dirs: [string, Deno.FileInfo][] = [];
    const stack: [string, string][] = [[src, dest]];
    while (stack.length) {
      const [s, d] = stack.pop()!;
      const st = Deno.lstatSync(s);
      if (++entries > budget.entries) throw overBudget(`${budget.entries} entries`, shared);
      if (st.isDirectory) {
        Deno.mkdirSync(d, { mode: 0o700 });
        dirs.push([d, st]);
        for (const e of Deno.readDirSync(s)) stack.push([`${s}/${e.name}`, `${d}/${e.name}`]);
      } else if (st.isSymlink) {
        Deno.symlinkSync(Deno.readLinkSync(s), d);
      } else if (st.isFile) {
        // Looked up whatever the link count is now: the last link left once the others went.
        const key = inodeKey(st);
        const to = budget.links.get(key);
        if (to) {
          try {
            Deno.linkSync(to, d);
            continue;
          } catch { /* that copy is gone or on another file system: copied below */ }
        }
        if ((bytes += st.size) > budget.bytes) throw overBudget(limit, shared);
        Deno.copyFileSync(s, d);
        Deno.chmodSync(d, (st.mode ?? 0o600) & 0o7777);
        if (st.atime && st.mtime) Deno.utimeSync(d, st.atime, st.mtime);
        if ((st.nlink ?? 1) > 1 && !to) {
          budget.links.set(key, d);
          added.push(key);
        }
      } else {
        // Not node:fs's cpSync: importing node:fs costs every start a few ms (issue 22).
        const cp = new Deno.Command("cp", {
          args: ["-PR", "--preserve=mode,timestamps", "--", s, d],
          stdout: "null",
          stderr: "piped",
        }).outputSync();
        if (!cp.success) {
          const err = new TextDecoder().decode(cp.stderr).trim().split("\n")[0];
          throw new Error(`cp failed${err ? `: ${err}` : ""}`);
        }
      }
    }
    // Deepest first: a folder's mode (a 0555 one) and times once nothing more is written in it.
    for (const [d, st] of dirs.reverse()) {
      Deno.chmodSync(d, (st.mode ?? 0o700) & 0o7777);
      if (st.atime && st.mtime) Deno.utimeSync(d, st.atime, st.mtime);
    }
  } catch (e) {
    for (const k of added) budget.links.delete(k);
    try {
      new Deno.Command("chmod", { args: ["-R", "u+rwx", "--", dest], stderr: "null" }).outputSync();
      Deno.removeSync(dest, { recursive: true });
    } catch { /* nothing written */ }
    throw e;
  }
  budget.bytes -= bytes;
  budget.entries -= entries;
}

const message = (e: unknown) => e instanceof Error ? e.message : String(e);

function lexists(p: string): boolean {
  try {
    Deno.lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/** The quarantine folders to try, in order: the data dir's, then a private temp dir. */
function bases(dataDir: string | undefined): string[] {
  const out = dataDir ? [`${dataDir}/quarantine`] : [];
  try {
    out.push(quarantineTmp ??= Deno.makeTempDirSync({ prefix: "coyote-quarantine-" }));
  } catch { /* no temp dir */ }
  return out;
}
let quarantineTmp: string | undefined;

/**
 * When `p` could not be moved (`why`): deleted (after giving the owner write permission back,
 * a `chmod 555` folder), else renamed in place to `<name>.coyote-blocked-<id>` with mode 000.
 * Returns the text for the tool result (in parentheses), undefined when `p` is still as it was.
 */
export function failClosed(p: string, why: string, id: string): string | undefined {
  const gone = () => !lexists(p);
  try {
    Deno.removeSync(p, { recursive: true });
  } catch {
    try {
      new Deno.Command("chmod", { args: ["-R", "u+rwx", "--", p], stderr: "null" }).outputSync();
      Deno.removeSync(p, { recursive: true });
    } catch { /* below */ }
  }
  if (gone()) return `(not quarantined: ${why}; deleted instead)`;
  const inert = `${p}.coyote-blocked-${id.slice(-8)}`;
  try {
    Deno.renameSync(p, inert);
    Deno.chmodSync(inert, 0o000);
    return `(not quarantined: ${why}; could not delete it either: renamed to ${inert}, mode 000)`;
  } catch {
    return gone() ? `(not quarantined: ${why}; partly deleted, then renamed)` : undefined;
  }
}

/**
 * Moves `p` (inside `ws`) to `<dataDir>/quarantine/<id>/<path relative to ws>` (the data dir is
 * hidden from commands; when that fails or there is none, a private temp dir), renaming when it
 * can and copying across file systems ({@link copyBounded}, within `budget`: pass one
 * {@link copyBudget} for all entries of one command). Returns where it went; when no move
 * worked, {@link failClosed}'s text (starts with `(`); undefined only when `p` is still there
 * unchanged.
 */
export function quarantine(
  p: string,
  ws: string,
  dataDir: string | undefined,
  id: string,
  budget: CopyBudget = copyBudget(),
) {
  const why: string[] = [];
  for (const base of bases(dataDir)) {
    const dest = `${base}/${id}/${p.slice(ws.length + 1)}`;
    try {
      Deno.mkdirSync(dest.slice(0, dest.lastIndexOf("/")), { recursive: true, mode: 0o700 });
      try {
        Deno.renameSync(p, dest);
      } catch (e) {
        if (!(e instanceof Deno.errors.NotSupported) && !/EXDEV|cross-device/i.test(message(e))) {
          throw e;
        }
        copyBounded(p, dest, QUARANTINE_COPY_MAX_BYTES, budget);
        Deno.removeSync(p, { recursive: true });
      }
      return dest;
    } catch (e) {
      why.push(`${base}: ${message(e)}`);
      if (!lexists(p)) return dest; // copied, then the removal failed half-way: gone anyway
    }
  }
  return failClosed(p, why.join("; ") || "no quarantine folder", id);
}

/** True when {@link quarantine}'s result is a place the entry was moved to (not a failure text). */
export const movedAway = (to: string | undefined): to is string => !!to && !to.startsWith("(");

/**
 * {@link quarantine} for an entry the scan could not read or name (a folder, or any entry whose
 * name does not round-trip). A name that is not valid UTF-8 (the
 * path holds U+FFFD and does not exist) cannot be named through Deno's APIs: its parent is listed
 * and the entry moved by `sh` (`printf` octal escapes carry the raw bytes), the first raw name
 * whose lossy decoding matches; past {@link QUARANTINE_COPY_MAX_BYTES} of disk use (`du`) — or,
 * when the quarantine is on another file system, past what `budget` has left, which the move then
 * takes — it is deleted instead, and when `mv` fails too. Returns as {@link quarantine} does.
 */
export function quarantineUnreadable(
  p: string,
  ws: string,
  dataDir: string | undefined,
  id: string,
  budget: CopyBudget = copyBudget(),
) {
  try {
    Deno.lstatSync(p);
    return quarantine(p, ws, dataDir, id, budget);
  } catch { /* a name that does not round-trip */ }
  const parent = p.slice(0, p.lastIndexOf("/")), name = p.slice(p.lastIndexOf("/") + 1);
  const base = bases(dataDir)[0];
  if (!base) return undefined;
  const dest = `${base}/${id}/${p.slice(ws.length + 1)}`;
  let across = true;
  try {
    Deno.mkdirSync(base, { recursive: true, mode: 0o700 });
    across = Deno.statSync(parent).dev !== Deno.statSync(base).dev;
  } catch { /* unknown: counted as a copy */ }
  const capKiB = across ? Math.max(0, budget.bytes) >> 10 : QUARANTINE_COPY_MAX_BYTES >> 10;
  try {
    const list = new Deno.Command("sh", {
      args: [
        "-c",
        `cd -- "$1" || exit 1; for f in * .[!.]* ..?*; do { [ -e "$f" ] || [ -L "$f" ]; } && printf '%s\\0' "$f"; done; exit 0`,
        "sh",
        parent,
      ],
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    const dec = new TextDecoder();
    let start = 0;
    const out = list.stdout;
    for (let i = 0; i < out.length; i++) {
      if (out[i] !== 0) continue;
      const raw = out.subarray(start, i);
      start = i + 1;
      if (dec.decode(raw) !== name) continue;
      const esc = [...raw].map((b) => `\\${b.toString(8).padStart(3, "0")}`).join("");
      try {
        Deno.mkdirSync(dest.slice(0, dest.lastIndexOf("/")), { recursive: true, mode: 0o700 });
      } catch { /* mv fails: deleted below */ }
      // Prints what was done: moved, deleted (over the cap, or mv failed), blocked (renamed, 000).
      const mv = new Deno.Command("sh", {
        args: [
          "-c",
          `cd -- "$1" && n=$(printf "$2"; echo x) && n=\${n%x} || exit 1
k=$(du -sk -- "$n" 2>/dev/null | cut -f1)
if [ -n "$k" ] && [ "$k" -le "$4" ] && mv -- "$n" "$3" 2>/dev/null; then echo "moved $k"; exit 0; fi
rm -rf -- "$n" 2>/dev/null || { chmod -R u+rwx -- "$n"; rm -rf -- "$n"; } 2>/dev/null
if [ ! -e "$n" ] && [ ! -L "$n" ]; then echo deleted; exit 0; fi
mv -- "$n" "$n.coyote-blocked-$5" && chmod 000 "$n.coyote-blocked-$5" && echo blocked`,
          "sh",
          parent,
          esc,
          dest,
          String(capKiB),
          id.slice(-8),
        ],
        stdout: "piped",
        stderr: "null",
      }).outputSync();
      const did = dec.decode(mv.stdout).trim();
      if (did.startsWith("moved")) {
        if (across) budget.bytes -= Number(did.split(" ")[1]) * 1024;
        return dest;
      }
      if (did === "deleted") return "(not quarantined: it could not be moved; deleted instead)";
      if (did === "blocked") {
        return `(not quarantined: it could not be moved or deleted; renamed to <name>.coyote-blocked-${
          id.slice(-8)
        }, mode 000)`;
      }
      return undefined;
    }
  } catch { /* no sh */ }
  return undefined;
}
