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
 * Usage: deno task compile [--output dist/coyote] [--target x86_64-unknown-linux-gnu] [--print-flags]
 * @module
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { Policy } from "../core/guard/policy.ts";

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

function denortCandidates(): string[] {
  const out: string[] = [];
  const fromEnv = Deno.env.get("DENORT_BIN");
  if (fromEnv) out.push(fromEnv);
  const denoDir = Deno.env.get("DENO_DIR") ??
    join(Deno.env.get("XDG_CACHE_HOME") ?? join(Deno.env.get("HOME") ?? "/root", ".cache"), "deno");
  const target = values.target ?? Deno.build.target;
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
      "Set DENORT_BIN to a denort binary for Deno " + Deno.version.deno + " and run again.",
  );
  Deno.exit(1);
}

const args = [
  "compile",
  ...flags,
  "--output",
  values.output!,
  ...(values.target ? ["--target", values.target] : []),
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
