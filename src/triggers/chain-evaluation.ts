// Chains: when a run ends, the run triggers that watch its job decide on it (the rule: acts-fns.ts) and the
// ones that act start a run of their job, once per trigger and finished run. Fails closed: conditions that
// cannot be evaluated, or templates that cannot render with the run, start nothing and are logged.
import type { TenantDb } from '../db/tenant-scope';
import type { Logger } from '../lib/logger';
import type { WorkQueue } from '../lib/work-queue';
import { decideChain } from './acts-fns';
import type { LiveTriggers, StartTriggered, TriggerJob } from './trigger-starts';

/** A finished run as run triggers see it: its job, its state and the run as the API shows it. */
export interface FinishedRun {
  jobId: string;
  state: string;
  view: Record<string, unknown>;
}

export interface ChainDeps<J extends TriggerJob> {
  queue: WorkQueue;
  tenantDb: (tenantId: string) => TenantDb;
  live(db: TenantDb): Promise<LiveTriggers<J>>;
  finishedRun(db: TenantDb, runId: string): Promise<FinishedRun | null>;
  start: StartTriggered<J>;
  logger: Logger;
}

/** Evaluates the run triggers of every run that ends (the queue's `run-finished` messages). */
export function createChainEvaluation<J extends TriggerJob>({ queue, tenantDb, live, finishedRun, start, logger }: ChainDeps<J>) {
  // A run's end is sent only when a run trigger watches its job (runs/engine/dispatch.ts).
  async function evaluate({ tenantId, runId }: { tenantId: string; runId: string }) {
    const db = tenantDb(tenantId);
    const triggers = await live(db);
    const finished = await finishedRun(db, runId);
    if (!finished) return;
    for (const trigger of triggers.watching(finished.jobId)) {
      const outcome = decideChain(trigger.config, finished, finished.view);
      if (outcome?.decision !== 'match') {
        if (outcome?.decision === 'error') logger.warn({ runId, triggerId: trigger.id, error: outcome.error }, 'run trigger conditions could not be evaluated');
        continue;
      }
      const started = await start(db, trigger.job, { type: 'run', id: trigger.id }, runId, finished.view);
      if (started.invalidTemplate !== undefined) logger.warn({ runId, triggerId: trigger.id, error: started.invalidTemplate }, 'a chained run could not be started');
    }
  }

  queue.handle('run-finished', (payload) => evaluate(payload as { tenantId: string; runId: string }));
}
