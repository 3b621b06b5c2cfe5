/**
 * Auto-allow yields, sixth attacker pass (issue 16 class 5; docs/permissions.md "Auto-allow
 * yields"): a command the shell parser cannot parse (bash still runs it up to the bad token), a
 * git remote helper called directly (`git remote-ext` runs its argument), and the `Read`/`Write`
 * rules the OS sandbox cannot carry (globs such as `Read(secret*)`, `Write(**\/keep.txt)`; a
 * `Read` ask rule) — while such a rule exists, nothing the guard does not fully understand is
 * auto-allowed, and a folder read whole asks. Unit rows through the real policy and
 * `sandboxGuard`, then end to end: headless `coyote` on real bwrap, `victim` surviving and the
 * secret never reaching the model.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Policy } from "../core/policy/policy.ts";
import { SANDBOX_ON } from "./support/sandbox_world.ts";
import { detectBackend, sandboxGuard } from "../core/policy/sandbox/mod.ts";
import { headlessAttack } from "./support/headless_attack.ts";

const ON = SANDBOX_ON;

async function repo(): Promise<string> {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-yield6-" }));
  await new Deno.Command("git", { args: ["init", "-q", ws] }).output();
  await Deno.mkdir(join(ws, "victim"));
  await Deno.writeTextFile(join(ws, "victim", "keep.txt"), "keep\n");
  await Deno.writeTextFile(join(ws, "secret.txt"), "S3CRET-VALUE\n");
  await Deno.writeTextFile(join(ws, "README.md"), "readme\n");
  return ws;
}

/** [allow rules, deny rules, command, the decisions accepted]. */
const ROWS: [string[], string[], string, ("allow" | "ask" | "deny")[]][] = [
  // Unparseable lines run up to the bad token: they ask with the deny rule, never auto-allowed.
  [[], ["Execute(rm *)"], "rm -rf victim\n}", ["ask", "deny"]],
  [[], ["Execute(rm *)"], "rm -rf victim #\nls 'x", ["ask", "deny"]],
  [[], ["Execute(rm *)"], "bash <<EOF\nrm -rf victim", ["ask", "deny"]],
  [[], ["Execute(rm *)"], "cat <<EOF | sh\nrm -rf victim", ["ask", "deny"]],
  [[], ["Execute(rm *)"], "echo ok\ndone", ["ask", "deny"]],
  [[], ["Read(secret*)"], "cat secret.txt\n}", ["ask", "deny"]],
  // Without any rule the sandbox holds everything: an unparseable line still runs in it.
  [[], [], "echo ok\n}", ["allow"]],
  // git's remote helpers called directly.
  [[], ["Execute(rm *)"], "git remote-ext o 'rm -rf victim' <<< 'connect git-upload-pack'", [
    "ask",
  ]],
  [["Execute(git*)"], ["Execute(rm *)"], "git remote-ext o 'touch PLANTED'", ["ask"]],
  [["Execute(git*)"], ["Execute(rm *)"], "git remote-fd 3", ["ask"]],
  [["Execute(git*)"], ["Execute(rm *)"], "git remote -v", ["allow"]],
  // Read globs and Read ask rules only the guard enforces.
  [[], ["Read(secret*)"], `python3 -c 'print(open("secret.txt").read())'`, ["ask"]],
  [[], ["Read(secret*)"], "x=secret; cat $x.txt", ["ask"]],
  [[], ["Read(secret*)"], "grep -r S3 .", ["ask"]],
  [[], ["Read(**/secret.txt)"], "grep -r S3 .", ["ask"]],
  [[], ["Read(**/secret.txt)"], "tar cf - .", ["ask"]],
  [[], ["Read(secret*)", "Execute(rm *)"], "grep -r S3 .", ["ask"]],
  [[], ["Read(secret*)"], "cat secret.txt", ["deny"]],
  [[], ["Read(secret*)"], "cat README.md", ["allow"]],
  [[], ["Read(secret*)"], "grep readme README.md", ["allow"]],
  [[], ["Read(secret*)"], "ls -la", ["allow"]],
  // Write globs.
  [[], ["Write(**/keep.txt)"], "f=victim/keep.txt; echo pwn > $f", ["ask"]],
  [[], ["Write(**/keep.txt)"], `python3 -c 'open("victim/keep.txt","w").write("pwn")'`, ["ask"]],
  [[], ["Write(**/keep.txt)"], "echo pwn > victim/keep.txt", ["deny"]],
  [[], ["Write(**/keep.txt)"], "echo hi > out.txt", ["allow"]],
  // A Write ask rule does not yield (a checkpoint undoes a write; it would end auto-allow).
  // Rules the sandbox carries (a literal path, a folder) keep auto-allow: the sandbox holds them.
  [[], ["Read(secret.txt)"], `python3 -c 'print(open("secret.txt").read())'`, ["allow"]],
  [[], ["Write(victim/**)"], `python3 -c 'open("victim/keep.txt","w").write("pwn")'`, ["allow"]],
];

