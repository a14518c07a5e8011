// Outbound events to a receiver on loopback, verified with the `standardwebhooks` package: run and webhook
// events, retries with a stable webhook-id on a clock the test moves, 410 disabling the subscription,
// redelivery by hand; subscriptions are the tenant's own and their secrets are shown once.
import { createHmac, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { Webhook } from 'standardwebhooks';
import { loadContract } from '../../src/http/contract';
import { agentCommand } from '../support/agent';
import { startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner } from '../support/identity';
import { until } from '../support/until';

let clock = new Date();
let app: TestApp;
let bearer: Record<string, string>;
let receiver: Server;
let receiverUrl: string;
const received: { headers: Record<string, string>; body: string; url?: string }[] = [];
const answers: number[] = []; // statuses to answer, in order; 204 once used up

beforeAll(async () => {
  app = await startTestApp({ localAgent: { command: agentCommand(), timeoutSeconds: 60 }, rateLimits: { api: 0, apiAddress: 0 } }, { now: () => clock });
  bearer = { authorization: `Bearer ${await accessToken(app, await createOwner(app.database.db))}` };
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      received.push({ headers: req.headers as Record<string, string>, body, url: req.url });
      const status = answers.shift() ?? 204;
      // A redirect points back at this receiver, at a path that shows whether it was followed.
      res.writeHead(status, status >= 300 && status < 400 ? { location: '/followed' } : {}).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});
afterAll(async () => {
  await app.close();
  receiver.close();
});

async function subscribe(events: string[], headers = bearer) {
  const res = await call(app, 'POST', '/api/v1/event-subscriptions', { headers, body: { url: receiverUrl, events, description: 'test receiver' } });
  expect(res.status).toBe(201);
  return res.body as { id: string; signingSecret: string };
}

async function settle() {
  for (let i = 0; i < 5; i++) await app.runner.idle();
}

const deliveriesOf = async (subscriptionId: string) => (await call(app, 'GET', `/api/v1/event-subscriptions/${subscriptionId}/deliveries`, { headers: bearer })).body as any[];

it('delivers run and webhook events, signed per Standard Webhooks', async () => {
  received.length = 0;
  const subscription = await subscribe(['webhook.received', 'run.queued', 'run.started', 'run.succeeded']);
  expect(subscription.signingSecret).toMatch(/^whsec_/);
  const source = (await call(app, 'POST', '/api/v1/webhook-sources', { headers: bearer, body: { name: 'gh', format: 'github' } })).body;
  const job = (await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: { name: 'On push', executionTargetId: 'local', promptTemplate: 'Build {{ payload.ref }}', triggers: [{ type: 'webhook', sourceId: source.id, events: ['push'] }] } })).body;
  const body = JSON.stringify({ ref: 'refs/heads/main' });
  const signature = createHmac('sha256', source.signingSecret).update(body).digest('hex');
  const intake = await request(app.app).post(`/hooks/${source.id}`).set({ 'content-type': 'application/json', 'x-github-event': 'push', 'x-github-delivery': randomUUID(), 'x-hub-signature-256': `sha256=${signature}` }).send(body);
  expect(intake.status).toBe(202);

  await until('four events', async () => {
    await settle();
    return received.length >= 4;
  });
  const verifier = new Webhook(subscription.signingSecret);
  const events = received.map(({ headers, body: text }) => verifier.verify(text, headers) as { type: string; timestamp: string; data: any });
  expect(events.map((event) => event.type).sort()).toEqual(['run.queued', 'run.started', 'run.succeeded', 'webhook.received']);
  // Every body is what the contract's `webhooks` section documents.
  const ajv = addFormats(new Ajv2020({ strict: false }));
  const schemas = loadContract().inlined.components.schemas;
  const [runEvent, webhookEvent] = [ajv.compile(schemas.RunEvent), ajv.compile(schemas.WebhookReceivedEvent)];
  for (const event of events) expect({ type: event.type, valid: (event.type === 'webhook.received' ? webhookEvent : runEvent)(event) }).toEqual({ type: event.type, valid: true });
  const succeeded = events.find((event) => event.type === 'run.succeeded')!;
  expect(succeeded.data).toMatchObject({ jobId: job.id, state: 'succeeded', trigger: { type: 'webhook' }, prompt: 'Build refs/heads/main' });
  expect(events.find((event) => event.type === 'webhook.received')!.data).toMatchObject({ activityId: intake.body.activityId, sourceId: source.id, event: 'push', action: null });
  // A tampered body does not verify.
  expect(() => verifier.verify(`${received[0].body} `, received[0].headers)).toThrow();
  const deliveries = await deliveriesOf(subscription.id);
  expect(deliveries.every((delivery) => delivery.state === 'succeeded' && delivery.attempts === 1 && delivery.lastStatusCode === 204)).toBe(true);
  await call(app, 'DELETE', `/api/v1/event-subscriptions/${subscription.id}`, { headers: bearer });
});

