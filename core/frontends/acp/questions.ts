/**
 * `user__*` questions (`HostServices.askUser`) to an ACP client.
 *
 * - A client that advertises `elicitation.form` (ACP unstable `elicitation/create`) gets every
 *   kind as a one-field form named `answer`: `confirm` → boolean, `select` → string enum,
 *   `input` → string, `checkbox` → array of enum strings.
 * - Otherwise everything goes through `session/request_permission` (ACP v1 stable):
 *   `confirm` → Yes/No; `select` → one option per choice; `checkbox` → repeated single picks
 *   of the remaining choices plus "Done"; `input` → "I'll answer in my next message" / "Skip"
 *   (the model is told to ask in its reply and end the turn: ACP v1 has no free-text request).
 * - Every question carries `_meta.coyote {question: action, classification}`;
 *   `classification` is `"secret"` for secret-shaped prompts (device codes, logins,
 *   passwords, tokens, one-time codes; {@link isSecretShaped}) so a client can render them
 *   without a free-text channel, else `"plain"`.
 * - Escalation timeout (seed 004, the unattended-mode design): an unanswered question is
 *   withdrawn (`$/cancel_request`) after {@link questionTimeoutMs} (300 s,
 *   `COYOTE_QUESTION_TIMEOUT_MS` overrides) and the tool answers the headless
 *   `{"needs_human": true, …}` JSON (plugins/user/mod.ts does that for any thrown error).
 * @module
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { UserQuestion } from "../../../sdk/mod.ts";
import { type AcpPeer, announceChildCall, scopeMeta, type SessionHolder } from "./peer.ts";
import type { CallScope } from "../../protocol/types.ts";

/** Default escalation timeout of a question, ms (seed 004: 300 s). */
export const QUESTION_TIMEOUT_MS = 300_000;

/** The escalation timeout in ms: `COYOTE_QUESTION_TIMEOUT_MS` when set to a positive number. */
export function questionTimeoutMs(): number {
  const v = Number(Deno.env.get("COYOTE_QUESTION_TIMEOUT_MS"));
  return Number.isFinite(v) && v > 0 ? v : QUESTION_TIMEOUT_MS;
}

const SECRET_SHAPED =
  /\b(device[ -]?code|user[ -]?code|one[ -]?time|otp|2fa|mfa|verification code|auth(?:entication|orization)? code|pass(?:word|phrase|code)|pin\b|token|api[ -_]?key|secret|credential|log ?in|sign ?in|username)/i;

/** True for prompts that ask for (or show) a credential: device codes, logins, passwords, tokens. */
export function isSecretShaped(q: Pick<UserQuestion, "question">): boolean {
  return SECRET_SHAPED.test(q.question);
}

/** `_meta` attached to every question request. */
export function questionMeta(q: UserQuestion): Record<string, unknown> {
  return {
    coyote: { question: q.action, classification: isSecretShaped(q) ? "secret" : "plain" },
  };
}

/** What an `input` question answers when the client can only offer choices. */
export const ANSWER_IN_CHAT =
  "The user will type the answer in their next message: ask the question in your reply and end this turn.";

class QuestionTimeout extends Error {}

/**
 * Asks one question; resolves with the answer (`boolean` for confirm, `string[]` for checkbox,
 * else `string`). Throws when the user dismisses it, on timeout, or when `signal` aborts.
 */
export async function askUser(
  peer: AcpPeer,
  holder: SessionHolder,
  q: UserQuestion,
  signal: AbortSignal,
  scope?: CallScope,
): Promise<string | string[] | boolean> {
  const live = holder.get();
  if (!live) throw new Error("session is not open");
  const ms = questionTimeoutMs();
  const ac = new AbortController();
  let timedOut = false;
  const onAbort = () => ac.abort();
  signal.addEventListener("abort", onAbort, { once: true });
  const timer = setTimeout(() => {
    timedOut = true;
    ac.abort();
  }, ms);
  // A sub-agent's question names its call: announced first (finished by ./turn.ts).
  const toolCallId = scope
    ? await announceChildCall(peer, live, scope, {
      toolCallId: scope.toolCallId,
      title: scope.toolName,
      kind: "other",
    })
    : "question";
  const ctx: Ask = {
    peer,
    sessionId: live.session.id,
    toolCallId,
    // A sub-agent's question names the sub-agent.
    meta: scope && scope.depth > 0
      ? { coyote: { ...questionMeta(q).coyote as object, ...scopeMeta(scope) } }
      : questionMeta(q),
    title: (t: string) => scope && scope.depth > 0 ? `${scope.agentId} asks: ${t}` : t,
    signal: ac.signal,
  };
  try {
    const caps = peer.clientCaps as { elicitation?: { form?: unknown } | null };
    return caps.elicitation?.form ? await viaElicitation(ctx, q) : await viaPermission(ctx, q);
  } catch (e) {
    if (timedOut && !signal.aborted) {
      throw new QuestionTimeout(`no answer within ${Math.round(ms / 1000)} s`);
    }
    throw e;
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", onAbort);
  }
}

