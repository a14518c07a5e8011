// Token and client management (owner session only), every response checked against the contract, and
// tenant isolation: one owner's session never sees or revokes another tenant's tokens or clients.
import { call } from '../support/http';
import { startTestApp, BASE_URL, type TestApp } from '../support/app';
import { accessToken, createOwner, registerTestClient, sessionCookie, type TestOwner } from '../support/identity';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const asOwner = async (owner: TestOwner) => ({ cookie: await sessionCookie(app, owner), origin: BASE_URL });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('GET /api/v1/access-tokens', () => {
  it('lists live tokens with metadata only, never the token value', async () => {
    const owner = await createOwner(app.database.db);
    const token = await accessToken(app, owner, { scopes: ['flows:read', 'runs:read'] });
    await call(app, 'GET', '/api/v1/me', { headers: bearer(token) });
    const res = await call(app, 'GET', '/api/v1/access-tokens', { headers: await asOwner(owner) });
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(1);
    const [listed] = res.body;
    expect(listed).toMatchObject({ clientName: 'Test client', scopes: ['flows:read', 'runs:read'], resource: `${BASE_URL}/api/v1` });
    expect(listed.id).toMatch(/^at_/);
    expect(listed.lastUsedAt).not.toBeNull();
    expect(Date.parse(listed.expiresAt) - Date.parse(listed.createdAt)).toBe(3600_000);
    expect(JSON.stringify(res.body)).not.toContain(token);
  });

  it('refuses a bearer token, whatever its scopes, with 403 owner_session_required', async () => {
    const owner = await createOwner(app.database.db);
    const res = await call(app, 'GET', '/api/v1/access-tokens', { headers: bearer(await accessToken(app, owner)) });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('owner_session_required');
  });

  it('omits expired tokens and tokens of other tenants', async () => {
    const owner = await createOwner(app.database.db);
    const other = await createOwner(app.database.db, { tenantName: 'Other' });
    await accessToken(app, owner, { expiresIn: -5 });
    await accessToken(app, other);
    const res = await call(app, 'GET', '/api/v1/access-tokens', { headers: await asOwner(owner) });
    expect(res.body).toEqual([]);
  });
});

describe('DELETE /api/v1/access-tokens/{tokenId}', () => {
  it('revokes the token at once and answers 204', async () => {
    const owner = await createOwner(app.database.db);
    const token = await accessToken(app, owner);
    const [listed] = (await call(app, 'GET', '/api/v1/access-tokens', { headers: await asOwner(owner) })).body;
    const res = await call(app, 'DELETE', `/api/v1/access-tokens/${listed.id}`, { headers: await asOwner(owner) });
    expect(res.status).toBe(204);
    expect((await call(app, 'GET', '/api/v1/me', { headers: bearer(token) })).status).toBe(401);
    expect((await call(app, 'DELETE', `/api/v1/access-tokens/${listed.id}`, { headers: await asOwner(owner) })).status).toBe(404);
  });

  it('answers 404 for a token of another tenant, which keeps working', async () => {
    const owner = await createOwner(app.database.db);
    const other = await createOwner(app.database.db);
    const theirs = await accessToken(app, other);
    const [listed] = (await call(app, 'GET', '/api/v1/access-tokens', { headers: await asOwner(other) })).body;
    const res = await call(app, 'DELETE', `/api/v1/access-tokens/${listed.id}`, { headers: await asOwner(owner) });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
    expect((await call(app, 'GET', '/api/v1/me', { headers: bearer(theirs) })).status).toBe(200);
  });
});

describe('authorized clients', () => {
  it('lists each client once with its scopes and token count, and revoking it ends all its tokens', async () => {
    const owner = await createOwner(app.database.db);
    const clientId = await registerTestClient(app, 'flows CLI');
    const first = await accessToken(app, owner, { clientId, scopes: ['flows:read'] });
    const second = await accessToken(app, owner, { clientId, scopes: ['runs:write'] });
    const other = await accessToken(app, owner);

    const list = await call(app, 'GET', '/api/v1/authorized-clients', { headers: await asOwner(owner) });
    expect(list.status).toBe(200);
    const cli = list.body.find((c: { clientId: string }) => c.clientId === clientId);
    expect(cli).toMatchObject({ clientName: 'flows CLI', scopes: ['flows:read', 'runs:write'], activeTokens: 2 });
    expect(list.body).toHaveLength(2);

    expect((await call(app, 'DELETE', `/api/v1/authorized-clients/${clientId}`, { headers: await asOwner(owner) })).status).toBe(204);
    for (const token of [first, second]) expect((await call(app, 'GET', '/api/v1/me', { headers: bearer(token) })).status).toBe(401);
    expect((await call(app, 'GET', '/api/v1/me', { headers: bearer(other) })).status).toBe(200);
    const after = await call(app, 'GET', '/api/v1/authorized-clients', { headers: await asOwner(owner) });
    expect(after.body.map((c: { clientId: string }) => c.clientId)).not.toContain(clientId);
  });

  it('pages with limit and a Link header, and refuses a forged cursor', async () => {
    const owner = await createOwner(app.database.db);
    for (let i = 0; i < 3; i++) await accessToken(app, owner);
    const first = await call(app, 'GET', '/api/v1/authorized-clients?limit=2', { headers: await asOwner(owner) });
    expect(first.body).toHaveLength(2);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.link)![1];
    const second = await call(app, 'GET', next, { headers: await asOwner(owner) });
    expect(second.body).toHaveLength(1);
    expect(second.headers.link).toBeUndefined();
    const forged = await call(app, 'GET', '/api/v1/authorized-clients?cursor=bm90LWEtY3Vyc29y', { headers: await asOwner(owner) });
    expect(forged.status).toBe(400);
    expect(forged.body.error.code).toBe('invalid_cursor');
  });

  it('answers 404 when revoking a client the owner has not authorized in this tenant', async () => {
    const owner = await createOwner(app.database.db);
    const other = await createOwner(app.database.db);
    const clientId = await registerTestClient(app);
    const theirs = await accessToken(app, other, { clientId });
    const res = await call(app, 'DELETE', `/api/v1/authorized-clients/${clientId}`, { headers: await asOwner(owner) });
    expect(res.status).toBe(404);
    expect((await call(app, 'GET', '/api/v1/me', { headers: bearer(theirs) })).status).toBe(200);
  });
});
