// Pure rules of outbound events: which endpoints may receive them, the retry schedule, and the signed
// request (Standard Webhooks).
import { Webhook } from 'standardwebhooks';
import { refusalOf } from '../lib/outbound';

/** Retries stop once the event is this old. */
export const RETRY_WINDOW_MS = 24 * 60 * 60 * 1000;
const FIRST_RETRY_MS = 30_000;
const LONGEST_WAIT_MS = 6 * 60 * 60 * 1000;

/**
 * When to try again after the n-th failed attempt (1-based): exponential from 30 s, at most 6 h apart,
 * with full jitter over the upper half so that failed endpoints are not hit in waves; null when the
 * next try would fall outside the retry window.
 */
export function nextAttemptAt(createdAt: Date, attempts: number, now: Date, random = Math.random): Date | null {
  const ceiling = Math.min(FIRST_RETRY_MS * 2 ** (attempts - 1), LONGEST_WAIT_MS);
  const wait = ceiling / 2 + random() * (ceiling / 2);
  const at = new Date(now.getTime() + wait);
  return at.getTime() - createdAt.getTime() > RETRY_WINDOW_MS ? null : at;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** HTTPS, or plain HTTP to this machine (a receiver under development); never credentials in the URL. */
export function endpointProblem(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute URL';
  }
  if (parsed.username || parsed.password) return 'must not carry credentials';
  if (parsed.protocol === 'https:') return null;
  if (parsed.protocol === 'http:' && LOOPBACK.has(parsed.hostname)) return null;
  return 'must be an https URL (plain http only to localhost)';
}

/** Why an attempt got no answer, as its delivery records it: the guard's refusal in full, else the kind of failure. */
export function noAnswerReason(err: unknown, timeoutMs: number): string {
  const refused = refusalOf(err);
  if (refused) return refused.message;
  if ((err as Error).name === 'TimeoutError') return `no answer within ${timeoutMs / 1000} s`;
  const code = ((err as Error).cause as NodeJS.ErrnoException | undefined)?.code;
  return `the connection failed${typeof code === 'string' && /^[A-Z_]+$/.test(code) ? ` (${code})` : ''}`;
}

/** The body and Standard Webhooks headers of one attempt; `webhookId` is the same on every attempt. */
export function signedRequest(secret: string, webhookId: string, body: string, at: Date): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'Flows-Webhooks/1',
    'webhook-id': webhookId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(webhookId, at, body),
  };
}
