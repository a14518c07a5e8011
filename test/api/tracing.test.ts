// OpenTelemetry traces, exported over OTLP/HTTP to a collector on loopback: a delivery, its trigger's
// decision and the run it started are one trace, parent to child, each span with the times its part
// recorded; an invoked run is a trace of its own. Nothing of a payload or a prompt is in them.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { forTenant } from '../../src/db/tenant-scope';
import { createLogger } from '../../src/lib/logger';
import { createTracing } from '../../src/metrics/tracing';
import { agentCommand } from '../support/agent';
import { startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner } from '../support/identity';
import { githubDelivery, runSettled } from '../support/kit';
import { until } from '../support/until';

interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: { key: string; value: Record<string, unknown> }[];
  status?: { code?: number; message?: string };
}

const spans: ExportedSpan[] = [];
const bodies: string[] = [];
let collector: http.Server;
let app: TestApp;
let bearer: Record<string, string>;
const saved = { ...process.env };

beforeAll(async () => {
  // The collector OpenTelemetry's exporter posts to (OTLP/HTTP, JSON).
  collector = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      bodies.push(body);
      if (req.url === '/v1/traces') {
        for (const resource of JSON.parse(body).resourceSpans ?? []) for (const scope of resource.scopeSpans ?? []) spans.push(...scope.spans);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
  app = await startTestApp({ tracing: true, localAgent: { command: agentCommand(), timeoutSeconds: 60 }, rateLimits: { api: 0, apiAddress: 0 } });
  bearer = { authorization: `Bearer ${await accessToken(app, await createOwner(app.database.db))}` };
});
afterAll(async () => {
  await app.close();
  collector.close();
  process.env = saved;
});

const attribute = (span: ExportedSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value && Object.values(value)[0];
};
const spanOf = (name: RegExp, key: string, value: string) => spans.find((span) => name.test(span.name) && attribute(span, key) === value);

it('a delivery, its decision and the run it started are one trace, each part a child of the one before', async () => {
  const source = await call(app, 'POST', '/api/v1/webhook-sources', { headers: bearer, body: { name: 'traced', format: 'github' } });
  const job = await call(app, 'POST', '/api/v1/jobs', {
    headers: bearer,
    body: { name: 'Traced', executionTargetId: 'local', promptTemplate: 'secret-looking {{ payload.issue.title }}', triggers: [{ type: 'webhook', sourceId: source.body.id, events: ['issues.labeled'] }] },
  });
  expect(job.status).toBe(201);
  const delivery = githubDelivery(source.body.signingSecret, { action: 'labeled', issue: { number: 7, title: 'Do not export me' } });
  const accepted = await request(app.app).post(`/hooks/${source.body.id}`).set(delivery.headers).send(delivery.body);
  expect(accepted.status).toBe(202);
  const activityId = accepted.body.activityId as string;
  const activity = await until('the delivery started its run', async () => {
    const res = await call(app, 'GET', `/api/v1/webhook-activity/${activityId}`, { headers: bearer });
    return res.body.runIds?.length ? res.body : null;
  });
  const runId = activity.runIds[0] as string;
  expect((await runSettled(app, bearer, runId)).state).toBe('succeeded');

  const [deliverySpan, decisionSpan, runSpan] = await until('the three spans were exported', async () => {
    const found = [spanOf(/^delivery /, 'flows.activity.id', activityId), spanOf(/^decision /, 'flows.run.id', runId), spanOf(/^run /, 'flows.run.id', runId)];
    return found.every(Boolean) && (found as ExportedSpan[]);
  });
  expect(deliverySpan).toMatchObject({ name: 'delivery issues.labeled' });
  expect(deliverySpan.parentSpanId ?? '').toBe('');
  expect(attribute(deliverySpan, 'flows.source.id')).toBe(source.body.id);
  expect(Number(attribute(deliverySpan, 'flows.decisions.matched'))).toBe(1);
  expect(decisionSpan).toMatchObject({ name: 'decision match', traceId: deliverySpan.traceId, parentSpanId: deliverySpan.spanId });
  expect(attribute(decisionSpan, 'flows.job.id')).toBe(job.body.id);
  expect(runSpan).toMatchObject({ name: 'run succeeded', traceId: deliverySpan.traceId, parentSpanId: decisionSpan.spanId });
  expect(attribute(runSpan, 'flows.trigger.type')).toBe('webhook');
  // Each part's own times: the delivery from its receipt to its evaluation, the run from its creation to its end.
  expect(BigInt(deliverySpan.startTimeUnixNano)).toBeLessThanOrEqual(BigInt(deliverySpan.endTimeUnixNano));
  expect(BigInt(runSpan.startTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(deliverySpan.startTimeUnixNano));
  expect(BigInt(runSpan.endTimeUnixNano)).toBeGreaterThan(BigInt(runSpan.startTimeUnixNano));
  expect(bodies.join('\n')).not.toContain('Do not export me');
});

it('an invoked run is a trace of its own, and a failed one says so', async () => {
  const job = await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: { name: 'Invoked', executionTargetId: 'local', promptTemplate: 'fail, please' } });
  const invoked = await call(app, 'POST', `/api/v1/jobs/${job.body.id}/invocations`, { headers: bearer, body: {} });
  expect(invoked.status).toBe(202);
  const run = await runSettled(app, bearer, invoked.body.runId);
  expect(run.state).toBe('failed');
  const span = await until('the run\'s span was exported', async () => spanOf(/^run /, 'flows.run.id', run.id));
  expect(span.parentSpanId ?? '').toBe('');
  expect(span.traceId).not.toBe(spans.find((other) => other.name.startsWith('delivery '))?.traceId);
  expect(attribute(span, 'flows.invocation.id')).toBe(invoked.body.invocationId);
  expect(span).toMatchObject({ name: 'run failed', status: { code: 2, message: 'failed' } });
});

it('does not hold a shutdown past 3 s when the collector does not answer', async () => {
  const stalled = http.createServer(() => {}); // takes the request, never answers
  await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(stalled.address() as AddressInfo).port}`;
  try {
    const tracing = createTracing({ tenantDb: (tenantId) => forTenant(app.database.db, tenantId), instanceId: 'inst_stalled', logger: createLogger('silent') });
    tracing.evaluated({ tenantId: 'ten_x', id: 'act_01m8kte8p5kxzjp3fwq881h5zt', sourceId: 'src_x', event: 'issues', action: null, context: {} }, [], 0, new Date());
    const began = Date.now();
    await tracing.shutdown();
    expect(Date.now() - began).toBeLessThan(4_500);
  } finally {
    stalled.closeAllConnections();
    stalled.close();
  }
});
