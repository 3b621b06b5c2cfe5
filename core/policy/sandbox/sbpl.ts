/**
 * macOS backend of the OS sandbox: the Seatbelt profile (SBPL, the language of
 * `sandbox-exec -p PROFILE`) for a {@link SandboxProfile}. The shape follows the profiles Codex
 * CLI and Chromium ship: deny by default, allow process and read operations, and express holes
 * with `require-all` / `require-not` so the result never depends on rule order.
 *
 * - Reads: everywhere except the hidden paths.
 * - Writes: the writable roots and the private temp dir, minus the read-only (protected) paths
 *   and the hidden ones; `/dev/null`, `/dev/tty*`-free device writes needed by shells.
 * - Network: only when the profile's network mode is `host`; otherwise none, not even loopback.
 * - Processes: fork/exec allowed; signals and process inspection only within the same sandbox
 *   (macOS has no PID namespace: this is what keeps Coyote's environment out of reach).
 *
 * This text is unit-tested (tests/sandbox_test.ts); it cannot be run on the Linux CI.
 * @module
 */
import type { SandboxProfile } from "./profile.ts";

/** An SBPL string literal. */
function lit(s: string): string {
  return `"${s.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}

const subpaths = (xs: string[]) => xs.map((p) => `(subpath ${lit(p)})`).join(" ");

/** The SBPL profile text for `profile`; `tmpDir` is the private temp dir (writable). */
export function sbplProfile(profile: SandboxProfile, opts: { tmpDir?: string } = {}): string {
  const hidden = profile.hidden.map((h) => h.path);
  const readOnly = profile.readOnly.map((r) => r.path);
  const writable = [
    ...profile.writable.map((w) => w.path),
    ...(opts.tmpDir ? [opts.tmpDir] : []),
  ];
  const notHidden = hidden.length ? `(require-not (require-any ${subpaths(hidden)}))` : "";
  const notProtected = [...readOnly, ...hidden].length
    ? `(require-not (require-any ${subpaths([...readOnly, ...hidden])}))`
    : "";
  const lines = [
    "(version 1)",
    "(deny default)",
    "(allow process-fork)",
    "(allow process-exec)",
    "(allow signal (target same-sandbox))",
    "(allow process-info* (target same-sandbox))",
    "(allow sysctl-read)",
    "(allow mach-lookup)",
    "(allow ipc-posix-sem)",
    "(allow ipc-posix-shm)",
    "(allow pseudo-tty)",
    "(allow file-ioctl)",
    notHidden
      ? `(allow file-read* (require-all (subpath "/") ${notHidden}))`
      : "(allow file-read*)",
    `(allow file-write* (require-all (require-any ${subpaths(writable)}) ${notProtected}))`,
    '(allow file-write* (literal "/dev/null") (literal "/dev/zero") (literal "/dev/stdout") (literal "/dev/stderr") (regex #"^/dev/fd/[0-9]+$"))',
  ];
  // No network namespace on macOS: a `proxy` profile shares the host network there (the guard's
  // Net rules are the host filter), as `host` does.
  if (profile.network.mode !== "none") {
    lines.push("(allow network*)");
  }
  // Unix sockets (issue 16 §1): no connect to a socket file, except those a Net(unix:…) rule
  // names (later rules win in SBPL). Untested on a Mac here; tests/sandbox_sockets_test.ts checks the text.
  lines.push("(deny network-outbound (remote unix-socket))");
  for (const s of profile.unixSockets ?? []) {
    lines.push(`(allow network-outbound (remote unix-socket (path-literal ${JSON.stringify(s)})))`);
  }
  // No network otherwise: not even loopback (macOS has no network namespace; the host's
  // loopback services would be reachable).
  return lines.join("\n") + "\n";
}
