import pino from 'pino';

export type Logger = pino.Logger;

/** Paths that may carry secrets; pino replaces their values before a line is written. */
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.accessToken',
  '*.apiToken',
  '*.signingSecret',
  '*.secret',
  '*.token',
];

/** Errors are logged without the request body some of them carry (body-parser's do), which may hold a password. */
function serializeError(err: unknown) {
  const serialized = pino.stdSerializers.err(err as Error) as unknown as Record<string, unknown>;
  if (serialized && typeof serialized === 'object') delete serialized.body;
  return serialized;
}

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACT, censor: '[redacted]' }, base: undefined, serializers: { err: serializeError } }, destination);
}
