// Secrets for runs: the store (values write-only, per tenant), jobs' `env` referring to them (checked at
// save), the agent receiving them on the sandboxed local target and on a VM host, and every value masked
// in what a run records, including a value split across two output events. The secret scan of every app
// (test/support/secret-scan.ts) checks that no value shows in any answer, log line or row.
import { agentCommand } from '../support/agent';
import { startTestApp, type TestApp } from '../support/app';
import { AGENT_TOKEN, startFakeProviders, VMHOST_TOKEN, type FakeProviders } from '../support/fake-providers';
import { call } from '../support/http';
import { accessToken, createOwner } from '../support/identity';
import { runSettled } from '../support/kit';

const TOKEN = 'ghp_R3pos1tory/T0ken+for=runs';
let app: TestApp;
let providers: FakeProviders;
let headers: Record<string, string>;

beforeAll(async () => {
  providers = await startFakeProviders();
  app = await startTestApp(
    { localAgent: { command: agentCommand(ECHO_ENV), timeoutSeconds: 30 }, rateLimits: { api: 0, apiAddress: 0 } },
    { vmhostTiming: { bootTimeoutMs: 2000, pollMs: 10, callTimeoutMs: 1500 } },
  );
  headers = await tokenFor('Acme');
});
afterAll(async () => {
  await app.close();
  await providers.close();
});

/** An agent that prints its secret as it is, in base64 and URL-encoded, and ends with it in its result. */
const ECHO_ENV = `cat > /dev/null
echo "token=$REPO_TOKEN name=$GIT_AUTHOR_NAME"
printf '%s' "$REPO_TOKEN" | base64
echo "url=https://x.test/?t=$(printf '%s' "$REPO_TOKEN" | sed 's|/|%2F|g; s|+|%2B|g; s|=|%3D|g')"
echo "{\\"summary\\":\\"pushed with $REPO_TOKEN\\"}"
`;

async function tokenFor(tenantName: string, scopes?: string[]) {
  const owner = await createOwner(app.database.db, { tenantName });
  return { authorization: `Bearer ${await accessToken(app, owner, scopes ? { scopes } : {})}` };
}
const api = (method: string, path: string, body?: unknown, as = headers) => call(app, method, path, { headers: as, body });

const finished = (runId: string) => runSettled(app, headers, runId);
const outputOf = async (runId: string) =>
  ((await api('GET', `/api/v1/runs/${runId}/trace?limit=100`)).body as { type: string; data: any }[]).filter((event) => event.type === 'agent_output').map((event) => event.data.text);

