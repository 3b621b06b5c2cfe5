/**
 * Prompt words that are a mistyped subcommand. `coyote [prompt...]` takes any words as the
 * request, so `coyote agent list` (for `agents list`) or `coyote session rm ID` would otherwise
 * start a paid model turn with "agent list" as the request. A slip is recognised narrowly: the
 * first word is a near miss of a command name (a missing or extra `s`, or one letter off for names
 * of 4+ letters), the second word is exactly one of that command's subcommands, and there are at
 * most four words. The request can still be sent as is with `-p "agent list"`, which is never
 * checked.
 * @module
 */

/** Subcommands that take a subcommand word, as registered in core/frontends/cli/args.ts. */
export const SUBCOMMANDS: Readonly<Record<string, readonly string[]>> = {
  plugins: ["list", "check"],
  mcp: ["list", "login", "logout"],
  agents: ["list", "show"],
  graph: ["check"],
  policy: ["show"],
  sessions: ["list", "rm"],
};

/** Levenshtein distance, capped: returns `max + 1` as soon as it is exceeded. */
function distance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}

/**
 * The command line the user probably meant (`coyote agents list`), or null when `words` (the
 * positional prompt words) do not look like a mistyped subcommand.
 */
export function mistypedCommand(words: readonly string[]): string | null {
  if (words.length < 2 || words.length > 4) return null;
  const first = words[0].toLowerCase();
  for (const [name, subs] of Object.entries(SUBCOMMANDS)) {
    if (first === name || !subs.includes(words[1])) continue;
    const near = first + "s" === name || first === name + "s" ||
      (name.length >= 4 && distance(first, name, 1) <= 1);
    if (near) return ["coyote", name, ...words.slice(1)].join(" ");
  }
  return null;
}
