/**
 * Workspace trust (issue 11 §3) and project config (issue 10), end to end: real subprocesses of
 * main.ts in real temp git repositories against the scripted model server. An untrusted
 * repository's `.mcp.json` server never starts, its `.coyote/plugins/` never load and its
 * `.coyote/config.yaml` rules never apply; `--trust-workspace`, `coyote trust`, config
 * `trusted_workspaces` and the terminal question (in a real pseudo-terminal, util-linux `script`)
 * each make them apply.
 */
import assert from "node:assert/strict";
import { childEnv, makeCoyoteEnv, parseJsonLines, runCoyote } from "./support/run_coyote.ts";
import { startModelServer } from "./support/model_server.ts";
import { coyoteCommand } from "./support/run_coyote.ts";
import { testApp } from "./support/fixtures.ts";
import { createSession } from "../core/session/runtime.ts";
import { mcpServerEnv } from "../core/extensions/mcp/config.ts";
import { appendPermissionRule } from "../core/config/project.ts";
import { isTrusted, setTrust, trustState, workspaceRoot } from "../core/config/trust.ts";

const HELLO = new URL("../examples/plugins/hello/mod.ts", import.meta.url).pathname;

async function git(cwd: string, ...args: string[]) {
  const o = await new Deno.Command("git", { args, cwd, stdout: "null", stderr: "piped" }).output();
  if (!o.success) throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(o.stderr)}`);
}

/**
 * A hostile-looking repository: an MCP server that leaves STARTED behind when it runs, a
 * workspace plugin (tool `hello_greet`), and a project config that allows `touch allowed.txt`.
 */
async function hostileRepo(): Promise<string> {
  const repo = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-trust-repo-" }));
  await git(repo, "init", "-q");
  await Deno.mkdir(`${repo}/.coyote/plugins`, { recursive: true });
  await Deno.mkdir(`${repo}/sub`);
  await Deno.writeTextFile(
    `${repo}/.mcp.json`,
    JSON.stringify({
      mcpServers: { probe: { command: "sh", args: ["-c", `touch '${repo}/STARTED'; exit 1`] } },
    }),
  );
  await Deno.copyFile(HELLO, `${repo}/.coyote/plugins/hello.ts`);
  await Deno.writeTextFile(
    `${repo}/.coyote/config.yaml`,
    "permissions:\n  allow: ['Execute(touch allowed.txt)']\n",
  );
  return repo;
}

function exists(p: string): boolean {
  try {
    Deno.statSync(p);
    return true;
  } catch {
    return false;
  }
}

const TOUCH = [
  { tool_calls: [{ name: "execute_command", arguments: { command: "touch allowed.txt" } }] },
  { text: "done" },
];

/** The tool names offered in the first model request. */
function offered(body: unknown): string[] {
  return ((body as { tools?: { function: { name: string } }[] }).tools ?? []).map((t) =>
    t.function.name
  );
}

Deno.test("trust: an untrusted repo starts no .mcp.json server, loads no .coyote/plugins, applies no .coyote/config.yaml", async () => {
  const repo = await hostileRepo();
  const ce = await makeCoyoteEnv();
  const ms = await startModelServer({ script: [...TOUCH, ...TOUCH] });
  try {
    const env = childEnv(ce, { baseURL: ms.baseURL });
    // --no-sandbox: the guard's ask path decides `touch` (the OS sandbox would auto-allow it).
    const r = await runCoyote([
      "--headless",
      "--no-sandbox",
      "--output-format",
      "json",
      "make the file",
    ], {
      cwd: repo,
      env,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`workspace ${repo} is not trusted: ignoring \\.mcp\\.json`));
    assert.match(r.stderr, /\.coyote\/plugins\/, \.coyote\/config\.yaml/);
    assert.match(r.stderr, /coyote trust/);
    assert.ok(!exists(`${repo}/STARTED`), "the workspace MCP server never ran");
    assert.ok(!offered(ms.requests[0].body).includes("hello_greet"), "workspace plugin not loaded");
    assert.ok(!exists(`${repo}/allowed.txt`), "the project allow rule did not apply");
    assert.equal(JSON.parse(r.stdout).denied.length, 1);

    // The same run with --trust-workspace: all three apply.
    const t = await runCoyote(
      [
        "--headless",
        "--no-sandbox",
        "--trust-workspace",
        "--output-format",
        "json",
        "make the file",
      ],
      { cwd: repo, env },
    );
    assert.equal(t.code, 0, t.stderr);
    assert.doesNotMatch(t.stderr, /not trusted/);
    assert.ok(exists(`${repo}/STARTED`), "the workspace MCP server ran");
    assert.ok(offered(ms.requests[2].body).includes("hello_greet"), "workspace plugin loaded");
    assert.ok(exists(`${repo}/allowed.txt`), "the project allow rule applied");
  } finally {
    await ms.close();
    await ce.cleanup();
    await Deno.remove(repo, { recursive: true });
  }
});

Deno.test("trust: `coyote trust` remembers the repository root (subfolders included); --revoke; config trusted_workspaces", async () => {
  const repo = await hostileRepo();
  const ce = await makeCoyoteEnv();
  try {
    const env = childEnv(ce);
    const show = (cwd: string, extra: string[] = []) =>
      runCoyote([...extra, "policy", "show"], { cwd, env });
    assert.doesNotMatch((await show(repo)).stdout, /touch allowed\.txt/);
    const mcp = await runCoyote(["mcp", "list", "--no-connect"], { cwd: repo, env });
    assert.equal(mcp.code, 0, mcp.stderr);
    assert.doesNotMatch(mcp.stdout, /probe/);
    assert.match(mcp.stderr, /is not trusted: ignoring \.mcp\.json \(trust it/);

    const tr = await runCoyote(["trust"], { cwd: `${repo}/sub`, env });
    assert.equal(tr.code, 0, tr.stderr);
    assert.equal(tr.stdout.trim(), `trusted ${repo}`, "the git root is trusted, not the subfolder");
    const stored = JSON.parse(await Deno.readTextFile(`${ce.dataDir}/trusted_folders.json`));
    assert.deepEqual(stored, { [repo]: "trusted" });
    assert.match((await show(repo)).stdout, /touch allowed\.txt/, "project rule now applies");
    const mcpTrusted = await runCoyote(["mcp", "list", "--no-connect"], { cwd: repo, env });
    assert.match(mcpTrusted.stdout, /probe/);

    const list = await runCoyote(["trust", "--list"], { cwd: repo, env });
    assert.match(list.stdout, new RegExp(`^trusted\\t${repo}\\t`, "m"));

    const rv = await runCoyote(["trust", "--revoke", repo], { cwd: "/", env });
    assert.equal(rv.code, 0, rv.stderr);
    assert.equal(rv.stdout.trim(), `untrusted ${repo}`);
    assert.doesNotMatch((await show(repo)).stdout, /touch allowed\.txt/);

    // The user config can trust a parent folder; the flag trusts one run.
    const parent = repo.slice(0, repo.lastIndexOf("/"));
    await Deno.writeTextFile(`${ce.configDir}/config.yaml`, `trusted_workspaces: ["${parent}"]\n`);
    assert.doesNotMatch(
      (await show(repo)).stdout,
      /touch allowed\.txt/,
      "the nearer stored 'untrusted' entry wins over a parent in config",
    );
    assert.match((await show(repo, ["--trust-workspace"])).stdout, /touch allowed\.txt/);
    await Deno.writeTextFile(`${ce.configDir}/config.yaml`, `trusted_workspaces: ["${repo}"]\n`);
    assert.match((await show(repo)).stdout, /touch allowed\.txt/, "config wins a tie");
    const again = await runCoyote(["trust", "--revoke"], { cwd: repo, env });
    assert.match(again.stderr, /still trusted by trusted_workspaces/);

    const wide = await runCoyote(["trust"], { cwd: "/", env });
    assert.equal(wide.code, 2);
    assert.match(wide.stderr, /not trusting \/ implicitly/);
    const bad = await runCoyote(["trust", `${repo}/no-such-dir`], { cwd: repo, env });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /cannot trust/);
  } finally {
    await ce.cleanup();
    await Deno.remove(repo, { recursive: true });
  }
});

/** Runs coyote in a pseudo-terminal (util-linux `script`), typing `input`; returns the transcript. */
async function inTerminal(
  args: string[],
  opts: { cwd: string; env: Record<string, string>; input: string },
): Promise<{ code: number; out: string }> {
  const { cmd, args: full } = coyoteCommand(args);
  const line = [cmd, ...full].map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(" ");
  const child = new Deno.Command("script", {
    args: ["-qec", line, "/dev/null"],
    cwd: opts.cwd,
    env: opts.env,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(opts.input));
  await w.close();
  const o = await child.output();
  return { code: o.code, out: new TextDecoder().decode(o.stdout).replaceAll("\r", "") };
}

Deno.test("trust: on a terminal the first run asks once on stderr and remembers the answer", async () => {
  const repo = await hostileRepo();
  const ce = await makeCoyoteEnv();
  const ms = await startModelServer({ script: [...TOUCH, { text: "again" }, { text: "other" }] });
  try {
    const env = childEnv(ce, { baseURL: ms.baseURL });
    const first = await inTerminal(["--no-sandbox", "make the file"], {
      cwd: repo,
      env,
      input: "y\n",
    });
    assert.match(first.out, /Trust this folder\? /);
    assert.match(first.out, new RegExp(`coyote: trusted ${repo}`));
    assert.equal(first.code, 0, first.out);
    assert.ok(exists(`${repo}/allowed.txt`), "trusted at once: the project rule applied");
    assert.ok(exists(`${repo}/STARTED`));
    const second = await inTerminal(["hello again"], { cwd: repo, env, input: "" });
    assert.equal(second.code, 0, second.out);
    assert.doesNotMatch(second.out, /Trust this folder/, "asked only once");

    // A "no" is remembered too: not trusted, not asked again.
    const other = await hostileRepo();
    try {
      const no = await inTerminal(["hi"], { cwd: other, env, input: "n\n" });
      assert.match(no.out, /Trust this folder\?/);
      assert.match(no.out, /not trusted/);
      assert.ok(!exists(`${other}/STARTED`));
      const stored = JSON.parse(await Deno.readTextFile(`${ce.dataDir}/trusted_folders.json`));
      assert.equal(stored[other], "untrusted");
    } finally {
      await Deno.remove(other, { recursive: true });
    }
  } finally {
    await ms.close();
    await ce.cleanup();
    await Deno.remove(repo, { recursive: true });
  }
});

Deno.test("trust: the state is exposed on the session and through isTrusted (fails closed)", async () => {
  const repo = await hostileRepo();
  const data = await Deno.makeTempDir();
  try {
    const dirs = { cwd: repo, configDir: `${data}/cfg`, dataDir: data };
    const base = { baseURL: "http://127.0.0.1:9/v1", model: "m" };
    const s = await createSession(testApp(dirs, { ...base, trustWorkspace: false }), {
      cwd: repo,
      permission: () => Promise.resolve("reject_once" as const),
      log: () => {},
    });
    assert.equal(s.workspace.trust.trusted, false);
    assert.equal(s.workspace.trust.source, "unknown");
    assert.equal(s.workspace.trust.root, repo);
    await s.close();
    assert.equal(isTrusted({ dataDir: data }, `${repo}/sub`), false);
    setTrust(data, repo, true);
    assert.equal(isTrusted({ dataDir: data }, `${repo}/sub`), true);
    assert.equal(trustState({ dataDir: data }, `${repo}/sub`).path, repo);
    assert.equal(workspaceRoot(`${repo}/sub`), repo);
    // A corrupt store trusts nothing.
    await Deno.writeTextFile(`${data}/trusted_folders.json`, "{ not json");
    assert.equal(isTrusted({ dataDir: data }, repo), false);
  } finally {
    await Deno.remove(repo, { recursive: true });
    await Deno.remove(data, { recursive: true });
  }
});

Deno.test("mcp env: a server gets the safe base and the variables its entry names, never the rest", () => {
  const env: Record<string, string> = {
    PATH: "/bin",
    HOME: "/h",
    OPENAI_API_KEY: "sk-secret",
    GITHUB_TOKEN: "ghp_x",
    SHELL: "() { evil; }",
    DENO_DIR: "/cache/deno",
  };
  assert.deepEqual(mcpServerEnv({ GITHUB_TOKEN: "named" }, (n) => env[n]), {
    PATH: "/bin",
    HOME: "/h",
    DENO_DIR: "/cache/deno",
    GITHUB_TOKEN: "named",
  });
});

Deno.test("project config: .coyote/config.yaml and config.local.yaml layer over the user config when trusted; bad files are usage errors", async () => {
  const repo = await hostileRepo();
  const ce = await makeCoyoteEnv();
  const ms = await startModelServer({ script: [{ text: "a" }, { text: "b" }] });
  try {
    const env = childEnv(ce, { baseURL: ms.baseURL });
    await Deno.writeTextFile(`${ce.configDir}/config.yaml`, "permissions:\n  deny: ['Net']\n");
    await Deno.writeTextFile(
      `${repo}/.coyote/config.yaml`,
      "model: project-model\npermissions:\n  allow: ['Execute(touch allowed.txt)']\n",
    );
    await Deno.writeTextFile(
      `${repo}/.coyote/config.local.yaml`,
      "model: local-model\npermissions:\n  deny: ['Execute(git push:*)']\n",
    );
    const show = await runCoyote(["--trust-workspace", "policy", "show"], { cwd: repo, env });
    assert.equal(show.code, 0, show.stderr);
    for (const rule of ["Net", "Execute(touch allowed.txt)", "Execute(git push:*)"]) {
      assert.ok(show.stdout.includes(rule), `${rule} in:\n${show.stdout}`);
    }
    // The local file's model wins over the project's; a flag wins over both.
    const childEnvNoModel = { ...env };
    delete childEnvNoModel.COYOTE_MODEL;
    const r = await runCoyote(["--headless", "--trust-workspace", "hi"], {
      cwd: repo,
      env: childEnvNoModel,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal((ms.requests[0].body as { model: string }).model, "local-model");
    await runCoyote(["--headless", "--trust-workspace", "-m", "flag-model", "hi"], {
      cwd: repo,
      env: childEnvNoModel,
    });
    assert.equal((ms.requests[1].body as { model: string }).model, "flag-model");

    // A repository cannot trust itself, nor sneak MCP servers in through config.
    await Deno.writeTextFile(`${repo}/.coyote/config.yaml`, "trusted_workspaces: ['/']\n");
    const self = await runCoyote(["--trust-workspace", "policy", "show"], { cwd: repo, env });
    assert.equal(self.code, 2);
    assert.match(self.stderr, /config\.yaml: trusted_workspaces: only the user config\.yaml/);
    await Deno.writeTextFile(`${repo}/.coyote/config.yaml`, "sandbox: off\n");
    const weak = await runCoyote(["--trust-workspace", "policy", "show"], { cwd: repo, env });
    assert.equal(weak.code, 2);
    assert.match(weak.stderr, /sandbox: only the user config\.yaml/);
    await Deno.writeTextFile(`${repo}/.coyote/config.yaml`, "permissions:\n  allow: ['Reed(x)']\n");
    const bad = await runCoyote(["--trust-workspace", "policy", "show"], { cwd: repo, env });
    assert.equal(bad.code, 2);
    assert.match(
      bad.stderr,
      new RegExp(`${repo}/\\.coyote/config\\.yaml permissions\\.allow\\[0\\]`),
    );
    assert.doesNotMatch(bad.stderr, /\n\s+at /);
    // A broken project file does not stop `coyote trust --revoke` (a warning names it).
    assert.equal((await runCoyote(["trust"], { cwd: repo, env })).code, 0);
    const out = await runCoyote(["trust", "--revoke"], { cwd: repo, env });
    assert.equal(out.code, 0, out.stderr);
    assert.match(
      out.stderr,
      /warning: invalid permission rule "Reed\(x\)" \(from config .*\.coyote\/config\.yaml/,
    );
    assert.match(out.stdout, /^untrusted /);
    // Untrusted, the broken file is not even read.
    const untrusted = await runCoyote(["policy", "show"], { cwd: repo, env });
    assert.equal(untrusted.code, 0, untrusted.stderr);
  } finally {
    await ms.close();
    await ce.cleanup();
    await Deno.remove(repo, { recursive: true });
  }
});

Deno.test("project config: appendPermissionRule writes .coyote/config.local.yaml, keeps comments, and git ignores it", async () => {
  const repo = await hostileRepo();
  try {
    const path = await appendPermissionRule(repo, "allow", "Execute(npm test)");
    assert.equal(path, `${repo}/.coyote/config.local.yaml`);
    let text = await Deno.readTextFile(path);
    assert.match(text, /^# Personal Coyote settings/);
    await Deno.writeTextFile(path, text + "# my note\n");
    await appendPermissionRule(repo, "allow", "Execute(npm test)"); // no duplicate
    await appendPermissionRule(repo, "allow", "Write(dist/**)");
    await appendPermissionRule(repo, "deny", "Execute(git push:*)");
    text = await Deno.readTextFile(path);
    assert.equal(text.match(/Execute\(npm test\)/g)?.length, 1);
    assert.match(text, /# my note/);
    const { parse } = await import("yaml");
    assert.deepEqual(parse(text), {
      permissions: {
        allow: ["Execute(npm test)", "Write(dist/**)"],
        deny: ["Execute(git push:*)"],
      },
    });
    const ignored = await new Deno.Command("git", {
      args: ["check-ignore", "-q", ".coyote/config.local.yaml"],
      cwd: repo,
    }).output();
    assert.equal(ignored.code, 0, "git ignores config.local.yaml");
    await assert.rejects(() => appendPermissionRule(repo, "allow", "Reed(x)"), /unknown kind/);
  } finally {
    await Deno.remove(repo, { recursive: true });
  }
});

Deno.test("trust: stream-json output stays pure in an untrusted workspace (the note is on stderr)", async () => {
  const repo = await hostileRepo();
  const ce = await makeCoyoteEnv();
  const ms = await startModelServer({ script: [{ text: "ok" }] });
  try {
    const r = await runCoyote(["--headless", "--output-format", "stream-json", "hi"], {
      cwd: repo,
      env: childEnv(ce, { baseURL: ms.baseURL }),
    });
    assert.equal(r.code, 0, r.stderr);
    parseJsonLines(r.stdout);
    assert.match(r.stderr, /not trusted/);
  } finally {
    await ms.close();
    await ce.cleanup();
    await Deno.remove(repo, { recursive: true });
  }
});

Deno.test("trust: an untrusted repo holding only .coyote/agents/ uses its agent and claims to ignore nothing", async () => {
  // Agent files load untrusted (docs/agents.md); the note once said `ignoring .coyote/agents/`
  // while the agent was in fact used, and the terminal asked to trust the folder for it.
  const repo = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-trust-agents-" }));
  await git(repo, "init", "-q");
  await Deno.mkdir(`${repo}/.coyote/agents/checker`, { recursive: true });
  await Deno.writeTextFile(
    `${repo}/.coyote/agents/checker/config.yaml`,
    "description: Checks\ninstructions: CHECKER-MARKER check things\n",
  );
  const ce = await makeCoyoteEnv();
  const ms = await startModelServer({ script: [{ text: "checked" }] });
  try {
    const r = await runCoyote(["--headless", "-a", "checker", "check"], {
      cwd: repo,
      env: childEnv(ce, { baseURL: ms.baseURL }),
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), "checked");
    assert.match(JSON.stringify(ms.requests[0].body), /CHECKER-MARKER/);
    assert.doesNotMatch(r.stderr, /not trusted/);
  } finally {
    await ms.close();
    await ce.cleanup();
    await Deno.remove(repo, { recursive: true });
  }
});
