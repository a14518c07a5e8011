// What every /api request passes before routing: answers are not to be cached (they carry tenant data),
// and the path and query must be text the service can use: a percent-encoding that decodes, no NUL.
import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { AppError, PayloadTooLarge, ValidationFailed } from '../lib/errors';
import { BODY_LIMIT, containsUnstorableText } from './body';

export class InvalidPath extends AppError {
  constructor() {
    super(400, 'invalid_path', 'The request path has a malformed percent-encoding or a NUL character.');
  }
}

export const noStore: RequestHandler = (_req, res, next) => {
  res.setHeader('Cache-Control', 'no-store');
  next();
};

export const usableRequestLine: RequestHandler = (req, _res, next) => {
  let path: string;
  try {
    path = decodeURIComponent(req.path);
  } catch {
    return next(new InvalidPath());
  }
  if (path.includes('\u0000')) return next(new InvalidPath());
  if (containsUnstorableText(req.query)) return next(new ValidationFailed('A query parameter contains a NUL character (%00) or an unpaired surrogate.'));
  next();
};

/**
 * An oversized body is a 413, except on operations that do not document one: the interface specification
 * gives its operations exactly 400, 401, 403, 404, 409, 415, 429, 500 and 503, so there it is a 400.
 */
export function oversizedBody(documents: (req: Request, status: number) => boolean): ErrorRequestHandler {
  return (err, req, _res, next) => {
    const tooLarge = (err as { type?: string })?.type === 'entity.too.large';
    next(tooLarge && !documents(req, 413) ? new PayloadTooLarge(BODY_LIMIT, 400) : err);
  };
}
