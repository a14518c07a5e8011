// The MCP surface at /mcp with the SDK's own client over Streamable HTTP against a listening server: tools
// listed by scope, every operation tool called, a job's typed tool with valid and invalid data, resources,
// and the API's token rules (audience, revocation, tenants, no cookies).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { resourcesOf } from '../../src/oauth/provider';
import { agentCommand } from '../support/agent';
import { accessToken, createOwner, sessionCookie, type TestOwner } from '../support/identity';
import { startListeningApp, type ListeningApp } from '../support/server';

jest.setTimeout(60_000);

let server: ListeningApp;
let owner: TestOwner;
let mcpToken: string;
let apiHeaders: Record<string, string>;

beforeAll(async () => {
  server = await startListeningApp({ localAgent: { command: agentCommand(), timeoutSeconds: 30 }, rateLimits: { api: 0, apiAddress: 0 } });
  owner = await createOwner(server.app.database.db);
  mcpToken = await tokenFor(owner);
  apiHeaders = { authorization: `Bearer ${await accessToken(server.app, owner)}`, 'content-type': 'application/json' };
});
afterAll(() => server.close());

const tokenFor = (who: TestOwner, scopes?: string[]) => accessToken(server.app, who, { resource: resourcesOf(server.app.config.baseUrl).mcp, ...(scopes ? { scopes } : {}) });

async function connect(token = mcpToken) {
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

async function rest(method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.url}/api/v1${path}`, { method, headers: apiHeaders, body: body === undefined ? undefined : JSON.stringify(body) });
  return res.json() as Promise<any>;
}

const mcpPost = (headers: Record<string, string>) =>
  fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });

describe('tools', () => {
  let job: any;
  beforeAll(async () => {
    job = await rest('POST', '/jobs', {
      name: 'Fix issues',
      slug: 'fix-issues',
      promptTemplate: 'Fix issue {{ data.number }}',
      executionTargetId: 'local',
      triggers: [{ type: 'invocation', description: 'Opens a pull request for the issue.', inputSchema: { type: 'object', required: ['number'], properties: { number: { type: 'integer', minimum: 1 } }, additionalProperties: false } }],
    });
  });

  it('lists every operation tool and a typed tool per invocable job for a full token, fewer for a read-only one', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(
      ['backtest_job', 'get_job', 'get_run', 'get_run_trace', 'get_trigger_contexts', 'get_webhook_activity', 'invoke_job', 'list_jobs', 'list_runs', 'list_webhook_activity', 'run_fix_issues', 'stop_run', 'test_conditions', 'test_template'].sort(),
    );
    const invoke = tools.find((tool) => tool.name === 'invoke_job')!;
    expect(invoke.inputSchema).toMatchObject({ type: 'object', required: ['jobId'], properties: { jobId: expect.any(Object), data: expect.any(Object), idempotencyKey: expect.any(Object) } });
    const typed = tools.find((tool) => tool.name === 'run_fix_issues')!;
    expect(typed.description).toContain('Opens a pull request for the issue.');
    expect(typed.inputSchema).toMatchObject({ type: 'object', required: ['number'], properties: { number: { type: 'integer', minimum: 1 } } });

    const reader = await connect(await tokenFor(owner, ['flows:read', 'runs:read']));
    const readable = (await reader.listTools()).tools.map((tool) => tool.name);
    expect(readable).toContain('list_jobs');
    expect(readable).not.toContain('invoke_job');
    expect(readable).not.toContain('run_fix_issues');
    const refused = await reader.callTool({ name: 'invoke_job', arguments: { jobId: job.id } });
    expect(refused).toMatchObject({ isError: true, structuredContent: { error: { code: 'insufficient_scope', message: expect.stringContaining('runs:write') } } });
  });

  it('invokes a job through its typed tool, refuses data its schema refuses, and follows the run through the other tools', async () => {
    const client = await connect();
    const invalid = await client.callTool({ name: 'run_fix_issues', arguments: { number: 0 } });
    expect(invalid).toMatchObject({ isError: true, structuredContent: { error: { code: 'validation_failed' } } });
    const started = await client.callTool({ name: 'run_fix_issues', arguments: { number: 7 } });
    const { runId } = started.structuredContent as { runId: string };
    expect(runId).toMatch(/^run_/);
    let run: any;
    for (let i = 0; i < 200; i++) {
      run = (await client.callTool({ name: 'get_run', arguments: { runId } })).structuredContent;
      if (run.state === 'succeeded') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(run).toMatchObject({ state: 'succeeded', prompt: 'Fix issue 7' });
    const trace = await client.callTool({ name: 'get_run_trace', arguments: { runId, limit: 2 } });
    expect(trace.structuredContent).toMatchObject({ items: [{ seq: 1 }, { seq: 2 }], nextCursor: expect.any(String) });
    const rest2 = await client.callTool({ name: 'get_run_trace', arguments: { runId, limit: 100, cursor: (trace.structuredContent as any).nextCursor } });
    expect((rest2.structuredContent as any).items[0].seq).toBe(3);
    const resource = await client.readResource({ uri: `flows://runs/${runId}/trace` });
    expect((resource.contents[0] as { text: string }).text).toMatch(/^1 \S+ prompt_rendered /);
    const read = (await client.readResource({ uri: `flows://runs/${runId}` })).contents[0] as { text: string };
    expect(JSON.parse(read.text)).toMatchObject({ id: runId, state: 'succeeded' });
    expect((await client.listResourceTemplates()).resourceTemplates.map((template) => template.uriTemplate)).toEqual(['flows://runs/{runId}', 'flows://runs/{runId}/trace']);
  });

  it('calls every other operation tool as its REST operation answers', async () => {
    const client = await connect();
    const call = async (name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: args });
    expect((await call('list_jobs', { limit: 10 })).structuredContent).toMatchObject({ items: [expect.objectContaining({ id: job.id })] });
    expect((await call('get_job', { jobId: 'fix-issues' })).structuredContent).toMatchObject({ id: job.id });
    const invoked = await call('invoke_job', { jobId: job.id, data: { number: 3 }, idempotencyKey: 'once' });
    expect(invoked.structuredContent).toMatchObject({ duplicate: false, state: 'queued' });
    expect((await call('invoke_job', { jobId: job.id, data: { number: 3 }, idempotencyKey: 'once' })).structuredContent).toMatchObject({ duplicate: true });
    expect((await call('list_runs', { jobId: job.id })).structuredContent).toMatchObject({ items: expect.arrayContaining([expect.objectContaining({ jobId: job.id })]) });
    const stopped = await call('stop_run', { runId: (invoked.structuredContent as any).runId });
    expect(stopped.isError ? (stopped.structuredContent as any).error.code : 'stopped').toMatch(/stopped|run_not_stoppable/);
    expect((await call('test_template', { template: 'Hi {{ data.who }}', context: { data: { who: 'Ada' } } })).structuredContent).toEqual({ output: 'Hi Ada' });
    const conditions = await call('test_conditions', { conditions: { all: [{ path: 'payload.n', op: 'eq', value: 1 }] }, webhook: { event: 'issues', payload: { n: 1 } } });
    expect(conditions.structuredContent).toMatchObject({ decision: 'match' });
    expect((await call('backtest_job', { jobId: job.id })).structuredContent).toMatchObject({ evaluated: 0 });
    expect((await call('list_webhook_activity')).structuredContent).toMatchObject({ items: [] });
    expect((await call('get_webhook_activity', { activityId: 'act_nope' })).structuredContent).toMatchObject({ error: { code: 'not_found' } });
    expect((await call('get_trigger_contexts')).isError).toBeFalsy();
    expect((await call('get_job', { jobId: job.id, bogus: 1 })).structuredContent).toMatchObject({ error: { code: 'validation_failed' } });
    expect((await call('list_jobs', { limit: 0 })).structuredContent).toMatchObject({ error: { code: 'validation_failed' } });
  });

  it('shows another tenant nothing of these: its ids are not found, and the job has no tool there', async () => {
    const stranger = await connect(await tokenFor(await createOwner(server.app.database.db, { tenantName: 'Strangers' })));
    expect((await stranger.listTools()).tools.map((tool) => tool.name)).not.toContain('run_fix_issues');
    expect((await stranger.callTool({ name: 'get_job', arguments: { jobId: job.id } })).structuredContent).toMatchObject({ error: { code: 'not_found' } });
    expect((await stranger.callTool({ name: 'run_fix_issues', arguments: { number: 1 } })).structuredContent).toMatchObject({ error: { code: 'not_found' } });
  });
});

