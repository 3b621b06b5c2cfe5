/**
 * Wording of messages a user reads: rule-syntax hints for bare tool names, `plugins check`
 * problems without `Error: ` and with the path once, config key suggestions.
 */
import assert from "node:assert/strict";
import { parseRule, PolicyError } from "../core/policy/rules.ts";
import { compilePluginSource, PluginSourceError } from "../core/extensions/plugin_host/source.ts";
import { tidyMessage } from "../core/frontends/cli/plugins.ts";
import { closest } from "../core/util/text.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";

function ruleError(text: string): string {
  try {
    parseRule(text, "allow", "--allow flag");
  } catch (e) {
    assert.ok(e instanceof PolicyError);
    return e.message;
  }
  throw new Error(`${text} parsed`);
}

Deno.test("a bare tool name or glob as a rule suggests Tool(…)", () => {
  assert.match(ruleError("mcp__github__*"), /did you mean Tool\(mcp__github__\*\)\?$/);
  assert.match(
    ruleError("mcp__github__create_issue"),
    /did you mean Tool\(mcp__github__create_issue\)\?$/,
  );
  assert.match(ruleError("web_*"), /did you mean Tool\(web_\*\)\?$/);
  assert.match(ruleError("git*"), /did you mean Tool\(git\*\) \(tools\) or Execute\(git\*\)/);
  // Not tool-like: no guess.
  assert.doesNotMatch(ruleError("npm test"), /did you mean/);
  assert.doesNotMatch(ruleError("Execute(npm test"), /did you mean/);
  // The suggested rule parses.
  assert.equal(parseRule("Tool(mcp__github__*)", "allow", "test").kind, "tool");
});

Deno.test("config key suggestions: nearest known key within distance 2", () => {
  const keys = ["model", "provider", "permissions", "max_turns", "agent"];
  assert.equal(closest("modle", keys), "model");
  assert.equal(closest("max_turn", keys), "max_turns");
  assert.equal(closest("Agnet", keys), "agent");
  assert.equal(closest("zzzzzz", keys), undefined);
  assert.equal(closest("m", keys), undefined);
});

Deno.test("plugin problems: no 'Error: ' prefix; a TypeScript error names the path once", async () => {
  assert.equal(tidyMessage("Error: boom"), "boom");
  assert.equal(tidyMessage("plugin x.ts: Error: boom"), "plugin x.ts: boom");
  assert.equal(tidyMessage("TypeError: x"), "TypeError: x");
  await assert.rejects(
    compilePluginSource('export default {\n  name: "x" as ,\n};\n', "/tmp/p/broken2.ts"),
    (e: Error) => {
      assert.ok(e instanceof PluginSourceError);
      assert.match(e.message, /^\/tmp\/p\/broken2\.ts: cannot compile TypeScript: Unexpected/);
      assert.equal(e.message.split("broken2.ts").length, 2, e.message);
      return true;
    },
  );

  const env = await makeCoyoteEnv();
  const ws = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${ws}/boom.ts`,
      `import { definePlugin } from "@coyote/sdk";\nthrow new Error("boom");\n` +
        `export default definePlugin({ name: "boom", tools: [] });\n`,
    );
    await Deno.writeTextFile(`${ws}/broken2.ts`, 'export default {\n  name: "x" as ,\n};\n');
    const boom = await runCoyote(["plugins", "check", "boom.ts"], { cwd: ws, env: childEnv(env) });
    assert.equal(boom.code, 2, boom.stderr);
    assert.match(boom.stdout, /^ {2}problem: boom$/m);
    assert.doesNotMatch(boom.stdout + boom.stderr, /Error: boom/);
    const broken = await runCoyote(["plugins", "check", "broken2.ts"], {
      cwd: ws,
      env: childEnv(env),
    });
    assert.equal(broken.code, 2, broken.stderr);
    const problem = broken.stdout.split("\n").find((l) => l.includes("problem:"))!;
    assert.match(problem, /cannot compile TypeScript: Unexpected token/);
    assert.equal(problem.split("broken2.ts").length, 2, problem);
    assert.doesNotMatch(broken.stdout, /Error transforming/);
  } finally {
    await env.cleanup();
    await Deno.remove(ws, { recursive: true });
  }
});
