// Body handling for operations that take one: the media type is checked before anything is parsed,
// then JSON is parsed with a size limit and a nesting limit.
import express, { type RequestHandler } from 'express';
import { InvalidJson, UnsupportedMediaType, ValidationFailed } from '../lib/errors';

export const BODY_LIMIT = '1mb';
export const MAX_DEPTH = 32;

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

/** A UTF-16 surrogate without its pair: in Unicode mode a paired one reads as one code point, not as `Cs`. */
const UNPAIRED_SURROGATE = /\p{Cs}/u;
const unstorable = (text: string) => text.includes('\u0000') || UNPAIRED_SURROGATE.test(text);

/**
 * Whether a string, key or value anywhere in `value` holds text no database stores as sent: a NUL character
 * (PostgreSQL's text cannot hold one) or an unpaired surrogate (PostgreSQL's jsonb refuses one, and text
 * would silently replace it). Such input is refused at the edge, the same on every database.
 */
export function containsUnstorableText(value: unknown): boolean {
  if (typeof value === 'string') return unstorable(value);
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([key, child]) => unstorable(key) || containsUnstorableText(child));
}

/** Whether `value` nests deeper than the limit (checked before anything walks it recursively). */
export function nestsTooDeep(value: unknown): boolean {
  return depthOf(value) > MAX_DEPTH;
}

function depthOf(value: unknown, depth = 0): number {
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return depth;
  let max = depth;
  for (const child of Object.values(value)) max = Math.max(max, depthOf(child, depth + 1));
  return max;
}

const EMPTY = Symbol('empty body');

/** A body that could not be read as sent (a content encoding that does not decode): body-parser's bare 400. */
const isUnreadable = (err: unknown) => (err as { status?: number; type?: string }).status === 400 && (err as { type?: string }).type === undefined;

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
    if (err) return next(isUnreadable(err) ? new InvalidJson('The request body could not be read; its content encoding does not decode.') : err);
    if ((req as unknown as Record<symbol, boolean>)[EMPTY]) req.body = undefined;
    if (nestsTooDeep(req.body)) return next(new InvalidJson(`The request body nests deeper than ${MAX_DEPTH} levels.`));
    if (containsUnstorableText(req.body)) return next(new ValidationFailed('The request body contains a NUL character (\\u0000) or an unpaired surrogate (\\ud800 to \\udfff), which no text field can hold.'));
    next();
  });
};
