/**
 * A minimal Coyote plugin: one tool, no permissions.
 * See docs/plugins.md for the tutorial that builds it.
 */
import { definePlugin, defineTool } from "@coyote/sdk";

const greet = defineTool({
  name: "hello_greet",
  description: "Greets someone by name.",
  input: {
    type: "object",
    properties: { name: { type: "string", description: "Who to greet" } },
    required: ["name"],
    additionalProperties: false,
  },
  readOnly: true,
  run(input, ctx) {
    ctx.log.info(`greeting ${input.name}`);
    return `Hello, ${input.name}!`;
  },
});

export default definePlugin({
  name: "hello",
  version: "1.0.0",
  description: "Says hello.",
  tools: [greet],
});
