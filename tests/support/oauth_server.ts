/**
 * A loopback OAuth 2.1 authorization server and an MCP server protected by it, written for
 * tests/mcp_oauth_test.ts (two `Deno.serve` listeners on 127.0.0.1, ephemeral ports):
 *
 * Authorization server (`asUrl`):
 * - `GET /.well-known/oauth-authorization-server` (RFC 8414): endpoints, `code` only, PKCE
 *   `S256` only, public clients (`none`).
 * - `POST /register` (RFC 7591): any JSON client metadata with `redirect_uris` → a new `client_id`.
 * - `GET /authorize`: checks `client_id`, an exact registered `redirect_uri`, `response_type=code`,
 *   `code_challenge_method=S256`; answers 302 to `redirect_uri?code=…&state=…` at once (the test's
 *   "browser" is a `fetch` of the printed URL that follows the redirect).
 * - `POST /token`: `authorization_code` (one use, same client and `redirect_uri`, PKCE verified:
 *   `BASE64URL(SHA256(code_verifier)) == code_challenge`, else `invalid_grant`) and
 *   `refresh_token` (rotated). Access tokens last `expiresIn` seconds (server side too).
 *
 * MCP server (`mcpUrl`, `/mcp`, Streamable HTTP with JSON responses): every POST needs
 * `Authorization: Bearer <live access token>`, else 401 with
 * `WWW-Authenticate: Bearer resource_metadata="…"` (unless `wwwAuthenticate: false`); RFC 9728
 * metadata at `/.well-known/oauth-protected-resource/mcp`. One tool, `whoami`, answering
 * `"authorized as <client_id>"`. `requireAuth: false` makes a plain server (no OAuth at all);
 * `noMetadata: true` a server that answers 401 and publishes no metadata.
 * @module
 */

export interface OAuthTestServer {
  asUrl: string;
  mcpUrl: string;
  /** Every access token issued so far (to look for them in files and output). */
  issuedAccessTokens: string[];
  issuedRefreshTokens: string[];
  /** Counters of what was asked. */
  counts: { register: number; authorize: number; code: number; refresh: number; mcp401: number };
  /** Token endpoint errors, in order (e.g. `invalid_grant: PKCE verification failed`). */
  tokenErrors: string[];
  /** Makes every live access token invalid (as if expired), refresh tokens stay valid. */
  expireAccessTokens(): void;
  close(): Promise<void>;
}

export interface OAuthTestServerOptions {
  /** Send `WWW-Authenticate: Bearer resource_metadata=…` with the 401 (default true). */
  wwwAuthenticate?: boolean;
  /** false: a plain MCP server, no OAuth (default true). */
  requireAuth?: boolean;
  /** 401 without any OAuth metadata. */
  noMetadata?: boolean;
  /** Access-token lifetime in seconds (default 3600). */
  expiresIn?: number;
}

function b64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(
    /=+$/,
    "",
  );
}

function rand(prefix: string): string {
  return prefix + b64url(crypto.getRandomValues(new Uint8Array(18)));
}

async function s256(verifier: string): Promise<string> {
  return b64url(
    new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))),
  );
}

const oauthError = (error: string, description: string, status = 400) =>
  Response.json({ error, error_description: description }, { status });

