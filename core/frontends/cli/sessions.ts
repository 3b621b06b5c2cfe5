/**
 * `coyote sessions list|rm` and `--list-sessions`: the stored sessions of this directory (or,
 * with `--all`, of every one) as a table or JSON, and their removal with their sub-agents'
 * transcripts (core/transcript/store.ts).
 * @module
 */
import type { AppOptions } from "../../config/app_options.ts";
import { safeCell } from "../../util/terminal_safe.ts";
import { stdout, usageExit } from "./output.ts";

/**
 * The `--list-sessions` / `sessions list` table: short unique id, local time, name, (with
 * `--all`) directory, and the first prompt as title. Empty: a note on stderr.
 */
function printSessions(
  list: {
    sessionId: string;
    updatedAt: string;
    name?: string;
    cwd: string;
    title: string;
    parentId?: string;
    agentId?: string;
  }[],
  all: boolean,
  short: Map<string, string>,
  localTime: (iso: string) => string,
) {
  const enc = new TextEncoder();
  if (!list.length) {
    Deno.stderr.writeSync(
      enc.encode(
        all
          ? "no stored sessions\n"
          : "no stored sessions for this directory (--all lists every one)\n",
      ),
    );
    return;
  }
  // Sub-agent transcripts are listed under their parent session, indented by depth; the NAME
  // column shows their agent id.
  const children = new Map<string, typeof list>();
  const ids = new Set(list.map((s) => s.sessionId));
  for (const s of list) {
    if (s.parentId && ids.has(s.parentId)) {
      children.set(s.parentId, [...(children.get(s.parentId) ?? []), s]);
    }
  }
  const lines = [all ? "ID\tUPDATED\tNAME\tCWD\tTITLE" : "ID\tUPDATED\tNAME\tTITLE"];
  const add = (s: (typeof list)[number], depth: number) => {
    const short1 = short.get(s.sessionId) ?? s.sessionId;
    const id = depth ? `${"  ".repeat(depth - 1)}└ ${short1}` : short1;
    const name = s.agentId ? `${s.name ?? ""}${s.name ? " " : ""}(${s.agentId})` : s.name ?? "-";
    // Titles are the first words of a prompt (or a name) anyone could have chosen: escaped.
    const cols = [id, localTime(s.updatedAt), name, ...(all ? [s.cwd] : []), s.title];
    lines.push(cols.map((c) => safeCell(c ?? "")).join("\t"));
    for (const c of children.get(s.sessionId) ?? []) add(c, depth + 1);
  };
  for (const s of list) if (!s.parentId || !ids.has(s.parentId)) add(s, 0);
  stdout(lines.join("\n") + "\n");
}

/** `--list-sessions` and `coyote sessions list|rm`. Returns the exit code. */
export async function sessionsCommand(
  app: AppOptions,
  sub: "list" | "rm",
  args: string[],
  json: boolean,
): Promise<number> {
  const s = await import("../../transcript/store.ts");
  if (sub === "list") {
    const all = args.includes("--all");
    const { listSessions } = await import("../../session/runtime.ts");
    const list = await listSessions(app, all ? {} : { cwd: app.cwd });
    if (json) stdout(JSON.stringify(list) + "\n");
    else {
      const short = s.shortIds((await s.listStoredSessions(app.dataDir)).map((x) => x.id));
      printSessions(list, all, short, s.localTime);
    }
    return 0;
  }
  const stored = await s.listStoredSessions(app.dataDir);
  let code = 0;
  for (const ref of args) {
    let r: { id: string } | { name: string };
    try {
      r = s.resolveSessionRef(stored, ref, "sessions rm");
    } catch (e) {
      code = await usageExit((e as Error).message, false);
      continue;
    }
    if (!("id" in r) || !(await s.removeSession(app.dataDir, r.id))) {
      code = await usageExit(`no stored session matches ${ref}`, false);
      continue;
    }
    // Its sub-agents' transcripts go with it (and theirs, recursively).
    const gone = new Set([r.id]);
    let children = 0;
    for (let grew = true; grew;) {
      grew = false;
      for (const c of stored) {
        if (c.parent && gone.has(c.parent) && !gone.has(c.id)) {
          gone.add(c.id);
          grew = true;
          if (await s.removeSession(app.dataDir, c.id)) children++;
        }
      }
    }
    stdout(
      `removed session ${r.id}${children ? ` and ${children} sub-agent transcript(s)` : ""}\n`,
    );
  }
  return code;
}
