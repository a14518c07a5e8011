// Authorization code with PKCE in Chromium: the owner signs in, sees the consent page, presses Approve,
// and the browser is redirected to the client's own origin (a loopback server standing in for the
// application), whose code openid-client redeems.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oauth from 'openid-client';
import { launchBrowser, watchPage, type TestBrowser } from '../support/browser';
import { startListeningApp, type ListeningApp } from '../support/server';

const EMAIL = 'maria@acme.example';
const PASSWORD = 'correct horse battery';

let server: ListeningApp;
let browser: TestBrowser;
let client: Server;
let clientUrl: string;

beforeAll(async () => {
  server = await startListeningApp();
  await server.app.owners.createOwner({ email: EMAIL, password: PASSWORD, tenantName: 'Acme' });
  client = createServer((_req, res) => res.end('<!doctype html><title>Callback</title><p>Signed in</p>'));
  await new Promise<void>((resolve) => client.listen(0, '127.0.0.1', resolve));
  clientUrl = `http://127.0.0.1:${(client.address() as AddressInfo).port}`;
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  client?.close();
  await server?.close();
});

it('approves on the consent page and lands on the client with a code it redeems', async () => {
  const redirectUri = `${clientUrl}/callback`;
  const config = await oauth.dynamicClientRegistration(
    new URL(server.url),
    { client_name: 'Acme dashboard', token_endpoint_auth_method: 'none', redirect_uris: [redirectUri], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] },
    oauth.None(),
    { execute: [oauth.allowInsecureRequests] },
  );
  const verifier = oauth.randomPKCECodeVerifier();
  const state = oauth.randomState();
  const url = oauth.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'flows:read',
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });

  const page = await browser.context.newPage();
  const activity = watchPage(page);
  await page.goto(url.href);
  await page.waitForURL(/\/login\?next=/);
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Authorize Acme dashboard' }).waitFor();
  await page.getByText('flows:read').waitFor();
  await page.getByRole('button', { name: 'Approve' }).click();
  await page.waitForURL(`${redirectUri}?**`);

  const tokens = await oauth.authorizationCodeGrant(config, new URL(page.url()), { pkceCodeVerifier: verifier, expectedState: state });
  const me = await fetch(`${server.url}/api/v1/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
  expect(me.status).toBe(200);
  expect(activity.errors).toEqual([]);
  expect(activity.requests.filter((r) => !r.startsWith(server.url) && !r.startsWith(clientUrl))).toEqual([]);
  await page.close();
});
