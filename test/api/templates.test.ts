// POST /api/v1/job-templates/test: renders as a run would, refuses with 400 invalid_template and a position.
import { loadContract } from '../../src/http/contract';
import { startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner } from '../support/identity';

let app: TestApp;
let writer: Record<string, string>;
const PATH = '/api/v1/job-templates/test';
const operation = loadContract().inlined.paths[PATH].post;
const example = operation.requestBody.content['application/json'].example;

beforeAll(async () => {
  app = await startTestApp();
  writer = { authorization: `Bearer ${await accessToken(app, await createOwner(app.database.db), { scopes: ['flows:write'] })}` };
});
afterAll(() => app.close());

it('renders the documented example to the documented output', async () => {
  const res = await call(app, 'POST', PATH, { headers: writer, body: example });
  expect(res.status).toBe(200);
  expect(res.body).toEqual(operation.responses['200'].content['application/json'].example);
});

it.each([
  ['{{ payload.issue.nope }}', 'Invalid template: line 1, column 4: undefined variable: payload.issue.nope.'],
  ['ok\n{{ event | shout }}', 'Invalid template: line 2, column 1: undefined filter: shout.'],
  ['{% for x in payload %}', 'Invalid template: line 1, column 1: tag {% for x in payload %} not closed.'],
  ['Steps:\n  {% include "steps" %}', 'Invalid template: line 2, column 3: `include` is not available: templates have no partials to include.'],
])('refuses %j with 400 invalid_template and its position', async (template, message) => {
  const res = await call(app, 'POST', PATH, { headers: writer, body: { template, context: example.context } });
  expect([res.status, res.body.error.code, res.body.error.message]).toEqual([400, 'invalid_template', message]);
});

it('needs flows:write, and a template and a context', async () => {
  const reader = { authorization: `Bearer ${await accessToken(app, await createOwner(app.database.db), { scopes: ['flows:read'] })}` };
  expect((await call(app, 'POST', PATH, { headers: reader, body: example })).body.error.code).toBe('insufficient_scope');
  expect((await call(app, 'POST', PATH, { headers: writer, body: { template: 'x' } })).body.error.message).toBe('`context` is required.');
  expect((await call(app, 'POST', PATH, { headers: writer, body: { template: '', context: {} } })).body.error.code).toBe('validation_failed');
});
