// The hand-written statements of a run's life (runs-repo.ts) name their tenant: through tenant B's
// repository, tenant A's runs are never moved, traced or started, and what B writes is stamped with B.
// Dates and JSON are written as the Prisma client reads them, on both databases.
import { forTenant } from '../../src/db/tenant-scope';
import { newId } from '../../src/lib/ids';
import { transition, type RunEvent, type RunState, type Transition } from '../../src/runs/engine/lifecycle';
import { createRunsRepo } from '../../src/runs/runs-repo';
import { createTestDatabase, type TestDatabase } from '../support/databases';

let database: TestDatabase;
const A = newId('ten');
const B = newId('ten');
const jobOf = { [A]: newId('job'), [B]: newId('job') };

beforeAll(async () => {
  database = await createTestDatabase();
  await database.db.tenant.createMany({ data: [{ id: A, name: 'A' }, { id: B, name: 'B' }] });
  for (const tenantId of [A, B]) await database.db.job.create({ data: { id: jobOf[tenantId], tenantId, name: 'J', slug: 'j', promptTemplate: 'p' } });
});
afterAll(() => database.drop());

const repoOf = (tenantId: string) => createRunsRepo(forTenant(database.db, tenantId));
const newRun = (tenantId: string) => ({ id: newId('run'), jobId: jobOf[tenantId], invocationId: null, name: 'n', prompt: 'p', triggerType: 'invocation', triggerId: null, inputs: { data: { n: 1 } } });
/** The lifecycle's move of the run from `from` through `event`, written through the tenant's repository. */
const moved = (tenantId: string, id: string, from: RunState, event: RunEvent) => repoOf(tenantId).apply(id, transition(from, event) as Transition);
const stop: RunEvent = { type: 'stop', error: 'stopped' };
const failed: RunEvent = { type: 'outcome', outcome: { state: 'failed', error: 'x', cause: 'agent' } };
const rowOf = (id: string) => database.db.run.findUniqueOrThrow({ where: { id }, include: { events: { orderBy: { seq: 'asc' } } } });

async function queuedRun(tenantId: string, concurrencyKey: string | null = null) {
  const run = { ...newRun(tenantId), concurrencyKey };
  const invocation = { id: newId('inv'), idempotencyKey: newId('key'), requestHash: 'h', expiresAt: new Date('2030-01-01T00:00:00.123Z') };
  await repoOf(tenantId).createInvoked({ ...run, invocationId: invocation.id }, invocation, [{ type: 'prompt_rendered', data: { name: 'n', promptLength: 1 } }]);
  return { run, invocation };
}

