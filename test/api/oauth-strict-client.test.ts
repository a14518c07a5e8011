// The authorization server and both protected resources through oauth4webapi, a client that checks what
// servers say strictly: protected-resource metadata found from a 401 (RFC 9728), discovery, scopes refused
// at the request (RFC 6749 section 5.2), revocation and introspection by a public client, a token used on
// the wrong resource, a device code polled again after its tokens came, and /device counting only codes
// that match nothing (RFC 8628 section 5.1).
import * as oauth from 'oauth4webapi';
import { FormSession } from '../support/form-session';
import { createOwner, sessionCookie, type TestOwner } from '../support/identity';
import { startListeningApp, type ListeningApp } from '../support/server';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const REDIRECT = 'http://127.0.0.1:9/callback';
const insecure = { [oauth.allowInsecureRequests]: true } as const;

let server: ListeningApp;
let owner: TestOwner;
let as: oauth.AuthorizationServer;

/** The authorization server's metadata, found and checked as oauth4webapi does (issuer equal to the URL asked). */
async function discover(issuer: string): Promise<oauth.AuthorizationServer> {
  const url = new URL(issuer);
  return oauth.processDiscoveryResponse(url, await oauth.discoveryRequest(url, { algorithm: 'oauth2', ...insecure }));
}

beforeAll(async () => {
  server = await startListeningApp();
  owner = await createOwner(server.app.database.db, { tenantName: 'Acme' });
  as = await discover(server.url);
});
afterAll(() => server.close());

async function register(metadata: Partial<oauth.OmitSymbolProperties<oauth.Client>>): Promise<oauth.Client> {
  return oauth.processDynamicClientRegistrationResponse(await oauth.dynamicClientRegistrationRequest(as, metadata, insecure)) as Promise<oauth.Client>;
}

const deviceClient = () => register({ client_name: 'strict CLI', token_endpoint_auth_method: 'none', grant_types: [DEVICE_GRANT, 'refresh_token'], response_types: [], redirect_uris: [] });

async function deviceAuthorization(client: oauth.Client, parameters: Record<string, string>) {
  return oauth.processDeviceAuthorizationResponse(as, client, await oauth.deviceAuthorizationRequest(as, client, oauth.None(), parameters, insecure));
}

const pollOnce = async (client: oauth.Client, deviceCode: string) =>
  oauth.processDeviceCodeResponse(as, client, await oauth.deviceCodeGrantRequest(as, client, oauth.None(), deviceCode, insecure));

/** The signed-in owner opens the verification URI and presses Approve. */
async function approve(device: oauth.DeviceAuthorizationResponse) {
  const session = new FormSession(server.url, await sessionCookie(server.app, owner));
  const confirm = await session.request(device.verification_uri_complete!);
  expect(confirm.text).toContain('Approve a device');
  const done = await session.submit(confirm.text, {}, 'op.deviceConfirmForm');
  expect(done.text).toContain('Device approved');
}

/** Tokens from a whole device flow: asked, approved, and one poll after the approval. */
async function deviceTokens(client: oauth.Client, parameters: Record<string, string>) {
  const device = await deviceAuthorization(client, parameters);
  await approve(device);
  return { device, tokens: await pollOnce(client, device.device_code) };
}

/** What a strict client makes of an error answer: the OAuth error it carries. */
async function oauthError(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (err) {
    if (err instanceof oauth.ResponseBodyError || err instanceof oauth.AuthorizationResponseError) return { error: err.error, description: err.error_description };
    throw err;
  }
  throw new Error('expected an OAuth error');
}

/** The Bearer challenge of a protected resource's 401, as oauth4webapi parses it. */
async function challengeOf(url: string, token: string, method = 'GET') {
  try {
    await oauth.protectedResourceRequest(token, method, new URL(url), new Headers({ 'content-type': 'application/json', accept: 'application/json, text/event-stream' }), method === 'POST' ? '{}' : undefined, insecure);
  } catch (err) {
    if (!(err instanceof oauth.WWWAuthenticateChallengeError)) throw err;
    const bearer = err.cause.find((challenge) => challenge.scheme === 'bearer');
    return { parameters: bearer!.parameters, status: err.response.status, body: (await err.response.json()) as { error: { code: string; message: string } } };
  }
  throw new Error(`expected a challenge from ${url}`);
}

