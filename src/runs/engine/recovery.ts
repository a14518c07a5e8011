// Recovery: what instances that are gone left behind. Their active runs end as interrupted (or are tried
// again by the job's retry policy), every job with queued runs is dispatched in case its dispatch went with
// them, executions here of runs stopped unheard end, and what executors hold for runs that are over is
// removed.
import type { TenantDb } from '../../db/tenant-scope';
import type { Executor, Outcome } from '../../integrations/executor';
import type { FlowControl } from '../../jobs/flow-control-fns';
import type { JobsService } from '../../jobs/jobs-service';
import { stateUse } from '../agent-sessions';
import { createRunsRepo } from '../runs-repo';
import type { RunsSweeps } from '../runs-sweeps';
import { ending } from './admission';
import { INTERRUPTED, isStoppable, isTerminal, type Refused, type RunState, type Transition } from './lifecycle';

export interface RecoveryDeps {
  tenantDb: (tenantId: string) => TenantDb;
  jobs: Pick<JobsService, 'settings'>;
  executors: Partial<Record<'local' | 'vmhost' | 'docker', Executor>>;
  /** Active runs of instances that are gone, and jobs with queued runs, across tenants. */
  sweeps: Pick<RunsSweeps, 'orphaned' | 'queuedJobs'>;
  /** The runs executing here. */
  executions: ReadonlyMap<string, { tenantId: string; stop(): void }>;
  announce(tenantId: string, jobId: string, runId: string, move: Transition | Refused): Promise<void>;
  dispatch(tenantId: string, jobId: string): void;
}

export function createRecovery({ tenantDb, jobs, executors, sweeps, executions, announce, dispatch }: RecoveryDeps) {
  return {
    /**
     * Ends the runs that instances now gone left active (their processes ended with them, or are ended
     * here: a container, a VM) and dispatches every job with queued runs, in case its dispatch went with an
     * instance. At start, and then now and then on one instance of those sharing the database.
     */
    async recover({ othersGone = false } = {}) {
      const orphans = await sweeps.orphaned({ othersGone });
      for (const run of orphans) {
        if (run.executorRef) await executors[run.executorRef.split(':')[0] as keyof typeof executors]?.reap(run.executorRef, run.id);
        const db = tenantDb(run.tenantId);
        // A run its instance lost is an infrastructure failure: the job's retry policy may try it again.
        const retry = run.state === 'canceling' ? undefined : ((await jobs.settings(db, run.jobId))?.flowControl as FlowControl | null)?.retry;
        const lost: Outcome = { state: 'failed', error: INTERRUPTED, cause: 'infrastructure' };
        const tries = { jobId: run.jobId, attempt: run.attempt, retry };
        const move = await createRunsRepo(db).advance(run.id, ending(lost, tries, { type: 'lost' }), run.state);
        await announce(run.tenantId, run.jobId, run.id, move);
      }
      const queued = await sweeps.queuedJobs();
      for (const { tenantId, jobId } of queued) dispatch(tenantId, jobId);
      return { interrupted: orphans.length, jobsWithQueuedRuns: queued.length };
    },

    /** After a time of hearing nothing from the other instances: executions of runs stopped meanwhile end. */
    async recheckExecutions() {
      for (const [runId, execution] of executions) {
        const run = await createRunsRepo(tenantDb(execution.tenantId)).find(runId);
        if (!run || !isStoppable(run.state)) execution.stop();
      }
    },

    /**
     * Removes what executors hold for runs that are over and not executing here (containers left by a
     * server killed before it recorded them), and the agents' kept state that no run uses any more (its
     * runs deleted by retention); at start, after `recover`, and now and then.
     */
    async sweepLeftovers(): Promise<number> {
      const isOver = async (tenantId: string, runId: string) => {
        if (executions.has(runId)) return false;
        const run = await createRunsRepo(tenantDb(tenantId)).find(runId);
        return !run || isTerminal(run.state as RunState);
      };
      const used = stateUse(tenantDb);
      let removed = 0;
      for (const executor of Object.values(executors)) removed += ((await executor.sweep?.(isOver)) ?? 0) + ((await executor.sessionStates?.sweep(used)) ?? 0);
      return removed;
    },
  };
}