describe('the statements of a run', () => {
  it('creates the run, its first event and its invocation stamped with the tenant, readable by the client', async () => {
    const { run, invocation } = await queuedRun(A);
    const row = await rowOf(run.id);
    expect(row).toMatchObject({ tenantId: A, state: 'queued', inputs: { data: { n: 1 } }, traceLength: 1, invocationId: invocation.id });
    expect(row.createdAt).toBeInstanceOf(Date);
    expect(row.events.map((e) => [e.tenantId, e.seq, e.type, e.data])).toEqual([[A, 1, 'prompt_rendered', { name: 'n', promptLength: 1 }]]);
    const stored = await database.db.invocation.findUniqueOrThrow({ where: { id: invocation.id } });
    expect([stored.tenantId, stored.runId, stored.expiresAt.toISOString()]).toEqual([A, run.id, '2030-01-01T00:00:00.123Z']);
  });

  it('claims, moves and traces only its own tenant\'s runs', async () => {
    const { run } = await queuedRun(A);
    const before = await rowOf(run.id);

    expect(await repoOf(B).claim(jobOf[A], { limit: 5 }, 'inst_b:1', 'inst_b')).toEqual([]);
    expect(await moved(B, run.id, 'queued', stop)).toBe(false);
    expect(await repoOf(B).append(run.id, [{ type: 'agent_output', data: { stream: 'stdout', text: 'x' } }])).toBe(false);
    expect(await rowOf(run.id)).toEqual(before);

    // Tenant A's own repository does each.
    const claimed = await repoOf(A).claim(jobOf[A], { limit: 5 }, 'inst_a:1', 'inst_a');
    expect(claimed.map((r) => r.id)).toContain(run.id);
    expect(await repoOf(A).append(run.id, [{ type: 'agent_output', data: { stream: 'stdout', text: 'x' } }])).toBe(true);
    expect(await moved(A, run.id, 'starting', { type: 'started', executorRef: 'local:1' })).toBe(true);
    expect(await moved(A, run.id, 'starting', { type: 'started', executorRef: 'local:2' })).toBe(false); // no longer in `from`
    expect(await moved(A, run.id, 'running', { type: 'outcome', outcome: { state: 'succeeded', result: { ok: true } } })).toBe(true);
    const row = await rowOf(run.id);
    expect(row).toMatchObject({ state: 'succeeded', claim: 'inst_a:1', ownerId: 'inst_a', executorRef: 'local:1', result: { ok: true }, traceLength: 6 });
    expect(row.startedAt!.getTime()).toBeLessThanOrEqual(row.finishedAt!.getTime());
    expect(row.events.map((e) => [e.seq, e.type, e.tenantId])).toEqual([
      [1, 'prompt_rendered', A],
      [2, 'state_changed', A],
      [3, 'agent_output', A],
      [4, 'state_changed', A],
      [5, 'result', A],
      [6, 'state_changed', A],
    ]);
    expect(row.events[5].data).toEqual({ from: 'running', to: 'succeeded' });
  });

  it('starts no more runs than the limit leaves free, oldest first', async () => {
    const runs = [await queuedRun(B), await queuedRun(B), await queuedRun(B)].map(({ run }) => run.id);
    const first = await repoOf(B).claim(jobOf[B], { limit: 2 }, 'inst_b:2', 'inst_b');
    expect(first.map((r) => r.id)).toEqual(runs.slice(0, 2));
    expect(await repoOf(B).claim(jobOf[B], { limit: 2 }, 'inst_b:3', 'inst_b')).toEqual([]);
    await moved(B, runs[0], 'starting', failed);
    expect((await repoOf(B).claim(jobOf[B], { limit: 2 }, 'inst_b:4', 'inst_b')).map((r) => r.id)).toEqual([runs[2]]);
    expect((await rowOf(runs[2])).events.map((e) => e.type)).toEqual(['prompt_rendered', 'state_changed']);
  });

  it('starts, under a key\'s limit, the oldest runs whose key has room, a full key holding back only its own', async () => {
    // The runs the test before left unfinished end first.
    for (const { id, state } of await database.db.run.findMany({ where: { tenantId: B, state: { in: ['queued', 'starting'] } } })) {
      await moved(B, id, state as RunState, stop);
      await moved(B, id, 'canceling', { type: 'lost' });
    }
    const [a1, a2, b1, a3, c1] = [await queuedRun(B, '"a"'), await queuedRun(B, '"a"'), await queuedRun(B, '"b"'), await queuedRun(B, '"a"'), await queuedRun(B, null)].map(({ run }) => run.id);
    const first = await repoOf(B).claim(jobOf[B], { limit: 10, keyLimit: 1 }, 'inst_b:5', 'inst_b');
    expect(first.map((r) => r.id)).toEqual([a1, b1, c1]);
    expect(await repoOf(B).claim(jobOf[B], { limit: 10, keyLimit: 1 }, 'inst_b:6', 'inst_b')).toEqual([]);
    await moved(B, a1, 'starting', failed);
    expect((await repoOf(B).claim(jobOf[B], { limit: 10, keyLimit: 1 }, 'inst_b:7', 'inst_b')).map((r) => r.id)).toEqual([a2]);
    // The job's own limit still caps them all: two keys have room, one slot is left.
    await moved(B, b1, 'starting', failed);
    await queuedRun(B, '"b"');
    expect(await repoOf(B).claim(jobOf[B], { limit: 2, keyLimit: 2 }, 'inst_b:8', 'inst_b')).toEqual([]);
    expect((await repoOf(B).claim(jobOf[B], { limit: 3, keyLimit: 2 }, 'inst_b:9', 'inst_b')).map((r) => r.id)).toEqual([a3]);
  });

  it('writes a run only when its guards hold: no run of its debounce key waits, its concurrency key has room', async () => {
    const job = newId('job');
    await database.db.job.create({ data: { id: job, tenantId: A, name: 'G', slug: 'g', promptTemplate: 'p' } });
    const create = (fields: Record<string, unknown>, guards: Parameters<ReturnType<typeof repoOf>['createInvoked']>[3]) =>
      repoOf(A).createInvoked({ ...newRun(A), jobId: job, ...fields }, null, [{ type: 'prompt_rendered', data: { name: 'n', promptLength: 1 } }], guards);
    expect(await create({ debounceKey: '"pr-1"' }, { debounced: true })).toBe(true);
    expect(await create({ debounceKey: '"pr-1"' }, { debounced: true })).toBe(false); // the first still waits
    expect(await create({ debounceKey: '"pr-2"' }, { debounced: true })).toBe(true);
    expect(await create({ concurrencyKey: '"a"' }, { keyLimit: 2 })).toBe(true);
    expect(await create({ concurrencyKey: '"a"' }, { keyLimit: 2 })).toBe(true);
    expect(await create({ concurrencyKey: '"a"' }, { keyLimit: 2 })).toBe(false);
    expect(await create({ concurrencyKey: '"b"' }, { keyLimit: 2 })).toBe(true);
    // A keyless job is one key: the runs without a concurrency key count together (here the two of debounce).
    expect(await create({ concurrencyKey: null }, { keyLimit: 3 })).toBe(true);
    expect(await create({ concurrencyKey: null }, { keyLimit: 3 })).toBe(false);
    expect(await database.db.run.count({ where: { jobId: job } })).toBe(6);
  });
});
