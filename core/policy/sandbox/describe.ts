/**
 * `coyote policy show`'s text for the OS sandbox (view (d) of the one policy): the session's
 * {@link SandboxStatus} and its derived profile — what a command can read, write and reach, what is
 * hidden or masked, its limits and the protected names. Moved out of ./mod.ts; re-exported there.
 * @module
 */
import type { SandboxProfile } from "./profile.ts";
import { DEFAULT_LIMITS, describeLimits, type SandboxLimits } from "./limits.ts";
import { protectedShowLines } from "./protected.ts";
import { describeHome } from "./home_view.ts";
import { cgroupHost } from "./cgroup.ts";
import type { SandboxMode } from "./settings.ts";
import { type SandboxBackend, socatPath } from "./probe.ts";

/** What a session's sandbox is (printed by `policy show`, in the stream-json `init` event). */
export interface SandboxStatus {
  mode: SandboxMode;
  /** True when commands run sandboxed. */
  active: boolean;
  backend: SandboxBackend["name"] | null;
  autoAllow: boolean;
  /** Why it is on or off, one line. */
  reason: string;
  /** Each command's process and memory limits (`sandbox.limits`; ./limits.ts). */
  limits?: SandboxLimits;
}

/** How `policy show` and the status name a profile's network. */
export function netWord(network: SandboxProfile["network"], backend?: SandboxBackend): string {
  const m = network.mode;
  if (m === "none") return "off";
  if (m === "proxy") {
    return (!backend || backend.name === "bwrap") && socatPath()
      ? "filtered (only Net-allowed hosts, through Coyote's proxy)"
      : "on (not filtered: socat missing or macOS)";
  }
  return "on";
}

/** `policy show` text for the sandbox: status and the derived profile (view (d)). */
export function describeSandbox(profile: SandboxProfile, status: SandboxStatus): string {
  const l: string[] = [];
  l.push(
    `OS sandbox: mode ${status.mode}, ${
      status.active ? `on (${status.backend})` : "OFF"
    }; auto_allow ${status.autoAllow}`,
  );
  if (!status.active) l.push(`  not active: ${status.reason}`);
  if (profile.root && status.backend !== "sandbox-exec") {
    const r = profile.root;
    l.push(
      `  read:     of the host root only (read-only): ${
        r.entries.map((e) => e.link ? `${e.path} -> ${e.link}` : e.path).join(" ")
      }${
        r.files.length ? ` ${r.files.join(" ")}` : ""
      }; and the paths below. Everything else of / is absent (/var /run /srv /mnt /media /home /root /boot, the host's /tmp); in /etc what others may not read is hidden`,
    );
  } else l.push("  read:     everything not hidden (read-only outside the writable paths)");
  l.push("  write:    /tmp (private temp dir)");
  for (const w of profile.writable) l.push(`            ${w.path}  (${w.why})`);
  if (profile.readable.length) {
    l.push("  visible:  (read-only)");
    for (const r of profile.readable) l.push(`            ${r.path}  (${r.why})`);
  }
  l.push("  read-only inside writable paths:");
  if (!profile.readOnly.length) l.push("            (none)");
  for (const r of profile.readOnly) l.push(`            ${r.path}  (${r.why})`);
  if (status.backend !== "sandbox-exec") l.push(...describeHome(profile.home));
  l.push("  hidden:");
  if (!profile.hidden.length) l.push("            (none)");
  for (const h of profile.hidden) l.push(`            ${h.path}  (${h.why})`);
  if (status.backend !== "sandbox-exec") { // shown, a masked copy bound over each (./secret_lines.ts)
    l.push("  masked:   (shown with credential lines masked)");
    if (!profile.masked?.length) l.push("            (none)");
    for (const m of profile.masked ?? []) l.push(`            ${m.path}  (${m.why})`);
  }
  l.push(`  network:  ${netWord(profile.network)} (${profile.network.why})`);
  l.push(
    profile.unixSockets?.length
      ? `  sockets:  unix sockets open (the filter is off while Net(unix:…) rules exist); bound in: ${
        profile.unixSockets.join(", ")
      }`
      : status.backend === "sandbox-exec"
      ? "  sockets:  no connect to a unix socket file (SBPL)"
      : "  sockets:  no unix sockets (seccomp: socket(AF_UNIX) and datagram socketpair fail with EPERM; stream socketpair and pipes work)",
  );
  l.push(
    "  env:      scrubbed: the provider key always; names like *TOKEN* *SECRET* *KEY* *PASSWORD* *CREDENTIAL* *AUTH* *PRIVATE* *WEBHOOK* *_PWD *_PAT *_JWT *_DSN and credential-looking values (Password=, private keys, JWTs, ghp_/glpat-/xoxb-/sk-/AKIA tokens) unless an Env allow rule passes them; Env deny rules",
  );
  l.push(
    status.backend === "sandbox-exec"
      ? "  pid:      no PID namespace on macOS; signals and process inspection limited to the sandbox"
      : "  pid:      own PID namespace (Coyote's processes are not visible)",
  );
  const limits = status.limits ?? DEFAULT_LIMITS;
  const backend = status.active ? status.backend : null;
  const cg = backend === "bwrap" && (limits.memoryMb || limits.processes) ? cgroupHost() : null;
  l.push(...describeLimits(limits, backend, cg?.describe ?? null, cg?.version));
  l.push(...protectedShowLines());
  if (status.active && status.autoAllow) {
    l.push(
      "  asks:     commands the guard would ask about by default run without asking (auto_allow); deny and ask rules still apply, and while an Execute deny/ask rule exists a command that evaluates code or runs the project's code asks",
    );
  }
  if (profile.notes.length) {
    l.push("  guard-only rules:");
    for (const n of profile.notes) l.push(`            ${n}`);
  }
  return l.join("\n") + "\n";
}
