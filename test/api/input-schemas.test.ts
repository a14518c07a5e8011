// An invocation trigger's `inputSchema` through the API: schemas that would hang or crash validation are
// refused when the job is saved (400 invalid_input_schema naming the part), a recursive schema that
// descends into the data is kept and applied, and a job saved with a bad schema before the check existed
// answers 409 on invocation, never 500, here and on an instance started afterwards.
import { startOtherInstance, startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner } from '../support/identity';

let app: TestApp;
let headers: Record<string, string>;
let tenantId: string;
beforeAll(async () => {
  app = await startTestApp();
  const owner = await createOwner(app.database.db);
  tenantId = owner.tenantId;
  headers = { authorization: `Bearer ${await accessToken(app, owner, { scopes: ['flows:read', 'flows:write', 'runs:write'] })}` };
});
afterAll(() => app.close());

const createJob = (inputSchema: unknown, on = app) =>
  call(on, 'POST', '/api/v1/jobs', { headers, body: { name: 'Typed job', promptTemplate: 'Go', triggers: [{ id: 'trg_in', type: 'invocation', inputSchema }] } });
const invoke = (jobId: string, data: unknown, on: Pick<TestApp, 'app'> = app) => call(on as TestApp, 'POST', `/api/v1/jobs/${jobId}/invocations`, { headers, body: { data } });

const HOSTILE: [string, unknown, string][] = [
  ['{"$ref":"#"}', { $ref: '#' }, '/$ref'],
  ['{"allOf":[{"$ref":"#"}]}', { allOf: [{ $ref: '#' }] }, '/allOf/0/$ref'],
  ['{"if":{"$ref":"#"},"then":{"$ref":"#"}}', { if: { $ref: '#' }, then: { $ref: '#' } }, '/if/$ref'],
  ['{"$id":"x","$ref":"x"}', { $id: 'x', $ref: 'x' }, '/$ref'],
  ['{"$dynamicRef":"#meta"}', { $dynamicRef: '#meta' }, '/$dynamicRef'],
];

describe('saving a job', () => {
  it.each(HOSTILE)('refuses %s with 400 invalid_input_schema naming the part, and saves nothing', async (_label, inputSchema, pointer) => {
    const before = await app.database.db.job.count();
    const res = await createJob(inputSchema);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_input_schema');
    expect(res.body.error.message).toContain('`triggers[0].inputSchema`');
    expect(res.body.error.message).toContain(`\`${pointer}\``);
    expect(await app.database.db.job.count()).toBe(before);
  });

  it('refuses the same on update and in a backtest draft, and the job stays as it was', async () => {
    const job = (await createJob({ type: 'object' })).body;
    const triggers = [{ type: 'invocation', inputSchema: { allOf: [{ $ref: '#' }] } }];
    const update = await call(app, 'PATCH', `/api/v1/jobs/${job.id}`, { headers, body: { triggers } });
    expect([update.status, update.body.error.code]).toEqual([400, 'invalid_input_schema']);
    const backtest = await call(app, 'POST', `/api/v1/jobs/${job.id}/backtest`, { headers, body: { triggers } });
    expect([backtest.status, backtest.body.error.code]).toEqual([400, 'invalid_input_schema']);
    expect((await call(app, 'GET', `/api/v1/jobs/${job.id}`, { headers })).body.triggers[0].inputSchema).toEqual({ type: 'object' });
  });

  it('keeps a tree of children through $defs and validates invocations against it', async () => {
    const node = { type: 'object', required: ['name'], properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } } };
    const job = (await createJob({ $defs: { node }, $ref: '#/$defs/node' })).body;
    expect(job.triggers[0].inputSchema.$ref).toBe('#/$defs/node');
    const valid = await invoke(job.id, { name: 'root', children: [{ name: 'a', children: [{ name: 'b' }] }] });
    expect(valid.status).toBe(202);
    const invalid = await invoke(job.id, { name: 'root', children: [{ name: 'a', children: [{ title: 'no name' }] }] });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error).toEqual({ code: 'validation_failed', message: expect.stringContaining('`data.children[0].children[0].name` is required') });
  });
});

describe('a job saved with a hostile schema before schemas were checked', () => {
  /** A job saved with a harmless schema, then changed in the database as an older release would have saved it. */
  async function plantedJob(inputSchema: unknown) {
    const job = (await createJob({ type: 'object' })).body;
    await app.database.db.trigger.updateMany({ where: { jobId: job.id }, data: { config: { inputSchema } as object } });
    await app.database.db.job.updateMany({ where: { id: job.id }, data: { updatedAt: new Date(Date.now() + 1000) } });
    // As at a start on that database: the tenant's live jobs are read again, whatever background work (an
    // earlier run's dispatch) read into memory between the create and the plant.
    app.jobs.heardChange(tenantId);
    return job;
  }

  it.each(HOSTILE)('%s: an invocation answers 409 invalid_input_schema, never 500', async (_label, inputSchema, pointer) => {
    const job = await plantedJob(inputSchema);
    for (let i = 0; i < 2; i++) {
      const res = await invoke(job.id, { anything: i });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('invalid_input_schema');
      expect(res.body.error.message).toContain(`\`${pointer}\``);
      expect(res.body.error.message).toContain('trg_in');
    }
    expect(await app.database.db.run.count({ where: { jobId: job.id } })).toBe(0);
  });

  it('is found when another instance starts, which then answers 409 too; saving a good schema makes the job invocable', async () => {
    const job = await plantedJob({ $ref: '#' });
    const other = await startOtherInstance(app);
    try {
      const refused = await other.jobs.compileSaved();
      expect(refused).toContainEqual({ tenantId: expect.any(String), jobId: job.id, problem: expect.stringContaining('cycle of references') });
      expect((await invoke(job.id, {}, other)).status).toBe(409);
      const fixed = await call(other as unknown as TestApp, 'PATCH', `/api/v1/jobs/${job.id}`, { headers, body: { triggers: [{ id: 'trg_in', type: 'invocation', inputSchema: { type: 'object' } }] } });
      expect(fixed.status).toBe(200);
      expect((await invoke(job.id, {}, other)).status).toBe(202);
    } finally {
      await other.close();
    }
  });
});
