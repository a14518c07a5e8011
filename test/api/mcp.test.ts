// The MCP surface at /mcp with the SDK's own client over Streamable HTTP against a listening server: tools
// listed by scope with annotations and output schemas (which the client checks every answer against), every
// operation tool called, a job's typed tool with valid and invalid data, errors naming the argument,
// resources listed and read, the Host and Origin check, and the API's token rules (audience, revocation,
// tenants, no cookies).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { resourcesOf } from '../../src/oauth/resources';
import { agentCommand } from '../support/agent';
import { startOtherInstance } from '../support/app';
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

/** A connected client that has listed the tools, so that it checks every tool's answer against its output schema. */
async function connect(token = mcpToken, headers: Record<string, string> = {}) {
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}`, ...headers } } }));
  await client.listTools();
  return client;
}

/**
 * What the MCP Inspector's `--strict` lists in a tool schema: a type list, a schema that constrains nothing,
 * a bare boolean in a schema's place.
 */
function unportable(schema: unknown, at = '', keyword = ''): string[] {
  if (typeof schema === 'boolean') return ['additionalProperties', 'unevaluatedProperties', 'additionalItems', 'unevaluatedItems'].includes(keyword) ? [] : [`${at}: ${schema}`];
  if (!schema || typeof schema !== 'object') return [];
  const node = schema as Record<string, any>;
  const found: string[] = [];
  if (Array.isArray(node.type)) found.push(`${at}: type list`);
  const keys = Object.keys(node).filter((key) => !['description', 'title', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly', '$schema', '$id', '$comment', '$defs', 'definitions', 'discriminator'].includes(key));
  if (keys.length === 0 && keyword !== 'not') found.push(`${at}: untyped`);
  for (const key of ['properties', 'patternProperties', '$defs', 'dependentSchemas']) for (const [name, sub] of Object.entries(node[key] ?? {})) found.push(...unportable(sub, `${at}.${name}`, key));
  for (const key of ['allOf', 'anyOf', 'oneOf', 'prefixItems']) (node[key] ?? []).forEach((sub: unknown, i: number) => found.push(...unportable(sub, `${at}.${key}[${i}]`, key)));
  for (const key of ['items', 'contains', 'not', 'if', 'then', 'else', 'additionalProperties', 'propertyNames']) if (key in node) found.push(...unportable(node[key], `${at}.${key}`, key));
  return found;
}

/** The text a client that reads only `content` gets. */
const textOf = (result: Awaited<ReturnType<Client['callTool']>>) => ((result as CallToolResult).content[0] as { text: string }).text;

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
      ['backtest_job', 'get_job', 'get_run', 'get_run_trace', 'get_budget', 'get_trigger_contexts', 'get_usage', 'get_webhook_activity', 'invoke_job', 'list_jobs', 'list_runs', 'list_webhook_activity', 'list_webhook_source_refusals', 'run_fix_issues', 'stop_run', 'test_conditions', 'test_template'].sort(),
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
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toBe('insufficient_scope: This tool requires the scope "runs:write".');
  });

  it('invokes a job through its typed tool, refuses data its schema refuses, and follows the run through the other tools', async () => {
    const client = await connect();
    const invalid = await client.callTool({ name: 'run_fix_issues', arguments: { number: 0 } });
    expect([invalid.isError, textOf(invalid)]).toEqual([true, 'validation_failed: Invalid arguments for run_fix_issues: `number` must be >= 1.']);
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
    // The run may have ended already: an error result, as text, says so.
    expect(stopped.isError ? (stopped.content as any)[0].text : 'stopped').toMatch(/^(stopped|run_not_stoppable: )/);
    expect((await call('test_template', { template: 'Hi {{ data.who }}', context: { data: { who: 'Ada' } } })).structuredContent).toEqual({ output: 'Hi Ada' });
    const conditions = await call('test_conditions', { conditions: { all: [{ path: 'payload.n', op: 'eq', value: 1 }] }, webhook: { event: 'issues', payload: { n: 1 } } });
    expect(conditions.structuredContent).toMatchObject({ decision: 'match' });
    expect((await call('backtest_job', { jobId: job.id })).structuredContent).toMatchObject({ evaluated: 0 });
    expect((await call('list_webhook_activity')).structuredContent).toMatchObject({ items: [] });
    expect(textOf(await call('get_webhook_activity', { activityId: 'act_nope' }))).toMatch(/^not_found: /);
    expect(textOf(await call('list_webhook_source_refusals', { sourceId: 'src_nope' }))).toMatch(/^not_found: /);
    expect((await call('get_trigger_contexts')).isError).toBeFalsy();
    const spent = { inputTokens: 900, outputTokens: 90, cachedTokens: 0, turns: 2, costUsd: 0.25, costSource: 'reported' };
    await server.app.database.db.run.update({ where: { id: (invoked.structuredContent as any).runId }, data: { usage: spent } });
    const usage = await call('get_usage', { groupBy: 'job' });
    expect(usage.structuredContent).toMatchObject({ groupBy: 'job', total: { runs: 1, inputTokens: 900, costUsd: 0.25 }, groups: [{ jobId: job.id, jobSlug: 'fix-issues', runs: 1 }] });
    expect(textOf(await call('get_usage', { since: '2025-03-08T00:00:00Z', until: '2025-03-01T00:00:00Z' }))).toBe('validation_failed: `since` must be before `until`.');
    expect((await call('get_budget')).structuredContent).toMatchObject({ monthlyUsd: null, spentUsd: 0.25, exhausted: false });
  });

  it('describes every tool: a title, what it does to the world, an output schema, and schemas in a form every client takes', async () => {
    const { tools } = await (await connect()).listTools();
    for (const tool of tools) {
      expect([tool.name, tool.title, tool.outputSchema?.type]).toEqual([tool.name, expect.any(String), 'object']);
      expect([tool.name, unportable(tool.inputSchema), unportable(tool.outputSchema)]).toEqual([tool.name, [], []]);
    }
    const hints = Object.fromEntries(tools.map((tool) => [tool.name, tool.annotations]));
    for (const name of ['list_jobs', 'get_job', 'list_runs', 'get_run', 'get_run_trace', 'get_usage', 'get_budget', 'test_conditions', 'test_template', 'backtest_job', 'list_webhook_activity', 'get_webhook_activity', 'get_trigger_contexts', 'list_webhook_source_refusals']) {
      expect([name, hints[name]]).toEqual([name, { readOnlyHint: true, openWorldHint: false }]);
    }
    expect(hints.invoke_job).toEqual({ readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true });
    expect(hints.run_fix_issues).toEqual(hints.invoke_job);
    expect(hints.stop_run).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false });
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(byName.list_runs.outputSchema).toMatchObject({ required: ['items', 'nextCursor'], properties: { items: { type: 'array', items: { properties: { state: { enum: expect.arrayContaining(['succeeded']) } } } } } });
    expect(byName.run_fix_issues.outputSchema).toEqual(byName.invoke_job.outputSchema);
    // The condition operand that takes any JSON value says so, instead of carrying no type (the MCP Inspector's `--strict` warning).
    const trigger = byName.backtest_job.inputSchema.properties!.triggers as any;
    const webhookTrigger = trigger.items.oneOf.find((branch: any) => branch.properties.type.const === 'webhook' || branch.properties.type.enum?.includes('webhook'));
    expect(webhookTrigger.properties.conditions.properties.all.items.properties.value.anyOf).toEqual(['string', 'number', 'boolean', 'object', 'array', 'null'].map((type) => ({ type })));
  });

  it('answers every tool with its JSON as text as well, for clients that read only the content', async () => {
    const client = await connect();
    for (const [name, args] of [['list_jobs', { limit: 1 }], ['get_job', { jobId: job.id }], ['test_template', { template: 'Hi {{ data.who }}', context: { data: { who: 'Ada' } } }]] as const) {
      const result = await client.callTool({ name, arguments: args });
      expect(result.structuredContent).toBeDefined();
      expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
    }
    expect(JSON.parse(textOf(await client.callTool({ name: 'list_jobs', arguments: { limit: 10 } })))).toMatchObject({ items: [expect.objectContaining({ id: job.id })], nextCursor: null });
  });

  it('offers a job without an input schema as a tool that takes any object', async () => {
    await rest('POST', '/jobs', { name: 'Free form', slug: 'free-form', promptTemplate: 'Do {{ data.what }}', executionTargetId: 'local', triggers: [{ type: 'invocation' }] });
    const client = await connect();
    const tool = (await client.listTools()).tools.find((candidate) => candidate.name === 'run_free_form')!;
    expect(tool.inputSchema).toEqual({ type: 'object', properties: {}, additionalProperties: true });
    expect(tool.description).toContain('any object is taken');
    const started = await client.callTool({ name: 'run_free_form', arguments: { what: 'the dishes', more: [1, 2] } });
    expect(started.structuredContent).toMatchObject({ runId: expect.stringMatching(/^run_/), state: 'queued' });
    const run = await client.readResource({ uri: `flows://runs/${(started.structuredContent as any).runId}` });
    expect(JSON.parse((run.contents[0] as { text: string }).text)).toMatchObject({ prompt: 'Do the dishes' });
  });

  it('says which argument is wrong, in the tool\'s own terms', async () => {
    const client = await connect();
    const cases: [string, Record<string, unknown>, string][] = [
      ['get_run', {}, 'Invalid arguments for get_run: `runId` is required.'],
      ['get_run_trace', { limit: 100 }, 'Invalid arguments for get_run_trace: `runId` is required.'],
      ['list_jobs', { limit: 0 }, 'Invalid arguments for list_jobs: `limit` must be >= 1 (minimum).'],
      ['test_template', { template: 7, context: {} }, 'Invalid arguments for test_template: `template` must be string (type).'],
      ['get_job', { jobId: job.id, bogus: 1 }, 'Invalid arguments for get_job: `bogus` is not an argument of this tool.'],
      ['run_fix_issues', {}, 'Invalid arguments for run_fix_issues: `number` is required.'],
      ['run_fix_issues', { number: 2, colour: 'red' }, 'Invalid arguments for run_fix_issues: `colour` is not allowed.'],
      ['run_fix_issues', { number: 'seven' }, 'Invalid arguments for run_fix_issues: `number` must be integer.'],
    ];
    for (const [name, args, message] of cases) {
      const result = await client.callTool({ name, arguments: args });
      expect([name, result.isError, textOf(result)]).toEqual([name, true, `validation_failed: ${message}`]);
    }
    await expect(client.callTool({ name: 'delete_everything', arguments: {} })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool: delete_everything') });
  });

  it('shows another tenant nothing of these: its ids are not found, and the job has no tool there', async () => {
    const stranger = await connect(await tokenFor(await createOwner(server.app.database.db, { tenantName: 'Strangers' })));
    expect((await stranger.listTools()).tools.map((tool) => tool.name)).not.toContain('run_fix_issues');
    expect(textOf(await stranger.callTool({ name: 'get_job', arguments: { jobId: job.id } }))).toMatch(/^not_found: /);
    await expect(stranger.callTool({ name: 'run_fix_issues', arguments: { number: 1 } })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool: run_fix_issues') });
  });
});

