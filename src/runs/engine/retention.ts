// Retention: what the operator keeps (FLOWS_RETENTION_DAYS, FLOWS_RETENTION_MAX_RUNS_PER_JOB) and nothing
// more, pruned in small paced batches beside the work of intake.
import type { Config } from '../../config';
import { createPacing } from '../../lib/pacing';
import type { RunsSweeps } from '../runs-sweeps';

/**
 * How long a turn of pruning spends on each kind of record, at most: a turn stays well
 * inside its minute, and a backlog goes on at the next.
 */
const PRUNE_SLICE_MS = { runs: 10_000, activity: 5_000, deliveries: 5_000, refusals: 2_000 };
/** While deliveries arrive faster than the loop can take, pruning takes at most this share of it. */
const PRUNE_SHARE = 0.1;

/**
 * What the operator keeps (FLOWS_RETENTION_DAYS, FLOWS_RETENTION_MAX_RUNS_PER_JOB): each turn deletes, in
 * small batches, finished runs with their traces, webhook activity, refused deliveries and finished event
 * deliveries older than the days kept, finished runs beyond a job's newest ones, and refused deliveries
 * beyond a source's newest ones (whatever the days kept). Each batch waits its turn of the event loop,
 * and yields to intake as evaluation does, so that requests are answered while a backlog is pruned.
 */
export function createRetention({
  config,
  runs,
  webhooks,
  events,
  intakeBusy,
}: {
  config: Config['retention'];
  runs: Pick<RunsSweeps, 'pruneRuns'>;
  /** Webhook activity and refused deliveries older than `before`, a batch at a time; refusals beyond a source's newest kept. */
  webhooks: { pruneActivity(before: Date, batch: number): Promise<number>; pruneOldRefusals(before: Date, batch: number): Promise<number>; pruneCrowdedRefusals(): Promise<number> };
  /** Finished event deliveries older than `before`, a batch at a time. */
  events: { pruneDeliveries(before: Date, batch: number): Promise<number> };
  intakeBusy: () => boolean;
}) {
  const { step } = createPacing({ share: PRUNE_SHARE, foregroundBusy: intakeBusy });
  const batches = async (prune: () => Promise<number>, size: number, sliceMs: number) => {
    const until = Date.now() + sliceMs;
    let removed = 0;
    for (let count = size; count === size && Date.now() < until; ) {
      count = await step(prune);
      removed += count;
    }
    return removed;
  };
  return {
    async prune(at = new Date()): Promise<{ runs: number; activity: number; deliveries: number; refusals: number }> {
      const before = config.days > 0 ? new Date(at.getTime() - config.days * 86_400_000) : null;
      return {
        runs: await runs.pruneRuns({ before, maxPerJob: config.maxRunsPerJob, until: Date.now() + PRUNE_SLICE_MS.runs, step }),
        activity: before ? await batches(() => webhooks.pruneActivity(before, 500), 500, PRUNE_SLICE_MS.activity) : 0,
        deliveries: before ? await batches(() => events.pruneDeliveries(before, 500), 500, PRUNE_SLICE_MS.deliveries) : 0,
        refusals: (before ? await batches(() => webhooks.pruneOldRefusals(before, 500), 500, PRUNE_SLICE_MS.refusals) : 0) + (await step(() => webhooks.pruneCrowdedRefusals())),
      };
    },
  };
}
