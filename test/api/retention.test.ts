// Retention on a real server and database: what is older than the days kept goes (finished runs with
// their traces, evaluated webhook activity, finished event deliveries), and a job keeps only its newest
// finished runs; an unfinished run, and a finished one an unfinished run replays, are never touched; and
// requests are answered while a backlog is pruned.
import request from 'supertest';
import { agentCommand } from '../support/agent';
import { startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner, sessionCookie, type TestOwner } from '../support/identity';
import { createJob, githubDelivery, runSettled } from '../support/kit';
import { newId } from '../../src/lib/ids';
import { until } from '../support/until';

let app: TestApp;
let bearer: Record<string, string>;
let owner: TestOwner;
const DAY = 86_400_000;
const longAgo = new Date(Date.now() - 40 * DAY);

beforeAll(async () => {
  app = await startTestApp({ localAgent: { command: agentCommand(), timeoutSeconds: 60, sandbox: 'off' }, rateLimits: { api: 0, apiAddress: 0 }, retention: { days: 30, maxRunsPerJob: 3 } });
  owner = await createOwner(app.database.db);
  bearer = { authorization: `Bearer ${await accessToken(app, owner)}` };
});
afterAll(() => app.close());

const api = (method: string, path: string, body?: unknown) => call(app, method, path, { headers: bearer, body });
const invoke = async (jobId: string, p: string) => (await api('POST', `/api/v1/jobs/${jobId}/invocations`, { data: { p } })).body.runId as string;
const exists = async (runId: string) => (await app.database.db.run.count({ where: { id: runId } })) === 1;

it('deletes what is older than the days kept, and a job\'s runs beyond its newest, but nothing unfinished or still referred to', async () => {
  const job = await createJob(app, bearer, { name: 'Kept', promptTemplate: '{{ data.p }}', executionTargetId: 'local' });
  const old = await invoke(job.id, 'json old');
  await runSettled(app, bearer, old);
  const referred = await invoke(job.id, 'json referred');
  await runSettled(app, bearer, referred);
  // A long run holds the job's one slot, so that a replay of `referred` waits queued.
  const long = await invoke(job.id, 'sleep');
  await runSettled(app, bearer, long, ['running']);
  // Replays are the owner's, from a session.
  const replayed = await request(app.app).post(`/console/runs/${referred}/replay`).set('cookie', await sessionCookie(app, owner)).set('origin', 'http://localhost:3000');
  const replay = /(run_\w+)$/.exec(replayed.headers.location)![1];
  expect((await api('GET', `/api/v1/runs/${replay}`)).body.state).toBe('queued');
  await app.database.db.run.updateMany({ where: { id: { in: [old, referred] } }, data: { finishedAt: longAgo } });

  // Webhook activity and event deliveries of long ago, and of now.
  const source = (await api('POST', '/api/v1/webhook-sources', { name: 'GitHub', format: 'github' })).body;
  const deliver = async () => {
    const { body, headers } = githubDelivery(source.signingSecret, { action: 'opened', issue: { number: 1 } });
    return (await request(app.app).post(`/hooks/${source.id}`).set(headers).send(body)).body.activityId as string;
  };
  const [oldActivity, newActivity] = [await deliver(), await deliver()];
  await until('the deliveries evaluated', async () => (await app.database.db.webhookActivity.count({ where: { id: { in: [oldActivity, newActivity] }, evaluatedAt: { not: null } } })) === 2);
  await app.database.db.webhookActivity.update({ where: { id: oldActivity }, data: { receivedAt: longAgo } });
  const subscription = (await api('POST', '/api/v1/event-subscriptions', { url: 'http://127.0.0.1:9/flows', events: ['webhook.received'] })).body;
  await deliver();
  // Its first attempt made (refused), so that no attempt under way writes its state after the test's.
  const deliveries = await until('the event delivery attempted', async () => {
    const rows = await app.database.db.eventDelivery.findMany({ where: { subscriptionId: subscription.id, attempts: { gt: 0 } }, select: { id: true } });
    return rows.length > 0 && rows;
  });
  await app.database.db.eventDelivery.updateMany({ where: { subscriptionId: subscription.id }, data: { state: 'failed', createdAt: longAgo } });

  const pruned = await app.retention.prune();
  expect(pruned).toMatchObject({ runs: 1, activity: 1 });
  expect(pruned.deliveries).toBe(deliveries.length);
  expect(await exists(old)).toBe(false);
  expect(await app.database.db.runEvent.count({ where: { runId: old } })).toBe(0);
  expect([await exists(referred), await exists(long), await exists(replay)]).toEqual([true, true, true]);
  expect(await app.database.db.webhookActivity.count({ where: { id: { in: [oldActivity, newActivity] } } })).toBe(1);
  expect(await app.database.db.eventDelivery.count({ where: { subscriptionId: subscription.id } })).toBe(0);

  // A second turn has nothing left to do.
  expect(await app.retention.prune()).toEqual({ runs: 0, activity: 0, deliveries: 0, refusals: 0 });
  // Once its replay is over, the run it replayed goes too.
  await api('POST', `/api/v1/runs/${long}/stop`);
  await runSettled(app, bearer, replay);
  expect((await app.retention.prune()).runs).toBe(1);
  expect(await exists(referred)).toBe(false);
});

it('keeps a job\'s newest finished runs, by the operator\'s count', async () => {
  const job = await createJob(app, bearer, { name: 'Crowded', promptTemplate: 'json {{ data.p }}', executionTargetId: 'local' });
  const runs: string[] = [];
  for (const p of ['1', '2', '3', '4', '5']) {
    runs.push(await invoke(job.id, p));
    await runSettled(app, bearer, runs[runs.length - 1]);
  }
  expect((await app.retention.prune()).runs).toBe(2);
  expect(await Promise.all(runs.map(exists))).toEqual([false, false, true, true, true]);
});

it('answers requests while it prunes a backlog, batch by batch', async () => {
  const job = await createJob(app, bearer, { name: 'Backlog', promptTemplate: 'x', executionTargetId: 'local' });
  const tenantId = owner.tenantId;
  const old = (i: number) => ({ id: newId('run', longAgo.getTime() + i), tenantId, jobId: job.id, name: 'Old', state: 'succeeded', triggerType: 'invocation', prompt: 'x', inputs: {}, finishedAt: longAgo });
  await app.database.db.run.createMany({ data: Array.from({ length: 3000 }, (_, i) => old(i)) });
  let pruning = true;
  const pruned = app.retention.prune().finally(() => (pruning = false));
  // Each answer that comes while the turn still runs: the turn lets requests in between its batches.
  let answeredMeanwhile = 0;
  while (pruning) {
    const res = await api('GET', '/api/v1/me');
    expect(res.status).toBe(200);
    if (pruning) answeredMeanwhile++;
  }
  expect((await pruned).runs).toBe(3000);
  expect(answeredMeanwhile).toBeGreaterThan(0);
  expect(await app.database.db.run.count({ where: { jobId: job.id } })).toBe(0);
});
