// Real resources of one tenant, made through the API as a client makes them, for tests generated from the
// contract: an existing resource for every path parameter, and new ones for requests that use theirs up
// (delete, revoke, stop). Every name carries the tenant's label, so an answer that leaks one shows it.
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import type { Config } from '../../src/config';
import { agentCommand } from './agent';
import { BASE_URL, type TestApp } from './app';
import { AGENT_TOKEN, VMHOST_TOKEN } from './fake-providers';
import { call } from './http';
import { accessToken, createOwner, registerTestClient, sessionCookie, type TestOwner } from './identity';
import { githubDelivery, runSettled } from './kit';
import { until } from './until';

export interface Tenant {
  owner: TestOwner;
  label: string;
  /** A bearer token holding every scope. */
  bearer: Record<string, string>;
  /** The owner session, from the service's own origin. */
  session: Record<string, string>;
  /** An existing resource for each path parameter of the contract, by the parameter's name. */
  ids: Record<string, string>;
  /** Makes a new resource for a path parameter (by its name), or for a singleton (by its path). */
  fresh: Record<string, () => Promise<string>>;
  /** A run that is queued or running, for as long as a test takes. */
  activeRun(): Promise<string>;
}

/** A private key of the fixtures' GitHub Apps (RSA, as GitHub's are), made once per test file. */
export const FIXTURE_APP_KEY = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();

