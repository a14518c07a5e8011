import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from '../lib/logger';

const INCOMING_ID = /^[\w.:-]{1,128}$/;

declare module 'express-serve-static-core' {
  interface Request {
    id: string;
    log: Logger;
  }
}

/** Gives every request an id (a well-formed incoming X-Request-Id is kept), a child logger and one access log line. */
export function requestContext(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const incoming = req.get('x-request-id');
    req.id = incoming && INCOMING_ID.test(incoming) ? incoming : randomUUID();
    req.log = logger.child({ reqId: req.id });
    res.setHeader('X-Request-Id', req.id);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      // The whole path (routers see theirs from where they are mounted), never the query, which may carry a secret.
      const path = req.originalUrl.split('?')[0];
      req.log.info({ method: req.method, path, status: res.statusCode, durationMs: Math.round(durationMs * 10) / 10 }, 'request');
    });
    next();
  };
}
