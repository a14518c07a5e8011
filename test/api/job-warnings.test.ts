// A job's warnings through the API: real GitHub example payloads delivered to a GitHub source, then jobs
// reading paths GitHub's schemas have no room for, or that the recorded deliveries never carried; and a job
// naming no target on a server with no default one.
import examples from '@octokit/webhooks-examples';
import request from 'supertest';
import { startOtherInstance, startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner } from '../support/identity';
import { createJob, githubDelivery } from '../support/kit';

let app: TestApp;
let bearer: Record<string, string>;
let sourceId: string;

const labeled = (examples as { name: string; examples: Record<string, any>[] }[]).find((event) => event.name === 'issues')!.examples.find((payload) => payload.action === 'labeled')!;

beforeAll(async () => {
  // A local agent makes `local` the default target: these jobs name none.
  app = await startTestApp({ localAgent: { command: 'true', timeoutSeconds: 60, sandbox: 'off' } });
  const owner = await createOwner(app.database.db);
  bearer = { authorization: `Bearer ${await accessToken(app, owner)}` };
  const source = (await call(app, 'POST', '/api/v1/webhook-sources', { headers: bearer, body: { name: 'GitHub', format: 'github' } })).body;
  sourceId = source.id;
  for (let n = 0; n < 3; n++) {
    const { body, headers } = githubDelivery(source.signingSecret, { ...labeled, issue: { ...labeled.issue, number: n } });
    expect((await request(app.app).post(`/hooks/${sourceId}`).set(headers).send(body)).status).toBe(202);
  }
  await app.runner.idle();
});
afterAll(() => app.close());

const trigger = (conditions?: Record<string, unknown>) => ({ type: 'webhook', id: 'trg_labeled', sourceId, events: ['issues.labeled'], ...(conditions && { conditions }) });

it('saves real payload fields with no warning, also outside the autocomplete list', async () => {
  const job = await createJob(app, bearer, {
    name: 'Real fields',
    promptTemplate: '{{ payload.issue.title }} ({{ payload.issue.state }}, {{ payload.repository.visibility }})',
    triggers: [trigger({ all: [{ path: 'payload.label.name', op: 'eq', value: 'bug' }] })],
  });
  expect(job.warnings).toEqual([]);
});

it('saves a path no listed event carries with 201 and a warning naming it, shown again on read but not in lists', async () => {
  const job = await createJob(app, bearer, { name: 'Typo', promptTemplate: 'Fix {{ payload.issue.titel }}', triggers: [trigger()] });
  const warning = { field: 'promptTemplate', message: "`payload.issue.titel` is in no payload of the listed GitHub events (issues.labeled), by GitHub's published webhook schemas." };
  expect(job.warnings).toEqual([warning]);
  expect((await call(app, 'GET', `/api/v1/jobs/${job.id}`, { headers: bearer })).body.warnings).toEqual([warning]);
  expect((await call(app, 'POST', `/api/v1/jobs/${job.id}/disable`, { headers: bearer })).body.warnings).toEqual([warning]);
  const listed = (await call(app, 'GET', '/api/v1/jobs', { headers: bearer })).body.find((item: { id: string }) => item.id === job.id);
  expect(listed).not.toHaveProperty('warnings');
});

it('warns of a path the schemas allow but no recorded delivery carried, with the count', async () => {
  const job = await createJob(app, bearer, { name: 'Rare', promptTemplate: 'x', triggers: [trigger({ all: [{ path: 'payload.organization.login', op: 'eq', value: 'acme' }] })] });
  expect(job.warnings).toEqual([{ field: 'triggers[0].conditions.all[0].path', message: '`payload.organization.login` is absent in 3 of 3 recorded issues.labeled deliveries.' }]);
  const fixed = (await call(app, 'PATCH', `/api/v1/jobs/${job.id}`, { headers: bearer, body: { triggers: [trigger({ all: [{ path: 'payload.sender.login', op: 'eq', value: 'octocat' }] })] } })).body;
  expect(fixed.warnings).toEqual([]);
});

it('flags a job saved before the warnings existed, when it is read', async () => {
  const job = await createJob(app, bearer, { name: 'Old', promptTemplate: '{{ payload.issue.number }}', triggers: [trigger()] });
  // As if saved by an earlier release: the stored template reads a path no issues.labeled payload has.
  await app.database.db.job.update({ where: { id: job.id }, data: { promptTemplate: '{{ payload.pull_request.title }}' } });
  expect((await call(app, 'GET', `/api/v1/jobs/${job.id}`, { headers: bearer })).body.warnings).toEqual([
    { field: 'promptTemplate', message: expect.stringContaining('`payload.pull_request.title` is in no payload') },
  ]);
});

it('warns of a flow-control key the listed events never carry, as of the templates, and not once it reads one they do', async () => {
  const key = (path: string) => ({ concurrency: { key: path, limit: 1, onConflict: 'cancel-running' } });
  const job = await createJob(app, bearer, { name: 'Per pull request', promptTemplate: 'x', flowControl: key('payload.pull_request.number'), triggers: [trigger()] });
  const warning = { field: 'flowControl.concurrency.key', message: "`payload.pull_request.number` is in no payload of the listed GitHub events (issues.labeled), by GitHub's published webhook schemas." };
  expect(job.warnings).toEqual([warning]);
  expect((await call(app, 'GET', `/api/v1/jobs/${job.id}`, { headers: bearer })).body.warnings).toEqual([warning]);
  const fixed = (await call(app, 'PATCH', `/api/v1/jobs/${job.id}`, { headers: bearer, body: { flowControl: key('payload.issue.number') } })).body;
  expect(fixed.warnings).toEqual([]);
});

it('warns of a job naming no target on a server with no default one, saying what the operator must set', async () => {
  const bare = await startOtherInstance(app, { config: { localAgent: null } });
  try {
    const body = { name: 'Nowhere to run', promptTemplate: 'x', triggers: [{ type: 'invocation' }] };
    const job = await createJob(bare, bearer, body);
    const warning = { field: 'executionTargetId', message: expect.stringContaining('the operator must set FLOWS_LOCAL_AGENT_COMMAND') };
    expect(job.warnings).toEqual([warning]);
    expect((await call(bare, 'GET', `/api/v1/jobs/${job.id}`, { headers: bearer })).body.warnings).toEqual([warning]);
    // Where `local` is the default, the same job has nothing to warn of.
    expect((await call(app, 'GET', `/api/v1/jobs/${job.id}`, { headers: bearer })).body.warnings).toEqual([]);
  } finally {
    await bare.close();
  }
});
