// `flows login`: the OAuth 2 device flow (RFC 8628) against the server's own authorization server, found
// through the API's metadata (RFC 9728, RFC 8414). The CLI registers itself there once (RFC 7591) as a
// public client and keeps the client id; every login asks for a device code for the API, shows the code and
// where to enter it, and polls at the interval the server gives, slower when told `slow_down`, until the
// first answer that is not `authorization_pending` or `slow_down`: a device code gives its tokens once, and
// the server takes a poll after that for a replay and revokes them.
import { spawn } from 'node:child_process';
import { CliError, EXIT } from './errors';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

interface Metadata {
  registration_endpoint: string;
  device_authorization_endpoint: string;
  token_endpoint: string;
  revocation_endpoint: string;
}

export interface TokenAnswer {
  access_token: string;
  refresh_token?: string;
  expires_in?: number;
}

async function request<T>(url: string, init: RequestInit): Promise<{ status: number; body: T }> {
  let res: Response;
  try {
    res = await fetch(url, init);
  } catch (err) {
    throw new CliError(`Cannot reach ${url}: ${(err as Error & { cause?: Error }).cause?.message ?? (err as Error).message}.`, EXIT.failure);
  }
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) as T };
  } catch {
    throw new CliError(`${url} answered ${res.status} without JSON; is this a Flows server?`, EXIT.failure);
  }
}

const form = (fields: Record<string, string>) => ({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });

/** What a login needs to know of a server: the API's resource indicator and its authorization server. */
export interface OAuthServer {
  resource: string;
  issuer: string;
  metadata: Metadata;
}

/**
 * Finds the server as RFC 9728 and RFC 8414 have it: the API's protected-resource metadata, at the URL the
 * CLI was given, names the API's resource indicator and the authorization server, whose own metadata is read
 * under its own name. A server reached at one URL may call itself by another (`--url http://127.0.0.1:3000`
 * for a BASE_URL of `http://localhost:3000`): it issues tokens only for the resource it names, and its
 * approval page works only under its own name.
 */
export async function discover(origin: string): Promise<OAuthServer> {
  const url = `${origin}/.well-known/oauth-protected-resource/api/v1`;
  const { status, body } = await request<{ resource?: unknown; authorization_servers?: unknown }>(url, {});
  const issuer = Array.isArray(body.authorization_servers) ? body.authorization_servers[0] : undefined;
  if (status !== 200 || typeof body.resource !== 'string' || typeof issuer !== 'string') throw new CliError(`${origin} does not describe its API (no protected-resource metadata at ${url}).`, EXIT.failure);
  const { status: found, body: metadata } = await request<Metadata & { issuer?: unknown }>(new URL('/.well-known/oauth-authorization-server', issuer).href, {});
  if (found !== 200 || metadata.issuer !== issuer || !metadata.device_authorization_endpoint) throw new CliError(`${issuer} does not describe an authorization server with the device flow.`, EXIT.failure);
  return { resource: body.resource, issuer, metadata };
}

export async function registerClient(metadata: Metadata): Promise<string> {
  const { status, body } = await request<{ client_id?: string; error_description?: string }>(metadata.registration_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'flows CLI', token_endpoint_auth_method: 'none', grant_types: [DEVICE_GRANT, 'refresh_token'], response_types: [], redirect_uris: [] }),
  });
  if (status !== 201 || !body.client_id) throw new CliError(`Registering the CLI with the server failed: ${body.error_description ?? status}.`, EXIT.failure);
  return body.client_id;
}

/** Opens `url` in the user's browser when there is one to open; a failure to is not an error. */
function openBrowser(url: string) {
  const command = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  try {
    spawn(command, [url], { stdio: 'ignore', detached: true }).on('error', () => {}).unref();
  } catch {
    // no browser here: the URL is printed
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function deviceLogin(
  metadata: Metadata,
  clientId: string,
  { scopes, resource, browser, say, waiting }: { scopes: string; resource: string; browser: boolean; say(line: string): void; waiting(done: boolean): void },
): Promise<TokenAnswer> {
  const { status, body: device } = await request<{ device_code: string; user_code: string; verification_uri: string; verification_uri_complete?: string; interval?: number; expires_in: number; error?: string; error_description?: string }>(
    metadata.device_authorization_endpoint,
    form({ client_id: clientId, scope: scopes, resource }),
  );
  if (status !== 200) throw new CliError(`The server refused to start a login: ${device.error_description ?? device.error ?? status}.`, EXIT.failure);
  const url = device.verification_uri_complete ?? device.verification_uri;
  say(`Open ${url} and check that it shows the code ${device.user_code}.`);
  if (browser) openBrowser(url);
  let interval = (device.interval ?? 5) * 1000;
  waiting(false);
  try {
    for (;;) {
      await sleep(interval);
      const { body } = await request<TokenAnswer & { error?: string }>(metadata.token_endpoint, form({ grant_type: DEVICE_GRANT, device_code: device.device_code, client_id: clientId }));
      if (body.access_token) return body;
      if (body.error === 'authorization_pending') continue;
      if (body.error === 'slow_down') {
        interval += 5000;
        continue;
      }
      if (body.error === 'access_denied') throw new CliError('The login was denied in the browser.', EXIT.failure);
      if (body.error === 'expired_token') throw new CliError('The code expired before it was approved; run `flows login` again.', EXIT.failure);
      throw new CliError(`The login failed: ${body.error ?? 'no token'}.`, EXIT.failure);
    }
  } finally {
    waiting(true);
  }
}

/** Revokes a token (RFC 7009); a server that cannot be reached leaves it to expire. */
export async function revoke(metadata: Metadata, clientId: string, token: string): Promise<void> {
  await request(metadata.revocation_endpoint, form({ token, client_id: clientId })).catch(() => {});
}
