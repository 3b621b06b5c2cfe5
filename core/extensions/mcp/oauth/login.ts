/**
 * `coyote mcp login NAME` / `logout NAME` for a remote MCP server (the MCP authorization spec,
 * run by the SDK's `auth()` with ./provider.ts):
 *
 * 1. A loopback listener on `127.0.0.1` (the port of the stored client registration when it is
 *    free, else a random one); the redirect URL is `http://127.0.0.1:<port>/callback`.
 * 2. A probe `initialize` POST: a 401's `WWW-Authenticate: Bearer resource_metadata=…, scope=…`
 *    names the RFC 9728 metadata and scope; without it discovery tries
 *    `/.well-known/oauth-protected-resource`. A server publishing neither RFC 9728 nor RFC 8414
 *    metadata is an error ("publishes no OAuth metadata").
 * 3. `auth()`: discovery, dynamic client registration (RFC 7591; again when the stored one was
 *    made for another port), the authorization URL with PKCE S256 and a random `state`.
 *    The URL is always printed; on a terminal a browser is opened (`xdg-open` / `open`).
 * 4. The callback must carry the same `state` (others get 400 and the wait goes on); its `code`
 *    is exchanged (`auth()` with `authorizationCode`), the tokens are stored (./store.ts, 0600)
 *    and the browser sees a page saying so. No redirect within `timeoutMs` → an error.
 *
 * Errors are thrown as `Error`s with a message for the user; no token is ever printed.
 * @module
 */
import {
  auth,
  discoverOAuthServerInfo,
  extractWWWAuthenticateParams,
} from "@modelcontextprotocol/sdk/client/auth.js";
import { CoyoteOAuthProvider } from "./provider.ts";
import { credentialsPath, deleteCredentials, readCredentials } from "./store.ts";

/** Options of {@link loginMcpServer}. */
export interface LoginOptions {
  name: string;
  serverUrl: string;
  dataDir: string;
  /** Headers of the server's entry (sent with every request of the flow). */
  headers?: Record<string, string>;
  /** How long to wait for the browser's redirect (ms). Default 300 000. */
  timeoutMs?: number;
  /** Open a browser (`xdg-open` / `open`) with the URL. Default: when stdin and stdout are terminals. */
  openBrowser?: boolean;
  /** Where the user-facing lines go (the URL among them). Default `console.log`. */
  print?: (line: string) => void;
}

/** Default wait for the redirect: five minutes. */
export const LOGIN_TIMEOUT_MS = 300_000;

function page(title: string, body: string, status = 200): Response {
  const esc = (s: string) =>
    s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);
  return new Response(
    `<!doctype html><meta charset="utf-8"><title>${esc(title)}</title><h1>${esc(title)}</h1><p>${
      esc(body)
    }</p>`,
    { status, headers: { "content-type": "text/html; charset=utf-8" } },
  );
}

function portOf(url: string | undefined): number | undefined {
  if (!url) return undefined;
  try {
    const u = new URL(url);
    return u.hostname === "127.0.0.1" && u.port ? Number(u.port) : undefined;
  } catch {
    return undefined;
  }
}

function listen(port: number, handler: Deno.ServeHandler): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve({ hostname: "127.0.0.1", port, onListen() {} }, handler);
}

/** Opens `url` in a browser when a opener program exists; failures are ignored (the URL is printed). */
async function openInBrowser(url: string): Promise<void> {
  const cmd = Deno.build.os === "darwin" ? "open" : "xdg-open";
  try {
    const child = new Deno.Command(cmd, {
      args: [url],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    await child.status;
  } catch { /* no opener: the printed URL is the way */ }
}

/** A probe `initialize` POST: what a 401 says about the metadata and scope. */
async function probe(
  serverUrl: string,
  headers: Record<string, string>,
): Promise<{ status: number; resourceMetadataUrl?: URL; scope?: string }> {
  const res = await fetch(serverUrl, {
    method: "POST",
    headers: {
      ...headers,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "coyote", version: "0.1.0" },
      },
    }),
  });
  await res.body?.cancel().catch(() => {});
  const { resourceMetadataUrl, scope } = res.status === 401
    ? extractWWWAuthenticateParams(res)
    : {};
  return { status: res.status, resourceMetadataUrl, scope };
}

/**
 * Runs the login of one remote server (see the module doc); resolves with the path of the
 * credentials file once the tokens are stored.
 */
