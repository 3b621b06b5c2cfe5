/**
 * The environment every command Coyote runs receives (issue 10 "Commands that never hang", issue
 * 11 §1 "the environment is scrubbed"), sandboxed or not:
 *
 * - Coyote's environment minus what {@link envDecision} drops: the provider key (by name and by
 *   value), secret-looking names (`*TOKEN*`, `*SECRET*`, `*KEY*`, `*PASSWORD*`, `MYSQL_PWD`, …),
 *   credential-looking values whatever the name (core/tools/secret_value.ts: URLs with user info,
 *   auth headers, webhook URLs, `ghp_…`, random-looking tokens, …) and `Env` deny rules, unless an
 *   `Env` allow rule passes them; in the sandbox also git configuration in the environment
 *   ({@link GIT_ENV_CONFIG}) and pointers at daemons and sockets ({@link daemonPointer});
 * - {@link NON_INTERACTIVE_ENV} on top, so nothing waits for a human: pagers are `cat`, editors
 *   are `false` (git then fails at once with "There was a problem with the editor" instead of
 *   blocking until the timeout), git never prompts for credentials.
 * @module
 */
import type { Rule } from "../rules.ts";
import { envDecision } from "./profile.ts";

/** Variables set for every command so it never waits for a terminal or an editor. */
export const NON_INTERACTIVE_ENV: Readonly<Record<string, string>> = {
  PAGER: "cat",
  GIT_PAGER: "cat",
  EDITOR: "false",
  VISUAL: "false",
  GIT_EDITOR: "false",
  GIT_SEQUENCE_EDITOR: "false",
  GIT_TERMINAL_PROMPT: "0",
  GCM_INTERACTIVE: "never",
  DEBIAN_FRONTEND: "noninteractive",
};

/**
 * Set on top inside the bwrap sandbox: `TMPDIR` is the private /tmp; Python neither writes
 * bytecode (`PYTHONDONTWRITEBYTECODE`: tenth attacker pass, a pyc a command wrote into the
 * workspace is what Python on the host loads instead of the source beside it; the after-command
 * review, ./host_run.ts `bytecodeCleanup`, removes any a command still writes) nor reads a user
 * site (`PYTHONNOUSERSITE`: a `.pth` or `usercustomize.py` there runs in every Python program).
 * No `PYTHONPYCACHEPREFIX` in the writable /tmp: Python reads bytecode for every module, the
 * standard library's too, from there, so a pyc planted there ran inside any Python program the
 * guard allows (issue 16, tenth attacker pass, class 5 "writable code-loading places").
 */
export const BWRAP_ENV: Readonly<Record<string, string>> = {
  TMPDIR: "/tmp",
  PYTHONDONTWRITEBYTECODE: "1",
  PYTHONNOUSERSITE: "1",
};

/** Folders writable inside the bwrap sandbox besides its writable roots: the private /tmp, /dev/shm. */
const SCRATCH = ["/tmp", "/dev/shm"];

/**
 * `PATH` for a command inside the bwrap sandbox: `path` without the entries a command could plant
 * a program in that would then run for a plain `git` (tenth attacker pass, class 5): relative or
 * empty ones (they resolve against the working directory) and those inside the private /tmp or
 * /dev/shm, unless inside one of `keep` (the workspace and `Write` allow roots: the user's own
 * folders, e.g. `$PWD/node_modules/.bin`; kept and documented). Entries inside the home need no
 * filter: its tmpfs is read-only and shows only read-only stores (./bwrap.ts, ./home_view.ts).
 */
export function sandboxPath(path: string, keep: readonly string[]): string {
  const inside = (p: string, r: string) => p === r || p.startsWith(r.endsWith("/") ? r : `${r}/`);
  return path.split(":").filter((e) => {
    if (!e.startsWith("/")) return false;
    const n = e.replace(/\/+/g, "/").replace(/(.)\/$/, "$1");
    if (/(^|\/)\.\.?(\/|$)/.test(n)) return false; // `/usr/../tmp/x`: not judged, dropped
    // A link into /tmp on the host leads into the private /tmp inside (one realpath an entry).
    let r = n;
    try {
      r = Deno.realPathSync(n);
    } catch { /* absent on the host: judged as written */ }
    return ![n, r].some((p) => SCRATCH.some((s) => inside(p, s))) ||
      keep.some((k) => inside(n, k) || inside(r, k));
  }).join(":");
}

