// The runs' work across tenants, and the one file of src/runs given the raw client: each instance's
// heartbeat, the active runs of instances that are gone (their processes ended with them), and the jobs
// with queued runs (whose dispatch may have gone with an instance).
import type { Db } from '../db/client';
import type { Logger } from '../lib/logger';
import { ACTIVE_STATES, type RunState } from './runs-fns';

export interface UnfinishedRun {
  tenantId: string;
  id: string;
  jobId: string;
  state: RunState;
  executorRef: string | null;
  attempt: number;
}

/** Most orphaned runs ended per sweep: the next sweep takes the rest. */
const ORPHANS_PER_SWEEP = 500;

export function createRunsSweeps({ db, instanceId, lapseMs, now, logger }: { db: Db; instanceId: string; lapseMs: number; now: () => Date; logger: Logger }) {
  const lapsedBefore = () => new Date(now().getTime() - lapseMs);
  let timer: NodeJS.Timeout | null = null;
  /** Since when this instance's beats have all landed; null after one failed (the database was out of reach). */
  let beatingSince: Date | null = null;
  const beat = async () => {
    const at = now();
    try {
      await db.instance.upsert({ where: { id: instanceId }, create: { id: instanceId, heartbeatAt: at }, update: { heartbeatAt: at } });
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
        where: { state: { in: ACTIVE_STATES }, OR: [{ ownerId: null }, { ownerId: { notIn: owners } }] },
        select: { tenantId: true, id: true, jobId: true, state: true, executorRef: true, attempt: true },
        orderBy: { id: 'asc' },
        take: ORPHANS_PER_SWEEP,
      });
      return runs as UnfinishedRun[];
    },

    /** Forgets instances long gone (their runs were ended by `orphaned`'s callers). */
    forgetLapsed: () => db.instance.deleteMany({ where: { heartbeatAt: { lt: new Date(now().getTime() - 10 * lapseMs) } } }),

    /** The jobs that have queued runs, across tenants. */
    queuedJobs: () => db.run.findMany({ where: { state: 'queued' }, distinct: ['tenantId', 'jobId'], select: { tenantId: true, jobId: true } }),
  };
}

export type RunsSweeps = ReturnType<typeof createRunsSweeps>;