const callApi = (token: string) => fetch(`${server.url}/api/v1/me`, { headers: { authorization: `Bearer ${token}` } });

describe('protected-resource metadata found from a 401', () => {
  it.each([
    ['the API', '/api/v1', 'GET', '/api/v1/me'],
    ['the MCP endpoint', '/mcp', 'POST', '/mcp'],
  ])('leads a strict client from %s to its metadata and the authorization server', async (_name, path, method, called) => {
    const resource = new URL(path, server.url);
    const challenge = await challengeOf(new URL(called, server.url).href, 'made-up-token', method);
    expect(challenge.status).toBe(401);
    // The challenge names the document RFC 9728 places for this resource, and its `resource` is this one.
    const response = await oauth.resourceDiscoveryRequest(resource, insecure);
    expect(challenge.parameters.resource_metadata).toBe(response.url);
    const metadata = await oauth.processResourceDiscoveryResponse(resource, response);
    expect(metadata.resource).toBe(resource.href);
    expect(metadata.scopes_supported).toEqual(['flows:read', 'flows:write', 'runs:read', 'runs:write']);
    expect(metadata.authorization_servers).toEqual([server.url]);
    expect((await discover(metadata.authorization_servers![0])).issuer).toBe(server.url);
  });

  it('keeps the bare document for clients that read it before, describing the API', async () => {
    const bare = (await (await fetch(`${server.url}/.well-known/oauth-protected-resource`)).json()) as { resource: string };
    expect(bare.resource).toBe(`${server.url}/api/v1`);
  });
});

describe('scopes the server does not offer', () => {
  it('refuses one at the device authorization request with invalid_scope, before any code exists', async () => {
    const client = await deviceClient();
    const before = await server.app.database.db.oidcPayload.count({ where: { type: 'DeviceCode' } });
    const refused = await oauthError(deviceAuthorization(client, { scope: 'flows:read flows:admin' }));
    expect(refused.error).toBe('invalid_scope');
    expect(refused.description).toContain('flows:admin');
    expect(await server.app.database.db.oidcPayload.count({ where: { type: 'DeviceCode' } })).toBe(before);
    // The scopes it offers still go through, with offline_access.
    expect((await deviceAuthorization(client, { scope: 'flows:read runs:read offline_access' })).user_code).toMatch(/^[A-Z]{4}-[A-Z]{4}$/);
  });

  it('refuses one at the authorization request by sending the client back with invalid_scope', async () => {
    const client = await register({ client_name: 'strict web app', token_endpoint_auth_method: 'none', redirect_uris: [REDIRECT], grant_types: ['authorization_code'], response_types: ['code'] });
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'flows:read flows:admin',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
      code_challenge_method: 'S256',
    }).toString();
    const res = await fetch(url, { redirect: 'manual' });
    const location = new URL(res.headers.get('location')!);
    expect(location.origin + location.pathname).toBe(REDIRECT);
    const refused = await oauthError(Promise.resolve().then(() => oauth.validateAuthResponse(as, client, location, state)));
    expect(refused.error).toBe('invalid_scope');
  });

  it('refuses one in a registration with invalid_client_metadata', async () => {
    const refused = await oauthError(register({ client_name: 'greedy', scope: 'flows:read flows:admin', token_endpoint_auth_method: 'none', grant_types: [DEVICE_GRANT], response_types: [], redirect_uris: [] }));
    expect(refused.error).toBe('invalid_client_metadata');
  });
});

describe('a public client', () => {
  it('finds `none` among the revocation and introspection authentication methods, and revokes and introspects with it', async () => {
    expect(as.revocation_endpoint_auth_methods_supported).toContain('none');
    expect(as.introspection_endpoint_auth_methods_supported).toContain('none');
    expect(as.revocation_endpoint_auth_methods_supported).toEqual(as.token_endpoint_auth_methods_supported);

    const client = await deviceClient();
    const { tokens } = await deviceTokens(client, { scope: 'flows:read' });
    const live = await oauth.processIntrospectionResponse(as, client, await oauth.introspectionRequest(as, client, oauth.None(), tokens.access_token, insecure));
    expect(live.active).toBe(true);
    expect((await callApi(tokens.access_token)).status).toBe(200);

    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), tokens.access_token, insecure));
    expect((await callApi(tokens.access_token)).status).toBe(401);
    const revoked = await oauth.processIntrospectionResponse(as, client, await oauth.introspectionRequest(as, client, oauth.None(), tokens.access_token, insecure));
    expect(revoked.active).toBe(false);
  });
});

