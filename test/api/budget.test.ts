// A tenant's monthly budget for its agents' cost: what this month spent (known costs, unknown ones counted
// apart, other tenants' and last month's never), the tenant's own budget over the operator's default, and
// once it is spent, no new run: an invocation is refused with 409 budget_exhausted, a webhook's match is
// recorded with the flow-control outcome budget_exhausted; raised again, runs start.
import request from 'supertest';
import { newId } from '../../src/lib/ids';
import { startOtherInstance, startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner, type TestOwner } from '../support/identity';
import { createJob, githubDelivery } from '../support/kit';

let app: TestApp;
let owner: TestOwner;
let bearer: Record<string, string>;
let jobId: string;

const now = new Date();
const thisMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
const nextMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
const lastMonth = new Date(thisMonth.getTime() - 86_400_000);

/** A finished run written straight to the database, created at `createdAt`, costing `costUsd` (null: unknown). */
async function spent(tenantId: string, job: string, createdAt: Date, costUsd: number | null) {
  const usage = { inputTokens: 10, outputTokens: 5, cachedTokens: 0, turns: 1, costUsd, costSource: costUsd === null ? 'unknown' : 'reported' };
  await app.database.db.run.create({ data: { id: newId('run'), tenantId, jobId: job, name: 'n', state: 'succeeded', triggerType: 'invocation', prompt: 'p', inputs: {}, createdAt, usage } });
}

const budget = (headers = bearer, on: Pick<TestApp, 'app' | 'api'> = app) => call(on, 'GET', '/api/v1/budget', { headers });
const setBudget = (monthlyUsd: unknown) => call(app, 'PUT', '/api/v1/budget', { headers: bearer, body: { monthlyUsd } });
const invoke = (on: Pick<TestApp, 'app' | 'api'> = app) => call(on, 'POST', `/api/v1/jobs/${jobId}/invocations`, { headers: bearer, body: {} });

beforeAll(async () => {
  app = await startTestApp();
  owner = await createOwner(app.database.db);
  bearer = { authorization: `Bearer ${await accessToken(app, owner)}` };
  jobId = (await createJob(app, bearer, { name: 'Spend', promptTemplate: 'x', triggers: [{ type: 'invocation' }] })).id;
  await spent(owner.tenantId, jobId, new Date(thisMonth.getTime() + 1000), 0.6);
  await spent(owner.tenantId, jobId, new Date(thisMonth.getTime() + 2000), 0.5);
  await spent(owner.tenantId, jobId, new Date(thisMonth.getTime() + 3000), null);
  await spent(owner.tenantId, jobId, lastMonth, 100);
});
afterAll(() => app.close());

it("says this month's known spending, its unknown runs apart, and no budget by default", async () => {
  const res = await budget();
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    monthlyUsd: null,
    tenantMonthlyUsd: null,
    defaultMonthlyUsd: null,
    spentUsd: 1.1,
    unknownCostRuns: 1,
    since: thisMonth.toISOString(),
    until: nextMonth.toISOString(),
    exhausted: false,
  });
  // Another tenant spent nothing of it.
  const other = await createOwner(app.database.db);
  expect((await budget({ authorization: `Bearer ${await accessToken(app, other)}` })).body).toMatchObject({ spentUsd: 0, unknownCostRuns: 0 });
});

it('refuses new runs once the budget is spent, saying what and until when, and starts them again once raised', async () => {
  expect((await setBudget(1)).body).toMatchObject({ monthlyUsd: 1, tenantMonthlyUsd: 1, exhausted: true });
  const refused = await invoke();
  expect(refused.status).toBe(409);
  expect(refused.body.error).toEqual({
    code: 'budget_exhausted',
    message: `No run was started: the tenant's monthly budget of $1 is spent ($1.1 since ${thisMonth.toISOString().slice(0, 10)}); runs start again on ${nextMonth.toISOString().slice(0, 10)}, or once the budget is raised (PUT /api/v1/budget).`,
  });
  expect((await call(app, 'GET', `/api/v1/runs?jobId=${jobId}&state=queued`, { headers: bearer })).body).toEqual([]);

  expect((await setBudget(5)).body).toMatchObject({ monthlyUsd: 5, exhausted: false });
  expect((await invoke()).status).toBe(202);
});

it("records a webhook's match that the spent budget kept from starting a run", async () => {
  await setBudget(0.5);
  const source = (await call(app, 'POST', '/api/v1/webhook-sources', { headers: bearer, body: { name: 'GitHub', format: 'github' } })).body;
  await createJob(app, bearer, { name: 'On label', promptTemplate: 'x', triggers: [{ type: 'webhook', sourceId: source.id, events: ['issues.labeled'] }] });
  const { body, headers } = githubDelivery(source.signingSecret, { action: 'labeled', issue: { number: 1 }, label: { name: 'bug' } });
  const accepted = await request(app.app).post(`/hooks/${source.id}`).set(headers).send(body);
  expect(accepted.status).toBe(202);
  await app.runner.idle();
  let activity: any;
  for (let i = 0; i < 200 && !activity?.decisions?.length; i++) {
    activity = (await call(app, 'GET', `/api/v1/webhook-activity/${accepted.body.activityId}`, { headers: bearer })).body;
    if (!activity.decisions.length) await new Promise((resolve) => setTimeout(resolve, 25));
  }
  expect(activity.decisions).toEqual([
    expect.objectContaining({ decision: 'match', runId: null, flowControl: { action: 'budget_exhausted', until: nextMonth.toISOString(), message: expect.stringContaining("the tenant's monthly budget of $0.5 is spent") } }),
  ]);
});

it("applies the operator's default to a tenant without its own, and the tenant's own over it", async () => {
  const strict = await startOtherInstance(app, { config: { tenantMonthlyBudgetUsd: 1 } });
  try {
    expect((await setBudget(null)).body).toMatchObject({ monthlyUsd: null, tenantMonthlyUsd: null });
    expect((await budget(bearer, strict)).body).toMatchObject({ monthlyUsd: 1, tenantMonthlyUsd: null, defaultMonthlyUsd: 1, exhausted: true });
    expect((await invoke(strict)).body.error.code).toBe('budget_exhausted');
    await setBudget(50);
    // The other instance reads the new budget within seconds; this one at once.
    expect((await budget(bearer, strict)).body).toMatchObject({ monthlyUsd: 50, defaultMonthlyUsd: 1, exhausted: false });
  } finally {
    await strict.close();
  }
});

it('refuses a budget that is not an amount above 0', async () => {
  for (const monthlyUsd of [0, -5, 'ten', 2_000_000]) {
    const res = await setBudget(monthlyUsd);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
  }
  expect((await call(app, 'PUT', '/api/v1/budget', { headers: bearer, body: {} })).status).toBe(400);
});
