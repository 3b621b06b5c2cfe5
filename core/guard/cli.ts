/**
 * STUB CONTRACT (owner: guard helper replaces the body, keeps the signature).
 * `coyote policy show`: prints the effective policy and the derived Deno flags via `out`.
 * @module
 */
import type { AppOptions } from "../app.ts";

export function policyCommand(_app: AppOptions, out: (text: string) => void): Promise<number> {
  out("policy show is not implemented yet");
  return Promise.resolve(1);
}