it('retries with backoff under the same webhook-id, until 24 hours have passed', async () => {
  received.length = 0;
  const subscription = await subscribe(['run.queued']);
  const job = (await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: { name: 'Retried', promptTemplate: 'x' } })).body;
  answers.push(500, 503);
  await call(app, 'POST', `/api/v1/jobs/${job.id}/invocations`, { headers: bearer, body: {} });
  const [first] = await until('the first attempt', async () => {
    await settle();
    const rows = await deliveriesOf(subscription.id);
    return rows.length === 1 && rows[0].attempts === 1 && rows;
  });
  expect(first).toMatchObject({ state: 'pending', lastStatusCode: 500 });
  const wait = new Date(first.nextAttemptAt).getTime() - clock.getTime();
  expect(wait).toBeGreaterThanOrEqual(15_000);
  expect(wait).toBeLessThanOrEqual(30_000);

  await app.events.sweep(); // not due yet: nothing is sent
  await settle();
  expect(received).toHaveLength(1);
  clock = new Date(new Date(first.nextAttemptAt).getTime() + 1);
  await app.events.sweep();
  const second = await until('the second attempt', async () => {
    await settle();
    return (await deliveriesOf(subscription.id))[0].attempts === 2 && (await deliveriesOf(subscription.id))[0];
  });
  expect(second).toMatchObject({ state: 'pending', lastStatusCode: 503 });
  expect(new Date(second.nextAttemptAt).getTime() - clock.getTime()).toBeGreaterThanOrEqual(30_000);

  // A day later the next failure ends it.
  answers.push(500);
  clock = new Date(clock.getTime() + 25 * 3600 * 1000);
  await app.events.sweep();
  const last = await until('the last attempt', async () => {
    await settle();
    const [row] = await deliveriesOf(subscription.id);
    return row.attempts === 3 && row;
  });
  expect(last).toMatchObject({ state: 'failed', nextAttemptAt: null, lastStatusCode: 500 });
  expect(new Set(received.map((r) => r.headers['webhook-id'])).size).toBe(1);
  clock = new Date();

  // By hand, it goes again, under the same webhook-id.
  const again = await call(app, 'POST', `/api/v1/event-subscriptions/${subscription.id}/deliveries/${last.id}/redeliver`, { headers: bearer });
  expect(again.status).toBe(202);
  const redelivered = await until('the redelivery', async () => {
    await settle();
    const [row] = await deliveriesOf(subscription.id);
    return row.state === 'succeeded' && row;
  });
  expect(redelivered.attempts).toBe(4);
  expect(received.at(-1)!.headers['webhook-id']).toBe(received[0].headers['webhook-id']);
  await call(app, 'DELETE', `/api/v1/event-subscriptions/${subscription.id}`, { headers: bearer });
});

it('counts a redirect and an endpoint that refuses connections as failed attempts, to be tried again', async () => {
  received.length = 0;
  const redirecting = await subscribe(['run.queued']);
  const refusing = (await call(app, 'POST', '/api/v1/event-subscriptions', { headers: bearer, body: { url: 'http://127.0.0.1:9/hook', events: ['run.queued'] } })).body;
  const job = (await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: { name: 'Unreachable', promptTemplate: 'x' } })).body;
  answers.push(302);
  await call(app, 'POST', `/api/v1/jobs/${job.id}/invocations`, { headers: bearer, body: {} });
  const attempted = async (id: string) => {
    await settle();
    const [row] = await deliveriesOf(id);
    return row?.attempts === 1 && row;
  };
  // A redirect is not followed: the event goes only where the subscription says.
  expect(await until('the redirected attempt', () => attempted(redirecting.id))).toMatchObject({ state: 'pending', lastStatusCode: 302, lastError: null, nextAttemptAt: expect.any(String) });
  expect(received.map((r) => r.url)).toEqual(['/hook']);
  expect(await until('the refused attempt', () => attempted(refusing.id))).toMatchObject({ state: 'pending', lastStatusCode: null, lastError: expect.stringMatching(/^the connection failed/), nextAttemptAt: expect.any(String) });
  for (const id of [redirecting.id, refusing.id]) await call(app, 'DELETE', `/api/v1/event-subscriptions/${id}`, { headers: bearer });
});

it('disables the subscription when the endpoint answers 410', async () => {
  const subscription = await subscribe(['run.queued']);
  const job = (await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: { name: 'Gone', promptTemplate: 'x' } })).body;
  answers.push(410);
  await call(app, 'POST', `/api/v1/jobs/${job.id}/invocations`, { headers: bearer, body: {} });
  const disabled = await until('the subscription to be disabled', async () => {
    await settle();
    const row = (await call(app, 'GET', `/api/v1/event-subscriptions/${subscription.id}`, { headers: bearer })).body;
    return !row.enabled && row;
  });
  expect(disabled.disabledReason).toBe('The endpoint answered 410 Gone.');
  expect((await deliveriesOf(subscription.id))[0]).toMatchObject({ state: 'failed', lastStatusCode: 410 });
  const enabled = await call(app, 'PATCH', `/api/v1/event-subscriptions/${subscription.id}`, { headers: bearer, body: { enabled: true } });
  expect(enabled.body).toMatchObject({ enabled: true, disabledReason: null });
  const noted = await call(app, 'PATCH', `/api/v1/event-subscriptions/${subscription.id}`, { headers: bearer, body: { description: 'a note' } });
  expect(noted.body.description).toBe('a note');
  const cleared = await call(app, 'PATCH', `/api/v1/event-subscriptions/${subscription.id}`, { headers: bearer, body: { description: null } });
  expect(cleared.body.description).toBeNull();
  await call(app, 'DELETE', `/api/v1/event-subscriptions/${subscription.id}`, { headers: bearer });
});

