/**
 * What Coyote knows about a model: the `models:` capability table of `config.yaml`, keyed by the
 * model name exactly as it is sent to the server.
 *
 * ```yaml
 * models:
 *   qwen3-coder:
 *     context_window: 32768       # tokens; sizes tool results (core/engine/context.ts) and usage_update
 *     images: false               # accepts image input (OpenAI image_url parts)
 *     max_output_tokens: 8192     # reserved for the answer out of the window (not sent)
 *     price: { input: 0.3, output: 1.2, cached_input: 0.03 }  # USD per million tokens
 *     text_tool_calls: false      # do not parse calls it writes as text (over provider.text_tool_calls)
 * ```
 *
 * A model missing from the table gets {@link DEFAULT_CONTEXT_WINDOW} and unknown image support
 * (`images: undefined`): images are then sent and the server decides, but ACP does not advertise
 * image input. `price` and `context_window` are the inputs a cost display and compaction use
 * ({@link costUsd}).
 * @module
 */
import type { CoyoteConfig, ModelSpec } from "./config.ts";

/** Window assumed when the model's is not configured (`models:` in config.yaml), in tokens. */
export const DEFAULT_CONTEXT_WINDOW = 128_000;

/** USD per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
  /** Price of cached prompt tokens (OpenAI `prompt_tokens_details.cached_tokens`). */
  cached_input?: number;
}

/** The resolved capabilities of one model. */
export interface ModelInfo {
  name: string;
  /** True when the model has an entry in `models:`. */
  known: boolean;
  /** Context window in tokens (configured, else {@link DEFAULT_CONTEXT_WINDOW}). */
  contextWindow: number;
  /** Image input: true/false as configured, undefined when not configured. */
  images?: boolean;
  /** Tokens reserved for the answer, if configured. */
  maxOutputTokens?: number;
  price?: ModelPrice;
}

/** The capabilities of `name` from `config.models` (see the module doc for defaults). */
export function modelInfo(config: CoyoteConfig | undefined, name: string): ModelInfo {
  const spec: ModelSpec | undefined = config?.models?.[name];
  return {
    name,
    known: !!spec,
    contextWindow: spec?.context_window ?? DEFAULT_CONTEXT_WINDOW,
    ...(spec?.images !== undefined ? { images: spec.images } : {}),
    ...(spec?.max_output_tokens ? { maxOutputTokens: spec.max_output_tokens } : {}),
    ...(spec?.price ? { price: { ...spec.price } } : {}),
  };
}

/**
 * Cost of a usage in USD for a price table; `cachedTokens` of the prompt are charged at
 * `cached_input` when set. Undefined without a price.
 */
export function costUsd(
  usage: { prompt_tokens: number; completion_tokens: number },
  price: ModelPrice | undefined,
  cachedTokens = 0,
): number | undefined {
  if (!price) return undefined;
  const cached = price.cached_input !== undefined ? Math.min(cachedTokens, usage.prompt_tokens) : 0;
  const fresh = usage.prompt_tokens - cached;
  return (fresh * price.input + cached * (price.cached_input ?? 0) +
    usage.completion_tokens * price.output) / 1_000_000;
}

/**
 * The model a session started now would use, without resolving the provider: flag > env
 * `COYOTE_MODEL` > config `model` > `provider.model` (core/config/config.ts precedence). Agents may
 * still pick another model per session.
 */
export function configuredModel(
  flagModel: string | undefined,
  config: CoyoteConfig | undefined,
  env: { get(k: string): string | undefined } = Deno.env,
): string | undefined {
  const pick = (v: string | undefined) => (v && v.trim() ? v.trim() : undefined);
  return pick(flagModel) ?? pick(env.get("COYOTE_MODEL")) ?? pick(config?.model) ??
    pick(config?.provider?.model);
}
