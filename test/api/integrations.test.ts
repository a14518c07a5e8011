// VM-host connections, the agent integration and VM-host execution targets: metadata in, metadata out,
// tokens sealed at rest and never answered; references checked in the tenant; what is in use stays.
import { startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner } from '../support/identity';

let app: TestApp;
let bearer: Record<string, string>;
let stranger: Record<string, string>;
const answers: string[] = [];
const TOKENS = ['vmhost-token-0123456789-secret', 'vmhost-token-rotated-abcdef', 'agent-token-9876543210-secret'];

beforeAll(async () => {
  app = await startTestApp({ localAgent: { command: 'true', timeoutSeconds: 60 } });
  bearer = { authorization: `Bearer ${await accessToken(app, await createOwner(app.database.db))}` };
  stranger = { authorization: `Bearer ${await accessToken(app, await createOwner(app.database.db, { tenantName: 'Other' }))}` };
});
afterAll(() => app.close());

async function api(method: string, path: string, body?: unknown, headers = bearer) {
  const res = await call(app, method, path, { headers, body });
  answers.push(res.text ?? '');
  return res;
}

const expectError = (res: { status: number; body: any }, status: number, code: string) => expect([res.status, res.body.error?.code]).toEqual([status, code]);

// Rows read past the tenant scope, so a test sees what a stranger's request really did to them.
const connectionRow = (id: string) => app.database.db.vmhostConnection.findUnique({ where: { id } });
const targetRow = (id: string) => app.database.db.executionTarget.findUnique({ where: { id } });
const integrationRowOf = (connectionId: string | null, project: string) => app.database.db.agentIntegration.findFirst({ where: { connectionId, project } });

it('keeps VM-host connections as metadata, with the token sealed and rotatable', async () => {
  const created = await api('POST', '/api/v1/vmhost-connections', { name: 'Hetzner', apiToken: TOKENS[0], apiBaseUrl: 'https://vmhost.example/api' });
  expect(created.status).toBe(201);
  expect(created.body).toEqual({ id: expect.stringMatching(/^vmc_/), name: 'Hetzner', apiBaseUrl: 'https://vmhost.example/api', createdAt: expect.any(String), updatedAt: expect.any(String), lastVerifiedAt: null });
  const sealed = (await app.database.db.vmhostConnection.findUniqueOrThrow({ where: { id: created.body.id } })).tokenCiphertext;
  expect(sealed).not.toContain(TOKENS[0]);

  const rotated = await api('PATCH', `/api/v1/vmhost-connections/${created.body.id}`, { apiToken: TOKENS[1], name: 'Hetzner (rotated)' });
  expect(rotated.body.name).toBe('Hetzner (rotated)');
  expect((await app.database.db.vmhostConnection.findUniqueOrThrow({ where: { id: created.body.id } })).tokenCiphertext).not.toBe(sealed);
  expect((await api('GET', '/api/v1/vmhost-connections')).body.map((c: { id: string }) => c.id)).toContain(created.body.id);
  expect((await api('GET', `/api/v1/vmhost-connections/${created.body.id}`)).body.name).toBe('Hetzner (rotated)');

  expectError(await api('POST', '/api/v1/vmhost-connections', { name: 'x', apiToken: 't', apiBaseUrl: 'ftp://vmhost.example' }), 400, 'validation_failed');
  expectError(await api('POST', '/api/v1/vmhost-connections', { name: 'x', apiToken: 't', apiBaseUrl: 'https://user:pw@vmhost.example' }), 400, 'validation_failed');
  // A stranger's 404 must also leave the connection as it was: every field, and the sealed token.
  const ownersView = (await api('GET', `/api/v1/vmhost-connections/${created.body.id}`)).body;
  const ownersRow = await connectionRow(created.body.id);
  const takeover = { name: 'taken over', apiBaseUrl: 'https://attacker.example', apiToken: 'attacker-token' };
  for (const [method, body] of [['GET'], ['PATCH', takeover], ['DELETE']] as const) {
    expectError(await api(method, `/api/v1/vmhost-connections/${created.body.id}`, body, stranger), 404, 'not_found');
  }
  expect(await connectionRow(created.body.id)).toEqual(ownersRow);
  expect((await api('GET', `/api/v1/vmhost-connections/${created.body.id}`)).body).toEqual(ownersView);
  expect((await api('GET', '/api/v1/vmhost-connections', undefined, stranger)).body).toEqual([]);
  expect((await api('DELETE', `/api/v1/vmhost-connections/${created.body.id}`)).status).toBe(204);
  expectError(await api('DELETE', `/api/v1/vmhost-connections/${created.body.id}`), 404, 'not_found');
});

