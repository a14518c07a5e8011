import { createHmac } from 'node:crypto';
import { verifyDelivery, type WebhookFormat } from '../../src/webhooks/webhooks-fns';
import { headerNamesOf, MAX_HEADER_NAMES, refusalAdvice, refusalRate } from '../../src/webhooks/webhooks-refusal-fns';

const SECRET = `whsec_${Buffer.from('a secret of thirty-two bytes.....').toString('base64')}`;
const BODY = Buffer.from('{"type":"Issue","action":"create","webhookTimestamp":1700000000000}');
const NOW = 1_700_000_000_000;
const hex = (body: Buffer | string, secret = SECRET) => createHmac('sha256', secret).update(body).digest('hex');
const standard = (id: string, seconds: number, secret = SECRET) =>
  `v1,${createHmac('sha256', Buffer.from(secret.slice(6), 'base64')).update(`${id}.${seconds}.${BODY.toString()}`).digest('base64')}`;

const verify = (format: WebhookFormat, headers: Record<string, string>, { body = BODY, signatureHeader = null as string | null } = {}) =>
  verifyDelivery({ format, secret: SECRET, signatureHeader, headers, raw: body, now: NOW });
const refused = (result: ReturnType<typeof verifyDelivery>) => ('refused' in result ? result.refused : 'accepted');

