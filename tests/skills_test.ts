/**
 * Skills (Agent Skills `SKILL.md`): parsing (folder name = skill name, optional front-matter name,
 * lenient front matter), discovery order (workspace and ancestors up to the repository root,
 * `--add-dir`, user dir, built-ins), the agent's `enabled_skills` filter, and the
 * `skill__list` / `skill__load` / `skill__unload` cycle as the scripted model server sees it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { discoverSkills, parseSkill } from "../core/extensions/skills/load.ts";
import { createSkillState, visibleSkills } from "../core/extensions/skills/tools.ts";
import { builtinSkillFiles } from "../skills/mod.ts";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, parseJsonLines, runCoyote } from "./support/run_coyote.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

async function write(path: string, text: string) {
  await Deno.mkdir(join(path, ".."), { recursive: true });
  await Deno.writeTextFile(path, text);
}

Deno.test("parseSkill: the folder names the skill; a front-matter name must match it", async () => {
  const ok = await parseSkill("---\ndescription: Ship it.\n---\nSteps.\n", "deploy");
  assert.deepEqual(ok, { skill: { name: "deploy", description: "Ship it.", content: "Steps." } });
  const same = await parseSkill("---\nname: deploy\ndescription: x\n---\n", "deploy");
  assert.equal(same.skill.name, "deploy");
  await assert.rejects(
    parseSkill("---\nname: other\ndescription: x\n---\n", "deploy"),
    /name: "other" does not match its folder "deploy"/,
  );
  await assert.rejects(
    parseSkill("---\nname: deploy\n---\nbody", "deploy"),
    /description: required/,
  );
  await assert.rejects(parseSkill("just text", "deploy"), /missing front matter/);
  await assert.rejects(parseSkill("---\ndescription: x\n---\n", "Bad_Name"), /not a skill name/);
});

Deno.test("parseSkill: strict-YAML rejects load line by line with a warning; tool lists map", async () => {
  const text = [
    "---",
    "description: Use when: the user ships a release",
    "allowed-tools: Read, Bash(git log:*), fs_grep",
    "enabled_mcp_servers:",
    "  - github",
    "auto_unload: true",
    "---",
    "Body.",
  ].join("\n");
  const r = await parseSkill(text, "ship");
  assert.equal(r.skill.description, "Use when: the user ships a release");
  assert.deepEqual(r.skill.enabled_tools, ["fs_read", "execute_command", "fs_grep"]);
  assert.deepEqual(r.skill.enabled_mcp_servers, ["github"]);
  assert.equal(r.skill.auto_unload, true);
  assert.match(r.warning ?? "", /not strict YAML/);
  // The position is the file's (line 2: the description, below the `---` line), without a
  // dangling colon.
  assert.match(r.warning ?? "", /at line 2, column \d+\); read it line by line/);
  // The original Coyote's key, as a YAML list, in strict YAML: no warning.
  const strict = await parseSkill(
    "---\ndescription: x\nenabled_tools: [fs_read, web_fetch]\n---\nB",
    "x",
  );
  assert.deepEqual(strict.skill.enabled_tools, ["fs_read", "web_fetch"]);
  assert.equal(strict.warning, undefined);
});

Deno.test("discoverSkills: workspace (nearest first, up to the repo root), --add-dir, user, built-ins", async () => {
  const root = await Deno.makeTempDir({ prefix: "coyote-skills-" });
  const repo = join(root, "repo");
  const cwd = join(repo, "pkg", "app");
  const cfg = join(root, "cfg");
  const extra = join(root, "extra");
  const skill = (desc: string) => `---\ndescription: ${desc}\n---\nbody of ${desc}\n`;
  try {
    await Deno.mkdir(join(repo, ".git"), { recursive: true });
    await Deno.mkdir(cwd, { recursive: true });
    await write(join(cwd, ".claude/skills/review/SKILL.md"), skill("cwd claude review"));
    await write(join(repo, ".coyote/skills/review/SKILL.md"), skill("root review"));
    await write(join(repo, ".agents/skills/lint/SKILL.md"), skill("root lint"));
    await write(join(root, ".claude/skills/outside/SKILL.md"), skill("above the repo root"));
    await write(join(extra, ".claude/skills/extra/SKILL.md"), skill("added dir"));
    await write(join(cfg, "skills/lint/SKILL.md"), skill("user lint"));
    await write(join(cfg, "skills/code-review/SKILL.md"), skill("user code review"));
    await write(join(cfg, "skills/broken/SKILL.md"), "---\nname: nope\ndescription: x\n---\n");
    const r = await discoverSkills({
      cwd,
      configDir: cfg,
      addDirs: [extra],
      builtins: builtinSkillFiles,
    });
    const by = Object.fromEntries(r.skills.map((s) => [s.name, s]));
    assert.equal(by.review.description, "cwd claude review");
    assert.equal(by.review.source, "workspace");
    assert.equal(by.lint.description, "root lint");
    assert.equal(by.extra.source, "add-dir");
    assert.equal(by["code-review"].description, "user code review"); // user shadows built-in
    assert.equal(by["plan-review"].source, "builtin");
    assert.equal(by.outside, undefined, "directories above the repository root are not searched");
    assert.equal(r.warnings.length, 1);
    assert.match(r.warnings[0], /broken\/SKILL\.md: name: "nope" does not match/);
    // An agent's enabled_skills filters what it sees.
    assert.deepEqual(visibleSkills(r.skills, ["lint", "extra"]).map((s) => s.name), [
      "lint",
      "extra",
    ]);
    assert.throws(
      () => createSkillState(r.skills, { onChange: () => {}, preload: ["reveiw"] }),
      /--skill: unknown skill "reveiw" \(did you mean "review"\?\)/,
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("built-in skills all parse, strictly, with their folder names", async () => {
  assert.deepEqual(builtinSkillFiles.map((f) => f.name).sort(), [
    "code-review",
    "delegation-protocol",
    "handoff-protocol",
    "parallel-research",
    "plan-authoring",
    "plan-review",
    "security-review",
    "step-implementation",
    "verification-gates",
  ]);
  for (const f of builtinSkillFiles) {
    const r = await parseSkill(f.text, f.name);
    assert.equal(r.warning, undefined, f.name);
    assert.ok(r.skill.content.length > 200, f.name);
  }
});

Deno.test("e2e: a .claude/skills skill with an unquoted colon is listed, loaded (body and tools in the next request) and unloaded", async () => {
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir({ prefix: "coyote-skill-e2e-" });
  await write(
    join(cwd, ".claude/skills/release-notes/SKILL.md"),
    "---\ndescription: Use when: writing release notes\nallowed-tools: Bash, Grep\n---\n" +
      "Run git log. SKILL-BODY-7\n",
  );
  // A workspace agent with one tool, so the skill's tools are visibly added and removed.
  await write(
    join(cwd, ".claude/agents/scribe.md"),
    "---\ndescription: Writes notes\ntools: Read\n---\nYou write notes.\n",
  );
  const server = await startModelServer({
    script: [
      { tool_calls: [{ name: "skill__list", arguments: {} }] },
      { tool_calls: [{ name: "skill__load", arguments: { name: "release-notes" } }] },
      { tool_calls: [{ name: "skill__unload", arguments: { name: "release-notes" } }] },
      { text: "done" },
    ],
  });
  try {
    const r = await runCoyote(
      ["--headless", "-a", "scribe", "--output-format", "stream-json", "write notes"],
      { cwd, env: childEnv(env, { baseURL: server.baseURL }) },
    );
    assert.equal(r.code, 0, r.stderr);
    const req = (i: number) => server.requests[i].body as Json;
    const system = (i: number): string => req(i).messages[0].content;
    const tools = (i: number): string[] => req(i).tools.map((t: Json) => t.function.name);
    const replies = (i: number): string[] =>
      req(i).messages.filter((m: Json) => m.role === "tool").map((m: Json) => m.content);

    // Listed: name and description (colon kept) in the index; body and skill tools absent.
    assert.match(system(0), /- release-notes: Use when: writing release notes/);
    assert.doesNotMatch(system(0), /SKILL-BODY-7/);
    assert.deepEqual(tools(0), ["fs_read", "skill__list", "skill__load", "skill__unload"]);
    assert.match(replies(1)[0], /- release-notes: Use when: writing release notes/);
    // Loaded: the next request carries the body and the skill's tools.
    assert.match(replies(2).at(-1)!, /Loaded skill release-notes/);
    assert.match(system(2), /# Loaded skill: release-notes\n\nRun git log\. SKILL-BODY-7/);
    assert.deepEqual(tools(2), [
      "fs_read",
      "fs_grep",
      "execute_command",
      "skill__list",
      "skill__load",
      "skill__unload",
    ]);
    // Unloaded: both gone again.
    assert.doesNotMatch(system(3), /SKILL-BODY-7/);
    assert.deepEqual(tools(3), tools(0));
    // The lenient-front-matter warning reaches the event stream, not only stderr.
    const lines = parseJsonLines(r.stdout) as Json[];
    const started = lines.find((l) => l.update?.sessionUpdate === "turn_started");
    assert.equal(started.update.warnings.length, 1, r.stdout);
    assert.match(
      started.update.warnings[0],
      /release-notes\/SKILL\.md: front matter is not strict YAML/,
    );
    assert.match(r.stderr, /release-notes\/SKILL\.md: front matter is not strict YAML/);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("e2e: --skill preloads a skill; an unknown --skill is a usage error", async () => {
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir({ prefix: "coyote-skill-pre-" });
  const server = await startModelServer({ script: [{ text: "ok" }] });
  try {
    const r = await runCoyote(["--headless", "-a", "coyote", "--skill", "plan-review", "hi"], {
      cwd,
      env: childEnv(env, { baseURL: server.baseURL }),
    });
    assert.equal(r.code, 0, r.stderr);
    const system: string = (server.requests[0].body as Json).messages[0].content;
    assert.match(system, /# Loaded skill: plan-review\n/);
    assert.match(system, /PLAN_REVIEW: REJECT/);
    const bad = await runCoyote(["--headless", "--skill", "plan-reveiw", "hi"], {
      cwd,
      env: childEnv(env, { baseURL: server.baseURL }),
    });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown skill "plan-reveiw" \(did you mean "plan-review"\?\)/);
    const filtered = await runCoyote([
      "--headless",
      "-a",
      "explore",
      "--skill",
      "plan-review",
      "hi",
    ], {
      cwd,
      env: childEnv(env, { baseURL: server.baseURL }),
    });
    assert.equal(filtered.code, 2);
    assert.match(
      filtered.stderr,
      /skill "plan-review" is not among agent "explore"'s enabled_skills \(none\)/,
    );
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("skill state: load/unload change prompt and granted tools; auto_unload drops at turn end", async () => {
  const a = await parseSkill(
    "---\ndescription: a\nallowed-tools: Bash\nauto_unload: true\n---\nA-BODY",
    "a",
  );
  const b = await parseSkill("---\ndescription: b\nenabled_mcp_servers: [gh]\n---\nB-BODY", "b");
  const entries = [a, b].map((r) => ({ ...r.skill, source: "user" as const, path: r.skill.name }));
  let changes = 0;
  const st = createSkillState(entries, { onChange: () => changes++, preload: ["b"] });
  assert.deepEqual(st.loaded, ["b"]);
  assert.equal(changes, 0, "a preload is part of the first request, not a change");
  assert.deepEqual(st.grantedTools(), ["mcp__gh__*"]);
  assert.equal(st.load("a"), true);
  assert.equal(st.load("zzz"), false);
  assert.deepEqual(st.grantedTools(), ["mcp__gh__*", "execute_command"]);
  assert.match(st.promptSection(), /# Loaded skill: b\n\nB-BODY\n\n# Loaded skill: a\n\nA-BODY/);
  st.endTurn();
  assert.deepEqual(st.loaded, ["b"], "auto_unload skills go when the turn ends");
  assert.equal(st.unload("b"), true);
  assert.equal(st.unload("b"), false);
  assert.equal(st.promptSection(), "");
  assert.equal(changes, 3);
  assert.deepEqual(st.tools.map((t) => t.name), ["skill__list", "skill__load", "skill__unload"]);
  assert.deepEqual(createSkillState([], { onChange: () => {} }).tools, []);
});
