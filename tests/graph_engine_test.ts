/**
 * The graph engine (core/graph/): schema errors, the validator, and the executor's semantics —
 * reducers, map order and fresh contexts, parallel steps, fallbacks, loop caps, the whole-run
 * timeout, structured output with one repair turn, approvals without a human. The host here is
 * in-process (scripted llm replies and script functions), as the ACP SDK tests its two sides in
 * process; tests/graph_host_test.ts runs graphs against the real model server, Workers and shells.
 * @module
 */
import assert from "node:assert/strict";
import type * as acp from "@agentclientprotocol/sdk";
import { parseGraphText } from "../core/graph/load.ts";
import { GraphSpecError } from "../core/protocol/graph_spec.ts";
import type { GraphSpec } from "../core/protocol/graph_spec.ts";
import { validateGraph } from "../core/graph/validate.ts";
import { runGraph } from "../core/graph/run.ts";
import { GraphRunError, NodeError } from "../core/graph/errors.ts";
import type { GraphHost, LlmReply } from "../core/graph/host.ts";
import { checkSchema } from "../core/graph/structured.ts";

type Llm = (
  prompt: string,
  ctx: { node: string; turn: number; history: string[] },
) => LlmReply | Promise<LlmReply>;

interface TestHost extends GraphHost {
  conversations: { node: string; history: string[] }[];
  events: acp.SessionUpdate[];
}

function host(
  o: {
    llm?: Llm;
    scripts?: Record<string, (state: Record<string, unknown>) => unknown>;
    answers?: (q: { node: string }) => string | undefined;
  } = {},
): TestHost {
  const conversations: { node: string; history: string[] }[] = [];
  return {
    conversations,
    events: [],
    llm(cfg) {
      const conv = { node: cfg.node, history: [] as string[] };
      conversations.push(conv);
      let turn = 0;
      return {
        send: async (prompt) => {
          conv.history.push(prompt);
          return await (o.llm ?? (() => ({ text: "ok" })))(prompt, {
            node: cfg.node,
            turn: turn++,
            history: conv.history,
          });
        },
      };
    },
    agent: (req) => Promise.resolve(`agent ${req.agent} did: ${req.prompt}`),
    script: (req) => {
      const f = o.scripts?.[req.script];
      if (!f) throw new NodeError(`no script ${req.script}`);
      return Promise.resolve(f(structuredClone(req.state)) as Record<string, unknown>);
    },
    ask: (q) => Promise.resolve(o.answers?.(q)),
    checkSchema,
  };
}

function graph(yaml: string): GraphSpec {
  const spec = parseGraphText(yaml, "test/graph.yaml");
  validateGraph(spec, "test/graph.yaml");
  return spec;
}

async function run(
  spec: GraphSpec,
  h: TestHost,
  prompt = "go",
  signal = new AbortController().signal,
) {
  return await runGraph(spec, { host: h, prompt, emit: (u) => h.events.push(u), signal });
}

function problems(yaml: string): string[] {
  try {
    graph(yaml);
  } catch (e) {
    if (e instanceof GraphSpecError) return e.problems;
    throw e;
  }
  return [];
}

Deno.test("graph schema: the error message lists problems, one per line, without trailing spaces", () => {
  const one = new GraphSpecError("/g/graph.yaml", ["start: required (string)"]);
  assert.equal(one.message, "/g/graph.yaml: start: required (string)");
  const two = new GraphSpecError("/g/graph.yaml", ["a: x", "b: y"]);
  assert.equal(two.message, "/g/graph.yaml:\n  - a: x\n  - b: y");
});

Deno.test("graph schema: errors name the node and field, with did-you-mean", () => {
  const p = problems(`
name: g
start: a
nodes:
  a: { type: llm, promt: "hi", next: b }
  b: { type: ned }
  c: { type: end, outptu: x }
`);
  assert.ok(p.includes("nodes.a.promt: unknown key (did you mean `prompt`?)"), p.join("\n"));
  assert.ok(
    p.includes("nodes.a.prompt: required (string)"),
    p.join("\n"),
  );
  assert.ok(
    p.some((l) =>
      l.startsWith('nodes.b.type: unknown node type "ned"') && l.includes("did you mean `end`")
    ),
    p.join("\n"),
  );
  assert.ok(p.includes("nodes.c.outptu: unknown key (did you mean `output`?)"), p.join("\n"));
  assert.deepEqual(problems("name: g\nstart: a\nnodes:\n  a: [\n"), [
    problems("name: g\nstart: a\nnodes:\n  a: [\n")[0],
  ]);
  assert.match(
    problems("name: g\nstart: a\nnodes:\n  a: [\n")[0],
    /^line \d+, column \d+: YAML syntax error/,
  );
});

