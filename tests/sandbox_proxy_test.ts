/**
 * The sandbox's network filter (core/policy/sandbox/netproxy.ts): with a `Net(127.0.0.1)` allow rule, a
 * sandboxed command reaches that host only through Coyote's proxy — plain HTTP and CONNECT
 * tunnels — while another host (127.0.0.2, a second server on this machine) is refused with 403,
 * and raw connections or requests that bypass the proxy have no route at all. The commands run
 * through the exec runner with the session sandbox directly: the guard is not involved, so the
 * boundary alone is tested.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Policy } from "../core/policy/policy.ts";
import { CommandSandbox, detectBackend } from "../core/policy/sandbox/mod.ts";
import { requestTarget } from "../core/policy/sandbox/netproxy.ts";
import { runCommand } from "../plugins/exec/mod.ts";

Deno.test("netproxy: request targets (CONNECT, absolute http URLs, refusals)", () => {
  assert.deepEqual(requestTarget("CONNECT example.com:443 HTTP/1.1"), {
    connect: true,
    host: "example.com",
    port: 443,
  });
  assert.deepEqual(requestTarget("CONNECT [::1]:8443 HTTP/1.1"), {
    connect: true,
    host: "::1",
    port: 8443,
  });
  assert.deepEqual(requestTarget("GET http://Example.com/a?b HTTP/1.1"), {
    connect: false,
    host: "example.com",
    port: 80,
  });
  assert.ok("error" in requestTarget("GET /relative HTTP/1.1"));
  assert.ok("error" in requestTarget("GET ftp://x/ HTTP/1.1"));
  assert.ok("error" in requestTarget("CONNECT x:99999 HTTP/1.1"));
});

Deno.test("sandbox network: Net-allowed hosts only, through the proxy; everything else has no route", async () => {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed (.ci/run installs bubblewrap)");
  const root = await Deno.makeTempDir({ prefix: "coyote-netproxy-" });
  const ws = join(root, "ws");
  await Deno.mkdir(ws);
  const allowed = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("allowed-body"),
  );
  const other = Deno.serve(
    { hostname: "127.0.0.2", port: 0, onListen() {} },
    () => new Response("other-body"),
  );
  const p1 = allowed.addr.port, p2 = other.addr.port;
  const policy = Policy.create({}, { allow: ["Net(127.0.0.1)"], deny: [] }, {
    workspace: ws,
    configDir: join(root, "cfg"),
    dataDir: join(root, "data"),
  });
  const sb = await CommandSandbox.create(policy, { mode: "required", autoAllow: true });
  const run = async (command: string) => {
    const o = await runCommand(command, {
      cwd: ws,
      timeoutMs: 20_000,
      signal: new AbortController().signal,
      launcher: sb,
    });
    assert.equal(o.sandboxed, true);
    return o;
  };
  try {
    assert.match(sb.status.reason, /network filtered/);
    const ok = await run(`curl -s --max-time 5 http://127.0.0.1:${p1}/`);
    assert.equal(ok.stdout, "allowed-body", ok.stderr);
    const tunnel = await run(`curl -s --max-time 5 -p http://127.0.0.1:${p1}/`);
    assert.equal(tunnel.stdout, "allowed-body", tunnel.stderr);
    const refused = await run(
      `curl -s --max-time 5 -o /dev/null -w '%{http_code}' http://127.0.0.2:${p2}/`,
    );
    assert.equal(refused.stdout, "403");
    const refusedTunnel = await run(`curl -s --max-time 5 -p http://127.0.0.2:${p2}/`);
    assert.notEqual(refusedTunnel.exitCode, 0);
    assert.equal(refusedTunnel.stdout.includes("other-body"), false);
    const bypass = await run(`curl -s --max-time 3 --noproxy '*' http://127.0.0.1:${p1}/`);
    assert.notEqual(bypass.exitCode, 0, "a request around the proxy has no route");
    const raw = await run(
      `(echo > /dev/tcp/127.0.0.1/${p1}) 2>/dev/null && echo OPEN || echo CLOSED; ` +
        `(echo > /dev/tcp/127.0.0.2/${p2}) 2>/dev/null && echo OPEN || echo CLOSED`,
    );
    assert.equal(raw.stdout.trim(), "CLOSED\nCLOSED");
    // A command's own `wait` does not wait for the proxy bridge.
    const waited = await run("sleep 0.1 & wait; echo done");
    assert.equal(waited.stdout.trim(), "done");
  } finally {
    sb.close();
    await allowed.shutdown();
    await other.shutdown();
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
});
