/**
 * Network access to a host (view (a)): `Net` rules match `host` or
 * `host:port` (rules.ts `hostMatch`); deny > ask > allow, and the default asks.
 * Under `--dangerously-skip-permissions` only deny rules apply. Used for the
 * `net` access, and by the command walk for URLs, git remotes and bash's
 * `/dev/tcp` redirections.
 * @module
 */
import { hostMatch, type Rule } from "./rules.ts";
import { type PolicyCore, rulesOf } from "./context.ts";
import type { GuardPart } from "./types.ts";
import { by } from "./verdict.ts";

export function netPart(core: PolicyCore, hostPort: string): GuardPart {
  let deny: Rule | undefined, ask: Rule | undefined, allow: Rule | undefined;
  for (const r of rulesOf(core, "net")) {
    if (!hostMatch(r.pattern, hostPort)) continue;
    if (r.decision === "deny") deny ??= r;
    else if (r.decision === "ask") ask ??= r;
    else allow ??= r;
  }
  const s = hostPort;
  if (deny) {
    return {
      decision: "deny",
      reason: `${by(deny)} denies network access to ${s}`,
      rule: deny.text,
      subject: s,
    };
  }
  if (core.dangerouslySkipPermissions) {
    return {
      decision: "allow",
      reason: `--dangerously-skip-permissions allows network access to ${s}`,
      rule: "default",
      subject: s,
    };
  }
  if (ask) {
    return {
      decision: "ask",
      reason: `${by(ask)} asks before network access to ${s}`,
      rule: ask.text,
      subject: s,
    };
  }
  if (allow) {
    return {
      decision: "allow",
      reason: `${by(allow)} allows network access to ${s}`,
      rule: allow.text,
      subject: s,
    };
  }
  return {
    decision: "ask",
    reason: `the default policy asks before network access (${s})`,
    rule: "default",
    subject: s,
  };
}