Deno.test("graph validator: references, reachability, cycles, parallel writes, branches, templates, tools", () => {
  const p = problems(`
name: g
tools: [fs_read]
start: a
nodes:
  a: { type: llm, prompt: "{{nope}} {{initial_prompt}}", tools: [fs_write], next: [b, c] }
  b: { type: llm, prompt: x, next: d }
  c: { type: llm, prompt: y, next: e }
  d: { type: script, script: s.sh, next: a, outputs: [] }
  e: { type: map, over: items, as: it, branch: f, collect_into: r, next: z }
  f: { type: approval, question: "?", options: [y], routes: { y: z }, on_other: loop }
  orphan: { type: end }
  z: { type: end }
  loop: { type: llm, prompt: x, next: loop }
`);
  const has = (s: string) =>
    assert.ok(p.some((l) => l.includes(s)), `missing: ${s}\n${p.join("\n")}`);
  has('nodes.a.tools: "fs_write" is not in the graph\'s tools');
  has('nodes.a.next: "b" and "c" both write state key "output" in parallel; give it a reducer');
  has("nodes.a.next: the parallel nodes continue to different nodes (d, e)");
  has('nodes.e.branch: "f" is an approval node; a map branch asks no human');
  has("nodes.orphan: not reachable from start");
  has("nodes.loop: cannot reach an `end` node");
  has("static cycle a → b → d → a");
  has("static cycle loop → loop");
  has("nodes.a.prompt: template names {{nope}}");
  // With a reducer and one join, the parallel step is fine; a script loops through _next.
  assert.deepEqual(
    problems(`
name: g
start: a
reducers: { output: append }
initial_state: { n: 0 }
nodes:
  a: { type: llm, prompt: "{{initial_prompt}}", next: [b, c] }
  b: { type: llm, prompt: x, next: d }
  c: { type: llm, prompt: y, next: d }
  d: { type: script, script: s.sh, routes: [a, z], outputs: [n] }
  z: { type: end, output: "{{n}}" }
`),
    [],
  );
  // Missing references and a script without a way on.
  const q = problems(`
name: g
start: nowhere
nodes:
  a: { type: script, script: s.rb }
  z: { type: end }
`);
  assert.ok(q.includes('start: no node "nowhere"'), q.join("\n"));
  // A typo of an existing node names it.
  const t = problems(`
name: g
start: frist
nodes:
  first: { type: llm, prompt: x, next: fnish }
  finish: { type: end }
`);
  assert.ok(t.includes('start: no node "frist" (did you mean `first`?)'), t.join("\n"));
  assert.ok(
    t.includes('nodes.first.next: no node "fnish" (did you mean `finish`?)'),
    t.join("\n"),
  );
  assert.ok(q.some((l) => l.includes("nodes.a: a script needs `next` or `routes`")), q.join("\n"));
  assert.ok(
    q.some((l) => l.includes("nodes.a.script: expected a .ts, .js, .mjs or .sh file")),
    q.join("\n"),
  );
});

Deno.test("graph run: llm → script → end with state_updates, reducers and templates", async () => {
  const spec = graph(`
name: g
start: think
initial_state: { total: 1, log: [], meta: { a: 1 }, best: 5, worst: 5, all: [0] }
reducers: { total: sum, log: append, meta: merge, best: max, worst: min, all: extend }
nodes:
  think:
    type: llm
    prompt: "task: {{initial_prompt}}"
    state_updates: { note: "thought={{output}}" }
    next: tally
  tally:
    type: script
    script: tally.ts
    outputs: [total, log, meta, best, worst, all]
    next: done
  done:
    type: end
    output: "{{note}} total={{total}} log={{log}} meta={{meta.b}} {{best}}/{{worst}} {{all[2]}}"
`);
  const h = host({
    llm: (p) => ({ text: `[${p}]` }),
    scripts: {
      "tally.ts": (s) => ({
        total: 41,
        log: s.note,
        meta: { b: 2 },
        best: 9,
        worst: 2,
        all: [1, 2],
      }),
    },
  });
  const r = await run(spec, h, "fix it");
  assert.equal(
    r.output,
    'thought=[task: fix it] total=42 log=["thought=[task: fix it]"] meta=2 9/2 2',
  );
  assert.deepEqual(r.trace, ["think", "tally", "done"]);
  assert.deepEqual(r.state.meta, { a: 1, b: 2 });
  // Every node is a tool_call that completes, naming the keys it wrote and where it goes.
  const updates = h.events.filter((e) =>
    e.sessionUpdate === "tool_call_update"
  ) as acp.ToolCallUpdate[];
  assert.deepEqual(updates.map((u) => [u.toolCallId, u.status]), [
    ["graph:think:1", "completed"],
    ["graph:tally:1", "completed"],
    ["graph:done:1", "completed"],
  ]);
  assert.deepEqual(updates[0].rawOutput, {
    keys: ["output", "note"],
    next: "tally",
    route: "next",
  });
  // The end output is the one agent message; node text is thought.
  const msgs = h.events.filter((e) => e.sessionUpdate === "agent_message_chunk");
  assert.equal(msgs.length, 1);
});

