// One error family. Every failure leaves the process as `{ error: { code, message } }` with `status`
// (see http/error-handler.ts); `expose: false` keeps the message in the log only.
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
    readonly expose = true,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class ValidationFailed extends AppError {
  constructor(message: string) {
    super(400, 'validation_failed', message);
  }
}

export class InvalidJson extends AppError {
  constructor(message = 'The request body is not valid JSON.') {
    super(400, 'invalid_json', message);
  }
}

/** RFC 6750 section 3: a 401 names the scheme and, for a bad token, `invalid_token`. */
export class Unauthenticated extends AppError {
  constructor(code: 'unauthenticated' | 'invalid_token' | 'invalid_session', message: string, challenge: string) {
    super(401, code, message, { 'WWW-Authenticate': challenge });
  }
}

export class InsufficientScope extends AppError {
  constructor(scope: string, challenge: string) {
    super(403, 'insufficient_scope', `This operation requires the scope "${scope}".`, { 'WWW-Authenticate': challenge });
  }
}

export class OwnerSessionRequired extends AppError {
  constructor() {
    super(403, 'owner_session_required', 'This operation requires an interactive owner session; bearer tokens are refused.');
  }
}

export class CrossSiteRequest extends AppError {
  constructor() {
    super(403, 'cross_site_request', 'Cookie-authenticated requests that change state must come from this service\'s own origin.');
  }
}

export class NotFound extends AppError {
  constructor(message = 'The resource does not exist.') {
    super(404, 'not_found', message);
  }
}

export class MethodNotAllowed extends AppError {
  constructor(method: string, allow: string[]) {
    super(405, 'method_not_allowed', `${method} is not allowed here; allowed: ${allow.join(', ')}.`, { Allow: allow.join(', ') });
  }
}

export class Conflict extends AppError {
  constructor(code: string, message: string) {
    super(409, code, message);
  }
}

/** 413, or 400 on the operations of the interface specification, which document no 413. */
export class PayloadTooLarge extends AppError {
  constructor(limit: string, status: 400 | 413 = 413) {
    super(status, 'payload_too_large', `The request body exceeds the limit of ${limit}.`);
  }
}

export class UnsupportedMediaType extends AppError {
  constructor(message = 'Use Content-Type: application/json.') {
    super(415, 'unsupported_media_type', message);
  }
}

/** RFC 6585 section 4, with RFC 9110 section 10.2.3's Retry-After in whole seconds (at least 1). */
export class RateLimited extends AppError {
  constructor(retryAfterSeconds: number, reason = 'Too many requests') {
    const seconds = Number.isFinite(retryAfterSeconds) ? Math.max(1, Math.ceil(retryAfterSeconds)) : 1;
    super(429, 'rate_limited', `${reason}; retry in ${seconds} second${seconds === 1 ? '' : 's'}.`, { 'Retry-After': String(seconds) });
  }
}

export class NotImplemented extends AppError {
  constructor(operationId: string) {
    super(501, 'not_implemented', `The operation ${operationId} is part of the v1 contract but not yet available on this server.`);
  }
}

export class ServiceUnavailable extends AppError {
  constructor(message = 'The service is temporarily unavailable; retry shortly.') {
    super(503, 'service_unavailable', message, { 'Retry-After': '5' });
  }
}
