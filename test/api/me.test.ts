import { startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner, sessionCookie, registerTestClient } from '../support/identity';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

describe('GET /api/v1/me', () => {
  it('describes the owner, tenant and session credential', async () => {
    const owner = await createOwner(app.database.db, { email: 'maria@acme.example', tenantName: 'Acme' });
    const res = await call(app, 'GET', '/api/v1/me', { headers: { cookie: await sessionCookie(app, owner) } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      owner: { id: owner.ownerId, email: 'maria@acme.example' },
      tenant: { id: owner.tenantId, name: 'Acme' },
      credential: { type: 'session', scopes: ['flows:read', 'flows:write', 'runs:read', 'runs:write'], clientId: null },
    });
  });

  it('describes a bearer credential with its granted scopes and client', async () => {
    const owner = await createOwner(app.database.db);
    const clientId = await registerTestClient(app);
    const token = await accessToken(app, owner, { scopes: ['runs:read'], clientId });
    const res = await call(app, 'GET', '/api/v1/me', { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    expect(res.body.credential).toEqual({ type: 'bearer', scopes: ['runs:read'], clientId });
    expect(res.body.tenant.id).toBe(owner.tenantId);
  });
});
