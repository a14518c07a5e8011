// The events' work across tenants, the one file of src/events given the raw client.
import type { Db } from '../db/client';

/** Most deliveries queued per sweep: the next sweep takes the rest. */
const DUE_PER_SWEEP = 1000;

export const eventsSweeps = (db: Db) => ({
  /** Deletes up to `batch` finished deliveries (delivered or failed) created before `before`; answers how many. */
  pruneDeliveries: async (before: Date, batch = 500) => {
    const ids = (await db.eventDelivery.findMany({ where: { createdAt: { lt: before }, state: { not: 'pending' } }, orderBy: { createdAt: 'asc' }, take: batch, select: { id: true } })).map((row) => row.id);
    return ids.length ? (await db.eventDelivery.deleteMany({ where: { id: { in: ids } } })).count : 0;
  },

  /** Deliveries whose next attempt is due, oldest first. */
  dueDeliveries: (at: Date) =>
    db.eventDelivery.findMany({ where: { state: 'pending', nextAttemptAt: { lte: at } }, select: { tenantId: true, id: true }, orderBy: { nextAttemptAt: 'asc' }, take: DUE_PER_SWEEP }),
});
