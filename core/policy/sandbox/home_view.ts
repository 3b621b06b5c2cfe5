/**
 * What a sandboxed command sees of the user's home directory (issue 16 "A home that shows only
 * what is safe", docs/permissions.md "The home directory inside the sandbox"): an allow list, not
 * a deny list. The home is an empty tmpfs, made read-only once the mounts below are in it (tenth
 * attacker pass: start-up files, Python's user site and PATH programs a command planted in a
 * writable home ran within the same command), and only these appear in it, read-only:
 *
 * - the toolchain stores of {@link HOME_STORES} that exist (package-manager caches and stores,
 *   language toolchains), plus the stores the environment names (`DENO_DIR`, `CARGO_HOME`, …,
 *   {@link ENV_STORES}) when they lie inside the home;
 * - minus what {@link scanSecrets} finds inside them, replaced by an empty file or dir: by
 *   structure at any depth to {@link SCAN_DEPTH} (browser profiles, mail caches, keyrings, git
 *   configs holding a token URL or an auth header; sockets, FIFOs and device nodes by type, except
 *   a socket a `Net(unix:…)` rule names), by name to {@link NAME_DEPTH} levels
 *   (credential-looking names, {@link SECRET_NAME_RE}; mail, keyring and browser folders);
 * - a generated `~/.gitconfig` ({@link gitconfigText}) with only the identity and safe settings
 *   of the real global git config (also named by `GIT_CONFIG_GLOBAL`);
 * - what `Read` allow rules, the workspace and `Write` allow rules open (core/policy/sandbox/profile.ts).
 *
 * The view is off — the home shown as on the host minus the deny list of core/policy/home.ts —
 * only when a visible root contains the whole home (Coyote started in `~` or above, `Read(~/**)`).
 *
 * Also here: the git dirs of the workspace's repository that lie outside it (a linked worktree's
 * `.git` file names `<common>/worktrees/<name>`, a submodule's names `<super>/.git/modules/<name>`),
 * found by reading those files — no git runs in the untrusted repository outside the sandbox —
 * and mounted read-only so `git status` / `git log` work.
 * @module
 */
import { dirname, isAbsolute, join } from "../../util/path.ts";
import { isInside } from "../rules.ts";
import {
  NAME_DEPTH,
  openScanCache,
  recentScan,
  saveScanCache,
  SCAN_DEPTH,
  SCAN_TTL_MS,
  type ScanCache,
  scanSecrets,
  SECRET_NAME_RE,
} from "./home_scan.ts";

export { NAME_DEPTH, SCAN_DEPTH, scanSecrets, SECRET_NAME_RE };

/**
 * The toolchain stores visible inside the sandbox, relative to the home, with what uses them.
 * Where a tool keeps credentials next to its cache (`~/.cargo/credentials.toml`,
 * `~/.gem/credentials`, `~/.pub-cache/credentials.json`, `~/.gradle/gradle.properties`,
 * `~/.m2/settings.xml`), only the cache subdirectories are listed.
 */
export const HOME_STORES: readonly { path: string; what: string }[] = [
  { path: ".cache", what: "XDG cache (Deno, pip, go-build, pre-commit, …)" },
  { path: ".npm", what: "npm cache" },
  { path: ".cargo/registry", what: "Cargo registry cache" },
  { path: ".cargo/git", what: "Cargo git checkouts" },
  { path: ".cargo/bin", what: "Cargo-installed programs" },
  { path: ".rustup", what: "Rust toolchains" },
  { path: ".deno", what: "Deno install dir" },
  { path: ".m2/repository", what: "Maven repository" },
  { path: ".gradle/caches", what: "Gradle caches" },
  { path: ".gradle/wrapper", what: "Gradle wrapper distributions" },
  { path: "go/pkg", what: "Go module cache" },
  { path: "go/bin", what: "Go-installed programs" },
  { path: ".nvm", what: "nvm Node versions" },
  { path: ".pyenv", what: "pyenv Python versions" },
  { path: ".local/bin", what: "user programs (pipx, uv, …)" },
  { path: ".local/share/pnpm", what: "pnpm store and programs" },
  { path: ".local/share/uv", what: "uv Pythons and tools" },
  { path: ".pnpm-store", what: "pnpm store" },
  { path: ".bun/bin", what: "Bun" },
  { path: ".bun/install/cache", what: "Bun cache" },
  { path: ".yarn/berry/cache", what: "Yarn cache" },
  { path: ".gem/ruby", what: "RubyGems user installs" },
  { path: ".gem/specs", what: "RubyGems specs cache" },
  { path: ".pub-cache/hosted", what: "Dart/Flutter packages" },
  { path: ".pub-cache/bin", what: "Dart programs" },
  { path: ".sdkman/candidates", what: "SDKMAN JDKs and tools" },
];

