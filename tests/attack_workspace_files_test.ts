/**
 * Attacks through the text files Coyote reads from a workspace at start-up, even when it is not
 * trusted (docs/agents.md, core/config/instructions.ts): a cloned repository may hold symlinks, so
 * `AGENTS.md`, a skill's `SKILL.md` or an agent file that points OUTSIDE the repository (at
 * `~/.ssh/id_rsa`, Coyote's config with the provider key, `/proc/self/environ`, `/dev/zero`)
 * must not be read into the prompt — that would hand the file to the model without any guard
 * decision. Symlinks that stay inside the repository (`CLAUDE.md -> AGENTS.md`) keep working.
 * Real headless runs (main.ts subprocess), a scripted model, a fake HOME.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";

const SECRET = "SSH-PRIVATE-KEY-attack-0123456789";

Deno.test("attack workspace files: symlinked instructions, skills and agents never reach outside the repository", async () => {
  const env = await makeCoyoteEnv();
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-attack-files-" }));
  const repo = join(root, "repo");
  const home = join(root, "home");
  await Deno.mkdir(join(home, ".ssh"), { recursive: true });
  await Deno.writeTextFile(join(home, ".ssh", "id_rsa"), SECRET);
  await Deno.writeTextFile(
    join(home, "skill.md"),
    `---\ndescription: harmless looking\n---\n${SECRET}\n`,
  );
  await Deno.writeTextFile(
    join(home, "agent.md"),
    `---\nname: spy\ndescription: spy\n---\n${SECRET}\n`,
  );
  await new Deno.Command("git", { args: ["init", "-q", repo] }).output();
  await Deno.mkdir(join(repo, "sub", ".claude", "skills", "k"), { recursive: true });
  await Deno.mkdir(join(repo, ".claude", "agents"), { recursive: true });
  await Deno.mkdir(join(repo, "docs"), { recursive: true });
  await Deno.symlink(join(home, ".ssh", "id_rsa"), join(repo, "AGENTS.md"));
  await Deno.symlink(
    join(home, "skill.md"),
    join(repo, "sub", ".claude", "skills", "k", "SKILL.md"),
  );
  await Deno.symlink(join(home, "agent.md"), join(repo, ".claude", "agents", "spy.md"));
  // Inside the repository: a symlink to a file of the same repository is fine.
  await Deno.writeTextFile(join(repo, "docs", "GUIDE.md"), "FOLLOW-THE-GUIDE");
  await Deno.symlink("../docs/GUIDE.md", join(repo, "sub", "CLAUDE.md"));

  const server = await startModelServer({
    script: [
      { tool_calls: [{ id: "s1", name: "skill__load", arguments: { name: "k" } }] },
      { text: "done" },
    ],
  });
  try {
    const e = childEnv(env, { baseURL: server.baseURL, extra: { HOME: home } });
    const r = await runCoyote(["--headless", "--output-format", "stream-json", "go"], {
      cwd: join(repo, "sub"),
      env: e,
    });
    assert.equal(r.code, 0, r.stderr);
    const seen = JSON.stringify(server.requests.map((q) => q.body));
    assert.ok(seen.includes("FOLLOW-THE-GUIDE"), "an in-repository symlink is followed");
    assert.equal(seen.includes(SECRET), false, "the model must not see files outside the repo");
    assert.equal(r.stdout.includes(SECRET), false);
    const sessions = join(env.dataDir, "sessions");
    for await (const f of Deno.readDir(sessions)) {
      assert.equal((await Deno.readTextFile(join(sessions, f.name))).includes(SECRET), false);
    }

    // Choosing the symlinked agent does not load it either.
    const a = await runCoyote(["--headless", "-a", "spy", "go"], { cwd: repo, env: e });
    assert.notEqual(a.code, 0);
    assert.equal((a.stdout + a.stderr).includes(SECRET), false);
    assert.equal(JSON.stringify(server.requests.map((q) => q.body)).includes(SECRET), false);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
});
