// Schedule triggers with a clock the test moves: a slot fires once, in the trigger's time zone, however
// many schedulers tick (instances share the database); slots missed while nothing ran are recorded as
// skipped, not fired in a burst; the run sees `data` and `schedule`.
import { agentCommand } from '../support/agent';
import { startOtherInstance, startTestApp, type TestApp } from '../support/app';
import { provider } from '../support/databases';
import { call } from '../support/http';
import { accessToken, createOwner } from '../support/identity';

let clock = new Date();
let app: TestApp;
let bearer: Record<string, string>;

beforeAll(async () => {
  app = await startTestApp({ localAgent: { command: agentCommand(), timeoutSeconds: 60 } }, { now: () => clock });
  bearer = { authorization: `Bearer ${await accessToken(app, await createOwner(app.database.db))}` };
});
afterAll(() => app.close());

async function scheduledJob(trigger: Record<string, unknown>) {
  const res = await call(app, 'POST', '/api/v1/jobs', {
    headers: bearer,
    body: { name: 'Nightly', executionTargetId: 'local', promptTemplate: 'Task {{ data.task }} at {{ schedule.slot }} ({{ schedule.timezone }})', triggers: [{ type: 'schedule', id: 'trg_nightly', ...trigger }] },
  });
  expect(res.status).toBe(201);
  // The job's save time is the start of its schedule; run the clock from there.
  const saved = await app.database.db.job.findUniqueOrThrow({ where: { id: res.body.id } });
  return { id: res.body.id as string, saved: saved.updatedAt };
}

const slotsOf = (jobId: string) => app.database.db.scheduleSlot.findMany({ where: { jobId }, orderBy: { slot: 'asc' } });

it('fires each slot once, in its time zone, with data and the slot in the context', async () => {
  const job = await scheduledJob({ cron: '30 9 * * *', timezone: 'Europe/Berlin', data: { task: 'deps' } });
  // The first 09:30 in Berlin after the job was saved (UTC+1 in winter, +2 in summer): that day's, or the next day's.
  const berlinSlot = (day: string) => {
    const offset = new Intl.DateTimeFormat('en', { timeZone: 'Europe/Berlin', timeZoneName: 'shortOffset' }).formatToParts(new Date(`${day}T12:00:00Z`)).find((p) => p.type === 'timeZoneName')!.value;
    const hours = Number(/GMT([+-]\d+)/.exec(offset)![1]);
    return new Date(`${day}T${String(9 - hours).padStart(2, '0')}:30:00.000Z`);
  };
  const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  let slot = berlinSlot(dayOf(job.saved.getTime()));
  if (slot <= job.saved) slot = berlinSlot(dayOf(job.saved.getTime() + 24 * 3600 * 1000));

  clock = new Date(slot.getTime() - 1000);
  expect(await app.scheduler.tick()).toEqual({ fired: 0, skipped: 0 });
  clock = new Date(slot.getTime() + 5000);
  // A second app on the same database stands for another instance: the slot fires once.
  const other = await startOtherInstance(app, { now: () => clock });
  const [a, b] = await Promise.all([app.scheduler.tick(), other.scheduler.tick()]);
  expect(a.fired + b.fired).toBe(1);
  await other.runner.idle();
  await other.close();
  expect(await app.scheduler.tick()).toEqual({ fired: 0, skipped: 0 });

  const slots = await slotsOf(job.id);
  expect(slots.map((s) => [s.slot.toISOString(), s.state])).toEqual([[slot.toISOString(), 'fired']]);
  await app.runner.idle();
  const run = (await call(app, 'GET', `/api/v1/runs/${slots[0].runId}`, { headers: bearer })).body;
  expect(run).toMatchObject({ trigger: { type: 'schedule', id: 'trg_nightly', scheduledFor: slot.toISOString() }, prompt: `Task deps at ${slot.toISOString()} (Europe/Berlin)`, state: 'succeeded' });
});

it('records slots missed while nothing ran as skipped and fires only a recent one', async () => {
  const job = await scheduledJob({ cron: '*/10 * * * *', data: { task: 'poll' } });
  const base = Math.ceil(job.saved.getTime() / 600_000) * 600_000; // the first slot after saving
  clock = new Date(base + 3 * 600_000 + 2000); // four slots have passed; the newest 2 s ago
  expect(await app.scheduler.tick()).toEqual({ fired: 1, skipped: 3 });
  const slots = await slotsOf(job.id);
  expect(slots.map((s) => s.state)).toEqual(['skipped', 'skipped', 'skipped', 'fired']);
  expect(slots.filter((s) => s.runId).length).toBe(1);

  clock = new Date(base + 5 * 600_000 + 5 * 60_000); // the newest slot is 5 minutes old: missed too
  expect(await app.scheduler.tick()).toEqual({ fired: 0, skipped: 2 });
  await app.runner.idle();
});

it('fires nothing for a disabled job', async () => {
  const job = await scheduledJob({ cron: '* * * * *' });
  await call(app, 'POST', `/api/v1/jobs/${job.id}/disable`, { headers: bearer });
  clock = new Date(job.saved.getTime() + 3 * 60_000);
  await app.scheduler.tick();
  expect(await slotsOf(job.id)).toEqual([]);
});


