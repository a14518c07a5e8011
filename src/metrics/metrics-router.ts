// GET /metrics, outside the contract: the Prometheus text of metrics.ts, for a scraper. On the main port it
// answers only a bearer of FLOWS_METRICS_TOKEN (compared in constant time) and is not there without one; on
// the metrics port of its own (FLOWS_METRICS_PORT) it answers whoever reaches that port.
import { createHash, timingSafeEqual } from 'node:crypto';
import express, { Router, type Express, type Response } from 'express';
import { errorHandler } from '../http/error-handler';
import { requestContext } from '../http/request-context';
import type { Logger } from '../lib/logger';
import { NotFound, Unauthenticated } from '../lib/errors';
import type { Metrics } from './metrics';

const digest = (value: string) => createHash('sha256').update(value).digest();

async function send({ registry }: Pick<Metrics, 'registry'>, res: Response) {
  if (!registry) throw new NotFound('No metrics are kept here.');
  res.set('Cache-Control', 'no-store').type(registry.contentType).send(await registry.metrics());
}

/** /metrics on the main port, for a bearer of `token`; without a token, no such route. */
export function metricsRouter(metrics: Pick<Metrics, 'registry'>, token: string | null): Router {
  const router = Router();
  if (token === null) return router;
  const expected = digest(token);
  router.get('/metrics', (req, res, next) => {
    const given = /^Bearer (\S+)$/.exec(req.get('authorization') ?? '')?.[1];
    if (!given || !timingSafeEqual(digest(given), expected)) return next(new Unauthenticated('invalid_token', 'A bearer of FLOWS_METRICS_TOKEN is needed for /metrics.', 'Bearer realm="metrics"'));
    send(metrics, res).catch(next);
  });
  return router;
}

/** What the metrics port serves: /metrics to whoever reaches it, and nothing else. */
export function metricsApp(metrics: Pick<Metrics, 'registry'>, logger: Logger): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(requestContext(logger));
  app.get('/metrics', (_req, res, next) => void send(metrics, res).catch(next));
  app.use((_req, _res, next) => next(new NotFound('No such endpoint.')));
  app.use(errorHandler);
  return app;
}
