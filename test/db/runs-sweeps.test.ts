// Runs are owned: the sweeps find the active runs of instances that are gone (lapsed, left, never known,
// or no owner recorded), never those of a live instance or of the instance asking.
import { newId } from '../../src/lib/ids';
import { createLogger } from '../../src/lib/logger';
import { createRunsSweeps } from '../../src/runs/runs-sweeps';
import { createTestDatabase, type TestDatabase } from '../support/databases';

let database: TestDatabase;
const tenantId = newId('ten');
const jobId = newId('job');
const LAPSE_MS = 30_000;
let clock = new Date('2030-01-01T00:00:00Z');
const sweepsOf = (instanceId: string) => createRunsSweeps({ db: database.db, instanceId, lapseMs: LAPSE_MS, now: () => clock, logger: createLogger('silent') });

beforeAll(async () => {
  database = await createTestDatabase();
  await database.db.tenant.create({ data: { id: tenantId, name: 'T' } });
  await database.db.job.create({ data: { id: jobId, tenantId, name: 'J', slug: 'j', promptTemplate: 'p' } });
});
afterAll(() => database.drop());

const runOwnedBy = async (ownerId: string | null, state = 'running') =>
  (await database.db.run.create({ data: { id: newId('run'), tenantId, jobId, name: 'n', prompt: 'p', state, triggerType: 'invocation', inputs: {}, ownerId } })).id;

it('finds the runs of gone instances, not of live ones nor its own', async () => {
  const [me, live, lapsed, left] = [sweepsOf('inst_me'), sweepsOf('inst_live'), sweepsOf('inst_lapsed'), sweepsOf('inst_left')];
  await Promise.all([me.join(), lapsed.join()]);
  clock = new Date(clock.getTime() + LAPSE_MS + 1);
  await Promise.all([me.join(), live.join(), left.join()]);
  await left.leave();
  const runs = {
    mine: await runOwnedBy('inst_me'),
    live: await runOwnedBy('inst_live'),
    liveCanceling: await runOwnedBy('inst_live', 'canceling'),
    lapsed: await runOwnedBy('inst_lapsed'),
    left: await runOwnedBy('inst_left', 'starting'),
    unknown: await runOwnedBy('inst_never_seen'),
    noOwner: await runOwnedBy(null, 'canceling'),
    lapsedQueued: await runOwnedBy('inst_lapsed', 'queued'),
    lapsedFinished: await runOwnedBy('inst_lapsed', 'succeeded'),
  };
  const found = async (options?: { othersGone: boolean }) => (await me.orphaned(options)).map((run) => run.id).sort();

  expect(await found()).toEqual([runs.lapsed, runs.left, runs.unknown, runs.noOwner].sort());
  // The embedded database's one process: everyone else is gone.
  expect(await found({ othersGone: true })).toEqual([runs.live, runs.liveCanceling, runs.lapsed, runs.left, runs.unknown, runs.noOwner].sort());
  expect(await me.queuedJobs()).toEqual([{ tenantId, jobId }]);
  // An instance that has not beaten for a whole lapse yet (just started, or back from losing the database)
  // judges no one: the others may not have had their turn to beat.
  const fresh = sweepsOf('inst_fresh');
  await fresh.join();
  expect(await fresh.orphaned()).toEqual([]);
  await fresh.leave();

  // Long gone instances are forgotten; live ones stay.
  clock = new Date(clock.getTime() + 10 * LAPSE_MS + 1);
  await Promise.all([me.join(), live.join()]);
  await me.forgetLapsed();
  expect((await database.db.instance.findMany({ orderBy: { id: 'asc' } })).map((instance) => instance.id)).toEqual(['inst_live', 'inst_me']);
  await Promise.all([me, live, lapsed].map((sweeps) => sweeps.leave()));
});
