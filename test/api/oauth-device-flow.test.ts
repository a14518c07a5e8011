// The device flow end to end with openid-client as the client against a listening server; the owner's
// approval is posted as a signed-in owner's forms (test/e2e has the same with a real browser).
import * as oauth from 'openid-client';
import { FormSession } from '../support/form-session';
import { createOwner, sessionCookie, type TestOwner } from '../support/identity';
import { startListeningApp, type ListeningApp } from '../support/server';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

let server: ListeningApp;
let owner: TestOwner;

beforeAll(async () => {
  server = await startListeningApp();
  owner = await createOwner(server.app.database.db, { tenantName: 'Acme' });
});
afterAll(() => server.close());

async function registeredClient(): Promise<oauth.Configuration> {
  const config = await oauth.dynamicClientRegistration(
    new URL(server.url),
    { client_name: 'flows CLI', token_endpoint_auth_method: 'none', grant_types: [DEVICE_GRANT, 'refresh_token'], response_types: [], redirect_uris: [] },
    oauth.None(),
    { execute: [oauth.allowInsecureRequests] },
  );
  return config;
}

async function ownerBrowser(): Promise<FormSession> {
  return new FormSession(server.url, await sessionCookie(server.app, owner));
}

/** Opens the verification URI as the signed-in owner and presses Approve or Deny. */
async function answer(device: oauth.DeviceAuthorizationResponse, button: 'approve' | 'deny') {
  const browser = await ownerBrowser();
  const confirm = await browser.request(device.verification_uri_complete!);
  expect(confirm.status).toBe(200);
  expect(confirm.text).toContain('flows CLI');
  expect(confirm.text).toContain('flows:read');
  const result = await browser.submit(confirm.text, button === 'deny' ? { abort: 'yes' } : {}, 'op.deviceConfirmForm');
  return result;
}

const poll = (config: oauth.Configuration, device: oauth.DeviceAuthorizationResponse) =>
  oauth.pollDeviceAuthorizationGrant(config, { ...device, interval: 0.01 } as oauth.DeviceAuthorizationResponse);

async function tokenError(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    return (err as { error?: string }).error ?? String(err);
  }
  throw new Error('expected a token endpoint error');
}