describe('resources', () => {
  it('lists the tenant\'s runs, newest first, a page at a time, and reads each', async () => {
    const tenant = await createOwner(server.app.database.db, { tenantName: 'Many runs' });
    const api = { authorization: `Bearer ${await accessToken(server.app, tenant)}`, 'content-type': 'application/json' };
    const made = await (await fetch(`${server.url}/api/v1/jobs`, { method: 'POST', headers: api, body: JSON.stringify({ name: 'Many', promptTemplate: 'Once more' }) })).json() as { id: string };
    const runIds: string[] = [];
    for (let i = 0; i < 51; i++) {
      const res = await fetch(`${server.url}/api/v1/jobs/${made.id}/invocations`, { method: 'POST', headers: api, body: '{}' });
      runIds.push(((await res.json()) as { runId: string }).runId);
    }
    const client = await connect(await tokenFor(tenant));
    const first = await client.listResources();
    expect(first.resources).toHaveLength(50);
    expect(first.resources[0]).toEqual({ uri: `flows://runs/${runIds[50]}`, name: expect.any(String), description: expect.stringContaining(made.id), mimeType: 'application/json' });
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await client.listResources({ cursor: first.nextCursor });
    expect([second.resources.map((resource) => resource.uri), second.nextCursor]).toEqual([[`flows://runs/${runIds[0]}`], undefined]);
    expect(new Set([...first.resources, ...second.resources].map((resource) => resource.uri)).size).toBe(51);
    const read = await client.readResource({ uri: first.resources[7].uri });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({ id: runIds[43], jobId: made.id });

    await expect(client.listResources({ cursor: 'not-a-cursor' })).rejects.toMatchObject({ code: -32602 });
    const reader = await connect(await tokenFor(tenant, ['flows:read']));
    expect((await reader.listResources()).resources).toEqual([]);
    expect((await reader.listResourceTemplates()).resourceTemplates).toEqual([]);
  });

  it('answers -32002 (resource not found) for a run that does not exist, another tenant\'s, or a URI that names no run', async () => {
    const client = await connect();
    const theirs = await createOwner(server.app.database.db, { tenantName: 'Theirs' });
    const theirJob = await (await fetch(`${server.url}/api/v1/jobs`, { method: 'POST', headers: { authorization: `Bearer ${await accessToken(server.app, theirs)}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Theirs', promptTemplate: 'x', triggers: [{ type: 'invocation' }] }) })).json() as { id: string };
    const theirRun = await (await connect(await tokenFor(theirs))).callTool({ name: 'invoke_job', arguments: { jobId: theirJob.id } });
    const uris = ['flows://runs/run_nope', 'flows://runs/run_nope/trace', `flows://runs/${(theirRun.structuredContent as any).runId}`, 'flows://runs/%E0%A4%A', 'flows://jobs/x', 'https://example.com/runs/1'];
    for (const uri of uris) {
      const error = await client.readResource({ uri }).catch((err: unknown) => err);
      expect([uri, error instanceof McpError && error.code, (error as McpError).data]).toEqual([uri, -32002, { uri }]);
    }
  });
});

describe('the Host and Origin check, against DNS rebinding', () => {
  const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'test', version: '1' } } });
  /** A POST as a browser would send it, `Host` included (which fetch does not let a caller set). */
  const post = async (url: string, headers: Record<string, string>) => {
    const res = await request(`${url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${mcpToken}`, ...headers }, body: initialize });
    return { status: res.statusCode, body: (await res.body.json()) as any };
  };

  it('refuses a page of another site with 403 forbidden_origin, whatever the token', async () => {
    await expect(connect(mcpToken, { origin: 'http://evil.example.com' })).rejects.toMatchObject({ code: 403 });
    const rebound = await post(server.url, { host: 'evil.example.com', origin: 'http://evil.example.com' });
    expect(rebound).toEqual({ status: 403, body: { error: { code: 'forbidden_origin', message: 'The Host header does not name this server.' } } });
    expect(await post(server.url, { host: 'evil.example.com' })).toMatchObject({ status: 403 });
    for (const origin of ['http://evil.example.com', 'null', `https://${new URL(server.url).host}`]) {
      expect(await post(server.url, { origin })).toEqual({ status: 403, body: { error: { code: 'forbidden_origin', message: expect.stringContaining('FLOWS_MCP_ALLOWED_ORIGINS') } } });
    }
  });

  it('serves its own origin, callers that send no Origin, and loopback names in Host', async () => {
    expect((await (await connect(mcpToken, { origin: server.url })).listTools()).tools.length).toBeGreaterThan(0);
    const port = new URL(server.url).port;
    for (const host of [`localhost:${port}`, `[::1]:${port}`, '127.0.0.1']) {
      expect(await post(server.url, { host })).toMatchObject({ status: 200, body: { result: { serverInfo: { name: 'flows' } } } });
    }
  });

  it('serves the origins the operator adds, and their names in Host', async () => {
    const other = await startOtherInstance(server.app, { config: { mcpAllowedOrigins: ['https://console.example.com'] } });
    const listener = createServer(other.app);
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
    try {
      expect(await post(url, { host: 'console.example.com', origin: 'https://console.example.com' })).toMatchObject({ status: 200 });
      expect(await post(url, { origin: server.url })).toMatchObject({ status: 200 });
      expect(await post(url, { origin: 'https://other.example.com' })).toMatchObject({ status: 403 });
    } finally {
      await new Promise((resolve) => listener.close(resolve));
      await other.close();
    }
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
