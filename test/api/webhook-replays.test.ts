// Replays of formats whose signature covers the body only: a captured delivery resent under a new delivery
// id is recorded once and starts nothing while its first recording is younger than the replay window, on one
// instance or two at once; after the window the same body is a new delivery. Standard Webhooks signs its id
// and is left alone. The window passes by moving a first recording's time back.
import { createHmac, randomUUID } from 'node:crypto';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { startOtherInstance, startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner } from '../support/identity';
import { githubDelivery } from '../support/kit';
import { until } from '../support/until';

const WINDOW_SECONDS = 60;
let app: TestApp;
let other: Awaited<ReturnType<typeof startOtherInstance>>;
let bearer: Record<string, string>;

beforeAll(async () => {
  app = await startTestApp({ webhookReplayWindowSeconds: WINDOW_SECONDS, rateLimits: { api: 0, apiAddress: 0 } });
  other = await startOtherInstance(app);
  bearer = { authorization: `Bearer ${await accessToken(app, await createOwner(app.database.db))}` };
});
afterAll(async () => {
  await other.close();
  await app.close();
});

/** A source of `format` and a job whose trigger matches every delivery of it (no target: its runs only need to exist). */
async function sourceWithJob(format: string, extra: Record<string, unknown> = {}) {
  const source = (await call(app, 'POST', '/api/v1/webhook-sources', { headers: bearer, body: { name: `${format} replays`, format, ...extra } })).body;
  const job = (await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: { name: `On ${source.id}`, promptTemplate: 'x', concurrencyLimit: 50, triggers: [{ type: 'webhook', sourceId: source.id, events: ['*'] }] } })).body;
  return { source: source as { id: string; signingSecret: string }, jobId: job.id as string };
}

const labeled = () => ({ action: 'labeled', label: { name: 'agent' }, issue: { number: 42, nonce: randomUUID() } });
const deliver = (on: { app: TestApp['app'] }, sourceId: string, { body, headers }: { body: string; headers: Record<string, string> }) =>
  request(on.app).post(`/hooks/${sourceId}`).set(headers).send(body);

/** The source's activity once every delivery is evaluated, and the job's runs. */
async function settled(sourceId: string, jobId: string) {
  const activity = await until('the deliveries evaluated', async () => {
    const rows = await app.database.db.webhookActivity.findMany({ where: { sourceId }, orderBy: { receivedAt: 'asc' } });
    return rows.every((row) => row.evaluatedAt) && rows;
  });
  return { activity, runs: await app.database.db.run.count({ where: { jobId } }) };
}

it('records a GitHub delivery resent under a new X-GitHub-Delivery once, starts one run, and logs the replay', async () => {
  const { source, jobId } = await sourceWithJob('github');
  const payload = labeled();
  const first = await deliver(app, source.id, githubDelivery(source.signingSecret, payload));
  const replay = await deliver(app, source.id, githubDelivery(source.signingSecret, payload));
  expect(first.status).toBe(202);
  expect(first.body.duplicate).toBe(false);
  expect(replay.status).toBe(202);
  expect(replay.body).toEqual({ activityId: first.body.activityId, duplicate: true });
  const { activity, runs } = await settled(source.id, jobId);
  expect(activity).toHaveLength(1);
  expect(runs).toBe(1);
  expect(app.logLines.some((line) => line.includes('replayed webhook body') && line.includes(first.body.activityId))).toBe(true);
});

it('records an hmac-sha256 delivery resent under a new delivery id once', async () => {
  const { source, jobId } = await sourceWithJob('hmac-sha256', { signatureHeader: 'x-acme-signature' });
  const body = JSON.stringify(labeled());
  const headers = () => ({ 'content-type': 'application/json', 'x-acme-signature': createHmac('sha256', source.signingSecret).update(body).digest('hex'), 'x-delivery-id': randomUUID() });
  const first = await deliver(app, source.id, { body, headers: headers() });
  const replay = await deliver(app, source.id, { body, headers: headers() });
  expect(replay.body).toEqual({ activityId: first.body.activityId, duplicate: true });
  expect((await settled(source.id, jobId)).runs).toBe(1);
});

it('records a Linear delivery resent under a new Linear-Delivery within its 5 minutes once', async () => {
  const { source, jobId } = await sourceWithJob('linear');
  const body = JSON.stringify({ type: 'Issue', action: 'create', webhookTimestamp: Date.now(), data: { id: randomUUID() } });
  const headers = () => ({ 'content-type': 'application/json', 'linear-signature': createHmac('sha256', source.signingSecret).update(body).digest('hex'), 'linear-delivery': randomUUID() });
  const first = await deliver(app, source.id, { body, headers: headers() });
  expect((await deliver(app, source.id, { body, headers: headers() })).body).toEqual({ activityId: first.body.activityId, duplicate: true });
  expect((await settled(source.id, jobId)).runs).toBe(1);
});

