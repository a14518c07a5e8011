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
  for (const [method, body] of [['GET'], ['PATCH', { name: 'taken over' }], ['DELETE']] as const) {
    expectError(await api(method, `/api/v1/vmhost-connections/${created.body.id}`, body, stranger), 404, 'not_found');
  }
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

it('creates, changes and deletes VM-host targets; the local target is the operator\'s', async () => {
  const connection = (await api('POST', '/api/v1/vmhost-connections', { name: 'VMs', apiToken: TOKENS[0], apiBaseUrl: 'https://vmhost.example' })).body;
  expectError(await api('POST', '/api/v1/execution-targets', { name: 'x', connectionId: 'vmc_nope', image: 'ubuntu' }), 400, 'validation_failed');
  const created = await api('POST', '/api/v1/execution-targets', { name: 'Standard VM', connectionId: connection.id, image: 'agent-runner', region: 'fra1' });
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ id: expect.stringMatching(/^tgt_/), kind: 'vmhost', connectionId: connection.id, image: 'agent-runner', size: '', region: 'fra1', timeoutSeconds: 3600 });
  const changed = await api('PATCH', `/api/v1/execution-targets/${created.body.id}`, { size: 'large', timeoutSeconds: 600 });
  expect(changed.body).toMatchObject({ size: 'large', timeoutSeconds: 600 });
  expectError(await api('DELETE', `/api/v1/vmhost-connections/${connection.id}`), 409, 'in_use');

  const job = (await api('POST', '/api/v1/jobs', { name: 'On VM', promptTemplate: 'x', executionTargetId: created.body.id })).body;
  expectError(await api('DELETE', `/api/v1/execution-targets/${created.body.id}`), 409, 'in_use');
  expectError(await api('PATCH', `/api/v1/execution-targets/${created.body.id}`, { name: 'mine now' }, stranger), 404, 'not_found');
  expectError(await api('DELETE', `/api/v1/execution-targets/${created.body.id}`, undefined, stranger), 404, 'not_found');
  await api('DELETE', `/api/v1/jobs/${job.id}`);
  expect((await api('DELETE', `/api/v1/execution-targets/${created.body.id}`)).status).toBe(204);

  expectError(await api('PATCH', '/api/v1/execution-targets/local', { name: 'renamed' }), 409, 'conflict');
  expectError(await api('DELETE', '/api/v1/execution-targets/local'), 409, 'conflict');
});

it('never answers a stored token', () => {
  const all = answers.join('\n');
  for (const token of TOKENS) expect(all).not.toContain(token);
});