/** Variables that name a store; `sub` lists only these subdirectories of it. */
export const ENV_STORES: readonly { name: string; sub?: string[] }[] = [
  { name: "DENO_DIR" },
  { name: "XDG_CACHE_HOME" },
  { name: "npm_config_cache" },
  { name: "CARGO_HOME", sub: ["registry", "git", "bin"] },
  { name: "RUSTUP_HOME" },
  { name: "GOMODCACHE" },
  { name: "NVM_DIR" },
  { name: "PYENV_ROOT" },
  { name: "PNPM_HOME" },
  { name: "GRADLE_USER_HOME", sub: ["caches", "wrapper"] },
];

/** Inside ~/.cache: not toolchain caches (browsers, keyrings); hidden. */
const CACHE_NOT_TOOLCHAIN = [
  "mozilla",
  "google-chrome",
  "chromium",
  "BraveSoftware",
  "keyring",
  "gnome-keyring",
  "gh",
  "1password",
  "coyote",
];

/**
 * Credential files known to live deeper inside a store than the name scan looks (`*` = any one
 * entry): a Node version's global npmrc under nvm, a Python version's pip.conf under pyenv; and
 * npm's debug logs (`~/.npm/_logs`: a failed request's log can carry a registry token).
 */
export const DEEP_SECRETS: readonly string[] = [
  ".npm/_logs",
  ".nvm/versions/node/*/etc/npmrc",
  ".pyenv/versions/*/etc/pip.conf",
  ".pyenv/versions/*/pip.conf",
];

/** Paths matching `pattern` (segments, `*` = any entry) below `base`. */
function expand(base: string, segs: readonly string[]): string[] {
  if (!segs.length) return [base];
  const [first, ...rest] = segs;
  if (first !== "*") return real(`${base}/${first}`) ? expand(`${base}/${first}`, rest) : [];
  try {
    return [...Deno.readDirSync(base)].flatMap((e) => expand(`${base}/${e.name}`, rest));
  } catch {
    return [];
  }
}

/**
 * The real paths of the stores {@link homeView} may mount for `home` (the folders of
 * {@link HOME_STORES} and {@link ENV_STORES} that exist, none holding the home), before the
 * filters that depend on the workspace: what ./home_prescan.ts scans ahead.
 */
export function storeSources(
  home: string,
  env: (name: string) => string | undefined = (n) => Deno.env.get(n),
): string[] {
  const realHome = real(home);
  if (!realHome || home === "/" || realHome === "/") return [];
  const out = new Set<string>();
  const add = (path: string) => {
    const source = real(path);
    try {
      if (
        source && !isInside(realHome, source) && ![...out].some((o) => isInside(source, o)) &&
        Deno.statSync(source).isDirectory
      ) out.add(source);
    } catch { /* gone meanwhile */ }
  };
  for (const s of HOME_STORES) add(`${home}/${s.path}`);
  for (const e of ENV_STORES) {
    const v = env(e.name);
    if (!v || !isAbsolute(v) || !isInside(v, home) || v === home) continue;
    for (const sub of e.sub ?? [""]) add(sub ? join(v, sub) : v);
  }
  return [...out];
}

/** One store mounted read-only: `path` inside the home (as the command names it), `source` its real path. */
export interface HomeStore {
  path: string;
  source: string;
  why: string;
}

/** The home view of a profile; see the module doc. */
export interface HomeView {
  /** The home directory (as the command sees it: `HOME`), an empty tmpfs. */
  path: string;
  stores: HomeStore[];
  /** Credential-looking entries inside the stores, hidden (paths as the command names them). */
  hidden: string[];
  /** Host file mounted read-only at `<home>/.gitconfig`. */
  gitconfig: string;
  /**
   * Plan mode (core/policy/mode.ts). The home's tmpfs is read-only in every mode now
   * (./bwrap.ts remounts it once the stores are in); kept for `policy show` and callers.
   */
  readOnly?: boolean;
}

