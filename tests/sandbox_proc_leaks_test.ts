/**
 * What a sandboxed command can read of the processes it sees (issue 16, leak pass item 1; core/
 * policy/sandbox/plan_file.ts): bwrap is PID 1 of the command's PID namespace, and its argv used
 * to be the whole mount plan. A command reading every /proc/<pid>/cmdline and environ on real
 * bwrap finds no mount option, no path of Coyote's empty or masked copies, no masked file's
 * token and no scrubbed secret; bwrap's own command line is `--args 4` and the command.
 */
import assert from "node:assert/strict";
import { commandWorld } from "./support/sandbox_world.ts";

const TOKEN = "ghp_0123456789abcdefghijABCDEFGHIJ0123";
const SECRET = "s3cr3t-value-of-the-test-9f2c";

Deno.test("sandbox: /proc/*/cmdline and /proc/*/environ show no mount plan, hidden path or secret", async () => {
  Deno.env.set("COYOTE_LEAK_TEST_API_TOKEN", SECRET);
  const w = await commandWorld(
    "coyote-proc-leaks-",
    `git init -q && git remote add origin 'https://bot:${TOKEN}@github.com/o/r.git'`,
  );
  try {
    // The command names nothing it looks for (its own text is PID 2's cmdline).
    const out = await w.run(
      `for d in /proc/[0-9]*; do echo "== $d"; tr '\\0' ' ' < $d/cmdline; echo; tr '\\0' '\\n' < $d/environ; done 2>&1`,
    );
    assert.match(out, /== \/proc\/1\n\S*bwrap --args 4 --chdir /, out);
    for (
      const leak of [
        "--ro-bind",
        "--tmpfs",
        "--bind",
        "coyote-empty-",
        "coyote-masked-",
        "coyote-plan-",
        TOKEN,
        SECRET,
      ]
    ) {
      assert.ok(!out.includes(leak), `${leak} visible:\n${out}`);
    }
    // The plan's descriptor was closed by bwrap: nothing to reopen.
    const fds = await w.run("ls /proc/1/fd /proc/self/fd; cat /proc/self/fd/4 2>&1 | head -c 200");
    assert.ok(!fds.includes("coyote-plan-") && !fds.includes("--ro-bind"), fds);
  } finally {
    Deno.env.delete("COYOTE_LEAK_TEST_API_TOKEN");
    await w.cleanup();
  }
});
