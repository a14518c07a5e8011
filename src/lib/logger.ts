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

export function createLogger(level: string): Logger {
  return pino({ level, redact: { paths: REDACT, censor: '[redacted]' }, base: undefined });
}