function real(p: string): string | undefined {
  try {
    return Deno.realPathSync(p);
  } catch {
    return undefined;
  }
}

let identity: string[] | undefined;

/** Keys copied from the real global git config (nothing else is). */
export const GIT_SAFE_KEYS = [
  "user.name",
  "user.email",
  "core.autocrlf",
  "core.eol",
  "core.quotepath",
  "init.defaultbranch",
  "pull.rebase",
  "merge.conflictstyle",
  "diff.algorithm",
  "color.ui",
];

/** `key value` lines of the real global git config's safe keys; read once per process. */
function gitIdentity(cwd: string): string[] {
  if (identity) return identity;
  identity = [];
  try {
    const o = new Deno.Command("git", {
      args: [
        "config",
        "--global",
        "--includes",
        "--get-regexp",
        `^(${GIT_SAFE_KEYS.map((k) => k.replace(".", "\\.")).join("|")})$`,
      ],
      cwd,
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    identity = new TextDecoder().decode(o.stdout).split("\n").filter(Boolean);
  } catch { /* no git: no identity */ }
  return identity;
}

/**
 * The generated global git config: the safe keys of the user's real one ({@link GIT_SAFE_KEYS},
 * read with `git config --global --includes --get-regexp` outside the sandbox) and
 * `safe.directory` for the workspace. Never credentials, `url.*.insteadOf`, credential helpers
 * or includes: only those keys are copied, and a value with a newline is dropped.
 */
export function gitconfigText(workspace: string, lines = gitIdentity(workspace)): string {
  const sections = new Map<string, string[]>();
  const put = (key: string, value: string) => {
    if (/[\n\r\0]/.test(value)) return;
    const i = key.lastIndexOf(".");
    const sec = key.slice(0, i);
    const q = `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
    sections.set(sec, [...(sections.get(sec) ?? []), `\t${key.slice(i + 1)} = ${q}`]);
  };
  for (const l of lines) {
    const sp = l.indexOf(" ");
    const key = (sp < 0 ? l : l.slice(0, sp)).toLowerCase();
    if (!GIT_SAFE_KEYS.includes(key)) continue;
    put(key, sp < 0 ? "true" : l.slice(sp + 1));
  }
  put("safe.directory", workspace);
  let out =
    "# Generated by Coyote for the OS sandbox (docs/permissions.md): identity and safe settings only.\n";
  for (const [sec, body] of sections) out += `[${sec}]\n${body.join("\n")}\n`;
  return out;
}

const generated = new Map<string, string>();

/** A read-only host temp file with {@link gitconfigText} for `workspace`; one per workspace per process. */
function gitconfigFile(workspace: string): string {
  const hit = generated.get(workspace);
  if (hit) return hit;
  const p = Deno.makeTempFileSync({ prefix: "coyote-gitconfig-" });
  Deno.writeTextFileSync(p, gitconfigText(workspace));
  Deno.chmodSync(p, 0o444);
  if (generated.size === 0) {
    globalThis.addEventListener("unload", () => {
      for (const f of generated.values()) {
        try {
          Deno.removeSync(f);
        } catch { /* gone */ }
      }
    });
  }
  generated.set(workspace, p);
  return p;
}

/**
 * The home view for `home`, or undefined when one of `visibleRoots` (the workspace, writable and
 * readable roots, real paths) contains the whole home. `env`: where {@link ENV_STORES} are read.
 * `cacheDir` (Coyote's data dir): the store scans are cached there across processes
 * ({@link ScanCache}); without it each process scans. `sockets`: the socket paths
 * `Net(unix:…)` allow rules name — the scan hides every socket and FIFO in a store by type, but
 * not these (they are bound in: ./bwrap.ts).
 */
export function homeView(
  home: string,
  workspace: string,
  visibleRoots: readonly string[],
  env: (name: string) => string | undefined = (n) => Deno.env.get(n),
  cacheDir?: string,
  sockets: readonly string[] = [],
): HomeView | undefined {
  const key = [home, workspace, ...visibleRoots, "\0", ...sockets].join("\0");
  const hit = views.get(key);
  if (hit && Date.now() - hit.at < SCAN_TTL_MS) return hit.view;
  const view = computeView(home, workspace, visibleRoots, env, cacheDir, sockets);
  views.set(key, { at: Date.now(), view });
  return view;
}

const views = new Map<string, { at: number; view: HomeView | undefined }>();

function computeView(
  home: string,
  workspace: string,
  visibleRoots: readonly string[],
  env: (name: string) => string | undefined,
  cacheDir: string | undefined,
  sockets: readonly string[],
): HomeView | undefined {
  const realHome = real(home);
  if (!realHome || home === "/" || realHome === "/") return undefined;
  if (visibleRoots.some((r) => isInside(home, r) || isInside(realHome, r))) return undefined;
  const stores: HomeStore[] = [];
  const addStore = (path: string, why: string) => {
    const source = real(path);
    if (!source || !Deno.statSync(source).isDirectory) return;
    // A store that is (a link to) the home or a folder above it would show the whole home.
    if (isInside(realHome, source)) return;
    if (stores.some((s) => s.path === path || isInside(path, s.path))) return;
    // Already shown by a root (a `Write` allow rule keeps it writable).
    if (visibleRoots.some((r) => isInside(path, r) || isInside(source, r))) return;
    stores.push({ path, source, why });
  };
  for (const s of HOME_STORES) addStore(`${home}/${s.path}`, `${s.what} (toolchain store)`);
  for (const e of ENV_STORES) {
    const v = env(e.name);
    if (!v || !isAbsolute(v) || !isInside(v, home) || v === home) continue;
    for (const sub of e.sub ?? [""]) {
      addStore(sub ? join(v, sub) : v, `$${e.name} (toolchain store)`);
    }
  }
  const hidden: string[] = [];
  // Scans a helper process made (./home_prescan.ts) are taken as they are; the cache file is
  // read only when a store must be scanned here.
  let disk: ScanCache | undefined;
  for (const s of stores) {
    const found = recentScan(s.source) ??
      scanSecrets(s.source, disk ??= cacheDir ? openScanCache(cacheDir) : undefined);
    for (const rel of found) hidden.push(`${s.path}/${rel}`);
    for (const d of DEEP_SECRETS) {
      if (d.startsWith(`${s.path.slice(home.length + 1)}/`)) {
        hidden.push(...expand(home, d.split("/")));
      }
    }
    if (s.path === `${home}/.cache`) {
      for (const n of CACHE_NOT_TOOLCHAIN) {
        if (real(`${s.path}/${n}`)) hidden.push(`${s.path}/${n}`);
      }
    }
  }
  if (disk) saveScanCache(disk);
  // What lies inside another hidden entry is hidden with it (and a mount inside the emptied,
  // read-only folder could not be made).
  // A socket a `Net(unix:…)` rule names stays (the scan hid it by type with the others).
  const named = new Set(sockets.flatMap((p) => [p, real(p) ?? p]));
  const set = new Set(
    named.size ? hidden.filter((h) => !named.has(h) && !named.has(real(h) ?? h)) : hidden,
  );
  const outer = (h: string) => {
    for (let i = h.lastIndexOf("/"); i > home.length; i = h.lastIndexOf("/", i - 1)) {
      if (set.has(h.slice(0, i))) return false;
    }
    return true;
  };
  return {
    path: home,
    stores,
    hidden: [...set].filter(outer),
    gitconfig: gitconfigFile(workspace),
  };
}

/**
 * The bwrap mounts of `view` (./bwrap.ts sorts every mount shallowest first; `order` breaks
 * ties): the home as a tmpfs (./bwrap.ts remounts it read-only after every mount), each store
 * read-only, hidden entries emptied, the generated `.gitconfig`. `emptyFile`: an empty read-only
 * host file.
 */
export function homeMounts(
  view: HomeView,
  emptyFile: string,
  /** `--size BYTES` for the home's tmpfs (./limits.ts `tmpfsSize`). */
  size: string[] = [],
): { path: string; order: number; args: string[] }[] {
  const m = [{ path: view.path, order: -1, args: [...size, "--tmpfs", view.path] }];
  for (const s of view.stores) {
    m.push({ path: s.path, order: 0, args: ["--ro-bind", s.source, s.path] });
  }
  for (const h of view.hidden) {
    let dir = false;
    try {
      dir = Deno.statSync(h).isDirectory;
    } catch { /* gone: an empty file */ }
    m.push({
      path: h,
      order: 2,
      args: dir
        ? ["--perms", "0555", "--tmpfs", h, "--remount-ro", h]
        : ["--ro-bind", emptyFile, h],
    });
  }
  const gc = `${view.path}/.gitconfig`;
  m.push({ path: gc, order: 1, args: ["--ro-bind", view.gitconfig, gc] });
  return m;
}

/**
 * Whether hiding `p` (a real path) is already done by the home view: inside the home and not
 * inside a store or one of `roots` (the writable and readable roots). ./bwrap.ts then skips the
 * mount (each costs start-up time; a typical home has several credential stores).
 */
export function hiddenByHome(view: HomeView, p: string, roots: readonly string[]): boolean {
  if (!isInside(p, view.path)) return false;
  return ![...roots, ...view.stores.map((s) => s.path), ...view.stores.map((s) => s.source)]
    .some((r) => isInside(p, r) || isInside(r, p));
}

/** `policy show` lines for the home view. */
export function describeHome(view: HomeView | undefined): string[] {
  if (!view) {
    return [
      "  home:     visible as on the host (a visible root contains it); credential stores hidden",
    ];
  }
  const l = [`  home:     ${view.path} is empty inside the sandbox except (read-only):`];
  for (const s of view.stores) l.push(`            ${s.path}  (${s.why})`);
  l.push(`            ${view.path}/.gitconfig  (generated: identity and safe settings only)`);
  l.push("            and what the workspace, Read and Write allow rules open");
  l.push("            (the home itself is read-only: a command cannot create files in it)");
  if (view.hidden.length) {
    l.push(
      "  hidden inside those stores (credentials by name or content, histories, web storage, browser profiles, sockets and FIFOs):",
    );
    for (const h of view.hidden) l.push(`            ${h}`);
  }
  return l;
}

/**
 * Whether `gitdir` is git's record of the checkout `dir`: a linked worktree's `gitdir` file names
 * `<dir>/.git`; a submodule's `config` has `core.worktree` leading to `dir`. Real paths compared.
 */
function namesBack(gitdir: string, dir: string): boolean {
  const target = real(dir);
  const read = (p: string) => {
    try {
      return Deno.readTextFileSync(p);
    } catch {
      return undefined;
    }
  };
  const back = read(`${gitdir}/gitdir`)?.trim();
  if (back && real(isAbsolute(back) ? back : join(gitdir, back)) === real(`${dir}/.git`)) {
    return true;
  }
  const wt = /^\s*worktree\s*=\s*(.+?)\s*$/m.exec(read(`${gitdir}/config`) ?? "")?.[1];
  return !!wt && !!target && real(isAbsolute(wt) ? wt : join(gitdir, wt)) === target;
}

/**
 * The git dirs of the repository holding `workspace` that lie outside it — the dir a `.git` file
 * names (linked worktree, submodule) and its `commondir` — as real paths, or a `.git` dir in a
 * parent folder. Reads `.git` files only (no git runs in the repository outside the sandbox).
 */
export function outsideGitDirs(workspace: string): string[] {
  const out: string[] = [];
  for (let dir = workspace;; dir = dirname(dir)) {
    const dotgit = `${dir}/.git`;
    let st: Deno.FileInfo | undefined;
    try {
      st = Deno.statSync(dotgit);
    } catch { /* not here */ }
    if (st?.isDirectory) {
      if (dir !== workspace) out.push(dotgit);
      break;
    }
    if (st?.isFile) {
      try {
        const m = /^gitdir:\s*(.+?)\s*$/m.exec(Deno.readTextFileSync(dotgit));
        const gitdir = m ? (isAbsolute(m[1]) ? m[1] : join(dir, m[1])) : undefined;
        // Only a git dir that names this checkout back (git's own bookkeeping, which a cloned
        // repository cannot write) is mounted: a `.git` file may point anywhere (`~/.somevendor`).
        if (gitdir && namesBack(gitdir, dir)) {
          out.push(gitdir);
          try {
            const c = Deno.readTextFileSync(`${gitdir}/commondir`).trim();
            if (c) out.push(isAbsolute(c) ? c : join(gitdir, c));
          } catch { /* not a linked worktree */ }
        }
      } catch { /* unreadable */ }
      break;
    }
    if (dir === "/" || dir === dirname(dir)) break;
  }
  return out.map((p) => real(p)).filter((p): p is string => !!p && !isInside(p, workspace));
}
