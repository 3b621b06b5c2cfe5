/**
 * `deno task compile`: builds the single `coyote` binary with the Deno
 * permission flags derived from the default policy (`Policy.denoFlags()`), the
 * same flags the `coyote` task runs `main.ts` with, so the test suite proves
 * that this permission set is sufficient.
 *
 * `deno compile` needs Deno's `denort` base binary. It is taken from
 * `DENORT_BIN` when set (Deno honours that variable), else from Deno's cache
 * (`$DENO_DIR/dl/release/v<version>/denort-<target>.zip`); when neither exists
 * the script says so and exits 1 instead of trying to download it.
 *
 * A `DENORT_BIN` that is not a denort for this Deno version and target (wrong executable format,
 * too small, without this Deno version's string, e.g. `/bin/true`, or the full `deno` CLI) is refused with exit 1
 * instead of producing a broken binary. `--target` takes one of `TARGETS`; a foreign target's
 * denort must come from `DENORT_BIN` or the cache like the native one.
 *
 * Usage: deno task compile [--output dist/coyote] [--target x86_64-unknown-linux-gnu] [--print-flags]
 * @module
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { Policy } from "../core/policy/policy.ts";

function parseFlags() {
  try {
    return parseArgs({
      args: Deno.args,
      options: {
        output: { type: "string", default: "dist/coyote" },
        target: { type: "string" },
        "print-flags": { type: "boolean", default: false },
      },
    }).values;
  } catch (e) {
    console.error(`compile: ${(e as Error).message}`);
    console.error("usage: deno task compile [--output PATH] [--target TRIPLE] [--print-flags]");
    Deno.exit(2);
  }
}
const values = parseFlags();

const policy = Policy.create({}, { allow: [], deny: [] }, {
  workspace: Deno.cwd(),
  configDir: "/nonexistent-config",
});
const flags = policy.denoFlags();
if (values["print-flags"]) {
  console.log(flags.join(" "));
  Deno.exit(0);
}

/** The targets `deno compile --target` accepts (Deno 2.x manual, "deno compile"). */
export const TARGETS = [
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
  "x86_64-pc-windows-msvc",
] as const;

const target = values.target ?? Deno.build.target;
if (!(TARGETS as readonly string[]).includes(target)) {
  console.error(
    `compile: unknown --target ${JSON.stringify(target)}; one of: ${TARGETS.join(", ")}`,
  );
  Deno.exit(2);
}

function denortCandidates(): string[] {
  const out: string[] = [];
  const fromEnv = Deno.env.get("DENORT_BIN");
  if (fromEnv) return [fromEnv];
  const denoDir = Deno.env.get("DENO_DIR") ??
    join(Deno.env.get("XDG_CACHE_HOME") ?? join(Deno.env.get("HOME") ?? "/root", ".cache"), "deno");
  out.push(join(denoDir, "dl", "release", `v${Deno.version.deno}`, `denort-${target}.zip`));
  return out;
}

const found = denortCandidates().find((p) => {
  try {
    return Deno.statSync(p).isFile;
  } catch {
    return false;
  }
});
if (!found) {
  console.error(
    `compile: Deno's denort base binary is not available (looked at: ${
      denortCandidates().join(", ")
    }).\n` +
      "Set DENORT_BIN to a denort binary for Deno " + Deno.version.deno +
      " and run again, or run any `deno compile` once with network access so Deno caches it" +
      " (this task never downloads).",
  );
  Deno.exit(1);
}
if (Deno.env.get("DENORT_BIN")) {
  const problem = checkDenort(found, target);
  if (problem) {
    console.error(`compile: DENORT_BIN=${found} ${problem}; refusing to build.`);
    Deno.exit(1);
  }
}

/**
 * Why `path` is not a denort for this Deno version and `target`, or `undefined` when it looks like
 * one. A denort is an executable of the target's format (ELF, Mach-O or PE magic) that carries its
 * Deno version string; anything else (`/bin/true`, a truncated download, another Deno version's
 * denort) would be glued to our code and give a broken binary, so it is refused.
 */
export function checkDenort(path: string, forTarget: string): string | undefined {
  let bytes: Uint8Array;
  try {
    bytes = Deno.readFileSync(path);
  } catch (e) {
    return `cannot be read (${(e as Error).message})`;
  }
  const magic = Array.from(bytes.subarray(0, 4));
  const isElf = magic[0] === 0x7f && magic[1] === 0x45 && magic[2] === 0x4c && magic[3] === 0x46;
  const isPe = magic[0] === 0x4d && magic[1] === 0x5a;
  const machO = new Set(["cffaedfe", "feedfacf", "cefaedfe", "feedface", "cafebabe"]);
  const isMachO = machO.has(magic.map((b) => b.toString(16).padStart(2, "0")).join(""));
  const want = forTarget.includes("linux") ? "ELF" : forTarget.includes("darwin") ? "Mach-O" : "PE";
  const have = isElf ? "ELF" : isMachO ? "Mach-O" : isPe ? "PE" : "unknown";
  if (have !== want) return `is not a ${want} executable (found ${have}) for ${forTarget}`;
  if (bytes.length < 10 * 1024 * 1024) {
    return `is ${bytes.length} bytes, too small to be a denort (tens of MB)`;
  }
  const version = new TextEncoder().encode(Deno.version.deno);
  if (indexOf(bytes, version) < 0) {
    return `does not carry the version string of Deno ${Deno.version.deno} (a denort of another version?)`;
  }
  // The full `deno` CLI passes the checks above but builds a binary that runs Deno's own CLI; it
  // links the linter (crate `deno_lint`), which the denort runtime does not.
  if (indexOf(bytes, new TextEncoder().encode("deno_lint")) >= 0) {
    return "is the deno CLI, not the denort runtime";
  }
  return undefined;
}

function indexOf(hay: Uint8Array, needle: Uint8Array): number {
  const first = needle[0];
  for (
    let i = hay.indexOf(first);
    i >= 0 && i <= hay.length - needle.length;
    i = hay.indexOf(first, i + 1)
  ) {
    let j = 1;
    while (j < needle.length && hay[i + j] === needle[j]) j++;
    if (j === needle.length) return i;
  }
  return -1;
}

const args = [
  "compile",
  ...flags,
  "--output",
  values.output!,
  "--target",
  target,
  "main.ts",
];
console.error(`compile: deno ${args.join(" ")}`);
const { code } = await new Deno.Command(Deno.execPath(), {
  args,
  stdout: "inherit",
  stderr: "inherit",
})
  .output();
Deno.exit(code);
