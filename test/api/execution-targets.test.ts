// GET /api/v1/execution-targets and /{targetId}: the built-in `local` target exactly when the operator set
// an agent command, the tenant's own targets newest first in keyset pages, and nothing of another tenant.
import { startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner, type TestOwner } from '../support/identity';

const LOCAL = {
  id: 'local',
  name: 'Local agent',
  kind: 'local',
  connectionId: null,
  image: null,
  size: 'local',
  region: null,
  docker: null,
  timeoutSeconds: 120,
  createdAt: expect.any(String),
  updatedAt: expect.any(String),
};

async function tenantOf(app: TestApp, scopes = ['flows:read']) {
  const owner = await createOwner(app.database.db);
  return { owner, headers: { authorization: `Bearer ${await accessToken(app, owner, { scopes })}` } };
}

async function addTargets(app: TestApp, owner: TestOwner, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = `tgt_${String(i).padStart(4, '0')}_${owner.tenantId}`;
    await app.database.db.executionTarget.create({ data: { id, tenantId: owner.tenantId, name: `VM ${i}`, kind: 'vmhost', connectionId: 'vmc_1', image: 'ubuntu', size: 'small', region: 'fra1' } });
    ids.push(id);
  }
  return ids;
}

async function listAll(app: TestApp, headers: Record<string, string>, first: string) {
  const seen: string[] = [];
  let next: string | null = first;
  while (next) {
    const res = await call(app, 'GET', next, { headers });
    expect(res.status).toBe(200);
    seen.push(...res.body.map((target: { id: string }) => target.id));
    next = /^<([^>]+)>; rel="next"$/.exec(res.headers.link ?? '')?.[1] ?? null;
  }
  return seen;
}

describe('with FLOWS_LOCAL_AGENT_COMMAND set', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ localAgent: { command: 'true', timeoutSeconds: 120 } });
  });
  afterAll(() => app.close());

  it('lists the local target first, then the tenant targets newest first, across pages', async () => {
    const { owner, headers } = await tenantOf(app);
    const ids = await addTargets(app, owner, 4);
    const first = await call(app, 'GET', '/api/v1/execution-targets', { headers });
    expect(first.body[0]).toEqual(LOCAL);
    expect(first.body.map((target: { id: string }) => target.id)).toEqual(['local', ...[...ids].reverse()]);
    for (const limit of [1, 2, 3]) {
      expect(await listAll(app, headers, `/api/v1/execution-targets?limit=${limit}`)).toEqual(['local', ...[...ids].reverse()]);
    }
  });

  it('gets the local target and the tenant own targets, never the command', async () => {
    const { owner, headers } = await tenantOf(app);
    const [id] = await addTargets(app, owner, 1);
    const local = await call(app, 'GET', '/api/v1/execution-targets/local', { headers });
    expect(local.body).toEqual(LOCAL);
    expect(JSON.stringify(local.body)).not.toContain('true');
    const own = await call(app, 'GET', `/api/v1/execution-targets/${id}`, { headers });
    expect(own.body).toMatchObject({ id, kind: 'vmhost', connectionId: 'vmc_1', size: 'small' });
  });

  it('shows another tenant none of these targets', async () => {
    const { owner } = await tenantOf(app);
    const [id] = await addTargets(app, owner, 1);
    const { headers } = await tenantOf(app);
    const res = await call(app, 'GET', `/api/v1/execution-targets/${id}`, { headers });
    expect([res.status, res.body.error.code]).toEqual([404, 'not_found']);
    expect((await call(app, 'GET', '/api/v1/execution-targets', { headers })).body).toEqual([LOCAL]);
  });

  it('needs flows:read', async () => {
    const { headers } = await tenantOf(app, ['runs:read']);
    const res = await call(app, 'GET', '/api/v1/execution-targets', { headers });
    expect([res.status, res.body.error.code]).toEqual([403, 'insufficient_scope']);
  });
});

describe('without a local agent command', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('has no local target', async () => {
    const { headers } = await tenantOf(app);
    expect((await call(app, 'GET', '/api/v1/execution-targets', { headers })).body).toEqual([]);
    const res = await call(app, 'GET', '/api/v1/execution-targets/local', { headers });
    expect([res.status, res.body.error.code]).toEqual([404, 'not_found']);
  });
});
