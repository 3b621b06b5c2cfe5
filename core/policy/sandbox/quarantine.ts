/**
 * The OS sandbox's quarantine (docs/permissions.md "New dot-entries"): what the after-command
 * review (./cleanup.ts) takes out of the workspace is moved to `<data dir>/quarantine/<id>/<path>`,
 * nothing deleted — when the move works.
 *
 * Tenth attacker pass:
 * - **Across file systems the copy is bounded** (class 4): rename(2) cannot cross devices, so the
 *   entry is copied and removed. GNU cp (Linux) keeps hard links as links
 *   (`--preserve=links`; `cp -pPR` wrote each of 100 links to one 10 MB file as a whole file,
 *   964 MB); BSD cp (macOS) does not, so there each link counts whole. Before copying, the bytes
 *   the copy would write are summed ({@link copyCost}: file sizes, each inode once where links are
 *   kept); past {@link QUARANTINE_COPY_MAX_BYTES} or {@link QUARANTINE_COPY_MAX_ENTRIES} nothing
 *   is copied.
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

/** Whether this platform's `cp` keeps hard links within the copied tree (GNU cp on Linux). */
const CP_KEEPS_LINKS = Deno.build.os === "linux";

/**
 * What copying `p` would write: `bytes` (sum of file sizes; each inode once when `links`, every
 * link whole otherwise) and `entries`. Stops past the caps (the totals then exceed one).
 * @throws when an entry cannot be examined (a name that does not round-trip, no permission).
 */
export function copyCost(
  p: string,
  links = CP_KEEPS_LINKS,
  caps = { bytes: QUARANTINE_COPY_MAX_BYTES, entries: QUARANTINE_COPY_MAX_ENTRIES },
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
      const key = `${st.dev}:${st.ino}`;
      if (!links || (st.nlink ?? 1) < 2 || !seen.has(key)) bytes += st.size;
      if (links && (st.nlink ?? 1) > 1) seen.add(key);
    }
  }
  return { bytes, entries };
}

/**
 * Copies `src` to `dest` (a path that does not exist yet) with `cp` — symlinks as links, modes
 * and times kept, hard links as links where `cp` can ({@link copyCost}) — after checking that it
 * writes at most `maxBytes` and {@link QUARANTINE_COPY_MAX_ENTRIES} entries.
 * @throws Error naming why (over the cap, cp failed); a partial `dest` is removed.
 */
export function copyBounded(src: string, dest: string, maxBytes = QUARANTINE_COPY_MAX_BYTES) {
  const cost = copyCost(src, CP_KEEPS_LINKS, {
    bytes: maxBytes,
    entries: QUARANTINE_COPY_MAX_ENTRIES,
  });
  if (cost.bytes > maxBytes || cost.entries > QUARANTINE_COPY_MAX_ENTRIES) {
    throw new Error(
      `a copy to another file system would write more than ${
        cost.bytes > maxBytes ? `${maxBytes >> 20} MiB` : `${QUARANTINE_COPY_MAX_ENTRIES} entries`
      }`,
    );
  }
  // Not node:fs's cpSync: importing node:fs costs every start a few ms (issue 22).
  const args = CP_KEEPS_LINKS
    ? ["-PR", "--preserve=mode,timestamps,links", "--", src, dest]
    : ["-pPR", "--", src, dest];
  const cp = new Deno.Command("cp", { args, stdout: "null", stderr: "piped" }).outputSync();
  if (!cp.success) {
    try {
      Deno.removeSync(dest, { recursive: true });
    } catch { /* nothing written */ }
    const err = new TextDecoder().decode(cp.stderr).trim().split("\n")[0];
    throw new Error(`cp failed${err ? `: ${err}` : ""}`);
  }
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
 * can and copying across file systems ({@link copyBounded}). Returns where it went; when no move
 * worked, {@link failClosed}'s text (starts with `(`); undefined only when `p` is still there
 * unchanged.
 */
export function quarantine(p: string, ws: string, dataDir: string | undefined, id: string) {
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
        copyBounded(p, dest);
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
 * whose lossy decoding matches; past {@link QUARANTINE_COPY_MAX_BYTES} of disk use (`du`) it is
 * deleted instead, and when `mv` fails too. Returns as {@link quarantine} does.
 */
export function quarantineUnreadable(
  p: string,
  ws: string,
  dataDir: string | undefined,
  id: string,
) {
  try {
    Deno.lstatSync(p);
    return quarantine(p, ws, dataDir, id);
  } catch { /* a name that does not round-trip */ }
  const parent = p.slice(0, p.lastIndexOf("/")), name = p.slice(p.lastIndexOf("/") + 1);
  const base = bases(dataDir)[0];
  if (!base) return undefined;
  const dest = `${base}/${id}/${p.slice(ws.length + 1)}`;
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
if [ -n "$k" ] && [ "$k" -le "$4" ] && mv -- "$n" "$3" 2>/dev/null; then echo moved; exit 0; fi
rm -rf -- "$n" 2>/dev/null || { chmod -R u+rwx -- "$n"; rm -rf -- "$n"; } 2>/dev/null
if [ ! -e "$n" ] && [ ! -L "$n" ]; then echo deleted; exit 0; fi
mv -- "$n" "$n.coyote-blocked-$5" && chmod 000 "$n.coyote-blocked-$5" && echo blocked`,
          "sh",
          parent,
          esc,
          dest,
          String(QUARANTINE_COPY_MAX_BYTES >> 10),
          id.slice(-8),
        ],
        stdout: "piped",
        stderr: "null",
      }).outputSync();
      const did = dec.decode(mv.stdout).trim();
      if (did === "moved") return dest;
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