it('saves the agent integration against a connection of the tenant, and answers metadata only', async () => {
  const connection = (await api('POST', '/api/v1/vmhost-connections', { name: 'For agents', apiToken: TOKENS[0], apiBaseUrl: 'https://vmhost.example' })).body;
  const foreign = (await api('POST', '/api/v1/vmhost-connections', { name: 'Foreign', apiToken: 'x', apiBaseUrl: 'https://vmhost.example' }, stranger)).body;
  expectError(await api('GET', '/api/v1/integrations/agent-integration'), 404, 'not_found');
  for (const connectionId of ['vmc_nope', foreign.id]) {
    const refused = await api('PUT', '/api/v1/integrations/agent-integration', { accessToken: TOKENS[2], project: 'acme', connectionId, apiBaseUrl: 'https://agents.example' });
    expectError(refused, 400, 'validation_failed');
    expect(refused.body.error.message).toMatch(/connectionId/);
  }
  const saved = await api('PUT', '/api/v1/integrations/agent-integration', { accessToken: TOKENS[2], project: 'acme', connectionId: connection.id, apiBaseUrl: 'https://agents.example' });
  expect(saved.status).toBe(200);
  expect(saved.body).toEqual({ project: 'acme', connectionId: connection.id, apiBaseUrl: 'https://agents.example', createdAt: expect.any(String), updatedAt: expect.any(String) });
  const again = await api('PUT', '/api/v1/integrations/agent-integration', { accessToken: TOKENS[2], project: 'acme-2', apiBaseUrl: 'https://agents.example' });
  expect(again.body).toMatchObject({ project: 'acme-2', connectionId: null, createdAt: saved.body.createdAt });
  await api('PUT', '/api/v1/integrations/agent-integration', { accessToken: TOKENS[2], project: 'acme', connectionId: connection.id, apiBaseUrl: 'https://agents.example' });
  expectError(await api('DELETE', `/api/v1/vmhost-connections/${connection.id}`), 409, 'in_use');
  expectError(await api('GET', '/api/v1/integrations/agent-integration', undefined, stranger), 404, 'not_found');
  expect((await api('DELETE', '/api/v1/integrations/agent-integration')).status).toBe(204);
  expectError(await api('GET', '/api/v1/integrations/agent-integration'), 404, 'not_found');
  expect((await api('DELETE', `/api/v1/vmhost-connections/${connection.id}`)).status).toBe(204);
});

it('keeps the agent integration to its tenant: a stranger\'s PUT and DELETE touch only their own', async () => {
  const connection = (await api('POST', '/api/v1/vmhost-connections', { name: 'Owner agents', apiToken: TOKENS[0], apiBaseUrl: 'https://vmhost.example' })).body;
  await api('PUT', '/api/v1/integrations/agent-integration', { accessToken: TOKENS[2], project: 'owner-project', connectionId: connection.id, apiBaseUrl: 'https://agents.example' });
  const ownersView = (await api('GET', '/api/v1/integrations/agent-integration')).body;
  const ownersRow = await integrationRowOf(connection.id, 'owner-project');
  expect(ownersRow).not.toBeNull();
  const unchanged = async () => {
    expect((await api('GET', '/api/v1/integrations/agent-integration')).body).toEqual(ownersView);
    expect(await integrationRowOf(connection.id, 'owner-project')).toEqual(ownersRow);
  };
  const strangersPut = (connectionId?: string) =>
    api('PUT', '/api/v1/integrations/agent-integration', { accessToken: 'stranger-agent-token', project: 'stranger-project', connectionId, apiBaseUrl: 'https://evil.example' }, stranger);

  // The owner's connection is not the stranger's to name, whether or not the stranger has an integration yet.
  let refused = await strangersPut(connection.id);
  expectError(refused, 400, 'validation_failed');
  expect(refused.body.error.message).toMatch(/connectionId/);
  expectError(await api('GET', '/api/v1/integrations/agent-integration', undefined, stranger), 404, 'not_found');
  await unchanged();

  // The stranger's own save and delete (the integration is one per tenant) reach their own row only.
  const theirs = await strangersPut();
  expect(theirs.status).toBe(200);
  expect(theirs.body).toMatchObject({ project: 'stranger-project', connectionId: null });
  await unchanged();
  const theirRow = await integrationRowOf(null, 'stranger-project');
  refused = await strangersPut(connection.id);
  expectError(refused, 400, 'validation_failed');
  expect(await integrationRowOf(null, 'stranger-project')).toEqual(theirRow);
  await unchanged();
  expect((await api('DELETE', '/api/v1/integrations/agent-integration', undefined, stranger)).status).toBe(204);
  expectError(await api('DELETE', '/api/v1/integrations/agent-integration', undefined, stranger), 404, 'not_found');
  await unchanged();

  expect((await api('DELETE', '/api/v1/integrations/agent-integration')).status).toBe(204);
  expect((await api('DELETE', `/api/v1/vmhost-connections/${connection.id}`)).status).toBe(204);
});

