/**
 * Snapshot of every first-party tool schema the model sees: the OpenAI `tools` array (name,
 * description, JSON Schema parameters) exactly as `ToolRegistry.openAITools()` builds it, for the
 * tools of `plugins/mod.ts` (`corePlugins`), the supervisor's `agent__*` tools, the skill
 * tools, the MCP resource tools (`mcp__list_resources`, `mcp__read_resource`) and `web_search`, each group with the size of its array in chars (`total_chars`, the first request's
 * token budget; `ToolRegistry.openAIToolsChars()`). Compared as text with
 * `tests/snapshots/tool_schemas.json`, keys in the order they are sent: any change to a schema,
 * a description or the order shows as a diff there. After an intended change, regenerate it with
 * `UPDATE_SNAPSHOTS=1 deno test -A tests/tool_schemas_test.ts` and review the diff.
 * @module
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { corePlugins } from "../plugins/mod.ts";
import { ToolRegistry } from "../core/tools/registry.ts";
import { supervisorTools } from "../core/supervisor/tools.ts";
import { createSkillState } from "../core/extensions/skills/tools.ts";
import { mcpResourceTools } from "../core/extensions/mcp/resource_tools.ts";
import { webSearchTool } from "../plugins/web/search.ts";
import type { AnyTool } from "../core/protocol/types.ts";

const SNAPSHOT = fileURLToPath(new URL("./snapshots/tool_schemas.json", import.meta.url));

/** One group of tools as the model sees it, through the registry's real path. */
function group(tools: AnyTool[]) {
  const registry = new ToolRegistry(tools);
  assert.deepEqual(registry.warnings, []);
  return { total_chars: registry.openAIToolsChars(), tools: registry.openAITools() };
}

function snapshotText(): string {
  const skills = createSkillState(
    [{ name: "example", description: "an example", content: "", source: "builtin", path: "x" }],
    { onChange: () => {} },
  );
  const snapshot = {
    plugins: group(corePlugins.flatMap((p) => p.tools ?? [])),
    supervisor: group(supervisorTools(() => {
      throw new Error("not called");
    })),
    skills: group(skills.tools),
    // Offered while a connected MCP server lists resources.
    mcp_resources: group(mcpResourceTools(() => null)),
    // Offered when config.yaml names a backend (`web_search:`).
    web_search: group([webSearchTool({ backend: "searxng", url: "http://localhost:8888" })]),
  };
  return JSON.stringify(snapshot, null, 2) + "\n";
}

Deno.test("tool schemas: the OpenAI tools array of every first-party tool matches tests/snapshots/tool_schemas.json", async () => {
  const actual = snapshotText();
  if (Deno.env.get("UPDATE_SNAPSHOTS") === "1") {
    await Deno.writeTextFile(SNAPSHOT, actual);
    return;
  }
  let expected: string;
  try {
    expected = await Deno.readTextFile(SNAPSHOT);
  } catch {
    expected = "";
  }
  assert.equal(
    actual,
    expected,
    "the tool schemas the model sees changed; if intended, regenerate the snapshot with " +
      "`UPDATE_SNAPSHOTS=1 deno test -A tests/tool_schemas_test.ts` and review its diff",
  );
});
