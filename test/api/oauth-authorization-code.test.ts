// Authorization code with PKCE S256 through openid-client, the consent page, and what the server refuses:
// plain or missing PKCE, implicit and hybrid response types, and registrations outside the rules.
import * as oauth from 'openid-client';
import { FormSession } from '../support/form-session';
import { createOwner, sessionCookie, type TestOwner } from '../support/identity';
import { startListeningApp, type ListeningApp } from '../support/server';

const REDIRECT = 'http://127.0.0.1:9/callback';
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

let server: ListeningApp;
let owner: TestOwner;

beforeAll(async () => {
  server = await startListeningApp();
  owner = await createOwner(server.app.database.db, { tenantName: 'Acme' });
});
afterAll(() => server.close());

const register = (metadata: Record<string, unknown>) =>
  fetch(`${server.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(metadata) });

async function webClient(): Promise<oauth.Configuration> {
  return oauth.dynamicClientRegistration(
    new URL(server.url),
    { client_name: 'Acme dashboard', token_endpoint_auth_method: 'none', redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] },
    oauth.None(),
    { execute: [oauth.allowInsecureRequests] },
  );
}

/** Follows the authorization URL as the signed-in owner; returns the consent page and the session. */
async function openAuthorization(url: URL) {
  const browser = new FormSession(server.url, await sessionCookie(server.app, owner));
  const page = await browser.request(url.pathname + url.search);
  return { browser, page };
}

/** An S256 authorization URL for `scope`, with a fresh verifier and state. */
async function authorizationUrl(config: oauth.Configuration, scope: string) {
  const verifier = oauth.randomPKCECodeVerifier();
  const state = oauth.randomState();
  const url = oauth.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  return { url, verifier, state };
}

describe('authorization code with PKCE S256', () => {
  it('issues a token bound to the owner and tenant after the owner approves on the consent page', async () => {
    const config = await webClient();
    const { url, verifier, state } = await authorizationUrl(config, 'flows:read flows:write');
    const { browser, page } = await openAuthorization(url);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Authorize Acme dashboard');
    expect(page.text).toContain('flows:write');
    expect(page.text).toContain('Acme');

    const done = await browser.submit(page.text);
    if (!done.location) throw new Error(`${done.status} ${done.url}\n${done.text.slice(0, 2000)}`);
    expect(done.location).toMatch(new RegExp(`^${REDIRECT}\\?`));
    const tokens = await oauth.authorizationCodeGrant(config, new URL(done.location!), { pkceCodeVerifier: verifier, expectedState: state });
    expect(tokens.scope?.split(' ').sort()).toEqual(['flows:read', 'flows:write']);

    const me = await fetch(`${server.url}/api/v1/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(await me.json() as any).toMatchObject({ owner: { id: owner.ownerId }, tenant: { id: owner.tenantId } });
  });

  it('refuses a code redeemed with the wrong verifier', async () => {
    const config = await webClient();
    const { url, state } = await authorizationUrl(config, 'flows:read');
    const { browser, page } = await openAuthorization(url);
    const done = await browser.submit(page.text);
    await expect(
      oauth.authorizationCodeGrant(config, new URL(done.location!), { pkceCodeVerifier: oauth.randomPKCECodeVerifier(), expectedState: state }),
    ).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('sends the client access_denied when the owner presses Deny', async () => {
    const { url } = await authorizationUrl(await webClient(), 'flows:read');
    const { browser, page } = await openAuthorization(url);
    const denyForm = page.text.slice(page.text.indexOf('<form method="post" action="/interaction/') + 1);
    const done = await browser.submit(denyForm.slice(denyForm.indexOf('<form')));
    expect(new URL(done.location!).searchParams.get('error')).toBe('access_denied');
  });
});

