/**
 * Keeping child processes off fd 1. In ACP and stream-json modes stdout is the protocol stream
 * (docs/acp.md), so no child may print there: core/frontends/acp/stdio.ts replaces the global
 * `Deno.Command`, and the plugin Worker bootstrap (core/extensions/plugin_host/worker_main.ts)
 * its Worker's, both with {@link stdoutToStderr}.
 * @module
 */

/**
 * Sends what a child would print on fd 1 to stderr instead. `cmd` must have been created with
 * `stdout: "piped"` (the caller's `stdout` was unset, which `spawn()` inherits, or `"inherit"`):
 *
 * - its `spawn()` is wrapped so the child's stdout is pumped to stderr, and the child's `status`
 *   settles only once that copy is done — at most 200 ms after exit, since a background
 *   grandchild may hold the pipe open — so nothing is lost when the caller exits;
 * - when `inherit` (the caller asked for `stdout: "inherit"`), its `output()` / `outputSync()`
 *   are wrapped too, so their stdout bytes are written to stderr (the result keeps them).
 *   Without it, `output()` pipes stdout by default and is left alone.
 *
 * Returns `cmd` itself, wrapped.
 *
 * Self-contained: it references nothing outside its own body but its arguments and globals
 * (`Deno`, `Promise`, `setTimeout`, …), and this module imports nothing. Its source text
 * (`stdoutToStderr.toString()`) is part of the plugin Worker's `data:` URL module (`workerSource`
 * in worker_main.ts); tests/child_stdout_test.ts checks that it runs on its own.
 */
export function stdoutToStderr(cmd: Deno.Command, inherit: boolean): Deno.Command {
  const writeAll = async (c: Uint8Array) => {
    for (let off = 0; off < c.length;) off += await Deno.stderr.write(c.subarray(off));
  };
  const spawn = cmd.spawn.bind(cmd);
  Object.defineProperty(cmd, "spawn", {
    value: () => {
      const child = spawn();
      const pumped = (async () => {
        for await (const c of child.stdout) await writeAll(c);
      })().catch(() => {});
      // `status` settles once the output is copied (at most 200 ms after exit: a background
      // grandchild may hold the pipe open), so nothing is lost when the caller exits.
      const status = child.status.then(async (st) => {
        let t: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([pumped, new Promise((r) => (t = setTimeout(r, 200)))]);
        clearTimeout(t);
        return st;
      });
      Object.defineProperty(child, "status", { value: status });
      return child;
    },
  });
  if (inherit) {
    const output = cmd.output.bind(cmd);
    const outputSync = cmd.outputSync.bind(cmd);
    Object.defineProperty(cmd, "output", {
      value: async () => {
        const r = await output();
        await writeAll(r.stdout);
        return r;
      },
    });
    Object.defineProperty(cmd, "outputSync", {
      value: () => {
        const r = outputSync();
        Deno.stderr.writeSync(r.stdout);
        return r;
      },
    });
  }
  return cmd;
}
