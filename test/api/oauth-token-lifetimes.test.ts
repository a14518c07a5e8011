// Tokens live by their own lifetimes: not by the authorization server's browser session, and not past a
// sign-out everywhere that races the approval.
import * as oauth from 'openid-client';
import { FormSession } from '../support/form-session';
import { createOwner, sessionCookie, type TestOwner } from '../support/identity';
import { startListeningApp, type ListeningApp } from '../support/server';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const REDIRECT = 'http://127.0.0.1:9/callback';
const DAY_MS = 24 * 60 * 60 * 1000;
const insecure = { execute: [oauth.allowInsecureRequests] };

let server: ListeningApp;
let owner: TestOwner;

beforeAll(async () => {
  server = await startListeningApp();
  owner = await createOwner(server.app.database.db, { tenantName: 'Acme' });
});
afterAll(() => server.close());
afterEach(() => jest.useRealTimers());

const deviceClient = () =>
  oauth.dynamicClientRegistration(
    new URL(server.url),
    { client_name: 'flows CLI', token_endpoint_auth_method: 'none', grant_types: [DEVICE_GRANT, 'refresh_token'], response_types: [], redirect_uris: [] },
    oauth.None(),
    insecure,
  );

/** One device approval in `browser`, which keeps its cookies (the provider's session among them) between calls. */
async function approveDevice(config: oauth.Configuration, browser: FormSession) {
  const device = await oauth.initiateDeviceAuthorization(config, { scope: 'flows:read' });
  const confirm = await browser.request(device.verification_uri_complete!);
  const approved = await browser.submit(confirm.text, {}, 'op.deviceConfirmForm');
  expect(approved.text).toContain('Device approved');
  return oauth.pollDeviceAuthorizationGrant(config, { ...device, interval: 0.01 } as oauth.DeviceAuthorizationResponse);
}

const meStatus = async (accessToken: string) =>
  (await fetch(`${server.url}/api/v1/me`, { headers: { authorization: `Bearer ${accessToken}` } })).status;

it('keeps the first device\'s tokens working after a second approval of the same client in the same browser', async () => {
  const config = await deviceClient();
  const browser = new FormSession(server.url, await sessionCookie(server.app, owner));
  const first = await approveDevice(config, browser);
  const second = await approveDevice(config, browser);

  expect(await meStatus(first.access_token)).toBe(200);
  expect(await meStatus(second.access_token)).toBe(200);
  const refreshedFirst = await oauth.refreshTokenGrant(config, first.refresh_token!);
  const refreshedSecond = await oauth.refreshTokenGrant(config, second.refresh_token!);
  expect(await meStatus(refreshedFirst.access_token)).toBe(200);
  expect(await meStatus(refreshedSecond.access_token)).toBe(200);
});

it('refreshes within 30 days although the browser session that approved has expired', async () => {
  // Only Date is faked: the clock the server and its records read moves, sockets and timers do not.
  jest.useFakeTimers({
    now: Date.now(),
    doNotFake: ['hrtime', 'nextTick', 'performance', 'queueMicrotask', 'setImmediate', 'clearImmediate', 'setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'],
  });
  const config = await deviceClient();
  const browser = new FormSession(server.url, await sessionCookie(server.app, owner));
  const tokens = await approveDevice(config, browser);

  // The provider's browser session lasts a day; the access token an hour.
  jest.setSystemTime(Date.now() + 2 * DAY_MS);
  expect(await meStatus(tokens.access_token)).toBe(401);
  const refreshed = await oauth.refreshTokenGrant(config, tokens.refresh_token!);
  expect(await meStatus(refreshed.access_token)).toBe(200);

  // Rotation does not extend the 30 days counted from the first issue.
  jest.setSystemTime(Date.now() + 29 * DAY_MS);
  await expect(oauth.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
});

it('ends a grant approved while the owner signs out everywhere', async () => {
  const config = await oauth.dynamicClientRegistration(
    new URL(server.url),
    { client_name: 'Acme dashboard', token_endpoint_auth_method: 'none', redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] },
    oauth.None(),
    insecure,
  );
  const verifier = oauth.randomPKCECodeVerifier();
  const url = oauth.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: 'flows:read',
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  const browser = new FormSession(server.url, await sessionCookie(server.app, owner));
  const consent = await browser.request(url.pathname + url.search);

  // The sign-out everywhere lands between the approval's session check and the grant it makes.
  const { sessions, owners } = server.app;
  const authenticate = sessions.authenticate;
  sessions.authenticate = async (token) => {
    const principal = await authenticate(token);
    sessions.authenticate = authenticate;
    if (principal) await owners.signOutEverywhere(principal.ownerId);
    return principal;
  };
  const done = await browser.submit(consent.text);
  // The client is told, and no code is issued to an account that ended during the approval.
  const callback = new URL(done.location ?? `${server.url}/no-redirect`);
  expect(callback.origin + callback.pathname).toBe(REDIRECT);
  expect(callback.searchParams.get('error')).toBe('access_denied');
  expect(callback.searchParams.get('code')).toBeNull();
});
