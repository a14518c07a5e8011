// Refused deliveries: the answer a sender gets (a code saying which check failed, nothing a secret could be
// learned from), and the record the source's owner reads to find out why a sender's deliveries fail. A
// refusal costs one insert, and only RECORDED_PER_MINUTE of a source a minute are recorded on an instance:
// a flood of bad deliveries costs a bounded amount of work and rows. Retention keeps the newest
// KEPT_PER_SOURCE of each source (webhooks-sweeps.ts).
import { createHash } from 'node:crypto';
import type { components } from '../../generated/openapi';
import type { TenantDb } from '../db/tenant-scope';
import { AppError } from '../lib/errors';
import { newId } from '../lib/ids';
import type { Logger } from '../lib/logger';
import type { Refusal, RefusalReason, WebhookFormat } from './webhooks-fns';
import { headerNamesOf, refusalAdvice, refusalRate, REFUSAL_STATUS, type IntakeRefusalCode } from './webhooks-refusal-fns';
import { createWebhooksRepo, type RefusalRow } from './webhooks-repo';

export const RECORDED_PER_MINUTE = 10;
export const KEPT_PER_SOURCE = 50;
/** The largest size an Int column holds: a body refused unread may declare more. */
const MAX_RECORDED_BYTES = 2 ** 31 - 1;

/** A delivery intake refused, answered with the status of its code. */
export class DeliveryRefused extends AppError {
  constructor(
    readonly sourceId: string,
    readonly reason: IntakeRefusalCode,
    message: string,
  ) {
    super(REFUSAL_STATUS[reason], reason, message);
  }
}

/** A refusal as the API and the console show it: with its status, and what to check for its source's format. */
export function refusalView(row: RefusalRow, source: { format: string; signatureHeader: string | null }): components['schemas']['WebhookRefusal'] {
  const reason = row.reason as RefusalReason;
  const headerNames = row.headerNames as string[];
  return {
    id: row.id,
    sourceId: row.sourceId,
    receivedAt: row.receivedAt.toISOString(),
    reason,
    status: REFUSAL_STATUS[reason],
    message: row.message,
    advice: refusalAdvice({ reason, message: row.message, headerNames }, { format: source.format as WebhookFormat, signatureHeader: source.signatureHeader }),
    headerNames,
    bodyBytes: row.bodyBytes,
    bodySha256: row.bodySha256,
    unrecordedBefore: row.unrecordedBefore,
  };
}

export const unknownSource = (sourceId: string) =>
  new DeliveryRefused(sourceId, 'unknown_source', 'No webhook source has this intake URL: check the payload URL in the sender (a deleted source takes no deliveries).');

/** What is recorded of a refused body: its size, and the body itself only to hash it (null when refused unread). */
export interface RefusedBody {
  bytes: number;
  raw: Buffer | null;
}

export function createRefusalRecording({ tenantDb, logger, clock = Date.now }: { tenantDb: (tenantId: string) => TenantDb; logger: Logger; clock?: () => number }) {
  const rate = refusalRate({ perMinute: RECORDED_PER_MINUTE, clock });
  return {
    /** Records a refusal of a known source (or only counts it, over the rate), and answers what its sender gets. */
    async refuse(source: { id: string; tenantId: string }, refusal: Refusal, headers: Record<string, unknown>, body: RefusedBody, receivedAt: Date): Promise<DeliveryRefused> {
      const admitted = rate.admit(source.id);
      if (admitted) {
        try {
          await createWebhooksRepo(tenantDb(source.tenantId)).createRefusal({
            id: newId('rfd'),
            sourceId: source.id,
            receivedAt,
            reason: refusal.refused,
            message: refusal.message,
            headerNames: headerNamesOf(headers),
            bodyBytes: Math.min(body.bytes, MAX_RECORDED_BYTES),
            bodySha256: body.raw && createHash('sha256').update(body.raw).digest('hex'),
            unrecordedBefore: admitted.unrecordedBefore,
          });
        } catch (err) {
          // The sender's answer does not depend on the record.
          logger.warn({ err, sourceId: source.id }, 'recording a refused webhook delivery failed');
        }
      }
      return new DeliveryRefused(source.id, refusal.refused, refusal.message);
    },
  };
}
