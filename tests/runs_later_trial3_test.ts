/**
 * Third attacker pass on issue 16, item 8 (docs/permissions.md "The OS sandbox", `RUNS_LATER` in
 * core/policy/sandbox/protected.ts): files other tools load or run on open — a root
 * `.devcontainer.json`, `opencode.jsonc`, mise's `.config/mise/` and `mise.<env>.toml`, Qwen and
 * Amazon Q settings, `.vscode/mcp.json`, `.crush.json`, `.helix/`, JetBrains `.run/*.run.xml`,
 * Emacs `.dir-locals.el`, REPL start-up files — planted by a sandboxed command are removed after
 * it, existing ones are read-only inside, and the file tools ask before writing them. Real bwrap,
 * the launcher called directly (no guard in between, as with the guard forced open).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Policy } from "../core/policy/policy.ts";
import { CommandSandbox, DEFAULT_SANDBOX, detectBackend } from "../core/policy/sandbox/mod.ts";
import { makeExecuteCommandTool } from "../plugins/exec/mod.ts";
import { runTool, toolContext } from "./support/fixtures.ts";

const exists = (p: string) => Deno.lstat(p).then(() => true, () => false);

/** Files that make a tool run code the next time the user opens or runs it. */
const PLANTED = [
  ".devcontainer.json",
  "svc/.devcontainer.json",
  "opencode.jsonc",
  ".config/mise/config.toml",
  ".config/mise.toml",
  "mise.dev.toml",
  ".mise.ci.toml",
  ".qwen/settings.json",
  ".amazonq/mcp.json",
  ".kilocode/mcp.json",
  ".vscode/mcp.json",
  ".crush.json",
  ".helix/languages.toml",
  ".run/build.run.xml",
  "sub/.run/test.run.xml",
  ".dir-locals.el",
  ".claude/hooks/fmt.sh",
  ".gitpod.yml",
  ".pdbrc",
  ".irbrc",
];

Deno.test("attack 3: auto-run files planted by a command are removed, existing ones read-only; file tools ask", async () => {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed for these tests (.ci/run installs bubblewrap)");
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-attack3-" }));
  const ws = join(root, "ws");
  for (const d of [ws, join(root, "cfg"), join(root, "home")]) {
    await Deno.mkdir(d, { recursive: true });
  }
  await new Deno.Command("git", { args: ["init", "-q", ws] }).output();
  await Deno.mkdir(join(ws, "app", ".vscode"), { recursive: true });
  await Deno.writeTextFile(join(ws, "app", ".vscode", "mcp.json"), "{}\n");
  await Deno.writeTextFile(join(ws, "app", ".dir-locals.el"), "()\n");
  const policy = Policy.create({}, { allow: [], deny: [] }, {
    workspace: ws,
    configDir: join(root, "cfg"),
    home: join(root, "home"),
  });
  const sb = await CommandSandbox.create(policy, DEFAULT_SANDBOX);
  try {
    const command = [
      ...PLANTED.map((p) => {
        const dir = p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : ".";
        return `mkdir -p ${dir} && echo 'touch /tmp/pwned' > ${p}`;
      }),
      `echo '{"servers":{"x":{"command":"sh"}}}' > app/.vscode/mcp.json`,
      `echo '((nil . ((eval . (shell-command "id")))))' > app/.dir-locals.el`,
      "mkdir -p .run && echo ok > .run/notes.txt; echo ok > mise.md; echo ok > crush.txt; echo made",
    ].join("; ");
    const r = await runTool(makeExecuteCommandTool(sb), { command }, toolContext({ cwd: ws }));
    assert.match(r.content, /made/);
    for (const p of PLANTED) {
      assert.equal(await exists(join(ws, p)), false, `${p} must not survive the command`);
    }
    assert.match(r.content, /the OS sandbox removed \d+ protected paths? the command created/);
    assert.equal(await Deno.readTextFile(join(ws, "app", ".vscode", "mcp.json")), "{}\n");
    assert.equal(await Deno.readTextFile(join(ws, "app", ".dir-locals.el")), "()\n");
    // Ordinary files with near names stay (`crush.txt`: `CRUSH.md` is Crush's instruction file, an
    // agent instruction file since the eleventh pass); a new dot-folder (`.run/`, JetBrains' run
    // configurations live there) is moved to the quarantine by the dot-entry rule and named.
    for (const p of ["mise.md", "crush.txt"]) {
      assert.equal(await Deno.readTextFile(join(ws, p)), "ok\n", p);
    }
    assert.equal(await exists(join(ws, ".run")), false, ".run is quarantined");
    assert.match(r.content, /the OS sandbox moved \d+ new dot-[^\n]*\n(?:.*\n)*\s+\.run → /);
    for (const p of [...PLANTED, "app/.vscode/mcp.json"]) {
      const v = await policy.evaluate({ type: "write", path: join(ws, p) });
      assert.equal(v.decision, "ask", `${p}: ${v.reason}`);
    }
    for (const p of ["src/mise.ts", ".run/notes.txt", "docs/helix.md", ".config/other.toml"]) {
      const v = await policy.evaluate({ type: "write", path: join(ws, p) });
      assert.equal(v.decision, "allow", `${p}: ${v.reason}`);
    }
  } finally {
    sb.close();
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
});
