// The tenant-scoped client is the one path to tenant data: reads, writes and deletes through tenant A's
// client never see or touch tenant B's rows, and creates are stamped with A.
import { isUniqueViolation } from '../../src/db/errors';
import { forTenant, scopeArgs } from '../../src/db/tenant-scope';
import { newId } from '../../src/lib/ids';
import { createTestDatabase, type TestDatabase } from '../support/databases';

let database: TestDatabase;
const A = newId('ten');
const B = newId('ten');

beforeAll(async () => {
  database = await createTestDatabase();
  await database.db.tenant.createMany({ data: [{ id: A, name: 'A' }, { id: B, name: 'B' }] });
});
afterAll(() => database.drop());

const connection = (name: string) => ({ id: newId('vmc'), name, apiBaseUrl: 'https://vmhost.example', tokenCiphertext: 'ciphertext' });

describe('forTenant', () => {
  it('stamps creates with its tenant, whatever the data says', async () => {
    const a = forTenant(database.db, A);
    const created = await a.vmhostConnection.create({ data: { ...connection('mine'), tenantId: B } as any });
    expect(created.tenantId).toBe(A);
  });

  it('stamps plain multi-row inserts with its tenant, and writes dates and JSON as the client reads them', async () => {
    const a = forTenant(database.db, A);
    const source = await a.webhookSource.create({ data: { id: newId('src'), name: 'GitHub', format: 'github', secretCiphertext: 'ciphertext' } as any });
    const receivedAt = new Date('2026-11-23T08:21:53.123Z');
    const row = (deliveryId: string) => ({ id: newId('act'), sourceId: source.id, deliveryId, event: 'issues', action: null, receivedAt, context: { json: { payload: { n: 1 } } }, decisions: { json: [] }, runIds: { json: [] }, tenantId: B });
    await a.$insertRows('WebhookActivity', [row('d1'), row('d2')]);

    const rows = await database.db.webhookActivity.findMany({ where: { sourceId: source.id }, orderBy: { deliveryId: 'asc' } });
    expect(rows.map((r) => [r.tenantId, r.deliveryId, r.action, r.receivedAt.toISOString(), r.context, r.decisions])).toEqual([
      [A, 'd1', null, receivedAt.toISOString(), { payload: { n: 1 } }, []],
      [A, 'd2', null, receivedAt.toISOString(), { payload: { n: 1 } }, []],
    ]);
    // Range filters compare what the client wrote with what this statement wrote.
    expect(await a.webhookActivity.count({ where: { receivedAt: { gte: receivedAt, lte: receivedAt } } })).toBe(2);
    // A repeated delivery is a unique violation, recognised as one.
    await expect(a.$insertRows('WebhookActivity', [row('d3'), row('d1')]).catch((err) => isUniqueViolation(err))).resolves.toBe(true);
    expect(await a.webhookActivity.count({ where: { sourceId: source.id } })).toBe(2);
  });

  it('never reads, counts, updates or deletes another tenant\'s rows', async () => {
    const b = forTenant(database.db, B);
    const theirs = await b.vmhostConnection.create({ data: connection('theirs') as any });
    const a = forTenant(database.db, A);

    expect(await a.vmhostConnection.findUnique({ where: { id: theirs.id } })).toBeNull();
    expect(await a.vmhostConnection.findFirst({ where: { name: 'theirs' } })).toBeNull();
    expect((await a.vmhostConnection.findMany()).map((c) => c.name)).toEqual(['mine']);
    expect(await a.vmhostConnection.count()).toBe(1);
    expect((await a.vmhostConnection.updateMany({ data: { name: 'hijacked' } })).count).toBe(1);
    await expect(a.vmhostConnection.update({ where: { id: theirs.id }, data: { name: 'hijacked' } })).rejects.toMatchObject({ code: 'P2025' });
    await expect(a.vmhostConnection.delete({ where: { id: theirs.id } })).rejects.toMatchObject({ code: 'P2025' });
    expect((await a.vmhostConnection.deleteMany({ where: { id: theirs.id } })).count).toBe(0);

    const untouched = await database.db.vmhostConnection.findUniqueOrThrow({ where: { id: theirs.id } });
    expect(untouched.name).toBe('theirs');
  });

  it('scopes upserts on both the lookup and the insert', async () => {
    const b = forTenant(database.db, B);
    const theirs = await b.vmhostConnection.create({ data: connection('upsert-target') as any });
    const a = forTenant(database.db, A);
    const result = await a.vmhostConnection.upsert({
      where: { id: theirs.id },
      create: connection('created-instead') as any,
      update: { name: 'hijacked' },
    });
    // B's row is not found under A, so A gets a row of its own and B's is not updated.
    expect(result).toMatchObject({ tenantId: A, name: 'created-instead' });
    expect(result.id).not.toBe(theirs.id);
    expect((await database.db.vmhostConnection.findUniqueOrThrow({ where: { id: theirs.id } })).name).toBe('upsert-target');
  });

  it('leaves models that are not tenant data alone', async () => {
    const a = forTenant(database.db, A);
    expect(await a.tenant.count()).toBe(2);
  });
});

describe('scopeArgs', () => {
  it('refuses an operation it does not know how to scope', () => {
    expect(() => scopeArgs('$queryRaw', {}, A)).toThrow('not tenant-scoped');
  });
});
