// /metrics as a Prometheus scraper meets it: only for a bearer of FLOWS_METRICS_TOKEN on the main port (not
// there without one), open on the metrics port; every family present, and each counter moved by the work
// it counts: webhook deliveries taken and refused, runs queued, started and finished with their durations,
// an agent's tokens, event-delivery attempts; and the deployment's gauges read from the database.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { createLogger } from '../../src/lib/logger';
import { metricsApp } from '../../src/metrics/metrics-router';
import { startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner } from '../support/identity';
import { createJob, githubDelivery, runSettled } from '../support/kit';

const TOKEN = 'm'.repeat(40);
const FAKE_CLIS = path.resolve(__dirname, '../support/fake-agent-clis');

let app: TestApp;
let bearer: Record<string, string>;
let receiver: Server;

beforeAll(async () => {
  app = await startTestApp({
    metrics: { token: TOKEN, port: null },
    rateLimits: { api: 0, apiAddress: 0 },
    localAgent: { command: 'echo done', timeoutSeconds: 30, sandbox: 'off', agentBins: { gemini: path.join(FAKE_CLIS, 'gemini') } },
  });
  bearer = { authorization: `Bearer ${await accessToken(app, await createOwner(app.database.db))}` };
  receiver = createServer((_req, res) => res.writeHead(204).end());
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  await app.close();
  receiver.close();
});

