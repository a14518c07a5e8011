// Pure rules of refused deliveries: the status each refusal is answered with, what of a delivery is
// recorded (its header names, never their values), how many refusals of a source are recorded a minute,
// and what an owner should check, in plain words, for each reason and format.
import { BODY_LIMIT } from '../http/body';
import { signatureHeadersOf, TIMESTAMP_TOLERANCE_MS, type RefusalReason, type WebhookFormat } from './webhooks-fns';

/** A refusal's code: one of a known source's reasons, or no source at that URL (recorded nowhere: no tenant). */
export type IntakeRefusalCode = RefusalReason | 'unknown_source';

export const REFUSAL_STATUS: Record<IntakeRefusalCode, number> = {
  unknown_source: 401,
  signature_missing: 401,
  signature_malformed: 401,
  invalid_signature: 401,
  timestamp_out_of_tolerance: 401,
  invalid_json: 400,
  payload_too_large: 413,
};

/** Header names recorded of one delivery, and the characters kept of each. */
export const MAX_HEADER_NAMES = 64;
const MAX_HEADER_NAME = 100;

/** The names of a delivery's headers (lower-cased by Node), bounded; never their values. */
export const headerNamesOf = (headers: Record<string, unknown>): string[] => Object.keys(headers).slice(0, MAX_HEADER_NAMES).map((name) => name.slice(0, MAX_HEADER_NAME));

/**
 * How many refusals of each source are recorded: a burst of `perMinute` at once, then `perMinute` a minute
 * (a token bucket per source). `admit` answers, for a refusal to record, how many were counted and not
 * recorded since the last one; null for one to count only. Sources whose bucket is full again and owe no
 * count are forgotten when `maxSources` are tracked.
 */
export function refusalRate({ perMinute, maxSources = 10_000, clock = Date.now }: { perMinute: number; maxSources?: number; clock?: () => number }) {
  const buckets = new Map<string, { tokens: number; at: number; unrecorded: number }>();
  const refill = (bucket: { tokens: number; at: number }, now: number) => {
    bucket.tokens = Math.min(perMinute, bucket.tokens + ((now - bucket.at) * perMinute) / 60_000);
    bucket.at = now;
  };
  function forgetIdle(now: number) {
    for (const [sourceId, bucket] of buckets) {
      refill(bucket, now);
      if (bucket.tokens >= perMinute && bucket.unrecorded === 0) buckets.delete(sourceId);
    }
    // Still full: the counts owed are dropped rather than the memory grown.
    if (buckets.size >= maxSources) buckets.clear();
  }
  return {
    admit(sourceId: string): { unrecordedBefore: number } | null {
      const now = clock();
      let bucket = buckets.get(sourceId);
      if (!bucket) {
        if (buckets.size >= maxSources) forgetIdle(now);
        buckets.set(sourceId, (bucket = { tokens: perMinute, at: now, unrecorded: 0 }));
      }
      refill(bucket, now);
      if (bucket.tokens < 1) {
        bucket.unrecorded += 1;
        return null;
      }
      bucket.tokens -= 1;
      const unrecordedBefore = bucket.unrecorded;
      bucket.unrecorded = 0;
      return { unrecordedBefore };
    },
    /** How many sources are tracked (tests). */
    get size() {
      return buckets.size;
    },
  };
}

const SENDER: Record<WebhookFormat, string> = { github: 'GitHub', linear: 'Linear', 'standard-webhooks': 'The sender', 'hmac-sha256': 'The sender', gitlab: 'GitLab', slack: 'Slack', sentry: 'Sentry', jira: 'Jira' };
const TOLERANCE = `${TIMESTAMP_TOLERANCE_MS / 60_000} minutes`;
const names = (list: string[]) => list.join(', ');

/**
 * What the owner should check about a refusal, in plain words, for the source's format. Worked out from
 * what is recorded (the reason, the message the sender got, the header names), so it can improve without
 * touching stored rows.
 */
