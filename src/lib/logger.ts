import pino from 'pino';
import type { PrettyStream } from 'pino-pretty';

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

/**
 * A logger at `level`: JSON lines to `destination` (stdout by default), or, with `pretty`, lines a person reads
 * in a terminal (time, level in colour, message, then the fields), written synchronously like the JSON.
 */
export function createLogger(level: string, destination?: pino.DestinationStream, { pretty: readable = false } = {}): Logger {
  const options = { level, redact: { paths: REDACT, censor: '[redacted]' }, base: undefined, serializers: { err: serializeError } };
  if (!readable) return pino(options, destination);
  // Loaded only for a terminal.
  const pretty = require('pino-pretty') as (options: Record<string, unknown>) => PrettyStream;
  return pino(options, pretty({ destination: destination ?? 1, sync: true, colorize: destination === undefined && process.stdout.isTTY, translateTime: 'SYS:HH:MM:ss.l' }));
}
