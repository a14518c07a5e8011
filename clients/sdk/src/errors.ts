// The one error every call of the SDK throws, so that a caller branches on `code` (the API's stable error
// codes, OAuth's on a failed refresh, `network_error` when nothing answered) whatever went wrong.
import type { Middleware } from 'openapi-fetch';

export class FlowsApiError extends Error {
  override readonly name = 'FlowsApiError';
  /** The HTTP status, or 0 when no answer came. */
  readonly status: number;
  /** The API's error code (`not_found`, `validation_failed`, …), OAuth's (`invalid_grant`, …) from the token endpoint, or `network_error`. */
  readonly code: string;
  /** The answer's `X-Request-Id`, which identifies the request in the server's log. */
  readonly requestId: string | null;

  constructor(status: number, code: string, message: string, requestId: string | null = null, options?: ErrorOptions) {
    super(message, options);
    this.status = status;
    this.code = code;
    this.requestId = requestId;
  }
}

interface ErrorBody {
  error?: { code?: unknown; message?: unknown } | string;
  error_description?: unknown;
}

/**
 * The error for a non-2xx answer: the API's `{ error: { code, message } }`, or OAuth's `{ error,
 * error_description }` from the token endpoint. A body of neither shape (a proxy's page, say) still gives
 * an error, coded by its status.
 */
export function answerError(response: Response, body: unknown): FlowsApiError {
  const parsed = (typeof body === 'object' && body !== null ? body : {}) as ErrorBody;
  const requestId = response.headers.get('x-request-id');
  const api = typeof parsed.error === 'object' ? parsed.error : undefined;
  if (typeof api?.code === 'string' && typeof api.message === 'string') return new FlowsApiError(response.status, api.code, api.message, requestId);
  if (typeof parsed.error === 'string') {
    const description = typeof parsed.error_description === 'string' ? parsed.error_description : parsed.error;
    return new FlowsApiError(response.status, parsed.error, description, requestId);
  }
  return new FlowsApiError(response.status, `http_${response.status}`, `The server answered ${response.status} ${response.statusText}`.trim(), requestId);
}

/** An error's message, read by shape: errors from another realm (a test sandbox, say) fail `instanceof`. */
function messageOf(value: unknown): string | undefined {
  return typeof value === 'object' && value !== null && 'message' in value && typeof value.message === 'string' ? value.message : undefined;
}

/**
 * The error for a request that got no answer at all: refused, reset, unresolvable. Node's fetch says only
 * "fetch failed"; the reason (`connect ECONNREFUSED …`) is its cause.
 */
export function networkError(url: string, cause: unknown): FlowsApiError {
  const inner = typeof cause === 'object' && cause !== null && 'cause' in cause ? messageOf(cause.cause) : undefined;
  const reason = inner ?? messageOf(cause) ?? String(cause);
  return new FlowsApiError(0, 'network_error', `Could not reach ${url}: ${reason}`, null, { cause });
}

/** Middleware: a request that got no answer fails as a FlowsApiError; one the caller aborted keeps its abort reason. */
export const networkErrors: Middleware = {
  onError({ request, error }) {
    return request.signal.aborted ? undefined : networkError(request.url, error);
  },
};
