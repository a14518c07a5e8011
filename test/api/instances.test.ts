// Two instances on one database: a job changed through one is what the other runs at once, and a run
// stopped through one ends where the other executes it. On PostgreSQL both are heard through the database;
// SQLite serves one instance (the checks are skipped).
import request from 'supertest';
import { agentCommand, processesOf } from '../support/agent';
import { postgresUrl } from '../support/databases';
import { until } from '../support/until';
import { accessToken, createOwner } from '../support/identity';
import { call } from '../support/http';
import { githubDelivery } from '../support/kit';
import { startOtherInstance, startTestApp, type TestApp } from '../support/app';

const onPostgres = postgresUrl ? it : it.skip;

let app: TestApp;
let other: Awaited<ReturnType<typeof startOtherInstance>>;
let bearer: Record<string, string>;

beforeAll(async () => {
  app = await startTestApp({ localAgent: { command: agentCommand(), timeoutSeconds: 60, sandbox: 'off' } });
  other = await startOtherInstance(app);
  const owner = await createOwner(app.database.db);
  bearer = { authorization: `Bearer ${await accessToken(app, owner)}` };
});
afterAll(async () => {
  await other.close();
  await app.close();
});

onPostgres('an instance runs the job as another instance last saved it', async () => {
  const created = await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: { name: 'Shared', promptTemplate: 'First' } });
  const invoke = async () => (await call(other, 'POST', `/api/v1/jobs/${created.body.id}/invocations`, { headers: bearer, body: {} })).body;
  const promptOf = async (runId: string) => (await call(other, 'GET', `/api/v1/runs/${runId}`, { headers: bearer })).body.prompt;
  expect(await promptOf((await invoke()).runId)).toBe('First'); // the other instance now keeps the job

  await call(app, 'PATCH', `/api/v1/jobs/${created.body.id}`, { headers: bearer, body: { promptTemplate: 'Second' } });
  let prompt = '';
  for (let i = 0; i < 40 && prompt !== 'Second'; i++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    prompt = await promptOf((await invoke()).runId);
  }
  expect(prompt).toBe('Second');

  await call(app, 'POST', `/api/v1/jobs/${created.body.id}/disable`, { headers: bearer });
  let status = 0;
  for (let i = 0; i < 40 && status !== 409; i++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    status = (await call(other, 'POST', `/api/v1/jobs/${created.body.id}/invocations`, { headers: bearer, body: {} })).status;
  }
  expect(status).toBe(409);
});

onPostgres('a run stopped through one instance ends where the other executes it', async () => {
  const job = (await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: { name: 'Long', promptTemplate: 'sleep', executionTargetId: 'local' } })).body;
  const { runId } = (await call(app, 'POST', `/api/v1/jobs/${job.id}/invocations`, { headers: bearer, body: {} })).body;
  const run = await until('the run to run', async () => {
    const row = await app.database.db.run.findUniqueOrThrow({ where: { id: runId } });
    return row.state === 'running' && processesOf(runId).length > 0 && row;
  });
  // Whichever instance took the run, the stop goes through the other.
  const [owner, bystander] = run.ownerId === app.sweeps.instanceId ? [app, other] : [other, app];
  expect(run.ownerId).toBe(owner.sweeps.instanceId);
  expect((await call(bystander, 'POST', `/api/v1/runs/${runId}/stop`, { headers: bearer })).status).toBe(202);
  await until('the agent to end', async () => processesOf(runId).length === 0, { tries: 200, everyMs: 25 });
  expect((await app.database.db.run.findUniqueOrThrow({ where: { id: runId } })).state).toBe('canceled');
});

onPostgres('a rate limit is counted exactly across instances: asked through both at once, `limit` runs are created', async () => {
  const job = (await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: { name: 'Rated on two', promptTemplate: 'x', executionTargetId: 'local', concurrencyLimit: 20, flowControl: { rateLimit: { limit: 7, period: '1h' } } } })).body;
  const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => call(i % 2 ? other : app, 'POST', `/api/v1/jobs/${job.id}/invocations`, { headers: bearer, body: {} })));
  expect(answers.filter((res) => res.status === 202)).toHaveLength(7);
  expect(answers.filter((res) => res.status === 429)).toHaveLength(23);
  expect(await app.database.db.run.count({ where: { jobId: job.id } })).toBe(7);
});

onPostgres('`skip` is exact across instances: asked through both at once, `limit` runs of the key are created', async () => {
  const job = (await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: { name: 'Skipping on two', promptTemplate: 'sleep', executionTargetId: 'local', concurrencyLimit: 20, flowControl: { concurrency: { limit: 2, onConflict: 'skip' } } } })).body;
  const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => call(i % 2 ? other : app, 'POST', `/api/v1/jobs/${job.id}/invocations`, { headers: bearer, body: {} })));
  expect(answers.filter((res) => res.status === 202)).toHaveLength(2);
  expect(answers.filter((res) => res.status === 409 && res.body.error.code === 'run_skipped')).toHaveLength(18);
  for (const res of answers.filter((one) => one.status === 202)) await call(app, 'POST', `/api/v1/runs/${res.body.runId}/stop`, { headers: bearer });
});

onPostgres('debounce folds deliveries evaluated on both instances at once into one run per key', async () => {
  const source = (await call(app, 'POST', '/api/v1/webhook-sources', { headers: bearer, body: { name: 'Folding on two', format: 'github' } })).body;
  const triggers = [{ type: 'webhook', sourceId: source.id, events: ['issues.labeled'] }];
  const job = (await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: { name: 'Folding on two', promptTemplate: 'x', executionTargetId: 'local', triggers, flowControl: { debounce: { key: 'payload.label.name', period: '1h' } } } })).body;
  // Ten labels, each delivered four times, two through each instance.
  const deliveries = Array.from({ length: 40 }, (_, n) => githubDelivery(source.signingSecret, { action: 'labeled', label: { name: `l${Math.floor(n / 4)}` } }));
  const accepted = await Promise.all(deliveries.map(({ body, headers }, i) => request((i % 2 ? other : app).app).post(`/hooks/${source.id}`).set(headers).send(body)));
  expect(accepted.map((res) => res.status)).toEqual(deliveries.map(() => 202));
  const decided = await until('every delivery decided', async () => {
    const rows = await app.database.db.webhookActivity.findMany({ where: { sourceId: source.id } });
    return rows.length === deliveries.length && rows.every((row) => row.evaluatedAt) && rows;
  });
  expect(decided).toHaveLength(40);
  const runs = await app.database.db.run.findMany({ where: { jobId: job.id } });
  expect(runs).toHaveLength(10);
  expect(new Set(runs.map((run) => run.state))).toEqual(new Set(['queued'])); // waiting their hour for more
  for (const run of runs) await call(app, 'POST', `/api/v1/runs/${run.id}/stop`, { headers: bearer });
});