/**
 * Applies the bwrap sandbox's environment to `env` (a command's, from {@link commandEnvironment}):
 * {@link BWRAP_ENV}; `PATH` through {@link sandboxPath}; with a home view, `GIT_CONFIG_GLOBAL`
 * naming the generated `.gitconfig`, and — when the home shows no `~/.cache` store and
 * `XDG_CACHE_HOME` is unset — `XDG_CACHE_HOME=/tmp/.cache`, so tools that need a writable cache
 * (Deno, go, uv) find one though the home is read-only (the session's private /tmp; a cache is
 * not where `XDG_CONFIG_HOME`/`XDG_DATA_HOME` point, which are left alone: programs load
 * configuration and code from those).
 */
export function applyBwrapEnv(
  env: Record<string, string>,
  profile: {
    writable: readonly { path: string }[];
    home?: { path: string; stores: readonly { path: string }[] };
  },
): void {
  Object.assign(env, BWRAP_ENV);
  if (env.PATH !== undefined) env.PATH = sandboxPath(env.PATH, profile.writable.map((w) => w.path));
  const home = profile.home;
  if (!home) return;
  env.GIT_CONFIG_GLOBAL = `${home.path}/.gitconfig`;
  if (!env.XDG_CACHE_HOME && !home.stores.some((s) => s.path === `${home.path}/.cache`)) {
    env.XDG_CACHE_HOME = "/tmp/.cache";
  }
}

/**
 * Names of variables that point at a daemon or a socket (issue 16 §1; class 2 gap D: by shape,
 * not a list): any name with `SOCK` in it (`SSH_AUTH_SOCK`, `SWAYSOCK`, `I3SOCK`,
 * `DOCKER_SOCKET`), an `IPC` word (`HYPRLAND_IPC_…`, `IPC_PATH`), `LISTEN` (`KITTY_LISTEN_ON`,
 * `NVIM_LISTEN_ADDRESS`), `DBUS…`, a display server (`WAYLAND_DISPLAY`, `DISPLAY`), a terminal
 * multiplexer's server (`TMUX`, `TMUX_PANE`, `STY`, `ZELLIJ…`), an agent's address
 * (`GPG_AGENT_INFO`, `*_AGENT_SOCK`…), `DOCKER_HOST`/`CONTAINER_HOST`, `XDG_RUNTIME_DIR`.
 */
export const DAEMON_NAME =
  /SOCK|(^|_)IPC(_|$)|LISTEN|^DBUS_|DBUS_SESSION|(^|_)DISPLAY$|^TMUX(_|$)|^STY$|^ZELLIJ|^GPG_AGENT_INFO$|^(DOCKER|CONTAINER|PODMAN)_HOST$|^XDG_RUNTIME_DIR$/i;

/** A socket address in a value: a `unix:` address in any spelling, or an abstract `@/…` name. */
const SOCKET_VALUE = /(^|[\s,;=])unix:|^@\/|^@[\w.-]+$/i;

/**
 * Why `name=value` points at a daemon or a unix socket, or undefined when it does not:
 * - by name ({@link DAEMON_NAME});
 * - by value: a `unix:` address (`unix:///run/x.sock`, `unix:path=…`, `unix:abstract=…`,
 *   `unix:/tmp/x`), an abstract socket name (`@/tmp/.X11-unix/X0`, `@name` as the whole value);
 * - any absolute path in the value — the value split at `:`, `,`, `;`, `=` and blanks, so lists
 *   (`GPG_AGENT_INFO`'s `path:pid:1`, `TMUX`'s `path,pid,n`, a `PATH`-like list) count part by
 *   part — that is a socket on the host (`lstat`, links not followed) or lies inside the user's
 *   runtime dir (`runtimeDir`: `XDG_RUNTIME_DIR`, `/run/user/<uid>`, where session sockets live).
 * Such variables do not enter the sandbox (its unix sockets are closed, core/policy/sandbox/
 * seccomp.ts; a path would only tell a command where to knock) unless an `Env` allow rule passes
 * them. Cost: one `lstat` per absolute path in the value.
 */