/** A database that refuses new runs of one job, as a failing disk or a lost connection would: a real failure, injected. */
async function refuseRunsOf(jobId: string | null) {
  const db = app.database.db;
  const statements =
    provider === 'sqlite'
      ? jobId
        ? [`CREATE TRIGGER refuse_runs BEFORE INSERT ON "Run" WHEN NEW."jobId" = '${jobId}' BEGIN SELECT RAISE(ABORT, 'injected failure'); END`]
        : ['DROP TRIGGER refuse_runs']
      : jobId
        ? [
            `CREATE FUNCTION refuse_runs() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$ LANGUAGE plpgsql`,
            `CREATE TRIGGER refuse_runs BEFORE INSERT ON "Run" FOR EACH ROW WHEN (NEW."jobId" = '${jobId}') EXECUTE FUNCTION refuse_runs()`,
          ]
        : ['DROP TRIGGER refuse_runs ON "Run"', 'DROP FUNCTION refuse_runs()'];
  for (const statement of statements) await db.$executeRawUnsafe(statement);
}

it('gives a slot back when its run could not be started, tries it again at the next tick, and ticks the other triggers', async () => {
  const failing = await scheduledJob({ cron: '*/10 * * * *', data: { task: 'first' } });
  const other = await scheduledJob({ cron: '*/10 * * * *', data: { task: 'second' } });
  const base = Math.ceil(Math.max(failing.saved.getTime(), other.saved.getTime()) / 600_000) * 600_000;
  clock = new Date(base + 2000);

  // The failing job's run is refused; the other trigger still fires in the same tick.
  await refuseRunsOf(failing.id);
  try {
    expect(await app.scheduler.tick()).toEqual({ fired: 1, skipped: 0 });
  } finally {
    await refuseRunsOf(null);
  }
  expect(await slotsOf(failing.id)).toEqual([]);
  expect((await slotsOf(other.id)).map((s) => s.state)).toEqual(['fired']);

  clock = new Date(base + 12_000); // the next tick, within the grace period
  expect(await app.scheduler.tick()).toEqual({ fired: 1, skipped: 0 });
  for (const job of [failing, other]) {
    const slots = await slotsOf(job.id);
    expect(slots.map((s) => [s.slot.toISOString(), s.state, typeof s.runId])).toEqual([[new Date(base).toISOString(), 'fired', 'string']]);
  }
  await app.runner.idle();
});

it('fires a daily slot once on the days the clocks change: a time that does not exist moves on, one that comes twice fires once', async () => {
  const job = await scheduledJob({ cron: '30 2 * * *', timezone: 'Europe/Berlin', data: { task: 'nightly' } });
  // The other tests' jobs would tick through a year of their slots too: they rest.
  await app.database.db.job.updateMany({ where: { id: { not: job.id } }, data: { enabled: false } });
  const firedAfterTick = async (iso: string) => {
    clock = new Date(new Date(iso).getTime() + 5000);
    await app.scheduler.tick();
    return (await slotsOf(job.id)).filter((s) => s.state === 'fired').map((s) => s.slot.toISOString());
  };
  // Next year's last Sundays of March and October (UTC `hour`:`minute`, `daysAfter` later), whatever year the tests run.
  const year = clock.getUTCFullYear() + 1;
  const lastSunday = (month: number, hour: number, minute: number, daysAfter = 0) => {
    const lastDay = new Date(Date.UTC(year, month + 1, 0));
    return new Date(Date.UTC(year, month, lastDay.getUTCDate() - lastDay.getUTCDay() + daysAfter, hour, minute)).toISOString();
  };
  // In March Berlin's clocks jump from 02:00 to 03:00, so 02:30 never comes; the slot is 03:00 CEST.
  const spring = lastSunday(2, 1, 0);
  const springNext = lastSunday(2, 0, 30, 1); // 02:30 CEST
  expect(await firedAfterTick(spring)).toEqual([spring]);
  expect((await firedAfterTick(springNext)).at(-1)).toBe(springNext);
  // In October 02:30 comes twice (CEST, then CET); it fires the first time only.
  const autumn = lastSunday(9, 0, 30);
  const autumnNext = lastSunday(9, 1, 30, 1); // 02:30 CET
  expect((await firedAfterTick(autumn)).at(-1)).toBe(autumn);
  expect((await firedAfterTick(lastSunday(9, 1, 30))).at(-1)).toBe(autumn);
  expect(await firedAfterTick(autumnNext)).toEqual([spring, springNext, autumn, autumnNext]);
  await app.runner.idle();
});

it('records only the newest slots after a long outage', async () => {
  const job = await scheduledJob({ cron: '* * * * *', data: { task: 'minutely' } });
  await app.database.db.job.updateMany({ where: { id: { not: job.id } }, data: { enabled: false } });
  clock = new Date(job.saved.getTime() + 365 * 24 * 3600 * 1000); // a year of minutes missed
  expect(await app.scheduler.tick()).toEqual({ fired: 1, skipped: 99 });
  const slots = await slotsOf(job.id);
  expect(slots).toHaveLength(100);
  expect(slots.at(-1)!.slot.getTime()).toBe(Math.floor(clock.getTime() / 60_000) * 60_000);
  await app.runner.idle();
});
