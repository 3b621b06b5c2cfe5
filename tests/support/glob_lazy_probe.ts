/**
 * A fresh process for tests/guard_glob_lazy_test.ts: npm picomatch (the guard's glob engine,
 * core/policy/rules.ts) loads lazily, and whether it has loaded is per-process state, so each
 * scenario runs here from a clean start. Usage: `deno run -A glob_lazy_probe.ts SCENARIO`;
 * prints one JSON object (the scenario's observations) on stdout.
 *
 * Scenarios:
 * - `literal`: default config plus literal-path rules; a sandbox, evaluations, the profile, a
 *   worker grant and session "always" rules (also one with glob characters) — the engine must
 *   stay unloaded;
 * - `first`: a glob deny rule from the config decides the very first evaluation;
 * - `runtime`: a glob rule added at run time (after the policy was built) decides the next
 *   evaluation;
 * - `forced`: the synchronous views used before the engine has loaded (the race a rule just
 *   added could cause): every answer must be closed (deny/ask/refused), and right once loaded;
 * - `forced-sandbox`: the same for a sandboxed command prepared right after a glob rule arrived.
 * @module
 */
import { join } from "node:path";
import { Policy } from "../../core/policy/policy.ts";
import { globEngineLoaded, GlobEngineNotLoaded } from "../../core/policy/rules.ts";
import { CommandSandbox, DEFAULT_SANDBOX, deriveProfile } from "../../core/policy/sandbox/mod.ts";

const root = await Deno.makeTempDir({ prefix: "coyote-globlazy-" });
const ws = join(root, "ws");
const home = join(root, "home");
const cfg = join(root, "cfg");
const elsewhere = join(root, "elsewhere");
for (const d of [ws, home, cfg, elsewhere, join(ws, "src")]) {
  await Deno.mkdir(d, { recursive: true });
}
await Deno.writeTextFile(join(ws, "src", "a.txt"), "a");
await Deno.writeTextFile(join(ws, "key.pem"), "k");
const opts = { workspace: ws, configDir: cfg, home };
const out: Record<string, unknown> = {};

try {
  switch (Deno.args[0]) {
    case "literal": {
      const policy = Policy.create(
        { allow: [`Read(${elsewhere})`], deny: ["Write(~/private)"], ask: ["Read(src/secret)"] },
        { allow: ["Write(build)"], deny: [] },
        opts,
      );
      const sandbox = await CommandSandbox.create(policy, DEFAULT_SANDBOX);
      out.read = (await policy.evaluate({ type: "read", path: join(ws, "src", "a.txt") })).decision;
      out.readElsewhere =
        (await policy.evaluate({ type: "read", path: join(elsewhere, "x") })).decision;
      out.writePrivate =
        (await policy.evaluate({ type: "write", path: join(home, "private", "x") })).decision;
      out.exec = (await policy.evaluate({ type: "execute", command: "cat src/a.txt" })).decision;
      deriveProfile(policy);
      sandbox.modelNote();
      policy.workerPermissions({ read: [ws], write: [join(ws, "build")] }, "probe");
      policy.denoFlags();
      // "allow always" records exactly what was asked: never a glob, even with glob characters.
      const other = join(root, "other");
      policy.addRule("allow", `Read(${other}/a*b)`, "session");
      out.sessionExact =
        (await policy.evaluate({ type: "read", path: join(other, "a*b") })).decision;
      out.sessionNotGlob =
        (await policy.evaluate({ type: "read", path: join(other, "axb") })).decision;
      policy.forWorkspace(join(ws, "src"));
      sandbox.close();
      break;
    }
    case "first": {
      const policy = Policy.create({ deny: ["Read(**/*.pem)"] }, { allow: [], deny: [] }, opts);
      out.loadedBefore = globEngineLoaded();
      out.pem = (await policy.evaluate({ type: "read", path: join(ws, "key.pem") })).decision;
      out.txt = (await policy.evaluate({ type: "read", path: join(ws, "src", "a.txt") })).decision;
      out.catPem = (await policy.evaluate({ type: "execute", command: "cat key.pem" })).decision;
      break;
    }
    case "runtime": {
      const policy = Policy.create({}, { allow: [], deny: [] }, opts);
      out.before = (await policy.evaluate({ type: "read", path: join(ws, "key.pem") })).decision;
      out.loadedBefore = globEngineLoaded();
      policy.addRule("deny", "Read(**/*.pem)", "plugin");
      policy.addRule("allow", `Write(${elsewhere}/**)`, "plugin");
      out.pem = (await policy.evaluate({ type: "read", path: join(ws, "key.pem") })).decision;
      out.elsewhere =
        (await policy.evaluate({ type: "write", path: join(elsewhere, "d", "f") })).decision;
      out.loadedAfter = globEngineLoaded();
      break;
    }
    case "forced": {
      const policy = Policy.create(
        { deny: ["Read(**/*.pem)"], allow: [`Write(${elsewhere}/**)`] },
        { allow: [], deny: [] },
        opts,
      );
      // Synchronously, before the engine's load (started by Policy.create) can finish.
      out.loadedBefore = globEngineLoaded();
      out.txt = policy.decide({ type: "read", path: join(ws, "src", "a.txt") }).decision;
      out.elsewhere = policy.decide({ type: "write", path: join(elsewhere, "f") }).decision;
      out.grant = policy.workerPermissions({ read: [ws], write: [elsewhere] }, "probe").permissions;
      out.flags = policy.denoFlags();
      try {
        deriveProfile(policy);
        out.profile = "derived";
      } catch (e) {
        out.profile = e instanceof GlobEngineNotLoaded ? "GlobEngineNotLoaded" : String(e);
      }
      // Once loaded, the same policy answers right.
      await policy.globsReady();
      out.loadedAfter = globEngineLoaded();
      out.txtAfter = policy.decide({ type: "read", path: join(ws, "src", "a.txt") }).decision;
      out.pemAfter = policy.decide({ type: "read", path: join(ws, "key.pem") }).decision;
      out.elsewhereAfter = policy.decide({ type: "write", path: join(elsewhere, "f") }).decision;
      out.flagsAfter = policy.denoFlags();
      break;
    }
    case "forced-sandbox": {
      // A sandbox over a glob-free policy, then a glob rule arriving just before a command.
      const policy = Policy.create({}, { allow: [], deny: [] }, opts);
      const sandbox = await CommandSandbox.create(policy, DEFAULT_SANDBOX);
      out.sandboxActive = sandbox.status.active;
      policy.addRule("allow", `Write(${elsewhere}/**)`, "plugin");
      out.loadedBefore = globEngineLoaded();
      const p = sandbox.prepare("true", ws, "/bin/sh");
      out.prepare = "refused" in p ? p.refused : "prepared";
      sandbox.close();
      await policy.globsReady();
      const q = sandbox.prepare("true", ws, "/bin/sh");
      out.prepareAfter = "refused" in q ? q.refused : "prepared";
      sandbox.close();
      break;
    }
    default:
      throw new Error(`unknown scenario ${Deno.args[0]}`);
  }
  out.loaded = globEngineLoaded();
} finally {
  await Deno.remove(root, { recursive: true });
}
console.log(JSON.stringify(out));
