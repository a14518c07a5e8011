// Outbound events: subscriptions of HTTPS endpoints to event types, and deliveries of each event to each
// subscription, signed per Standard Webhooks with a stable `webhook-id`, retried with backoff for 24 hours
// (a sweep finds the due ones, also after a restart), every attempt logged; 410 disables the subscription.
import type { components } from '../../generated/openapi';
import type { TenantDb } from '../db/tenant-scope';
import type { KeysetRequest } from '../http/pagination';
import { NotFound, ValidationFailed } from '../lib/errors';
import { newId } from '../lib/ids';
import { keptFor } from '../lib/kept';
import type { Logger } from '../lib/logger';
import type { Outbound } from '../lib/outbound';
import { newSigningSecret, type SecretBox } from '../lib/secrets';
import type { WorkQueue } from '../lib/work-queue';
import { runView } from '../runs/runs-fns';
import { createRunsRepo } from '../runs/runs-repo';
import { endpointProblem, nextAttemptAt, noAnswerReason, signedRequest } from './events-fns';
import { createEventsRepo, type DeliveryRow, type SubscriptionRow } from './events-repo';

type SubscriptionView = components['schemas']['EventSubscription'];
type SubscriptionWithSecret = components['schemas']['EventSubscriptionWithSecret'];
type SubscriptionCreate = components['schemas']['EventSubscriptionCreate'];
type SubscriptionUpdate = components['schemas']['EventSubscriptionUpdate'];
type DeliveryView = components['schemas']['EventDelivery'];
export type EventType = components['schemas']['EventType'];

/** An endpoint has this long to answer an attempt. */
const ATTEMPT_TIMEOUT_MS = 10_000;
export const SWEEP_MS = 5_000;
/** Subscriptions are read again after this long, so that every event does not cost a query. */
const SUBSCRIPTIONS_KEPT_MS = 5_000;

export interface EventsDeps {
  box: SecretBox;
  queue: WorkQueue;
  tenantDb: (tenantId: string) => TenantDb;
  /** Pending deliveries due by `at`, across tenants. */
  dueDeliveries(at: Date): Promise<{ tenantId: string; id: string }[]>;
  logger: Logger;
  /** Every attempt goes through it: endpoints on private addresses are refused unless the operator allows them. */
  outbound: Outbound;
  now?: () => Date;
  /** Told how each attempt went (metrics). */
  attempted?(outcome: 'delivered' | 'failed'): void;
}

const subscriptionNotFound = () => new NotFound('No such event subscription.');