async function rawPoll(config: oauth.Configuration, deviceCode: string) {
  const res = await fetch(`${server.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: config.clientMetadata().client_id }),
  });
  return { status: res.status, body: (await res.json() as any) as { error?: string; access_token?: string } };
}

it('registers, approves, issues, refreshes and revokes, and the revoked token is refused at once', async () => {
  const config = await registeredClient();
  const device = await oauth.initiateDeviceAuthorization(config, { scope: 'flows:read runs:read' });
  expect(device.interval).toBe(5);
  expect(device.expires_in).toBe(600);
  expect(device.verification_uri).toBe(`${server.url}/device`);

  const approved = await answer(device, 'approve');
  expect(approved.status).toBe(200);
  expect(approved.text).toContain('Device approved');

  const tokens = await poll(config, device);
  expect(tokens.token_type?.toLowerCase()).toBe('bearer');
  expect(tokens.expires_in).toBe(3600);
  expect(tokens.scope?.split(' ').sort()).toEqual(['flows:read', 'runs:read']);
  expect(tokens.refresh_token).toBeDefined();

  const me = await fetch(`${server.url}/api/v1/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
  expect(me.status).toBe(200);
  expect(await me.json() as any).toMatchObject({ owner: { id: owner.ownerId }, tenant: { id: owner.tenantId, name: 'Acme' }, credential: { type: 'bearer' } });
  const contexts = await fetch(`${server.url}/api/v1/trigger-contexts`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
  expect(contexts.status).toBe(200);

  const refreshed = await oauth.refreshTokenGrant(config, tokens.refresh_token!);
  expect(refreshed.access_token).not.toBe(tokens.access_token);
  expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
  const before = await fetch(`${server.url}/api/v1/me`, { headers: { authorization: `Bearer ${refreshed.access_token}` } });
  expect(before.status).toBe(200);

  await oauth.tokenRevocation(config, refreshed.access_token);
  const after = await fetch(`${server.url}/api/v1/me`, { headers: { authorization: `Bearer ${refreshed.access_token}` } });
  expect(after.status).toBe(401);
  expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');

  // Rotation: the first refresh token is spent, and replaying it ends the whole grant (OAuth security BCP).
  expect(await tokenError(oauth.refreshTokenGrant(config, tokens.refresh_token!))).toBe('invalid_grant');
  expect(await tokenError(oauth.refreshTokenGrant(config, refreshed.refresh_token!))).toBe('invalid_grant');
});

it('answers authorization_pending, then slow_down to a client polling faster than the interval', async () => {
  const config = await registeredClient();
  const device = await oauth.initiateDeviceAuthorization(config, { scope: 'flows:read' });
  expect((await rawPoll(config, device.device_code)).body.error).toBe('authorization_pending');
  const second = await rawPoll(config, device.device_code);
  expect(second.status).toBe(400);
  expect(second.body.error).toBe('slow_down');
});

it('answers access_denied when the owner presses Deny', async () => {
  const config = await registeredClient();
  const device = await oauth.initiateDeviceAuthorization(config, { scope: 'flows:read' });
  const denied = await answer(device, 'deny');
  expect(denied.text).not.toContain('Device approved');
  expect((await rawPoll(config, device.device_code)).body.error).toBe('access_denied');
});

it('answers expired_token once the device code has expired', async () => {
  const config = await registeredClient();
  const device = await oauth.initiateDeviceAuthorization(config, { scope: 'flows:read' });
  // Ten minutes pass: the stored code's expiry moves into the past.
  const db = server.app.database.db;
  const row = await db.oidcPayload.findUniqueOrThrow({ where: { type_id: { type: 'DeviceCode', id: device.device_code } } });
  await db.oidcPayload.update({
    where: { type_id: { type: 'DeviceCode', id: device.device_code } },
    data: { payload: { ...(row.payload as object), exp: Math.floor(Date.now() / 1000) - 1 }, expiresAt: new Date(Date.now() - 1000) },
  });
  expect((await rawPoll(config, device.device_code)).body.error).toBe('expired_token');
});

it('sends an owner who is not signed in to /login first, and back to the device page after', async () => {
  const config = await registeredClient();
  const device = await oauth.initiateDeviceAuthorization(config, { scope: 'flows:read' });
  const browser = new FormSession(server.url);
  const res = await fetch(device.verification_uri_complete!, { redirect: 'manual' });
  expect(res.status).toBe(303);
  const login = new URL(res.headers.get('location')!, server.url);
  expect(login.pathname).toBe('/login');
  expect(login.searchParams.get('next')).toBe(new URL(device.verification_uri_complete!).pathname + new URL(device.verification_uri_complete!).search);
  expect(browser.cookie('svc_session')).toBeUndefined();
});

it('refuses tokens at the next exchange once the owner leaves the tenant', async () => {
  const other = await createOwner(server.app.database.db, { tenantName: 'Leaving' });
  const config = await registeredClient();
  const device = await oauth.initiateDeviceAuthorization(config, { scope: 'flows:read' });
  const browser = new FormSession(server.url, await sessionCookie(server.app, other));
  const confirm = await browser.request(device.verification_uri_complete!);
  await browser.submit(confirm.text, {}, 'op.deviceConfirmForm');
  const tokens = await poll(config, device);
  expect((await oauth.tokenIntrospection(config, tokens.access_token)).active).toBe(true);
  await server.app.database.db.membership.deleteMany({ where: { ownerId: other.ownerId } });
  expect((await oauth.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
  const res = await fetch(`${server.url}/api/v1/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
  expect(res.status).toBe(401);
  expect(await tokenError(oauth.refreshTokenGrant(config, tokens.refresh_token!))).toBe('invalid_grant');
});


it('answers a code posted without the device page loaded first with that page, whose form then works', async () => {
  const config = await registeredClient();
  const device = await oauth.initiateDeviceAuthorization(config, { scope: 'flows:read' });
  const browser = await ownerBrowser();

  const refused = await browser.request('/device', { method: 'POST', form: { user_code: device.user_code } });
  expect(refused.status).toBe(400);
  expect(refused.text).toContain(`<form method="post" action="${server.url}/device">`);

  const confirm = await browser.submit(refused.text, { user_code: device.user_code });
  expect(confirm.status).toBe(200);
  expect(confirm.text).toContain('Approve a device');
  const approved = await browser.submit(confirm.text, {}, 'op.deviceConfirmForm');
  expect(approved.text).toContain('Device approved');
  expect((await poll(config, device)).access_token).toBeDefined();
});

it('answers an unknown device interaction with a page, not a failure', async () => {
  const browser = await ownerBrowser();
  const res = await browser.request('/device/no-such-interaction');
  expect(res.status).toBe(400);
  expect(res.text).toContain('Connect a device');
});
