// Webhook sources and signed intake: each format verified with real sender code (the `standardwebhooks`
// package and GitHub's `@octokit/webhooks-methods` sign; Linear and plain HMAC are signed as those senders
// do), refusals that say which check failed and nothing more, repeated deliveries recorded once, and a delivery that
// starts the runs of matching triggers through to their end, with the decisions in the activity. Secrets
// never come back. What each refusal answers and records: webhook-refusals.test.ts.
import { createHmac, randomUUID } from 'node:crypto';
import request from 'supertest';
import { sign as signAsGitHub } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import { agentCommand } from '../support/agent';
import { BASE_URL, startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner } from '../support/identity';

let app: TestApp;
let bearer: Record<string, string>;
const seen: string[] = []; // every API answer body but those that show a secret once, scanned at the end
const secrets: string[] = [];

beforeAll(async () => {
  app = await startTestApp({ localAgent: { command: agentCommand(), timeoutSeconds: 60 }, rateLimits: { api: 0, apiAddress: 0 } });
  bearer = await tokenFor(await createOwner(app.database.db));
});
afterAll(async () => {
  await app.close();
});

async function tokenFor(owner: Awaited<ReturnType<typeof createOwner>>) {
  return { authorization: `Bearer ${await accessToken(app, owner)}` };
}

async function api(method: string, path: string, body?: unknown, headers = bearer) {
  const res = await call(app, method, path, { headers, body });
  seen.push(JSON.stringify(res.body ?? null));
  return res;
}

async function createSource(format: string, extra: Record<string, unknown> = {}, headers = bearer) {
  const res = await call(app, 'POST', '/api/v1/webhook-sources', { headers, body: { name: `${format} source`, format, ...extra } });
  expect(res.status).toBe(201);
  secrets.push(res.body.signingSecret);
  return res.body as { id: string; signingSecret: string; intakeUrl: string; signatureHeader: string | null };
}

const hex = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('hex');

/** Headers a sender of each format would send for `body`. */
function signed(format: string, secret: string, body: string, { at = Date.now(), id = randomUUID(), event = 'issues', header = 'x-signature-256' } = {}): Record<string, string> {
  switch (format) {
    case 'github':
      return { 'x-hub-signature-256': `sha256=${hex(secret, body)}`, 'x-github-event': event, 'x-github-delivery': id };
    case 'linear':
      return { 'linear-signature': hex(secret, body), 'linear-delivery': id };
    case 'standard-webhooks':
      return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at / 1000)), 'webhook-signature': new Webhook(secret).sign(id, new Date(at), body) };
    default:
      return { [header]: `sha256=${hex(secret, body)}`, 'x-delivery-id': id };
  }
}

const deliver = (sourceId: string, body: string, headers: Record<string, string>) =>
  request(app.app).post(`/hooks/${sourceId}`).set({ 'content-type': 'application/json', ...headers }).send(body);

const issueLabeled = (label = 'agent', extra: Record<string, unknown> = {}, issue: Record<string, unknown> = {}) =>
  JSON.stringify({
    action: 'labeled',
    issue: { number: 42, title: 'Saving twice crashes', labels: [{ name: 'bug' }, { name: label }], user: { login: 'octocat' }, ...issue },
    label: { name: label },
    repository: { full_name: 'acme/widgets' },
    ...extra,
  });

async function activityOf(activityId: string, until: (activity: any) => boolean = (a) => a.decisions.length > 0 || a.runIds.length > 0) {
  for (let i = 0; i < 200; i++) {
    const res = await api('GET', `/api/v1/webhook-activity/${activityId}`);
    if (until(res.body)) return res.body;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`activity ${activityId} never settled`);
}

