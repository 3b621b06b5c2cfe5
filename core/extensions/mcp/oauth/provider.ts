/**
 * Coyote's `OAuthClientProvider` (npm `@modelcontextprotocol/sdk/client/auth.js`) for one remote
 * MCP server: the MCP authorization spec as the SDK's `auth()` runs it — RFC 9728
 * protected-resource metadata (from the 401's `WWW-Authenticate: Bearer resource_metadata=…`, or
 * `/.well-known/oauth-protected-resource`), RFC 8414 authorization-server metadata, RFC 7591
 * dynamic client registration, authorization code + PKCE (S256), refresh tokens. Credentials are
 * kept by ./store.ts (data dir, mode 0600).
 *
 * Two modes:
 * - **login** (`coyote mcp login NAME`, ./login.ts): `redirectUrl` is the loopback callback
 *   `http://127.0.0.1:<port>/callback`, `state()` a random value the callback checks, and
 *   `redirectToAuthorization` hands the URL to the caller (print it, open a browser).
 * - **run** (every session): never interactive. A server without a registration or usable
 *   tokens makes `auth()` throw {@link McpAuthRequiredError} ("needs OAuth: run `coyote mcp
 *   login X`") instead of registering or waiting; an expired access token with a refresh token
 *   is refreshed by `auth()` (on the server's 401, or before connecting: {@link runAuthProvider}).
 *   A server that answers 401 but publishes no OAuth metadata gets {@link McpAuthRequiredError}
 *   with `oauth: false` (its `headers` need credentials instead).
 *
 * Loaded by ./../client.ts only for `http`/`sse` servers (dynamic import); the SDK's auth module
 * itself is loaded with the Streamable HTTP transport, which imports it.
 * @module
 */
import type {
  OAuthClientProvider,
  OAuthDiscoveryState,
} from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { resolveDirs } from "../../../config/config.ts";
import { readCredentials, type StoredCredentials, writeCredentials } from "./store.ts";

/** A run met a server that needs an interactive OAuth login first. */
export class McpAuthRequiredError extends Error {
  override name = "McpAuthRequiredError";
  /** false: the server answered 401 but publishes no OAuth metadata. */
  oauth: boolean;
  constructor(message: string, oauth = true) {
    super(message);
    this.oauth = oauth;
  }
}

/** The message of a run that needs `coyote mcp login NAME` (`why`: what was missing). */
export function needsLoginMessage(name: string, why: string, authServer?: string): string {
  return `needs OAuth${
    authServer ? ` (authorization server ${authServer})` : ""
  }: ${why}; run \`coyote mcp login ${name}\` (the server is skipped until then)`;
}

/** Options of {@link CoyoteOAuthProvider}. */
export interface ProviderOptions {
  /** The server's name in `mcpServers` (for messages). */
  name: string;
  /** The server's URL, as configured. */
  serverUrl: string;
  /** Coyote's data dir (credentials under `mcp-oauth/`). */
  dataDir: string;
  /** Login mode: the loopback redirect URL, and where the authorization URL goes. */
  login?: { redirectUrl: string; onAuthorizationUrl: (url: URL) => void | Promise<void> };
}

/** How long the refresh before connecting may take (ms). */
const REFRESH_TIMEOUT_MS = 10_000;

const PLACEHOLDER_REDIRECT = "http://127.0.0.1/callback";

/** See the module doc. Build with {@link CoyoteOAuthProvider.load}. */
export class CoyoteOAuthProvider implements OAuthClientProvider {
  private verifier?: string;
  /** Set by {@link runAuthProvider} when refreshing an expired token failed. */
  refreshFailed = false;
  /** Newer tokens from the file were taken once after a refused refresh (no loop). */
  private adopted = false;
  private readonly stateValue = randomToken();

  private constructor(private opts: ProviderOptions, private creds: StoredCredentials) {}

  /** Reads the stored credentials of `opts.serverUrl`. */
  static async load(opts: ProviderOptions): Promise<CoyoteOAuthProvider> {
    return new CoyoteOAuthProvider(opts, await readCredentials(opts.dataDir, opts.serverUrl));
  }

  /** What is stored (tokens included): for the caller's decisions, never for printing. */
  get stored(): Readonly<StoredCredentials> {
    return this.creds;
  }

  get redirectUrl(): string {
    if (this.opts.login) return this.opts.login.redirectUrl;
    const registered = (this.creds.client_information as { redirect_uris?: string[] } | undefined)
      ?.redirect_uris?.[0];
    return registered ?? PLACEHOLDER_REDIRECT;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "Coyote",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }

  /** The `state` of this login's authorization request (checked by the callback). */
  state(): string {
    return this.stateValue;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    const info = this.creds.client_information;
    if (this.opts.login) return info;
    const server = this.creds.discovery?.authorizationServerUrl;
    if (
      !this.creds.discovery?.authorizationServerMetadata && !this.creds.discovery?.resourceMetadata
    ) {
      throw new McpAuthRequiredError(
        `answered 401 Unauthorized and publishes no OAuth metadata (RFC 9728 or RFC 8414); give it credentials in its "headers" entry`,
        false,
      );
    }
    if (!info) {
      throw new McpAuthRequiredError(
        needsLoginMessage(this.opts.name, "not logged in", server),
      );
    }
    if (info.issuer && server && sameUrl(info.issuer, server) === false) {
      throw new McpAuthRequiredError(
        needsLoginMessage(this.opts.name, "its authorization server changed", server),
      );
    }
    return info;
  }

  async saveClientInformation(info: OAuthClientInformationMixed): Promise<void> {
    this.creds.client_information = info;
    await this.save();
  }

  tokens(): OAuthTokens | undefined {
    const t = this.creds.tokens;
    if (!t) return undefined;
    const { expires_at: _at, ...tokens } = t;
    return tokens;
  }

  /** True when the stored access token has expired (or does within `marginMs`). */
  expired(marginMs = 30_000): boolean {
    const at = this.creds.tokens?.expires_at;
    return typeof at === "number" && at <= Date.now() + marginMs;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    const expires_at = typeof tokens.expires_in === "number"
      ? Date.now() + tokens.expires_in * 1000
      : undefined;
    this.creds.tokens = { ...tokens, ...(expires_at ? { expires_at } : {}) };
    await this.save();
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    if (this.opts.login) return await this.opts.login.onAuthorizationUrl(url);
    const why = this.creds.tokens || this.refreshFailed
      ? "the stored token was refused and could not be refreshed"
      : "no stored token";
    throw new McpAuthRequiredError(
      needsLoginMessage(this.opts.name, why, this.creds.discovery?.authorizationServerUrl),
    );
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    if (!this.verifier) throw new Error("no PKCE code verifier: the login was not started");
    return this.verifier;
  }

  async invalidateCredentials(
    scope: "all" | "client" | "tokens" | "verifier" | "discovery",
  ): Promise<void> {
    if (scope === "tokens" && !this.opts.login) {
      // Another process (or server entry of the same URL) may have refreshed first: refresh
      // tokens rotate, so ours was refused. Take the newer tokens instead of dropping them all.
      const disk = await readCredentials(this.opts.dataDir, this.opts.serverUrl);
      const ours = this.creds.tokens?.access_token;
      if (disk.tokens && disk.tokens.access_token !== ours && !this.adopted) {
        this.adopted = true;
        this.creds.tokens = disk.tokens;
        return;
      }
    }
    if (scope === "all" || scope === "client") delete this.creds.client_information;
    if (scope === "all" || scope === "tokens") delete this.creds.tokens;
    if (scope === "all" || scope === "discovery") delete this.creds.discovery;
    if (scope === "all" || scope === "verifier") this.verifier = undefined;
    await this.save();
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    this.creds.discovery = state;
    await this.save();
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.creds.discovery;
  }

  /** Persists; a run writes nothing for a server it has no registration or tokens of. */
  private async save(): Promise<void> {
    if (!this.opts.login && !this.creds.client_information && !this.creds.tokens) return;
    await writeCredentials(this.opts.dataDir, this.creds);
  }
}

/**
 * The provider of a run for a remote server: stored credentials, never interactive. When the
 * stored access token has expired and a refresh token is stored (`dataDir` default: Coyote's,
 * `COYOTE_DATA_DIR` or XDG), it is refreshed here, before
 * the first request (`auth()`); a refresh the server refuses leaves the server to the 401 path,
 * which ends in {@link McpAuthRequiredError}. Never throws.
 */
export async function runAuthProvider(
  opts: Omit<ProviderOptions, "login" | "dataDir"> & { dataDir?: string },
): Promise<CoyoteOAuthProvider> {
  const dataDir = opts.dataDir ?? resolveDirs(Deno.env).dataDir;
  const provider = await CoyoteOAuthProvider.load({ ...opts, dataDir });
  if (provider.expired() && provider.stored.tokens?.refresh_token) {
    const { auth } = await import("@modelcontextprotocol/sdk/client/auth.js");
    try {
      // Bounded: this runs before the connection's own start-up timeout.
      const fetchFn = (u: string | URL, init?: RequestInit) =>
        fetch(u, { ...init, signal: AbortSignal.timeout(REFRESH_TIMEOUT_MS) });
      await auth(provider, { serverUrl: opts.serverUrl, fetchFn });
    } catch {
      // A refused refresh token was dropped by `auth()` (invalid_grant): the first request then
      // meets the 401 path, which throws McpAuthRequiredError; anything else is the network's.
      provider.refreshFailed = true;
    }
  }
  return provider;
}

function sameUrl(a: string, b: string): boolean {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return a === b;
  }
}

/** 32 random bytes, base64url. */
export function randomToken(): string {
  const b = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...b)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