Deno.test("graph run: map keeps input order under concurrency, each branch in a fresh conversation", async () => {
  const spec = graph(`
name: g
start: m
settings: { max_concurrency: 3 }
initial_state: { items: [a, b, c, d, e, f] }
nodes:
  m: { type: map, over: items, as: it, branch: check, collect_into: results, next: done }
  check: { type: llm, prompt: "check {{it}}" }
  done: { type: end, output: "{{results}}" }
`);
  let running = 0, peak = 0;
  const h = host({
    llm: async (p) => {
      running++;
      peak = Math.max(peak, running);
      // Later items finish first.
      await new Promise((r) => setTimeout(r, 5 * (6 - "abcdef".indexOf(p.at(-1)!))));
      running--;
      return { text: p.toUpperCase() };
    },
  });
  const r = await run(spec, h);
  assert.deepEqual(r.state.results, [
    "CHECK A",
    "CHECK B",
    "CHECK C",
    "CHECK D",
    "CHECK E",
    "CHECK F",
  ]);
  assert.equal(peak, 3);
  assert.equal(h.conversations.length, 6);
  for (const c of h.conversations) {
    assert.equal(c.history.length, 1, "no branch saw another's messages");
  }
});

Deno.test("graph run: a parallel step runs its nodes at once and joins; a failing branch takes its fallback", async () => {
  const spec = graph(`
name: g
start: triage
reducers: { output: append }
nodes:
  triage: { type: llm, prompt: x, next: [left, right] }
  left: { type: llm, prompt: left, next: join }
  right: { type: llm, prompt: right, next: join }
  join: { type: end, output: "{{output}}" }
`);
  let inFlight = 0, peak = 0;
  const h = host({
    llm: async (p) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setTimeout(r, 10));
      inFlight--;
      return { text: p };
    },
  });
  const r = await run(spec, h);
  assert.equal(peak, 2);
  assert.deepEqual(r.state.output, ["x", "left", "right", '["x","left","right"]']);

  const spec2 = graph(`
name: g
start: a
nodes:
  a: { type: script, script: boom.ts, next: b, fallback: recover }
  b: { type: end, output: never }
  recover: { type: end, output: "recovered from {{last_error.node}}: {{last_error.message}}" }
`);
  const r2 = await run(
    spec2,
    host({
      scripts: {
        "boom.ts": () => {
          throw new Error("kaput");
        },
      },
    }),
  );
  assert.equal(r2.output, "recovered from a: kaput");
  assert.deepEqual(r2.trace, ["a", "recover"]);
  // Without a fallback the run fails, naming the node.
  const spec3 = graph(`
name: g
start: a
nodes:
  a: { type: script, script: boom.ts, next: b }
  b: { type: end }
`);
  await assert.rejects(
    run(
      spec3,
      host({
        scripts: {
          "boom.ts": () => {
            throw new Error("kaput");
          },
        },
      }),
    ),
    (e) => e instanceof GraphRunError && e.node === "a" && /node "a" failed: kaput/.test(e.message),
  );
});

Deno.test("graph run: a script loop is capped by max_loop_iterations; the cap's failure takes the fallback", async () => {
  const spec = graph(`
name: g
start: work
settings: { max_loop_iterations: { gate: 3 } }
initial_state: { n: 0 }
reducers: { n: sum }
nodes:
  work: { type: script, script: work.ts, outputs: [n], next: gate }
  gate: { type: script, script: gate.ts, routes: [work, done], fallback: capped }
  done: { type: end, output: "done at {{n}}" }
  capped: { type: end, output: "capped at {{n}}: {{last_error.message}}" }
`);
  const h = host({
    scripts: { "work.ts": () => ({ n: 1 }), "gate.ts": () => ({ _next: "work" }) },
  });
  const r = await run(spec, h);
  assert.equal(r.output, "capped at 4: visited 4 times; settings.max_loop_iterations allows 3");
  // A script may only route where its routes allow.
  const h2 = host({
    scripts: { "work.ts": () => ({ n: 1 }), "gate.ts": () => ({ _next: "capped" }) },
  });
  const r2 = await run(spec, h2);
  assert.match(r2.output, /chose _next "capped", not one of its routes \(work, done\)/);
});