describe('webhook sources', () => {
  it('shows the signing secret once, on create and on rotate, and never again', async () => {
    const created = await createSource('github');
    expect(created).toMatchObject({ id: expect.stringMatching(/^src_/), format: 'github', signatureHeader: null, intakeUrl: `${BASE_URL}/hooks/${created.id}`, signingSecret: expect.stringMatching(/^whsec_/) });
    const got = await api('GET', `/api/v1/webhook-sources/${created.id}`);
    expect(got.body).not.toHaveProperty('signingSecret');
    const listed = await api('GET', '/api/v1/webhook-sources');
    expect(listed.body.find((source: { id: string }) => source.id === created.id)).not.toHaveProperty('signingSecret');
    const stored = await app.database.db.webhookSource.findUniqueOrThrow({ where: { id: created.id } });
    expect(stored.secretCiphertext).not.toContain(created.signingSecret.slice(6, 20));

    const body = issueLabeled();
    expect((await deliver(created.id, body, signed('github', created.signingSecret, body))).status).toBe(202);
    const rotated = await call(app, 'POST', `/api/v1/webhook-sources/${created.id}/rotate-secret`, { headers: bearer });
    secrets.push(rotated.body.signingSecret);
    expect(rotated.status).toBe(200);
    expect(rotated.body.signingSecret).not.toBe(created.signingSecret);
    const old = await deliver(created.id, body, signed('github', created.signingSecret, body));
    expect([old.status, old.body.error.code]).toEqual([401, 'invalid_signature']);
    expect((await deliver(created.id, body, signed('github', rotated.body.signingSecret, body))).status).toBe(202);
  });

  it('takes a signature header only for hmac-sha256', async () => {
    const refused = await api('POST', '/api/v1/webhook-sources', { name: 'x', format: 'github', signatureHeader: 'x-sig' });
    expect([refused.status, refused.body.error.code]).toEqual([400, 'validation_failed']);
    expect((await createSource('hmac-sha256', { signatureHeader: 'X-Acme-Signature' })).signatureHeader).toBe('X-Acme-Signature');
  });

  it('refuses to delete a source a trigger uses; a deleted source refuses deliveries and keeps its activity', async () => {
    const source = await createSource('github');
    const job = await api('POST', '/api/v1/jobs', { name: 'Uses source', promptTemplate: 'x', triggers: [{ type: 'webhook', sourceId: source.id, events: ['push'] }] });
    const body = JSON.stringify({ ref: 'refs/heads/main' });
    const accepted = await deliver(source.id, body, signed('github', source.signingSecret, body, { event: 'push' }));
    const inUse = await api('DELETE', `/api/v1/webhook-sources/${source.id}`);
    expect([inUse.status, inUse.body.error.code]).toEqual([409, 'in_use']);
    await api('PATCH', `/api/v1/jobs/${job.body.id}`, { triggers: [] });
    expect((await api('DELETE', `/api/v1/webhook-sources/${source.id}`)).status).toBe(204);
    expect((await api('GET', `/api/v1/webhook-sources/${source.id}`)).status).toBe(404);
    const refused = await deliver(source.id, body, signed('github', source.signingSecret, body, { event: 'push' }));
    expect([refused.status, refused.body.error.code]).toEqual([401, 'unknown_source']);
    expect((await api('GET', `/api/v1/webhook-activity/${accepted.body.activityId}`)).status).toBe(200);
    // No trigger may name it again, saved or drafted for a backtest: it takes no deliveries.
    const trigger = { type: 'webhook', sourceId: source.id, events: ['push'] };
    const saved = await api('PATCH', `/api/v1/jobs/${job.body.id}`, { triggers: [trigger] });
    const drafted = await api('POST', `/api/v1/jobs/${job.body.id}/backtest`, { triggers: [trigger] });
    for (const res of [saved, drafted]) expect([res.status, res.body.error.code, res.body.error.message]).toEqual([400, 'validation_failed', expect.stringContaining('triggers[0].sourceId')]);
  });
});

