// Pure rules of inbound webhooks: signing secrets, verifying a delivery in the way of its source's format
// (constant time, on the raw body), naming its event, and preparing the context triggers and templates see
// (how triggers decide on it: triggers/acts-fns.ts).
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { components } from '../../generated/openapi';

export type WebhookFormat = components['schemas']['WebhookFormat'];
export type WebhookContext = Record<string, unknown> & { event: string; action: string | null };

/** Deliveries older (or further in the future) than this are refused as stale. */
export const TIMESTAMP_TOLERANCE_MS = 5 * 60 * 1000;
export const DEFAULT_SIGNATURE_HEADER = 'x-signature-256';

const hmac = (key: Buffer | string, content: string | Buffer) => createHmac('sha256', key).update(content).digest();

/** Hex HMAC-SHA256, as GitHub, Linear, Slack, Sentry, Jira and hmac-sha256 senders send it. */
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
      return STANDARD_HEADERS;
    case 'hmac-sha256':
      return [signatureHeader ?? DEFAULT_SIGNATURE_HEADER];
    case 'gitlab':
      return ['X-Gitlab-Token'];
    case 'slack':
      return ['X-Slack-Request-Timestamp', 'X-Slack-Signature'];
    case 'sentry':
      return ['Sentry-Hook-Signature'];
    case 'jira':
      return ['X-Hub-Signature'];
  }
}

const STANDARD_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'];
const listed = (names: string[]) => names.map((name) => `\`${name}\``).join(', ');
const missing = (names: string[]): Refusal => ({ refused: 'signature_missing', message: `The delivery has no ${listed(names)} header${names.length === 1 ? '' : 's'}; this source takes only deliveries signed with its secret.` });
const malformed = (name: string, shape: string): Refusal => ({ refused: 'signature_malformed', message: `The \`${name}\` header is not ${shape}.` });
const MISMATCH: Refusal = { refused: 'invalid_signature', message: "The signature does not match the body signed with this source's secret." };
const WRONG_TOKEN: Refusal = { refused: 'invalid_signature', message: "The `X-Gitlab-Token` header is not this source's secret." };
const stale = (where: string): Refusal => ({ refused: 'timestamp_out_of_tolerance', message: `The delivery's timestamp (${where}) is missing or more than ${TIMESTAMP_TOLERANCE_MS / 60_000} minutes from this server's clock.` });
const NOT_JSON: Refusal = { refused: 'invalid_json', message: 'The delivery body must be a JSON object.' };
const NOT_FORM: Refusal = { refused: 'invalid_json', message: 'The delivery body must be a JSON object, or a form (a slash command).' };

export interface VerifyInput {
  format: WebhookFormat;
  secret: string;
  signatureHeader: string | null;
  headers: Headers;
  raw: Buffer;
  now: number;
}

/** A request a sender's protocol wants answered with `reply` (200), and recorded as nothing: Slack's URL verification. */
export interface Handshake {
  handshake: Record<string, unknown>;
}

/**
 * The hex HMAC of `signed` in header `name` (its digits the first group of `shape`, described as
 * `described`): missing, malformed, not matching, or null when it holds.
 */
function hexSignatureRefusal(name: string, given: string | undefined, shape: RegExp, described: string, key: string, signed: string | Buffer): Refusal | null {
  if (!given) return missing([name]);
  const digits = shape.exec(given)?.[1];
  if (!digits || !HEX_SIGNATURE.test(digits)) return malformed(name, described);
  return sameBytes(hmac(key, signed), Buffer.from(digits, 'hex')) ? null : MISMATCH;
}

/** A Standard Webhooks signature (`webhook-id`, `webhook-timestamp`, `webhook-signature`): the delivery id it signs, or why not. */
function standardSignature(headers: Headers, secret: string, raw: Buffer, fresh: (ms: number) => boolean): { deliveryId: string } | Refusal {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) return missing(STANDARD_HEADERS.filter((name) => !header(headers, name)));
  if (!/^\d{1,12}$/.test(timestamp) || !fresh(Number(timestamp) * 1000)) return stale('`webhook-timestamp`, in seconds');
  const given = signatures.split(' ').flatMap((entry) => (entry.startsWith('v1,') && BASE64_SIGNATURE.test(entry.slice(3)) ? [Buffer.from(entry.slice(3), 'base64')] : []));
  if (!given.length) return malformed('webhook-signature', 'a space-separated list holding a `v1,<base64 HMAC-SHA256>` signature');
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = hmac(key, `${id}.${timestamp}.${raw.toString('utf8')}`);
  return given.some((signature) => sameBytes(expected, signature)) ? { deliveryId: id } : MISMATCH;
}