describe('authentication, as the API\'s', () => {
  it('answers 401 with the MCP resource metadata without a token, with a bad one, and with a session cookie alone', async () => {
    const cases: Record<string, string>[] = [{}, { authorization: 'Bearer nope' }, { cookie: await sessionCookie(server.app, owner) }];
    for (const headers of cases) {
      const res = await mcpPost(headers);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toContain(`resource_metadata="${server.url}/.well-known/oauth-protected-resource/mcp"`);
      expect(((await res.json()) as any).error.code).toMatch(/unauthenticated|invalid_token/);
    }
  });

  it('refuses an API token here and an MCP token at the API', async () => {
    expect((await mcpPost({ authorization: apiHeaders.authorization })).status).toBe(401);
    const res = await fetch(`${server.url}/api/v1/jobs`, { headers: { authorization: `Bearer ${mcpToken}` } });
    expect(res.status).toBe(401);
  });

  it('refuses a revoked token at once, and an owner removed from the tenant', async () => {
    const token = await tokenFor(owner);
    expect((await mcpPost({ authorization: `Bearer ${token}` })).status).toBe(200);
    await server.app.provider.AccessToken.find(token).then((found) => found!.destroy());
    expect((await mcpPost({ authorization: `Bearer ${token}` })).status).toBe(401);
    const leaving = await createOwner(server.app.database.db, { tenantName: 'Leaving' });
    const theirs = await tokenFor(leaving);
    await server.app.database.db.membership.deleteMany({ where: { ownerId: leaving.ownerId } });
    expect((await mcpPost({ authorization: `Bearer ${theirs}` })).status).toBe(401);
  });

  it('answers only POST', async () => {
    const res = await fetch(`${server.url}/mcp`, { headers: { authorization: `Bearer ${mcpToken}` } });
    expect([res.status, res.headers.get('allow')]).toEqual([405, 'POST']);
  });
});
