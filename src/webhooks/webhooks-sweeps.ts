// The webhooks' work across tenants, the one file of src/webhooks given the raw client: intake finds a
// delivery's source (and with it its tenant) by the id in its URL, evaluation finds what still waits, and
// retention prunes activity and refused deliveries.
import type { Db } from '../db/client';

export const webhooksSweeps = (db: Db) => ({
  /** Deletes up to `batch` deliveries received before `before` (evaluated ones only); answers how many. */
  pruneActivity: async (before: Date, batch = 500) => {
    const ids = (await db.webhookActivity.findMany({ where: { receivedAt: { lt: before }, evaluatedAt: { not: null } }, orderBy: { receivedAt: 'asc' }, take: batch, select: { id: true } })).map((row) => row.id);
    return ids.length ? (await db.webhookActivity.deleteMany({ where: { id: { in: ids } } })).count : 0;
  },

  /** Deletes up to `batch` refused deliveries received before `before`; answers how many. */
  pruneOldRefusals: async (before: Date, batch = 500) => {
    const ids = (await db.webhookRefusal.findMany({ where: { receivedAt: { lt: before } }, orderBy: { receivedAt: 'asc' }, take: batch, select: { id: true } })).map((row) => row.id);
    return ids.length ? (await db.webhookRefusal.deleteMany({ where: { id: { in: ids } } })).count : 0;
  },

  /**
   * Deletes the refused deliveries of each source beyond its newest `keep`; answers how many. Intake
   * records a few a minute at most, so a turn each minute keeps a source near `keep`.
   */
  pruneCrowdedRefusals: async (keep: number) => {
    const crowded = await db.webhookRefusal.groupBy({ by: ['tenantId', 'sourceId'], having: { id: { _count: { gt: keep } } } });
    let removed = 0;
    for (const { tenantId, sourceId } of crowded) {
      const [edge] = await db.webhookRefusal.findMany({ where: { tenantId, sourceId }, orderBy: { id: 'desc' }, skip: keep, take: 1, select: { id: true } });
      if (edge) removed += (await db.webhookRefusal.deleteMany({ where: { tenantId, sourceId, id: { lte: edge.id } } })).count;
    }
    return removed;
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
