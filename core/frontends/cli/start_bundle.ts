/**
 * The start bundle's freshness check (main.ts; the bundle is built by scripts/bundle_start.ts,
 * `deno task bundle`). main.ts loads the CLI from `<checkout>/.bundle/` only when its
 * `stamp.json` names this checkout and this Deno version and every bundled input is unchanged:
 * same size, and same mtime or, when only the mtime moved (a `git checkout` of equal content),
 * same SHA-256. Any other difference — an edit, a `git pull`, a deleted file, a missing or
 * unreadable stamp — means the sources are loaded, so a run never executes stale code. A
 * compiled binary has no `.bundle/` beside its embedded sources and always loads the sources.
 *
 * Cost when fresh: one `statSync` per input (≈ 300, ≈ 1 ms). Cheap to import: no imports.
 * `COYOTE_NO_BUNDLE=1` skips the bundle (to run the sources on purpose).
 * @module
 */

/** The bundle's folder, relative to the checkout root. */
export const BUNDLE_DIR = ".bundle";

/** The bundle's entries: output name (`<name>.js`) → source path relative to the checkout. */
export const ENTRIES = {
  cli: "core/frontends/cli/mod.ts",
  acp_stdio: "core/frontends/acp/stdio.ts",
} as const;

/** `stamp.json`: what the bundle was built from. */
export interface BundleStamp {
  /** Absolute path of the checkout the bundle was built from (no trailing slash). */
  root: string;
  /** `Deno.version.deno` of the build. */
  deno: string;
  /** Each bundled input: [path relative to root, size in bytes, mtime in ms since epoch, SHA-256 hex]. */
  files: [string, number, number, string][];
  /**
   * The folder of this build's files inside the bundle folder. A rebuild writes a new folder and
   * then the stamp, and leaves the earlier builds' folders (pruned after a week): a process that
   * started on one build still finds its lazily loaded chunks there. Absent: the files lie in
   * the bundle folder itself.
   */
  build?: string;
}

/** Lower-case hex SHA-256 of `bytes`. */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The checkout's root when main.ts runs from a file checkout (not a compiled binary, whose
 * sources live under a temporary virtual folder with no bundle), else undefined.
 */
function checkoutRoot(mainUrl: string): string | undefined {
  const u = new URL("./", mainUrl);
  if (u.protocol !== "file:") return undefined;
  return decodeURIComponent(u.pathname).replace(/\/$/, "");
}

/**
 * `true` when the bundle in `dir` was built from the files under `root` as they are now (see the
 * module doc). Never throws: any error reading the stamp or an input is `false`.
 */
export async function bundleIsFresh(root: string, dir = `${root}/${BUNDLE_DIR}`): Promise<boolean> {
  return (await freshStamp(root, dir)) !== undefined;
}

/** The stamp of the bundle in `dir` when it is fresh (see {@link bundleIsFresh}), else undefined. */
async function freshStamp(root: string, dir: string): Promise<BundleStamp | undefined> {
  let stamp: BundleStamp;
  try {
    stamp = JSON.parse(Deno.readTextFileSync(`${dir}/stamp.json`));
  } catch {
    return undefined;
  }
  if (
    stamp.root !== root || stamp.deno !== Deno.version.deno || !Array.isArray(stamp.files) ||
    (stamp.build !== undefined && !/^[\w.-]+$/.test(stamp.build))
  ) {
    return undefined;
  }
  const moved: [string, string][] = [];
  try {
    for (const [rel, size, mtime, sha] of stamp.files) {
      const st = Deno.statSync(`${root}/${rel}`);
      if (!st.isFile || st.size !== size) return undefined;
      if (st.mtime?.getTime() !== mtime) moved.push([rel, sha]);
    }
    for (const [rel, sha] of moved) {
      if (await sha256Hex(Deno.readFileSync(`${root}/${rel}`)) !== sha) return undefined;
    }
  } catch {
    return undefined;
  }
  return stamp;
}

/**
 * The URL of the fresh build's folder (ending in `/`; see {@link BundleStamp.build}) when main.ts at `mainUrl` may load the CLI from
 * it, else undefined (load the sources).
 */
export async function startBundleUrl(mainUrl: string): Promise<string | undefined> {
  try {
    if (Deno.env.get("COYOTE_NO_BUNDLE") === "1") return undefined;
  } catch {
    return undefined;
  }
  const root = checkoutRoot(mainUrl);
  const stamp = root === undefined ? undefined : await freshStamp(root, `${root}/${BUNDLE_DIR}`);
  if (!stamp) return undefined;
  return new URL(`./${BUNDLE_DIR}/${stamp.build ? `${stamp.build}/` : ""}`, mainUrl).href;
}
