// The deployment's figures for the metrics' gauges, read across tenants from the raw client (an operator's
// view; nothing of it reaches a tenant): a handful of statements over indexed columns, once per scrape.
import type { Db } from '../db/client';
import { UNFINISHED } from '../runs/engine/lifecycle';
import type { DeploymentFigures } from './metrics';

const secondsSince = (at: Date | null | undefined, now: number) => (at ? Math.max(0, (now - at.getTime()) / 1000) : 0);

export function deploymentFigures(db: Db): () => Promise<DeploymentFigures> {
  return async () => {
    const began = process.hrtime.bigint();
    await db.$queryRawUnsafe('SELECT 1');
    const databaseSeconds = Number(process.hrtime.bigint() - began) / 1e9;
    const [byState, oldestQueued, oldestUnevaluated, pendingEventDeliveries] = await Promise.all([
      db.run.groupBy({ by: ['state'], where: { state: { in: [...UNFINISHED] } }, _count: { _all: true } }),
      db.run.findFirst({ where: { state: 'queued' }, orderBy: { id: 'asc' }, select: { createdAt: true } }),
      db.webhookActivity.findFirst({ where: { evaluatedAt: null }, orderBy: { receivedAt: 'asc' }, select: { receivedAt: true } }),
      db.eventDelivery.count({ where: { state: 'pending' } }),
    ]);
    const runsByState = Object.fromEntries(UNFINISHED.map((state) => [state, 0]));
    for (const row of byState) runsByState[row.state] = row._count._all;
    const now = Date.now();
    return {
      runsByState,
      queuedRuns: runsByState.queued ?? 0,
      oldestQueuedSeconds: secondsSince(oldestQueued?.createdAt, now),
      evaluationLagSeconds: secondsSince(oldestUnevaluated?.receivedAt, now),
      pendingEventDeliveries,
      databaseSeconds,
    };
  };
}
