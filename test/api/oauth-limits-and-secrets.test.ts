// Rate limits as the running app applies them (registration per address, the API per token), and the
// secrets of a whole device flow (password, device code, tokens, cookie) never reaching a log line.
import { Writable } from 'node:stream';
import * as oauth from 'openid-client';
import pino from 'pino';
import { FormSession } from '../support/form-session';
import { accessToken } from '../support/identity';
import { startListeningApp, type ListeningApp } from '../support/server';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const PASSWORD = 'correct horse battery';
const lines: string[] = [];

let server: ListeningApp;

beforeAll(async () => {
  const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
  server = await startListeningApp({}, { policies: { registration: { points: 3, durationSeconds: 60 }, api: { points: 4, durationSeconds: 60 } }, logger: pino({ level: 'trace' }, sink) });
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

  const log = lines.join('');
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