/** Constant time whatever the lengths: both sides are hashed first. */
const sameSecret = (given: string, secret: string) => timingSafeEqual(createHash('sha256').update(given).digest(), createHash('sha256').update(secret).digest());

/** Whether the signature of a delivery of `format` holds: the delivery id its headers give (null when they give none), or why not. */
function signatureOf({ format, secret, signatureHeader, headers, raw }: VerifyInput, fresh: (ms: number) => boolean): { deliveryId: string | null } | Refusal {
  const hex = (name: string, shape: RegExp, described: string, signed: string | Buffer = raw) => hexSignatureRefusal(name, header(headers, name), shape, described, secret, signed);
  const checked = (refusal: Refusal | null, deliveryHeader: string) => refusal ?? { deliveryId: text(header(headers, deliveryHeader)) };
  switch (format) {
    case 'github':
      return checked(hex('X-Hub-Signature-256', /^sha256=(.*)$/, '`sha256=` and 64 hex digits'), 'x-github-delivery');
    case 'linear':
      return checked(hex('Linear-Signature', /^(.*)$/, '64 hex digits'), 'linear-delivery');
    case 'standard-webhooks':
      return standardSignature(headers, secret, raw, fresh);
    case 'hmac-sha256': {
      const refusal = hex(signatureHeader ?? DEFAULT_SIGNATURE_HEADER, /^(?:sha256=)?(.*)$/, '64 hex digits, optionally after `sha256=`');
      return refusal ?? { deliveryId: text(header(headers, 'x-delivery-id')) ?? text(header(headers, 'webhook-id')) };
    }
    case 'gitlab': {
      // A webhook with a signing token signs as Standard Webhooks; one with a secret token only sends the token.
      if (header(headers, 'webhook-signature')) return standardSignature(headers, secret, raw, fresh);
      const token = header(headers, 'x-gitlab-token');
      if (!token) return missing(['X-Gitlab-Token']);
      if (!sameSecret(token, secret)) return WRONG_TOKEN;
      return { deliveryId: text(header(headers, 'idempotency-key')) ?? text(header(headers, 'x-gitlab-event-uuid')) };
    }
    case 'slack': {
      const timestamp = header(headers, 'x-slack-request-timestamp');
      if (!timestamp) return missing(['X-Slack-Request-Timestamp']);
      if (!/^\d{1,12}$/.test(timestamp) || !fresh(Number(timestamp) * 1000)) return stale('`X-Slack-Request-Timestamp`, in seconds');
      // Slack's delivery ids are in the body (`event_id`, `trigger_id`), read once it is parsed.
      return hex('X-Slack-Signature', /^v0=(.*)$/, '`v0=` and 64 hex digits', Buffer.concat([Buffer.from(`v0:${timestamp}:`), raw])) ?? { deliveryId: null };
    }
    case 'sentry':
      return checked(hex('Sentry-Hook-Signature', /^(.*)$/, '64 hex digits'), 'request-id');
    case 'jira':
      return checked(hex('X-Hub-Signature', /^sha256=(.*)$/, '`sha256=` and 64 hex digits'), 'x-atlassian-webhook-identifier');
  }
}

const isForm = (headers: Headers) => /^application\/x-www-form-urlencoded\b/i.test(header(headers, 'content-type') ?? '');

/** The body as an object: JSON, or for Slack a form (slash commands); null when it is neither. */
function bodyOf(format: WebhookFormat, headers: Headers, raw: Buffer): Record<string, unknown> | null {
  if (format === 'slack' && isForm(headers)) return Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
  let payload: unknown;
  try {
    payload = JSON.parse(raw.toString('utf8'));
  } catch {
    return null;
  }
  return payload && typeof payload === 'object' && !Array.isArray(payload) ? (payload as Record<string, unknown>) : null;
}

