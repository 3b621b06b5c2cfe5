/**
 * Custom slash commands for the frontends (REPL, ACP, headless): a session's commands as
 * {@link SlashCommand}s of the shared list, and `/name args` turned into the turn it runs (the
 * expanded prompt, its `model` and `allowed-tools` as {@link TurnOverrides}). Loading and
 * expansion are core/extensions/commands/load.ts; a file's problems are reported once per
 * process and workspace, through the caller's `log`.
 * @module
 */
import type { AppOptions } from "../../config/app_options.ts";
import type { AgentSession, TurnOverrides } from "../../session/types.ts";
import {
  type CommandsLoad,
  type CustomCommand,
  expandCommand,
  loadCustomCommands,
  toolAllowed,
  toolPatterns,
} from "../../extensions/commands/load.ts";
import { BUILTIN_COMMANDS, type SlashCommand } from "../slash_commands.ts";

const loaded = new Map<string, Promise<CommandsLoad>>();

/**
 * The custom commands of `session`'s workspace, read once per session (a file added or changed
 * counts from the next session: `/clear`, `/resume`, a new ACP session); errors and warnings go to
 * `log` the first time.
 */
export function customCommands(
  app: Pick<AppOptions, "configDir">,
  session: Pick<AgentSession, "cwd" | "workspace" | "id">,
  log: (line: string) => void = () => {},
): Promise<CustomCommand[]> {
  const trusted = session.workspace.trust.trusted;
  const key = `${app.configDir}\0${session.cwd}\0${trusted}\0${session.id}`;
  let p = loaded.get(key);
  if (!p) {
    p = loadCustomCommands({
      configDir: app.configDir,
      cwd: session.cwd,
      trusted,
      reserved: BUILTIN_COMMANDS.map((c) => c.name),
    });
    loaded.set(key, p);
    void p.then((r) => {
      for (const e of r.errors) log(`coyote: error: custom command ${e}`);
      for (const w of r.warnings) log(`coyote: warning: custom command ${w}`);
    });
  }
  return p.then((r) => r.commands);
}

/** Forgets the cached commands (a test, or a later `/trust`). */
export function forgetCustomCommands(): void {
  loaded.clear();
}

/** A custom command as an entry of the shared list. */
export function asSlashCommand(c: CustomCommand): SlashCommand {
  return {
    name: c.name,
    description: c.description,
    ...(c.hint ? { hint: c.hint } : {}),
    source: { file: c.path },
  };
}

/**
 * The custom command `name` names: its full name, else (when exactly one command has it) the
 * last segment of a namespaced one (`/component` for `/frontend:component`, as Claude Code
 * now names them).
 */
export function findCustom(list: CustomCommand[], name: string): CustomCommand | undefined {
  const exact = list.find((c) => c.name === name);
  if (exact) return exact;
  const leaf = list.filter((c) => c.name.endsWith(`:${name}`));
  return leaf.length === 1 ? leaf[0] : undefined;
}

/** The turn `/name args` runs. */
export interface CustomTurn {
  prompt: string;
  overrides: TurnOverrides;
  /** For the user: `allowed-tools` entries no tool of the session matches. */
  notes: string[];
}

/** Expands `cmd` with `args` for `session` (see core/extensions/commands/load.ts). */
export function customTurn(
  cmd: CustomCommand,
  args: string,
  session: Pick<AgentSession, "toolNames">,
): CustomTurn {
  const overrides: TurnOverrides = {};
  const notes: string[] = [];
  if (cmd.model) overrides.model = cmd.model;
  if (cmd.allowedTools) {
    const patterns = toolPatterns(cmd.allowedTools);
    const names = session.toolNames();
    for (const entry of cmd.allowedTools) {
      const mine = toolPatterns([entry]);
      if (!names.some((n) => toolAllowed(n, mine))) {
        notes.push(
          `/${cmd.name}: allowed-tools "${entry}" matches no tool of this agent (${cmd.path})`,
        );
      }
    }
    overrides.tools = (n) => toolAllowed(n, patterns);
  }
  return { prompt: expandCommand(cmd, args), overrides, notes };
}

/**
 * A one-shot prompt that is exactly `/name args` of a custom command, `/init` or `/review`
 * (`coyote --headless "/fix-issue 42"`): the turn it runs; null for any other prompt (it goes
 * to the model as it is). The commands' problems go to `log`.
 */
export async function promptCommand(
  app: Pick<AppOptions, "configDir">,
  session: AgentSession,
  text: string,
  log: (line: string) => void,
): Promise<CustomTurn | null> {
  const { parseSlashCommand } = await import("../slash_commands.ts");
  const cmd = parseSlashCommand(text);
  if (!cmd) return null;
  if (cmd.name === "init" || cmd.name === "review") {
    const P = await import("./prompts.ts");
    const prompt = cmd.name === "init" ? P.initPrompt(cmd.args) : P.reviewPrompt(session, cmd.args);
    return { prompt, overrides: {}, notes: [] };
  }
  const list = await customCommands(app, session, log);
  const found = findCustom(list, cmd.name);
  if (found) return customTurn(found, cmd.args, session);
  // Not a command: the text goes to the model as typed (`/tmp is full, why?`), but a near miss
  // of a command's name is said on stderr.
  const { closest } = await import("../../util/text.ts");
  const near = closest(cmd.name, [
    ...BUILTIN_COMMANDS.map((c) => c.name),
    ...list.map((c) => c.name),
  ]);
  if (near) {
    log(
      `coyote: note: /${cmd.name} is no command (did you mean /${near}?); sent to the model as text`,
    );
  }
  return null;
}