describe('intake', () => {
  it.each(['github', 'linear', 'standard-webhooks', 'hmac-sha256'])('accepts a %s delivery signed by its sender, and refuses a wrong secret', async (format) => {
    const source = await createSource(format);
    const payload = format === 'linear' ? JSON.stringify({ type: 'Issue', action: 'create', webhookTimestamp: Date.now(), data: { title: 'x' } }) : issueLabeled();
    const credentials = { authorization: 'Bearer sender-token', 'x-api-key': 'k-123', 'x-gitlab-token': 'glt-123', 'x-webhook-secret': 's-123', 'x-functions-key': 'f-123', 'x-auth': 'a-123', cookie: 'a=b' };
    const headers = signed(format, source.signingSecret, payload);
    // GitHub's own signing code (the library its SDK signs and verifies deliveries with).
    if (format === 'github') headers['x-hub-signature-256'] = await signAsGitHub(source.signingSecret, payload);
    const res = await deliver(source.id, payload, { ...credentials, 'x-request-source': 'ci', ...headers });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ activityId: expect.stringMatching(/^act_/), duplicate: false });
    const activity = (await api('GET', `/api/v1/webhook-activity/${res.body.activityId}`)).body;
    expect(activity.context.source).toEqual({ id: source.id, format });
    if (format === 'linear') expect([activity.event, activity.action]).toEqual(['Issue', 'create']);
    // No signature header, nor any other credential, reaches the context; other headers do.
    expect(Object.keys(activity.context.headers).filter((name) => /signature/.test(name) || name in credentials)).toEqual([]);
    expect(activity.context.headers['x-request-source']).toBe('ci');

    const forged = await deliver(source.id, payload, signed(format, 'whsec_' + Buffer.from('another secret of 32 bytes......').toString('base64'), payload));
    expect([forged.status, forged.body.error]).toEqual([401, { code: 'invalid_signature', message: "The signature does not match the body signed with this source's secret." }]);
  });

  it('refuses stale and future timestamps, and unknown sources, each saying which', async () => {
    const source = await createSource('standard-webhooks');
    const body = issueLabeled();
    const sixMinutes = 6 * 60 * 1000;
    const linear = await createSource('linear');
    const linearAt = (at: number) => {
      const payload = JSON.stringify({ type: 'Issue', action: 'create', webhookTimestamp: at });
      return deliver(linear.id, payload, signed('linear', linear.signingSecret, payload));
    };
    const refused = [
      await deliver(source.id, body, signed('standard-webhooks', source.signingSecret, body, { at: Date.now() - sixMinutes })),
      await deliver(source.id, body, signed('standard-webhooks', source.signingSecret, body, { at: Date.now() + sixMinutes })),
      await linearAt(Date.now() - sixMinutes),
      await linearAt(Date.now() + sixMinutes),
    ];
    for (const res of refused) expect([res.status, res.body.error.code]).toEqual([401, 'timestamp_out_of_tolerance']);
    const unknown = await Promise.all(['github', 'linear', 'standard-webhooks', 'hmac-sha256'].map((format) => deliver('src_nope', body, signed(format, source.signingSecret, body))));
    for (const res of unknown) expect([res.status, res.body.error.code]).toEqual([401, 'unknown_source']);
    expect(await app.database.db.webhookActivity.count({ where: { sourceId: { in: [source.id, linear.id] } } })).toBe(0);
  });

  it.each(['github', 'linear', 'standard-webhooks', 'hmac-sha256'])('records a repeated %s delivery once', async (format) => {
    const source = await createSource(format);
    const body = format === 'linear' ? JSON.stringify({ type: 'Issue', action: 'create', webhookTimestamp: Date.now() }) : issueLabeled();
    const headers = signed(format, source.signingSecret, body);
    const first = await deliver(source.id, body, headers);
    const again = await deliver(source.id, body, headers);
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.body).toEqual({ activityId: first.body.activityId, duplicate: true });
    expect(await app.database.db.webhookActivity.count({ where: { sourceId: source.id } })).toBe(1);
  });

  it('identifies an hmac-sha256 delivery without an id by its body', async () => {
    const source = await createSource('hmac-sha256');
    const body = issueLabeled();
    const { 'x-delivery-id': _, ...headers } = signed('hmac-sha256', source.signingSecret, body);
    const first = await deliver(source.id, body, headers);
    const again = await deliver(source.id, body, headers);
    expect(again.body).toEqual({ activityId: first.body.activityId, duplicate: true });
    const other = issueLabeled('bug');
    const different = await deliver(source.id, other, { 'x-signature-256': signed('hmac-sha256', source.signingSecret, other)['x-signature-256'] });
    expect(different.body.duplicate).toBe(false);
    const activity = (await api('GET', `/api/v1/webhook-activity/${first.body.activityId}`)).body;
    expect(activity.deliveryId).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it.each(['github', 'linear', 'standard-webhooks', 'hmac-sha256'])('refuses a %s delivery over the size limit before verifying it', async (format) => {
    const source = await createSource(format);
    const big = JSON.stringify({ type: 'Issue', webhookTimestamp: Date.now(), pad: 'x'.repeat(1_100_000) });
    const res = await deliver(source.id, big, signed(format, source.signingSecret, big));
    expect([res.status, res.body.error.code]).toEqual([413, 'payload_too_large']);
    expect(await app.database.db.webhookActivity.count({ where: { sourceId: source.id } })).toBe(0);
  });

  it('refuses a body that is not a JSON object, and one over the size limit', async () => {
    const source = await createSource('hmac-sha256');
    for (const body of ['not json', '[1,2]']) {
      const res = await deliver(source.id, body, signed('hmac-sha256', source.signingSecret, body));
      expect([res.status, res.body.error.code]).toEqual([400, 'invalid_json']);
    }
    // Valid JSON that cannot be kept: nested past the limit (walking it would overflow the stack), a NUL
    // character, an unpaired surrogate (PostgreSQL's jsonb refuses both).
    for (const body of [`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`, '{"a":"x\\u0000y"}', '{"a":"x\\ud800y"}', '{"\\udfff":1}']) {
      const res = await deliver(source.id, body, signed('hmac-sha256', source.signingSecret, body));
      expect([res.status, res.body.error.code]).toEqual([400, 'invalid_json']);
    }
    expect(await app.database.db.webhookActivity.count({ where: { sourceId: source.id } })).toBe(0);
    const big = JSON.stringify({ pad: 'x'.repeat(1_100_000) });
    const res = await deliver(source.id, big, signed('hmac-sha256', source.signingSecret, big));
    expect([res.status, res.body.error.code]).toEqual([413, 'payload_too_large']);
  });
});

