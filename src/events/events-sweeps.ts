// The events' work across tenants, the one file of src/events given the raw client.
import type { Db } from '../db/client';

/** Most deliveries queued per sweep: the next sweep takes the rest. */
const DUE_PER_SWEEP = 1000;

export const eventsSweeps = (db: Db) => ({
  /** Deliveries whose next attempt is due, oldest first. */
  dueDeliveries: (at: Date) =>
    db.eventDelivery.findMany({ where: { state: 'pending', nextAttemptAt: { lte: at } }, select: { tenantId: true, id: true }, orderBy: { nextAttemptAt: 'asc' }, take: DUE_PER_SWEEP }),
});
