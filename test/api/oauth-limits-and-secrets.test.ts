// Rate limits as the running app applies them (registration per address, the API per token), and the
// secrets of a whole device flow (password, device code, tokens, cookie) never reaching a log line.
import * as oauth from 'openid-client';
import { FormSession } from '../support/form-session';
import { accessToken, sessionCookie } from '../support/identity';
import { startListeningApp, type ListeningApp } from '../support/server';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const PASSWORD = 'correct horse battery';

let server: ListeningApp;

beforeAll(async () => {
  server = await startListeningApp({}, { policies: { registration: { points: 3, durationSeconds: 60 }, api: { points: 4, durationSeconds: 60 }, apiIp: { points: 12, durationSeconds: 60 }, userCode: { points: 3, durationSeconds: 60 } } });
});
afterAll(() => server.close());

const register = () =>
  fetch(`${server.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'cli', token_endpoint_auth_method: 'none', grant_types: [DEVICE_GRANT, 'refresh_token'], response_types: [], redirect_uris: [] }),
  });

it('runs the device flow with a password sign-in, and no secret of it reaches the log', async () => {
  await server.app.owners.createOwner({ email: 'maria@acme.example', password: PASSWORD, tenantName: 'Acme' });
  const registration = (await (await register()).json()) as { client_id: string };
  const config = await oauth.discovery(new URL(server.url), registration.client_id, undefined, oauth.None(), { execute: [oauth.allowInsecureRequests] });
  const device = await oauth.initiateDeviceAuthorization(config, { scope: 'flows:read' });

  const browser = new FormSession(server.url);
  const signedIn = await browser.request(`/login?next=${encodeURIComponent(new URL(device.verification_uri_complete!).pathname + new URL(device.verification_uri_complete!).search)}`);
  const confirm = await browser.submit(signedIn.text, { email: 'maria@acme.example', password: PASSWORD });
  expect(confirm.text).toContain('Approve a device');
  await browser.submit(confirm.text, {}, 'op.deviceConfirmForm');
  const tokens = await oauth.pollDeviceAuthorizationGrant(config, { ...device, interval: 0.01 } as oauth.DeviceAuthorizationResponse);
  await fetch(`${server.url}/api/v1/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
  await oauth.refreshTokenGrant(config, tokens.refresh_token!);

  const log = server.app.logLines.join('');
  expect(log).toContain('"path":"/oauth/token"');
  for (const secret of [PASSWORD, device.device_code, device.user_code, tokens.access_token, tokens.refresh_token!, browser.cookie('svc_session')!]) {
    expect(log).not.toContain(secret);
  }
});

it('limits registrations per address with 429, Retry-After and RateLimit headers', async () => {
  // The first test registered once; two more fill the window.
  for (let i = 0; i < 2; i++) expect((await register()).status).toBe(201);
  const refused = await register();
  expect(refused.status).toBe(429);
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(refused.headers.get('ratelimit-limit')).toBe('3');
  expect(refused.headers.get('ratelimit-remaining')).toBe('0');
  expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
});

it('limits API calls per token, independently of other callers', async () => {
  const owner = await server.app.owners.createOwner({ email: 'api@acme.example', password: PASSWORD });
  const token = await accessToken(server.app, { ownerId: owner.ownerId, tenantId: owner.tenant.id, email: 'api@acme.example' });
  const other = await accessToken(server.app, { ownerId: owner.ownerId, tenantId: owner.tenant.id, email: 'api@acme.example' });
  const call = (t: string) => fetch(`${server.url}/api/v1/me`, { headers: { authorization: `Bearer ${t}` } });
  for (let i = 0; i < 4; i++) expect((await call(token)).status).toBe(200);
  const refused = await call(token);
  expect(refused.status).toBe(429);
  expect(refused.headers.get('retry-after')).not.toBeNull();
  expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
  expect((await call(other)).status).toBe(200);
});

it('limits every API call per address too, so made-up tokens cannot dodge the limit', async () => {
  // Earlier tests spent part of this address's 12 calls; every made-up token counts against the rest.
  const statuses: number[] = [];
  for (let i = 0; i < 12; i++) {
    const res = await fetch(`${server.url}/api/v1/me`, { headers: { authorization: `Bearer made-up-${i}` } });
    statuses.push(res.status);
  }
  const firstRefused = statuses.indexOf(429);
  expect(firstRefused).toBeGreaterThan(0);
  expect(statuses.slice(0, firstRefused).every((s) => s === 401)).toBe(true);
  expect(statuses.slice(firstRefused).every((s) => s === 429)).toBe(true);
});

it('limits user codes that match nothing tried at /device per address (RFC 8628 section 5.1)', async () => {
  const owner = await server.app.owners.createOwner({ email: 'guess@acme.example', password: PASSWORD });
  const browser = new FormSession(server.url, await sessionCookie(server.app, { ownerId: owner.ownerId, tenantId: owner.tenant.id, email: 'guess@acme.example' }));
  // The first test's approval spent none of this address's 3 tries: its code matched.
  let page = await browser.request('/device');
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) {
    page = await browser.submit(page.text, { user_code: `WRNG-COD${'BCDF'[i]}` });
    statuses.push(page.status);
  }
  expect(statuses).toEqual([200, 200, 200, 429]);
});

describe('malformed form bodies', () => {
  it('answers 413 for a form with too many fields, and logs no field of it', async () => {
    const body = `email=a%40b.c&password=SuperSecretPw123&${Array.from({ length: 1100 }, (_, i) => `f${i}=1`).join('&')}`;
    const res = await fetch(`${server.url}/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url }, body });
    expect(res.status).toBe(413);
    expect(server.app.logLines.join('')).not.toContain('SuperSecretPw123');
  });

  it('answers 400 for a body that does not decompress', async () => {
    const res = await fetch(`${server.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': 'deflate', origin: server.url },
      body: 'not deflate at all password=SuperSecretPw123',
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('bad_request');
    expect(server.app.logLines.join('')).not.toContain('SuperSecretPw123');
  });
});
