// The console's integrations pages, served to the owner's session: execution targets, VM-host connections
// with diagnostics against a fake VM host, and the agent integration; tokens written, never shown; the
// redirect to sign in, 404 across tenants, 403 across origins.
import request from 'supertest';
import { startTestApp, type TestApp } from '../support/app';
import { AGENT_TOKEN, startFakeProviders, VMHOST_TOKEN, type FakeProviders } from '../support/fake-providers';
import { call } from '../support/http';
import { accessToken, createOwner, sessionCookie } from '../support/identity';

let app: TestApp;
let providers: FakeProviders;
let cookie: string;
let bearer: Record<string, string>;

beforeAll(async () => {
  providers = await startFakeProviders();
  app = await startTestApp({}, { vmhostTiming: { bootTimeoutMs: 2000, pollMs: 10, callTimeoutMs: 1500 } });
  const owner = await createOwner(app.database.db, { tenantName: 'Acme' });
  cookie = await sessionCookie(app, owner);
  bearer = { authorization: `Bearer ${await accessToken(app, owner)}` };
});
afterAll(async () => {
  await app.close();
  await providers.close();
});

const get = (path: string, as = cookie) => request(app.app).get(path).set('cookie', as);
const post = (path: string, form: Record<string, string> = {}, { as = cookie, origin = 'http://localhost:3000' } = {}) =>
  request(app.app).post(path).set('cookie', as).set('origin', origin).type('form').send(form);
const idIn = (location: string, kind: string) => new RegExp(`^/console/${kind}/(\\w+)$`).exec(location)![1];

it.each(['/console/targets', '/console/connections', '/console/targets/tgt_x', '/console/connections/vmc_x'])('sends a visitor without a session from %s to sign in', async (path) => {
  const res = await request(app.app).get(path);
  expect([res.status, res.headers.location]).toEqual([303, `/login?next=${encodeURIComponent(path)}`]);
});

