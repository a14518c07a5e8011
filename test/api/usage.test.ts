// What a tenant's runs spent, summed by GET /api/v1/usage: per job and per UTC day over a window whose
// bounds are exact ([since, until)), known and unknown costs, runs without usage left out, another tenant's
// runs never counted, the default window, and the 400s. Runs are real rows of the test database with the
// usage an agent's stream would have left; one is a real run whose run.succeeded event carries its usage.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { Webhook } from 'standardwebhooks';
import { loadContract } from '../../src/http/contract';
import { newId } from '../../src/lib/ids';
import { startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner, type TestOwner } from '../support/identity';
import { createJob, runSettled } from '../support/kit';
import { until } from '../support/until';

const markers = mkdtempSync(path.join(tmpdir(), 'flows-usage-markers-'));
/** An agent that ends once the test has given its run a usage: a marker file named after the run appears. */
const WAITING_AGENT = `for i in $(seq 1 400); do [ -e "${markers}/$FLOWS_RUN_ID" ] && break; sleep 0.05; done; echo finished`;

let app: TestApp;
let owner: TestOwner;
let other: TestOwner;
let bearer: Record<string, string>;
let theirs: Record<string, string>;
let receiver: Server;
let receiverUrl: string;
const received: { headers: Record<string, string>; body: string }[] = [];

