// Body handling for operations that take one: the media type is checked before anything is parsed,
// then JSON is parsed with a size limit and a nesting limit.
import express, { type RequestHandler } from 'express';
import { UnsupportedMediaType, ValidationFailed } from '../lib/errors';

export const BODY_LIMIT = '1mb';
const MAX_DEPTH = 32;

export function isJsonMediaType(header: string | undefined): boolean {
  if (!header) return false;
  // Parameters such as charset are allowed; the parser refuses a charset it cannot decode with a 415.
  return header.split(';')[0].trim().toLowerCase() === 'application/json';
}

function hasBody(req: Parameters<RequestHandler>[0]): boolean {
  return req.get('transfer-encoding') !== undefined || Number(req.get('content-length') ?? 0) > 0;
}

/** 415 for a body that is not JSON (a request with no body at all is left to validation: "body required"). */
export function requireJson(takesBody: (req: Parameters<RequestHandler>[0]) => boolean): RequestHandler {
  return (req, _res, next) => {
    if (takesBody(req) && (hasBody(req) || req.get('content-type')) && !isJsonMediaType(req.get('content-type'))) {
      return next(new UnsupportedMediaType());
    }
    next();
  };
}

/**
 * Whether a string, key or value anywhere in `value` holds a NUL character. PostgreSQL cannot store NUL in
 * text, so input carrying one is refused at the edge, the same on every database.
 */
export function containsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([key, child]) => key.includes('\u0000') || containsNul(child));
}

function depthOf(value: unknown, depth = 0): number {
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return depth;
  let max = depth;
  for (const child of Object.values(value)) max = Math.max(max, depthOf(child, depth + 1));
  return max;
}

const EMPTY = Symbol('empty body');

// Not strict: a bare JSON value is JSON; the schema then says what the body must be. An empty body is no
// body (the parser would make it `{}`), so that "body required" holds.
const parse = express.json({
  limit: BODY_LIMIT,
  strict: false,
  type: (req) => isJsonMediaType(req.headers['content-type']),
  verify: (req, _res, raw) => {
    if (raw.length === 0) (req as unknown as Record<symbol, boolean>)[EMPTY] = true;
  },
});

export const jsonBody: RequestHandler = (req, res, next) => {
  parse(req, res, (err?: unknown) => {
    if (err) return next(err);
    if ((req as unknown as Record<symbol, boolean>)[EMPTY]) req.body = undefined;
    if (depthOf(req.body) > MAX_DEPTH) return next(new ValidationFailed(`The request body nests deeper than ${MAX_DEPTH} levels.`));
    if (containsNul(req.body)) return next(new ValidationFailed('The request body contains a NUL character (\\u0000), which no text field can hold.'));
    next();
  });
};
