// Runs in the background, from the engine's parts (src/runs/engine/): dispatch claims a job's queued runs
// while it has free slots, execution runs each on its target and records its outcome, recovery ends what
// instances that are gone left active and starts the queues. The runner adds stops and shutdown.
import type { TenantDb } from '../db/tenant-scope';
import type { JobsService } from '../jobs/jobs-service';
import type { WorkQueue } from '../lib/work-queue';
import { createDispatch } from './engine/dispatch';
import { createExecution, type ExecuteDeps } from './engine/execute';
import { createRecovery, type RecoveryDeps } from './engine/recovery';
import { transition, type RunState, type Transition } from './engine/lifecycle';
import { createRunsRepo } from './runs-repo';

export type { Executed } from './engine/execute';

export interface RunnerDeps extends Omit<ExecuteDeps, 'announce' | 'dispatch' | 'closed' | 'jobs'>, Pick<RecoveryDeps, 'sweeps'> {
  tenantDb: (tenantId: string) => TenantDb;
  jobs: Pick<JobsService, 'settings' | 'live' | 'sessionKey' | 'renderWorkspace'>;
  queue: WorkQueue;
  /** The queue of this process, for dispatches now (dispatch.ts); the shared queue when not given. */
  local?: WorkQueue;
  /** This process among the instances sharing the database: the runs it executes carry it. */
  instanceId: string;
  /** Tells the other instances a run was stopped, for the one that executes it (PostgreSQL). */
  announceStop?(runId: string): void;
  /** A run started (`running`) or finished (its terminal state): outbound events. */
  notify(tenantId: string, event: 'started' | RunState, runId: string): void;
}

export function createRunner({ tenantDb, jobs, queue, local = queue, instanceId, sweeps, announceStop, notify, ...executing }: RunnerDeps) {
  let shuttingDown = false;
  const closed = () => shuttingDown;
  const { dispatch, announce } = createDispatch({ tenantDb, jobs, queue, local, instanceId, notify, closed, start: (db, job, run) => void execution.execute(db, job, run) });
  const execution = createExecution({ ...executing, jobs, announce, dispatch, closed });
  const { executions } = execution;
  const recovery = createRecovery({ tenantDb, jobs, executors: executing.executors, sweeps, executions, announce, dispatch });

  return {
    dispatch,
    ...recovery,

    /**
     * A stop was recorded (`canceling`): end the execution, or, when nothing executes the run here, finish it
     * and tell the other instances, one of which may be executing it.
     */
    async cancel(db: TenantDb, runId: string, freedJobId: string | null) {
      const running = executions.get(runId);
      if (running) return running.stop();
      // Only a run still `canceling` ends here: one that moved on ended by its execution, wherever that was.
      const move = transition('canceling', { type: 'lost' }) as Transition;
      const moved = await createRunsRepo(db).apply(runId, move);
      if (moved) announceStop?.(runId);
      if (freedJobId) {
        const tenantId = db.$tenant().id;
        if (moved) await announce(tenantId, freedJobId, runId, move);
        dispatch(tenantId, freedJobId);
      }
    },

    /** Another instance stopped a run: its execution ends, if it is here. */
    stopped(runId: string) {
      executions.get(runId)?.stop();
    },

    /** On shutdown: active runs end as interrupted, with their processes; queued runs wait for the next start. */
    async shutdown() {
      shuttingDown = true;
      if (local !== queue) await local.stop();
      for (const running of executions.values()) running.stop();
      const deadline = Date.now() + 7_000;
      while (execution.executing() > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    },

    /** Resolves when no dispatch and no execution is in progress (tests). */
    async idle() {
      const queued = () => Promise.all([queue.idle(), local.idle()]);
      do {
        await queued();
        while (execution.executing() > 0) await new Promise((resolve) => setTimeout(resolve, 20));
        await queued();
      } while (execution.executing() > 0);
    },
  };
}

export type Runner = ReturnType<typeof createRunner>;
