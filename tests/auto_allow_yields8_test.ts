/**
 * Auto-allow yields, eighth attacker pass: git's object store holds a zlib copy of every committed
 * file, and the OS sandbox does not hide it (git needs it). Under a `Read` rule the sandbox carries
 * (`Read(secret.txt)`: the tree's file hidden, auto-allow kept), a fully understood shell line
 * decoded the stored copy: `printf '\x1f\x8b\x08\0\0\0\0\0' | cat - .git/objects/…/… | gzip -dc`.
 * A path at or under a repository's `.git/objects` (or a submodule's) now asks with the first
 * `Read` deny or ask rule that may cover a file of that repository, for every program and for
 * `fs_read` (core/policy/paths.ts `objectStoreRule`). Unit rows through the real policy and
 * `sandboxGuard`, then headless `coyote` on real bwrap: the secret never reaches the model.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Policy } from "../core/policy/policy.ts";
import { detectBackend, sandboxGuard } from "../core/policy/sandbox/mod.ts";
import { SANDBOX_ON } from "./support/sandbox_world.ts";
import { headlessAttack } from "./support/headless_attack.ts";
import { git } from "./support/journeys.ts";

/** A repository with secret.txt committed; resolves the workspace and the blob's loose path. */
async function repo(): Promise<{ ws: string; obj: string }> {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-yield8-" }));
  await git(ws, "init", "-q", "-b", "main");
  await Deno.writeTextFile(join(ws, "secret.txt"), "S3CRET-VALUE\n");
  await Deno.writeTextFile(join(ws, "README.md"), "readme\n");
  await git(ws, "add", ".");
  await git(ws, "commit", "-qm", "one");
  const id = (await git(ws, "rev-parse", "HEAD:secret.txt")).trim();
  return { ws, obj: `.git/objects/${id.slice(0, 2)}/${id.slice(2)}` };
}

const GZIP = String.raw`printf '\x1f\x8b\x08\x00\x00\x00\x00\x00'`;

type D = "allow" | "ask" | "deny";

Deno.test("auto-allow yields (eighth pass): reading git's object store meets the Read rules", async () => {
  const { ws, obj } = await repo();
  try {
    const rows: [string[], string, D[]][] = [
      ...["Read(secret.txt)", "Read(secret*)"].flatMap((rule): [string[], string, D[]][] =>
        [
          `${GZIP} | cat - ${obj} | gzip -dc`,
          `zlib-flate -uncompress < ${obj}`,
          `python3 -c 'import zlib,sys; print(zlib.decompress(open(sys.argv[1],"rb").read()))' ${obj}`,
          "cat .git/objects/*/*",
          `cd .git && cat ${obj.slice(5)}`,
          "od -c .git/objects/pack/x.pack",
          "cat .git/modules/sub/objects/ab/cdef",
        ].map((c): [string[], string, D[]] => [[rule], c, ["ask", "deny"]])
      ),
      // What else git keeps and ordinary git stay as they were.
      ...["cat .git/HEAD", "cat .git/config", "ls .git", "git status", "git log --oneline"]
        .map((c): [string[], string, D[]] => [["Read(secret.txt)"], c, ["allow"]]),
      // A rule outside the repository, or none: the object store is read as before.
      [["Read(/etc/shadow)"], `${GZIP} | cat - ${obj} | gzip -dc`, ["allow"]],
      [[], `cat ${obj}`, ["allow"]],
    ];
    const failures: string[] = [];
    for (const [deny, command, want] of rows) {
      const policy = Policy.create({}, { allow: [], deny }, { workspace: ws, configDir: "/c" });
      await policy.globsReady();
      const v = await sandboxGuard(policy, SANDBOX_ON).evaluate({ type: "execute", command });
      if (!want.includes(v.decision)) {
        failures.push(`${JSON.stringify(command)} (deny ${deny}): ${v.decision} — ${v.reason}`);
      } else if (v.decision === "ask" && v.rule === "default") {
        failures.push(
          `${JSON.stringify(command)} (deny ${deny}): a default ask (auto-allow lifts it)`,
        );
      }
    }
    // The file tool asks the same (what fs_read asks about, a command cannot read silently).
    const policy = Policy.create({}, { allow: [], deny: ["Read(secret.txt)"] }, {
      workspace: ws,
      configDir: "/c",
    });
    const r = policy.decide({ type: "read", path: join(ws, obj) });
    if (r.decision !== "ask" || r.rule !== "Read(secret.txt)") {
      failures.push(`fs_read ${obj}: ${r.decision} ${r.rule} — ${r.reason}`);
    }
    assert.deepEqual(failures, []);
  } finally {
    await Deno.remove(ws, { recursive: true }).catch(() => {});
  }
});

Deno.test("auto-allow yields (eighth pass): headless on real bwrap — a stored copy decoded by gzip never reaches the model", async () => {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed for these tests (.ci/run installs bubblewrap)");
  const { ws, obj } = await repo();
  try {
    const run = await headlessAttack(
      ws,
      [
        `${GZIP} | cat - ${obj} | gzip -dc 2>/dev/null | strings`,
        `cat .git/objects/*/* | od -c`,
      ],
      [{ id: "ok", command: "cat .git/HEAD README.md" }],
      ["--deny", "Read(secret.txt)"],
    );
    assert.deepEqual(run.denied, run.attackIds);
    assert.doesNotMatch(run.sent, /S3CRET-VALUE/, "the secret never reaches the model");
    assert.match(run.sent, /refs\/heads\/main[\s\S]*readme/, "an ordinary read ran");
  } finally {
    await Deno.remove(ws, { recursive: true }).catch(() => {});
  }
});
