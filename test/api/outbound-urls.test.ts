// The outbound guard with FLOWS_ALLOW_PRIVATE_NETWORK off, against real listeners on loopback: URLs saved
// through another instance that allows private addresses (as an operator who allowed them once would have)
// are refused when the connection is made, whether the host is a literal address, an IPv4-mapped IPv6 one
// or a name that resolves to loopback; the same URLs work from the allowing instance. Saving a URL that
// plainly points at a private address is a 400 naming the field; a public name saves without any lookup.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startOtherInstance, startTestApp, type TestApp } from '../support/app';
import { AGENT_TOKEN, startFakeProviders, VMHOST_TOKEN, type FakeProviders } from '../support/fake-providers';
import { call } from '../support/http';
import { accessToken, createOwner } from '../support/identity';
import { until } from '../support/until';

const ALLOW = 'set FLOWS_ALLOW_PRIVATE_NETWORK=true to allow it';
const timing = { bootTimeoutMs: 2000, pollMs: 10, callTimeoutMs: 1500 };

let app: TestApp;
let permissive: Awaited<ReturnType<typeof startOtherInstance>>;
let bearer: Record<string, string>;
let receiver: Server;
let port: number;
let providers: FakeProviders;
const received: string[] = [];

beforeAll(async () => {
  app = await startTestApp({ allowPrivateNetwork: false, rateLimits: { api: 0, apiAddress: 0 } }, { vmhostTiming: timing });
  permissive = await startOtherInstance(app, { config: { allowPrivateNetwork: true }, vmhostTiming: timing });
  // Instances sharing PostgreSQL share their background work; these two differ on purpose, so the test
  // chooses which one does it.
  await workOn(app);
  bearer = { authorization: `Bearer ${await accessToken(app, await createOwner(app.database.db))}` };
  receiver = createServer((req, res) => {
    received.push(`${req.method} ${req.url}`);
    req.resume().on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  port = (receiver.address() as AddressInfo).port;
  providers = await startFakeProviders();
});
afterAll(async () => {
  await permissive.close();
  await app.close();
  receiver.close();
  await providers.close();
});

/** Background work (event attempts, runs) is done by `instance` only. */
async function workOn(instance: Pick<TestApp, 'queue'>) {
  for (const other of [app, permissive]) if (other.queue !== instance.queue) await other.queue.stop();
  await instance.queue.start();
}

const api = (instance: Pick<TestApp, 'app' | 'api'>, method: string, path: string, body?: unknown) => call(instance, method, path, { headers: bearer, body });

describe('event endpoints', () => {
  const endpoints = () => [
    { url: `http://127.0.0.1:${port}/literal`, error: `127.0.0.1 is a loopback address; ${ALLOW}` },
    // The name is judged by what it resolves to when the connection is made (127.0.0.1 or ::1 first).
    { url: `http://localhost:${port}/name`, error: expect.stringMatching(new RegExp(`^localhost resolves to a loopback address \\((127\\.0\\.0\\.1|::1)\\); ${ALLOW}$`)) },
  ];

  it('are refused when the attempt connects, with the reason recorded on the delivery, and nothing sent', async () => {
    const subscriptions: { id: string; error: unknown }[] = [];
    for (const { url, error } of endpoints()) {
      const res = await api(permissive, 'POST', '/api/v1/event-subscriptions', { url, events: ['run.queued'] });
      expect(res.status).toBe(201);
      subscriptions.push({ id: res.body.id, error });
    }
    const job = (await api(app, 'POST', '/api/v1/jobs', { name: 'Queued only', promptTemplate: 'x' })).body;
    expect((await api(app, 'POST', `/api/v1/jobs/${job.id}/invocations`, {})).status).toBe(202);

    for (const { id, error } of subscriptions) {
      const delivery = await until(`the attempt of ${id}`, async () => {
        await app.runner.idle();
        const [row] = (await api(app, 'GET', `/api/v1/event-subscriptions/${id}/deliveries`)).body;
        return row?.attempts === 1 && row;
      });
      expect(delivery).toMatchObject({ state: 'pending', lastStatusCode: null, lastError: error, nextAttemptAt: expect.any(String) });
    }
    expect(received).toEqual([]);

    // The same endpoints are live: the instance that allows private addresses reaches each of them.
    await workOn(permissive);
    for (const { id } of subscriptions) {
      const [delivery] = (await api(permissive, 'GET', `/api/v1/event-subscriptions/${id}/deliveries`)).body;
      expect((await api(permissive, 'POST', `/api/v1/event-subscriptions/${id}/deliveries/${delivery.id}/redeliver`)).status).toBe(202);
    }
    await until('the redeliveries', async () => {
      await permissive.runner.idle();
      return received.length === 2;
    });
    expect(received.sort()).toEqual(['POST /literal', 'POST /name']);
    await workOn(app);
    for (const { id } of subscriptions) {
      expect((await api(app, 'GET', `/api/v1/event-subscriptions/${id}/deliveries`)).body[0]).toMatchObject({ state: 'succeeded', lastStatusCode: 204, lastError: null });
      await api(app, 'DELETE', `/api/v1/event-subscriptions/${id}`);
    }
  });

  it.each([
    ['http://127.0.0.1:4000/hook', 'a loopback address (127.0.0.1)'],
    ['http://localhost:4000/hook', 'this machine (localhost)'],
    ['https://api.localhost/hook', 'this machine (api.localhost)'],
    ['http://[::1]/hook', 'a loopback address ([::1])'],
    ['https://10.0.0.7/hook', 'a private address (10.0.0.7)'],
    ['https://[::ffff:192.168.1.2]/hook', 'a private address ([::ffff:c0a8:102])'],
    ['https://169.254.169.254/latest/meta-data', 'the cloud metadata address (169.254.169.254)'],
    ['https://[fd00:ec2::254]/', 'the cloud metadata address ([fd00:ec2::254])'],
    ['https://100.64.0.1/hook', 'a carrier-grade NAT address (100.64.0.1)'],
    ['https://0.0.0.0/hook', 'an unspecified address (0.0.0.0)'],
  ])('are refused when saved at %s', async (url, what) => {
    const res = await api(app, 'POST', '/api/v1/event-subscriptions', { url, events: ['run.queued'] });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'validation_failed', message: `\`url\` points to ${what}; ${ALLOW}.` });
  });

  it('are refused when changed to a private address, and a public name saves without a lookup', async () => {
    const created = await api(app, 'POST', '/api/v1/event-subscriptions', { url: 'https://hooks.example.com/flows', events: ['run.queued'], enabled: false });
    expect(created.status).toBe(201);
    const patched = await api(app, 'PATCH', `/api/v1/event-subscriptions/${created.body.id}`, { url: 'https://192.168.0.1/flows' });
    expect(patched.status).toBe(400);
    expect(patched.body.error.message).toBe(`\`url\` points to a private address (192.168.0.1); ${ALLOW}.`);
    await api(app, 'DELETE', `/api/v1/event-subscriptions/${created.body.id}`);
  });
});

