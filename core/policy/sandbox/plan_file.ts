/**
 * Where bwrap reads a command's mount plan from (issue 16, leak pass item 1): a NUL-separated
 * argument file for bwrap's `--args FD` (./mod.ts opens it as fd 4 in the launching shell).
 *
 * Passed in argv, the plan was bwrap's command line, and bwrap is PID 1 of the command's PID
 * namespace: `cat /proc/1/cmdline` inside the sandbox listed every hidden and masked path, the
 * host paths of Coyote's empty and masked copies and the home's mounts. bwrap closes the
 * descriptor once it has read it, so the command cannot reopen it through `/proc/self/fd/4`.
 *
 * The files live in a folder of Coyote's own (mode 0700, made once per process under the system
 * temp dir, removed at exit; the sandbox's root view leaves the host's `/tmp` out). One file per
 * distinct plan, reused while its text is unchanged: a command's profile rarely changes, so the
 * usual cost is one map lookup. A file whose text differs from what was written (changed or
 * removed on the host) is replaced by a fresh one rather than trusted.
 * @module
 */

let dir: string | undefined;
const files = new Map<string, string>();
let n = 0;

/**
 * The path of a read-only file holding `args` NUL-separated (bwrap's `--args` format), written
 * on first use of that exact list. Throws what `Deno.writeFileSync` throws (temp dir full).
 */
export function planFile(args: readonly string[]): string {
  const text = args.map((a) => `${a}\0`).join("");
  const known = files.get(text);
  if (known && intact(known, text)) return known;
  const p = `${ownDir()}/plan-${++n}`;
  Deno.writeTextFileSync(p, text, { mode: 0o400 });
  files.set(text, p);
  return p;
}

/**
 * A one-use file in the same private folder holding `text` (mode 0600): the rest of a launching
 * shell's script that was started ahead of its command (./launch_ahead.ts); that shell sources it
 * and removes it before it execs bwrap. Throws what `Deno.writeFileSync` throws.
 */
export function scriptFile(text: string): string {
  const p = `${ownDir()}/run-${++n}`;
  Deno.writeTextFileSync(p, text, { mode: 0o600 });
  return p;
}

/** The private folder (mode 0700, made at first use, removed at exit). */
function ownDir(): string {
  if (!dir) {
    const d = Deno.makeTempDirSync({ prefix: "coyote-plan-" });
    Deno.chmodSync(d, 0o700);
    globalThis.addEventListener("unload", () => {
      try {
        Deno.removeSync(d, { recursive: true });
      } catch { /* gone */ }
    });
    dir = d;
  }
  return dir;
}

/** Whether file `p` still holds exactly `text`. */
function intact(p: string, text: string): boolean {
  try {
    return Deno.readTextFileSync(p) === text;
  } catch {
    return false;
  }
}