it('keeps subscriptions to their tenant, shows the secret once, and takes plain http only to localhost', async () => {
  const subscription = await subscribe(['run.failed']);
  const got = await call(app, 'GET', `/api/v1/event-subscriptions/${subscription.id}`, { headers: bearer });
  expect(got.body).not.toHaveProperty('signingSecret');
  expect(JSON.stringify((await call(app, 'GET', '/api/v1/event-subscriptions', { headers: bearer })).body)).not.toContain(subscription.signingSecret);
  const refused = await call(app, 'POST', '/api/v1/event-subscriptions', { headers: bearer, body: { url: 'http://example.com/hook', events: ['run.failed'] } });
  expect([refused.status, refused.body.error.code]).toEqual([400, 'validation_failed']);

  const stranger = { authorization: `Bearer ${await accessToken(app, await createOwner(app.database.db, { tenantName: 'Other' }))}` };
  // A stranger's 404 must also leave the subscription as it was, secret included.
  const ownersRow = await app.database.db.eventSubscription.findUniqueOrThrow({ where: { id: subscription.id } });
  for (const [method, path, body] of [
    ['GET', `/api/v1/event-subscriptions/${subscription.id}`],
    ['PATCH', `/api/v1/event-subscriptions/${subscription.id}`, { enabled: false, url: 'http://127.0.0.1:9/stolen', events: ['run.succeeded'], description: 'taken over' }],
    ['DELETE', `/api/v1/event-subscriptions/${subscription.id}`],
    ['GET', `/api/v1/event-subscriptions/${subscription.id}/deliveries`],
    ['POST', `/api/v1/event-subscriptions/${subscription.id}/deliveries/dlv_any/redeliver`],
  ] as const) {
    const res = await call(app, method, path, { headers: stranger, body });
    expect([res.status, res.body.error.code]).toEqual([404, 'not_found']);
  }
  expect((await call(app, 'GET', '/api/v1/event-subscriptions', { headers: stranger })).body).toEqual([]);
  expect(await app.database.db.eventSubscription.findUniqueOrThrow({ where: { id: subscription.id } })).toEqual(ownersRow);
  expect((await call(app, 'GET', `/api/v1/event-subscriptions/${subscription.id}`, { headers: bearer })).body).toEqual(got.body);
  expect((await call(app, 'DELETE', `/api/v1/event-subscriptions/${subscription.id}`, { headers: bearer })).status).toBe(204);
});

it('refuses a stranger\'s redelivery of a real delivery of another tenant, sending nothing', async () => {
  const subscription = await subscribe(['run.queued']);
  const job = (await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: { name: 'Delivered once', promptTemplate: 'x' } })).body;
  await call(app, 'POST', `/api/v1/jobs/${job.id}/invocations`, { headers: bearer, body: {} });
  const [delivery] = await until('the delivery', async () => {
    await settle();
    const rows = await deliveriesOf(subscription.id);
    return rows.length === 1 && rows[0].state === 'succeeded' && rows;
  });
  const rowsOf = () => app.database.db.eventDelivery.findMany({ where: { subscriptionId: subscription.id }, orderBy: { id: 'asc' } });
  const before = await rowsOf();
  const webhookId = before[0].webhookId;
  const sent = () => received.filter((r) => r.headers['webhook-id'] === webhookId).length;
  expect(sent()).toBe(1);

  const stranger = { authorization: `Bearer ${await accessToken(app, await createOwner(app.database.db, { tenantName: 'Other' }))}` };
  const theirs = await subscribe(['run.queued'], stranger);
  // The real id, under the owner's subscription and under the stranger's own.
  for (const subscriptionId of [subscription.id, theirs.id]) {
    const res = await call(app, 'POST', `/api/v1/event-subscriptions/${subscriptionId}/deliveries/${delivery.id}/redeliver`, { headers: stranger });
    expect([subscriptionId, res.status, res.body.error.code]).toEqual([subscriptionId, 404, 'not_found']);
  }
  // Had a redelivery been scheduled, it would be due now: let the sender run before looking.
  await app.events.sweep();
  await settle();
  expect(await rowsOf()).toEqual(before);
  expect(sent()).toBe(1);
  expect(await app.database.db.eventDelivery.count({ where: { subscriptionId: theirs.id } })).toBe(0);
  await call(app, 'DELETE', `/api/v1/event-subscriptions/${theirs.id}`, { headers: stranger });
  await call(app, 'DELETE', `/api/v1/event-subscriptions/${subscription.id}`, { headers: bearer });
});
