/**
 * The sandbox's network filter (issue 11 §1: "network is off unless `Net` rules allow hosts,
 * through the proxy"). A sandboxed command has no network of its own (`--unshare-net`); when the
 * policy allows some hosts, it reaches them only through this HTTP proxy, which Coyote runs outside
 * the sandbox on a Unix socket bound into it:
 *
 *   command ── HTTP(S)_PROXY=127.0.0.1:3128 ── socat (inside) ── unix socket ── NetProxy ── host
 *
 * Each request names its host (`CONNECT host:port` for TLS and tunnels, an absolute
 * `http://host/…` URL for plain HTTP); the proxy asks the policy (`Net(host)`) and connects only
 * when the answer is allow — ask and deny both refuse (nobody can answer mid-command), with
 * `403 Forbidden` and a one-line reason. Anything else (no host, a malformed or oversized head) is
 * `400`. Other protocols cannot leave the sandbox at all.
 * @module
 */

/** Where the proxy listens inside the sandbox's own loopback. */
export const PROXY_PORT = 3128;
/** The socket's name in the sandbox's private /tmp. */
export const SOCKET_NAME = ".coyote-net.sock";
/** Longest request head read before deciding (bytes). */
const HEAD_LIMIT = 16 * 1024;

/** Decides a host: true = allowed by a `Net` rule. */
export type HostCheck = (host: string, port: number) => Promise<boolean>;

function splitHostPort(s: string, defaultPort: number): { host: string; port: number } | null {
  const m = s.match(/^\[([^\]]+)\](?::(\d+))?$/) ?? s.match(/^([^:\s]+)(?::(\d+))?$/);
  if (!m) return null;
  const port = m[2] ? Number(m[2]) : defaultPort;
  if (!Number.isInteger(port) || port < 1 || port > 65535) return null;
  return { host: m[1].toLowerCase(), port };
}

/** The target of a request head's first line, or why it has none. */
export function requestTarget(
  line: string,
): { connect: boolean; host: string; port: number } | { error: string } {
  const [method, target] = line.split(" ");
  if (!method || !target) return { error: "malformed request line" };
  if (method.toUpperCase() === "CONNECT") {
    const hp = splitHostPort(target, 443);
    return hp ? { connect: true, ...hp } : { error: `bad CONNECT target ${target}` };
  }
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return { error: "a proxy request needs an absolute http:// URL" };
  }
  if (url.protocol !== "http:") return { error: `unsupported scheme ${url.protocol}` };
  const hp = splitHostPort(url.host, 80);
  return hp ? { connect: false, ...hp } : { error: `bad host ${url.host}` };
}

async function readHead(conn: Deno.Conn): Promise<{ head: Uint8Array; end: number } | null> {
  const buf = new Uint8Array(HEAD_LIMIT);
  let n = 0;
  while (n < buf.length) {
    const r = await conn.read(buf.subarray(n));
    if (r === null) return null;
    n += r;
    const text = new TextDecoder().decode(buf.subarray(0, n));
    const end = text.indexOf("\r\n\r\n");
    if (end >= 0) {
      return {
        head: buf.subarray(0, n),
        end: new TextEncoder().encode(text.slice(0, end + 4)).length,
      };
    }
  }
  return null;
}

async function reply(conn: Deno.Conn, status: string, why: string): Promise<void> {
  const body = `Coyote's sandbox: ${why}\n`;
  await conn.write(new TextEncoder().encode(
    `HTTP/1.1 ${status}\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
  )).catch(() => {});
}

async function pipe(a: Deno.Conn, b: Deno.Conn): Promise<void> {
  await Promise.allSettled([
    a.readable.pipeTo(b.writable).catch(() => {}),
    b.readable.pipeTo(a.writable).catch(() => {}),
  ]);
}

/** One proxy per session sandbox; see the module doc. */
export class NetProxy {
  #listener: Deno.Listener;
  #open = new Set<Deno.Conn>();
  #closed = false;

  private constructor(listener: Deno.Listener, readonly allow: HostCheck) {
    this.#listener = listener;
    void this.#serve();
  }

  /** Listens on `socketPath` (created now, synchronously). */
  static start(socketPath: string, allow: HostCheck): NetProxy {
    try {
      Deno.removeSync(socketPath);
    } catch { /* none */ }
    return new NetProxy(Deno.listen({ transport: "unix", path: socketPath }), allow);
  }

  async #serve(): Promise<void> {
    for await (const conn of this.#listener) {
      this.#open.add(conn);
      void this.#handle(conn).finally(() => {
        this.#open.delete(conn);
        try {
          conn.close();
        } catch { /* closed */ }
      });
    }
  }

  async #handle(conn: Deno.Conn): Promise<void> {
    const got = await readHead(conn).catch(() => null);
    if (!got) return await reply(conn, "400 Bad Request", "no request head (or over 16 KiB)");
    const text = new TextDecoder().decode(got.head.subarray(0, got.end));
    const t = requestTarget(text.split("\r\n")[0]);
    if ("error" in t) return await reply(conn, "400 Bad Request", t.error);
    if (!(await this.allow(t.host, t.port).catch(() => false))) {
      return await reply(conn, "403 Forbidden", `${t.host} is not allowed by a Net rule`);
    }
    let up: Deno.Conn;
    try {
      up = await Deno.connect({ hostname: t.host, port: t.port });
    } catch (e) {
      return await reply(
        conn,
        "502 Bad Gateway",
        `cannot reach ${t.host}:${t.port}: ${(e as Error).message}`,
      );
    }
    this.#open.add(up);
    try {
      if (t.connect) {
        await conn.write(new TextEncoder().encode("HTTP/1.1 200 Connection Established\r\n\r\n"));
        if (got.head.length > got.end) await up.write(got.head.subarray(got.end));
      } else {
        await up.write(got.head);
      }
      await pipe(conn, up);
    } finally {
      this.#open.delete(up);
      try {
        up.close();
      } catch { /* closed */ }
    }
  }

  /** Stops listening and drops open connections. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#listener.close();
    } catch { /* closed */ }
    for (const c of this.#open) {
      try {
        c.close();
      } catch { /* closed */ }
    }
  }
}

/**
 * The shell lines that start the bridge inside the sandbox and point the usual proxy variables
 * at it, put before the command (bash; `sh` gets a short pause instead of the readiness check).
 * The bridge is started from a subshell so the command's own `wait` never waits for it.
 */
export function proxyPrelude(shell: string): string {
  const url = `http://127.0.0.1:${PROXY_PORT}`;
  const ready = shell.endsWith("bash")
    ? `__c=0; while ! (exec 3<>/dev/tcp/127.0.0.1/${PROXY_PORT}) 2>/dev/null; do __c=$((__c+1)); [ $__c -gt 400 ] && break; sleep 0.005; done; unset __c`
    : "sleep 0.05";
  const vars = ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"]
    .map((v) => `${v}=${url}`).join(" ");
  return [
    `( socat TCP-LISTEN:${PROXY_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:/tmp/${SOCKET_NAME} >/dev/null 2>&1 & )`,
    ready,
    `export ${vars} NO_PROXY= no_proxy=`,
  ].join("\n") + "\n";
}