describe('what the authorization endpoint refuses', () => {
  async function authorize(params: Record<string, string>) {
    const config = await webClient();
    const query = new URLSearchParams({ client_id: config.clientMetadata().client_id, redirect_uri: REDIRECT, scope: 'flows:read', ...params });
    const res = await fetch(`${server.url}/oauth/auth?${query}`, { redirect: 'manual' });
    const location = res.headers.get('location');
    if (!location) return `status ${res.status}`;
    // Errors of fragment-mode response types come back in the fragment.
    const url = new URL(location);
    return url.searchParams.get('error') ?? new URLSearchParams(url.hash.slice(1)).get('error');
  }
  const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

  it('refuses a request without a PKCE challenge', async () => {
    expect(await authorize({ response_type: 'code' })).toBe('invalid_request');
  });

  it('refuses plain PKCE', async () => {
    expect(await authorize({ response_type: 'code', code_challenge: challenge, code_challenge_method: 'plain' })).toBe('invalid_request');
  });

  it.each(['token', 'id_token', 'code id_token', 'code token'])('refuses response_type=%s (no implicit or hybrid)', async (responseType) => {
    expect(await authorize({ response_type: responseType, code_challenge: challenge, code_challenge_method: 'S256', nonce: 'n' })).toMatch(
      /unsupported_response_type|invalid_request|unauthorized_client/,
    );
  });

  it('advertises only S256 and the code response type in discovery', async () => {
    const res = await fetch(`${server.url}/.well-known/oauth-authorization-server`);
    const meta = await res.json() as any;
    expect(meta.code_challenge_methods_supported).toEqual(['S256']);
    expect(meta.response_types_supported).toEqual(['code']);
    expect(meta.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token', DEVICE_GRANT]));
    expect(meta.grant_types_supported).not.toContain('implicit');
    expect(meta.revocation_endpoint).toBe(`${server.url}/oauth/revoke`);
    expect(meta.introspection_endpoint).toBe(`${server.url}/oauth/introspect`);
    expect(meta.device_authorization_endpoint).toBe(`${server.url}/oauth/device_authorization`);
    expect(meta.registration_endpoint).toBe(`${server.url}/oauth/register`);
    expect(meta.token_endpoint_auth_methods_supported.sort()).toEqual(['client_secret_basic', 'client_secret_post', 'none']);
    expect(meta.revocation_endpoint_auth_methods_supported.sort()).toEqual(['client_secret_basic', 'client_secret_post', 'none']);
    expect(meta.introspection_endpoint_auth_methods_supported.sort()).toEqual(['client_secret_basic', 'client_secret_post', 'none']);
    expect(meta.pushed_authorization_request_endpoint).toBeUndefined();
    expect(meta.dpop_signing_alg_values_supported).toBeUndefined();
    expect(meta.end_session_endpoint).toBeUndefined();
    const oidc = await (await fetch(`${server.url}/.well-known/openid-configuration`)).json() as any;
    expect(oidc.issuer).toBe(server.url);
  });

  it('publishes protected-resource metadata for the API and the MCP endpoint, each at its own address', async () => {
    const api = await (await fetch(`${server.url}/.well-known/oauth-protected-resource/api/v1`)).json() as any;
    expect(api).toMatchObject({ resource: `${server.url}/api/v1`, authorization_servers: [server.url] });
    const mcp = await (await fetch(`${server.url}/.well-known/oauth-protected-resource/mcp`)).json() as any;
    expect(mcp.resource).toBe(`${server.url}/mcp`);
    const bare = await (await fetch(`${server.url}/.well-known/oauth-protected-resource`)).json() as any;
    expect(bare).toEqual(api);
  });
});

describe('dynamic client registration rules', () => {
  it('registers a public device client', async () => {
    const res = await register({ client_name: 'cli', token_endpoint_auth_method: 'none', grant_types: [DEVICE_GRANT, 'refresh_token'], response_types: [], redirect_uris: [] });
    expect(res.status).toBe(201);
    const body = await res.json() as any;
    expect(body.client_id).toMatch(/^cli_/);
    expect(body.client_secret).toBeUndefined();
  });

  it('refuses a device client that is not public', async () => {
    const res = await register({ token_endpoint_auth_method: 'client_secret_basic', grant_types: [DEVICE_GRANT], response_types: [], redirect_uris: [] });
    expect(res.status).toBe(400);
    expect(await res.json() as any).toMatchObject({ error: 'invalid_client_metadata' });
  });

  it.each([['implicit'], ['client_credentials'], ['password']])('refuses grant type %s', async (grant) => {
    const res = await register({ token_endpoint_auth_method: 'none', grant_types: [grant], redirect_uris: [REDIRECT] });
    expect(res.status).toBe(400);
    expect((await res.json() as any).error).toBe('invalid_client_metadata');
  });

  it('refuses a client name longer than 120 characters (it is shown to owners)', async () => {
    const res = await register({ client_name: 'x'.repeat(121), token_endpoint_auth_method: 'none', grant_types: [DEVICE_GRANT], response_types: [], redirect_uris: [] });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error_description: string }).error_description).toContain('client_name');
  });

  it('refuses implicit and hybrid response types', async () => {
    const res = await register({ token_endpoint_auth_method: 'none', response_types: ['code id_token'], grant_types: ['authorization_code', 'implicit'], redirect_uris: [REDIRECT] });
    expect(res.status).toBe(400);
  });
});
