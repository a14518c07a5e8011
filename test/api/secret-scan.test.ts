// The suite's secret scan (test/support/secret-scan.ts) runs when every test app closes. Here it is shown
// to find what it looks for: a signing secret a user pasted into a job (an answer and a database row), a
// provider token given to the API and then found in a log line. And it stays quiet about the one answer
// that shows a secret by design.
import { startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner } from '../support/identity';

async function appWithOwner() {
  const app = await startTestApp({ rateLimits: { api: 0, apiAddress: 0 } });
  const bearer = { authorization: `Bearer ${await accessToken(app, await createOwner(app.database.db))}` };
  return { app, api: (method: string, path: string, body?: unknown) => call(app, method, path, { headers: bearer, body }) };
}

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close().catch(() => undefined);
});

it('passes an app whose only secret showed in the answer that creates it, and records its log lines', async () => {
  const { app: clean, api } = await appWithOwner();
  expect((await api('POST', '/api/v1/webhook-sources', { name: 'GitHub', format: 'github' })).body.signingSecret).toMatch(/^whsec_/);
  expect(clean.logLines.length).toBeGreaterThan(0);
  await expect(clean.close()).resolves.toBeUndefined();
});

it('finds a signing secret in a later answer and in a database row', async () => {
  const leaky = await appWithOwner();
  app = leaky.app;
  const { signingSecret } = (await leaky.api('POST', '/api/v1/webhook-sources', { name: 'GitHub', format: 'github' })).body;
  expect((await leaky.api('POST', '/api/v1/jobs', { name: 'Careless', promptTemplate: `Sign with ${signingSecret}` })).status).toBe(201);
  const closing = leaky.app.close();
  app = undefined;
  await expect(closing).rejects.toThrow(/POST \/api\/v1\/jobs → 201[\s\S]*table Job/);
});

it('finds a provider token given to the API in a log line', async () => {
  const leaky = await appWithOwner();
  app = leaky.app;
  const token = 'vmh_live_token_that_must_stay_inside';
  expect((await leaky.api('POST', '/api/v1/vmhost-connections', { name: 'Host', apiToken: token, apiBaseUrl: 'https://vmhost.example' })).status).toBe(201);
  leaky.app.logLines.push(JSON.stringify({ level: 10, msg: `calling the host with ${token}` }));
  const closing = leaky.app.close();
  app = undefined;
  await expect(closing).rejects.toThrow(/log line \d+/);
});
