/**
 * The OS sandbox's quarantine (docs/permissions.md "New dot-entries"): what the after-command
 * review (./cleanup.ts) takes out of the workspace is moved to `<data dir>/quarantine/<id>/<path>`,
 * nothing deleted.
 * @module
 */
/**
 * Moves `p` (inside `ws`) to `<dataDir>/quarantine/<id>/<path relative to ws>` (the data dir is
 * hidden from commands; without one, a private temp dir), renaming when it can and copying
 * across file systems; returns where it went, undefined when it could not be moved.
 */
export function quarantine(p: string, ws: string, dataDir: string | undefined, id: string) {
  const base = dataDir
    ? `${dataDir}/quarantine`
    : (quarantineTmp ??= Deno.makeTempDirSync({ prefix: "coyote-quarantine-" }));
  const dest = `${base}/${id}/${p.slice(ws.length + 1)}`;
  try {
    Deno.mkdirSync(dest.slice(0, dest.lastIndexOf("/")), { recursive: true, mode: 0o700 });
    try {
      Deno.renameSync(p, dest);
    } catch {
      // Another file system: copied by `cp` (links as links, modes and times kept), then removed.
      // Not node:fs's cpSync: importing node:fs costs every start a few ms (issue 22).
      const cp = new Deno.Command("cp", {
        args: ["-pPR", "--", p, dest],
        stdout: "null",
        stderr: "null",
      })
        .outputSync();
      if (!cp.success) throw new Error(`cp failed for ${p}`);
      Deno.removeSync(p, { recursive: true });
    }
    return dest;
  } catch {
    return undefined;
  }
}
let quarantineTmp: string | undefined;

/**
 * {@link quarantine} for an entry the scan could not read or name (a folder, or any entry whose
 * name does not round-trip). A name that is not valid UTF-8 (the
 * path holds U+FFFD and does not exist) cannot be named through Deno's APIs: its parent is listed
 * and the entry moved by `sh` (`printf` octal escapes carry the raw bytes), the first raw name
 * whose lossy decoding matches. Returns where it went, undefined when it could not be moved.
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
  const base = dataDir
    ? `${dataDir}/quarantine`
    : (quarantineTmp ??= Deno.makeTempDirSync({ prefix: "coyote-quarantine-" }));
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
      Deno.mkdirSync(dest.slice(0, dest.lastIndexOf("/")), { recursive: true, mode: 0o700 });
      const mv = new Deno.Command("sh", {
        args: [
          "-c",
          `cd -- "$1" && n=$(printf "$2"; echo x) && n=\${n%x} && mv -- "$n" "$3"`,
          "sh",
          parent,
          esc,
          dest,
        ],
        stdout: "null",
        stderr: "null",
      }).outputSync();
      return mv.success ? dest : undefined;
    }
  } catch { /* no sh */ }
  return undefined;
}
