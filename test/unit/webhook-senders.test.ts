// GitLab, Slack, Sentry and Jira deliveries: each verified the way its sender signs (valid, wrong secret,
// altered body, old timestamp), and named in its sender's terms. Signatures are made as each sender's
// documentation describes; GitLab's signing token with the Standard Webhooks library it follows.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { verifyDelivery, type Delivery, type WebhookFormat } from '../../src/webhooks/webhooks-fns';

const NOW = 1_764_400_000_000;
const SECONDS = String(NOW / 1000);
const SECRET = 'a sender secret 0123456789abcdef';
const fixture = (name: string) => readFileSync(path.join(__dirname, '../fixtures/webhooks', name));
const hex = (content: Buffer | string, secret = SECRET) => createHmac('sha256', secret).update(content).digest('hex');

type Headers = Record<string, string>;
const verify = (format: WebhookFormat, headers: Headers, raw: Buffer, { secret = SECRET, now = NOW } = {}) => verifyDelivery({ format, secret, signatureHeader: null, headers, raw, now });
const outcome = (result: ReturnType<typeof verifyDelivery>) => ('refused' in result ? result.refused : 'handshake' in result ? 'handshake' : 'accepted');
const delivered = (result: ReturnType<typeof verifyDelivery>) => {
  if ('refused' in result || 'handshake' in result) throw new Error(`not a delivery: ${JSON.stringify(result)}`);
  return result as Delivery;
};

/** Slack's `v0` signature: the HMAC of `v0:<timestamp>:<body>` under the app's signing secret. */
const slackHeaders = (raw: Buffer | string, timestamp = SECONDS, secret = SECRET): Headers => ({
  'x-slack-request-timestamp': timestamp,
  'x-slack-signature': `v0=${hex(`v0:${timestamp}:${raw}`, secret)}`,
  'content-type': 'application/json',
});

describe('gitlab', () => {
  const body = fixture('gitlab/note.MergeRequest.json');
  it.each<[string, Headers, Buffer, string]>([
    ['its secret token', { 'x-gitlab-token': SECRET }, body, 'accepted'],
    ['another token', { 'x-gitlab-token': 'another token' }, body, 'invalid_signature'],
    ['a token that starts like the secret', { 'x-gitlab-token': SECRET.slice(0, 10) }, body, 'invalid_signature'],
    ['no token', {}, body, 'signature_missing'],
  ])('%s: %s', (_label, headers, raw, expected) => {
    expect(outcome(verify('gitlab', headers, raw))).toBe(expected);
  });

  it('a webhook with a signing token: Standard Webhooks headers, checked over the id, the timestamp and the body', () => {
    const signingToken = `whsec_${Buffer.from('gitlab signing token, 32 bytes..').toString('base64')}`;
    const signer = new Webhook(signingToken);
    const id = 'b7a6f2e4-1d3c-4e5f-8a9b-0c1d2e3f4a5b';
    const signed = (raw: Buffer, at = new Date(NOW)) => ({ 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signer.sign(id, at, raw.toString()) });
    const accepted = delivered(verify('gitlab', signed(body), body, { secret: signingToken }));
    expect(accepted.deliveryId).toBe(id);
    expect(outcome(verify('gitlab', signed(body), Buffer.from(body.toString().replace('"note"', '"nota"')), { secret: signingToken }))).toBe('invalid_signature');
    expect(outcome(verify('gitlab', signed(body, new Date(NOW - 6 * 60_000)), body, { secret: signingToken }))).toBe('timestamp_out_of_tolerance');
    // The signature is what is checked: a right token beside a wrong signature does not pass.
    expect(outcome(verify('gitlab', { ...signed(body), 'webhook-signature': signer.sign('another', new Date(NOW), body.toString()), 'x-gitlab-token': signingToken }, body, { secret: signingToken }))).toBe('invalid_signature');
  });

  it.each<[string, string, string | null]>([
    ['gitlab/merge_request.open.json', 'merge_request', 'open'],
    ['gitlab/note.MergeRequest.json', 'note', 'MergeRequest'],
    ['gitlab/issue.open.json', 'issue', 'open'],
    ['gitlab/pipeline.failed.json', 'pipeline', 'failed'],
  ])('%s is named %s.%s', (file, event, action) => {
    const delivery = delivered(verify('gitlab', { 'x-gitlab-token': SECRET, 'idempotency-key': 'key-1', 'x-gitlab-event-uuid': 'uuid-1' }, fixture(file)));
    expect([delivery.event, delivery.action, delivery.deliveryId]).toEqual([event, action, 'key-1']);
  });
});

