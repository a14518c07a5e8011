// Intake under load and across stops: deliveries arriving together are written together and each is still
// recorded once; a delivery left waiting by a stop is evaluated at the next start and starts its runs once;
// a source kept by one instance sees another instance's secret rotation at the next delivery.
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { startOtherInstance, startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner } from '../support/identity';
import { githubDelivery } from '../support/kit';

let app: TestApp;
let bearer: Record<string, string>;

beforeAll(async () => {
  app = await startTestApp({ rateLimits: { api: 0, apiAddress: 0 } });
  bearer = { authorization: `Bearer ${await accessToken(app, await createOwner(app.database.db))}` };
});
afterAll(async () => {
  await app.close();
});

async function created(path: string, body: unknown) {
  const res = await call(app, 'POST', path, { headers: bearer, body });
  expect(res.status).toBe(201);
  return res.body;
}

/** A GitHub source and a job (no execution target: its runs fail at dispatch) whose trigger takes every `issues.labeled`. */
async function sourceWithJob() {
  const source = await created('/api/v1/webhook-sources', { name: 'GitHub', format: 'github' });
  const job = await created('/api/v1/jobs', { name: `Labelled ${randomUUID()}`, promptTemplate: 'Issue {{ payload.issue.number }}', triggers: [{ type: 'webhook', id: 'trg_labeled', sourceId: source.id, events: ['issues.labeled'] }] });
  return { source: source as { id: string; signingSecret: string }, job: job as { id: string } };
}

const labeled = (secret: string, id = randomUUID(), number = 42) => githubDelivery(secret, { action: 'labeled', issue: { number }, label: { name: 'agent' } }, { id });

const activity = async (id: string) => (await call(app, 'GET', `/api/v1/webhook-activity/${id}`, { headers: bearer })).body;

/** The activity once its triggers have decided (`evaluatedAt` set). */
async function evaluated(id: string) {
  for (let i = 0; i < 200; i++) {
    const row = await activity(id);
    if (row.evaluatedAt) return row;
    expect([row.decisions, row.runIds]).toEqual([[], []]); // waiting: nothing decided yet
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`activity ${id} was never evaluated`);
}

describe('deliveries arriving together', () => {
  it('are written together, each recorded once even when a repeat is among them, and each evaluated', async () => {
    const { source, job } = await sourceWithJob();
    const repeated = randomUUID();
    const deliveries = [...Array.from({ length: 8 }, (_, i) => labeled(source.signingSecret, randomUUID(), i)), ...Array.from({ length: 3 }, () => labeled(source.signingSecret, repeated))];
    // Called in one turn of the event loop, as concurrent requests are: one batch, with a repeat in it.
    const answers = (await Promise.all(deliveries.map(({ body, headers }) => app.webhooks.intake(source.id, headers, Buffer.from(body))))) as { activityId: string; duplicate: boolean }[];

    const firstOfRepeat = answers.slice(8).filter((answer) => !answer.duplicate);
    expect(firstOfRepeat).toHaveLength(1);
    expect(answers.slice(8).filter((answer) => answer.duplicate).map((answer) => answer.activityId)).toEqual([firstOfRepeat[0].activityId, firstOfRepeat[0].activityId]);
    expect(answers.slice(0, 8).every((answer) => !answer.duplicate)).toBe(true);
    const ids = new Set(answers.map((answer) => answer.activityId));
    expect(ids.size).toBe(9);
    expect(await app.database.db.webhookActivity.count({ where: { sourceId: source.id } })).toBe(9);

    for (const id of ids) expect((await evaluated(id)).runIds).toHaveLength(1);
    expect(await app.database.db.run.count({ where: { jobId: job.id } })).toBe(9);
  });

  it('over HTTP are answered 202 each, with one recording per delivery id', async () => {
    const { source } = await sourceWithJob();
    const repeated = randomUUID();
    const deliveries = [labeled(source.signingSecret), labeled(source.signingSecret, repeated), labeled(source.signingSecret, repeated)];
    const answers = await Promise.all(deliveries.map(({ body, headers }) => request(app.app).post(`/hooks/${source.id}`).set(headers).send(body)));
    expect(answers.map((res) => res.status)).toEqual([202, 202, 202]);
    expect(answers[1].body.activityId).toBe(answers[2].body.activityId);
    expect([answers[1].body.duplicate, answers[2].body.duplicate].sort()).toEqual([false, true]);
    expect(await app.database.db.webhookActivity.count({ where: { sourceId: source.id } })).toBe(2);
  });
});