const field = (value: unknown, key: string) => (value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined);

/** GitLab's action of an `object_kind`: what happened to a merge request or issue, what a note is on, a pipeline's status. */
function gitlabAction(kind: string | null, attributes: unknown): string | null {
  if (kind === 'note') return text(field(attributes, 'noteable_type'));
  if (kind === 'pipeline' || kind === 'deployment') return text(field(attributes, 'status'));
  return text(field(attributes, 'action'));
}

/** A delivery's event and action, and the delivery id its body gives, in its sender's naming. */
function namingOf(format: WebhookFormat, headers: Headers, body: Record<string, unknown>): { event: string | null; action: string | null; deliveryId?: string | null } {
  switch (format) {
    case 'github':
      return { event: text(header(headers, 'x-github-event')), action: text(body.action) };
    case 'linear':
      return { event: text(body.type), action: text(body.action) };
    case 'standard-webhooks':
    case 'hmac-sha256':
      return { event: text(body.type), action: null };
    case 'gitlab': {
      const kind = text(body.object_kind) ?? text(body.event_name);
      return { event: kind, action: gitlabAction(kind, body.object_attributes) };
    }
    case 'slack':
      if (typeof body.command === 'string') return { event: 'slash_command', action: text(body.command), deliveryId: text(body.trigger_id) };
      if (body.type === 'event_callback') return { event: text(field(body.event, 'type')), action: text(field(body.event, 'subtype')), deliveryId: text(body.event_id) };
      return { event: text(body.type), action: null };
    case 'sentry':
      return { event: text(header(headers, 'sentry-hook-resource')), action: text(body.action) };
    case 'jira':
      return { event: text(body.webhookEvent)?.replace(/^jira:/, '') ?? null, action: text(body.issue_event_type_name) };
  }
}

/**
 * The delivery, when its signature holds and it is fresh, or why not. The body must be a JSON object (or a
 * Slack form). Every check a sender is told about concerns what it sent (a header missing or malformed, a
 * stale timestamp, a signature that does not match), never what the signature should have been.
 */
export function verifyDelivery(input: VerifyInput): Delivery | Handshake | Refusal {
  const { format, headers, raw, now } = input;
  const fresh = (ms: number) => Number.isFinite(ms) && Math.abs(now - ms) <= TIMESTAMP_TOLERANCE_MS;
  const signed = signatureOf(input, fresh);
  if ('refused' in signed) return signed;
  const body = bodyOf(format, headers, raw);
  if (!body) return format === 'slack' ? NOT_FORM : NOT_JSON;
  if (format === 'linear' && !fresh(Number(body.webhookTimestamp))) return stale("the body's `webhookTimestamp`, in milliseconds");
  if (format === 'slack') {
    if (body.type === 'url_verification') return { handshake: { challenge: text(body.challenge) ?? '' } };
    // Slack's verification token is a credential of the old scheme: it is not kept with the delivery.
    delete body.token;
  }
  const named = namingOf(format, headers, body);
  // Without a delivery id, the body itself identifies a delivery: an exact resend is the same delivery.
  const deliveryId = signed.deliveryId ?? named.deliveryId ?? `sha256:${createHmac('sha256', 'delivery').update(raw).digest('hex')}`;
  return { deliveryId: deliveryId.slice(0, 200), event: (named.event ?? 'delivery').slice(0, 200), action: named.action?.slice(0, 200) ?? null, payload: body };
}

/** A slash command is answered at once with an empty 200 (Slack shows any text it gets to the user); other deliveries with their recording. */
export const answersEmpty = (format: WebhookFormat, delivery: Delivery) => format === 'slack' && delivery.event === 'slash_command';

/**
 * Whether a format's signature covers the delivery id. Where it does not, a captured delivery resent under a
 * new id passes the check (Linear's signed `webhookTimestamp` limits that to 5 minutes; GitHub and
 * hmac-sha256 sign no time at all), so intake recognises the body instead.
 */
const SIGNS_DELIVERY_ID: Record<WebhookFormat, boolean> = { github: false, linear: false, 'hmac-sha256': false, 'standard-webhooks': true, gitlab: false, slack: true, sentry: false, jira: false };

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

