// Dispatch: a job's queued runs are claimed, oldest first, while its `concurrencyLimit` (and its
// concurrency key's limit) has free slots, and each is handed to execution. Dispatch of a job goes through
// a work queue, one at a time per job in a process (across instances, the claim's lock keeps the slots
// exact). A dispatch for now stays in this process (`local`): any instance may claim any queued run, and
// each dispatches after what it changed itself (a run created, an execution ended, a stop), so a message
// in the shared queue would only cost statements; one for later (a retry's backoff, a debounce, a time in
// the queue running out) goes to the shared queue, which keeps it through a restart. Also who hears of a
// move: a run queued again is dispatched when its attempt may start, one that began or ended is announced.
import type { TenantDb } from '../../db/tenant-scope';
import type { FlowControl } from '../../jobs/flow-control-fns';
import type { JobRow, JobsService } from '../../jobs/jobs-service';
import type { WorkQueue } from '../../lib/work-queue';
import { createRunsRepo, type Claimed } from '../runs-repo';
import { isRefused, type Refused, type RunState, type Transition } from './lifecycle';

export interface DispatchDeps {
  tenantDb: (tenantId: string) => TenantDb;
  jobs: Pick<JobsService, 'settings' | 'live'>;
  /** The shared queue: dispatches for later, and chains. */
  queue: WorkQueue;
  /** The queue of this process, for dispatches now (the shared queue itself when it is in this process). */
  local: WorkQueue;
  /** This process among the instances sharing the database: the runs it claims carry it. */
  instanceId: string;
  /** A run started (`running`) or finished (its terminal state): outbound events. */
  notify(tenantId: string, event: 'started' | RunState, runId: string): void;
  /** Executes a claimed run (execute.ts). */
  start(db: TenantDb, job: JobRow, run: Claimed): void;
  /** The server is going down: no new run is claimed. */
  closed(): boolean;
}

export function createDispatch({ tenantDb, jobs, queue, local, instanceId, notify, start, closed }: DispatchDeps) {
  let dispatches = 0;

  const dispatch = (tenantId: string, jobId: string, delayMs?: number) =>
    (delayMs && delayMs > 0 ? queue : local).enqueue({ kind: 'dispatch', key: `${tenantId}:${jobId}`, payload: { tenantId, jobId }, delayMs });

  /**
   * A run reached a terminal state: the jobs whose run triggers watch its job may start
   * (triggers/chain-evaluation.ts). Most jobs are watched by none: their runs' ends send no message (a
   * catalog that cannot be read counts as watching).
   */
  const finished = async (tenantId: string, jobId: string, runId: string, state: RunState) => {
    notify(tenantId, state, runId);
    const watched = await jobs.live(tenantDb(tenantId)).then((live) => live.watching(jobId).length > 0, () => true);
    if (watched) queue.enqueue({ kind: 'run-finished', key: runId, payload: { tenantId, runId } });
  };

  /** Who hears of a move: a run queued again is dispatched when its attempt may start; one that began or ended is announced. */
  async function announce(tenantId: string, jobId: string, runId: string, move: Transition | Refused) {
    if (isRefused(move)) return;
    // A little after the attempt may start: a timer may fire a millisecond before the clock says it is due.
    if (move.to === 'queued' && move.columns.notBefore) dispatch(tenantId, jobId, move.columns.notBefore.getTime() - Date.now() + 20);
    if (move.notice === 'started') notify(tenantId, 'started', runId);
    if (move.notice === 'ended') await finished(tenantId, jobId, runId, move.to);
  }

  /** Ends the job's queued runs whose time in the queue (flowControl.ttl) is over, saying so in their trace. */
  async function expireOverdue(db: TenantDb, jobId: string) {
    const repo = createRunsRepo(db);
    for (const run of await repo.overdue(jobId, new Date())) {
      const waited = `${Math.round((run.expiresAt!.getTime() - run.createdAt.getTime()) / 1000)} s`;
      await announce(db.$tenant().id, jobId, run.id, await repo.advance(run.id, { type: 'expired', waited }, 'queued'));
    }
  }

  /** Ends the job's overdue queued runs, then starts queued runs while it has free slots. */
  async function fill({ tenantId, jobId }: { tenantId: string; jobId: string }) {
    if (closed()) return;
    const db = tenantDb(tenantId);
    const job = await jobs.settings(db, jobId);
    if (!job) return;
    const flowControl = job.flowControl as FlowControl | null;
    if (flowControl?.ttl) await expireOverdue(db, job.id);
    const limits = { limit: job.concurrencyLimit, keyLimit: flowControl?.concurrency?.limit ?? null, expiring: Boolean(flowControl?.ttl) };
    const claimed = await createRunsRepo(db).claim(job.id, limits, `${instanceId}:${++dispatches}`, instanceId);
    for (const run of claimed) start(db, job, run);
  }

  for (const on of new Set([queue, local])) on.handle('dispatch', (payload) => fill(payload as { tenantId: string; jobId: string }));

  return { dispatch, announce };
}