describe('a delivery through to runs', () => {
  it('starts the runs of matching triggers, records every candidate decision, and fails closed', async () => {
    const source = await createSource('github');
    const trigger = (id: string, conditions?: Record<string, unknown>, events = ['issues.labeled']) => ({ type: 'webhook', id, sourceId: source.id, events, ...(conditions ? { conditions } : {}) });
    const fixer = await api('POST', '/api/v1/jobs', {
      name: 'Fix labelled',
      executionTargetId: 'local',
      promptTemplate: 'Fix #{{ payload.issue.number }} in {{ payload.repository.full_name }} ({{ event }}.{{ action }})',
      runNameTemplate: 'Issue #{{ payload.issue.number }}',
      triggers: [trigger('trg_agent', { all: [{ path: 'payload.issue.labels[*].name', op: 'eq', value: 'agent' }], if: 'payload.issue.number > 10.0' })],
    });
    const other = await api('POST', '/api/v1/jobs', {
      name: 'Only bugs from bots',
      promptTemplate: 'x',
      triggers: [trigger('trg_bots', { all: [{ path: 'payload.issue.user.login', op: 'endsWith', value: '[bot]' }], none: [{ path: 'payload.issue.body', op: 'contains', value: 'wip' }] })],
    });
    const broken = await api('POST', '/api/v1/jobs', { name: 'Broken CEL', promptTemplate: 'x', triggers: [trigger('trg_broken', { if: 'payload.issue.missing.deeper == 1.0' })] });
    await api('POST', '/api/v1/jobs', { name: 'Pushes only', promptTemplate: 'x', triggers: [trigger('trg_push', undefined, ['push'])] });
    const disabled = await api('POST', '/api/v1/jobs', { name: 'Disabled', promptTemplate: 'x', triggers: [trigger('trg_off')] });
    await api('POST', `/api/v1/jobs/${disabled.body.id}/disable`);

    const issueBody = 'Steps to reproduce. '.repeat(40); // 800 characters: recorded decisions cut it
    const body = issueLabeled('agent', {}, { body: issueBody });
    const res = await deliver(source.id, body, signed('github', source.signingSecret, body));
    const activity = await activityOf(res.body.activityId);
    expect(activity).toMatchObject({ sourceId: source.id, event: 'issues', action: 'labeled' });
    expect(activity.runIds).toHaveLength(1);
    expect(activity.decisions).toEqual(
      expect.arrayContaining([
        {
          jobId: fixer.body.id,
          triggerId: 'trg_agent',
          decision: 'match',
          details: [
            { part: 'all', path: 'payload.issue.labels[*].name', op: 'eq', expected: 'agent', actual: ['bug', 'agent'], result: true },
            { part: 'if', expected: 'payload.issue.number > 10.0', actual: true, result: true },
          ],
          runId: activity.runIds[0],
        },
        {
          jobId: other.body.id,
          triggerId: 'trg_bots',
          decision: 'no-match',
          details: [
            { part: 'all', path: 'payload.issue.user.login', op: 'endsWith', expected: '[bot]', actual: 'octocat', result: false },
            { part: 'none', path: 'payload.issue.body', op: 'contains', expected: 'wip', actual: `${JSON.stringify(issueBody).slice(0, 500)}…`, result: false },
          ],
          runId: null,
          recomputed: true,
        },
        { jobId: broken.body.id, triggerId: 'trg_broken', decision: 'error', error: expect.stringContaining('CEL'), details: [expect.objectContaining({ part: 'if', result: false })], runId: null },
      ]),
    );
    expect(activity.decisions).toHaveLength(3); // the push-only and the disabled job's triggers are no candidates
    // A miss is stored as a count; its details are worked out when read. Matches and errors are stored.
    expect(activity.missCount).toBe(1);
    const stored = await app.database.db.webhookActivity.findUniqueOrThrow({ where: { id: activity.id } });
    expect((stored.decisions as { triggerId: string }[]).map((decision) => decision.triggerId).sort()).toEqual(['trg_agent', 'trg_broken']);

    const runId = activity.runIds[0];
    let run: any;
    for (let i = 0; i < 200 && !['succeeded', 'failed'].includes(run?.state); i++) {
      run = (await api('GET', `/api/v1/runs/${runId}`)).body;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(run).toMatchObject({ state: 'succeeded', jobId: fixer.body.id, invocationId: null, trigger: { type: 'webhook', id: 'trg_agent' }, name: 'Issue #42', prompt: 'Fix #42 in acme/widgets (issues.labeled)' });
    const listed = await api('GET', `/api/v1/runs?triggerType=webhook&jobId=${fixer.body.id}`);
    expect(listed.body.map((r: { id: string }) => r.id)).toEqual([runId]);

    // The repeat starts nothing.
    const again = await deliver(source.id, body, { ...signed('github', source.signingSecret, body), 'x-github-delivery': activity.deliveryId });
    expect(again.body.duplicate).toBe(true);
    expect(await app.database.db.run.count({ where: { jobId: fixer.body.id } })).toBe(1);
  });
});

describe('backtest', () => {
  it('answers what the saved or a draft set of triggers would decide on recorded deliveries, starting nothing', async () => {
    const source = await createSource('github');
    const labelIs = (value: string) => ({ all: [{ path: 'payload.label.name', op: 'eq', value }] });
    const job = await api('POST', '/api/v1/jobs', { name: 'Backtested', promptTemplate: 'x', triggers: [{ type: 'webhook', id: 'trg_saved', sourceId: source.id, events: ['issues.*'], conditions: labelIs('agent') }] });
    // Disabled, so the deliveries below start nothing on their own: a backtest still looks at its triggers.
    await api('POST', `/api/v1/jobs/${job.body.id}/disable`);
    const activity: string[] = [];
    for (const label of ['agent', 'bug', 'agent']) {
      const body = issueLabeled(label);
      activity.push((await deliver(source.id, body, signed('github', source.signingSecret, body))).body.activityId);
    }
    const push = JSON.stringify({ ref: 'refs/heads/main' });
    await deliver(source.id, push, signed('github', source.signingSecret, push, { event: 'push' }));
    // One delivery falls outside the default window of 7 days.
    await app.database.db.webhookActivity.update({ where: { id: activity[0] }, data: { receivedAt: new Date(Date.now() - 8 * 24 * 3600 * 1000) } });
    const runsBefore = await app.database.db.run.count();

    const saved = await api('POST', `/api/v1/jobs/${job.body.id}/backtest`, {});
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({ evaluated: 3, matched: 1 });
    expect(saved.body.results.map((result: any) => [result.event, result.decisions])).toEqual([
      ['push', []],
      ['issues.labeled', [{ triggerId: 'trg_saved', decision: 'match', details: [{ part: 'all', path: 'payload.label.name', op: 'eq', expected: 'agent', actual: 'agent', result: true }] }]],
      ['issues.labeled', [{ triggerId: 'trg_saved', decision: 'no-match', details: [{ part: 'all', path: 'payload.label.name', op: 'eq', expected: 'agent', actual: 'bug', result: false }] }]],
    ]);

    const draft = await api('POST', `/api/v1/jobs/${job.body.slug}/backtest`, {
      triggers: [{ type: 'webhook', id: 'trg_draft', sourceId: source.id, events: ['issues.labeled'], conditions: labelIs('bug') }, { type: 'webhook', sourceId: source.id, events: ['*'], conditions: { if: 'payload.nothing.here' } }],
      since: new Date(Date.now() - 30 * 24 * 3600 * 1000).toISOString(),
    });
    expect(draft.body).toMatchObject({ evaluated: 4, matched: 1 });
    const decisionsOf = (activityId: string) => draft.body.results.find((result: any) => result.activityId === activityId).decisions;
    expect(decisionsOf(activity[1])[0]).toEqual({ triggerId: 'trg_draft', decision: 'match', details: [{ part: 'all', path: 'payload.label.name', op: 'eq', expected: 'bug', actual: 'bug', result: true }] });
    expect(decisionsOf(activity[0])[1]).toMatchObject({ decision: 'error', error: expect.any(String) });
    expect(await app.database.db.run.count()).toBe(runsBefore);

    const invalid = await api('POST', `/api/v1/jobs/${job.body.id}/backtest`, { triggers: [{ type: 'webhook', sourceId: source.id, events: ['*'], conditions: { if: 'a +' } }] });
    expect([invalid.status, invalid.body.error.code]).toEqual([400, 'invalid_conditions']);
    const backwards = await api('POST', `/api/v1/jobs/${job.body.id}/backtest`, { since: new Date().toISOString(), until: new Date(Date.now() - 1000).toISOString() });
    expect([backwards.status, backwards.body.error.code]).toEqual([400, 'validation_failed']);
    // A draft naming another tenant's source is refused, as saving it would be: nothing of theirs is read.
    const theirs = await createSource('github', {}, await tokenFor(await createOwner(app.database.db, { tenantName: 'Theirs' })));
    const foreignSource = await api('POST', `/api/v1/jobs/${job.body.id}/backtest`, { triggers: [{ type: 'webhook', sourceId: theirs.id, events: ['*'] }] });
    expect([foreignSource.status, foreignSource.body.error.code]).toEqual([400, 'validation_failed']);
    expect(foreignSource.body.error.message).toContain('triggers[0].sourceId');
    const leapSecond = await api('POST', `/api/v1/jobs/${job.body.id}/backtest`, { until: '2016-12-31T23:59:60Z' });
    expect([leapSecond.status, leapSecond.body.error.code]).toEqual([400, 'validation_failed']);
    const stranger = await tokenFor(await createOwner(app.database.db, { tenantName: 'Other' }));
    const foreign = await api('POST', `/api/v1/jobs/${job.body.id}/backtest`, {}, stranger);
    expect([foreign.status, foreign.body.error.code]).toEqual([404, 'not_found']);
  });
});

describe('backtest windows at the edges of the supported range', () => {
  it.each<[string, boolean, Record<string, string>, number, string]>([
    ['until in year 0, no webhook trigger', false, { until: '0000-01-01T00:00:00Z' }, 400, '`until`'],
    ['until in year 0, a webhook trigger', true, { until: '0000-01-01T00:00:00Z' }, 400, '`until`'],
    ['since before 1970', true, { since: '1969-12-31T23:59:59Z' }, 400, '`since`'],
    ['until past year 9999', true, { until: '+275760-09-13T00:00:00Z' }, 400, '`until`'],
    ['a derived since before 1970', true, { until: '1970-01-03T00:00:00Z' }, 400, '`since` (7 days before `until`)'],
    ['until at the last second of year 9999', true, { until: '9999-12-31T23:59:59Z' }, 200, ''],
    ['since at the first instant of 1970', false, { since: '1970-01-01T00:00:00Z' }, 200, ''],
  ])('%s', async (_label, withWebhook, window, status, field) => {
    const source = await createSource('github');
    const triggers = withWebhook ? [{ type: 'webhook', sourceId: source.id, events: ['issues.*'] }] : [];
    const job = await api('POST', '/api/v1/jobs', { name: 'Windowed', promptTemplate: 'x', triggers });
    const res = await api('POST', `/api/v1/jobs/${job.body.id}/backtest`, window);
    expect(res.status).toBe(status);
    if (status === 400) expect(res.body.error).toEqual({ code: 'validation_failed', message: expect.stringContaining(field) });
    else for (const at of [res.body.since, res.body.until]) expect(at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });
});

describe('activity', () => {
  it('lists newest first, by source, and shows nothing to another tenant', async () => {
    const source = await createSource('github');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const body = issueLabeled(`label-${i}`);
      ids.push((await deliver(source.id, body, signed('github', source.signingSecret, body))).body.activityId);
    }
    const listed = await api('GET', `/api/v1/webhook-activity?sourceId=${source.id}&limit=2`);
    expect(listed.body.map((a: { id: string }) => a.id)).toEqual([ids[2], ids[1]]);
    expect(listed.headers.link).toMatch(/rel="next"/);

    const stranger = await tokenFor(await createOwner(app.database.db, { tenantName: 'Other' }));
    for (const path of [`/api/v1/webhook-activity/${ids[0]}`, `/api/v1/webhook-sources/${source.id}`]) {
      const res = await api('GET', path, undefined, stranger);
      expect([res.status, res.body.error.code]).toEqual([404, 'not_found']);
    }
    for (const [method, path] of [['DELETE', `/api/v1/webhook-sources/${source.id}`], ['POST', `/api/v1/webhook-sources/${source.id}/rotate-secret`]]) {
      const res = await api(method, path, undefined, stranger);
      expect([res.status, res.body.error.code]).toEqual([404, 'not_found']);
    }
    expect((await api('GET', `/api/v1/webhook-activity?sourceId=${source.id}`, undefined, stranger)).body).toEqual([]);
    expect((await api('GET', '/api/v1/webhook-sources', undefined, stranger)).body).toEqual([]);
    const stillThere = await api('GET', `/api/v1/webhook-sources/${source.id}`);
    expect(stillThere.status).toBe(200);
    // The secret was not rotated: the owner's sender still gets through, with the first secret.
    const body = issueLabeled('after-stranger');
    expect((await deliver(source.id, body, signed('github', source.signingSecret, body))).status).toBe(202);
  });

  it('never answers a signing secret, plain or sealed, outside the answer that creates it', async () => {
    const sealed = (await app.database.db.webhookSource.findMany()).map((row) => row.secretCiphertext);
    expect(secrets.length).toBeGreaterThan(5);
    const all = seen.join('\n');
    for (const secret of [...secrets, ...sealed]) expect(all).not.toContain(secret);
    for (const secret of secrets) expect(all).not.toContain(secret.slice(6, 30));
  });
});
