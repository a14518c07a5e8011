// Refused deliveries through real HTTP: each refusal answers the status of its check with a code saying which
// failed (and nothing of the secret), logs its code and source, and is recorded for the source's owner
// (listed by the API with what to check) without the body or any header's value. A flood records a bounded
// number and counts the rest; retention keeps a source's newest; another tenant sees none of them.
import { createHash, createHmac, randomUUID } from 'node:crypto';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner } from '../support/identity';
import { githubDelivery } from '../support/kit';
import { newId } from '../../src/lib/ids';
import { KEPT_PER_SOURCE, RECORDED_PER_MINUTE } from '../../src/webhooks/webhooks-refusals';
import { until } from '../support/until';

let app: TestApp;
let bearer: Record<string, string>;
let tenantId: string;

beforeAll(async () => {
  app = await startTestApp({ rateLimits: { api: 0, apiAddress: 0 } });
  const owner = await createOwner(app.database.db);
  tenantId = owner.tenantId;
  bearer = { authorization: `Bearer ${await accessToken(app, owner)}` };
});
afterAll(() => app.close());

async function createSource(format: string, headers = bearer) {
  const res = await call(app, 'POST', '/api/v1/webhook-sources', { headers, body: { name: `${format} source`, format } });
  expect(res.status).toBe(201);
  return res.body as { id: string; signingSecret: string };
}

const deliver = (sourceId: string, body: string | Buffer, headers: Record<string, string>) => request(app.app).post(`/hooks/${sourceId}`).set(headers).send(body);
const refusalsOf = async (sourceId: string, query = '', headers = bearer) => call(app, 'GET', `/api/v1/webhook-sources/${sourceId}/refusals${query}`, { headers });
const sha256 = (body: string | Buffer) => createHash('sha256').update(body).digest('hex');
/** A body and a header value no record may hold. */
const BODY_MARK = 'body-only-marker-7f3a';
const HEADER_MARK = 'header-value-marker-9c1e';
const payload = JSON.stringify({ action: 'labeled', issue: { number: 42, title: BODY_MARK } });

