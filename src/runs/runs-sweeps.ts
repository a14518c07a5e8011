// The runs' work across tenants, and the one file of src/runs given the raw client: each instance's
// heartbeat, the active runs of instances that are gone (their processes ended with them), and the jobs
// with queued runs (whose dispatch may have gone with an instance).
import type { Db } from '../db/client';
import type { Logger } from '../lib/logger';
import { ACTIVE, UNFINISHED, type RunState } from './engine/lifecycle';

export interface UnfinishedRun {
  tenantId: string;
  id: string;
  jobId: string;
  state: RunState;
  executorRef: string | null;
  attempt: number;
}

/** Runs one batch of background work, as the caller paces it. */
export type Step = <T>(work: () => Promise<T>) => Promise<T>;

/** Most orphaned runs ended per sweep: the next sweep takes the rest. */
const ORPHANS_PER_SWEEP = 500;

/** Where the newest instance still beating serves; null when none is (or none said). */
export async function servingUrl(db: Db, lapseMs: number, now = new Date()): Promise<string | null> {
  const newest = await db.instance.findFirst({ where: { heartbeatAt: { gte: new Date(now.getTime() - lapseMs) }, url: { not: null } }, orderBy: { startedAt: 'desc' } });
  return newest?.url ?? null;
}

/** `url`: where this instance serves, kept on its row for `servingUrl`. */
export function createRunsSweeps({ db, instanceId, url = null, lapseMs, now, logger }: { db: Db; instanceId: string; url?: string | null; lapseMs: number; now: () => Date; logger: Logger }) {
  const lapsedBefore = () => new Date(now().getTime() - lapseMs);
  let timer: NodeJS.Timeout | null = null;
  /** Since when this instance's beats have all landed; null after one failed (the database was out of reach). */
  let beatingSince: Date | null = null;
  const beat = async () => {
    const at = now();
    try {
      await db.instance.upsert({ where: { id: instanceId }, create: { id: instanceId, heartbeatAt: at, url }, update: { heartbeatAt: at } });
      beatingSince ??= at;
    } catch (err) {
      beatingSince = null;
      throw err;
    }
  };
  /**
   * Whether this instance may judge the others: it has beaten without a miss for a whole lapse. Just started,
   * or back from losing the database (which the others may have lost too), it waits for their next beats.
   */
  const mayJudge = () => timer === null || (beatingSince !== null && now().getTime() - beatingSince.getTime() >= lapseMs);

  return {
    instanceId,

    /** Beats now and then every third of the lapse, until `leave`. */
    async join() {
      await beat();
      timer ??= setInterval(() => beat().catch((err) => logger.warn({ err }, 'the instance heartbeat failed')), Math.max(lapseMs / 3, 500)).unref();
    },

    /** Stops beating and says so: the others need not wait for the lapse (this instance's runs ended first). */
    async leave() {
      if (timer) clearInterval(timer);
      timer = null;
      await db.instance.deleteMany({ where: { id: instanceId } });
    },

    /**
     * Active runs whose instance is gone: its heartbeat lapsed, it left, or it never beat. With `othersGone`
     * (the embedded database, which one process serves) every instance but this one is gone. None while
     * this instance may not judge (see mayJudge).
     */
    async orphaned({ othersGone = false } = {}): Promise<UnfinishedRun[]> {
      if (!othersGone && !mayJudge()) return [];
      const live = othersGone ? [] : await db.instance.findMany({ where: { heartbeatAt: { gte: lapsedBefore() } }, select: { id: true } });
      const owners = [instanceId, ...live.map((instance) => instance.id)];
      const runs = await db.run.findMany({
        where: { state: { in: [...ACTIVE] }, OR: [{ ownerId: null }, { ownerId: { notIn: owners } }] },
        select: { tenantId: true, id: true, jobId: true, state: true, executorRef: true, attempt: true },
        orderBy: { id: 'asc' },
        take: ORPHANS_PER_SWEEP,
      });
      return runs as UnfinishedRun[];
    },

    /** Forgets instances long gone (their runs were ended by `orphaned`'s callers). */
    forgetLapsed: () => db.instance.deleteMany({ where: { heartbeatAt: { lt: new Date(now().getTime() - 10 * lapseMs) } } }),

    /**
     * Deletes finished runs (and their traces) that finished before `before`, and those beyond the newest
     * `maxPerJob` of their job, in batches of `batch` (each its own short statements, and each a `step`, which
     * lets requests in between), batch after batch until the time `until` (epoch ms) has come; never an
     * unfinished run, nor one an unfinished run replays or was started by. Answers how many it deleted.
     */
    async pruneRuns({ before, maxPerJob, batch = 100, until, step = (work) => work() }: { before: Date | null; maxPerJob: number; batch?: number; until: number; step?: Step }): Promise<number> {
      let removed = 0;
      const drop = async (candidates: { id: string; tenantId: string }[]) => {
        const ids = candidates.map((run) => run.id);
        const keeping = new Set(
          (
            await db.run.findMany({
              where: { state: { in: [...UNFINISHED] }, OR: [{ replayOf: { in: ids } }, ...ids.map((id) => ({ triggerType: 'run', startKey: { endsWith: `:${id}` } }))] },
              select: { replayOf: true, startKey: true },
            })
          ).flatMap((run) => [run.replayOf, run.startKey?.split(':').slice(2).join(':')]),
        );
        const gone = ids.filter((id) => !keeping.has(id));
        if (!gone.length) return;
        await db.runEvent.deleteMany({ where: { runId: { in: gone } } });
        removed += (await db.run.deleteMany({ where: { id: { in: gone }, finishedAt: { not: null } } })).count;
      };
      /** One batch, as a step: the candidates `find` answers, dropped; answers them. */
      const batchOf = <T extends { id: string; tenantId: string }>(find: () => Promise<T[]>) =>
        step(async () => {
          const found = await find();
          if (found.length) await drop(found);
          return found;
        });
      // By age: oldest first, on past the ones kept. The cursor is one range of the (finishedAt, id) index,
      // read in its order: an OR of two ranges would have the database sort every old run for each batch.
      let cursor: { finishedAt: Date; id: string } | null = null;
      while (before && Date.now() < until) {
        const after: { finishedAt: Date; id: string } | null = cursor;
        const candidates: { id: string; tenantId: string; finishedAt: Date | null }[] = await batchOf(() =>
          db.run.findMany({
            where: { finishedAt: { lt: before, ...(after && { gte: after.finishedAt }) }, ...(after && { NOT: { finishedAt: after.finishedAt, id: { lte: after.id } } }) },
            orderBy: [{ finishedAt: 'asc' }, { id: 'asc' }],
            take: batch,
            select: { id: true, tenantId: true, finishedAt: true },
          }),
        );
        if (!candidates.length) break;
        const last = candidates[candidates.length - 1];
        cursor = { finishedAt: last.finishedAt!, id: last.id };
        if (candidates.length < batch) break;
      }
      // By count: the finished runs of a job older than its newest `maxPerJob` runs. Each job's edge is a
      // walk of its own index entries, not a count over every run there is.
      if (maxPerJob > 0 && Date.now() < until) {
        for (const { tenantId, id: jobId } of await db.job.findMany({ select: { tenantId: true, id: true } })) {
          const [edge] = await step(() => db.run.findMany({ where: { tenantId, jobId }, orderBy: { id: 'desc' }, skip: maxPerJob, take: 1, select: { id: true } }));
          while (edge && Date.now() < until) {
            const before = removed;
            const candidates = await batchOf(() => db.run.findMany({ where: { tenantId, jobId, id: { lte: edge.id }, finishedAt: { not: null } }, orderBy: { id: 'asc' }, take: batch, select: { id: true, tenantId: true } }));
            if (candidates.length < batch || removed === before) break;
          }
          if (Date.now() >= until) break;
        }
      }
      return removed;
    },

    /** The jobs that have queued runs, across tenants. */
    queuedJobs: () => db.run.findMany({ where: { state: 'queued' }, distinct: ['tenantId', 'jobId'], select: { tenantId: true, jobId: true } }),
  };
}

export type RunsSweeps = ReturnType<typeof createRunsSweeps>;
