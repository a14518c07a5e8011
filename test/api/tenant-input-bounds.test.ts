// No tenant input holds the main thread: event patterns are bounded at save and matched in linear time
// (also the ones saved before the bound), and templates render in worker threads, so /healthz keeps
// answering through the slowest renders a tenant can send.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import request from 'supertest';
import { RENDER_LIMIT_EXCEEDED } from '../../src/jobs/templates-fns';
import { call } from '../support/http';
import { accessToken, createOwner, type TestOwner } from '../support/identity';
import { githubDelivery } from '../support/kit';
import { startListeningApp, type ListeningApp } from '../support/server';

let listening: ListeningApp;
let owner: TestOwner;
let bearer: Record<string, string>;

beforeAll(async () => {
  listening = await startListeningApp({ rateLimits: { api: 0, apiAddress: 0 } });
  owner = await createOwner(listening.app.database.db);
  bearer = { authorization: `Bearer ${await accessToken(listening.app, owner)}` };
});
afterAll(() => listening.close());

const api = (method: string, path: string, body?: unknown) => call(listening.app, method, path, { headers: bearer, body });
const job = (events: string[], sourceId: string) => ({ name: `Events ${randomUUID()}`, promptTemplate: 'Event {{ event }}', triggers: [{ type: 'webhook', id: 'trg_events', sourceId, events }] });

async function githubSource(): Promise<{ id: string; signingSecret: string }> {
  const res = await api('POST', '/api/v1/webhook-sources', { name: 'GitHub', format: 'github' });
  expect(res.status).toBe(201);
  return res.body;
}

describe('event patterns', () => {
  it('are refused at save with more than 8 wildcards, naming the pattern', async () => {
    const source = await githubSource();
    const many = `${'a*'.repeat(12)}b`;
    const refused = await api('POST', '/api/v1/jobs', job(['issues.*', many], source.id));
    expect([refused.status, refused.body.error]).toEqual([400, { code: 'validation_failed', message: '`triggers[0].events[1]` has 12 wildcards (`*`); at most 8.' }]);

    const saved = await api('POST', '/api/v1/jobs', job(['*.*.*.*.*.*.*.*'], source.id));
    expect(saved.status).toBe(201);
    const update = await api('PATCH', `/api/v1/jobs/${saved.body.id}`, { triggers: job([many], source.id).triggers });
    expect([update.status, update.body.error?.message]).toEqual([400, '`triggers[0].events[0]` has 12 wildcards (`*`); at most 8.']);
    expect((await api('GET', `/api/v1/jobs/${saved.body.id}`)).body.triggers[0].events).toEqual(['*.*.*.*.*.*.*.*']);
  });

  it('saved before the bound still match, in linear time, at intake', async () => {
    const { app } = listening;
    const source = await githubSource();
    const created = (await api('POST', '/api/v1/jobs', job(['issues.*'], source.id))).body;
    // A pattern the regular expressions took 26 s with, on a 200-character event (the longest kept).
    const stored = `${'a*'.repeat(10)}b`;
    const row = await app.database.db.trigger.findFirstOrThrow({ where: { tenantId: owner.tenantId, jobId: created.id } });
    await app.database.db.trigger.update({ where: { tenantId_jobId_id: { tenantId: row.tenantId, jobId: row.jobId, id: row.id } }, data: { config: { ...(row.config as object), events: [stored] } } });
    app.jobs.forgetKept();

    const deliver = async (event: string) => {
      const { body, headers } = githubDelivery(source.signingSecret, { zen: 'x' }, { event });
      const res = await request(app.app).post(`/hooks/${source.id}`).set(headers).send(body);
      expect(res.status).toBe(202);
      return res.body.activityId as string;
    };
    const started = performance.now();
    const [missed, matched] = [await deliver('a'.repeat(200)), await deliver(`${'a'.repeat(199)}b`)];
    const evaluated = async (id: string) => {
      for (;;) {
        const activity = (await api('GET', `/api/v1/webhook-activity/${id}`)).body;
        if (activity.evaluatedAt) return activity;
        await sleep(20);
      }
    };
    expect((await evaluated(missed)).runIds).toEqual([]);
    expect((await evaluated(matched)).runIds).toHaveLength(1);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe('template renders', () => {
  it('run off the main thread: /healthz answers within 1 s while several renders run into the limit', async () => {
    const { url } = listening;
    const template = '{% for a in (1..1000000) %}{% for b in (1..1000000) %}x{% endfor %}{% endfor %}';
    const headers = { ...bearer, 'content-type': 'application/json' };
    const renders = Promise.all(
      Array.from({ length: 4 }, async () => {
        const res = await fetch(`${url}/api/v1/job-templates/test`, { method: 'POST', headers, body: JSON.stringify({ template, context: {} }) });
        return { status: res.status, body: (await res.json()) as { error: { code: string; message: string } } };
      }),
    );
    let done = false;
    void renders.finally(() => (done = true));
    const waits: number[] = [];
    while (!done) {
      const asked = performance.now();
      const res = await fetch(`${url}/healthz`);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      waits.push(performance.now() - asked);
      await sleep(50);
    }
    for (const { status, body } of await renders) {
      expect([status, body.error.code]).toEqual([400, 'invalid_template']);
      expect(body.error.message).toContain(RENDER_LIMIT_EXCEEDED);
    }
    // The four renders take about a second each; /healthz was asked all along and never waited long.
    expect(waits.length).toBeGreaterThan(10);
    expect(Math.max(...waits)).toBeLessThan(1_000);
  });
});