/** Starts both servers (see the module doc). */
export function startOAuthTestServer(opts: OAuthTestServerOptions = {}): OAuthTestServer {
  const clients = new Map<string, { redirect_uris: string[] }>();
  const codes = new Map<
    string,
    { client_id: string; redirect_uri: string; challenge: string; used: boolean }
  >();
  const access = new Map<string, { client_id: string; expires: number }>();
  const refresh = new Map<string, { client_id: string }>();
  const issuedAccessTokens: string[] = [];
  const issuedRefreshTokens: string[] = [];
  const counts = { register: 0, authorize: 0, code: 0, refresh: 0, mcp401: 0 };
  const tokenErrors: string[] = [];
  const expiresIn = opts.expiresIn ?? 3600;

  const issue = (client_id: string) => {
    const at = rand("at_");
    const rt = rand("rt_");
    access.set(at, { client_id, expires: Date.now() + expiresIn * 1000 });
    refresh.set(rt, { client_id });
    issuedAccessTokens.push(at);
    issuedRefreshTokens.push(rt);
    return Response.json({
      access_token: at,
      token_type: "Bearer",
      expires_in: expiresIn,
      refresh_token: rt,
    }, { headers: { "cache-control": "no-store" } });
  };
  const tokenError = (error: string, description: string) => {
    tokenErrors.push(`${error}: ${description}`);
    return oauthError(error, description);
  };

  const as: Deno.HttpServer<Deno.NetAddr> = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen() {},
  }, async (req): Promise<Response> => {
    const u = new URL(req.url);
    const base: string = `http://127.0.0.1:${as.addr.port}`;
    if (u.pathname === "/.well-known/oauth-authorization-server") {
      return Response.json({
        issuer: base,
        authorization_endpoint: `${base}/authorize`,
        token_endpoint: `${base}/token`,
        registration_endpoint: `${base}/register`,
        response_types_supported: ["code"],
        grant_types_supported: ["authorization_code", "refresh_token"],
        code_challenge_methods_supported: ["S256"],
        token_endpoint_auth_methods_supported: ["none"],
      });
    }
    if (u.pathname === "/register" && req.method === "POST") {
      counts.register++;
      const meta = await req.json().catch(() => null);
      if (!meta || !Array.isArray(meta.redirect_uris) || meta.redirect_uris.length === 0) {
        return oauthError("invalid_redirect_uri", "redirect_uris is required");
      }
      const client_id = rand("client_");
      clients.set(client_id, { redirect_uris: meta.redirect_uris });
      return Response.json({
        ...meta,
        client_id,
        client_id_issued_at: Math.floor(Date.now() / 1000),
      }, { status: 201 });
    }
    if (u.pathname === "/authorize") {
      counts.authorize++;
      const q = u.searchParams;
      const client = clients.get(q.get("client_id") ?? "");
      const redirect = q.get("redirect_uri") ?? "";
      if (!client) return new Response("unknown client_id", { status: 400 });
      if (!client.redirect_uris.includes(redirect)) {
        return new Response("redirect_uri not registered", { status: 400 });
      }
      if (q.get("response_type") !== "code") return new Response("code only", { status: 400 });
      if (q.get("code_challenge_method") !== "S256" || !q.get("code_challenge")) {
        return new Response("PKCE S256 required", { status: 400 });
      }
      const code = rand("code_");
      codes.set(code, {
        client_id: q.get("client_id")!,
        redirect_uri: redirect,
        challenge: q.get("code_challenge")!,
        used: false,
      });
      const to = new URL(redirect);
      to.searchParams.set("code", code);
      if (q.has("state")) to.searchParams.set("state", q.get("state")!);
      return new Response(null, { status: 302, headers: { location: to.href } });
    }
    if (u.pathname === "/token" && req.method === "POST") {
      const f = new URLSearchParams(await req.text());
      const grant = f.get("grant_type");
      if (grant === "authorization_code") {
        const c = codes.get(f.get("code") ?? "");
        if (!c || c.used) return tokenError("invalid_grant", "unknown or used code");
        if (c.client_id !== f.get("client_id")) return tokenError("invalid_grant", "wrong client");
        if (c.redirect_uri !== f.get("redirect_uri")) {
          return tokenError("invalid_grant", "redirect_uri differs");
        }
        if (await s256(f.get("code_verifier") ?? "") !== c.challenge) {
          return tokenError("invalid_grant", "PKCE verification failed");
        }
        c.used = true;
        counts.code++;
        return issue(c.client_id);
      }
      if (grant === "refresh_token") {
        const r = refresh.get(f.get("refresh_token") ?? "");
        if (!r || r.client_id !== f.get("client_id")) {
          return tokenError("invalid_grant", "unknown refresh token");
        }
        refresh.delete(f.get("refresh_token")!);
        counts.refresh++;
        return issue(r.client_id);
      }
      return tokenError("unsupported_grant_type", String(grant));
    }
    return new Response("not found", { status: 404 });
  });

  const mcp: Deno.HttpServer<Deno.NetAddr> = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen() {},
  }, async (req): Promise<Response> => {
    const u = new URL(req.url);
    const base: string = `http://127.0.0.1:${mcp.addr.port}`;
    const prm = `${base}/.well-known/oauth-protected-resource/mcp`;
    if (u.pathname === "/.well-known/oauth-protected-resource/mcp" && !opts.noMetadata) {
      return Response.json({
        resource: `${base}/mcp`,
        authorization_servers: [`http://127.0.0.1:${as.addr.port}`],
        bearer_methods_supported: ["header"],
      });
    }
    if (u.pathname !== "/mcp") return new Response("not found", { status: 404 });
    let client_id = "anonymous";
    if (opts.requireAuth !== false) {
      const m = /^Bearer (.+)$/.exec(req.headers.get("authorization") ?? "");
      const tok = m ? access.get(m[1]) : undefined;
      if (!tok || tok.expires <= Date.now()) {
        counts.mcp401++;
        await req.body?.cancel();
        const headers: Record<string, string> = {};
        if (opts.wwwAuthenticate !== false && !opts.noMetadata) {
          headers["www-authenticate"] = `Bearer resource_metadata="${prm}"`;
        } else headers["www-authenticate"] = "Bearer";
        return new Response("unauthorized", { status: 401, headers });
      }
      client_id = tok.client_id;
    }
    if (req.method === "GET") return new Response(null, { status: 405 });
    if (req.method === "DELETE") return new Response(null, { status: 200 });
    const msg = await req.json();
    if (!("id" in msg)) return new Response(null, { status: 202 });
    const result = msg.method === "initialize"
      ? {
        protocolVersion: msg.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "oauth-test", version: "1" },
      }
      : msg.method === "tools/list"
      ? {
        tools: [{
          name: "whoami",
          description: "who the caller is",
          inputSchema: { type: "object", properties: {} },
        }],
      }
      : msg.method === "tools/call"
      ? { content: [{ type: "text", text: `authorized as ${client_id}` }] }
      : undefined;
    if (!result) {
      return Response.json({
        jsonrpc: "2.0",
        id: msg.id,
        error: { code: -32601, message: "no such method" },
      });
    }
    return Response.json({ jsonrpc: "2.0", id: msg.id, result });
  });

  return {
    asUrl: `http://127.0.0.1:${as.addr.port}`,
    mcpUrl: `http://127.0.0.1:${mcp.addr.port}/mcp`,
    issuedAccessTokens,
    issuedRefreshTokens,
    counts,
    tokenErrors,
    expireAccessTokens() {
      for (const t of access.values()) t.expires = 0;
    },
    async close() {
      await Promise.all([as.shutdown(), mcp.shutdown()]);
    },
  };
}