describe('which check a delivery fails', () => {
  const seconds = NOW / 1000;
  it.each<[string, WebhookFormat, Record<string, string>, string]>([
    ['github, signed', 'github', { 'x-hub-signature-256': `sha256=${hex(BODY)}` }, 'accepted'],
    ['github, no header', 'github', {}, 'signature_missing'],
    ['github, an empty header', 'github', { 'x-hub-signature-256': '' }, 'signature_missing'],
    ['github, no sha256= prefix', 'github', { 'x-hub-signature-256': hex(BODY) }, 'signature_malformed'],
    ['github, a SHA-1 signature', 'github', { 'x-hub-signature-256': `sha1=${'a'.repeat(40)}` }, 'signature_malformed'],
    ['github, another secret', 'github', { 'x-hub-signature-256': `sha256=${hex(BODY, 'whsec_other')}` }, 'invalid_signature'],
    ['linear, signed and fresh', 'linear', { 'linear-signature': hex(BODY) }, 'accepted'],
    ['linear, base64 instead of hex', 'linear', { 'linear-signature': Buffer.from(hex(BODY), 'hex').toString('base64') }, 'signature_malformed'],
    ['standard-webhooks, signed', 'standard-webhooks', { 'webhook-id': 'msg_1', 'webhook-timestamp': String(seconds), 'webhook-signature': standard('msg_1', seconds) }, 'accepted'],
    ['standard-webhooks, no timestamp', 'standard-webhooks', { 'webhook-id': 'msg_1', 'webhook-signature': standard('msg_1', seconds) }, 'signature_missing'],
    ['standard-webhooks, six minutes old', 'standard-webhooks', { 'webhook-id': 'msg_1', 'webhook-timestamp': String(seconds - 360), 'webhook-signature': standard('msg_1', seconds - 360) }, 'timestamp_out_of_tolerance'],
    ['standard-webhooks, a timestamp in milliseconds', 'standard-webhooks', { 'webhook-id': 'msg_1', 'webhook-timestamp': String(NOW), 'webhook-signature': standard('msg_1', seconds) }, 'timestamp_out_of_tolerance'],
    ['standard-webhooks, only a v1a signature', 'standard-webhooks', { 'webhook-id': 'msg_1', 'webhook-timestamp': String(seconds), 'webhook-signature': `v1a,${'A'.repeat(86)}==` }, 'signature_malformed'],
    ['standard-webhooks, another id signed', 'standard-webhooks', { 'webhook-id': 'msg_1', 'webhook-timestamp': String(seconds), 'webhook-signature': standard('msg_2', seconds) }, 'invalid_signature'],
    ['hmac-sha256, bare hex', 'hmac-sha256', { 'x-signature-256': hex(BODY) }, 'accepted'],
    ['hmac-sha256, in another header', 'hmac-sha256', { 'x-other-signature': hex(BODY) }, 'signature_missing'],
  ])('%s: %s', (_label, format, headers, expected) => {
    expect(refused(verify(format, headers))).toBe(expected);
  });

  it('refuses a signed body that is not a JSON object, and a Linear delivery signed long ago', () => {
    const list = Buffer.from('[1]');
    expect(refused(verify('hmac-sha256', { 'x-signature-256': hex(list) }, { body: list }))).toBe('invalid_json');
    const old = Buffer.from('{"type":"Issue","webhookTimestamp":1699999000000}');
    expect(verify('linear', { 'linear-signature': hex(old) }, { body: old })).toEqual({ refused: 'timestamp_out_of_tolerance', message: expect.stringContaining('webhookTimestamp') });
  });

  it('names the missing headers, and never the signature expected', () => {
    const result = verify('standard-webhooks', { 'webhook-id': 'msg_1' });
    expect(result).toEqual({ refused: 'signature_missing', message: expect.stringContaining('no `webhook-timestamp`, `webhook-signature` headers') });
    const mismatch = verify('github', { 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` });
    expect(JSON.stringify(mismatch)).not.toContain(hex(BODY));
  });
});

describe('the rate refusals are recorded at', () => {
  it('records a burst, then one per interval, counting the others on the next one recorded', () => {
    let now = 0;
    const rate = refusalRate({ perMinute: 3, clock: () => now });
    const admitted = () => rate.admit('src_a');
    expect([admitted(), admitted(), admitted()]).toEqual([{ unrecordedBefore: 0 }, { unrecordedBefore: 0 }, { unrecordedBefore: 0 }]);
    expect([admitted(), admitted()]).toEqual([null, null]);
    // Another source has a bucket of its own.
    expect(rate.admit('src_b')).toEqual({ unrecordedBefore: 0 });
    now = 19_999;
    expect(admitted()).toBeNull();
    now = 20_000;
    expect(admitted()).toEqual({ unrecordedBefore: 3 });
    expect(admitted()).toBeNull();
  });

  it('forgets the sources it owes nothing when it tracks too many, and stays bounded', () => {
    let now = 0;
    const rate = refusalRate({ perMinute: 1, maxSources: 3, clock: () => now });
    for (const id of ['a', 'b', 'c']) rate.admit(id);
    rate.admit('c'); // over: c owes a count
    now = 60_000;
    rate.admit('d');
    expect(rate.size).toBe(2); // a and b were full again and owed nothing
    expect(rate.admit('c')).toEqual({ unrecordedBefore: 1 });
    for (let i = 0; i < 100; i++) rate.admit(`flood-${i}`);
    expect(rate.size).toBeLessThanOrEqual(3);
  });
});

describe('what a refusal records and advises', () => {
  it('keeps at most the first header names, cut, and no value', () => {
    const headers = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`x-h${i}${'n'.repeat(i === 0 ? 200 : 0)}`, `value-${i}`]));
    const names = headerNamesOf(headers);
    expect(names).toHaveLength(MAX_HEADER_NAMES);
    expect(names[0]).toHaveLength(100);
    expect(names.join()).not.toContain('value-');
  });

  it.each<[string, Parameters<typeof refusalAdvice>[0], WebhookFormat, string | null, RegExp]>([
    ['a GitHub webhook without a secret', { reason: 'signature_missing', message: '', headerNames: ['x-github-event'] }, 'github', null, /^GitHub sent no X-Hub-Signature-256 header: set a secret on the GitHub webhook[^]*secret\.$/],
    ['a sender that is not GitHub', { reason: 'signature_missing', message: '', headerNames: ['user-agent'] }, 'github', null, /no X-GitHub-Event header either/],
    ['a custom signature header', { reason: 'signature_missing', message: '', headerNames: [] }, 'hmac-sha256', 'X-Acme-Signature', /sent no X-Acme-Signature header, this source's signature header/],
    ['the Standard Webhooks headers absent', { reason: 'signature_missing', message: '', headerNames: ['webhook-id'] }, 'standard-webhooks', null, /sent no webhook-timestamp, webhook-signature headers/],
    ['a rotated GitHub secret', { reason: 'invalid_signature', message: '', headerNames: [] }, 'github', null, /after a rotation the old one no longer works/],
    ['a Linear timestamp', { reason: 'timestamp_out_of_tolerance', message: '', headerNames: [] }, 'linear', null, /the body's webhookTimestamp/],
    ['a GitHub form body', { reason: 'invalid_json', message: 'The delivery body must be a JSON object.', headerNames: [] }, 'github', null, /Content type to application\/json/],
    ['a body nested too deep', { reason: 'invalid_json', message: 'The delivery body nests deeper than 32 levels.', headerNames: [] }, 'github', null, /^The delivery body nests deeper than 32 levels\. The sender must send/],
    ['a large GitHub body', { reason: 'payload_too_large', message: '', headerNames: [] }, 'github', null, /over 1 MB[^]*fewer events/],
  ])('advises on %s', (_label, refusal, format, signatureHeader, advice) => {
    expect(refusalAdvice(refusal, { format, signatureHeader })).toMatch(advice);
  });
});
