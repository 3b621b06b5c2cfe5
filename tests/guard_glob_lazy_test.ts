/**
 * The guard's glob engine (npm picomatch, CommonJS: its first load costs Deno's CJS loader
 * bootstrap) loads only when a rule with glob syntax needs it (core/policy/rules.ts): literal
 * rules never load it, a glob rule works from the first evaluation and when added at run time,
 * and a glob reached before the engine has loaded fails closed. Loading is per-process state, so
 * each scenario runs in a fresh process (tests/support/glob_lazy_probe.ts).
 */
import * as assert from "node:assert/strict";
import { REPO_ROOT } from "./support/run_coyote.ts";
import {
  absolutePattern,
  compilePath,
  GLOB_SYNTAX,
  loadGlobEngine,
  needsGlobEngine,
} from "../core/policy/rules.ts";

async function probe(scenario: string): Promise<Record<string, unknown>> {
  const o = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${REPO_ROOT}/tests/support/glob_lazy_probe.ts`, scenario],
    cwd: REPO_ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const err = new TextDecoder().decode(o.stderr);
  assert.equal(o.code, 0, `probe ${scenario} failed: ${err}`);
  return JSON.parse(new TextDecoder().decode(o.stdout));
}

Deno.test("glob engine: default config and literal rules never load picomatch", async () => {
  const r = await probe("literal");
  assert.equal(r.read, "allow");
  assert.equal(r.readElsewhere, "allow", "a literal allow rule covers what lies below it");
  assert.equal(r.writePrivate, "deny", "a literal deny rule covers what lies below it");
  assert.equal(r.exec, "allow");
  // "allow always" records exactly the path asked about, glob characters and all.
  assert.equal(r.sessionExact, "allow");
  assert.equal(r.sessionNotGlob, "ask");
  assert.equal(r.loaded, false, "picomatch was loaded although no rule has glob syntax");
});

Deno.test("glob engine: a glob rule from the config decides the first evaluation", async () => {
  const r = await probe("first");
  assert.equal(r.loadedBefore, false);
  assert.equal(r.pem, "deny");
  assert.equal(r.txt, "allow");
  assert.equal(r.catPem, "deny");
  assert.equal(r.loaded, true);
});

Deno.test("glob engine: a glob rule added at run time decides the next evaluation", async () => {
  const r = await probe("runtime");
  assert.equal(r.before, "allow");
  assert.equal(r.loadedBefore, false);
  assert.equal(r.pem, "deny");
  assert.equal(r.elsewhere, "allow");
  assert.equal(r.loadedAfter, true);
});

Deno.test("glob engine: a glob reached before the engine loaded fails closed", async () => {
  const r = await probe("forced");
  assert.equal(r.loadedBefore, false, "the scenario must run before the engine loads");
  // Read(**/*.pem) deny: stands in as "deny everything" until it can be compiled.
  assert.equal(r.txt, "deny");
  // Write(elsewhere/**) allow: grants nothing until compiled (the default asks outside).
  assert.equal(r.elsewhere, "ask");
  const grant = r.grant as Record<string, unknown>;
  assert.equal(grant.read, false, "a worker grant is refused while a deny glob is unknown");
  assert.equal(grant.write, false);
  assert.equal(r.profile, "GlobEngineNotLoaded");
  // Once loaded, the same policy answers right.
  assert.equal(r.loadedAfter, true);
  assert.equal(r.txtAfter, "allow");
  assert.equal(r.pemAfter, "deny");
  assert.equal(r.elsewhereAfter, "allow");
});

Deno.test("glob engine: a sandboxed command prepared before a new glob compiles is refused", async () => {
  const r = await probe("forced-sandbox");
  assert.equal(r.loadedBefore, false);
  if (r.sandboxActive) {
    assert.match(String(r.prepare), /The command was not run/);
    assert.equal(r.prepareAfter, "prepared");
  } else {
    // No OS sandbox backend: commands are not sandboxed, no profile is derived.
    assert.equal(r.prepare, "prepared");
  }
});

Deno.test("glob engine: patterns without glob syntax compile exactly as picomatch would", async () => {
  await loadGlobEngine();
  const mod = await import("picomatch");
  // deno-lint-ignore no-explicit-any
  const pm = ((mod as any).default ?? mod) as { scan(g: string): { isGlob: boolean } };
  const ws = "/w/s";
  const home = "/h";
  const cases = [
    "src",
    "./src/a.txt",
    "~/notes",
    "~",
    "/",
    "/x//y/",
    "/a.b,c/d-e_f",
    "dir/with space",
    "/x/y$z^%#~=:;'\"",
    "**/*.pem",
    "/x/**",
    "a?",
    "a[bc]",
    "{a,b}",
    "!(x)",
    "+(x)",
    "@(x)",
    "a\\*b",
    "a|b",
    "(a)",
    "x!y",
    "a+b",
    "a@b",
  ];
  for (const c of cases) {
    const abs = absolutePattern(c, ws, home);
    if (pm.scan(abs).isGlob) assert.ok(GLOB_SYNTAX.test(abs), `${c} is a glob for picomatch`);
    if (!needsGlobEngine(c, ws, home)) {
      const m = compilePath(c, ws, home);
      assert.equal(m.literal, true);
      assert.ok(m.test(m.absolute) && m.test(`${m.absolute === "/" ? "" : m.absolute}/below`));
    }
  }
  // A pattern with glob characters that picomatch reads as literal still goes through it.
  const plus = compilePath("/a+b", ws, home);
  assert.equal(plus.literal, true);
  assert.ok(plus.test("/a+b/c") && !plus.test("/a+bc"));
});
