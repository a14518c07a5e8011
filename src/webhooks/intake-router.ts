// POST /hooks/{sourceId}: signed deliveries from external senders, outside the API contract. The body is
// kept raw: signatures are computed over the exact bytes sent.
import express, { Router } from 'express';
import { BODY_LIMIT } from '../http/body';
import type { WebhooksService } from './webhooks-service';

export function intakeRouter(webhooks: WebhooksService): Router {
  const router = Router();
  router.post('/hooks/:sourceId', express.raw({ type: () => true, limit: BODY_LIMIT }), async (req, res) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    res.status(202).json(await webhooks.intake(req.params.sourceId, req.headers, raw));
  });
  return router;
}