describe('a GitHub source', () => {
  let source: { id: string; signingSecret: string };
  beforeAll(async () => {
    source = await createSource('github');
  });

  it('answers each failed check with its own code, and records it with what to check', async () => {
    const { headers } = githubDelivery(source.signingSecret, JSON.parse(payload));
    const { 'x-hub-signature-256': signature, ...unsigned } = headers;
    const wrong = githubDelivery('whsec_another', JSON.parse(payload)).headers['x-hub-signature-256'];
    const cases: [Record<string, string>, number, string, RegExp, RegExp][] = [
      [unsigned, 401, 'signature_missing', /no `X-Hub-Signature-256` header/, /^GitHub sent no X-Hub-Signature-256 header: set a secret on the GitHub webhook/],
      [{ ...unsigned, 'x-hub-signature-256': `sha1=${'0'.repeat(40)}` }, 401, 'signature_malformed', /not `sha256=` and 64 hex digits/, /expects the hex HMAC-SHA256 of the raw body/],
      [{ ...unsigned, 'x-hub-signature-256': wrong }, 401, 'invalid_signature', /does not match/, /not this source's current signing secret/],
    ];
    for (const [sent, status, code, message] of cases) {
      const res = await deliver(source.id, payload, { ...sent, 'x-custom-note': HEADER_MARK });
      expect([res.status, res.body.error.code, res.body.error.message]).toEqual([status, code, expect.stringMatching(message)]);
      // The answer tells which check failed, never what the signature should have been.
      expect(JSON.stringify(res.body)).not.toContain(signature.slice(7, 30));
    }
    const listed = await refusalsOf(source.id);
    expect(listed.status).toBe(200);
    expect(listed.body.map((refusal: { reason: string }) => refusal.reason)).toEqual(['invalid_signature', 'signature_malformed', 'signature_missing']);
    for (const [refusal, [, status, code, message, advice]] of listed.body.map((refusal: any, i: number) => [refusal, cases[cases.length - 1 - i]])) {
      expect(refusal).toEqual({
        id: expect.stringMatching(/^rfd_/),
        sourceId: source.id,
        receivedAt: expect.any(String),
        reason: code,
        status,
        message: expect.stringMatching(message),
        advice: expect.stringMatching(advice),
        headerNames: expect.arrayContaining(['content-type', 'x-github-event', 'x-github-delivery', 'x-custom-note']),
        bodyBytes: Buffer.byteLength(payload),
        bodySha256: sha256(payload),
        unrecordedBefore: 0,
      });
    }
    expect(listed.body[0].headerNames).toContain('x-hub-signature-256');
    expect(listed.body[2].headerNames).not.toContain('x-hub-signature-256');
    // Neither the body nor a header's value is stored.
    const stored = JSON.stringify(await app.database.db.webhookRefusal.findMany({ where: { sourceId: source.id } }));
    for (const kept of [BODY_MARK, HEADER_MARK, signature.slice(7), wrong.slice(7)]) expect(stored).not.toContain(kept);
  });

  it('logs each refusal with its code and source, and no header value', async () => {
    const { headers } = githubDelivery(source.signingSecret, { zen: 'logged' });
    const { 'x-hub-signature-256': _, ...unsigned } = headers;
    await deliver(source.id, '{"zen":"logged"}', { ...unsigned, 'x-custom-note': HEADER_MARK });
    const lines = app.logLines.filter((line) => line.includes('webhook delivery refused'));
    expect(lines.map((line) => JSON.parse(line))).toContainEqual(expect.objectContaining({ sourceId: source.id, reason: 'signature_missing', status: 401 }));
    expect(app.logLines.join('\n')).not.toContain(HEADER_MARK);
  });

  it('records a form-encoded body as not JSON, with the content type to set, and a body over the limit unread', async () => {
    const form = `payload=${encodeURIComponent(payload)}`;
    // GitHub's default content type: the JSON sent as a form field, signed as sent.
    const formHeaders = { ...githubDelivery(source.signingSecret, {}).headers, 'content-type': 'application/x-www-form-urlencoded', 'x-hub-signature-256': `sha256=${createHmac('sha256', source.signingSecret).update(form).digest('hex')}` };
    const notJson = await deliver(source.id, form, formHeaders);
    expect([notJson.status, notJson.body.error.code]).toEqual([400, 'invalid_json']);

    const big = JSON.stringify({ pad: 'x'.repeat(1_100_000) });
    const tooLarge = await deliver(source.id, big, githubDelivery(source.signingSecret, JSON.parse(big)).headers);
    expect([tooLarge.status, tooLarge.body.error.code]).toEqual([413, 'payload_too_large']);

    const [large, json] = (await refusalsOf(source.id, '?limit=2')).body;
    expect(json).toMatchObject({ reason: 'invalid_json', status: 400, advice: expect.stringContaining("set the GitHub webhook's Content type to application/json"), bodyBytes: form.length, bodySha256: sha256(form) });
    expect(large).toMatchObject({ reason: 'payload_too_large', status: 413, bodyBytes: Buffer.byteLength(big), bodySha256: null, advice: expect.stringContaining('over 1 MB') });
  });

  it('pages the list, and shows it to no other tenant', async () => {
    const first = await refusalsOf(source.id, '?limit=2');
    expect(first.headers.link).toMatch(/rel="next"/);
    const next = /<([^>]+)>/.exec(first.headers.link)![1];
    const second = await call(app, 'GET', next, { headers: bearer });
    expect(second.body.length).toBeGreaterThan(0);
    expect(second.body.map((refusal: { id: string }) => refusal.id).filter((id: string) => first.body.some((seen: { id: string }) => seen.id === id))).toEqual([]);

    const stranger = { authorization: `Bearer ${await accessToken(app, await createOwner(app.database.db, { tenantName: 'Other' }))}` };
    const foreign = await refusalsOf(source.id, '', stranger);
    expect([foreign.status, foreign.body.error.code]).toEqual([404, 'not_found']);
    const theirs = await createSource('github', stranger);
    expect((await refusalsOf(theirs.id, '', stranger)).body).toEqual([]);
    expect((await refusalsOf(theirs.id)).status).toBe(404);
  });
});

it('answers a stale Standard Webhooks timestamp with its code, and records it', async () => {
  const source = await createSource('standard-webhooks');
  const id = randomUUID();
  const at = new Date(Date.now() - 6 * 60 * 1000);
  const headers = { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(source.signingSecret).sign(id, at, payload) };
  const res = await deliver(source.id, payload, headers);
  expect([res.status, res.body.error.code]).toEqual([401, 'timestamp_out_of_tolerance']);
  const { 'webhook-timestamp': _, ...untimed } = headers;
  const missing = await deliver(source.id, payload, untimed);
  expect([missing.status, missing.body.error.code, missing.body.error.message]).toEqual([401, 'signature_missing', expect.stringContaining('no `webhook-timestamp` header')]);
  const [second, first] = (await refusalsOf(source.id)).body;
  expect(first).toMatchObject({ reason: 'timestamp_out_of_tolerance', advice: expect.stringContaining('NTP') });
  expect(second).toMatchObject({ reason: 'signature_missing', advice: expect.stringContaining('sent no webhook-timestamp header') });
});

it('answers a delivery to an unknown source with unknown_source, and records it nowhere', async () => {
  const before = await app.database.db.webhookRefusal.count();
  const { body, headers } = githubDelivery('whsec_x', { zen: 'nobody' });
  const res = await deliver('src_nope', body, headers);
  expect([res.status, res.body.error.code]).toEqual([401, 'unknown_source']);
  expect(await app.database.db.webhookRefusal.count()).toBe(before);
  expect(app.logLines.map((line) => JSON.parse(line))).toContainEqual(expect.objectContaining({ sourceId: 'src_nope', reason: 'unknown_source', msg: 'webhook delivery refused' }));
});

it('records a bounded number of a flood of refusals, and counts the others on the next one recorded', async () => {
  const source = await createSource('github');
  const flood = 40;
  const { body, headers } = githubDelivery('whsec_forged', { zen: 'flood' });
  for (let sent = 0; sent < flood; sent += 10) {
    const answers = await Promise.all(Array.from({ length: 10 }, () => deliver(source.id, body, { ...headers, 'x-github-delivery': randomUUID() })));
    for (const res of answers) expect([res.status, res.body.error.code]).toEqual([401, 'invalid_signature']);
  }
  expect((await refusalsOf(source.id)).body).toHaveLength(RECORDED_PER_MINUTE);

  // Once the rate allows another record, it carries the count of those refused in between.
  let sent = flood;
  const carried = await until(
    'a refusal recorded after the flood',
    async () => {
      await deliver(source.id, body, headers);
      sent += 1;
      const listed = (await refusalsOf(source.id)).body;
      return listed.length > RECORDED_PER_MINUTE && listed;
    },
    { tries: 40, everyMs: 250 },
  );
  expect(carried).toHaveLength(RECORDED_PER_MINUTE + 1);
  expect(carried[0].unrecordedBefore).toBeGreaterThanOrEqual(flood - RECORDED_PER_MINUTE);
  expect(carried.reduce((total: number, refusal: { unrecordedBefore: number }) => total + 1 + refusal.unrecordedBefore, 0)).toBe(sent);
});

it('keeps the newest refusals of each source, and none older than the days kept', async () => {
  const crowded = await createSource('hmac-sha256');
  const other = await createSource('linear');
  const at = Date.now() - 60_000;
  const row = (sourceId: string, i: number, receivedAt = new Date(at + i)) => ({
    id: newId('rfd', receivedAt.getTime()),
    tenantId,
    sourceId,
    receivedAt,
    reason: 'invalid_signature',
    message: 'The signature does not match the body signed with this source\'s secret.',
    headerNames: ['content-type'],
    bodyBytes: 2,
    bodySha256: sha256('{}'),
  });
  const rows = Array.from({ length: KEPT_PER_SOURCE + 10 }, (_, i) => row(crowded.id, i));
  await app.database.db.webhookRefusal.createMany({ data: [...rows, row(other.id, 0, new Date(Date.now() - 40 * 86_400_000)), row(other.id, 1)] });

  expect((await app.retention.prune()).refusals).toBe(11);
  const kept = (await refusalsOf(crowded.id, '?limit=100')).body.map((refusal: { id: string }) => refusal.id);
  expect(kept).toEqual(rows.slice(10).map((r) => r.id).reverse());
  expect((await refusalsOf(other.id)).body).toHaveLength(1);
  expect((await app.retention.prune()).refusals).toBe(0);
});
