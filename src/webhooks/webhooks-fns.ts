// Pure rules of inbound webhooks: signing secrets, verifying a delivery in the way of its source's format
// (constant time, on the raw body), naming its event, preparing the context triggers and templates see,
// and matching event patterns.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { components } from '../../generated/openapi';
import type { WebhookCandidate } from '../jobs/jobs-catalog';
import { contextSize } from '../triggers/cel-fns';
import { decide, decidePrepared } from '../triggers/conditions-fns';
import { matchesEvents } from '../triggers/event-patterns-fns';

export type WebhookFormat = components['schemas']['WebhookFormat'];
export type TriggerDecision = components['schemas']['TriggerDecision'];
type ConditionDecision = components['schemas']['ConditionDecision'];
export type WebhookContext = Record<string, unknown> & { event: string; action: string | null };

/** Deliveries older (or further in the future) than this are refused as stale. */
export const TIMESTAMP_TOLERANCE_MS = 5 * 60 * 1000;
export const DEFAULT_SIGNATURE_HEADER = 'x-signature-256';

const hmac = (key: Buffer | string, content: string | Buffer) => createHmac('sha256', key).update(content).digest();

/** Hex HMAC-SHA256, as GitHub, Linear and hmac-sha256 senders send it. */
const HEX_SIGNATURE = /^[0-9a-fA-F]{64}$/;
/** Base64 of 32 bytes, as a Standard Webhooks `v1,` signature carries it. */
const BASE64_SIGNATURE = /^[A-Za-z0-9+/]{43}=?$/;

const sameBytes = (expected: Buffer, given: Buffer) => given.length === expected.length && timingSafeEqual(given, expected);

export interface Delivery {
  deliveryId: string;
  event: string;
  action: string | null;
  payload: Record<string, unknown>;
}

/**
 * Why intake refused a delivery of a known source, as the sender is answered (`code`) and the refusal is
 * recorded (`reason`). Each says which check failed and nothing a secret could be learned from.
 */
export type RefusalReason = 'signature_missing' | 'signature_malformed' | 'invalid_signature' | 'timestamp_out_of_tolerance' | 'invalid_json' | 'payload_too_large';
export interface Refusal {
  refused: RefusalReason;
  message: string;
}

type Headers = Record<string, string | string[] | undefined>;
const header = (headers: Headers, name: string) => {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
};
const text = (value: unknown) => (typeof value === 'string' && value.length > 0 ? value : null);

/**
 * Headers that carry credentials never reach the context (stored, shown in activity, seen by templates):
 * signatures, and anything named like a credential (`authorization`, `cookie`, `x-api-key`,
 * `x-gitlab-token`, `x-webhook-secret`, `x-functions-key`, `x-auth`, …).
 */
const CREDENTIAL_HEADER = /signature|authori[sz]ation|cookie|token|secret|passw|credential|(^|-)(api-?)?(key|auth)(-|$)|api_?key/;

/** The headers a format's signature travels in, as senders spell them. */
export function signatureHeadersOf(format: WebhookFormat, signatureHeader: string | null): string[] {
  switch (format) {
    case 'github':
      return ['X-Hub-Signature-256'];
    case 'linear':
      return ['Linear-Signature'];
    case 'standard-webhooks':
      return ['webhook-id', 'webhook-timestamp', 'webhook-signature'];
    case 'hmac-sha256':
      return [signatureHeader ?? DEFAULT_SIGNATURE_HEADER];
  }
}

const listed = (names: string[]) => names.map((name) => `\`${name}\``).join(', ');
const missing = (names: string[]): Refusal => ({ refused: 'signature_missing', message: `The delivery has no ${listed(names)} header${names.length === 1 ? '' : 's'}; this source takes only deliveries signed with its secret.` });
const malformed = (name: string, shape: string): Refusal => ({ refused: 'signature_malformed', message: `The \`${name}\` header is not ${shape}.` });
const MISMATCH: Refusal = { refused: 'invalid_signature', message: "The signature does not match the body signed with this source's secret." };
const stale = (where: string): Refusal => ({ refused: 'timestamp_out_of_tolerance', message: `The delivery's timestamp (${where}) is missing or more than ${TIMESTAMP_TOLERANCE_MS / 60_000} minutes from this server's clock.` });
const NOT_JSON: Refusal = { refused: 'invalid_json', message: 'The delivery body must be a JSON object.' };

export interface VerifyInput {
  format: WebhookFormat;
  secret: string;
  signatureHeader: string | null;
  headers: Headers;
  raw: Buffer;
  now: number;
}