Deno.test("auto-allow yields (sixth pass): unparseable lines, git remote helpers, guard-only Read/Write rules", async () => {
  const ws = await repo();
  try {
    const failures: string[] = [];
    for (const [allow, deny, command, want] of ROWS) {
      const policy = Policy.create({}, { allow, deny }, { workspace: ws, configDir: "/c" });
      await policy.globsReady();
      const v = await sandboxGuard(policy, ON).evaluate({ type: "execute", command });
      if (!want.includes(v.decision)) {
        failures.push(
          `${
            JSON.stringify(command)
          } (allow ${allow}, deny ${deny}): ${v.decision}, want ${want} — ${v.reason}`,
        );
      }
    }
    // A Read ask rule is guard-only too: a not-understood command asks with it.
    const asking = Policy.create({ ask: ["Read(notes.md)"] }, { allow: [], deny: [] }, {
      workspace: ws,
      configDir: "/c",
    });
    const v = await sandboxGuard(asking, ON).evaluate({ type: "execute", command: "npm test" });
    if (v.decision !== "ask" || v.rule !== "Read(notes.md)") {
      failures.push(`Read ask rule: ${v.decision} ${v.rule} — ${v.reason}`);
    }
    // A Write ask glob ("ask before editing docs") keeps auto-allow for what the guard asks about.
    const docs = Policy.create({ ask: ["Write(**/*.md)"] }, { allow: [], deny: [] }, {
      workspace: ws,
      configDir: "/c",
    });
    await docs.globsReady();
    const d = await sandboxGuard(docs, ON).evaluate({ type: "execute", command: "npm test" });
    if (d.decision !== "allow") failures.push(`Write ask rule: ${d.decision} — ${d.reason}`);
    assert.deepEqual(failures, []);
  } finally {
    await Deno.remove(ws, { recursive: true }).catch(() => {});
  }
});

Deno.test("auto-allow yields (sixth pass): headless on real bwrap — victim survives, the secret never reaches the model", async () => {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed for these tests (.ci/run installs bubblewrap)");
  const ws = await repo();
  const attacks = [
    "rm -rf victim\n}",
    "bash <<EOF\nrm -rf victim",
    "git remote-ext o 'rm -rf victim' <<< 'connect git-upload-pack'",
    `python3 -c 'print(open("secret.txt").read())'`,
    "x=secret; cat $x.txt",
    "grep -r S3 .",
  ];
  try {
    const run = await headlessAttack(ws, attacks, [{ id: "ok", command: "cat README.md" }], [
      "--deny",
      "Execute(rm *)",
      "--deny",
      "Read(secret*)",
    ]);
    assert.equal(await Deno.readTextFile(join(ws, "victim", "keep.txt")), "keep\n");
    assert.deepEqual(run.denied, run.attackIds);
    assert.doesNotMatch(run.sent, /S3CRET-VALUE/, "the secret never reaches the model");
    assert.match(run.sent, /readme/, "the understood command ran and its output came back");
  } finally {
    await Deno.remove(ws, { recursive: true }).catch(() => {});
  }
});
