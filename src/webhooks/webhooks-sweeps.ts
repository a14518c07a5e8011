// The webhooks' work across tenants, the one file of src/webhooks given the raw client: intake finds a
// delivery's source (and with it its tenant) by the id in its URL, and evaluation finds what still waits.
import type { Db } from '../db/client';

export const webhooksSweeps = (db: Db) => ({
  /** Deletes up to `batch` deliveries received before `before` (evaluated ones only); answers how many. */
  pruneActivity: async (before: Date, batch = 500) => {
    const ids = (await db.webhookActivity.findMany({ where: { receivedAt: { lt: before }, evaluatedAt: { not: null } }, orderBy: { receivedAt: 'asc' }, take: batch, select: { id: true } })).map((row) => row.id);
    return ids.length ? (await db.webhookActivity.deleteMany({ where: { id: { in: ids } } })).count : 0;
  },

  sourceById: (id: string) => db.webhookSource.findFirst({ where: { id, deletedAt: null } }),

  /** Deliveries not yet evaluated, oldest first, after the id `after`. */
  pendingDeliveries: (after: string | undefined, take: number) =>
    db.webhookActivity.findMany({
      where: { evaluatedAt: null, id: after === undefined ? undefined : { gt: after } },
      orderBy: { id: 'asc' },
      take,
      select: { tenantId: true, id: true, sourceId: true, event: true, action: true, context: true },
    }),
});
