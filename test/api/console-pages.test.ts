// The console's job and run pages, served to the owner's session: what each shows (escaped), the redirect to
// sign in without a session, and 404 for another tenant's ids.
import request from 'supertest';
import { agentCommand } from '../support/agent';
import { startTestApp, type TestApp } from '../support/app';
import { accessToken, createOwner, sessionCookie, type TestOwner } from '../support/identity';
import { createJob, runSettled } from '../support/kit';
import { call } from '../support/http';

let app: TestApp;
let owner: TestOwner;
let cookie: string;
let bearer: Record<string, string>;
let job: { id: string; slug: string };
let runId: string;

beforeAll(async () => {
  app = await startTestApp({ localAgent: { command: agentCommand(), timeoutSeconds: 60, sandbox: 'off' } });
  owner = await createOwner(app.database.db, { tenantName: 'Acme' });
  cookie = await sessionCookie(app, owner);
  bearer = { authorization: `Bearer ${await accessToken(app, owner)}` };
  job = await createJob(app, bearer, { name: 'Triage <script>alert(1)</script>', promptTemplate: 'Say {{ data.word }}', executionTargetId: 'local', triggers: [{ type: 'invocation' }, { type: 'schedule', cron: '0 3 * * *' }] });
  runId = (await call(app, 'POST', `/api/v1/jobs/${job.id}/invocations`, { headers: bearer, body: { data: { word: 'hello' } } })).body.runId;
  await runSettled(app, bearer, runId);
});
afterAll(() => app.close());

const get = (path: string, as = cookie) => request(app.app).get(path).set('cookie', as);

it.each(['/console/jobs', '/console/runs', '/console/jobs/job_x', '/console/runs/run_x'])('sends a visitor without a session from %s to sign in', async (path) => {
  const res = await request(app.app).get(path);
  expect([res.status, res.headers.location]).toEqual([303, `/login?next=${encodeURIComponent(path)}`]);
});

it('lists the jobs, names escaped, with their triggers, in the console frame', async () => {
  const res = await get('/console/jobs');
  expect(res.status).toBe(200);
  expect(res.text).toContain('Triage &lt;script&gt;alert(1)&lt;/script&gt;');
  expect(res.text).not.toContain('<script>alert(1)');
  expect(res.text).toContain(`href="/console/jobs/${job.id}"`);
  expect(res.text).toContain('invocation, schedule');
  expect(res.text).toMatch(/<a href="\/console\/jobs" aria-current="page">Jobs<\/a>/);
  expect(res.text).toContain('Acme');
});

it('shows a job with its settings, template, triggers and recent runs, by id or slug', async () => {
  for (const ref of [job.id, job.slug]) {
    const res = await get(`/console/jobs/${ref}`);
    expect(res.status).toBe(200);
    expect(res.text).toContain('Say {{ data.word }}');
    expect(res.text).toContain('0 3 * * * (UTC)');
    expect(res.text).toContain(`href="/console/runs/${runId}"`);
  }
});

it('lists runs, filtered by job and state', async () => {
  expect((await get(`/console/runs?jobId=${job.slug}`)).text).toContain(`/console/runs/${runId}`);
  expect((await get(`/console/runs?jobId=${job.id}&state=succeeded`)).text).toContain(`/console/runs/${runId}`);
  const none = await get(`/console/runs?jobId=${job.id}&state=failed`);
  expect([none.status, none.text.includes(runId)]).toEqual([200, false]);
});

it('shows a run with its state, prompt, outcome and trace', async () => {
  const res = await get(`/console/runs/${runId}`);
  expect(res.status).toBe(200);
  expect(res.text).toContain('<strong>succeeded</strong>');
  expect(res.text).toContain('Say hello');
  expect(res.text).toContain('prompt_rendered');
  expect(res.text).toContain('agent_output');
});

it('answers 404 for another tenant\'s job and run, and shows none of them', async () => {
  const other = await sessionCookie(app, await createOwner(app.database.db, { tenantName: 'Other' }));
  for (const path of [`/console/jobs/${job.id}`, `/console/jobs/${job.slug}`, `/console/runs/${runId}`]) {
    const res = await get(path, other);
    expect(res.status).toBe(404);
    expect(res.text).not.toContain('Triage');
  }
  const list = await get('/console/jobs', other);
  expect([list.status, list.text.includes('Triage'), list.text.includes('No job yet.')]).toEqual([200, false, true]);
  expect((await get('/console/runs', other)).text).not.toContain(runId);
});

it('refuses a cursor from another list with the error page, not a 500', async () => {
  const res = await get('/console/jobs?cursor=not-a-cursor');
  expect(res.status).toBe(400);
});
