/**
 * Bubbling up: a sub-agent's guard `ask` and `user__*` questions go to the root frontend
 * (terminal prompt, ACP permission request naming the sub-agent; headless denies at once),
 * and after the agent's `escalation_timeout` (default 300 s) the sub-agent is told to proceed
 * on its own judgement: the permission resolves `timed_out` (the call is not run, the model
 * is told so), a question fails with that advice (the `user__*` tools then answer the
 * `needs_human` JSON).
 * @module
 */
import type { HostServices } from "../../sdk/mod.ts";
import type {
  CallScope,
  HostFactory,
  PermissionOutcome,
  PermissionResolver,
} from "../protocol/types.ts";

/** Races `p` against `ms`; `onTimeout` aborts the request behind `p`. */
function withTimeout<T>(
  run: (signal: AbortSignal) => Promise<T>,
  outer: AbortSignal,
  ms: number,
): Promise<{ value: T } | { timedOut: true }> {
  const ac = new AbortController();
  const onAbort = () => ac.abort(outer.reason);
  if (outer.aborted) ac.abort(outer.reason);
  else outer.addEventListener("abort", onAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<{ timedOut: true }>((resolve) => {
    timer = setTimeout(() => {
      resolve({ timedOut: true });
      ac.abort(new Error("escalation timeout"));
    }, ms);
  });
  return Promise.race([run(ac.signal).then((value) => ({ value })), timeout]).finally(() => {
    clearTimeout(timer);
    outer.removeEventListener("abort", onAbort);
  });
}

/** The root's permission resolver as a sub-agent uses it (see the module doc). */
export function escalatingPermission(root: PermissionResolver, ms: number): PermissionResolver {
  return async (req, signal): Promise<PermissionOutcome> => {
    const r = await withTimeout((s) => root(req, s), signal, ms);
    if ("timedOut" in r) return signal.aborted ? "cancelled" : "timed_out";
    return r.value;
  };
}

/** The root's host services as a sub-agent uses them: questions time out (see the module doc). */
export function escalatingHost(
  root: HostServices | HostFactory | undefined,
  ms: number,
): HostFactory | undefined {
  if (!root) return undefined;
  return (scope: CallScope) => {
    const host = typeof root === "function" ? root(scope) : root;
    if (!host.askUser) return host;
    const ask = host.askUser.bind(host);
    return {
      ...host,
      async askUser(q, signal) {
        const r = await withTimeout((s) => ask(q, s), signal, ms);
        if ("timedOut" in r) {
          throw new Error(
            `nobody answered within ${
              ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`
            }; proceed on your own judgement and say in your answer what you assumed`,
          );
        }
        return r.value;
      },
    };
  };
}
