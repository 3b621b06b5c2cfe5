/**
 * The quick parser of the common runs (core/frontends/cli/flags.ts `quickParse`, issue 22) against
 * the `commander` program built from the same table: for each argv it explains, both give the
 * same prompt and options; what it does not explain (help, subcommands, bad flags) it leaves to
 * `commander`.
 */
import assert from "node:assert/strict";
import {
  commanderParse,
  joinAgentVariables,
  registeredCommands,
} from "../core/frontends/cli/args.ts";
import { COMMAND_NAMES, quickParse } from "../core/frontends/cli/flags.ts";

const EXPLAINED: string[][] = [
  [],
  ["fix the bug"],
  ["fix", "the", "bug"],
  ["--headless", "--output-format", "json", "--allow", "Execute(echo hello)", "run echo hello"],
  ["--acp-server"],
  ["--output-format=stream-json", "--headless", "hi"],
  ["-p", "explain", "more words"],
  ["-p", "--headless"],
  ["-p"],
  ["hi", "-m", "gpt-x", "--base-url", "http://x/v1", "--api-key", "k"],
  ["-C", "/tmp", "-f", "a.txt", "-f", "-", "--max-turns", "3", "go"],
  ["--deny", "Execute(rm *)", "--allow", "Read(*)", "--allow", "Write(x)", "go"],
  ["--no-sandbox", "--no-workspace-mcp", "--dangerously-skip-permissions", "go"],
  ["--plugin", "p.ts", "--add-dir", "d", "--skill", "s", "--verbose", "go"],
  ["-a", "oracle", "--agent-variable", "X", "1", "--agent-variable", "Y=2", "go"],
  ["--session", "s1", "--continue", "--trust-workspace", "go"],
  ["--list-sessions", "--all"],
  ["--", "--headless", "-m"],
  ["-", "go"],
  ["agent", "list"],
  ["go", "--headless"],
  ["--mode", "plan", "go"],
  ["--mode=accept-edits", "--headless", "go"],
];

const LEFT_TO_COMMANDER: string[][] = [
  ["--help"],
  ["-h"],
  ["-V", "x"],
  ["agents", "list"],
  ["--headless", "sessions", "list"],
  ["--", "agents", "list"],
  ["--bogus", "x"],
  ["-hm", "x"],
  ["--output-format", "yaml", "x"],
  ["--max-turns", "0", "x"],
  ["--max-turns", "-1", "x"],
  ["--mode", "yolo", "x"],
  ["-m", "", "x"],
  ["-m"],
  ["--headless=1", "x"],
  ["-mgpt", "x"],
];

Deno.test("quickParse gives commander's prompt and options for the argvs it explains", async () => {
  for (const raw of EXPLAINED) {
    const argv = joinAgentVariables(raw);
    const quick = quickParse(argv);
    if (!quick) throw new Error(`quickParse left ${JSON.stringify(raw)} to commander`);
    const full = await commanderParse(argv);
    assert.deepStrictEqual(quick, { prompt: full.prompt, opts: full.opts }, JSON.stringify(raw));
  }
});

Deno.test("quickParse leaves help, subcommands and bad flags to commander", () => {
  for (const argv of LEFT_TO_COMMANDER) {
    assert.deepStrictEqual(quickParse(argv), undefined, JSON.stringify(argv));
  }
});

Deno.test("COMMAND_NAMES are the subcommands the commander program registers", async () => {
  assert.deepStrictEqual([...COMMAND_NAMES].sort(), (await registeredCommands()).sort());
});
