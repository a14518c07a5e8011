// The device flow as a person does it: openid-client registers and polls, while the owner signs in on
// /login in Chromium, opens the verification URI and presses Approve (or Deny).
import * as oauth from 'openid-client';
import type { Page } from 'playwright-core';
import { launchBrowser, watchPage, type PageActivity, type TestBrowser } from '../support/browser';
import { startListeningApp, type ListeningApp } from '../support/server';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const EMAIL = 'maria@acme.example';
const PASSWORD = 'correct horse battery';

let server: ListeningApp;
let browser: TestBrowser;
let page: Page;
let activity: PageActivity;

beforeAll(async () => {
  server = await startListeningApp();
  await server.app.owners.createOwner({ email: EMAIL, password: PASSWORD, tenantName: 'Acme' });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});
beforeEach(async () => {
  page = await browser.context.newPage();
  activity = watchPage(page);
});
afterEach(async () => {
  await page.close();
  // Every page stayed on the server and raised no error.
  expect(activity.requests.filter((url) => !url.startsWith(server.url))).toEqual([]);
  expect(activity.errors).toEqual([]);
});

async function startDeviceFlow(scope: string) {
  const config = await oauth.dynamicClientRegistration(
    new URL(server.url),
    { client_name: 'flows CLI', token_endpoint_auth_method: 'none', grant_types: [DEVICE_GRANT, 'refresh_token'], response_types: [], redirect_uris: [] },
    oauth.None(),
    { execute: [oauth.allowInsecureRequests] },
  );
  const device = await oauth.initiateDeviceAuthorization(config, { scope });
  return { config, device };
}

const poll = (config: oauth.Configuration, device: oauth.DeviceAuthorizationResponse) =>
  oauth.pollDeviceAuthorizationGrant(config, { ...device, interval: 0.01 } as oauth.DeviceAuthorizationResponse);

async function signIn(next: string) {
  await page.goto(`${server.url}/login?next=${encodeURIComponent(next)}`);
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

it('signs in, approves the device, and the client calls the API, refreshes, revokes', async () => {
  const { config, device } = await startDeviceFlow('flows:read runs:read');
  // The owner opens the verification URI, is sent to sign in, and comes back to the device page.
  await page.goto(device.verification_uri_complete!);
  await page.waitForURL(/\/login\?next=/);
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Approve a device' }).waitFor();
  await page.getByText('flows CLI', { exact: true }).waitFor();
  await page.getByText(device.user_code).waitFor();
  await page.getByText('runs:read').waitFor();
  await page.getByRole('button', { name: 'Approve' }).click();
  await page.getByRole('heading', { name: 'Device approved' }).waitFor();

  const tokens = await poll(config, device);
  const auth = { authorization: `Bearer ${tokens.access_token}` };
  expect((await fetch(`${server.url}/api/v1/me`, { headers: auth })).status).toBe(200);
  expect((await fetch(`${server.url}/api/v1/trigger-contexts`, { headers: auth })).status).toBe(200);

  const refreshed = await oauth.refreshTokenGrant(config, tokens.refresh_token!);
  const refreshedAuth = { authorization: `Bearer ${refreshed.access_token}` };
  expect((await fetch(`${server.url}/api/v1/me`, { headers: refreshedAuth })).status).toBe(200);
  await oauth.tokenRevocation(config, refreshed.access_token);
  expect((await fetch(`${server.url}/api/v1/me`, { headers: refreshedAuth })).status).toBe(401);

  // The console lists the client, and revoking it there ends the remaining refresh token's grant.
  await page.goto(`${server.url}/console`);
  await page.getByRole('cell', { name: 'flows CLI' }).first().waitFor();
  await page.getByRole('button', { name: 'Revoke flows CLI' }).click();
  await page.getByText('No application has access.').waitFor();
  await expect(oauth.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
});

it('answers access_denied to the client when the owner presses Deny', async () => {
  const { config, device } = await startDeviceFlow('flows:write');
  await signIn('/console');
  await page.goto(device.verification_uri_complete!);
  await page.getByRole('button', { name: 'Deny' }).click();
  await expect(poll(config, device)).rejects.toMatchObject({ error: 'access_denied' });
});