describe('slack', () => {
  const mention = fixture('slack/app_mention.json');
  it.each<[string, () => [Headers, Buffer], string]>([
    ['signed now', () => [slackHeaders(mention), mention], 'accepted'],
    ['signed with another secret', () => [slackHeaders(mention, SECONDS, 'another secret'), mention], 'invalid_signature'],
    ['the body altered after signing', () => [slackHeaders(mention), Buffer.from(mention.toString().replace('app_mention', 'app_mentiom'))], 'invalid_signature'],
    ['a signature for another timestamp', () => [{ ...slackHeaders(mention), 'x-slack-request-timestamp': String(NOW / 1000 + 1) }, mention], 'invalid_signature'],
    ['signed six minutes ago', () => [slackHeaders(mention, String(NOW / 1000 - 360)), mention], 'timestamp_out_of_tolerance'],
    ['no timestamp', () => [{ 'x-slack-signature': slackHeaders(mention)['x-slack-signature'] }, mention], 'signature_missing'],
    ['no signature', () => [{ 'x-slack-request-timestamp': SECONDS }, mention], 'signature_missing'],
    ['a signature without v0=', () => [{ ...slackHeaders(mention), 'x-slack-signature': hex(`v0:${SECONDS}:${mention}`) }, mention], 'signature_malformed'],
  ])('%s: %s', (_label, sent, expected) => {
    const [headers, raw] = sent();
    expect(outcome(verify('slack', headers, raw))).toBe(expected);
  });

  it('an app_mention is named by its event, identified by its event_id (a retry is the same delivery), without the old verification token', () => {
    const delivery = delivered(verify('slack', { ...slackHeaders(mention), 'x-slack-retry-num': '1' }, mention));
    const body = JSON.parse(mention.toString());
    expect([delivery.event, delivery.action, delivery.deliveryId]).toEqual(['app_mention', null, body.event_id]);
    expect(delivery.payload).not.toHaveProperty('token');
    expect(delivery.payload).toMatchObject({ event: { type: 'app_mention', text: body.event.text } });
  });

  it('URL verification is a handshake answered with its challenge, when signed', () => {
    const raw = fixture('slack/url_verification.json');
    expect(verify('slack', slackHeaders(raw), raw)).toEqual({ handshake: { challenge: JSON.parse(raw.toString()).challenge } });
    expect(outcome(verify('slack', slackHeaders(raw, SECONDS, 'another secret'), raw))).toBe('invalid_signature');
  });

  it('a slash command is a form: named slash_command with its command, identified by its trigger_id', () => {
    const raw = Buffer.from(fixture('slack/slash_command.txt').toString().trim());
    const form = new URLSearchParams(raw.toString());
    const delivery = delivered(verify('slack', { ...slackHeaders(raw), 'content-type': 'application/x-www-form-urlencoded' }, raw));
    expect([delivery.event, delivery.action, delivery.deliveryId]).toEqual(['slash_command', form.get('command'), form.get('trigger_id')]);
    expect(delivery.payload).toMatchObject({ text: form.get('text'), user_id: form.get('user_id') });
    expect(delivery.payload).not.toHaveProperty('token');
    // As JSON it is not a form: refused, saying what is taken.
    expect(verify('slack', slackHeaders(raw), raw)).toEqual({ refused: 'invalid_json', message: expect.stringContaining('a form') });
  });
});

describe('sentry', () => {
  const issue = fixture('sentry/issue.created.json');
  const headers = (raw: Buffer, secret = SECRET): Headers => ({ 'sentry-hook-signature': hex(raw, secret), 'sentry-hook-resource': 'issue', 'sentry-hook-timestamp': SECONDS, 'request-id': 'req-1' });
  it.each<[string, () => [Headers, Buffer], string]>([
    ['signed with the client secret', () => [headers(issue), issue], 'accepted'],
    ['signed with another secret', () => [headers(issue, 'another secret'), issue], 'invalid_signature'],
    ['the body altered after signing', () => [headers(issue), Buffer.from(issue.toString().replace('created', 'resolved'))], 'invalid_signature'],
    ['no signature', () => [{ 'sentry-hook-resource': 'issue' }, issue], 'signature_missing'],
  ])('%s: %s', (_label, sent, expected) => {
    const [given, raw] = sent();
    expect(outcome(verify('sentry', given, raw))).toBe(expected);
  });

  it('is named by its resource and action, identified by Request-ID', () => {
    expect(delivered(verify('sentry', headers(issue), issue))).toMatchObject({ event: 'issue', action: 'created', deliveryId: 'req-1' });
    const alert = fixture('sentry/event_alert.triggered.json');
    expect(delivered(verify('sentry', { ...headers(alert), 'sentry-hook-resource': 'event_alert' }, alert))).toMatchObject({ event: 'event_alert', action: 'triggered' });
  });
});

describe('jira', () => {
  const created = fixture('jira/issue_created.json');
  const headers = (raw: Buffer, secret = SECRET): Headers => ({ 'x-hub-signature': `sha256=${hex(raw, secret)}`, 'x-atlassian-webhook-identifier': 'wh-1' });
  it.each<[string, () => [Headers, Buffer], string]>([
    ['signed with the webhook secret', () => [headers(created), created], 'accepted'],
    ['signed with another secret', () => [headers(created, 'another secret'), created], 'invalid_signature'],
    ['the body altered after signing', () => [headers(created), Buffer.from(created.toString().replace('issue_created', 'issue_deleted'))], 'invalid_signature'],
    ['a signature without sha256=', () => [{ 'x-hub-signature': hex(created) }, created], 'signature_malformed'],
    ['no signature', () => [{}, created], 'signature_missing'],
  ])('%s: %s', (_label, sent, expected) => {
    const [given, raw] = sent();
    expect(outcome(verify('jira', given, raw))).toBe(expected);
  });

  it.each<[string, string, string | null]>([
    ['jira/issue_created.json', 'issue_created', 'issue_created'],
    ['jira/issue_updated.issue_assigned.json', 'issue_updated', 'issue_assigned'],
    ['jira/comment_created.json', 'comment_created', null],
  ])('%s is named %s.%s, without the jira: prefix', (file, event, action) => {
    const raw = fixture(file);
    const delivery = delivered(verify('jira', headers(raw), raw));
    expect([delivery.event, delivery.action, delivery.deliveryId]).toEqual([event, action, 'wh-1']);
  });
});