export function daemonPointer(
  name: string,
  value: string,
  runtimeDir: string | undefined = runtimeDirOf(Deno.env.get("XDG_RUNTIME_DIR")),
): string | undefined {
  if (DAEMON_NAME.test(name)) return "it names a daemon or socket";
  if (SOCKET_VALUE.test(value)) return "its value is a unix socket address";
  if (value.length > 65536 || !value.includes("/")) return undefined;
  for (const part of value.split(/[:,;=\s]+/)) {
    if (!part.startsWith("/") || part.length > 4096) continue;
    if (runtimeDir && (part === runtimeDir || part.startsWith(`${runtimeDir}/`))) {
      return "its value names the user's runtime dir (session sockets)";
    }
    try {
      if (Deno.lstatSync(part).isSocket) return "its value is a socket file";
    } catch { /* not a path */ }
  }
  return undefined;
}

/** The user's runtime dir: `xdg` (`XDG_RUNTIME_DIR`) when absolute and not `/`, else `/run/user/<uid>`. */
export function runtimeDirOf(xdg: string | undefined): string | undefined {
  if (xdg && xdg.startsWith("/") && xdg.replace(/\/+$/, "")) return xdg.replace(/\/+$/, "");
  const uid = Deno.uid?.();
  return uid === null || uid === undefined ? undefined : `/run/user/${uid}`;
}

/**
 * Git configuration passed in the environment (`GIT_CONFIG_PARAMETERS`, what `git -c` hands to
 * its children, and `GIT_CONFIG_COUNT` with `GIT_CONFIG_KEY_<n>`/`GIT_CONFIG_VALUE_<n>`): it
 * outranks every config file, so an `http.extraHeader` or `url.….insteadOf` with a token would
 * reach a sandboxed git although the generated global config (./home_view.ts `gitconfigText`,
 * named by `GIT_CONFIG_GLOBAL`) leaves them out. Not passed into the sandbox (issue 16, fourth
 * attacker pass) unless an `Env` allow rule names it.
 */
export const GIT_ENV_CONFIG = /^GIT_CONFIG_(PARAMETERS|COUNT|KEY_\d+|VALUE_\d+)$/;

/**
 * The environment for a command: `base` (default: Coyote's own) filtered by the `Env` rules and
 * the known `secrets` (values), plus {@link NON_INTERACTIVE_ENV}. `sandboxed`: also drop what
 * {@link daemonPointer} names and {@link GIT_ENV_CONFIG}, unless an `Env` allow rule passes it. Returns the names dropped too.
 */
export function commandEnvironment(
  opts: {
    base?: Record<string, string>;
    rules?: readonly Rule[];
    secrets?: readonly string[];
    sandboxed?: boolean;
  } = {},
): { env: Record<string, string>; dropped: string[] } {
  const base = opts.base ?? Deno.env.toObject();
  const env: Record<string, string> = {};
  const dropped: string[] = [];
  const rules = opts.rules ?? [];
  const runtimeDir = runtimeDirOf(base.XDG_RUNTIME_DIR);
  for (const [k, v] of Object.entries(base)) {
    const d = envDecision(rules, k, v, opts.secrets);
    if (!d.pass) {
      dropped.push(k);
    } else if (
      opts.sandboxed && !d.why.endsWith("passes it") &&
      (GIT_ENV_CONFIG.test(k) || daemonPointer(k, v, runtimeDir) !== undefined)
    ) {
      dropped.push(k);
    } else env[k] = v;
  }
  Object.assign(env, NON_INTERACTIVE_ENV);
  return { env, dropped };
}
