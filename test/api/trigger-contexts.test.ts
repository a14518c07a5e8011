// GET /api/v1/trigger-contexts: the autocomplete metadata, its scope, and webhook availability following the
// tenant's webhook sources (and no other tenant's). Every response is checked against the contract by `call`.
import { newId } from '../../src/lib/ids';
import { startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner, sessionCookie, type TestOwner } from '../support/identity';

let app: TestApp;
let owner: TestOwner;
let reader: Record<string, string>;
const PATH = '/api/v1/trigger-contexts';

type TriggerType = { type: string; available: boolean; reason?: string };
const webhookType = (body: { triggerTypes: TriggerType[] }) => body.triggerTypes.find((t) => t.type === 'webhook');
const addWebhookSource = (tenantId: string) =>
  app.database.db.webhookSource.create({ data: { id: newId('src'), tenantId, name: 'acme/widgets on GitHub', format: 'github', secretCiphertext: 'x' } });

beforeAll(async () => {
  app = await startTestApp();
  owner = await createOwner(app.database.db);
  reader = { authorization: `Bearer ${await accessToken(app, owner, { scopes: ['flows:read'] })}` };
});
afterAll(() => app.close());

it('answers a flows:read token with the metadata, webhooks unavailable until a webhook source exists', async () => {
  const res = await call(app, 'GET', PATH, { headers: reader });
  expect(res.status).toBe(200);
  expect(res.body.triggerTypes.map((t: { type: string }) => t.type)).toEqual(['webhook', 'schedule', 'run', 'invocation']);
  expect(webhookType(res.body)).toEqual({ type: 'webhook', available: false, reason: 'Create a webhook source first (POST /api/v1/webhook-sources).' });
  expect(res.body.providers.map((p: { format: string }) => p.format)).toEqual(['github', 'linear', 'standard-webhooks', 'hmac-sha256', 'gitlab', 'slack', 'sentry', 'jira']);
  expect(res.body.variables).toContainEqual(expect.objectContaining({ trigger: 'webhook', provider: 'github', event: 'issues.labeled', path: 'payload.label.name' }));
  expect(res.body.filters).toContainEqual(expect.objectContaining({ name: 'truncate' }));
});

it('makes webhooks available once the tenant has a webhook source, and only for that tenant', async () => {
  const other = await createOwner(app.database.db);
  await addWebhookSource(other.tenantId);
  expect(webhookType((await call(app, 'GET', PATH, { headers: reader })).body)?.available).toBe(false);

  await addWebhookSource(owner.tenantId);
  expect(webhookType((await call(app, 'GET', PATH, { headers: reader })).body)).toEqual({ type: 'webhook', available: true });
});

it('works with the owner session', async () => {
  const cookie = await sessionCookie(app, owner);
  const res = await call(app, 'GET', PATH, { headers: { cookie, origin: 'http://localhost:3000' } });
  expect(res.status).toBe(200);
  expect(res.body.variables.length).toBeGreaterThan(0);
});

it('needs flows:read and a credential', async () => {
  const runsOnly = { authorization: `Bearer ${await accessToken(app, owner, { scopes: ['runs:read', 'runs:write'] })}` };
  const res = await call(app, 'GET', PATH, { headers: runsOnly });
  expect([res.status, res.body.error.code]).toEqual([403, 'insufficient_scope']);
  expect((await call(app, 'GET', PATH)).status).toBe(401);
});