describe('a token used on the other resource', () => {
  it('tells the API caller that an MCP token is bound to another resource, not that it is invalid', async () => {
    const client = await deviceClient();
    const { tokens } = await deviceTokens(client, { scope: 'flows:read', resource: `${server.url}/mcp` });
    const refused = await challengeOf(`${server.url}/api/v1/me`, tokens.access_token);
    expect(refused.status).toBe(401);
    expect(refused.parameters.error).toBe('invalid_token');
    expect(refused.parameters.error_description).toBe('The access token is bound to another resource');
    expect(refused.body.error.code).toBe('invalid_token');
    expect(refused.body.error.message).toContain(`bound to another resource (${server.url}/mcp)`);
    expect(refused.body.error.message).toContain(`resource=${server.url}/api/v1`);

    const unknown = await challengeOf(`${server.url}/api/v1/me`, 'made-up-token');
    expect(unknown.body.error.message).toBe('The access token is invalid, expired or revoked.');
  });
});

describe('a device code polled again after its tokens came', () => {
  it('is taken for a replay: invalid_grant, and the tokens it gave are revoked', async () => {
    const client = await deviceClient();
    const { device, tokens } = await deviceTokens(client, { scope: 'flows:read' });
    expect((await callApi(tokens.access_token)).status).toBe(200);

    const again = await oauthError(pollOnce(client, device.device_code));
    expect(again.error).toBe('invalid_grant');
    expect((await callApi(tokens.access_token)).status).toBe(401);
    const refresh = await oauthError(oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure).then((res) => oauth.processRefreshTokenResponse(as, client, res)));
    expect(refresh.error).toBe('invalid_grant');
  });
});

describe('user codes tried at /device from one address', () => {
  // The default limit (20 codes that match nothing per 10 minutes), on a server of its own.
  let limited: ListeningApp;
  beforeAll(async () => {
    limited = await startListeningApp();
  });
  afterAll(() => limited.close());

  it('never refuses codes that match (21 approvals go through), and refuses the 21st code that matches nothing', async () => {
    const limitedAs = await discover(limited.url);
    const client = (await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(limitedAs, { client_name: 'team CLI', token_endpoint_auth_method: 'none', grant_types: [DEVICE_GRANT], response_types: [], redirect_uris: [] }, insecure),
    )) as oauth.Client;
    const member = await createOwner(limited.app.database.db, { tenantName: 'Team' });
    const browser = new FormSession(limited.url, await sessionCookie(limited.app, member));

    for (let i = 0; i < 21; i++) {
      const device = await oauth.processDeviceAuthorizationResponse(limitedAs, client, await oauth.deviceAuthorizationRequest(limitedAs, client, oauth.None(), { scope: 'flows:read' }, insecure));
      const confirm = await browser.request(device.verification_uri_complete!);
      expect([i, confirm.status]).toEqual([i, 200]);
      expect((await browser.submit(confirm.text, {}, 'op.deviceConfirmForm')).text).toContain('Device approved');
    }

    // Each answer is the input page again, whose form is the one to use next.
    let page = await browser.request('/device');
    for (let i = 0; i < 20; i++) {
      page = await browser.submit(page.text, { user_code: `WRNG-${'BCDFGHJKLMNPQRSTVWXZ'[i]}XQZ` });
      expect([i, page.status]).toEqual([i, 200]);
      expect(page.text).toContain('That code is not valid or has expired');
    }
    const refused = await browser.submit(page.text, { user_code: 'WRNG-LAST' });
    expect(refused.status).toBe(429);
    expect(refused.text).toContain('Too many codes that match no device were entered from your address');
  });
});
