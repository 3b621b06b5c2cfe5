/**
 * `Write` deny rules the sandbox cannot mount (issue 16, ninth attacker pass): a rule naming a
 * path that does not exist when a command starts (`--deny 'Write(out.txt)'`, `Write(dist/**)`
 * without `dist/`) has nothing bwrap could bind read-only, so a command the guard does not fully
 * read (`dd of=out.txt`, `python3 -c 'open(…)'`) could create it. After the command, what it
 * created there is moved to the quarantine (./quarantine.ts, nothing deleted) and the tool result
 * says so: the rule holds for the workspace as it is left, also with the guard forced open.
 * @module
 */
import type { SandboxProfile } from "./profile.ts";
import { movedAway, quarantine } from "./quarantine.ts";
import { lexistsSync } from "../../util/files.ts";

/**
 * Takes out what the command created at `profile.writeDeniedMissing` paths (see the module
 * doc); returns the note for the tool result, or undefined when nothing was there.
 */
export function removeDeniedCreated(
  profile: Pick<SandboxProfile, "workspace" | "writeDeniedMissing">,
  dataDir: string | undefined,
): string | undefined {
  const lines: string[] = [];
  const id = `${new Date().toISOString().replace(/[:.]/g, "-")}-denied-${
    crypto.randomUUID().slice(0, 8)
  }`;
  for (const { path, rule } of profile.writeDeniedMissing ?? []) {
    if (!lexistsSync(path)) continue;
    const inWs = path.startsWith(`${profile.workspace}/`);
    const to = inWs ? quarantine(path, profile.workspace, dataDir, id) : undefined;
    if (!to) {
      try {
        Deno.removeSync(path, { recursive: true });
      } catch { /* kept: said below */ }
    }
    lines.push(
      lexistsSync(path)
        ? `could not take out ${path}, which the command created although ${rule} denies writing it`
        : `took out ${path}${
          movedAway(to) ? ` (moved to ${to})` : to ? ` ${to}` : ""
        }: the command created it, and ${rule} denies writing it`,
    );
  }
  return lines.length ? lines.join("\n") : undefined;
}

/** `note` (the cleanup's) followed by {@link removeDeniedCreated}'s, or undefined when neither. */
export function withDeniedCreated(
  note: string | undefined,
  profile: Pick<SandboxProfile, "workspace" | "writeDeniedMissing">,
  dataDir: string | undefined,
): string | undefined {
  return [note, removeDeniedCreated(profile, dataDir)].filter(Boolean).join("\n") || undefined;
}