describe('provider base URLs', () => {
  it('are refused when saved at a private address, naming the field, and a public name saves', async () => {
    const connection = await api(app, 'POST', '/api/v1/vmhost-connections', { name: 'Private', apiToken: VMHOST_TOKEN, apiBaseUrl: 'http://10.1.2.3/v1' });
    expect(connection.status).toBe(400);
    expect(connection.body.error).toEqual({ code: 'validation_failed', message: `\`apiBaseUrl\` points to a private address (10.1.2.3); ${ALLOW}.` });
    const integration = await api(app, 'PUT', '/api/v1/integrations/agent-integration', { accessToken: AGENT_TOKEN, project: 'acme', apiBaseUrl: 'https://localhost/' });
    expect(integration.status).toBe(400);
    expect(integration.body.error.message).toBe(`\`apiBaseUrl\` points to this machine (localhost); ${ALLOW}.`);

    const saved = await api(app, 'POST', '/api/v1/vmhost-connections', { name: 'Public', apiToken: VMHOST_TOKEN, apiBaseUrl: 'https://api.vmhost.example.com/v2' });
    expect(saved.status).toBe(201);
    expect((await api(app, 'PATCH', `/api/v1/vmhost-connections/${saved.body.id}`, { apiBaseUrl: 'https://[fe80::1]/v2' })).body.error.message).toBe(
      `\`apiBaseUrl\` points to a link-local address ([fe80::1]); ${ALLOW}.`,
    );
    expect((await api(app, 'DELETE', `/api/v1/vmhost-connections/${saved.body.id}`)).status).toBe(204);
  });

  it('fail diagnostics and runs at the connection, saying why, with nothing sent to the provider', async () => {
    const byAddress = (await api(permissive, 'POST', '/api/v1/vmhost-connections', { name: 'Loopback', apiToken: VMHOST_TOKEN, apiBaseUrl: providers.url })).body;
    const byName = (await api(permissive, 'POST', '/api/v1/vmhost-connections', { name: 'Localhost', apiToken: VMHOST_TOKEN, apiBaseUrl: providers.url.replace('127.0.0.1', 'localhost') })).body;
    const byMapped = (await api(permissive, 'POST', '/api/v1/vmhost-connections', { name: 'Mapped', apiToken: VMHOST_TOKEN, apiBaseUrl: providers.url.replace('127.0.0.1', '[::ffff:127.0.0.1]') })).body;
    const target = (await api(permissive, 'POST', '/api/v1/execution-targets', { name: 'Loopback VM', connectionId: byAddress.id, image: 'agent-runner' })).body;
    expect((await api(permissive, 'PUT', '/api/v1/integrations/agent-integration', { accessToken: AGENT_TOKEN, project: 'acme', connectionId: byAddress.id, apiBaseUrl: providers.url })).status).toBe(200);

    const refused = (await api(app, 'POST', `/api/v1/integrations/vmhost/${byAddress.id}/diagnostics`)).body;
    expect(refused).toMatchObject({ ok: false, steps: [{ step: 'token_permissions', ok: false, detail: `checking the token: 127.0.0.1 is a loopback address; ${ALLOW}` }] });
    // The name is judged by what it resolves to when the connection is made (127.0.0.1 or ::1 first).
    const named = (await api(app, 'POST', `/api/v1/integrations/vmhost/${byName.id}/diagnostics`)).body;
    expect(named.steps).toEqual([
      expect.objectContaining({ step: 'token_permissions', ok: false, detail: expect.stringMatching(new RegExp(`^checking the token: localhost resolves to a loopback address \\((127\\.0\\.0\\.1|::1)\\); ${ALLOW}$`)) }),
    ]);
    // An IPv4-mapped IPv6 literal is judged as the IPv4 address it carries.
    const mapped = (await api(app, 'POST', `/api/v1/integrations/vmhost/${byMapped.id}/diagnostics`)).body;
    expect(mapped.steps).toEqual([expect.objectContaining({ step: 'token_permissions', ok: false, detail: `checking the token: ::ffff:7f00:1 is a loopback address; ${ALLOW}` })]);

    const job = (await api(app, 'POST', '/api/v1/jobs', { name: 'On a VM', promptTemplate: 'Fix it', executionTargetId: target.id })).body;
    const { runId } = (await api(app, 'POST', `/api/v1/jobs/${job.id}/invocations`, {})).body;
    const run = await until('the run to fail', async () => {
      const row = (await api(app, 'GET', `/api/v1/runs/${runId}`)).body;
      return row.state === 'failed' && row;
    });
    expect(run.error).toBe(`The VM could not be created: booting a VM: 127.0.0.1 is a loopback address; ${ALLOW}.`);
    expect(providers.requests).toEqual([]);

    // The same connections are live: the instance that allows private addresses reaches them (and passes
    // every step on the one a target uses).
    expect((await api(permissive, 'POST', `/api/v1/integrations/vmhost/${byAddress.id}/diagnostics`)).body).toMatchObject({ ok: true });
    for (const connection of [byName, byMapped]) {
      expect((await api(permissive, 'POST', `/api/v1/integrations/vmhost/${connection.id}/diagnostics`)).body.steps[0]).toMatchObject({ step: 'token_permissions', ok: true });
    }
    expect(providers.requests.filter((request) => request === 'GET /v1/token')).toHaveLength(3);
  });
});