describe('the store', () => {
  it('creates, lists, reads, replaces and deletes a secret, never answering its value', async () => {
    const created = await api('POST', '/api/v1/secrets', { name: 'DEPLOY_KEY', value: 'first-value-1234' });
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe('/api/v1/secrets/DEPLOY_KEY');
    expect(created.body).toEqual({ name: 'DEPLOY_KEY', createdAt: expect.any(String), updatedAt: expect.any(String) });
    expect((await api('GET', '/api/v1/secrets')).body.map((secret: { name: string }) => secret.name)).toContain('DEPLOY_KEY');
    expect((await api('GET', '/api/v1/secrets/DEPLOY_KEY')).body).toEqual(created.body);

    const replaced = await api('PUT', '/api/v1/secrets/DEPLOY_KEY', { value: 'second-value-5678' });
    expect([replaced.status, replaced.body.name]).toEqual([200, 'DEPLOY_KEY']);
    const made = await api('PUT', '/api/v1/secrets/NEW_ONE', { value: 'made-by-put-9999' });
    expect([made.status, made.headers.location]).toEqual([201, '/api/v1/secrets/NEW_ONE']);

    const again = await api('POST', '/api/v1/secrets', { name: 'DEPLOY_KEY', value: 'third-value-0000' });
    expect([again.status, again.body.error.code]).toEqual([409, 'secret_exists']);
    expect((await api('DELETE', '/api/v1/secrets/DEPLOY_KEY')).status).toBe(204);
    expect((await api('GET', '/api/v1/secrets/DEPLOY_KEY')).status).toBe(404);
    expect((await api('DELETE', '/api/v1/secrets/DEPLOY_KEY')).status).toBe(404);
  });

  it.each([
    ['a value under 4 characters', { name: 'SHORT', value: 'abc' }, '`value`'],
    ['a name that is not a variable name', { name: 'not-a-name', value: 'long enough' }, '`name`'],
    ['no value', { name: 'NOTHING' }, '`value`'],
  ])('refuses %s with 400', async (_label, body, field) => {
    const res = await api('POST', '/api/v1/secrets', body);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain(field);
  });

  it('needs flows:write to write and flows:read to read, and shows another tenant nothing', async () => {
    await api('PUT', '/api/v1/secrets/OURS', { value: 'ours-value-1234' });
    const reader = await tokenFor('Readers', ['flows:read']);
    expect((await api('POST', '/api/v1/secrets', { name: 'X_Y', value: 'value-1234' }, reader)).status).toBe(403);
    const stranger = await tokenFor('Strangers');
    expect((await api('GET', '/api/v1/secrets/OURS', undefined, stranger)).status).toBe(404);
    expect((await api('DELETE', '/api/v1/secrets/OURS', undefined, stranger)).status).toBe(404);
    expect((await api('GET', '/api/v1/secrets', undefined, stranger)).body).toEqual([]);
    // Their own secret of the same name is theirs alone.
    expect((await api('PUT', '/api/v1/secrets/OURS', { value: 'theirs-value-1234' }, stranger)).status).toBe(201);
    expect((await api('GET', '/api/v1/secrets/OURS')).status).toBe(200);
  });

  it('holds at most 100 secrets per tenant', async () => {
    const many = await tokenFor('Hoarders');
    for (let i = 0; i < 100; i++) expect((await api('POST', '/api/v1/secrets', { name: `S${i}`, value: `value-of-${i}` }, many)).status).toBe(201);
    const over = await api('POST', '/api/v1/secrets', { name: 'S100', value: 'one too many' }, many);
    expect([over.status, over.body.error.code]).toEqual([409, 'conflict']);
  });
});

