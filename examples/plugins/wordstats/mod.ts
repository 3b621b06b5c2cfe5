/**
 * A plugin in two files (docs/plugins.md, "Tutorial: a plugin in several
 * files"): `mod.ts` defines the tool, `stats.ts` does the work. Coyote bundles
 * the folder when it loads it.
 * @module
 */
import { definePlugin, defineTool } from "@coyote/sdk";
import { textStats } from "./stats.ts";

const count = defineTool({
  name: "wordstats_count",
  description: "Counts words, lines and characters of a text and lists its most frequent words.",
  input: {
    type: "object",
    properties: {
      text: { type: "string", description: "The text to count" },
      top: { type: "integer", minimum: 1, maximum: 20, description: "How many top words" },
    },
    required: ["text"],
    additionalProperties: false,
  },
  readOnly: true,
  run(input: { text: string; top?: number }) {
    const s = textStats(input.text, input.top);
    const top = s.top.map((t) => `${t.word} (${t.count})`).join(", ");
    return `${s.words} words, ${s.lines} lines, ${s.characters} characters; top: ${top || "none"}`;
  },
});

export default definePlugin({
  name: "wordstats",
  version: "1.0.0",
  description: "Text statistics, in two files.",
  tools: [count],
});
