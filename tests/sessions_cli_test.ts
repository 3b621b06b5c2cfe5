/**
 * Sessions for people (issue 9 §3, issue 10): the id printed at the end of a text run, typo'd
 * ids refused with near matches, unique prefixes, `--list-sessions` per directory (`--all`) in
 * local time with the first prompt as title, `coyote sessions rm`, and the note when a session
 * is continued from another directory. Real subprocesses of main.ts, scripted model server.
 */
import assert from "node:assert/strict";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";
import { startModelServer } from "./support/model_server.ts";
import { resolveSessionRef, shortIds } from "../core/transcript/store.ts";
import type { StoredSessionInfo } from "../core/transcript/types.ts";

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

/** Replaces the character at `i` with a different hex digit. */
function typo(id: string, i: number): string {
  return id.slice(0, i) + (id[i] === "a" ? "b" : "a") + id.slice(i + 1);
}

Deno.test("sessions: the id is printed at the end (stderr); a typo'd id is refused with the near match; prefixes continue", async () => {
  const ms = await startModelServer({
    script: [{ text: "one" }, { text: "two" }, { text: "three" }],
  });
  const ce = await makeCoyoteEnv();
  const cwd = await Deno.realPath(await Deno.makeTempDir());
  try {
    const env = childEnv(ce, { baseURL: ms.baseURL });
    const r1 = await runCoyote(["remember PAPAYA"], { cwd, env });
    assert.equal(r1.code, 0, r1.stderr);
    assert.equal(r1.stdout, "one\n", "stdout carries only the answer");
    const m = r1.stderr.match(
      new RegExp(`coyote: session (${UUID.source}) \\(continue with --session ([0-9a-f]{8})\\)`),
    );
    assert.ok(m, r1.stderr);
    const id = m[1];
    assert.equal(m[2], id.slice(0, 8));

    const bad = typo(id, 3);
    const t = await runCoyote(["--session", bad, "go on"], { cwd, env });
    assert.equal(t.code, 2);
    assert.match(
      t.stderr,
      new RegExp(`no stored session has the id ${bad}; nearest: ${id} \\(remember PAPAYA\\)`),
    );
    assert.equal(
      [...Deno.readDirSync(`${ce.dataDir}/sessions`)].length,
      1,
      "no session was started",
    );
    assert.equal(ms.requests.length, 1);

    const r2 = await runCoyote(["--session", id.slice(0, 8), "what was the word?"], { cwd, env });
    assert.equal(r2.code, 0, r2.stderr);
    assert.match(r2.stderr, new RegExp(`coyote: session ${id} `));
    // deno-lint-ignore no-explicit-any
    const msgs = (ms.requests[1].body as any).messages.map((x: any) => x.content);
    assert.ok(msgs.includes("remember PAPAYA"), "continued the same conversation");
    // A name that is not id-shaped still starts a named session.
    const named = await runCoyote(["--session", "my-work", "start"], { cwd, env });
    assert.equal(named.code, 0, named.stderr);
    assert.equal([...Deno.readDirSync(`${ce.dataDir}/sessions`)].length, 2);
  } finally {
    await ms.close();
    await ce.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("sessions: --list-sessions shows this directory's sessions in local time with the first prompt; --all every directory; sessions rm", async () => {
  const ms = await startModelServer({ script: [{ text: "a" }, { text: "b" }, { text: "c" }] });
  const ce = await makeCoyoteEnv();
  const here = await Deno.realPath(await Deno.makeTempDir());
  const there = await Deno.realPath(await Deno.makeTempDir());
  try {
    // UTC+5 without daylight saving, so the expected local time is computed exactly.
    const env = childEnv(ce, { baseURL: ms.baseURL, extra: { TZ: "Etc/GMT-5" } });
    const json = async (args: string[], cwd: string) =>
      JSON.parse((await runCoyote(["--output-format", "json", ...args], { cwd, env })).stdout);
    const idHere = (await json(["--headless", "fix the  bug\nin parser.ts"], here)).session_id;
    const idThere = (await json(["--headless", "write docs"], there)).session_id;

    const list = await runCoyote(["--list-sessions"], { cwd: here, env });
    assert.equal(list.code, 0, list.stderr);
    const rows = list.stdout.trim().split("\n");
    assert.equal(rows[0], "ID\tUPDATED\tNAME\tTITLE");
    assert.equal(rows.length, 2, list.stdout);
    const [sid, when, name, title] = rows[1].split("\t");
    assert.equal(sid, idHere.slice(0, 8));
    assert.equal(name, "-");
    assert.equal(title, "fix the bug in parser.ts", "first prompt, one line");
    const mtime = Deno.statSync(`${ce.dataDir}/sessions/${idHere}.jsonl`).mtime!;
    const local = new Date(mtime.getTime() + 5 * 3600_000).toISOString();
    assert.equal(when, `${local.slice(0, 10)} ${local.slice(11, 16)}`, "local time (TZ)");

    const all = await runCoyote(["--list-sessions", "--all"], { cwd: here, env });
    const allRows = all.stdout.trim().split("\n");
    assert.equal(allRows[0], "ID\tUPDATED\tNAME\tCWD\tTITLE");
    assert.equal(allRows.length, 3);
    assert.ok(allRows.some((r) => r.startsWith(idThere.slice(0, 8)) && r.includes(`\t${there}\t`)));
    const js = await json(["--list-sessions"], there);
    assert.deepEqual(js.map((s: { sessionId: string }) => s.sessionId), [idThere]);
    assert.equal((await json(["sessions", "list", "--all", "--json"], here)).length, 2);

    // Continuing from another directory says so.
    const moved = await runCoyote(["--headless", "--session", idThere, "more"], { cwd: here, env });
    assert.equal(moved.code, 0, moved.stderr);
    assert.match(
      moved.stderr,
      new RegExp(`session ${idThere} was started in ${there}; continuing it in ${here}`),
    );

    // A sub-agent's transcript is listed under its parent and goes with it.
    await Deno.writeTextFile(
      `${ce.dataDir}/sessions/child-1.jsonl`,
      JSON.stringify({
        type: "session",
        id: "child-1",
        cwd: here,
        created: new Date().toISOString(),
        model: "scripted",
        agent: "explore",
        parent: idHere,
      }) + "\n",
    );
    const withChild = await runCoyote(["--list-sessions"], { cwd: here, env });
    const rows2 = withChild.stdout.trim().split("\n");
    const at = rows2.findIndex((r) => r.startsWith(idHere.slice(0, 8)));
    assert.match(rows2[at + 1], /^└ child-1\t/, "listed under its parent");
    assert.ok(
      (await json(["--list-sessions"], here)).some((x: { sessionId: string }) =>
        x.sessionId === "child-1"
      ),
    );
    const rm = await runCoyote(["sessions", "rm", idHere.slice(0, 8)], { cwd: there, env });
    assert.equal(rm.code, 0, rm.stderr);
    assert.equal(rm.stdout.trim(), `removed session ${idHere} and 1 sub-agent transcript(s)`);
    assert.throws(() => Deno.statSync(`${ce.dataDir}/sessions/child-1.jsonl`));
    assert.throws(() => Deno.statSync(`${ce.dataDir}/sessions/${idHere}.jsonl`));
    const again = await runCoyote(["sessions", "rm", idHere], { cwd: there, env });
    assert.equal(again.code, 2);
    assert.match(again.stderr, /no stored session has the id/);
    const empty = await runCoyote(["--list-sessions"], { cwd: here, env });
    assert.equal(empty.stdout, "");
    assert.match(empty.stderr, /no stored sessions for this directory \(--all lists every one\)/);
  } finally {
    await ms.close();
    await ce.cleanup();
    await Deno.remove(here, { recursive: true });
    await Deno.remove(there, { recursive: true });
  }
});

Deno.test("sessions: references resolve by id, unique prefix, then name; ambiguity and id-shaped misses are errors", () => {
  const s = (id: string, name?: string): StoredSessionInfo => ({
    id,
    cwd: "/w",
    created: "",
    updated: "",
    title: `t-${id.slice(0, 4)}`,
    path: "",
    ...(name ? { name } : {}),
  });
  const list = [
    s("1234abcd-0000-4000-8000-000000000001"),
    s("1234abce-0000-4000-8000-000000000002", "work"),
    s("ffff0000-0000-4000-8000-000000000003"),
  ];
  assert.deepEqual(resolveSessionRef(list, "1234abcd"), { id: list[0].id });
  assert.deepEqual(resolveSessionRef(list, "work"), { id: list[1].id });
  assert.deepEqual(resolveSessionRef(list, "new-name"), { name: "new-name" });
  assert.throws(() => resolveSessionRef(list, "1234abcf"), /no stored session has the id 1234abcf/);
  assert.throws(
    () => resolveSessionRef([...list, s("1234abcd-9999-4000-8000-000000000004")], "1234abcd"),
    /matches 2 stored sessions/,
  );
  assert.throws(
    () => resolveSessionRef(list, "1243abcd-0000"),
    /nearest: 1234abcd-0000-4000-8000-000000000001 \(t-1234\)/,
  );
  const short = shortIds(["1234abcd-1", "1234abcd-2", "ffff0000-1"]);
  assert.deepEqual([...short.values()], ["1234abcd-1", "1234abcd-2", "ffff0000"]);
});