describe('a delivery the database could not store', () => {
  it('is refused alone, while the deliveries beside it are recorded', async () => {
    const { source } = await sourceWithJob();
    const good = labeled(source.signingSecret);
    const body = JSON.stringify({ action: 'labeled', issue: { number: 1, title: 'bad \u0000 byte' } });
    const bad = { body, headers: { ...good.headers, 'x-github-delivery': randomUUID(), 'x-hub-signature-256': githubDelivery(source.signingSecret, JSON.parse(body)).headers['x-hub-signature-256'] } };
    const [recorded, refused] = await Promise.allSettled([good, bad].map(({ body, headers }) => app.webhooks.intake(source.id, headers, Buffer.from(body))));
    expect(recorded).toMatchObject({ status: 'fulfilled', value: { duplicate: false } });
    expect(refused).toMatchObject({ status: 'rejected', reason: { status: 400, code: 'invalid_json' } });
    const res = await request(app.app).post(`/hooks/${source.id}`).set(bad.headers).send(bad.body);
    expect([res.status, res.body.error.code]).toEqual([400, 'invalid_json']);
    expect(await app.database.db.webhookActivity.count({ where: { sourceId: source.id } })).toBe(1);
  });
});

describe('a delivery left waiting by a stop', () => {
  it('is evaluated at the next start', async () => {
    const { source, job } = await sourceWithJob();
    const tenantId = (await app.database.db.webhookSource.findFirstOrThrow({ where: { id: source.id } })).tenantId;
    // Recorded, then the process stopped before its evaluation: the row is all that is left.
    const context = { source: { id: source.id, format: 'github' }, event: 'issues', action: 'labeled', headers: {}, delivery: { id: 'd-stopped', receivedAt: new Date().toISOString() }, payload: { action: 'labeled', issue: { number: 7 } } };
    await app.database.db.webhookActivity.create({ data: { id: 'act_stopped', tenantId, sourceId: source.id, deliveryId: 'd-stopped', event: 'issues', action: 'labeled', context, decisions: [], runIds: [] } });

    app.webhooks.resumeEvaluation();
    const row = await evaluated('act_stopped');
    expect(row.runIds).toHaveLength(1);
    expect(row.decisions).toEqual([{ jobId: job.id, triggerId: 'trg_labeled', decision: 'match', details: [], runId: row.runIds[0] }]);
    const run = await app.database.db.run.findFirstOrThrow({ where: { id: row.runIds[0] } });
    expect(run).toMatchObject({ jobId: job.id, prompt: 'Issue 7', triggerType: 'webhook', triggerId: 'trg_labeled' });
  });

  it('shows decisions recorded before they carried details and runs as having none', async () => {
    const { source, job } = await sourceWithJob();
    const tenantId = (await app.database.db.webhookSource.findFirstOrThrow({ where: { id: source.id } })).tenantId;
    const context = { source: { id: source.id, format: 'github' }, event: 'issues', action: 'labeled', headers: {}, delivery: { id: 'd-old', receivedAt: new Date().toISOString() }, payload: {} };
    const decisions = [{ jobId: job.id, triggerId: 'trg_labeled', decision: 'match' }];
    await app.database.db.webhookActivity.create({ data: { id: 'act_old', tenantId, sourceId: source.id, deliveryId: 'd-old', event: 'issues', action: 'labeled', context, decisions, runIds: ['run_old'], evaluatedAt: new Date() } });
    expect((await activity('act_old')).decisions).toEqual([{ ...decisions[0], details: [], runId: null }]);
  });

  it('starts its runs once when the stop came after a run had started', async () => {
    const { source, job } = await sourceWithJob();
    const { body, headers } = labeled(source.signingSecret);
    const res = await request(app.app).post(`/hooks/${source.id}`).set(headers).send(body);
    const first = await evaluated(res.body.activityId);
    expect(first.runIds).toHaveLength(1);
    // The run was started, then the process stopped before the decisions were saved.
    await app.database.db.webhookActivity.update({ where: { id: first.id }, data: { evaluatedAt: null, decisions: [], runIds: [] } });

    app.webhooks.resumeEvaluation();
    const again = await evaluated(first.id);
    expect(again.runIds).toEqual(first.runIds);
    expect(again.decisions).toEqual(first.decisions);
    expect(await app.database.db.run.count({ where: { jobId: job.id } })).toBe(1);
  });
});

describe('sources kept by an instance', () => {
  it('see a secret rotated by another instance at the next delivery', async () => {
    const other = await startOtherInstance(app);
    try {
      const { source } = await sourceWithJob();
      const before = labeled(source.signingSecret);
      expect((await request(other.app).post(`/hooks/${source.id}`).set(before.headers).send(before.body)).status).toBe(202); // kept now

      const rotated = await call(app, 'POST', `/api/v1/webhook-sources/${source.id}/rotate-secret`, { headers: bearer });
      const fresh = labeled(rotated.body.signingSecret);
      expect((await request(other.app).post(`/hooks/${source.id}`).set(fresh.headers).send(fresh.body)).status).toBe(202);
      const stale = labeled(source.signingSecret);
      const refused = await request(other.app).post(`/hooks/${source.id}`).set(stale.headers).send(stale.body);
      expect([refused.status, refused.body.error.code]).toEqual([401, 'invalid_signature']);
    } finally {
      await other.close();
    }
  });
});
