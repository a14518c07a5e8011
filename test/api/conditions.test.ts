// POST /api/v1/job-conditions/test: spec operation 1, exactly its decision object, its statuses and its
// scope; it evaluates only the context sent and starts nothing.
import { loadContract } from '../../src/http/contract';
import { startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner, sessionCookie } from '../support/identity';

let app: TestApp;
let writer: Record<string, string>;
const PATH = '/api/v1/job-conditions/test';
const operation = loadContract().inlined.paths[PATH].post;
const example = operation.requestBody.content['application/json'].example;

beforeAll(async () => {
  app = await startTestApp();
  const owner = await createOwner(app.database.db);
  writer = { authorization: `Bearer ${await accessToken(app, owner, { scopes: ['flows:write'] })}` };
});
afterAll(() => app.close());

it('answers the documented example with the documented decision', async () => {
  const res = await call(app, 'POST', PATH, { headers: writer, body: example });
  expect(res.status).toBe(200);
  expect(res.body).toEqual(operation.responses['200'].content['application/json'].example);
  expect(await app.database.db.run.count()).toBe(0);
});

it('answers no-match, with the leaf that failed', async () => {
  const res = await call(app, 'POST', PATH, { headers: writer, body: { ...example, conditions: { all: [{ path: 'action', op: 'eq', value: 'closed' }] } } });
  expect(res.body).toEqual({ decision: 'no-match', details: [{ part: 'all', path: 'action', op: 'eq', expected: 'closed', actual: 'labeled', result: false }] });
});

it('answers match with empty details when no conditions are sent', async () => {
  const res = await call(app, 'POST', PATH, { headers: writer, body: { webhook: example.webhook } });
  expect(res.body).toEqual({ decision: 'match', details: [] });
});

it('answers malformed conditions with an error decision naming the part, not a 400', async () => {
  const res = await call(app, 'POST', PATH, { headers: writer, body: { ...example, conditions: { all: [{ path: 'payload..x', op: 'eq', value: 1 }] } } });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ decision: 'error', error: expect.stringContaining('all[0]: bad path'), details: [{ part: 'all', index: 0, path: 'payload..x', op: 'eq', expected: 1, result: false }] });
  expect(Object.keys(res.body).sort()).toEqual(['decision', 'details', 'error']);
});

it('answers a CEL error and a non-boolean result with an error decision', async () => {
  for (const expression of ['payload.issue.number + 1 > 2', 'payload.issue.title']) {
    const res = await call(app, 'POST', PATH, { headers: writer, body: { ...example, conditions: { if: expression } } });
    expect(res.body.decision).toBe('error');
  }
});

it('names an identifier the context does not hold, with its column, and the names it holds', async () => {
  const res = await call(app, 'POST', PATH, { headers: writer, body: { ...example, conditions: { if: "payload.issue.number > 1.0 && webhook.payload.label.name == 'bug'" } } });
  expect(res.body).toMatchObject({ decision: 'error', error: expect.stringMatching(/^CEL: `webhook` \(column 31\) is not in the context, whose names are `source`, .*`payload`/) });
});

it('says which key a flow control gives a run of the delivery, or why it has none', async () => {
  const flowControl = { concurrency: { key: 'payload.issue.number', limit: 1, onConflict: 'cancel-running' }, rateLimit: { limit: 5, period: '1h' }, debounce: { key: 'payload.label.name + "/" + payload.repository.full_name', period: '30s' } };
  const keyed = await call(app, 'POST', PATH, { headers: writer, body: { ...example, flowControl } });
  expect(keyed.status).toBe(200);
  expect(keyed.body).toMatchObject({ decision: 'match', flowControl: { keys: { concurrency: '42', rateLimit: null, debounce: '"agent/acme/widgets"' } } });
  const missing = await call(app, 'POST', PATH, { headers: writer, body: { ...example, flowControl: { concurrency: { key: 'payload.pull_request.number', limit: 1 } } } });
  expect(missing.body.flowControl).toEqual({ error: expect.stringContaining('`flowControl.concurrency.key`') });
  const broken = await call(app, 'POST', PATH, { headers: writer, body: { ...example, flowControl: { rateLimit: { key: 'payload.(', limit: 1, period: '1m' } } } });
  expect([broken.status, broken.body.flowControl]).toEqual([200, { error: expect.stringMatching(/^`flowControl.rateLimit.key` /) }]);
  const unsent = await call(app, 'POST', PATH, { headers: writer, body: example });
  expect(unsent.body.flowControl).toBeUndefined();
});

it('needs flows:write', async () => {
  const reader = { authorization: `Bearer ${await accessToken(app, await createOwner(app.database.db), { scopes: ['flows:read', 'runs:write'] })}` };
  const res = await call(app, 'POST', PATH, { headers: reader, body: example });
  expect([res.status, res.body.error.code]).toEqual([403, 'insufficient_scope']);
  expect((await call(app, 'POST', PATH, { body: example })).status).toBe(401);
});

it('works with the owner session from the service\'s own origin', async () => {
  const cookie = await sessionCookie(app, await createOwner(app.database.db));
  const res = await call(app, 'POST', PATH, { headers: { cookie, origin: 'http://localhost:3000' }, body: example });
  expect(res.body.decision).toBe('match');
});

it.each([
  [{ conditions: {} }, '`webhook` is required.'],
  [{ webhook: {}, extra: 1 }, '`extra` is not an allowed property.'],
  [{ webhook: 'issues' }, '`webhook` must be object (type).'],
])('refuses the body %j with 400 validation_failed', async (body, message) => {
  const res = await call(app, 'POST', PATH, { headers: writer, body });
  expect([res.status, res.body.error.code, res.body.error.message]).toEqual([400, 'validation_failed', message]);
});

it('refuses a body over the size limit with 400 payload_too_large, as the interface specification lists no 413', async () => {
  const res = await call(app, 'POST', PATH, { headers: writer, body: { webhook: { payload: 'x'.repeat(1_100_000) } } });
  expect([res.status, res.body.error.code]).toEqual([400, 'payload_too_large']);
});

it('documents exactly the error statuses of the interface specification, and no 501', () => {
  expect(Object.keys(operation.responses).sort()).toEqual(['200', '400', '401', '403', '404', '409', '415', '429', '500', '503']);
});
