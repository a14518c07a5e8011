// Recording a verified delivery once. A repeated delivery id answers its first recording; so does a replay:
// the same body, of a format that signs no delivery id, under a new id within the replay window. The unique
// indexes on (source, delivery id) and (source, body hash) decide, so that instances receiving one delivery
// together agree, and the usual delivery costs no query more than its insert.
import { isUniqueViolation } from '../db/errors';
import type { TenantDb } from '../db/tenant-scope';
import { batchedBy } from '../lib/batch';
import type { Logger } from '../lib/logger';
import { isReplay, replayHash, type WebhookFormat } from './webhooks-fns';
import { createWebhooksRepo, type NewActivity } from './webhooks-repo';

/** Inserts of one delivery: a collision with a recording deleted (retention) or released meanwhile is written again. */
const RECORD_TRIES = 3;

export interface DeliveryRecordingDeps {
  tenantDb: (tenantId: string) => TenantDb;
  logger: Logger;
  /** How long a body is recognised as a replay (FLOWS_WEBHOOK_REPLAY_WINDOW_SECONDS); 0: never. */
  replayWindowSeconds: number;
}

export function createDeliveryRecording({ tenantDb, logger, replayWindowSeconds }: DeliveryRecordingDeps) {
  const windowMs = replayWindowSeconds * 1000;
  // Deliveries arriving together are written with one statement.
  const recordTogether = batchedBy<{ tenantId: string; activity: NewActivity }>(
    (item) => item.tenantId,
    (tenantId, items) => createWebhooksRepo(tenantDb(tenantId)).createActivities(items.map((item) => item.activity)),
  );

  /** The first recording a refused insert collided with: a repeated delivery id, or a replay; null when neither holds. */
  async function firstRecording(tenantId: string, { sourceId, deliveryId, bodyHash, receivedAt }: NewActivity): Promise<{ id: string } | null> {
    const repo = createWebhooksRepo(tenantDb(tenantId));
    const found = await repo.findFirstRecordings(sourceId, deliveryId, bodyHash);
    const repeated = found.find((row) => row.deliveryId === deliveryId);
    if (repeated) {
      logger.info({ sourceId, deliveryId }, 'repeated webhook delivery recorded once');
      return repeated;
    }
    const sameBody = found.find((row) => row.bodyHash !== null && row.bodyHash === bodyHash);
    if (!sameBody) return null;
    if (isReplay(sameBody, receivedAt, windowMs)) {
      logger.warn({ sourceId, deliveryId, firstActivityId: sameBody.id, firstDeliveryId: sameBody.deliveryId }, 'replayed webhook body under a new delivery id recorded once; nothing started');
      return sameBody;
    }
    // The same body from before the window is a new delivery: the old recording gives up the hash.
    await repo.releaseBodyHash(sameBody.id, sameBody.bodyHash!);
    return null;
  }

  return {
    /** The hash intake records with a delivery of `format`: null where the format signs its delivery id, or the window is off. */
    bodyHashOf: (format: WebhookFormat, raw: Buffer) => (windowMs > 0 ? replayHash(format, raw) : null),

    async record(tenantId: string, activity: NewActivity): Promise<{ activityId: string; duplicate: boolean }> {
      try {
        await recordTogether({ tenantId, activity });
        return { activityId: activity.id, duplicate: false };
      } catch {
        // A repeated delivery (this one or another) or a row the database refused was in the batch: each of
        // its deliveries is written alone, so that only the one at fault fails.
      }
      const repo = createWebhooksRepo(tenantDb(tenantId));
      for (let tries = 1; ; tries++) {
        try {
          await repo.createActivity(activity);
          return { activityId: activity.id, duplicate: false };
        } catch (err) {
          if (!isUniqueViolation(err) || tries === RECORD_TRIES) throw err;
          const first = await firstRecording(tenantId, activity);
          if (first) return { activityId: first.id, duplicate: true };
        }
      }
    },
  };
}
