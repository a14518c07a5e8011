// The one place where failures become responses: `{ error: { code, message } }` with the status of the
// error. Unexpected errors answer a generic 500; their detail goes to the log with the request id only.
import type { ErrorRequestHandler, Request, Response } from 'express';
import { AppError, InvalidJson, NotFound, PayloadTooLarge, ServiceUnavailable, UnsupportedMediaType } from '../lib/errors';
import { isDatabaseUnavailable, isUniqueViolation } from '../db/errors';
import { BODY_LIMIT } from './body';
import { html, page } from './html';

/** The API always answers JSON; a browser navigating the pages (sign-in, console, consent) gets a page. */
const wantsPage = (req: Request) => !req.path.startsWith('/api/') && req.accepts(['json', 'html']) === 'html';

export function sendError(res: Response, error: AppError, req?: Request): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.status);
  if (req && wantsPage(req)) {
    res.type('html').send(page('Error', html`<h1>That did not work</h1><p class="error" role="alert">${error.message}</p><p><a href="/console">Back to the console</a></p>`));
    return;
  }
  res.json({ error: { code: error.code, message: error.message } });
}

/** Errors raised by body-parser carry a `type`. */
function fromBodyParser(err: { type?: string; status?: number }): AppError | null {
  switch (err.type) {
    case 'entity.parse.failed':
      return new InvalidJson();
    case 'entity.too.large':
      return new PayloadTooLarge(BODY_LIMIT);
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return new UnsupportedMediaType('Unsupported charset or content encoding; send UTF-8 JSON.');
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      return new InvalidJson('The request body could not be read.');
    case 'parameters.too.many':
      return new AppError(413, 'payload_too_large', 'The form has too many fields.');
    default:
      return null;
  }
}

/** Any other client error that http-errors marked safe to show (e.g. a body that fails to decompress). */
function fromHttpError(err: { expose?: boolean; status?: number; statusCode?: number }): AppError | null {
  const status = err.status ?? err.statusCode;
  if (!err.expose || !status || status < 400 || status >= 500) return null;
  return new AppError(status, status === 413 ? 'payload_too_large' : 'bad_request', 'The request body could not be read.');
}

function toAppError(err: any): AppError | null {
  if (err instanceof AppError) return err;
  const bodyError = fromBodyParser(err) ?? fromHttpError(err);
  if (bodyError) return bodyError;
  if (err?.code === 'P2025') return new NotFound();
  if (isUniqueViolation(err)) return new AppError(409, 'conflict', 'The resource conflicts with an existing one.');
  if (isDatabaseUnavailable(err)) return new ServiceUnavailable();
  return null;
}

export const errorHandler: ErrorRequestHandler = (err, req, res, next) => {
  if (res.headersSent) return next(err);
  const known = toAppError(err);
  if (known?.expose) {
    if (known.status >= 500) req.log.warn({ err }, known.message);
    return sendError(res, known, req);
  }
  req.log.error({ err }, 'unhandled error');
  sendError(res, new AppError(500, 'internal_error', `An internal error occurred; quote request id ${req.id} when reporting it.`), req);
};