interface Ask {
  peer: AcpPeer;
  sessionId: string;
  toolCallId: string;
  meta: Record<string, unknown>;
  signal: AbortSignal;
  /** The title shown for a question text (names a sub-agent). */
  title: (text: string) => string;
}

/** `elicitation/create` (ACP unstable, form mode) with one field `answer`. */
async function viaElicitation(a: Ask, q: UserQuestion): Promise<string | string[] | boolean> {
  const opts = q.options ?? [];
  let field: Record<string, unknown>;
  switch (q.action) {
    case "confirm":
      field = { type: "boolean", title: q.question };
      break;
    case "select":
      field = { type: "string", title: q.question, enum: opts };
      break;
    case "checkbox":
      field = { type: "array", title: q.question, items: { type: "string", enum: opts } };
      break;
    default:
      field = { type: "string", title: q.question };
  }
  if (q.default !== undefined) field.default = q.default;
  const client = a.peer.client;
  const request = (client.request as unknown as (
    method: string,
    params: unknown,
    opts: unknown,
  ) => Promise<{ action: string; content?: Record<string, unknown> | null }>).bind(client);
  const res = await request("elicitation/create", {
    mode: "form",
    sessionId: a.sessionId,
    toolCallId: a.toolCallId,
    message: a.title(q.question),
    requestedSchema: { type: "object", properties: { answer: field }, required: ["answer"] },
    _meta: a.meta,
  }, { cancellationSignal: a.signal, stopWaitingOnCancel: true });
  if (res.action !== "accept") throw new Error(`the user chose "${res.action}"`);
  const answer = res.content?.answer;
  if (q.action === "confirm") return answer === true || answer === "true" || answer === "yes";
  if (q.action === "checkbox") {
    return Array.isArray(answer) ? answer.map(String) : answer == null ? [] : [String(answer)];
  }
  if (answer === undefined || answer === null) {
    throw new Error("the form came back without an answer");
  }
  return String(answer);
}

/** One `session/request_permission` round; returns the picked option id. */
async function pick(a: Ask, title: string, options: acp.PermissionOption[]): Promise<string> {
  const res = await a.peer.client.request("session/request_permission", {
    sessionId: a.sessionId,
    toolCall: { toolCallId: a.toolCallId, title: a.title(title), _meta: a.meta },
    options,
    _meta: a.meta,
  }, { cancellationSignal: a.signal, stopWaitingOnCancel: true });
  if (res.outcome.outcome !== "selected") throw new Error("the user dismissed the question");
  return res.outcome.optionId;
}

async function viaPermission(a: Ask, q: UserQuestion): Promise<string | string[] | boolean> {
  const choices = q.options ?? [];
  switch (q.action) {
    case "confirm": {
      const id = await pick(a, q.question, [
        { optionId: "yes", name: "Yes", kind: "allow_once" },
        { optionId: "no", name: "No", kind: "reject_once" },
      ]);
      return id === "yes";
    }
    case "select": {
      if (!choices.length) throw new Error("a select question needs options");
      const id = await pick(
        a,
        q.question,
        choices.map((o, i) => ({ optionId: `option-${i}`, name: o, kind: "allow_once" })),
      );
      return choices[Number(id.replace("option-", ""))] ?? id;
    }
    case "checkbox": {
      // Multi-select as repeated single picks: each round offers the remaining choices and Done.
      const picked: string[] = [];
      for (let round = 0; round < choices.length; round++) {
        const rest = choices.map((o, i) => ({ o, i })).filter(({ o }) => !picked.includes(o));
        if (!rest.length) break;
        const title = picked.length
          ? `${q.question} (selected so far: ${picked.join(", ")}; pick another or Done)`
          : `${q.question} (pick one at a time, then Done)`;
        const id = await pick(a, title, [
          ...rest.map(({ o, i }) => ({
            optionId: `option-${i}`,
            name: o,
            kind: "allow_once" as const,
          })),
          { optionId: "done", name: "Done", kind: "reject_once" },
        ]);
        if (id === "done") break;
        const c = choices[Number(id.replace("option-", ""))];
        if (c !== undefined) picked.push(c);
      }
      return picked;
    }
    default: {
      const id = await pick(a, q.question, [
        { optionId: "answer_in_chat", name: "I'll answer in my next message", kind: "allow_once" },
        { optionId: "skip", name: "Skip", kind: "reject_once" },
      ]);
      if (id !== "answer_in_chat") throw new Error("the user skipped the question");
      return ANSWER_IN_CHAT;
    }
  }
}
