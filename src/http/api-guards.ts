// What every /api answer gets before routing: no caching of answers (they carry tenant data), and a path
// that decodes, so that nothing downstream trips over a malformed percent-encoding.
import type { RequestHandler } from 'express';
import { AppError } from '../lib/errors';

export class InvalidPath extends AppError {
  constructor() {
    super(400, 'invalid_path', 'The request path has a malformed percent-encoding.');
  }
}

export const noStore: RequestHandler = (_req, res, next) => {
  res.setHeader('Cache-Control', 'no-store');
  next();
};

export const decodablePath: RequestHandler = (req, _res, next) => {
  try {
    decodeURIComponent(req.path);
  } catch {
    return next(new InvalidPath());
  }
  next();
};
