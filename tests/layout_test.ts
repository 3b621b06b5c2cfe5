/**
 * The layout as a checked rule (docs/architecture.md "Rooms"): the module graph that Deno itself
 * resolves (`deno info --json`: static imports, literal dynamic imports and `import type`, all of
 * them counted) over every source module of ours — `main.ts`, `core/`, `sdk/`, `plugins/`,
 * `agents/`, `skills/`, `scripts/` (tests, benches and examples are not rooms) — has
 *
 * - no import cycle, type-only ones included;
 * - no import that runs up the layers of {@link LAYERS} (a module imports its own room or a lower
 *   one; a type both need moves down instead);
 * - no module over {@link MAX_LINES} lines but those in {@link BIGGER}, each with its reason;
 * - no loose module in `core/`: every concern is a folder.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";

const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const SOURCE_ROOTS = ["main.ts", "core", "sdk", "plugins", "agents", "skills", "scripts"];

/**
 * The rooms, lowest first. A module may import modules of its own room or of a room listed
 * before it. A path belongs to the longest prefix that names it.
 */
const LAYERS: readonly (readonly [room: string, holds: string])[] = [
  ["sdk/", "the public plugin SDK: types and definePlugin/defineTool, nothing of ours"],
  ["agents/", "built-in agent files and their graph scripts, embedded as text"],
  ["skills/", "built-in SKILL.md files, embedded as text"],
  ["core/util/", "text helpers, the terminal sanitiser, child stdout, front matter"],
  ["core/protocol/", "shared types: events, envelope, AgentSpec, graph.yaml format, errors"],
  ["core/provider/", "OpenAI-compatible streaming client, errors, wire messages"],
  ["core/transcript/", "the JSONL transcript store"],
  ["core/tools/", "tool registry, schemas to the model, redaction"],
  ["core/policy/", "the policy: rules, guard decisions, shell analysis, worker grants, OS sandbox"],
  ["core/config/", "config.yaml, project layers, trust, instructions, models table"],
  ["plugins/", "first-party tool packs"],
  ["core/extensions/", "plugin host, MCP client, skills, hooks"],
  ["core/engine/", "the LLM agent loop"],
  ["core/graph/", "graph agents: validator, executor, runner"],
  ["core/agents/", "agent definitions and the registry"],
  ["core/supervisor/", "sub-agents: spawn, limits, escalation"],
  ["core/session/", "one conversation on a workspace; what frontends call"],
  ["core/frontends/", "cli, headless, repl, acp, render"],
  ["scripts/", "build scripts"],
  ["main.ts", "the entry point"],
];

/** The module size limit, in lines. */
const MAX_LINES = 600;

/** Modules allowed over {@link MAX_LINES}, each with the reason it must stay bigger. */
const BIGGER: Readonly<Record<string, string>> = {
  // The public SDK is one file on purpose: docs/plugins.md has plugin authors map or copy that
  // one file. About 600 of its lines are the runnable @example of every export
  // (tests/sdk_doc_test.ts); its code is under the limit.
  "sdk/mod.ts": "the one-file public SDK, most of it @example blocks",
};

function sourceFiles(): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    const abs = join(ROOT, rel);
    if (Deno.statSync(abs).isFile) {
      if (rel.endsWith(".ts")) out.push(rel);
      return;
    }
    for (const e of Deno.readDirSync(abs)) walk(`${rel}/${e.name}`);
  };
  for (const r of SOURCE_ROOTS) walk(r);
  return out.sort();
}