it('leaves Standard Webhooks alone: it signs its id, so the same body under a new id is a new delivery', async () => {
  const { source, jobId } = await sourceWithJob('standard-webhooks');
  const body = JSON.stringify({ type: 'issue.labeled', nonce: randomUUID() });
  const signed = () => {
    const id = `msg_${randomUUID()}`;
    const at = new Date();
    return { body, headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(source.signingSecret).sign(id, at, body) } };
  };
  const answers = [await deliver(app, source.id, signed()), await deliver(app, source.id, signed())];
  expect(answers.map((res) => res.body.duplicate)).toEqual([false, false]);
  const { activity, runs } = await settled(source.id, jobId);
  expect(activity.map((row) => row.bodyHash)).toEqual([null, null]);
  expect(runs).toBe(2);
});

it('starts one run when two instances receive the same body under different ids at once', async () => {
  const { source, jobId } = await sourceWithJob('github');
  const payload = labeled();
  const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => deliver(i % 2 ? other : app, source.id, githubDelivery(source.signingSecret, payload))));
  expect(answers.map((res) => res.status)).toEqual(answers.map(() => 202));
  const recorded = answers.filter((res) => !res.body.duplicate);
  expect(recorded).toHaveLength(1);
  expect(new Set(answers.map((res) => res.body.activityId))).toEqual(new Set([recorded[0].body.activityId]));
  const { activity, runs } = await settled(source.id, jobId);
  expect(activity).toHaveLength(1);
  expect(runs).toBe(1);
});

it('takes the same body again once the window has passed, on both instances at once as one delivery', async () => {
  const { source, jobId } = await sourceWithJob('github');
  const payload = labeled();
  const first = await deliver(app, source.id, githubDelivery(source.signingSecret, payload));
  expect((await deliver(other, source.id, githubDelivery(source.signingSecret, payload))).body.duplicate).toBe(true);
  await settled(source.id, jobId);

  await app.database.db.webhookActivity.update({ where: { id: first.body.activityId }, data: { receivedAt: new Date(Date.now() - (WINDOW_SECONDS + 1) * 1000) } });
  const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => deliver(i % 2 ? other : app, source.id, githubDelivery(source.signingSecret, payload))));
  const recorded = answers.filter((res) => !res.body.duplicate);
  expect(recorded).toHaveLength(1);
  expect(recorded[0].body.activityId).not.toBe(first.body.activityId);
  const { activity, runs } = await settled(source.id, jobId);
  expect(activity.map((row) => row.id)).toEqual([first.body.activityId, recorded[0].body.activityId]);
  // The first recording gave up its hash to the second, which a replay now meets.
  expect(activity[0].bodyHash).toBeNull();
  expect(activity[1].bodyHash).toEqual(expect.any(String));
  expect(runs).toBe(2);
  expect((await deliver(app, source.id, githubDelivery(source.signingSecret, payload))).body).toEqual({ activityId: recorded[0].body.activityId, duplicate: true });
});

it('takes the body again after a window of 1 s, in real time', async () => {
  const short = await startOtherInstance(app, { config: { webhookReplayWindowSeconds: 1 } });
  try {
    const { source, jobId } = await sourceWithJob('github');
    const payload = labeled();
    const send = () => deliver(short, source.id, githubDelivery(source.signingSecret, payload));
    const first = await send();
    expect((await send()).body).toEqual({ activityId: first.body.activityId, duplicate: true });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const later = await send();
    expect(later.body.duplicate).toBe(false);
    expect(later.body.activityId).not.toBe(first.body.activityId);
    expect((await settled(source.id, jobId)).runs).toBe(2);
  } finally {
    await short.close();
  }
});

it('recognises no replay with FLOWS_WEBHOOK_REPLAY_WINDOW_SECONDS=0', async () => {
  const off = await startOtherInstance(app, { config: { webhookReplayWindowSeconds: 0 } });
  try {
    const { source, jobId } = await sourceWithJob('github');
    const payload = labeled();
    const answers = [await deliver(off, source.id, githubDelivery(source.signingSecret, payload)), await deliver(off, source.id, githubDelivery(source.signingSecret, payload))];
    expect(answers.map((res) => res.body.duplicate)).toEqual([false, false]);
    const { activity, runs } = await settled(source.id, jobId);
    expect(activity.map((row) => row.bodyHash)).toEqual([null, null]);
    expect(runs).toBe(2);
  } finally {
    await off.close();
  }
});