Deno.test("graph run: the whole-run timeout ends the run with an error naming the setting", async () => {
  const spec = graph(`
name: g
start: slow
settings: { timeout: 0.05 }
nodes:
  slow: { type: llm, prompt: x, next: done }
  done: { type: end }
`);
  const h = host({
    llm: (_p) => new Promise((r) => setTimeout(() => r({ text: "late" }), 2000)),
  });
  // The host's reply ignores the signal (as a stuck provider would); the run still ends.
  const started = Date.now();
  await assert.rejects(
    runGraph(spec, {
      host: {
        ...h,
        llm: (cfg, emit) => {
          const c = h.llm(cfg, emit);
          return {
            send: (p, signal) =>
              Promise.race([
                c.send(p, signal),
                new Promise<never>((_, rej) =>
                  signal.addEventListener("abort", () => rej(signal.reason))
                ),
              ]),
          };
        },
      },
      prompt: "p",
      emit: () => {},
      signal: new AbortController().signal,
    }),
    /timed out after 0.05 s \(settings\.timeout\)/,
  );
  assert.ok(Date.now() - started < 1500);
});

Deno.test("graph run: structured output is validated, gets one repair turn, then the fallback", async () => {
  const yaml = `
name: g
start: parse
nodes:
  parse:
    type: llm
    prompt: "extract"
    output_schema:
      type: object
      required: [criteria]
      properties:
        criteria: { type: array, items: { type: object, required: [id, text], properties: { id: { type: string }, text: { type: string } } } }
    next: done
    fallback: fault
  done: { type: end, output: "{{criteria[0].id}}: {{criteria[0].text}}" }
  fault: { type: end, output: "FAULT {{last_error.message}}" }
`;
  // First reply invalid (id is a number), the repair turn fixes it through submit_result.
  const h = host({
    llm: (_p, c) =>
      c.turn === 0
        ? { text: "", submitted: { criteria: [{ id: 1, text: "x" }] } }
        : { text: "", submitted: { criteria: [{ id: "C1", text: "adds --json" }] } },
  });
  const r = await run(graph(yaml), h);
  assert.equal(r.output, "C1: adds --json");
  const conv = h.conversations[0].history;
  assert.equal(conv.length, 2);
  assert.match(conv[1], /does not match the required schema: criteria\/0\/id: .*string/);
  // A JSON text answer is accepted as a fallback.
  const h2 = host({
    llm: () => ({ text: 'Here:\n```json\n{"criteria": [{"id": "C2", "text": "t"}]}\n```' }),
  });
  assert.equal((await run(graph(yaml), h2)).output, "C2: t");
  // Invalid twice → the node's fallback.
  const h3 = host({ llm: () => ({ text: "no json here" }) });
  const r3 = await run(graph(yaml), h3);
  assert.match(
    r3.output,
    /^FAULT structured output invalid after one repair turn: no submit_result call/,
  );
  assert.equal(h3.conversations[0].history.length, 2, "exactly one repair turn");
});

Deno.test("graph run: approvals and inputs with and without a human", async () => {
  const yaml = `
name: g
start: gate
nodes:
  gate:
    type: approval
    question: "Proceed with {{initial_prompt}}?"
    options: [yes, no]
    routes: { yes: ok, no: stop }
    on_other: other
  ok: { type: end, output: "ok {{choice}}" }
  stop: { type: end, output: "stopped" }
  other: { type: end, output: "other '{{choice}}' {{needs_human.question}}" }
`;
  assert.equal((await run(graph(yaml), host({ answers: () => "yes" }))).output, "ok yes");
  assert.equal(
    (await run(graph(yaml), host({ answers: () => "maybe later" }))).output,
    "other 'maybe later' ",
  );
  assert.equal(
    (await run(graph(yaml), host({ answers: () => undefined }), "x")).output,
    "other '' Proceed with x?",
  );
  const headless = graph(yaml.replace("on_other: other", "on_other: other\n    headless: yes"));
  assert.equal((await run(headless, host({ answers: () => undefined }))).output, "ok yes");
  const input = graph(`
name: g
start: ask
nodes:
  ask: { type: input, question: "Name?", validation: "len(input) > 2", next: done, default: "anon" }
  done: { type: end, output: "hi {{input}}" }
`);
  assert.equal((await run(input, host({ answers: () => undefined }))).output, "hi anon");
  await assert.rejects(
    run(input, host({ answers: () => "x" })),
    /the answer fails len\(input\) > 2/,
  );
});
