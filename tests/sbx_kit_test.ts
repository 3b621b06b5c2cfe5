/**
 * The sandbox kits in sbx-kit/: valid against the documented kit spec v2 fields (unknown fields
 * rejected, as `sbx kit validate` does; every credential injection domain allow-listed), and the
 * headless kit's entry line run literally — the `sandbox.entrypoint` argv, with `coyote` on PATH
 * running main.ts under the coyote task's flags — in a temp workspace against the scripted model,
 * once with COYOTE_HEADLESS_PROMPT and once with COYOTE_PROMPT_FILE.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { Validator } from "@cfworker/json-schema";
import schema from "./fixtures/sbx/kit-v2.schema.json" with { type: "json" };
import { coyoteCommand, makeCoyoteEnv, parseJsonLines, REPO_ROOT } from "./support/run_coyote.ts";
import { startModelServer } from "./support/model_server.ts";

const KITS = ["coyote", "coyote-headless"];

async function loadKit(name: string): Promise<Record<string, unknown>> {
  return parseYaml(await Deno.readTextFile(join(REPO_ROOT, "sbx-kit", name, "spec.yaml")));
}

function validate(spec: unknown): string[] {
  const v = new Validator(schema as never, "2020-12", false);
  const r = v.validate(spec);
  return r.valid ? [] : r.errors.map((e) => `${e.instanceLocation}: ${e.error}`);
}

Deno.test("sbx kits: both are valid kit spec v2 with every injection domain allow-listed", async () => {
  for (const name of KITS) {
    const spec = await loadKit(name);
    assert.deepEqual(validate(spec), [], `sbx-kit/${name}/spec.yaml`);
    assert.equal(spec.name, name, "the kit's name is its folder's");
    const allow = (spec.permissions as { network: { allow: string[] } }).network.allow;
    for (const c of spec.credentials as { apiKey?: { inject?: { domain: string }[] } }[]) {
      for (const i of c.apiKey?.inject ?? []) assert.ok(allow.includes(i.domain), i.domain);
    }
  }
});

Deno.test("sbx kits: the schema rejects what sbx rejects (unknown fields, v1 fields, a profiles key)", async () => {
  const spec = await loadKit("coyote-headless");
  const bad: [string, Record<string, unknown>][] = [
    ["profiles", { ...spec, profiles: { headless: {} } }],
    ["v1 network block", { ...spec, network: { allowedDomains: ["x"] } }],
    ["schemaVersion 1", { ...spec, schemaVersion: "1" }],
    ["typo in sandbox", { ...spec, sandbox: { ...(spec.sandbox as object), entrypont: ["x"] } }],
    ["mixin with a sandbox block", { ...spec, kind: "mixin" }],
    ["reserved variable", { ...spec, environment: { variables: { SBX_FOO: "1" } } }],
  ];
  for (const [what, s] of bad) assert.notDeepEqual(validate(s), [], what);
});

Deno.test("sbx kits: the headless entry runs literally with a prompt, with a prompt file, and says only the usage error with neither", async () => {
  const spec = await loadKit("coyote-headless");
  const entry = (spec.sandbox as { entrypoint: string[] }).entrypoint;
  const env = await makeCoyoteEnv();
  const work = await Deno.makeTempDir({ prefix: "coyote-kit-ws-" });
  const bin = await Deno.makeTempDir({ prefix: "coyote-kit-bin-" });
  const server = await startModelServer({
    script: (req) => {
      const msgs = (req.body as { messages: { role: string; content: string }[] }).messages;
      const user = msgs.filter((m) => m.role === "user").at(-1)!.content;
      return { text: `heard: ${user}` };
    },
  });
  try {
    // `coyote` on PATH = main.ts under exactly the coyote task's flags.
    const { cmd, args } = coyoteCommand([]);
    const quoted = [cmd, ...args].map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(" ");
    await Deno.writeTextFile(join(bin, "coyote"), `#!/bin/sh\nexec ${quoted} "$@"\n`, {
      mode: 0o755,
    });
    await Deno.writeTextFile(join(work, "prompt.txt"), "-from the file");
    const base: Record<string, string> = {
      PATH: `${bin}:/usr/bin:/bin`,
      HOME: work,
      DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`,
      COYOTE_CONFIG_DIR: env.configDir,
      COYOTE_DATA_DIR: env.dataDir,
      OPENAI_BASE_URL: server.baseURL,
      COYOTE_MODEL: "scripted",
      COYOTE_HEADLESS_AGENT: "coyote",
      ...(spec.environment as { variables: Record<string, string> }).variables,
    };
    for (
      const [extra, heard] of [
        [{ COYOTE_HEADLESS_PROMPT: "literal request" }, "literal request"],
        [{ COYOTE_PROMPT_FILE: join(work, "prompt.txt") }, "-from the file"],
      ] as const
    ) {
      const out = await new Deno.Command(entry[0], {
        args: entry.slice(1),
        cwd: work,
        clearEnv: true,
        env: { ...base, ...extra },
        stdin: "piped", // held open and never written: the entry's </dev/null must not wait on it
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const res = await out.output();
      const stderr = new TextDecoder().decode(res.stderr);
      assert.equal(res.code, 0, stderr);
      const lines = parseJsonLines(new TextDecoder().decode(res.stdout));
      assert.equal(lines[0].type, "init");
      const result = lines.at(-1)!;
      assert.equal(result.type, "result");
      assert.equal(result.text, `heard: ${heard}`);
    }
    // Neither variable set: Coyote's usage error alone, no `cat` complaint about an empty path.
    const none = await new Deno.Command(entry[0], {
      args: entry.slice(1),
      cwd: work,
      clearEnv: true,
      env: base,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const noneErr = new TextDecoder().decode(none.stderr);
    assert.equal(none.code, 2, noneErr);
    assert.doesNotMatch(noneErr, /cat:|No such file/, noneErr);
    assert.match(noneErr, /prompt/i, noneErr);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(work, { recursive: true });
    await Deno.remove(bin, { recursive: true });
  }
});
