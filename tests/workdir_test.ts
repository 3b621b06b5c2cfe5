/**
 * Where `deno task coyote` works (issue 20): in the directory it was typed in (`INIT_CWD`, which
 * `deno task` sets while it runs the task in Coyote's own folder), not in Coyote's clone; and a
 * warning on stderr when the workspace is Coyote's own source tree. Real `deno task` and `deno run`
 * subprocesses against the scripted model server.
 */
import assert from "node:assert/strict";
import { inOwnTree, ownTreeWarning, taskWorkdir } from "../core/frontends/cli/workdir.ts";
import { childEnv, makeCoyoteEnv, parseJsonLines, runCoyote } from "./support/run_coyote.ts";
import { startModelServer } from "./support/model_server.ts";

const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");

Deno.test("workdir: INIT_CWD is the workspace only when the run starts in Coyote's own folder", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir());
  try {
    const env = (v?: string) => (n: string) => n === "INIT_CWD" ? v : undefined;
    assert.equal(taskWorkdir(env(dir), ROOT, ROOT), dir);
    assert.equal(taskWorkdir(env(dir), `${ROOT}/`, ROOT), dir, "a trailing slash is the same dir");
    assert.equal(taskWorkdir(env(dir), "/elsewhere", ROOT), undefined, "started elsewhere");
    assert.equal(taskWorkdir(env(undefined), ROOT, ROOT), undefined, "no INIT_CWD");
    assert.equal(taskWorkdir(env("relative/dir"), ROOT, ROOT), undefined, "not absolute");
    assert.equal(taskWorkdir(env(`${dir}/missing`), ROOT, ROOT), undefined, "not a directory");
    assert.equal(inOwnTree(ROOT, ROOT), true);
    assert.equal(inOwnTree(`${ROOT}/core`, ROOT), true);
    assert.equal(inOwnTree(`${ROOT}-other`, ROOT), false, "a sibling with the same prefix");
    assert.equal(ownTreeWarning(dir, ROOT), undefined);
    assert.match(ownTreeWarning(`${ROOT}/core`, ROOT)!, /Coyote's own source tree/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("workdir: `deno task coyote` typed in a project works on that project, without a warning", async () => {
  const project = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-project-" }));
  await Deno.writeTextFile(`${project}/notes.txt`, "the project's own file\n");
  const ce = await makeCoyoteEnv();
  const ms = await startModelServer({
    script: [
      { tool_calls: [{ name: "fs_read", arguments: { path: "notes.txt" } }] },
      { text: "read it" },
    ],
  });
  try {
    const env = childEnv(ce, { baseURL: ms.baseURL });
    // `deno task` itself: run from the project, with Coyote's deno.json named by --config.
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "task",
        "--quiet",
        "--config",
        `${ROOT}/deno.json`,
        "coyote",
        "--headless",
        "--output-format",
        "stream-json",
        "read notes.txt",
      ],
      cwd: project,
      env,
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(out.stdout);
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, stderr);
    const init = parseJsonLines(stdout).find((l) => l.type === "init");
    assert.equal(init?.cwd, project, "the workspace is where the task was typed");
    assert.match(stdout, /the project's own file/, "fs_read read the project's file");
    assert.doesNotMatch(stderr, /own source tree/);
  } finally {
    await ms.close();
    await ce.cleanup();
    await Deno.remove(project, { recursive: true });
  }
});

Deno.test("workdir: a run inside Coyote's own clone warns on stderr", async () => {
  const ce = await makeCoyoteEnv();
  const ms = await startModelServer({ script: [{ text: "hello" }] });
  try {
    const r = await runCoyote(["--headless", "say hello"], {
      cwd: `${ROOT}/docs`,
      env: childEnv(ce, { baseURL: ms.baseURL }),
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /warning: the workspace is Coyote's own source tree \(.*\/docs\)/);
    assert.match(r.stdout, /hello/);
  } finally {
    await ms.close();
    await ce.cleanup();
  }
});

Deno.test("workdir: `deno task install` puts a `coyote` on PATH with the coyote task's permissions", async () => {
  const root = await Deno.makeTempDir({ prefix: "coyote-install-" });
  const denoJson = JSON.parse(await Deno.readTextFile(`${ROOT}/deno.json`));
  const flags = (task: string) =>
    task.split(/\s+/).filter((w) => w.startsWith("--allow") || w === "--no-prompt").sort();
  try {
    // The task builds the start bundle first (its own flags), then `deno install`s main.ts.
    const install = String(denoJson.tasks.install).split("&&").find((p) => p.includes(" install "));
    assert.ok(install, denoJson.tasks.install);
    assert.deepEqual(flags(install), flags(denoJson.tasks.coyote));
    // DENO_INSTALL_ROOT: where `deno install -g` puts bin/ (here a temp folder, not ~/.deno).
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["task", "--quiet", "--config", `${ROOT}/deno.json`, "install"],
      cwd: root,
      env: { DENO_INSTALL_ROOT: root, DENO_NO_UPDATE_CHECK: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const v = await new Deno.Command(`${root}/bin/coyote`, {
      args: ["--version"],
      cwd: root,
      stdout: "piped",
    }).output();
    assert.match(new TextDecoder().decode(v.stdout), /^coyote \d+\.\d+\.\d+ \(deno /);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
