/**
 * Where MCP OAuth credentials live: one JSON file per server URL,
 * `<data dir>/mcp-oauth/<sha256(url) first 32 hex>.json`, mode 0600 in a 0700 folder, written
 * atomically (a temp file in the same folder, then a rename). It holds the dynamic client
 * registration (RFC 7591 response, `client_information`), the tokens (`tokens`, OAuth token
 * response plus `expires_at`, ms since the epoch, computed when saved) and the discovery result
 * (`discovery`: RFC 9728 / RFC 8414 metadata, so a run need not discover again). Values the SDK
 * stamps (`issuer`) are kept unchanged, as `OAuthClientProvider` asks.
 *
 * Nothing here logs; callers never print a file's content (tokens stay out of logs and
 * transcripts). No MCP SDK import (types only).
 * @module
 */
import type {
  OAuthClientInformationMixed,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import type { OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";

/** The content of one credentials file. */
export interface StoredCredentials {
  /** The MCP server URL the file belongs to (as configured). */
  server_url: string;
  client_information?: OAuthClientInformationMixed;
  /** The token response plus `expires_at` (ms since the epoch), when `expires_in` was given. */
  tokens?: OAuthTokens & { expires_at?: number };
  discovery?: OAuthDiscoveryState;
}

/** The folder of the credentials files under the data dir. */
export function oauthDir(dataDir: string): string {
  return `${dataDir.replace(/\/+$/, "")}/mcp-oauth`;
}

/** The credentials file of `serverUrl` (one per URL, whatever the server's name). */
export async function credentialsPath(dataDir: string, serverUrl: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(serverUrl));
  const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${oauthDir(dataDir)}/${hex.slice(0, 32)}.json`;
}

/**
 * Reads the credentials of `serverUrl`; `{server_url}` alone when there is no file. A file that
 * is not JSON or belongs to another URL counts as absent (it is replaced on the next save).
 */
export async function readCredentials(
  dataDir: string,
  serverUrl: string,
): Promise<StoredCredentials> {
  const empty = { server_url: serverUrl };
  try {
    const doc = JSON.parse(await Deno.readTextFile(await credentialsPath(dataDir, serverUrl)));
    if (!doc || typeof doc !== "object" || doc.server_url !== serverUrl) return empty;
    return doc as StoredCredentials;
  } catch {
    return empty;
  }
}

/** Writes the credentials atomically with mode 0600 (folder 0700). */
export async function writeCredentials(dataDir: string, creds: StoredCredentials): Promise<void> {
  const dir = oauthDir(dataDir);
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const path = await credentialsPath(dataDir, creds.server_url);
  const tmp = `${path}.${crypto.randomUUID()}.tmp`;
  try {
    await Deno.writeTextFile(tmp, JSON.stringify(creds, null, 2) + "\n", {
      mode: 0o600,
      createNew: true,
    });
    await Deno.chmod(tmp, 0o600).catch(() => {}); // the umask cannot widen it, but be sure
    await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
}

/** Deletes the credentials file of `serverUrl`; true when there was one. */
export async function deleteCredentials(dataDir: string, serverUrl: string): Promise<boolean> {
  try {
    await Deno.remove(await credentialsPath(dataDir, serverUrl));
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}
