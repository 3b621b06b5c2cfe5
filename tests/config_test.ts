import assert from "node:assert/strict";
import {
  DEFAULT_BASE_URL,
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  loadConfig,
  PLACEHOLDER_API_KEY,
  resolveDirs,
  resolveProvider,
} from "../core/config/config.ts";
import { ConfigError } from "../core/protocol/errors.ts";

function env(vars: Record<string, string>) {
  return { get: (k: string) => vars[k] };
}

async function withConfig(text: string | null, fn: (dir: string, path: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "coyote-config-" });
  try {
    if (text !== null) await Deno.writeTextFile(`${dir}/config.yaml`, text);
    await fn(dir, `${dir}/config.yaml`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function configError(dir: string): Promise<string> {
  try {
    await loadConfig(dir);
  } catch (e) {
    assert.ok(e instanceof ConfigError, `expected ConfigError, got ${e}`);
    return e.message;
  }
  assert.fail("expected a ConfigError");
}

Deno.test("resolveDirs: COYOTE_* > XDG_* > HOME defaults", () => {
  assert.deepEqual(resolveDirs(env({ HOME: "/home/u" })), {
    configDir: "/home/u/.config/coyote",
    dataDir: "/home/u/.local/share/coyote",
  });
  assert.deepEqual(
    resolveDirs(env({ HOME: "/home/u", XDG_CONFIG_HOME: "/xc", XDG_DATA_HOME: "/xd/" })),
    { configDir: "/xc/coyote", dataDir: "/xd/coyote" },
  );
  assert.deepEqual(
    resolveDirs(env({
      HOME: "/home/u",
      XDG_CONFIG_HOME: "/xc",
      XDG_DATA_HOME: "/xd",
      COYOTE_CONFIG_DIR: "/cc",
      COYOTE_DATA_DIR: "/cd",
    })),
    { configDir: "/cc", dataDir: "/cd" },
  );
  // empty variables count as unset
  assert.deepEqual(resolveDirs(env({ HOME: "/h", COYOTE_CONFIG_DIR: "", XDG_DATA_HOME: "" })), {
    configDir: "/h/.config/coyote",
    dataDir: "/h/.local/share/coyote",
  });
});

Deno.test("loadConfig: missing file is an empty config; empty file too", async () => {
  await withConfig(null, async (dir) => {
    assert.deepEqual(await loadConfig(dir), { config: {} });
  });
  await withConfig("# nothing yet\n", async (dir, path) => {
    assert.deepEqual(await loadConfig(dir), { config: {}, path });
  });
});

Deno.test("loadConfig: a full valid config", async () => {
  const text = `
model: qwen3-coder
provider:
  base_url: http://localhost:11434/v1
  api_key: sk-local
  timeout_ms: 120000
  max_retries: 0
  headers:
    X-Title: coyote
permissions:
  allow: ["Execute(npm test)"]
  ask: []
  deny: ["Execute(rm *)"]
plugins: [./my-plugin.ts]
max_turns: 40
agent: build
mcpServers:
  files:
    command: npx
    args: [-y, some-server]
instructions: [docs/STYLE.md]
`;
  await withConfig(text, async (dir, path) => {
    const { config, path: p } = await loadConfig(dir);
    assert.equal(p, path);
    assert.deepEqual(config, {
      model: "qwen3-coder",
      provider: {
        base_url: "http://localhost:11434/v1",
        api_key: "sk-local",
        timeout_ms: 120000,
        max_retries: 0,
        headers: { "X-Title": "coyote" },
      },
      permissions: { allow: ["Execute(npm test)"], ask: [], deny: ["Execute(rm *)"] },
      plugins: ["./my-plugin.ts"],
      max_turns: 40,
      agent: "build",
      mcpServers: { files: { command: "npx", args: ["-y", "some-server"] } },
      instructions: ["docs/STYLE.md"],
    });
  });
});

Deno.test("loadConfig: unknown keys are named with the file", async () => {
  await withConfig("modle: x\nprovider:\n  base_ulr: http://x\n", async (dir, path) => {
    const msg = await configError(dir);
    assert.ok(msg.startsWith(`config error in ${path}: `), msg);
    assert.match(msg, /modle: unknown key/);
    assert.match(msg, /provider\.base_ulr: unknown key/);
  });
});

Deno.test("loadConfig: an unknown key near a known one at its level gets a suggestion", async () => {
  await withConfig(
    "modle: x\nprovider:\n  base_ulr: http://x\n  modle: y\npermissions:\n  alow: []\nzzzzzz: 1\n",
    async (dir) => {
      const msg = await configError(dir);
      assert.match(msg, /(: |; )modle: unknown key \(did you mean `model`\?\)/);
      assert.match(msg, /provider\.base_ulr: unknown key \(did you mean `base_url`\?\)/);
      assert.match(msg, /provider\.modle: unknown key \(did you mean `model`\?\)/);
      assert.match(msg, /permissions\.alow: unknown key \(did you mean `allow`\?\)/);
      assert.match(msg, /zzzzzz: unknown key(;|$)/);
      assert.doesNotMatch(msg, /zzzzzz: unknown key \(/);
    },
  );
  // Only keys of the same level are suggested: `max_retries` is a provider key, not a top one.
  await withConfig("max_retrie: 2\n", async (dir) => {
    assert.doesNotMatch(await configError(dir), /did you mean/);
  });
  await withConfig("provider:\n  max_retrie: 2\n", async (dir) => {
    assert.match(
      await configError(dir),
      /max_retrie: unknown key \(did you mean `max_retries`\?\)$/,
    );
  });
});

Deno.test("loadConfig: bad values name the key path", async () => {
  const cases: [string, RegExp][] = [
    ["provider:\n  timeout_ms: -5\n", /provider\.timeout_ms: expected a positive integer$/],
    ["provider:\n  timeout_ms: 1.5\n", /provider\.timeout_ms: expected a positive integer$/],
    ["provider:\n  timeout_ms: soon\n", /provider\.timeout_ms: expected a positive integer$/],
    ["provider:\n  max_retries: 11\n", /provider\.max_retries: expected an integer from 0 to 10$/],
    ["provider:\n  base_url: ftp://x\n", /provider\.base_url: expected an http\(s\) URL/],
    ["provider:\n  headers: {a: 1}\n", /provider\.headers\.a: expected a string header value$/],
    ["permissions:\n  allow: [1]\n", /permissions\.allow\[0\]: expected a string$/],
    ["max_turns: 0\n", /max_turns: expected a positive integer$/],
    ["plugins: x\n", /plugins: expected a list of strings$/],
    ["provider: 3\n", /provider: expected a mapping$/],
    ["mcpServers:\n  x: 3\n", /mcpServers\.x: expected a mapping/],
    ["- a\n- b\n", /expected a mapping of keys at the top level/],
  ];
  for (const [text, re] of cases) {
    await withConfig(text, async (dir, path) => {
      const msg = await configError(dir);
      assert.ok(msg.startsWith(`config error in ${path}: `), msg);
      assert.match(msg, re, `for ${JSON.stringify(text)}`);
      assert.ok(!msg.includes("    at "), "no stack trace");
    });
  }
});

Deno.test("loadConfig: YAML syntax errors give the line", async () => {
  await withConfig('model: m\nprovider:\n  base_url: "http://x\n', async (dir, path) => {
    const msg = await configError(dir);
    assert.match(
      msg,
      new RegExp(`^config error in ${path}: line \\d+, column \\d+: YAML syntax error: `),
    );
  });
  await withConfig("model: m\nagent: a: b\n", async (dir) => {
    assert.match(await configError(dir), /: line 2, column \d+: YAML syntax error: /);
  });
  await withConfig("model: a\nmodel: b\n", async (dir) => {
    assert.match(
      await configError(dir),
      /line 2, column 1: YAML syntax error: Map keys must be unique/,
    );
  });
});

Deno.test("loadConfig: unreadable path is a ConfigError", async () => {
  await withConfig(null, async (dir, path) => {
    await Deno.mkdir(path);
    assert.match(await configError(dir), /is a directory/);
  });
});

Deno.test("resolveProvider: no provider at all says how to set one", () => {
  try {
    resolveProvider({
      flags: {},
      env: env({ COYOTE_MODEL: "m" }),
      config: {},
      configPath: "/cfg/config.yaml",
    });
    assert.fail("expected ConfigError");
  } catch (e) {
    assert.ok(e instanceof ConfigError);
    assert.match(e.message, /no model provider configured/);
    assert.match(e.message, /OPENAI_BASE_URL/);
    assert.match(e.message, /OPENAI_API_KEY/);
    assert.match(e.message, /\/cfg\/config\.yaml/);
    assert.match(e.message, /--base-url/);
  }
  assert.throws(
    () => resolveProvider({ flags: {}, env: env({ HOME: "/h", COYOTE_MODEL: "m" }), config: {} }),
    /config file \/h\/\.config\/coyote\/config\.yaml/,
  );
});

Deno.test("resolveProvider: no model is a clear error without secrets", () => {
  assert.throws(
    () =>
      resolveProvider({
        flags: {},
        env: env({ OPENAI_API_KEY: "sk-very-secret-key" }),
        config: {},
      }),
    (e: Error) => {
      assert.ok(e instanceof ConfigError);
      assert.match(e.message, /no model chosen.*-m\/--model.*COYOTE_MODEL/);
      assert.ok(!e.message.includes("sk-very-secret-key"));
      return true;
    },
  );
  assert.throws(
    () =>
      resolveProvider({
        flags: { baseURL: "localhost:8080", model: "m" },
        env: env({}),
        config: {},
      }),
    /not an http\(s\) URL/,
  );
});

Deno.test("resolveProvider: precedence flag > env > config, defaults applied", () => {
  const config = {
    model: "cfg-model",
    provider: {
      base_url: "http://cfg/v1",
      api_key: "cfg-key",
      model: "cfg-provider-model",
      timeout_ms: 1000,
      max_retries: 2,
      headers: { "x-a": "b" },
    },
  };
  const fullEnv = env({
    OPENAI_BASE_URL: "http://env/v1",
    OPENAI_API_KEY: "env-key",
    COYOTE_MODEL: "env-model",
  });
  assert.deepEqual(
    resolveProvider({
      flags: { baseURL: "http://flag/v1", apiKey: "flag-key", model: "flag-model" },
      env: fullEnv,
      config,
    }),
    {
      baseURL: "http://flag/v1",
      apiKey: "flag-key",
      model: "flag-model",
      timeoutMs: 1000,
      maxRetries: 2,
      headers: { "x-a": "b" },
    },
  );
  const fromEnv = resolveProvider({ flags: {}, env: fullEnv, config });
  assert.deepEqual([fromEnv.baseURL, fromEnv.apiKey, fromEnv.model], [
    "http://env/v1",
    "env-key",
    "env-model",
  ]);
  const fromCfg = resolveProvider({ flags: {}, env: env({}), config });
  assert.deepEqual([fromCfg.baseURL, fromCfg.apiKey, fromCfg.model], [
    "http://cfg/v1",
    "cfg-key",
    "cfg-model",
  ]);
  const providerModel = resolveProvider({
    flags: {},
    env: env({}),
    config: { provider: { base_url: "http://cfg/v1", model: "pm" } },
  });
  assert.equal(providerModel.model, "pm");
  // Local server: base URL without a key gets a placeholder key and defaults.
  assert.deepEqual(
    resolveProvider({
      flags: {},
      env: env({ OPENAI_BASE_URL: "http://localhost:11434/v1", COYOTE_MODEL: "llama" }),
      config: {},
    }),
    {
      baseURL: "http://localhost:11434/v1",
      apiKey: PLACEHOLDER_API_KEY,
      model: "llama",
      timeoutMs: DEFAULT_TIMEOUT_MS,
      maxRetries: DEFAULT_MAX_RETRIES,
    },
  );
  // Key only: OpenAI's base URL.
  assert.equal(
    resolveProvider({ flags: { model: "gpt" }, env: env({ OPENAI_API_KEY: "k" }), config: {} })
      .baseURL,
    DEFAULT_BASE_URL,
  );
});

Deno.test("the README's config example parses with the config loader, its commented keys uncommented too", async () => {
  const readme = await Deno.readTextFile(new URL("../README.md", import.meta.url));
  const section = readme.slice(readme.indexOf("\n## Configuration\n"));
  const example = section.match(/```yaml\n([\s\S]*?)```/)?.[1];
  assert.ok(example, "README.md ## Configuration has a yaml example");
  // `  # stream_options: false   # …` → `  stream_options: false   # …` (at its own indentation).
  const uncommented = example.replace(/^(\s*)# ([a-z_]+:)/gm, "$1$2");
  assert.notEqual(uncommented, example, "the example has commented keys");
  await withConfig(uncommented, async (dir) => {
    const { config } = await loadConfig(dir);
    assert.equal(config.provider?.stream_options, false);
    assert.equal(config.provider?.text_tool_calls, false);
    assert.equal(config.provider?.api_key, "...");
  });
});