/** `file -> [imported file]` over our modules, as `deno info --json` resolves them. */
async function moduleGraph(files: string[]): Promise<Map<string, Set<string>>> {
  const dir = await Deno.makeTempDir({ prefix: "coyote-layout-" });
  try {
    const root = join(dir, "all.ts");
    await Deno.writeTextFile(
      root,
      files.map((f) => `import ${JSON.stringify("file://" + join(ROOT, f))};`).join("\n") + "\n",
    );
    const o = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", "--config", join(ROOT, "deno.json"), root],
      env: { DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(o.success, new TextDecoder().decode(o.stderr));
    const info = JSON.parse(new TextDecoder().decode(o.stdout)) as {
      modules: {
        specifier: string;
        kind?: string;
        error?: string;
        dependencies?: { code?: { specifier?: string }; type?: { specifier?: string } }[];
      }[];
    };
    const ours = new Set(files);
    const local = (spec?: string) => {
      if (!spec?.startsWith("file://")) return undefined;
      const rel = relative(ROOT, new URL(spec).pathname);
      return ours.has(rel) ? rel : undefined;
    };
    const graph = new Map<string, Set<string>>();
    for (const m of info.modules) {
      const from = local(m.specifier);
      if (!from) continue;
      assert.ok(!m.error, `${from}: ${m.error}`);
      const to = graph.get(from) ?? new Set<string>();
      for (const d of m.dependencies ?? []) {
        for (const s of [d.code?.specifier, d.type?.specifier]) {
          const target = local(s);
          if (target && target !== from) to.add(target);
        }
      }
      graph.set(from, to);
    }
    const unread = files.filter((f) => !graph.has(f));
    assert.deepEqual(unread, [], "every source module is read as a module");
    return graph;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Strongly connected components of more than one module (Tarjan), each sorted. */
function cycles(graph: Map<string, Set<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) out.push(scc.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
}

/** Index in {@link LAYERS} of the room holding `file` (longest prefix). */
function layerOf(file: string): number {
  let best = -1;
  LAYERS.forEach(([room], i) => {
    const hit = room.endsWith("/") ? file.startsWith(room) : file === room;
    if (hit && (best < 0 || room.length > LAYERS[best][0].length)) best = i;
  });
  return best;
}

const files = sourceFiles();
const graph = await moduleGraph(files);

Deno.test("layout: no import cycle among our modules (type-only imports count)", () => {
  const found = cycles(graph).map((scc) => {
    const edges = scc.flatMap((a) =>
      [...graph.get(a)!].filter((b) => scc.includes(b)).map((b) => `  ${a} -> ${b}`)
    );
    return `cycle of ${scc.length}:\n${edges.join("\n")}`;
  });
  assert.deepEqual(found, [], found.join("\n"));
});

Deno.test("layout: every module belongs to a room of LAYERS", () => {
  assert.deepEqual(files.filter((f) => layerOf(f) < 0), []);
});

Deno.test("layout: no import runs up the layers", () => {
  const up: string[] = [];
  for (const [from, tos] of graph) {
    const a = layerOf(from);
    for (const to of tos) {
      const b = layerOf(to);
      if (b > a) up.push(`${from} (${LAYERS[a][0]}) -> ${to} (${LAYERS[b][0]})`);
    }
  }
  assert.deepEqual(up.sort(), [], up.join("\n"));
});

Deno.test(`layout: no module over ${MAX_LINES} lines`, () => {
  const big: string[] = [];
  for (const f of files) {
    const text = Deno.readTextFileSync(join(ROOT, f));
    const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
    if (lines > MAX_LINES && !(f in BIGGER)) big.push(`${f}: ${lines} lines`);
  }
  assert.deepEqual(big, [], big.join("\n"));
});

Deno.test("layout: core/ holds folders only, one per concern", () => {
  const loose = [...Deno.readDirSync(join(ROOT, "core"))].filter((e) => !e.isDirectory)
    .map((e) => `core/${e.name}`);
  assert.deepEqual(loose, []);
});

Deno.test("layout: a test of the layout can fail (its checks see a cycle, an upward import)", () => {
  const g = new Map([
    ["core/engine/a.ts", new Set(["core/session/b.ts"])],
    ["core/session/b.ts", new Set(["core/engine/a.ts"])],
  ]);
  assert.deepEqual(cycles(g), [["core/engine/a.ts", "core/session/b.ts"]]);
  assert.ok(layerOf("core/session/b.ts") > layerOf("core/engine/a.ts"));
  assert.equal(layerOf("core/policy/sandbox/mod.ts"), layerOf("core/policy/policy.ts"));
  assert.equal(layerOf("elsewhere/x.ts"), -1);
});
