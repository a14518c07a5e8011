// Event subscriptions and deliveries in the database, through the tenant-bound client.
import type { Prisma } from '../../generated/prisma/sqlite/client';
import { toJson } from '../db/json';
import type { TenantDb } from '../db/tenant-scope';
import type { KeysetRequest } from '../http/pagination';

export interface SubscriptionFields {
  url?: string;
  events?: string[];
  description?: string | null;
  enabled?: boolean;
  disabledReason?: string | null;
  secretCiphertext?: string;
}

export function createEventsRepo(db: TenantDb) {
  return {
    createSubscription: (data: SubscriptionFields & { id: string; url: string; events: string[]; secretCiphertext: string }) =>
      db.eventSubscription.create({ data: { ...data, events: toJson(data.events) } as Prisma.EventSubscriptionUncheckedCreateInput }),
    findSubscription: (id: string) => db.eventSubscription.findFirst({ where: { id } }),
    listSubscriptions: ({ limit, after }: KeysetRequest<string>) =>
      db.eventSubscription.findMany({ where: { id: after === undefined ? undefined : { lt: after } }, orderBy: { id: 'desc' }, take: limit + 1 }),
    enabledSubscriptions: () => db.eventSubscription.findMany({ where: { enabled: true } }),
    updateSubscription: async (id: string, data: SubscriptionFields) => {
      const { count } = await db.eventSubscription.updateMany({ where: { id }, data: { ...data, events: data.events && toJson(data.events) } });
      return count > 0 ? db.eventSubscription.findFirst({ where: { id } }) : null;
    },
    deleteSubscription: async (id: string) => (await db.eventSubscription.deleteMany({ where: { id } })).count > 0,

    createDeliveries: (rows: { id: string; subscriptionId: string; webhookId: string; eventType: string; payload: unknown; nextAttemptAt: Date }[]) =>
      db.eventDelivery.createMany({ data: rows.map((row) => ({ ...row, payload: toJson(row.payload), state: 'pending' })) as Prisma.EventDeliveryCreateManyInput[] }),
    findPending: (id: string) => db.eventDelivery.findFirst({ where: { id, state: 'pending' } }),
    findDelivery: (subscriptionId: string, id: string) => db.eventDelivery.findFirst({ where: { id, subscriptionId } }),
    listDeliveries: (subscriptionId: string, { limit, after }: KeysetRequest<string>) =>
      db.eventDelivery.findMany({ where: { subscriptionId, id: after === undefined ? undefined : { lt: after } }, orderBy: { id: 'desc' }, take: limit + 1 }),
    updateDelivery: (id: string, data: { state?: string; attempts?: number; lastStatusCode?: number | null; lastError?: string | null; nextAttemptAt?: Date | null }) =>
      db.eventDelivery.updateMany({ where: { id }, data }),
    failPendingOf: (subscriptionId: string) => db.eventDelivery.updateMany({ where: { subscriptionId, state: 'pending' }, data: { state: 'failed', nextAttemptAt: null } }),
  };
}

export type EventsRepo = ReturnType<typeof createEventsRepo>;
export type SubscriptionRow = NonNullable<Awaited<ReturnType<EventsRepo['findSubscription']>>>;
export type DeliveryRow = NonNullable<Awaited<ReturnType<EventsRepo['findDelivery']>>>;
