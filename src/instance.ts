// What an instance does beside answering requests, from start to shutdown: it joins the instances sharing
// the database (its heartbeat), ends what instances that are gone left active, and takes its share of the
// repeating work; at shutdown it takes no more work, ends its own runs and leaves.
import type { App } from './app';
import { SWEEP_INTERVAL_MS, sweepExpired } from './auth/sweep';
import type { Config } from './config';
import type { Db } from './db/client';
import { SWEEP_MS as EVENT_SWEEP_MS } from './events/events-service';
import type { Logger } from './lib/logger';
import { TICK_MS } from './triggers/schedule-evaluation';

type Background = Pick<App, 'queue' | 'sweeps' | 'retention' | 'runner' | 'scheduler' | 'events' | 'webhooks' | 'changes' | 'tracing'>;

/** How often what is older than the operator keeps is pruned. */
const RETENTION_MS = 60_000;

export async function startBackground({ config, db, logger }: { config: Config; db: Db; logger: Logger }, { queue, sweeps, retention, runner, scheduler, events, webhooks }: Background) {
  // Beating before recovering: from now on the other instances leave this one's runs alone.
  await sweeps.join();
  // The embedded database serves one process: whatever another instance left active is over.
  const recovered = await runner.recover({ othersGone: config.databaseProvider === 'sqlite' });
  if (recovered.interrupted || recovered.jobsWithQueuedRuns) logger.info(recovered, 'runs found at start: active ones of stopped instances failed as interrupted, queued ones dispatched');
  webhooks.resumeEvaluation();
  // Repeating work, done by one of the instances sharing the database each period.
  queue.every('schedule-tick', TICK_MS, async () => void (await scheduler.tick()));
  queue.every('event-sweep', EVENT_SWEEP_MS, () => events.sweep());
  queue.every('run-recovery', (config.instanceLapseSeconds * 1000) / 3, async () => {
    const { interrupted } = await runner.recover();
    if (interrupted) logger.warn({ interrupted }, 'runs of an instance that stopped beating failed as interrupted');
    await sweeps.forgetLapsed();
  });
  queue.every('expired-records', SWEEP_INTERVAL_MS, async () => logger.debug(await sweepExpired(db), 'swept expired records'));
  queue.every('retention', RETENTION_MS, async () => {
    const pruned = await retention.prune();
    if (pruned.runs || pruned.activity || pruned.deliveries || pruned.refusals) logger.info(pruned, 'pruned what is older than the retention settings keep');
  });
}

/** No new work is taken, then this instance's runs end (failed as interrupted), then it leaves. */
export async function stopBackground({ queue, runner, sweeps, changes, tracing }: Background) {
  await queue.stop();
  await runner.shutdown();
  await sweeps.leave();
  await changes?.close();
  await tracing.shutdown();
}