/** A loopback endpoint for event subscriptions: answers every delivery 204. */
export async function startEventReceiver(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * What the app needs for the fixtures: the local agent (test/support/agent.ts: a `sleep` prompt keeps a run
 * going, others end at once; the sandbox is not what these tests are about) and a Docker host that does not
 * answer, so docker targets exist and their diagnostics fail fast.
 */
export const FIXTURE_CONFIG: Partial<Config> = {
  localAgent: { command: agentCommand(), timeoutSeconds: 60, sandbox: 'off' },
  docker: { host: 'tcp://127.0.0.1:9', images: ['fixtures/*'] },
};

/** A tenant with one of everything, in an app started with FIXTURE_CONFIG; VM-host resources point at `providersUrl`. */
export async function createTenant(app: TestApp, { label, providersUrl, receiverUrl }: { label: string; providersUrl: string; receiverUrl: string }): Promise<Tenant> {
  const owner = await createOwner(app.database.db, { tenantName: label });
  const bearer = { authorization: `Bearer ${await accessToken(app, owner)}` };
  const session = { cookie: await sessionCookie(app, owner), origin: BASE_URL };
  let serial = 0;
  const named = (what: string) => `${label} ${what} ${++serial}`;

  async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = bearer, status = [200, 201, 202, 204]) {
    const res = await call(app, method, path, { headers, body });
    if (!status.includes(res.status)) throw new Error(`${method} ${path} for the fixtures answered ${res.status} ${res.text}`);
    return res.body;
  }
  const tokenIds = async () => ((await api('GET', '/api/v1/access-tokens', undefined, session)) as { id: string }[]).map((t) => t.id);

  const fresh: Tenant['fresh'] = {
    connectionId: async () => (await api('POST', '/api/v1/vmhost-connections', { name: named('host'), apiToken: VMHOST_TOKEN, apiBaseUrl: providersUrl })).id,
    sourceId: async () => (await api('POST', '/api/v1/webhook-sources', { name: named('source'), format: 'github' })).id,
    secretName: async () => (await api('POST', '/api/v1/secrets', { name: `${label.replace(/\W/g, '_').toUpperCase()}_${++serial}`, value: `${label} value` })).name,
    subscriptionId: async () => (await api('POST', '/api/v1/event-subscriptions', { url: receiverUrl, events: ['run.succeeded', 'run.failed'], description: named('subscription') })).id,
    tokenId: async () => {
      const before = await tokenIds();
      await accessToken(app, owner);
      return (await tokenIds()).find((id) => !before.includes(id))!;
    },
    // A key of its own each (the provider's fake has no GitHub: diagnostics run and fail at the first step).
    githubAppId: async () => (await api('POST', '/api/v1/github-apps', { name: named('app'), appId: 4242, privateKey: FIXTURE_APP_KEY, apiBaseUrl: providersUrl })).id,
    // The provider's fake is no Slack either: diagnostics run and say so.
    senderConnectionId: async () => (await api('POST', '/api/v1/sender-connections', { name: named('slack'), kind: 'slack', token: `xoxb-${label}-fixture`, apiBaseUrl: providersUrl })).id,
    clientId: async () => {
      const clientId = await registerTestClient(app, named('client'));
      await accessToken(app, owner, { clientId });
      return clientId;
    },
  };
  const ids: Record<string, string> = {};
  ids.connectionId = await fresh.connectionId();
  const integration = { accessToken: AGENT_TOKEN, project: 'fixtures', connectionId: ids.connectionId, apiBaseUrl: providersUrl };
  fresh['/api/v1/integrations/agent-integration'] = async () => (await api('PUT', '/api/v1/integrations/agent-integration', integration), '');
  await fresh['/api/v1/integrations/agent-integration']();
  fresh.targetId = async () =>
    (await api('POST', '/api/v1/execution-targets', { kind: 'docker', name: named('target'), image: 'fixtures/agent:1', timeoutSeconds: 600 })).id;
  ids.targetId = await fresh.targetId();
  ids.sourceId = await fresh.sourceId();
  ids.secretName = await fresh.secretName();
  ids.subscriptionId = await fresh.subscriptionId();
  ids.tokenId = await fresh.tokenId();
  ids.clientId = await fresh.clientId();
  ids.githubAppId = await fresh.githubAppId();
  ids.senderConnectionId = await fresh.senderConnectionId();

  // A job of the local target that ends at once, run by a webhook or by invocation.
  fresh.jobId = async () =>
    (await api('POST', '/api/v1/jobs', { name: named('job'), promptTemplate: 'quick', triggers: [{ type: 'webhook', sourceId: ids.sourceId, events: ['*'] }, { type: 'invocation' }] })).id;
  ids.jobId = await fresh.jobId();
  fresh.runId = async () => {
    const { runId } = await api('POST', `/api/v1/jobs/${ids.jobId}/invocations`, { data: {} });
    return (await runSettled(app, bearer, runId)).id as string;
  };
  ids.runId = await fresh.runId();
  // As if the run had worked on a repository: its changes, as a patch.
  await app.database.db.runPatch.create({ data: { tenantId: owner.tenantId, runId: ids.runId, patch: `From 0000000 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] ${label}\n` } });
  // One run at a time, each sleeping: every later invocation waits in the queue.
  const sleeper = (await api('POST', '/api/v1/jobs', { name: named('sleeper'), promptTemplate: 'sleep', concurrencyLimit: 1, triggers: [{ type: 'invocation' }] })).id;
  const activeRun = async () => (await api('POST', `/api/v1/jobs/${sleeper}/invocations`, { data: {} })).runId as string;

  const secret = (await call(app, 'POST', `/api/v1/webhook-sources/${ids.sourceId}/rotate-secret`, { headers: bearer })).body.signingSecret as string;
  const delivery = githubDelivery(secret, { action: 'opened', issue: { number: 1, title: label }, repository: { full_name: 'acme/widgets' } });
  const intake = await request(app.app)
    .post(`/hooks/${ids.sourceId}`)
    .set(delivery.headers)
    .send(delivery.body);
  if (intake.status !== 202) throw new Error(`the fixture delivery answered ${intake.status} ${intake.text}`);
  ids.activityId = intake.body.activityId;
  ids.deliveryId = await until('an event delivery', async () => (await api('GET', `/api/v1/event-subscriptions/${ids.subscriptionId}/deliveries`))[0]?.id as string | undefined, { tries: 400 });

  return { owner, label, bearer, session, ids, fresh, activeRun };
}