beforeAll(async () => {
  app = await startTestApp({ localAgent: { command: WAITING_AGENT, timeoutSeconds: 60, sandbox: 'off' }, rateLimits: { api: 0, apiAddress: 0 } });
  owner = await createOwner(app.database.db);
  other = await createOwner(app.database.db, { tenantName: 'Other' });
  bearer = { authorization: `Bearer ${await accessToken(app, owner)}` };
  theirs = { authorization: `Bearer ${await accessToken(app, other)}` };
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      received.push({ headers: req.headers as Record<string, string>, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});
afterAll(async () => {
  await app.close();
  receiver.close();
  rmSync(markers, { recursive: true, force: true });
});

type Usage = { inputTokens: number; outputTokens: number; cachedTokens: number; turns: number; costUsd: number | null; costSource: 'reported' | 'computed' | 'unknown' };
const usage = (inputTokens: number, outputTokens: number, cachedTokens: number, turns: number, costUsd: number | null): Usage => ({
  inputTokens,
  outputTokens,
  cachedTokens,
  turns,
  costUsd,
  costSource: costUsd === null ? 'unknown' : 'reported',
});

/** A finished run of the job written straight to the database, created at `createdAt`, with `usage` (or none). */
async function runOf(who: TestOwner, jobId: string, createdAt: string, spent: Usage | null) {
  const id = newId('run');
  await app.database.db.run.create({
    data: { id, tenantId: who.tenantId, jobId, name: 'n', state: 'succeeded', triggerType: 'invocation', prompt: 'p', inputs: {}, createdAt: new Date(createdAt), finishedAt: new Date(createdAt), ...(spent ? { usage: spent } : {}) },
  });
  return id;
}

const usageOf = (query: string, headers = bearer) => call(app, 'GET', `/api/v1/usage${query}`, { headers });

describe('a window of runs', () => {
  const WINDOW = '?since=2025-03-01T00:00:00Z&until=2025-03-08T00:00:00Z';
  const jobs: Record<string, string> = {};

  beforeAll(async () => {
    for (const slug of ['alpha', 'beta', 'gamma', 'delta']) jobs[slug] = (await createJob(app, bearer, { name: slug, slug, promptTemplate: 'x' })).id;
    const mine = (slug: string, at: string, spent: Usage | null) => runOf(owner, jobs[slug], at, spent);
    // On the window's first instant: counted.
    await mine('alpha', '2025-03-01T00:00:00.000Z', { ...usage(1000, 100, 500, 3, 0.1), costSource: 'reported' });
    await mine('alpha', '2025-03-02T23:59:59.999Z', { ...usage(2000, 200, 0, 4, 0.2), costSource: 'computed' });
    await mine('alpha', '2025-03-03T00:00:00.000Z', usage(10, 1, 0, 1, null));
    // A `command` agent's run: no usage, not counted.
    await mine('alpha', '2025-03-04T10:00:00.000Z', null);
    await mine('beta', '2025-03-02T12:00:00.000Z', usage(500, 50, 100, 2, 1.5));
    await mine('gamma', '2025-03-05T08:00:00.000Z', usage(7, 7, 0, 1, null));
    await mine('delta', '2025-03-06T08:00:00.000Z', usage(3, 2, 1, 1, 0));
    // Just before the window, and on its end (exclusive): not counted.
    await mine('alpha', '2025-02-28T23:59:59.999Z', usage(1_000_000, 1, 1, 1, 50));
    await mine('beta', '2025-03-08T00:00:00.000Z', usage(1_000_000, 1, 1, 1, 50));
    // Another tenant's run in the same window, the costliest of all.
    const elsewhere = await createJob(app, theirs, { name: 'alpha', slug: 'alpha', promptTemplate: 'x' });
    await runOf(other, elsewhere.id, '2025-03-02T12:00:00.000Z', usage(9_000_000, 9, 9, 9, 100));
  });

  it('sums per job, the costliest first, then by job id; known costs summed, unknown ones counted', async () => {
    const res = await usageOf(`${WINDOW}&groupBy=job`);
    expect(res.status).toBe(200);
    const [gamma, delta] = [jobs.gamma, jobs.delta].sort();
    const totals = {
      [jobs.beta]: { runs: 1, inputTokens: 500, outputTokens: 50, cachedTokens: 100, turns: 2, costUsd: 1.5, unknownCostRuns: 0 },
      [jobs.alpha]: { runs: 3, inputTokens: 3010, outputTokens: 301, cachedTokens: 500, turns: 8, costUsd: 0.3, unknownCostRuns: 1 },
      [jobs.gamma]: { runs: 1, inputTokens: 7, outputTokens: 7, cachedTokens: 0, turns: 1, costUsd: 0, unknownCostRuns: 1 },
      [jobs.delta]: { runs: 1, inputTokens: 3, outputTokens: 2, cachedTokens: 1, turns: 1, costUsd: 0, unknownCostRuns: 0 },
    };
    const slugOf = Object.fromEntries(Object.entries(jobs).map(([slug, id]) => [id, slug]));
    expect(res.body).toEqual({
      since: '2025-03-01T00:00:00.000Z',
      until: '2025-03-08T00:00:00.000Z',
      groupBy: 'job',
      total: { runs: 6, inputTokens: 3520, outputTokens: 360, cachedTokens: 601, turns: 12, costUsd: 1.8, unknownCostRuns: 2 },
      groups: [jobs.beta, jobs.alpha, gamma, delta].map((jobId) => ({ jobId, jobSlug: slugOf[jobId], ...totals[jobId] })),
    });
  });

  it('groups by job by default', async () => {
    const res = await usageOf(WINDOW);
    expect(res.body.groupBy).toBe('job');
    expect(res.body.groups.map((group: { jobSlug: string }) => group.jobSlug).slice(0, 2)).toEqual(['beta', 'alpha']);
  });

  it('sums per UTC day of creation, oldest first, listing only days with usage', async () => {
    const res = await usageOf(`${WINDOW}&groupBy=day`);
    expect(res.status).toBe(200);
    expect(res.body.groups).toEqual([
      { day: '2025-03-01', runs: 1, inputTokens: 1000, outputTokens: 100, cachedTokens: 500, turns: 3, costUsd: 0.1, unknownCostRuns: 0 },
      { day: '2025-03-02', runs: 2, inputTokens: 2500, outputTokens: 250, cachedTokens: 100, turns: 6, costUsd: 1.7, unknownCostRuns: 0 },
      { day: '2025-03-03', runs: 1, inputTokens: 10, outputTokens: 1, cachedTokens: 0, turns: 1, costUsd: 0, unknownCostRuns: 1 },
      { day: '2025-03-05', runs: 1, inputTokens: 7, outputTokens: 7, cachedTokens: 0, turns: 1, costUsd: 0, unknownCostRuns: 1 },
      { day: '2025-03-06', runs: 1, inputTokens: 3, outputTokens: 2, cachedTokens: 1, turns: 1, costUsd: 0, unknownCostRuns: 0 },
    ]);
    expect(res.body.total).toEqual({ runs: 6, inputTokens: 3520, outputTokens: 360, cachedTokens: 601, turns: 12, costUsd: 1.8, unknownCostRuns: 2 });
  });

  it('counts exactly the runs created in [since, until), whatever offset the bounds are written in', async () => {
    const day = await usageOf('?since=2025-03-02T01:00:00%2B01:00&until=2025-03-03T00:00:00.001Z&groupBy=day');
    expect(day.body).toMatchObject({ since: '2025-03-02T00:00:00.000Z', until: '2025-03-03T00:00:00.001Z' });
    expect(day.body.groups.map((group: { day: string; runs: number }) => [group.day, group.runs])).toEqual([['2025-03-02', 2], ['2025-03-03', 1]]);
    const edges = await usageOf('?since=2025-02-28T23:59:59.999Z&until=2025-03-08T00:00:00.001Z');
    expect(edges.body.total).toMatchObject({ runs: 8, costUsd: 101.8 });
    const none = await usageOf('?since=2025-01-01T00:00:00Z&until=2025-02-01T00:00:00Z&groupBy=day');
    expect(none.body).toMatchObject({ total: { runs: 0, inputTokens: 0, outputTokens: 0, cachedTokens: 0, turns: 0, costUsd: 0, unknownCostRuns: 0 }, groups: [] });
  });

  it('never counts another tenant\'s runs, and counts theirs for them', async () => {
    const res = await usageOf(WINDOW, theirs);
    expect(res.body.total).toEqual({ runs: 1, inputTokens: 9_000_000, outputTokens: 9, cachedTokens: 9, turns: 9, costUsd: 100, unknownCostRuns: 0 });
    expect(res.body.groups.map((group: { jobId: string }) => group.jobId)).not.toContain(jobs.alpha);
  });
});

describe('the default window', () => {
  it('is the 30 days before now, and a real run\'s run.succeeded event carries its usage', async () => {
    const subscription = (await call(app, 'POST', '/api/v1/event-subscriptions', { headers: bearer, body: { url: receiverUrl, events: ['run.succeeded'] } })).body;
    const job = await createJob(app, bearer, { name: 'Spender', slug: 'spender', promptTemplate: 'spend', executionTargetId: 'local' });
    const day = 86_400_000;
    await runOf(owner, job.id, new Date(Date.now() - 29 * day).toISOString(), usage(40, 4, 0, 1, 0.04));
    await runOf(owner, job.id, new Date(Date.now() - 31 * day).toISOString(), usage(1_000_000, 1, 1, 1, 99));

    // A run through the runner: while it is running, its agent's usage so far is what the database holds.
    const { runId } = (await call(app, 'POST', `/api/v1/jobs/${job.id}/invocations`, { headers: bearer, body: {} })).body;
    await runSettled(app, bearer, runId, ['running']);
    const spent = { inputTokens: 48210, outputTokens: 3120, cachedTokens: 40100, turns: 7, costUsd: 0.1843, costSource: 'reported' as const };
    await app.database.db.run.update({ where: { id: runId }, data: { usage: spent } });
    writeFileSync(path.join(markers, runId), '');
    expect(await runSettled(app, bearer, runId)).toMatchObject({ state: 'succeeded', usage: spent });

    const delivered = await until('the run.succeeded event', async () => received.find((event) => JSON.parse(event.body).data.id === runId));
    const event = new Webhook(subscription.signingSecret).verify(delivered.body, delivered.headers) as { type: string; data: Record<string, unknown> };
    expect(event).toMatchObject({ type: 'run.succeeded', data: { id: runId, state: 'succeeded', usage: spent } });
    const runEvent = addFormats(new Ajv2020({ strict: false })).compile(loadContract().inlined.components.schemas.RunEvent);
    expect(runEvent(event)).toBe(true);

    const before = Date.now();
    const res = await usageOf('');
    const window = { since: Date.parse(res.body.since), until: Date.parse(res.body.until) };
    expect(window.until).toBeGreaterThanOrEqual(before);
    expect(window.until).toBeLessThanOrEqual(Date.now());
    expect(window.until - window.since).toBe(30 * day);
    expect(res.body.groups).toEqual([{ jobId: job.id, jobSlug: 'spender', runs: 2, inputTokens: 48250, outputTokens: 3124, cachedTokens: 40100, turns: 8, costUsd: 0.2243, unknownCostRuns: 0 }]);
    // `until` alone: the 30 days before it.
    const ending = await usageOf(`?until=${encodeURIComponent('2025-03-31T00:00:00Z')}`);
    expect(ending.body).toMatchObject({ since: '2025-03-01T00:00:00.000Z', until: '2025-03-31T00:00:00.000Z' });
  });
});

describe('refusals', () => {
  it.each([
    ['since after until', '?since=2025-03-08T00:00:00Z&until=2025-03-01T00:00:00Z', '`since` must be before `until`.'],
    ['since equal to until', '?since=2025-03-08T00:00:00Z&until=2025-03-08T00:00:00Z', '`since` must be before `until`.'],
    ['a window over 366 days', '?since=2024-03-01T00:00:00Z&until=2025-03-02T00:00:00.001Z', 'The window from `since` to `until` may span at most 366 days.'],
    ['a default since before 1970', '?until=1970-01-10T00:00:00Z', expect.stringContaining('`since` (30 days before `until`) would fall outside the supported range')],
    ['a since in the future, until defaulted', '?since=2999-01-01T00:00:00Z', '`since` must be before `until`.'],
    ['a date that is not one', '?since=2025-02-30T00:00:00Z', expect.stringContaining('since')],
    ['a date without its time', '?until=2025-03-01', expect.stringContaining('until')],
    ['an unknown grouping', '?groupBy=week', expect.stringContaining('groupBy')],
  ])('refuses %s with 400 validation_failed', async (_, query, message) => {
    const res = await usageOf(query);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { code: 'validation_failed', message } });
  });

  it('takes a window of exactly 366 days', async () => {
    expect((await usageOf('?since=2024-03-01T00:00:00Z&until=2025-03-02T00:00:00Z')).status).toBe(200);
  });

  it('needs runs:read', async () => {
    const reader = { authorization: `Bearer ${await accessToken(app, owner, { scopes: ['flows:read'] })}` };
    const res = await usageOf('', reader);
    expect([res.status, res.body.error.code]).toEqual([403, 'insufficient_scope']);
  });
});