describe('a job\'s env', () => {
  it('refuses a reference to a secret the tenant does not have, and names of the service\'s own', async () => {
    const unknown = await api('POST', '/api/v1/jobs', { name: 'E', promptTemplate: 'x', env: { TOKEN: { secret: 'NO_SUCH_SECRET' } } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain('`env.TOKEN`');
    expect(unknown.body.error.message).toContain('NO_SUCH_SECRET');
    const reserved = await api('POST', '/api/v1/jobs', { name: 'E', promptTemplate: 'x', env: { FLOWS_RUN_ID: 'mine' } });
    expect([reserved.status, reserved.body.error.message]).toEqual([400, expect.stringContaining('`env.FLOWS_RUN_ID`')]);
    // Another tenant's secret of that name is not this tenant's.
    await api('PUT', '/api/v1/secrets/THEIRS_ONLY', { value: 'their-value-1234' }, await tokenFor('Others'));
    expect((await api('POST', '/api/v1/jobs', { name: 'E', promptTemplate: 'x', env: { T: { secret: 'THEIRS_ONLY' } } })).status).toBe(400);
  });

  it('refuses a reference with a name no secret can have by the secret-name rule, and a value neither string nor reference by both types', async () => {
    for (const method of ['POST', 'PATCH']) {
      const path = method === 'POST' ? '/api/v1/jobs' : `/api/v1/jobs/${(await api('POST', '/api/v1/jobs', { name: 'E', promptTemplate: 'x' })).body.id}`;
      const misnamed = await api(method, path, { name: 'E', promptTemplate: 'x', env: { GH_TOKEN: { secret: 'gh-token' } } });
      expect([misnamed.status, misnamed.body.error]).toEqual([400, { code: 'validation_failed', message: '`env.GH_TOKEN.secret` must match pattern "^[A-Za-z_][A-Za-z0-9_]*$" (pattern).' }]);
      const neither = await api(method, path, { name: 'E', promptTemplate: 'x', env: { GH_TOKEN: 42 } });
      expect([neither.status, neither.body.error]).toEqual([400, { code: 'validation_failed', message: '`env.GH_TOKEN` must be string or object (type).' }]);
    }
  });

  it('keeps plain values and references, never a secret\'s value; an update replaces the map', async () => {
    await api('PUT', '/api/v1/secrets/REPO_TOKEN', { value: TOKEN });
    const job = await api('POST', '/api/v1/jobs', { name: 'With env', promptTemplate: 'x', env: { REPO_TOKEN: { secret: 'REPO_TOKEN' }, GIT_AUTHOR_NAME: 'Flows' } });
    expect(job.status).toBe(201);
    expect(job.body.env).toEqual({ REPO_TOKEN: { secret: 'REPO_TOKEN' }, GIT_AUTHOR_NAME: 'Flows' });
    const updated = await api('PATCH', `/api/v1/jobs/${job.body.id}`, { env: { ONLY: 'this' } });
    expect(updated.body.env).toEqual({ ONLY: 'this' });
  });
});

describe('runs', () => {
  beforeAll(async () => {
    await api('PUT', '/api/v1/secrets/REPO_TOKEN', { value: TOKEN });
  });

  it('give the sandboxed local agent its secrets, and mask every form of them in the trace and result', async () => {
    const job = await api('POST', '/api/v1/jobs', { name: 'Local', promptTemplate: 'go', executionTargetId: 'local', env: { REPO_TOKEN: { secret: 'REPO_TOKEN' }, GIT_AUTHOR_NAME: 'Flows' } });
    const run = await finished((await api('POST', `/api/v1/jobs/${job.body.id}/invocations`, {})).body.runId);
    expect(run.state).toBe('succeeded');
    expect(run.result).toEqual({ summary: 'pushed with ***' });
    expect(await outputOf(run.id)).toEqual(['token=*** name=Flows', '***', 'url=https://x.test/?t=***', '{"summary":"pushed with ***"}']);
  });

  it('fail, saying which, when a secret the job refers to was deleted', async () => {
    await api('PUT', '/api/v1/secrets/GONE_SOON', { value: 'gone-soon-1234' });
    const job = await api('POST', '/api/v1/jobs', { name: 'Gone', promptTemplate: 'go', executionTargetId: 'local', env: { KEY: { secret: 'GONE_SOON' } } });
    await api('DELETE', '/api/v1/secrets/GONE_SOON');
    const run = await finished((await api('POST', `/api/v1/jobs/${job.body.id}/invocations`, {})).body.runId);
    expect(run).toMatchObject({ state: 'failed', error: expect.stringContaining('The secret GONE_SOON that env.KEY refers to does not exist') });
  });

  it('give a VM-host agent its secrets through the provider, and mask a value the provider splits across two output lines', async () => {
    const connectionId = (await api('POST', '/api/v1/vmhost-connections', { name: 'Fake host', apiToken: VMHOST_TOKEN, apiBaseUrl: providers.url })).body.id;
    const targetId = (await api('POST', '/api/v1/execution-targets', { name: 'Fake VM', connectionId, image: 'agent-runner', size: 'small' })).body.id;
    await api('PUT', '/api/v1/integrations/agent-integration', { accessToken: AGENT_TOKEN, project: 'acme', connectionId, apiBaseUrl: providers.url });
    providers.knobs.output = [
      { stream: 'stdout', text: `cloning with ${TOKEN.slice(0, 9)}` },
      { stream: 'stdout', text: `${TOKEN.slice(9)} done` },
      { stream: 'stderr', text: `warning: ${TOKEN}` },
    ];
    providers.knobs.end = { state: 'failed', error: `push refused for ${TOKEN}` };
    const job = await api('POST', '/api/v1/jobs', { name: 'On a VM', promptTemplate: 'go', executionTargetId: targetId, env: { REPO_TOKEN: { secret: 'REPO_TOKEN' } } });
    const run = await finished((await api('POST', `/api/v1/jobs/${job.body.id}/invocations`, {})).body.runId);
    expect([...providers.sessions.values()].slice(-1)[0].env).toEqual({ REPO_TOKEN: TOKEN });
    expect(run).toMatchObject({ state: 'failed', error: 'The agent failed: push refused for ***' });
    expect(await outputOf(run.id)).toEqual(['cloning with ***', '*** done', 'warning: ***']);
  });
});