function subscriptionView(row: SubscriptionRow): SubscriptionView {
  return {
    id: row.id,
    url: row.url,
    events: row.events as EventType[],
    description: row.description,
    enabled: row.enabled,
    disabledReason: row.disabledReason,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function deliveryView(row: DeliveryRow): DeliveryView {
  return {
    id: row.id,
    subscriptionId: row.subscriptionId,
    webhookId: row.webhookId,
    eventType: row.eventType as EventType,
    state: row.state as DeliveryView['state'],
    attempts: row.attempts,
    lastStatusCode: row.lastStatusCode,
    lastError: row.lastError,
    nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
  };
}

export function createEventsService({ box, queue, tenantDb, dueDeliveries, logger, outbound, now = () => new Date(), attempted = () => {} }: EventsDeps) {
  const kept = keptFor<SubscriptionRow[]>(SUBSCRIPTIONS_KEPT_MS);

  function checkUrl(url: string | undefined) {
    const problem = url === undefined ? null : (endpointProblem(url) ?? outbound.urlProblem(url));
    if (problem) throw new ValidationFailed(`\`url\` ${problem}.`);
  }

  const subscriptionsOf = (tenantId: string) => kept.get(tenantId, () => createEventsRepo(tenantDb(tenantId)).enabledSubscriptions());

  const attemptLater = (tenantId: string, deliveryId: string) => queue.enqueue({ kind: 'event-attempt', key: deliveryId, payload: { tenantId, deliveryId } });

  /** One event to every enabled subscription of the tenant that wants its type. */
  async function emit(tenantId: string, type: EventType, data: () => Promise<Record<string, unknown> | null>) {
    const subscriptions = (await subscriptionsOf(tenantId)).filter((row) => (row.events as string[]).includes(type));
    if (subscriptions.length === 0) return;
    const payload = await data();
    if (!payload) return;
    const at = now();
    const event = { type, timestamp: at.toISOString(), data: payload };
    const rows = subscriptions.map((subscription) => ({ id: newId('dlv'), subscriptionId: subscription.id, webhookId: newId('msg'), eventType: type, payload: event, nextAttemptAt: at }));
    await createEventsRepo(tenantDb(tenantId)).createDeliveries(rows);
    for (const row of rows) attemptLater(tenantId, row.id);
  }

  async function attempt({ tenantId, deliveryId }: { tenantId: string; deliveryId: string }) {
    const repo = createEventsRepo(tenantDb(tenantId));
    const delivery = await repo.findPending(deliveryId);
    if (!delivery) return;
    const subscription = await repo.findSubscription(delivery.subscriptionId);
    if (!subscription?.enabled) {
      await repo.updateDelivery(delivery.id, { state: 'failed', nextAttemptAt: null });
      return;
    }
    const at = now();
    const body = JSON.stringify(delivery.payload);
    let status: number | null = null;
    let error: string | null = null;
    try {
      const res = await outbound.fetch(subscription.url, {
        method: 'POST',
        headers: signedRequest(box.open(subscription.secretCiphertext), delivery.webhookId, body, at),
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
      });
      status = res.status;
      await res.body?.cancel();
    } catch (err) {
      error = noAnswerReason(err, ATTEMPT_TIMEOUT_MS);
      logger.info({ deliveryId, subscriptionId: subscription.id, error }, 'event delivery attempt got no answer');
    }
    const attempts = delivery.attempts + 1;
    logger.info({ deliveryId, subscriptionId: subscription.id, webhookId: delivery.webhookId, attempt: attempts, status }, 'event delivery attempt');
    const delivered = status !== null && status >= 200 && status < 300;
    attempted(delivered ? 'delivered' : 'failed');
    if (delivered) {
      await repo.updateDelivery(delivery.id, { state: 'succeeded', attempts, lastStatusCode: status, lastError: null, nextAttemptAt: null });
      return;
    }
    if (status === 410) {
      // The endpoint says it is gone for good: stop sending it anything.
      await repo.updateSubscription(subscription.id, { enabled: false, disabledReason: 'The endpoint answered 410 Gone.' });
      kept.forget(tenantId);
      await repo.updateDelivery(delivery.id, { state: 'failed', attempts, lastStatusCode: status, lastError: null, nextAttemptAt: null });
      await repo.failPendingOf(subscription.id);
      return;
    }
    const next = nextAttemptAt(delivery.createdAt, attempts, at);
    await repo.updateDelivery(delivery.id, { state: next ? 'pending' : 'failed', attempts, lastStatusCode: status, lastError: error, nextAttemptAt: next });
  }

  queue.handle('event-attempt', (payload) => attempt(payload as { tenantId: string; deliveryId: string }));

  async function foundSubscription(db: TenantDb, id: string) {
    const row = await createEventsRepo(db).findSubscription(id);
    if (!row) throw subscriptionNotFound();
    return row;
  }

  return {
    /** Run events carry the run as the API shows it. */
    emitRun(tenantId: string, type: EventType, runId: string) {
      void emit(tenantId, type, async () => {
        const run = await createRunsRepo(tenantDb(tenantId)).find(runId);
        return run && (runView(run) as unknown as Record<string, unknown>);
      }).catch((err) => logger.error({ err, runId, type }, 'emitting an event failed'));
    },

    emitWebhookReceived(tenantId: string, data: Record<string, unknown>) {
      void emit(tenantId, 'webhook.received', async () => data).catch((err) => logger.error({ err }, 'emitting an event failed'));
    },

    /** Queues every delivery whose next attempt is due (retries, and what a restart left pending). */
    async sweep() {
      for (const { tenantId, id } of await dueDeliveries(now())) attemptLater(tenantId, id);
    },

    async createSubscription(db: TenantDb, input: SubscriptionCreate): Promise<SubscriptionWithSecret> {
      checkUrl(input.url);
      const signingSecret = newSigningSecret();
      const row = await createEventsRepo(db).createSubscription({ id: newId('sub'), url: input.url, events: input.events, description: input.description ?? null, enabled: input.enabled ?? true, secretCiphertext: box.seal(signingSecret) });
      kept.forget(db.$tenant().id);
      return { ...subscriptionView(row), signingSecret };
    },
    async listSubscriptions(db: TenantDb, page: KeysetRequest<string>) {
      return (await createEventsRepo(db).listSubscriptions(page)).map(subscriptionView);
    },
    async getSubscription(db: TenantDb, id: string) {
      return subscriptionView(await foundSubscription(db, id));
    },
    async updateSubscription(db: TenantDb, id: string, patch: SubscriptionUpdate) {
      checkUrl(patch.url);
      const row = await createEventsRepo(db).updateSubscription(id, { ...patch, ...(patch.enabled ? { disabledReason: null } : {}) });
      if (!row) throw subscriptionNotFound();
      kept.forget(db.$tenant().id);
      return subscriptionView(row);
    },
    async deleteSubscription(db: TenantDb, id: string) {
      if (!(await createEventsRepo(db).deleteSubscription(id))) throw subscriptionNotFound();
      kept.forget(db.$tenant().id);
    },
    async listDeliveries(db: TenantDb, subscriptionId: string, page: KeysetRequest<string>) {
      await foundSubscription(db, subscriptionId);
      return (await createEventsRepo(db).listDeliveries(subscriptionId, page)).map(deliveryView);
    },
    /** Sends the event again now, with the same `webhook-id`, whatever became of it before. */
    async redeliver(db: TenantDb, subscriptionId: string, deliveryId: string) {
      const repo = createEventsRepo(db);
      const delivery = await repo.findDelivery(subscriptionId, deliveryId);
      if (!delivery) throw new NotFound('No such event delivery.');
      await repo.updateDelivery(delivery.id, { state: 'pending', nextAttemptAt: now() });
      attemptLater(db.$tenant().id, delivery.id);
      return deliveryView((await repo.findDelivery(subscriptionId, deliveryId))!);
    },
  };
}

export type EventsService = ReturnType<typeof createEventsService>;