/**
 * The hex HMAC of the raw body in header `name` (its digits the first group of `shape`, described as
 * `described`): missing, malformed, not matching, or null when it holds.
 */
function hexSignatureRefusal(name: string, given: string | undefined, shape: RegExp, described: string, secret: string, raw: Buffer): Refusal | null {
  if (!given) return missing([name]);
  const digits = shape.exec(given)?.[1];
  if (!digits || !HEX_SIGNATURE.test(digits)) return malformed(name, described);
  return sameBytes(hmac(secret, raw), Buffer.from(digits, 'hex')) ? null : MISMATCH;
}

/**
 * The delivery, when its signature holds and it is fresh, or why not. The body must be a JSON object.
 * Every check a sender is told about concerns what it sent (a header missing or malformed, a stale
 * timestamp, a signature that does not match), never what the signature should have been.
 */
export function verifyDelivery({ format, secret, signatureHeader, headers, raw, now }: VerifyInput): Delivery | Refusal {
  const fresh = (ms: number) => Number.isFinite(ms) && Math.abs(now - ms) <= TIMESTAMP_TOLERANCE_MS;
  let deliveryId: string | null = null;
  switch (format) {
    case 'github': {
      const refusal = hexSignatureRefusal('X-Hub-Signature-256', header(headers, 'x-hub-signature-256'), /^sha256=(.*)$/, '`sha256=` and 64 hex digits', secret, raw);
      if (refusal) return refusal;
      deliveryId = text(header(headers, 'x-github-delivery'));
      break;
    }
    case 'linear': {
      const refusal = hexSignatureRefusal('Linear-Signature', header(headers, 'linear-signature'), /^(.*)$/, '64 hex digits', secret, raw);
      if (refusal) return refusal;
      deliveryId = text(header(headers, 'linear-delivery'));
      break;
    }
    case 'standard-webhooks': {
      const id = header(headers, 'webhook-id');
      const timestamp = header(headers, 'webhook-timestamp');
      const signatures = header(headers, 'webhook-signature');
      if (!id || !timestamp || !signatures) return missing(signatureHeadersOf(format, null).filter((name) => !header(headers, name)));
      if (!/^\d{1,12}$/.test(timestamp) || !fresh(Number(timestamp) * 1000)) return stale('`webhook-timestamp`, in seconds');
      const given = signatures.split(' ').flatMap((entry) => (entry.startsWith('v1,') && BASE64_SIGNATURE.test(entry.slice(3)) ? [Buffer.from(entry.slice(3), 'base64')] : []));
      if (!given.length) return malformed('webhook-signature', 'a space-separated list holding a `v1,<base64 HMAC-SHA256>` signature');
      const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
      const expected = hmac(key, `${id}.${timestamp}.${raw.toString('utf8')}`);
      if (!given.some((signature) => sameBytes(expected, signature))) return MISMATCH;
      deliveryId = id;
      break;
    }
    case 'hmac-sha256': {
      const name = signatureHeader ?? DEFAULT_SIGNATURE_HEADER;
      const refusal = hexSignatureRefusal(name, header(headers, name), /^(?:sha256=)?(.*)$/, '64 hex digits, optionally after `sha256=`', secret, raw);
      if (refusal) return refusal;
      deliveryId = text(header(headers, 'x-delivery-id')) ?? text(header(headers, 'webhook-id'));
      break;
    }
  }
  let payload: unknown;
  try {
    payload = JSON.parse(raw.toString('utf8'));
  } catch {
    return NOT_JSON;
  }
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) return NOT_JSON;
  const body = payload as Record<string, unknown>;
  if (format === 'linear' && !fresh(Number(body.webhookTimestamp))) return stale("the body's `webhookTimestamp`, in milliseconds");
  const event = (format === 'github' ? text(header(headers, 'x-github-event')) : text(body.type)) ?? 'delivery';
  const action = format === 'github' || format === 'linear' ? text(body.action) : null;
  // Without a delivery id, the body itself identifies a delivery: an exact resend is the same delivery.
  deliveryId ??= `sha256:${createHmac('sha256', 'delivery').update(raw).digest('hex')}`;
  return { deliveryId: deliveryId.slice(0, 200), event: event.slice(0, 200), action: action?.slice(0, 200) ?? null, payload: body };
}

/**
 * Whether a format's signature covers the delivery id. Where it does not, a captured delivery resent under a
 * new id passes the check (Linear's signed `webhookTimestamp` limits that to 5 minutes; GitHub and
 * hmac-sha256 sign no time at all), so intake recognises the body instead.
 */
const SIGNS_DELIVERY_ID: Record<WebhookFormat, boolean> = { github: false, linear: false, 'hmac-sha256': false, 'standard-webhooks': true };

