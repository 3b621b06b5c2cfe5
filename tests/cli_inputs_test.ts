/**
 * Prompt inputs (issue 10): `-f FILE` refuses binary files and files over the size cap with a
 * clear usage error (exit 2, nothing sent to the model) and attaches images only for a model
 * configured with `images: true`; workspace instructions reach the model
 * as the chain from the repository root down to the working directory, outermost first.
 * Real subprocesses of main.ts against the scripted model server, real git repositories.
 */
import assert from "node:assert/strict";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";
import { startModelServer } from "./support/model_server.ts";

/** A 1×1 PNG. */
const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);

Deno.test("-f: binary files, images for text-only models and files over 256 KiB are refused with a clear message; text files are added; images attach where the model accepts them", async () => {
  const ms = await startModelServer({ script: [{ text: "read it" }, { text: "a dot" }] });
  const ce = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir();
  try {
    const env = childEnv(ce, { baseURL: ms.baseURL });
    await Deno.writeFile(`${cwd}/data.bin`, new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 0, 0, 0, 13]));
    await Deno.writeFile(`${cwd}/logo.png`, PNG);
    await Deno.writeFile(`${cwd}/latin1.txt`, new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    await Deno.writeTextFile(`${cwd}/big.log`, "x".repeat(300 * 1024));
    await Deno.writeTextFile(`${cwd}/notes.txt`, "café notes\n");
    for (
      const [file, why] of [
        [
          "data.bin",
          /-f data\.bin is a binary file \(it contains NUL bytes\); -f adds text files only/,
        ],
        [
          "logo.png",
          /-f logo\.png is an image \(image\/png\); the model scripted is not configured to accept images \(models\.<name>\.images: true/,
        ],
        ["latin1.txt", /-f latin1\.txt is a binary file \(not valid UTF-8 text\)/],
        ["big.log", /-f big\.log is 300 KiB; -f adds files of at most 256 KiB/],
      ] as const
    ) {
      const r = await runCoyote(["--headless", "-f", file, "look"], { cwd, env });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, why);
      assert.doesNotMatch(r.stderr, /\n\s+at /, "no stack trace");
    }
    assert.equal(ms.requests.length, 0, "nothing reached the model");
    const ok = await runCoyote(["--headless", "-f", "notes.txt", "look"], { cwd, env });
    assert.equal(ok.code, 0, ok.stderr);
    // deno-lint-ignore no-explicit-any
    const user = (ms.requests[0].body as any).messages.find((m: any) => m.role === "user");
    assert.match(JSON.stringify(user.content), /<file path=\\"notes.txt\\">\\ncafé notes/);

    // A model configured with `images: true` gets the image attached (an image_url part).
    await Deno.writeTextFile(
      `${ce.configDir}/config.yaml`,
      "models:\n  scripted:\n    images: true\n",
    );
    const img = await runCoyote(["--headless", "-f", "logo.png", "what is this?"], { cwd, env });
    assert.equal(img.code, 0, img.stderr);
    // deno-lint-ignore no-explicit-any
    const u2 = (ms.requests[1].body as any).messages.find((m: any) => m.role === "user");
    const parts = JSON.stringify(u2.content);
    assert.match(parts, /what is this\?/);
    assert.ok(parts.includes(`data:image/png;base64,${btoa(String.fromCharCode(...PNG))}`), parts);
  } finally {
    await ms.close();
    await ce.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("instructions: a run in a repository subfolder sends the root-to-cwd chain, outermost first", async () => {
  const ms = await startModelServer({ script: [{ text: "ok" }] });
  const ce = await makeCoyoteEnv();
  const repo = await Deno.realPath(await Deno.makeTempDir());
  try {
    assert.ok((await new Deno.Command("git", { args: ["init", "-q", repo] }).output()).success);
    await Deno.mkdir(`${repo}/app/web`, { recursive: true });
    await Deno.writeTextFile(`${repo}/AGENTS.md`, "Use tabs. ROOT-MARK");
    await Deno.writeTextFile(`${repo}/app/web/AGENTS.md`, "Use spaces here. WEB-MARK");
    const r = await runCoyote(["--headless", "hi"], {
      cwd: `${repo}/app/web`,
      env: childEnv(ce, { baseURL: ms.baseURL }),
    });
    assert.equal(r.code, 0, r.stderr);
    // deno-lint-ignore no-explicit-any
    const system = (ms.requests[0].body as any).messages[0].content as string;
    const root = system.indexOf("ROOT-MARK");
    const web = system.indexOf("WEB-MARK");
    assert.ok(root > 0 && web > root, "both files, the root's first");
    assert.ok(system.includes(`From ${repo}/AGENTS.md:`));
  } finally {
    await ms.close();
    await ce.cleanup();
    await Deno.remove(repo, { recursive: true });
  }
});

Deno.test("deno.json: every task sets DENO_NO_UPDATE_CHECK=1, and the test harness runs main.ts with it", async () => {
  const { default: denoJson } = await import("../deno.json", { with: { type: "json" } });
  for (const [name, cmd] of Object.entries(denoJson.tasks as Record<string, string>)) {
    assert.ok(cmd.startsWith("DENO_NO_UPDATE_CHECK=1 deno "), `task ${name}: ${cmd}`);
  }
  const { coyoteTaskEnv, coyoteTaskFlags } = await import("./support/run_coyote.ts");
  assert.deepEqual(coyoteTaskEnv(), { DENO_NO_UPDATE_CHECK: "1" });
  assert.ok(coyoteTaskFlags().every((f) => f.startsWith("--")), coyoteTaskFlags().join(" "));
  const ce = await makeCoyoteEnv();
  try {
    assert.equal(childEnv(ce).DENO_NO_UPDATE_CHECK, "1");
  } finally {
    await ce.cleanup();
  }
});