export function refusalAdvice(refusal: { reason: RefusalReason; message: string; headerNames: string[] }, source: { format: WebhookFormat; signatureHeader: string | null }): string {
  const { format } = source;
  const sender = SENDER[format];
  const signature = signatureHeadersOf(format, source.signatureHeader);
  const sent = new Set(refusal.headerNames);
  switch (refusal.reason) {
    case 'signature_missing': {
      const absent = signature.filter((name) => !sent.has(name.toLowerCase()));
      const headers = `${names(absent.length ? absent : signature)} header${absent.length === 1 ? '' : 's'}`;
      if (format === 'github') {
        const notGitHub = sent.has('x-github-event') ? '' : ' It had no X-GitHub-Event header either: check that it comes from a GitHub webhook at all.';
        return `GitHub sent no ${headers}: set a secret on the GitHub webhook (its Secret field, under Settings → Webhooks), this source's signing secret.${notGitHub}`;
      }
      if (format === 'hmac-sha256') return `The sender sent no ${headers}, this source's signature header: have it sign each body with HMAC-SHA256 under this source's signing secret and send the hex digest in that header (or change the header the source reads).`;
      if (format === 'gitlab') return "GitLab sent no X-Gitlab-Token header: set the webhook's Secret token (Settings → Webhooks) to this source's signing secret.";
      if (format === 'slack') return `Slack sent no ${headers}: check that the request comes from the Slack app's Event Subscriptions or slash command, with this source's URL as its Request URL.`;
      return `${sender} sent no ${headers}: check that the sender signs its deliveries with this source's signing secret and sends them to this source's payload URL.`;
    }
    case 'signature_malformed':
      return `${refusal.message} Check how the sender signs: this source's format is ${format}, which expects ${format === 'standard-webhooks' || format === 'gitlab' ? 'a `v1,` signature in base64' : format === 'slack' ? 'a `v0=` signature of the timestamp and the raw body' : 'the hex HMAC-SHA256 of the raw body'}.`;
    case 'invalid_signature':
      if (format === 'github') return "The X-Hub-Signature-256 signature did not match the body: the GitHub webhook's secret is not this source's current signing secret (after a rotation the old one no longer works). Paste the current secret into the webhook's Secret field.";
      if (format === 'gitlab') return "The secret token did not match (or, for a webhook with a signing token, the signature did not): set the GitLab webhook's Secret token to this source's current signing secret, or give the source the webhook's signing token (rotate-secret with `signingSecret`).";
      if (format === 'slack' || format === 'sentry') return `The signature did not match the body: this source's secret is not the ${format === 'slack' ? "Slack app's current signing secret (Basic Information → App Credentials)" : "Sentry integration's current client secret"}. Give the source the current one (rotate-secret with \`signingSecret\`).`;
      return `The signature did not match the body: ${format === 'linear' ? 'Linear' : 'the sender'} signs with another secret than this source's current one (after a rotation the old one no longer works), or something on the way changed the body (a proxy that re-encodes it).`;
    case 'timestamp_out_of_tolerance':
      return `The signed timestamp (${format === 'linear' ? "the body's webhookTimestamp" : format === 'slack' ? 'X-Slack-Request-Timestamp' : 'webhook-timestamp'}) was missing or more than ${TOLERANCE} from this server's clock: check the clocks of the sender and of this server (NTP), or the delivery was held back or resent late.`;
    case 'invalid_json':
      if (format === 'github' && refusal.message === 'The delivery body must be a JSON object.') {
        return "The body was not a JSON object: set the GitHub webhook's Content type to application/json (with application/x-www-form-urlencoded GitHub sends a form).";
      }
      return `${refusal.message} The sender must send a JSON object as the body.`;
    case 'payload_too_large':
      return `The body was over ${BODY_LIMIT.replace('mb', ' MB')}, the most intake takes: have the sender send less${format === 'github' ? ' (subscribe the GitHub webhook to fewer events: pushes of many commits are the usual large ones)' : ''}.`;
  }
}
