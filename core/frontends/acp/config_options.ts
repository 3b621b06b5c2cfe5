/**
 * ACP session config options: `agent` (category `mode`) and `model` (category `model`),
 * both `select`s. `session/set_config_option` validates and applies one; the runtime checks
 * agent names (built-in and plugin agents).
 * @module
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { AppOptions } from "../../config/app_options.ts";
import type { AgentSession } from "../../session/runtime.ts";
import { errText } from "./peer.ts";

type Runtime = typeof import("../../session/runtime.ts");

/** The `configOptions` of a session (its workspace's agents). */
export function configOptions(
  _rt: Runtime,
  app: AppOptions,
  session: AgentSession,
): acp.SessionConfigOption[] {
  const agents = session.workspace.agents.list().map((a) => ({
    value: a.name,
    name: a.name,
    description: a.description,
  }));
  if (!agents.some((a) => a.value === session.agent)) {
    agents.push({ value: session.agent, name: session.agent, description: "" });
  }
  const models = [session.model, app.model, app.config?.model, app.config?.provider?.model]
    .filter((m): m is string => typeof m === "string" && m.length > 0);
  return [
    {
      id: "agent",
      name: "Agent",
      description: "The agent (instructions and tools) that answers prompts",
      category: "mode",
      type: "select",
      currentValue: session.agent,
      options: agents,
    },
    {
      id: "model",
      name: "Model",
      description: "The model used for the next turn",
      category: "model",
      type: "select",
      currentValue: session.model,
      options: [...new Set(models)].map((m) => ({ value: m, name: m })),
    },
  ];
}

/**
 * Applies one `session/set_config_option`; throws `-32602` for an unknown option or value.
 */
export function applyConfigOption(
  sdk: typeof import("@agentclientprotocol/sdk"),
  session: AgentSession,
  params: acp.SetSessionConfigOptionRequest,
): void {
  const value = (params as { value: unknown }).value;
  if (typeof value !== "string" || !value) {
    throw sdk.RequestError.invalidParams(
      { configId: params.configId },
      "value must be a non-empty string",
    );
  }
  if (params.configId === "model") {
    session.model = value;
  } else if (params.configId === "agent") {
    try {
      session.agent = value; // the runtime validates (built-in and plugin agents)
    } catch (e) {
      throw sdk.RequestError.invalidParams({ value }, errText(e));
    }
    if (session.agent !== value) {
      throw sdk.RequestError.invalidParams({ value }, `unknown agent "${value}"`);
    }
  } else {
    throw sdk.RequestError.invalidParams(
      { configId: params.configId },
      `unknown config option "${params.configId}"`,
    );
  }
}
