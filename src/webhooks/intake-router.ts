// POST /hooks/{sourceId}: signed deliveries from external senders, outside the API contract. The body is
// kept raw: signatures are computed over the exact bytes sent. A refusal is logged with its code and source
// (never a header's value), and answered by the app's error handler.
import express, { Router, type ErrorRequestHandler } from 'express';
import { BODY_LIMIT } from '../http/body';
import type { WebhooksService } from './webhooks-service';
import { DeliveryRefused } from './webhooks-refusals';

/** body-parser's refusal of a body over the limit, with the size declared (`length`) or read so far (`received`). */
const tooLarge = (err: unknown): err is Error & { length?: number; received?: number } => (err as { type?: string } | null)?.type === 'entity.too.large';

/** Counts what intake took and refused (metrics). */
export interface IntakeCounts {
  deliveryAccepted(): void;
  deliveryRefused(reason: string): void;
}

export function intakeRouter(webhooks: WebhooksService, metrics: IntakeCounts): Router {
  const router = Router();
  const refused: ErrorRequestHandler = async (err, req, _res, next) => {
    const sourceId = req.params.sourceId as string;
    const answer = tooLarge(err) ? await webhooks.refuseUnread(sourceId, req.headers, err.length ?? err.received ?? 0, err) : err;
    if (answer instanceof DeliveryRefused) {
      req.log.warn({ sourceId, reason: answer.reason, status: answer.status }, 'webhook delivery refused');
      metrics.deliveryRefused(answer.reason);
    }
    next(answer);
  };
  router.post('/hooks/:sourceId', express.raw({ type: () => true, limit: BODY_LIMIT }), async (req, res) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const answer = await webhooks.intake(req.params.sourceId, req.headers, raw);
    if ('handshake' in answer) return void res.status(200).json(answer.handshake);
    if (answer.empty) res.status(200).end();
    else res.status(202).json(answer);
    metrics.deliveryAccepted();
  });
  router.use('/hooks/:sourceId', refused);
  return router;
}
