// The client SDK (clients/sdk) against a listening server: typed calls, idempotent invocation, waiting for
// and following a run, auto-pagination, errors as FlowsApiError, and tokens that renew themselves through
// the server's own OAuth (before expiry, once after a 401, rotating), with real device-flow tokens.
import { createServer } from 'node:net';
import * as oauth from 'openid-client';
import { createFlows, FlowsApiError, type Flows, type FlowsOptions, type TraceEvent, type Tokens } from '../../clients/sdk/src';
import { resourcesOf } from '../../src/oauth/resources';
import { agentCommand } from '../support/agent';
import { FormSession } from '../support/form-session';
import { accessToken, createOwner, sessionCookie, type TestOwner } from '../support/identity';
import { startListeningApp, type ListeningApp } from '../support/server';

jest.setTimeout(60_000);

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

let server: ListeningApp;
let owner: TestOwner;
let flows: Flows;

beforeAll(async () => {
  // Polling runs takes more requests than the default rate limit allows.
  server = await startListeningApp({ localAgent: { command: agentCommand(), timeoutSeconds: 30 }, rateLimits: { api: 0, apiAddress: 0 } });
  owner = await createOwner(server.app.database.db);
  flows = createFlows({ baseUrl: server.url, accessToken: await accessToken(server.app, owner) });
});
afterAll(() => server.close());

interface Sent {
  method: string;
  /** Path and query. */
  path: string;
  authorization: string | null;
  status: number;
  requestId: string | null;
  /** How many items a JSON list answer held. */
  items?: number;
}

/** The real fetch, recording every request it sends and what came back. */
function recordingFetch() {
  const sent: Sent[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const request = new Request(input, init);
    const response = await globalThis.fetch(request);
    const url = new URL(request.url);
    const record: Sent = { method: request.method, path: url.pathname + url.search, authorization: request.headers.get('authorization'), status: response.status, requestId: response.headers.get('x-request-id') };
    if (response.ok && response.headers.get('content-type')?.includes('json')) {
      const body: unknown = await response.clone().json();
      if (Array.isArray(body)) record.items = body.length;
    }
    sent.push(record);
    return response;
  };
  return { fetch, sent };
}

const summary = (sent: Sent[]) => sent.map((s) => `${s.method} ${s.path.split('?')[0]} ${s.status}`);

async function caught(promise: Promise<unknown>): Promise<FlowsApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof FlowsApiError) return error;
    throw error;
  }
  throw new Error('expected a FlowsApiError');
}

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const seen: T[] = [];
  for await (const item of items) seen.push(item);
  return seen;
}

const jobBody = (extra: Record<string, unknown> = {}) => ({ name: 'SDK job', promptTemplate: 'Hello {{ data.who }}', executionTargetId: 'local', ...extra });

