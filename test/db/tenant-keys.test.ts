// Tenant-owned rows reference tenant-owned parents through (tenantId, id): the database itself refuses a
// link to another tenant's row, whatever a service does. Checked on the models, and on a real database.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { forTenant, TENANT_MODELS } from '../../src/db/tenant-scope';
import { newId } from '../../src/lib/ids';
import { createTestDatabase, type TestDatabase } from '../support/databases';

const MODELS = readFileSync(path.join(__dirname, '../../prisma/models.prisma'), 'utf8');

/** `[model, field type, fields, references]` of every relation declared in models.prisma. */
function relations(): [string, string, string[], string[]][] {
  const found: [string, string, string[], string[]][] = [];
  for (const [, model, body] of MODELS.matchAll(/^model (\w+) \{([\s\S]*?)^\}/gm)) {
    for (const [, type, fields, references] of body.matchAll(/^\s+\w+\s+(\w+)\??\s+@relation\(fields: \[([^\]]*)\], references: \[([^\]]*)\]/gm)) {
      found.push([model, type, fields.split(',').map((f) => f.trim()), references.split(',').map((r) => r.trim())]);
    }
  }
  return found;
}

it('declares every link between tenant-owned models on (tenantId, id)', () => {
  const links = relations().filter(([model, type]) => TENANT_MODELS.has(model) && TENANT_MODELS.has(type));
  expect(links.length).toBeGreaterThanOrEqual(6);
  for (const [model, type, fields, references] of links) {
    expect({ model, type, fields: fields[0], references: references[0] }).toEqual({ model, type, fields: 'tenantId', references: 'tenantId' });
  }
});

describe('on a real database', () => {
  let database: TestDatabase;
  const A = newId('ten');
  const B = newId('ten');
  let theirJob: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    await database.db.tenant.createMany({ data: [{ id: A, name: 'A' }, { id: B, name: 'B' }] });
    theirJob = (await forTenant(database.db, B).job.create({ data: { id: newId('job'), name: 'Theirs', slug: 'theirs', promptTemplate: 'x' } as any })).id;
  });
  afterAll(() => database.drop());

  const trigger = (jobId: string) => ({ id: newId('trg'), jobId, type: 'invocation', position: 0, config: {} });
  const run = (jobId: string) => ({ id: newId('run'), jobId, name: 'r', state: 'queued', triggerType: 'invocation', prompt: 'p', inputs: {} });

  it('refuses a trigger or a run of tenant A on tenant B\'s job, even through A\'s scoped client', async () => {
    const a = forTenant(database.db, A);
    await expect(a.trigger.create({ data: trigger(theirJob) as any })).rejects.toMatchObject({ code: 'P2003' });
    await expect(a.run.create({ data: run(theirJob) as any })).rejects.toMatchObject({ code: 'P2003' });
    await expect(database.db.trigger.create({ data: { ...trigger(theirJob), tenantId: A } })).rejects.toMatchObject({ code: 'P2003' });
    expect(await database.db.trigger.count()).toBe(0);
    expect(await database.db.run.count()).toBe(0);
  });

  it('accepts the same rows in the job\'s own tenant, and deletes them with the job', async () => {
    const b = forTenant(database.db, B);
    await b.trigger.create({ data: trigger(theirJob) as any });
    const created = await b.run.create({ data: run(theirJob) as any });
    await b.runEvent.create({ data: { id: newId('rev'), runId: created.id, seq: 1, type: 'state_changed', data: {} } as any });
    await expect(forTenant(database.db, A).runEvent.create({ data: { id: newId('rev'), runId: created.id, seq: 2, type: 'x', data: {} } as any })).rejects.toMatchObject({ code: 'P2003' });
    await b.job.delete({ where: { id: theirJob } });
    expect([await database.db.trigger.count(), await database.db.run.count(), await database.db.runEvent.count()]).toEqual([0, 0, 0]);
  });
});