describe('a VM host from the console', () => {
  let connectionId: string;
  let targetId: string;

  it('creates a connection, its token never shown, a refusal beside the form with the fields kept', async () => {
    const refused = await post('/console/connections', { name: 'Fake host', apiBaseUrl: 'ftp://nowhere', apiToken: VMHOST_TOKEN });
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/<p class="error" role="alert">[^<]*apiBaseUrl[^<]*<\/p>/);
    expect(refused.text).toContain('value="ftp://nowhere"');
    expect(refused.text).not.toContain(VMHOST_TOKEN);

    const made = await post('/console/connections', { name: 'Fake host', apiBaseUrl: providers.url, apiToken: VMHOST_TOKEN });
    expect(made.status).toBe(303);
    connectionId = idIn(made.headers.location, 'connections');
    const page = await get(made.headers.location);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<code>${providers.url}</code>`);
    expect(page.text).not.toContain(VMHOST_TOKEN);
    expect((await get('/console/connections')).text).toContain(`href="/console/connections/${connectionId}">Fake host</a>`);
  });

  it('creates a vmhost target on it from the form, and changes it', async () => {
    const refused = await post('/console/targets', { kind: 'vmhost', name: 'Fake VM', image: 'agent-runner', connectionId: '' });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('`connectionId` is required for vmhost targets.');
    expect(refused.text).toContain('value="agent-runner"');

    // Fields of the other kind, on the same form, are not sent.
    const made = await post('/console/targets', { kind: 'vmhost', name: 'Fake VM', image: 'agent-runner', connectionId, size: 'small', region: '', command: 'ignored', cpus: '', memoryMb: '', pids: '', network: 'none', timeoutSeconds: '' });
    expect(made.status).toBe(303);
    targetId = idIn(made.headers.location, 'targets');
    expect((await call(app, 'GET', `/api/v1/execution-targets/${targetId}`, { headers: bearer })).body).toMatchObject({ kind: 'vmhost', connectionId, image: 'agent-runner', size: 'small', region: null, timeoutSeconds: 3600 });

    const page = await get(`/console/targets/${targetId}`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('name="command"'); // a vmhost target shows only its own fields
    const changed = await post(`/console/targets/${targetId}`, { name: 'Fake VM', image: 'agent-runner-2', connectionId, size: 'small', region: 'fra1', timeoutSeconds: '600' });
    expect(changed.status).toBe(303);
    expect((await call(app, 'GET', `/api/v1/execution-targets/${targetId}`, { headers: bearer })).body).toMatchObject({ image: 'agent-runner-2', region: 'fra1', timeoutSeconds: 600 });
    const tooShort = await post(`/console/targets/${targetId}`, { name: 'Fake VM', image: 'agent-runner-2', connectionId, size: 'small', region: '', timeoutSeconds: '5' });
    expect(tooShort.status).toBe(400);
    expect(tooShort.text).toContain('timeoutSeconds');
    expect(tooShort.text).toContain('value="5"');
    expect((await get('/console/targets')).text).toContain('agent-runner-2 on Fake host');
  });

  it('saves the agent integration, its token never shown', async () => {
    const saved = await post('/console/integration', { project: 'acme', apiBaseUrl: providers.url, accessToken: AGENT_TOKEN, connectionId });
    expect([saved.status, saved.headers.location]).toEqual([303, '/console/connections']);
    const page = await get('/console/connections');
    expect(page.text).toContain('<dt>Project</dt><dd>acme</dd>');
    expect(page.text).not.toContain(AGENT_TOKEN);
    const refused = await post('/console/integration', { project: 'acme', apiBaseUrl: providers.url, accessToken: '' });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('accessToken');
  });

  it('runs diagnostics from the connection page, showing each step', async () => {
    const res = await post(`/console/connections/${connectionId}/diagnostics`);
    expect(res.status).toBe(200);
    expect(res.text).toContain('Diagnostics: every step passed');
    for (const step of ['token_permissions', 'vm_boot', 'agent_model_reachability', 'vm_destroy']) expect(res.text).toContain(`<code>${step}</code>`);
    expect([...providers.vms.values()].every((vm) => vm.destroyed)).toBe(true);

    providers.knobs.permissions = ['vms:read'];
    const failed = await post(`/console/connections/${connectionId}/diagnostics`);
    expect(failed.text).toContain('Diagnostics: a step failed');
    expect(failed.text).toContain('the token lacks vms:create, vms:delete');
    providers.reset();
  });

  it('rotates the token, keeping it when left empty', async () => {
    expect((await post(`/console/connections/${connectionId}`, { name: 'Renamed host', apiBaseUrl: providers.url, apiToken: '' })).status).toBe(303);
    expect((await call(app, 'GET', `/api/v1/vmhost-connections/${connectionId}`, { headers: bearer })).body.name).toBe('Renamed host');
    expect((await post(`/console/connections/${connectionId}/diagnostics`)).text).toContain('every step passed');
    expect((await post(`/console/connections/${connectionId}`, { name: 'Renamed host', apiBaseUrl: providers.url, apiToken: 'a-token-the-host-refuses' })).status).toBe(303);
    expect((await post(`/console/connections/${connectionId}/diagnostics`)).text).toContain('a step failed');
    expect((await post(`/console/connections/${connectionId}`, { name: 'Renamed host', apiBaseUrl: providers.url, apiToken: VMHOST_TOKEN })).status).toBe(303);
  });

  it('answers 404 for another tenant\'s target and connection, and lets it change nothing', async () => {
    const other = await sessionCookie(app, await createOwner(app.database.db, { tenantName: 'Other' }));
    for (const path of [`/console/targets/${targetId}`, `/console/connections/${connectionId}`]) expect((await get(path, other)).status).toBe(404);
    for (const path of [`/console/connections/${connectionId}/diagnostics`, `/console/connections/${connectionId}/delete`, `/console/targets/${targetId}/delete`]) {
      expect((await post(path, {}, { as: other })).status).toBe(404);
    }
    expect((await post(`/console/connections/${connectionId}`, { name: 'Stolen', apiBaseUrl: providers.url }, { as: other })).status).toBe(404);
    expect((await call(app, 'GET', `/api/v1/vmhost-connections/${connectionId}`, { headers: bearer })).body.name).toBe('Renamed host');
    const others = await get('/console/connections', other);
    expect(others.text).not.toContain('Renamed host');
  });

  it('refuses a post from another origin with 403', async () => {
    for (const path of ['/console/targets', `/console/targets/${targetId}`, `/console/targets/${targetId}/delete`, '/console/connections', `/console/connections/${connectionId}/diagnostics`, `/console/connections/${connectionId}/delete`, '/console/integration', '/console/integration/delete']) {
      expect((await post(path, {}, { origin: 'https://evil.example' })).status).toBe(403);
    }
  });

  it('deletes in order: a connection in use is refused, then the target, the integration and the connection go', async () => {
    const inUse = await post(`/console/connections/${connectionId}/delete`);
    expect(inUse.status).toBe(409);
    expect(inUse.text).toContain('still uses this connection');
    expect((await post(`/console/targets/${targetId}/delete`)).headers.location).toBe('/console/targets');
    expect((await post('/console/integration/delete')).headers.location).toBe('/console/connections');
    expect((await post(`/console/connections/${connectionId}/delete`)).headers.location).toBe('/console/connections');
    expect((await get(`/console/connections/${connectionId}`)).status).toBe(404);
    expect((await get('/console/connections')).text).toContain('No VM-host connection yet.');
  });
});