describe('typed calls', () => {
  it('tells who the token acts for', async () => {
    const me = await flows.me();
    expect(me).toMatchObject({ owner: { id: owner.ownerId }, tenant: { id: owner.tenantId }, credential: { type: 'bearer' } });
  });

  it('creates, reads by slug, updates, disables, enables and deletes a job', async () => {
    const job = await flows.jobs.create(jobBody({ slug: 'sdk-crud' }));
    expect(job).toMatchObject({ slug: 'sdk-crud', enabled: true, promptTemplate: 'Hello {{ data.who }}' });
    expect((await flows.jobs.get('sdk-crud')).id).toBe(job.id);
    expect(await flows.jobs.update('sdk-crud', { name: 'Renamed' })).toMatchObject({ id: job.id, name: 'Renamed' });
    expect((await flows.jobs.disable(job.id)).enabled).toBe(false);
    expect((await caught(flows.jobs.invoke(job.id))).code).toBe('job_disabled');
    expect((await flows.jobs.enable(job.id)).enabled).toBe(true);
    await expect(flows.jobs.delete(job.id)).resolves.toBeUndefined();
    expect((await caught(flows.jobs.get(job.id))).status).toBe(404);
  });

  it('invokes once per idempotency key, and waits for the run to succeed', async () => {
    const job = await flows.jobs.create(jobBody({ slug: 'sdk-invoke' }));
    const first = await flows.jobs.invoke('sdk-invoke', { data: { who: 'Ada' }, idempotencyKey: 'once' });
    expect(first).toMatchObject({ duplicate: false, state: 'queued', runId: expect.stringMatching(/^run_/) });
    const again = await flows.jobs.invoke('sdk-invoke', { data: { who: 'Ada' }, idempotencyKey: 'once' });
    expect(again).toMatchObject({ duplicate: true, runId: first.runId, invocationId: first.invocationId });

    const run = await flows.runs.waitFor(first.runId, { intervalMs: 50, timeoutMs: 20_000 });
    expect(run).toMatchObject({ id: first.runId, jobId: job.id, state: 'succeeded', prompt: 'Hello Ada', result: { summary: 'prompt=Hello Ada' } });
    expect((await all(flows.runs.list({ jobId: job.id }))).map((r) => r.id)).toEqual([first.runId]);
    expect(await all(flows.runs.list({ jobId: job.id, state: 'failed' }))).toEqual([]);
    const trace = await all(flows.runs.trace(run.id));
    expect(trace.map((event) => event.seq)).toEqual(trace.map((_, i) => i + 1));
    expect(trace.at(-1)).toMatchObject({ type: 'state_changed', data: { from: 'running', to: 'succeeded' } });
  });

  it('tests conditions and templates, and manages webhook sources and reads their activity', async () => {
    const decision = await flows.conditions.test({ conditions: { all: [{ path: 'payload.n', op: 'eq', value: 1 }] }, webhook: { event: 'issues', payload: { n: 1 } } });
    expect(decision).toMatchObject({ decision: 'match', details: [{ part: 'all', result: true }] });
    expect(await flows.templates.test({ template: 'Hi {{ data.who }}', context: { data: { who: 'Ada' } } })).toEqual({ output: 'Hi Ada' });

    const created = await flows.sources.create({ name: 'SDK source', format: 'github' });
    expect(created.signingSecret).toMatch(/^whsec_/);
    const rotated = await flows.sources.rotate(created.id);
    expect(rotated).toMatchObject({ id: created.id, signingSecret: expect.stringMatching(/^whsec_/) });
    expect(rotated.signingSecret).not.toBe(created.signingSecret);
    expect((await flows.sources.list()).map((source) => source.id)).toContain(created.id);
    const unsigned = await fetch(`${server.url}/hooks/${created.id}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-github-event': 'ping' }, body: '{"zen":"hi"}' });
    expect(unsigned.status).toBe(401);
    expect(await all(flows.sources.refusals(created.id))).toEqual([expect.objectContaining({ sourceId: created.id, reason: 'signature_missing', bodyBytes: 12 })]);
    expect((await caught(all(flows.sources.refusals('src_nope')))).code).toBe('not_found');
    expect(await all(flows.activity.list({ sourceId: created.id }))).toEqual([]);
    expect((await caught(flows.activity.get('act_nope'))).code).toBe('not_found');
  });
});

describe('watching runs', () => {
  it('follows a running run: every trace event once, in seq order, with `after`, until it is terminal', async () => {
    const { fetch, sent } = recordingFetch();
    const watcher = createFlows({ baseUrl: server.url, accessToken: await accessToken(server.app, owner), fetch });
    const job = await flows.jobs.create(jobBody({ promptTemplate: 'sleep' }));
    const { runId } = await flows.jobs.invoke(job.id);

    const followed: TraceEvent[] = [];
    for await (const event of watcher.runs.follow(runId, { intervalMs: 50 })) {
      followed.push(event);
      // The agent has started and sleeps: the run is live while it is followed, and then stopped.
      if (event.type === 'agent_output') {
        expect((await flows.runs.get(runId)).state).toBe('running');
        expect(await flows.runs.stop(runId)).toMatchObject({ id: runId, state: 'canceling' });
      }
    }

    expect(followed.map((event) => event.seq)).toEqual(followed.map((_, i) => i + 1));
    expect(followed).toEqual(await all(flows.runs.trace(runId)));
    expect(followed.filter((event) => event.type === 'state_changed').map((event) => event.data.to)).toEqual(['starting', 'running', 'canceling', 'canceled']);
    // Each read went on from the last seq it had, so the answers together held each event exactly once.
    const reads = sent.filter((s) => s.path.includes('/trace'));
    expect(reads.length).toBeGreaterThan(1);
    let read = 0;
    for (const { path, items } of reads) {
      expect(new URL(path, server.url).searchParams.get('after')).toBe(String(read));
      read += items ?? 0;
    }
    expect(read).toBe(followed.length);
  });

  it('gives up waiting after timeoutMs with a TimeoutError, and stops at once when the signal aborts', async () => {
    const job = await flows.jobs.create(jobBody({ promptTemplate: 'sleep' }));
    const { runId } = await flows.jobs.invoke(job.id);
    const started = Date.now();
    await expect(flows.runs.waitFor(runId, { intervalMs: 50, timeoutMs: 300 })).rejects.toMatchObject({ name: 'TimeoutError', message: expect.stringContaining(runId) });
    expect(Date.now() - started).toBeLessThan(5_000);

    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    await expect(flows.runs.waitFor(runId, { intervalMs: 50, signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });

    await flows.runs.stop(runId);
    expect((await flows.runs.waitFor(runId, { intervalMs: 50, timeoutMs: 20_000 })).state).toBe('canceled');
  });
});

describe('pagination', () => {
  it('follows the Link header across pages with the same filters, each item once, and reads a page only when it is needed', async () => {
    const { fetch, sent } = recordingFetch();
    const tenant = await createOwner(server.app.database.db, { tenantName: 'Pages' });
    const paged = createFlows({ baseUrl: server.url, accessToken: await accessToken(server.app, tenant), fetch });
    const created = [];
    for (let i = 1; i <= 5; i++) created.push(await paged.jobs.create(jobBody({ name: `Job ${i}` })));
    await paged.jobs.disable(created[0].id);
    sent.length = 0;

    const listed = await all(paged.jobs.list({ limit: 2 }));
    expect(listed.map((job) => job.id).sort()).toEqual(created.map((job) => job.id).sort());
    expect(new Set(listed.map((job) => job.id)).size).toBe(5);
    const pages = sent.map((s) => new URL(s.path, server.url).searchParams);
    expect(pages.map((query) => [query.get('limit'), query.has('cursor')])).toEqual([['2', false], ['2', true], ['2', true]]);

    // The cursor belongs to the filtered list: a next page without the filter would be refused.
    const enabled = await all(paged.jobs.list({ enabled: true, limit: 2 }));
    expect(enabled.map((job) => job.id).sort()).toEqual(created.slice(1).map((job) => job.id).sort());

    sent.length = 0;
    for await (const job of paged.jobs.list({ limit: 2 })) {
      expect(job.id).toBe(listed[0].id);
      break;
    }
    expect(sent).toHaveLength(1);
  });
});

describe('errors', () => {
  it('throws FlowsApiError with the status, the code and the request id for a 404 and a 400', async () => {
    const { fetch, sent } = recordingFetch();
    const client = createFlows({ baseUrl: server.url, accessToken: await accessToken(server.app, owner), fetch });

    const missing = await caught(client.jobs.get('no-such-job'));
    expect(missing).toBeInstanceOf(Error);
    expect(missing).toMatchObject({ name: 'FlowsApiError', status: 404, code: 'not_found', message: 'No such job.' });
    expect(missing.requestId).toEqual(expect.any(String));
    expect(missing.requestId).toBe(sent.at(-1)!.requestId);

    const invalid = await caught(client.jobs.create(jobBody({ promptTemplate: '{% if %}' })));
    expect(invalid).toMatchObject({ status: 400, code: 'invalid_template' });
    expect(invalid.requestId).toBe(sent.at(-1)!.requestId);
    expect(invalid.requestId).not.toBe(missing.requestId);

    const refused = await caught(all(client.jobs.list({ limit: 0 })));
    expect(refused).toMatchObject({ status: 400, code: 'validation_failed', requestId: expect.any(String) });
  });

  it('throws FlowsApiError for a 401 without a refresh token, without retrying', async () => {
    const { fetch, sent } = recordingFetch();
    const client = createFlows({ baseUrl: server.url, accessToken: 'not-a-token', fetch });
    expect(await caught(client.me())).toMatchObject({ status: 401, code: 'invalid_token' });
    expect(summary(sent)).toEqual(['GET /api/v1/me 401']);
  });

  it('throws a network_error naming the URL when nothing listens there', async () => {
    const port = await closedPort();
    const client = createFlows({ baseUrl: `http://127.0.0.1:${port}/`, accessToken: 'unused' });
    const error = await caught(client.me());
    expect(error).toMatchObject({ status: 0, code: 'network_error', requestId: null });
    expect(error.message).toContain(`http://127.0.0.1:${port}/api/v1/me`);
    expect(error.message).toContain('ECONNREFUSED');
    expect((await caught(all(client.jobs.list()))).code).toBe('network_error');
  });
});

describe('tokens that renew themselves', () => {
  /** A device-flow client and its tokens, approved by the owner's forms as the device-flow API test does. */
  async function deviceTokens(resource?: string): Promise<{ clientId: string; tokens: Required<Tokens> }> {
    const config = await oauth.dynamicClientRegistration(
      new URL(server.url),
      { client_name: 'SDK test', token_endpoint_auth_method: 'none', grant_types: [DEVICE_GRANT, 'refresh_token'], response_types: [], redirect_uris: [] },
      oauth.None(),
      { execute: [oauth.allowInsecureRequests] },
    );
    const scope = 'flows:read flows:write runs:read runs:write';
    const device = await oauth.initiateDeviceAuthorization(config, resource ? { scope, resource } : { scope });
    const browser = new FormSession(server.url, await sessionCookie(server.app, owner));
    const confirm = await browser.request(device.verification_uri_complete!);
    expect((await browser.submit(confirm.text, {}, 'op.deviceConfirmForm')).text).toContain('Device approved');
    const answer = await oauth.pollDeviceAuthorizationGrant(config, { ...device, interval: 0.01 } as oauth.DeviceAuthorizationResponse);
    return {
      clientId: config.clientMetadata().client_id,
      tokens: { accessToken: answer.access_token, refreshToken: answer.refresh_token!, expiresAt: Date.now() + answer.expires_in! * 1000 },
    };
  }

  const revoke = async (token: string) => (await server.app.provider.AccessToken.find(token))!.destroy();

  function renewing(clientId: string, tokens: Tokens, extra: Partial<FlowsOptions> = {}) {
    const { fetch, sent } = recordingFetch();
    const given: Tokens[] = [];
    const client = createFlows({ baseUrl: server.url, fetch, refresh: { clientId, tokens, onTokens: (pair) => void given.push(pair) }, ...extra });
    return { client, sent, given };
  }

  it('renews a token whose expiry has passed before the call, once for calls made together', async () => {
    const { clientId, tokens } = await deviceTokens();
    const { client, sent, given } = renewing(clientId, { ...tokens, expiresAt: Date.now() - 1000 });

    const [me] = await Promise.all([client.me(), all(client.jobs.list())]);
    expect(me.owner.id).toBe(owner.ownerId);
    // The two calls answer in either order; the renewal comes before both.
    expect(summary(sent)[0]).toBe('POST /oauth/token 200');
    expect(summary(sent).slice(1).sort()).toEqual(['GET /api/v1/jobs 200', 'GET /api/v1/me 200']);
    expect(given).toEqual([{ accessToken: expect.any(String), refreshToken: expect.any(String), expiresAt: expect.any(Number) }]);
    const [renewed] = given;
    expect(renewed.accessToken).not.toBe(tokens.accessToken);
    expect(renewed.refreshToken).not.toBe(tokens.refreshToken);
    expect(renewed.expiresAt! - Date.now()).toBeGreaterThan(3500_000);
    expect(sent.slice(1).map((s) => s.authorization)).toEqual([`Bearer ${renewed.accessToken}`, `Bearer ${renewed.accessToken}`]);

    // Now good for an hour: the next call renews nothing.
    await client.me();
    expect(summary(sent.slice(3))).toEqual(['GET /api/v1/me 200']);
  });

  it('renews once after a 401 and sends the request again, body and all; the rotated refresh token is the one used next', async () => {
    const { clientId, tokens } = await deviceTokens();
    await revoke(tokens.accessToken);
    const { client, sent, given } = renewing(clientId, tokens);

    const job = await client.jobs.create(jobBody({ name: 'Created after a renewal' }));
    expect(job.name).toBe('Created after a renewal');
    expect(summary(sent)).toEqual(['POST /api/v1/jobs 401', 'POST /oauth/token 200', 'POST /api/v1/jobs 201']);
    expect(given).toHaveLength(1);
    expect(sent[2].authorization).toBe(`Bearer ${given[0].accessToken}`);

    // Had the spent refresh token been sent again, the server would have ended the whole grant.
    await revoke(given[0].accessToken);
    sent.length = 0;
    expect((await client.me()).owner.id).toBe(owner.ownerId);
    expect(summary(sent)).toEqual(['GET /api/v1/me 401', 'POST /oauth/token 200', 'GET /api/v1/me 200']);
    expect(given).toHaveLength(2);
    expect(given[1].refreshToken).not.toBe(given[0].refreshToken);
    expect(given[1].accessToken).not.toBe(given[0].accessToken);
  });

  it('retries only once: a renewed token that is refused too ends in the 401', async () => {
    // Tokens for the MCP resource renew as MCP tokens, which the API refuses.
    const { clientId, tokens } = await deviceTokens(resourcesOf(server.app.config.baseUrl).mcp);
    const { client, sent, given } = renewing(clientId, tokens);
    expect(await caught(client.me())).toMatchObject({ status: 401, code: 'invalid_token' });
    expect(summary(sent)).toEqual(['GET /api/v1/me 401', 'POST /oauth/token 200', 'GET /api/v1/me 401']);
    expect(given).toHaveLength(1);
  });

  it('throws the token endpoint\'s error when the refresh token is refused', async () => {
    const { clientId, tokens } = await deviceTokens();
    const { client, sent, given } = renewing(clientId, { ...tokens, refreshToken: 'not-a-refresh-token', expiresAt: Date.now() });
    expect(await caught(client.me())).toMatchObject({ status: 400, code: 'invalid_grant' });
    expect(summary(sent)).toEqual(['POST /oauth/token 400']);
    expect(given).toEqual([]);
  });
});

/** A loopback port that nothing listens on any more. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
