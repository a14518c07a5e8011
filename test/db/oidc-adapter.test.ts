// The authorization server's storage on the real database: lookups by id, user code and uid, consume,
// per-kind revocation by grant, and expired records kept for a grace period (so that polling an expired
// device code answers expired_token rather than invalid_grant).
import type { AdapterPayload } from 'oidc-provider';
import { accessTokenHandle } from '../../src/auth/accounts';
import { EXPIRED_GRACE_MS } from '../../src/auth/lifetimes';
import { prismaAdapterFactory } from '../../src/oauth/adapter';
import { createTestDatabase, type TestDatabase } from '../support/databases';

let database: TestDatabase;
let clock = Date.now();
let Adapter: ReturnType<typeof prismaAdapterFactory>;

beforeAll(async () => {
  database = await createTestDatabase();
  Adapter = prismaAdapterFactory(database.db, () => clock);
  // Records reference their owner (the owner part of `accountId`).
  await database.db.tenant.create({ data: { id: 'ten_1', name: 'One' } });
  await database.db.owner.create({ data: { id: 'own_1', email: 'one@example.test' } });
});
afterAll(() => database.drop());

const payload = (extra: Partial<AdapterPayload> = {}): AdapterPayload => ({ accountId: 'own_1.ten_1.1', clientId: 'cli_1', ...extra });

it('stores and finds by id, user code and uid, and records the owner and tenant', async () => {
  const codes = new Adapter('DeviceCode');
  await codes.upsert('dc1', payload({ userCode: 'ABCD-EFGH', grantId: 'g1' }), 600);
  await new Adapter('Session').upsert('s1', payload({ uid: 'u1' }), 600);
  expect(await codes.find('dc1')).toMatchObject({ userCode: 'ABCD-EFGH' });
  expect(await codes.findByUserCode('ABCD-EFGH')).toMatchObject({ grantId: 'g1' });
  expect(await new Adapter('Session').findByUid('u1')).toMatchObject({ uid: 'u1' });
  expect(await codes.find('missing')).toBeUndefined();
  expect(await new Adapter('AccessToken').find('dc1')).toBeUndefined();
  const row = await database.db.oidcPayload.findUniqueOrThrow({ where: { type_id: { type: 'DeviceCode', id: 'dc1' } } });
  expect(row).toMatchObject({ accountId: 'own_1', tenantId: 'ten_1', grantId: 'g1' });
});

it('consume marks the record consumed, and upsert keeps it one row', async () => {
  const codes = new Adapter('AuthorizationCode');
  await codes.upsert('ac1', payload(), 60);
  await codes.consume('ac1');
  expect((await codes.find('ac1'))?.consumed).toEqual(expect.any(Number));
  await codes.consume('missing');
  await codes.upsert('ac1', payload({ scope: 'flows:read' }), 60);
  expect(await database.db.oidcPayload.count({ where: { id: 'ac1' } })).toBe(1);
});

it('consumes once: of two racing consumes of the same code, the second is refused', async () => {
  const tokens = new Adapter('RefreshToken');
  await tokens.upsert('rt-race', payload(), 600);
  const results = await Promise.allSettled([tokens.consume('rt-race'), tokens.consume('rt-race')]);
  expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
  expect(((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason as { error?: string }).error).toBe('invalid_grant');
});

it('revokes by grant one kind at a time, leaving the grant to destroy()', async () => {
  await new Adapter('Grant').upsert('g2', payload(), 600);
  await new Adapter('AccessToken').upsert('at2', payload({ grantId: 'g2' }), 600);
  await new Adapter('RefreshToken').upsert('rt2', payload({ grantId: 'g2' }), 600);
  await new Adapter('AccessToken').revokeByGrantId('g2');
  expect(await new Adapter('AccessToken').find('at2')).toBeUndefined();
  expect(await new Adapter('RefreshToken').find('rt2')).toBeDefined();
  expect(await new Adapter('Grant').find('g2')).toBeDefined();
  await new Adapter('Grant').destroy('g2');
  expect(await new Adapter('Grant').find('g2')).toBeUndefined();
});

it('gives access tokens a handle derived from, but not revealing, the token', async () => {
  await new Adapter('AccessToken').upsert('secret-token-value', payload(), 600);
  const row = await database.db.oidcPayload.findUniqueOrThrow({ where: { type_id: { type: 'AccessToken', id: 'secret-token-value' } } });
  expect(row.handle).toBe(accessTokenHandle('secret-token-value'));
  expect(row.handle).toMatch(/^at_[A-Za-z0-9_-]{24}$/);
  expect(row.handle).not.toContain('secret');
});

it('keeps expired records readable for the grace period, then forgets them', async () => {
  const codes = new Adapter('DeviceCode');
  await codes.upsert('dc3', payload(), 600);
  clock += 600_000 + EXPIRED_GRACE_MS - 1000;
  expect(await codes.find('dc3')).toBeDefined();
  clock += 2000;
  expect(await codes.find('dc3')).toBeUndefined();
});

it('sweeps records past their grace period and ended sessions, and nothing else', async () => {
  const { sweepExpired } = await import('../../src/auth/sweep');
  const codes = new Adapter('DeviceCode');
  await codes.upsert('old', payload(), 1);
  await codes.upsert('fresh', payload(), 600);
  const swept = await sweepExpired(database.db, new Date(clock + 1000 + EXPIRED_GRACE_MS + 1000));
  expect(swept.records).toBeGreaterThanOrEqual(1);
  expect(await database.db.oidcPayload.findUnique({ where: { type_id: { type: 'DeviceCode', id: 'old' } } })).toBeNull();
  expect(await database.db.oidcPayload.findUnique({ where: { type_id: { type: 'DeviceCode', id: 'fresh' } } })).not.toBeNull();
});

it('sweeps rate-limit counters of past windows, and keeps the current ones', async () => {
  const { sweepExpired } = await import('../../src/auth/sweep');
  const now = new Date();
  await database.db.rateLimit.createMany({ data: [{ key: 'api:old', points: 3, expire: new Date(now.getTime() - 1000) }, { key: 'api:current', points: 1, expire: new Date(now.getTime() + 60_000) }] });
  expect((await sweepExpired(database.db, now)).counters).toBe(1);
  expect((await database.db.rateLimit.findMany()).map((row) => row.key)).toEqual(['api:current']);
});
