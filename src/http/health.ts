import { Router } from 'express';
import type { Db } from '../db/client';
import { ServiceUnavailable } from '../lib/errors';

/** Liveness answers while the process runs; readiness also needs the database. */
export function healthRouter(db: Db): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (req, res, next) => {
    try {
      await db.$queryRawUnsafe('SELECT 1');
      res.json({ status: 'ready' });
    } catch (err) {
      req.log.warn({ err }, 'readiness check failed');
      next(new ServiceUnavailable('The database is unavailable.'));
    }
  });
  return router;
}