export async function loginMcpServer(opts: LoginOptions): Promise<string> {
  const print = opts.print ?? ((l: string) => console.log(l));
  const timeoutMs = opts.timeoutMs ?? LOGIN_TIMEOUT_MS;
  const wait = timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`;
  const headers = opts.headers ?? {};
  const fetchFn = (u: string | URL, init?: RequestInit) => {
    const h = new Headers(init?.headers);
    for (const [k, v] of Object.entries(headers)) if (!h.has(k)) h.set(k, v);
    return fetch(u, { ...init, headers: h });
  };

  let resolveCode!: (code: string) => void;
  let rejectCode!: (e: Error) => void;
  const gotCode = new Promise<string>((res, rej) => {
    resolveCode = res;
    rejectCode = rej;
  });
  gotCode.catch(() => {});
  // Settles with the token exchange's outcome; the callback's page waits for it.
  let settle!: (r: "ok" | Error) => void;
  const finished = new Promise<"ok" | Error>((res) => (settle = res));
  let provider: CoyoteOAuthProvider | undefined;
  const handler = async (req: Request): Promise<Response> => {
    const u = new URL(req.url);
    if (u.pathname !== "/callback") return new Response("not found", { status: 404 });
    if (!provider || u.searchParams.get("state") !== provider.state()) {
      return page("Coyote: login refused", "The state of this redirect does not match.", 400);
    }
    const err = u.searchParams.get("error");
    const code = u.searchParams.get("code");
    if (err || !code) {
      const why = err
        ? `${err}${
          u.searchParams.get("error_description")
            ? `: ${u.searchParams.get("error_description")}`
            : ""
        }`
        : "the redirect carried no code";
      rejectCode(new Error(`the authorization server refused the login: ${why}`));
      return page("Coyote: login failed", why, 400);
    }
    resolveCode(code);
    const r = await finished;
    return r instanceof Error
      ? page("Coyote: login failed", r.message, 400)
      : page("Coyote: logged in", `You can close this window and go back to the terminal.`);
  };

  const stored = await readCredentials(opts.dataDir, opts.serverUrl);
  const oldPort = portOf(
    (stored.client_information as { redirect_uris?: string[] } | undefined)?.redirect_uris?.[0],
  );
  let server: Deno.HttpServer<Deno.NetAddr> | undefined;
  if (oldPort) {
    try {
      server = listen(oldPort, handler);
    } catch { /* taken: a new port and a new registration */ }
  }
  server ??= listen(0, handler);
  const redirectUrl = `http://127.0.0.1:${server.addr.port}/callback`;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    provider = await CoyoteOAuthProvider.load({
      name: opts.name,
      serverUrl: opts.serverUrl,
      dataDir: opts.dataDir,
      login: {
        redirectUrl,
        onAuthorizationUrl: async (url) => {
          print(`To log in to MCP server ${opts.name}, open this URL in a browser:`);
          print(`  ${url.href}`);
          print(`Waiting for the redirect to ${redirectUrl} (${wait})…`);
          const open = opts.openBrowser ?? (Deno.stdin.isTerminal() && Deno.stdout.isTerminal());
          if (open) await openInBrowser(url.href);
        },
      },
    });
    // A fresh login: old tokens go; a registration for another redirect URL goes too.
    await provider.invalidateCredentials(
      portOf(redirectUrl) === oldPort ? "tokens" : "all",
    );
    const p = await probe(opts.serverUrl, headers).catch((e) => {
      throw new Error(`cannot reach ${opts.serverUrl}: ${(e as Error).message}`);
    });
    const info = await discoverOAuthServerInfo(opts.serverUrl, {
      resourceMetadataUrl: p.resourceMetadataUrl,
      fetchFn,
    }).catch(() => undefined);
    if (!info?.resourceMetadata && !info?.authorizationServerMetadata) {
      throw new Error(
        `MCP server ${opts.name} (${opts.serverUrl}) answered ${p.status} and publishes no OAuth metadata (RFC 9728 or RFC 8414): it does not use OAuth`,
      );
    }
    await provider.saveDiscoveryState({
      ...info,
      resourceMetadataUrl: p.resourceMetadataUrl?.href,
    });
    const common = {
      serverUrl: opts.serverUrl,
      resourceMetadataUrl: p.resourceMetadataUrl,
      scope: p.scope,
      fetchFn,
    };
    const first = await auth(provider, common);
    if (first === "REDIRECT") {
      const code = await Promise.race([
        gotCode,
        new Promise<never>((_, rej) => {
          timer = setTimeout(
            () =>
              rej(
                new Error(
                  `no redirect came back within ${wait}; run \`coyote mcp login ${opts.name}\` again`,
                ),
              ),
            timeoutMs,
          );
        }),
      ]);
      const r = await auth(provider, { ...common, authorizationCode: code }).then(
        (x: string): "ok" | Error =>
          x === "AUTHORIZED" ? "ok" : new Error("the token exchange did not authorize"),
        (e: unknown): Error => e instanceof Error ? e : new Error(String(e)),
      );
      settle(r);
      if (r instanceof Error) throw new Error(`the token exchange failed: ${r.message}`);
    }
    return await credentialsPath(opts.dataDir, opts.serverUrl);
  } finally {
    clearTimeout(timer);
    settle(new Error("the login ended"));
    await server.shutdown().catch(() => {}); // graceful: the browser's page is sent first
  }
}

/** Deletes the stored tokens and client registration of `serverUrl`; false when none were stored. */
export function logoutMcpServer(dataDir: string, serverUrl: string): Promise<boolean> {
  return deleteCredentials(dataDir, serverUrl);
}