/** The body's SHA-256 that tells a replay of a format signing no delivery id; null for the others. */
export const replayHash = (format: WebhookFormat, raw: Buffer): string | null =>
  SIGNS_DELIVERY_ID[format] ? null : createHash('sha256').update(raw).digest('base64url');

/**
 * How intake takes a body it recorded before under another delivery id: a replay while the first recording
 * is younger than the window, a new delivery after it.
 */
export const isReplay = (first: { receivedAt: Date }, receivedAt: Date, windowMs: number) => receivedAt.getTime() - first.receivedAt.getTime() < windowMs;

/** What conditions and templates of webhook triggers see. */
export function webhookContext(source: { id: string; format: string; signatureHeader: string | null; githubAppId?: string | null }, delivery: Delivery, headers: Headers, receivedAt: Date): WebhookContext {
  const signatureHeader = source.signatureHeader?.toLowerCase();
  const kept = Object.fromEntries(
    Object.entries(headers)
      .filter(([name]) => name !== signatureHeader && !CREDENTIAL_HEADER.test(name))
      .map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : (value ?? '')]),
  );
  return {
    // A source bound to a GitHub App names it: its runs' tokens come from the delivery's installation.
    source: { id: source.id, format: source.format, ...(source.githubAppId && { githubAppId: source.githubAppId }) },
    event: delivery.event,
    action: delivery.action,
    payload: delivery.payload,
    headers: kept,
    delivery: { id: delivery.deliveryId, receivedAt: receivedAt.toISOString() },
  };
}


/** A detail's `actual` whose JSON is longer than this is cut where decisions are recorded. */
export const RECORDED_ACTUAL = 500;

type Detail = TriggerDecision['details'][number];

/** Cuts a large `actual`: a condition on a big field (an issue body) does not copy it into every decision. */
function recordedDetail(detail: Detail): Detail {
  const { actual } = detail;
  // A string's JSON is at most six characters per character and two quotes: short ones need no look.
  if (actual === undefined || actual === null || typeof actual === 'number' || typeof actual === 'boolean' || (typeof actual === 'string' && actual.length * 6 + 2 <= RECORDED_ACTUAL)) return detail;
  const json = JSON.stringify(actual);
  if (json.length <= RECORDED_ACTUAL) return detail;
  // Never between the two halves of a surrogate pair (an emoji): PostgreSQL refuses half of one.
  const end = /[\ud800-\udbff]/.test(json[RECORDED_ACTUAL - 1]) ? RECORDED_ACTUAL - 1 : RECORDED_ACTUAL;
  return { ...detail, actual: `${json.slice(0, end)}…` };
}

/** How one trigger decided on a delivery, as activity and backtests record it. */
export function triggerDecision(triggerId: string, outcome: ConditionDecision): TriggerDecision {
  return { triggerId, decision: outcome.decision, ...(outcome.error ? { error: outcome.error } : {}), details: outcome.details.map((detail) => recordedDetail(detail as Detail)) };
}

/**
 * How the candidate triggers decide on a delivery: those whose `events` match its name evaluate their
 * conditions on its context; the others did not look at it and are left out.
 */
export function decideDelivery<T extends { id: string; config: unknown }>(triggers: T[], name: string, context: Record<string, unknown>): { trigger: T; decision: TriggerDecision }[] {
  const decided: { trigger: T; decision: TriggerDecision }[] = [];
  for (const trigger of triggers) {
    const { events, conditions } = trigger.config as { events: string[]; conditions?: Record<string, unknown> };
    if (matchesEvents(events, name)) decided.push({ trigger, decision: triggerDecision(trigger.id, decide(conditions, context)) });
  }
  return decided;
}

/**
 * How the live candidates of a delivery's source decide on it: those whose `events` match its name evaluate
 * their conditions (compiled once, in the catalog). Misses are counted, not kept, unless `keepMisses`: a
 * delivery's activity stores only its matches and errors.
 */
export function decideCandidates(candidates: WebhookCandidate[], name: string, context: Record<string, unknown>, keepMisses = false) {
  const decided: { candidate: WebhookCandidate; decision: TriggerDecision }[] = [];
  let misses = 0;
  const size = contextSize(context);
  for (const candidate of candidates) {
    if (!matchesEvents(candidate.events, name)) continue;
    const outcome = decidePrepared(candidate.conditions, context, size);
    if (outcome.decision === 'no-match') misses++;
    if (outcome.decision !== 'no-match' || keepMisses) decided.push({ candidate, decision: triggerDecision(candidate.id, outcome) });
  }
  return { decided, misses };
}