const scrape = async () => {
  const res = await request(app.app).get('/metrics').set('authorization', `Bearer ${TOKEN}`);
  expect(res.status).toBe(200);
  return res.text;
};
/** The value of one sample (`name{labels}` as Prometheus prints it), or undefined. */
const sample = (text: string, series: string) => {
  const line = text.split('\n').find((row) => row.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe('access', () => {
  it('answers only a bearer of the token on the main port, in the error shape otherwise', async () => {
    for (const authorization of [undefined, 'Bearer wrong', `Basic ${TOKEN}`, `Bearer ${TOKEN}x`]) {
      const req = request(app.app).get('/metrics');
      const res = authorization ? await req.set('authorization', authorization) : await req;
      expect([res.status, res.body.error?.code, res.headers['www-authenticate']]).toEqual([401, 'invalid_token', 'Bearer realm="metrics"']);
    }
    const res = await request(app.app).get('/metrics').set('authorization', `Bearer ${TOKEN}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
  });

  it('is not there on the main port without a token, and open on the metrics port', async () => {
    const closed = await startTestApp({ metrics: { token: null, port: 9464 } });
    try {
      expect((await request(closed.app).get('/metrics')).status).toBe(404);
      const port = metricsApp(closed.metrics, createLogger('silent'));
      const open = await request(port).get('/metrics');
      expect([open.status, open.text]).toEqual([200, expect.stringContaining('# TYPE flows_runs gauge')]);
      const other = await request(port).get('/api/v1/jobs');
      expect([other.status, other.body.error?.code]).toEqual([404, 'not_found']);
    } finally {
      await closed.close();
    }
  });
});

it('has every family, and each counter moves with the work it counts', async () => {
  const before = await scrape();
  for (const family of [
    'flows_webhook_deliveries_accepted_total',
    'flows_webhook_deliveries_refused_total',
    'flows_webhook_evaluation_lag_seconds',
    'flows_runs',
    'flows_runs_queued_total',
    'flows_runs_started_total',
    'flows_runs_finished_total',
    'flows_run_queue_depth',
    'flows_run_queue_oldest_age_seconds',
    'flows_run_duration_seconds',
    'flows_run_time_to_start_seconds',
    'flows_agent_tokens_total',
    'flows_agent_cost_usd_total',
    'flows_agent_unknown_cost_runs_total',
    'flows_event_delivery_attempts_total',
    'flows_event_deliveries_pending',
    'flows_database_up',
    'flows_database_query_seconds',
    'flows_process_cpu_seconds_total',
    'flows_nodejs_eventloop_lag_seconds',
  ]) {
    expect(before).toContain(`# TYPE ${family} `);
  }
  expect(sample(before, 'flows_database_up')).toBe(1);
  expect(sample(before, 'flows_runs{state="queued"}')).toBe(0);

  // An event subscription, a webhook delivery taken and one refused, a command run and an agent's run.
  const port = (receiver.address() as AddressInfo).port;
  expect((await call(app, 'POST', '/api/v1/event-subscriptions', { headers: bearer, body: { url: `http://127.0.0.1:${port}/hook`, events: ['run.succeeded'] } })).status).toBe(201);
  const source = (await call(app, 'POST', '/api/v1/webhook-sources', { headers: bearer, body: { name: 'GitHub', format: 'github' } })).body;
  const job = await createJob(app, bearer, { name: 'On label', promptTemplate: 'x', executionTargetId: 'local', triggers: [{ type: 'webhook', sourceId: source.id, events: ['issues.labeled'] }, { type: 'invocation' }] });
  const taken = githubDelivery(source.signingSecret, { action: 'labeled', issue: { number: 1 }, label: { name: 'bug' } });
  expect((await request(app.app).post(`/hooks/${source.id}`).set(taken.headers).send(taken.body)).status).toBe(202);
  const forged = githubDelivery('not the secret', { action: 'labeled' });
  expect((await request(app.app).post(`/hooks/${source.id}`).set(forged.headers).send(forged.body)).status).toBe(401);
  const agent = await createJob(app, bearer, { name: 'Gemini', promptTemplate: 'Create hello.txt', executionTargetId: 'local', agent: { kind: 'gemini' }, triggers: [{ type: 'invocation' }] });
  const invoked = await call(app, 'POST', `/api/v1/jobs/${agent.id}/invocations`, { headers: bearer, body: {} });
  expect((await runSettled(app, bearer, invoked.body.runId)).state).toBe('succeeded');
  await app.runner.idle();
  for (let i = 0; i < 200 && (await call(app, 'GET', `/api/v1/runs?jobId=${job.id}`, { headers: bearer })).body[0]?.state !== 'succeeded'; i++) await new Promise((resolve) => setTimeout(resolve, 25));
  await app.runner.idle();
  await app.queue.idle();

  const after = await scrape();
  const moved = (series: string) => (sample(after, series) ?? 0) - (sample(before, series) ?? 0);
  expect(moved('flows_webhook_deliveries_accepted_total')).toBe(1);
  expect(moved('flows_webhook_deliveries_refused_total{reason="invalid_signature"}')).toBe(1);
  expect(moved('flows_runs_queued_total')).toBe(2);
  expect(moved('flows_runs_started_total')).toBe(2);
  expect(moved('flows_runs_finished_total{state="succeeded"}')).toBe(2);
  expect(moved('flows_run_duration_seconds_count{outcome="succeeded"}')).toBe(2);
  expect(moved('flows_run_time_to_start_seconds_count')).toBe(2);
  // The recorded gemini stream's tokens; gemini reports no cost and its model has no price here.
  expect(moved('flows_agent_tokens_total{agent="gemini",kind="input"}')).toBeGreaterThan(0);
  expect(moved('flows_agent_unknown_cost_runs_total{agent="gemini"}')).toBe(1);
  expect(moved('flows_event_delivery_attempts_total{outcome="delivered"}')).toBe(2);
  expect(sample(after, 'flows_runs{state="running"}')).toBe(0);
  expect(sample(after, 'flows_webhook_evaluation_lag_seconds')).toBe(0);
});

it('has every series the Grafana dashboard in examples/ asks for', async () => {
  const dashboard = JSON.parse(readFileSync(path.resolve(__dirname, '../../examples/grafana-dashboard.json'), 'utf8')) as { panels: { targets: { expr: string }[] }[] };
  const named = new Set(dashboard.panels.flatMap((panel) => panel.targets.flatMap((target) => target.expr.match(/flows_\w+/g) ?? [])));
  const text = await scrape();
  const families = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1]));
  const missing = [...named].filter((name) => !families.has(name) && !families.has(name.replace(/_(bucket|count|sum)$/, '')));
  expect(missing).toEqual([]);
});