it('creates, changes and deletes VM-host targets; the local target is the operator\'s', async () => {
  const connection = (await api('POST', '/api/v1/vmhost-connections', { name: 'VMs', apiToken: TOKENS[0], apiBaseUrl: 'https://vmhost.example' })).body;
  expectError(await api('POST', '/api/v1/execution-targets', { name: 'x', connectionId: 'vmc_nope', image: 'ubuntu' }), 400, 'validation_failed');
  const created = await api('POST', '/api/v1/execution-targets', { name: 'Standard VM', connectionId: connection.id, image: 'agent-runner', region: 'fra1' });
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ id: expect.stringMatching(/^tgt_/), kind: 'vmhost', connectionId: connection.id, image: 'agent-runner', size: '', region: 'fra1', timeoutSeconds: 3600 });
  const changed = await api('PATCH', `/api/v1/execution-targets/${created.body.id}`, { size: 'large', timeoutSeconds: 600 });
  expect(changed.body).toMatchObject({ size: 'large', timeoutSeconds: 600 });
  // null goes back to the provider's default region.
  expect((await api('PATCH', `/api/v1/execution-targets/${created.body.id}`, { region: null })).body).toMatchObject({ region: null, size: 'large' });
  expectError(await api('DELETE', `/api/v1/vmhost-connections/${connection.id}`), 409, 'in_use');
  // Checked through its connection, at the path the contract has.
  const diagnostics = await api('POST', `/api/v1/execution-targets/${created.body.id}/diagnostics`);
  expectError(diagnostics, 409, 'conflict');
  expect(diagnostics.body.error.message).toContain('POST /api/v1/integrations/vmhost/{connectionId}/diagnostics');

  const job = (await api('POST', '/api/v1/jobs', { name: 'On VM', promptTemplate: 'x', executionTargetId: created.body.id })).body;
  expectError(await api('DELETE', `/api/v1/execution-targets/${created.body.id}`), 409, 'in_use');
  // 404, not 409: a stranger does not learn that the target exists or is in use.
  expectError(await api('DELETE', `/api/v1/execution-targets/${created.body.id}`, undefined, stranger), 404, 'not_found');
  await api('DELETE', `/api/v1/jobs/${job.id}`);
  // With no job in the way, a stranger's DELETE that escaped the tenant would succeed: it must not.
  const ownersView = (await api('GET', `/api/v1/execution-targets/${created.body.id}`)).body;
  const ownersRow = await targetRow(created.body.id);
  expectError(await api('PATCH', `/api/v1/execution-targets/${created.body.id}`, { name: 'mine now', image: 'attacker-image', size: 'huge', region: 'elsewhere', timeoutSeconds: 60 }, stranger), 404, 'not_found');
  expectError(await api('DELETE', `/api/v1/execution-targets/${created.body.id}`, undefined, stranger), 404, 'not_found');
  expect(await targetRow(created.body.id)).toEqual(ownersRow);
  expect((await api('GET', `/api/v1/execution-targets/${created.body.id}`)).body).toEqual(ownersView);
  expect((await api('DELETE', `/api/v1/execution-targets/${created.body.id}`)).status).toBe(204);

  expectError(await api('PATCH', '/api/v1/execution-targets/local', { name: 'renamed' }), 409, 'conflict');
  expectError(await api('DELETE', '/api/v1/execution-targets/local'), 409, 'conflict');
});

it('refuses a target on another tenant\'s connection, creating and changing nothing', async () => {
  const mine = (await api('POST', '/api/v1/vmhost-connections', { name: 'Mine', apiToken: TOKENS[0], apiBaseUrl: 'https://vmhost.example' })).body;
  const foreign = (await api('POST', '/api/v1/vmhost-connections', { name: 'Theirs', apiToken: 'x', apiBaseUrl: 'https://vmhost.example' }, stranger)).body;
  const target = (await api('POST', '/api/v1/execution-targets', { name: 'Mine', connectionId: mine.id, image: 'agent-runner' })).body;
  const targetsOnForeign = () => app.database.db.executionTarget.count({ where: { connectionId: foreign.id } });
  const targetsInAll = () => app.database.db.executionTarget.count();
  const before = { all: await targetsInAll(), row: await targetRow(target.id) };

  const created = await api('POST', '/api/v1/execution-targets', { name: 'On theirs', connectionId: foreign.id, image: 'agent-runner' });
  expectError(created, 400, 'validation_failed');
  expect(created.body.error.message).toMatch(/connectionId/);
  const changed = await api('PATCH', `/api/v1/execution-targets/${target.id}`, { connectionId: foreign.id, name: 'moved' });
  expectError(changed, 400, 'validation_failed');
  expect(changed.body.error.message).toMatch(/connectionId/);

  expect(await targetsOnForeign()).toBe(0);
  expect(await targetsInAll()).toBe(before.all);
  expect(await targetRow(target.id)).toEqual(before.row);
  // And the stranger's connection stays deletable: nothing of the owner's came to use it.
  expect((await api('DELETE', `/api/v1/vmhost-connections/${foreign.id}`, undefined, stranger)).status).toBe(204);
  expect((await api('DELETE', `/api/v1/execution-targets/${target.id}`)).status).toBe(204);
  expect((await api('DELETE', `/api/v1/vmhost-connections/${mine.id}`)).status).toBe(204);
});

it('never answers a stored token', () => {
  const all = answers.join('\n');
  for (const token of TOKENS) expect(all).not.toContain(token);
});
