/**
 * The seeds' flow (tests/support/journeys.ts `seedFlow`, the script the headless and ACP journeys
 * drive too) through the REPL in a real pseudo-terminal (tmux), from the default agent (sisyphus)
 * on a real git repository, the OS sandbox on: what the screen shows for each gate decision and
 * the intent line (one dim `⚑` line each, core/frontends/render/event_lines.ts `gateLine`), the children
 * (both explore children of the fan-out; the coder's two runs under one id — the resumed child is
 * the same child), the refused spawn, and approvals: a `Write(**\/*.md)` ask rule makes the
 * coordinator's PLAN.md writes and the coder child's NOTES.md write ask, each answered at the
 * same prompt (`coyote wants to` / `sub-agent <id> wants to`), the child's while its graph waits.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, coyoteCommand, makeCoyoteEnv } from "./support/run_coyote.ts";
import { Tmux } from "./support/tmux.ts";
import {
  NOTES,
  PLAN_V2,
  repo,
  SEED_GATES,
  SEED_PROMPT,
  seedFlow,
  system,
} from "./support/journeys.ts";

const hasTmux = await new Deno.Command("tmux", { args: ["-V"], stdout: "null", stderr: "null" })
  .output().then((o) => o.success, () => false);
if (!hasTmux) throw new Error("tests/journeys_repl_test.ts needs tmux (installed by .ci/run)");

/** Liveness bound for one step of the flow on a loaded machine (not a timing assertion). */
const STEP_MS = 120_000;

/** Waits until `re` was shown `n` times (scroll-back included). */
const waitCount = (t: Tmux, re: RegExp, n: number) => t.waitForCount(re, n, STEP_MS);

/** The lines of `screen` matching `re`, in order. */
const linesOf = (screen: string, re: RegExp) => screen.split("\n").filter((l) => re.test(l));

Deno.test("journey (REPL): the seeds' flow from sisyphus — a dim line per gate decision, the resumed coder shown as the same child, children's approvals asked like the coordinator's", async () => {
  const env = await makeCoyoteEnv();
  const parent = await Deno.makeTempDir({ prefix: "coyote-journey-repl-" });
  const dir = await repo(parent);
  const flow = seedFlow(dir);
  const server = await startModelServer({ script: flow.script });
  await Deno.writeTextFile(
    join(env.configDir, "config.yaml"),
    "permissions:\n  ask:\n    - Write(**/*.md)\n",
  );
  const t = new Tmux();
  try {
    const { cmd, args } = coyoteCommand([]);
    await t.start([cmd, ...args], {
      cwd: dir,
      env: childEnv(env, { baseURL: server.baseURL }),
      width: 160,
      height: 50,
    });
    await t.waitFor(/› $/m, STEP_MS);
    await t.type(SEED_PROMPT);
    await t.keys("Enter");
    // Approvals: the coordinator's two PLAN.md writes, then the coder child's NOTES.md write.
    const ask = /wants to write[^]*?deny always/;
    await waitCount(t, /coyote wants to write/, 1);
    await waitCount(t, ask, 1);
    await t.keys("y");
    await waitCount(t, /coyote wants to write/, 2);
    await waitCount(t, ask, 2);
    await t.keys("y");
    await waitCount(t, /sub-agent coder-[0-9a-f]{8} wants to write/, 1);
    await waitCount(t, ask, 3);
    await t.keys("y");
    const screen = await t.waitFor(/DONE: src\.txt says fixed[^]*› $/m, STEP_MS * 2);

    // Each gate decision, in order, one dim line each.
    const gates = linesOf(screen, /^⚑ (gate|intent)/).map((l) => {
      const m = /^⚑ (?:intent \((\w+)\)|gate (\w+): (\w+))/.exec(l)!;
      return m[1] ? ["intent", m[1]] : [m[2], m[3]];
    });
    const expected = SEED_GATES.map(([g, d]) => [g, d]);
    let i = 0;
    for (const g of gates) if (i < expected.length && g.join() === expected[i].join()) i++;
    assert.equal(i, expected.length, `gate lines in order:\n${gates.join("\n")}\n\n${screen}`);
    assert.match(screen, /^⚑ intent \(implementation\): make src\.txt say fixed$/m);
    assert.match(screen, /^⚑ gate plan_review: block — oracle-[0-9a-f]{8}: PLAN_REVIEW: REJECT/m);
    assert.match(screen, /^⚑ gate reviewers: require — adversary: a spec exists: PLAN\.md/m);
    assert.match(screen, /^⚑ gate adversary: continue — the last adversary verdict/m);
    // The refused spawn is a failed call on screen, with the gate's reason.
    assert.match(screen, /✗ Spawn coder: make src\.txt say fixed: plan review gate: oracle-/);

    // The fan-out's two explore children, each ended; the coder twice under one id: resumed,
    // the same child (sent the complaints by id).
    const explore = linesOf(screen, /^↳ explore-[0-9a-f]{8} end_turn/).map((l) => l.split(" ")[1]);
    assert.equal(new Set(explore).size, 2, screen);
    const coder = flow.facts.coder;
    assert.match(coder, /^coder-[0-9a-f]{8}$/);
    assert.equal(linesOf(screen, /^↳ coder-/).length, 2, screen);
    assert.ok(linesOf(screen, /^↳ coder-/).every((l) => l.startsWith(`↳ ${coder} end_turn`)));
    assert.match(screen, new RegExp(`Send to ${coder}: Complaints:`));

    // Approvals: the same prompt and answer for the coordinator and for the graph's child.
    assert.equal(linesOf(screen, /coyote wants to write/).length, 2);
    assert.equal(linesOf(screen, /sub-agent coder-[0-9a-f]{8} wants to write/).length, 1);
    assert.match(screen, new RegExp(`sub-agent ${coder} wants to write`));
    assert.ok(linesOf(screen, /^ {2}→ allowed once\s*$/).length >= 3, screen);

    // The work is on disk; the coder's check failed then passed (its collected result).
    assert.equal(await Deno.readTextFile(join(dir, "src.txt")), "fixed\n");
    assert.equal(await Deno.readTextFile(join(dir, "PLAN.md")), PLAN_V2);
    assert.equal(await Deno.readTextFile(join(dir, "NOTES.md")), NOTES);
    const collected = server.requests.map((r) => JSON.stringify(r.body)).find((b) =>
      b.includes("CODER_COMPLETE")
    )!;
    assert.match(collected, /attempt 1: `make test` exit 2.*attempt 2: `make test` exit 0/);
    assert.equal(flow.facts.reviewers, "adversary;code-reviewer,adversary");
    assert.ok(server.requests.some((r) => system(r).startsWith("You are code-reviewer")));
  } finally {
    await t.kill();
    await server.close();
    await env.cleanup();
    await Deno.remove(parent, { recursive: true }).catch(() => {});
  }
});
