/**
 * `deno task compile` (scripts/compile.ts): what it refuses, and — when a real `denort` for this
 * Deno version is available (`DENORT_BIN`, or Deno's cache) — the binary it builds runs a headless
 * session against the scripted model with the policy-derived permissions it was compiled with.
 * Without a denort the test asserts the "not available" message instead (our machines cannot
 * download one); it logs which of the two it checked.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT } from "./support/run_coyote.ts";
import { startModelServer } from "./support/model_server.ts";

async function compile(args: string[], env: Record<string, string> = {}) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", "scripts/compile.ts", ...args],
    cwd: REPO_ROOT,
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

Deno.test("compile: a DENORT_BIN that is not a denort is refused (/bin/true, the deno CLI)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const t = await compile(["--output", join(dir, "c")], { DENORT_BIN: "/bin/true" });
    assert.equal(t.code, 1);
    assert.match(
      t.stderr,
      /DENORT_BIN=\/bin\/true .*too small to be a denort \(tens of MB\); refusing to build/,
    );
    const d = await compile(["--output", join(dir, "c")], { DENORT_BIN: Deno.execPath() });
    assert.equal(d.code, 1);
    assert.match(d.stderr, /is the deno CLI, not the denort runtime; refusing to build/);
    // A file of the right size and format but without this Deno version's string.
    const fake = join(dir, "denort");
    const bytes = new Uint8Array(11 * 1024 * 1024);
    bytes.set([0x7f, 0x45, 0x4c, 0x46]);
    await Deno.writeFile(fake, bytes);
    const f = await compile(["--output", join(dir, "c")], { DENORT_BIN: fake });
    assert.equal(f.code, 1);
    assert.match(
      f.stderr,
      new RegExp(`version string of Deno ${Deno.version.deno.replaceAll(".", "\\.")}`),
    );
    // A Linux ELF for a macOS target.
    const m = await compile(["--output", join(dir, "c"), "--target", "aarch64-apple-darwin"], {
      DENORT_BIN: fake,
    });
    assert.equal(m.code, 1);
    assert.match(m.stderr, /is not a Mach-O executable \(found ELF\) for aarch64-apple-darwin/);
    assert.equal(await Deno.stat(join(dir, "c")).catch(() => null), null, "no binary was written");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("compile: an unknown --target is a usage error naming the known ones", async () => {
  const r = await compile(["--target", "riscv64-unknown-linux-gnu"]);
  assert.equal(r.code, 2);
  assert.match(
    r.stderr,
    /unknown --target "riscv64-unknown-linux-gnu"; one of: x86_64-unknown-linux-gnu, /,
  );
});

function denortAvailable(): string | undefined {
  const env = Deno.env.get("DENORT_BIN");
  if (env) return env;
  const denoDir = Deno.env.get("DENO_DIR") ??
    join(Deno.env.get("HOME") ?? "/root", ".cache", "deno");
  const zip = join(
    denoDir,
    "dl",
    "release",
    `v${Deno.version.deno}`,
    `denort-${Deno.build.target}.zip`,
  );
  try {
    return Deno.statSync(zip).isFile ? zip : undefined;
  } catch {
    return undefined;
  }
}

Deno.test("compile: builds a working binary when a denort exists, else says it is missing", async () => {
  const denort = denortAvailable();
  const dir = await Deno.makeTempDir();
  try {
    const bin = join(dir, "coyote");
    const env: Record<string, string> = { HOME: Deno.env.get("HOME") ?? "/root" };
    if (Deno.env.get("DENO_DIR")) env.DENO_DIR = Deno.env.get("DENO_DIR")!;
    if (Deno.env.get("DENORT_BIN")) env.DENORT_BIN = Deno.env.get("DENORT_BIN")!;
    const r = await compile(["--output", bin], env);
    if (!denort) {
      console.log("compile: no denort on this machine (set DENORT_BIN); checked the refusal only");
      assert.equal(r.code, 1);
      assert.match(
        r.stderr,
        /denort base binary is not available .*Set DENORT_BIN.*run any `deno compile` once/s,
      );
      return;
    }
    assert.equal(r.code, 0, r.stderr);
    const v = await new Deno.Command(bin, { args: ["--version"], stdout: "piped" }).output();
    assert.match(new TextDecoder().decode(v.stdout), /^coyote \d+\.\d+\.\d+ \(deno /);
    const server = await startModelServer({ script: [{ text: "compiled and fine" }] });
    try {
      const out = await new Deno.Command(bin, {
        args: ["--headless", "--output-format", "json", "say hi"],
        cwd: dir,
        clearEnv: true,
        env: {
          PATH: "/usr/bin:/bin",
          HOME: dir,
          COYOTE_CONFIG_DIR: join(dir, "cfg"),
          COYOTE_DATA_DIR: join(dir, "data"),
          OPENAI_BASE_URL: server.baseURL,
          COYOTE_MODEL: "scripted",
        },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const result = JSON.parse(new TextDecoder().decode(out.stdout));
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
      assert.equal(result.text, "compiled and fine");
    } finally {
      await server.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
