// GitLab, Slack, Sentry and Jira sources through real HTTP: secrets the sender makes (stored, never answered),
// Slack's URL verification and slash commands answered as Slack expects, its retries recorded once, and
// each format's deliveries named, recorded and decided on like any other.
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner } from '../support/identity';
import { until } from '../support/until';

let app: TestApp;
let bearer: Record<string, string>;

beforeAll(async () => {
  app = await startTestApp({ rateLimits: { api: 0, apiAddress: 0 } });
  bearer = { authorization: `Bearer ${await accessToken(app, await createOwner(app.database.db))}` };
});
afterAll(async () => {
  await app.close();
});

const fixture = (name: string) => readFileSync(path.join(__dirname, '../fixtures/webhooks', name), 'utf8');
const hex = (content: string, secret: string) => createHmac('sha256', secret).update(content).digest('hex');
const deliver = (sourceId: string, body: string, headers: Record<string, string>) => request(app.app).post(`/hooks/${sourceId}`).set(headers).send(body);
const seconds = () => String(Math.floor(Date.now() / 1000));
const slackSigned = (body: string, secret: string, type = 'application/json') => {
  const timestamp = seconds();
  return { 'content-type': type, 'x-slack-request-timestamp': timestamp, 'x-slack-signature': `v0=${hex(`v0:${timestamp}:${body}`, secret)}` };
};

async function created(body: Record<string, unknown>) {
  const res = await call(app, 'POST', '/api/v1/webhook-sources', { headers: bearer, body });
  expect(res.status).toBe(201);
  return res.body as { id: string; format: string; signingSecret: string | null };
}

const activityOf = async (sourceId: string) => (await call(app, 'GET', `/api/v1/webhook-activity?sourceId=${sourceId}`, { headers: bearer })).body as { id: string; event: string; action: string | null; deliveryId: string }[];
const evaluated = (id: string) =>
  until('the delivery is evaluated', async () => {
    const row = (await call(app, 'GET', `/api/v1/webhook-activity/${id}`, { headers: bearer })).body;
    return row.evaluatedAt ? row : false;
  });

describe('a secret the sender makes', () => {
  it('is required for Slack and Sentry, stored, and never answered', async () => {
    for (const format of ['slack', 'sentry']) {
      const without = await call(app, 'POST', '/api/v1/webhook-sources', { headers: bearer, body: { name: format, format } });
      expect([without.status, without.body.error.code, without.body.error.message]).toEqual([400, 'validation_failed', expect.stringContaining('`signingSecret`')]);
    }
    const secret = `slack-signing-${randomUUID()}`;
    const source = await created({ name: 'Slack', format: 'slack', signingSecret: secret });
    expect(source.signingSecret).toBeNull();
    const read = await call(app, 'GET', `/api/v1/webhook-sources/${source.id}`, { headers: bearer });
    expect(JSON.stringify(read.body)).not.toContain(secret);
    const listed = await call(app, 'GET', '/api/v1/webhook-sources', { headers: bearer });
    expect(JSON.stringify(listed.body)).not.toContain(secret);
  });

  it('is replaced by the sender\'s new one on rotation: the old one is refused from then on', async () => {
    const old = `old-${randomUUID()}`;
    const source = await created({ name: 'Sentry', format: 'sentry', signingSecret: old });
    const without = await call(app, 'POST', `/api/v1/webhook-sources/${source.id}/rotate-secret`, { headers: bearer });
    expect([without.status, without.body.error.message]).toEqual([400, expect.stringContaining("the Sentry integration's client secret")]);
    const next = `new-${randomUUID()}`;
    const rotated = await call(app, 'POST', `/api/v1/webhook-sources/${source.id}/rotate-secret`, { headers: bearer, body: { signingSecret: next } });
    expect([rotated.status, rotated.body.signingSecret]).toEqual([200, null]);
    const body = fixture('sentry/issue.created.json');
    const sent = (secret: string) => deliver(source.id, body, { 'content-type': 'application/json', 'sentry-hook-resource': 'issue', 'request-id': randomUUID(), 'sentry-hook-signature': hex(body, secret) });
    const refused = await sent(old);
    expect([refused.status, refused.body.error.code]).toEqual([401, 'invalid_signature']);
    expect((await sent(next)).status).toBe(202);
    // A source whose secret Flows makes still gets a new one made, shown once.
    const jira = await created({ name: 'Jira', format: 'jira' });
    const renewed = await call(app, 'POST', `/api/v1/webhook-sources/${jira.id}/rotate-secret`, { headers: bearer });
    expect(renewed.body.signingSecret).toMatch(/^whsec_/);
    expect(renewed.body.signingSecret).not.toBe(jira.signingSecret);
  });

  it('is not taken beside a GitHub App, nor when too short', async () => {
    const short = await call(app, 'POST', '/api/v1/webhook-sources', { headers: bearer, body: { name: 'Slack', format: 'slack', signingSecret: 'short' } });
    expect(short.status).toBe(400);
    const bound = await call(app, 'POST', '/api/v1/webhook-sources', { headers: bearer, body: { name: 'GitHub', format: 'github', githubAppId: 'gha_any', signingSecret: 'a secret of some length' } });
    expect([bound.status, bound.body.error.message]).toEqual([400, expect.stringContaining('not taken with `githubAppId`')]);
  });
});

describe('a Slack app', () => {
  let source: { id: string };
  let secret: string;
  let jobId: string;
  beforeAll(async () => {
    secret = `slack-${randomUUID()}`;
    source = await created({ name: 'Slack workspace', format: 'slack', signingSecret: secret });
    const job = await call(app, 'POST', '/api/v1/jobs', {
      headers: bearer,
      body: { name: `Answer mentions ${randomUUID()}`, promptTemplate: '{{ payload.event.text }}', triggers: [{ type: 'webhook', id: 'trg_mention', sourceId: source.id, events: ['app_mention'], conditions: { all: [{ path: 'payload.event.text', op: 'contains', value: 'fix' }] } }] },
    });
    expect([job.status, job.body.error?.message]).toEqual([201, undefined]);
    jobId = job.body.id;
  });

  it('passes Slack\'s URL verification: the challenge is answered, and nothing is recorded', async () => {
    const body = fixture('slack/url_verification.json');
    const res = await deliver(source.id, body, slackSigned(body, secret));
    expect([res.status, res.body]).toEqual([200, { challenge: JSON.parse(body).challenge }]);
    expect(await activityOf(source.id)).toEqual([]);
    const forged = await deliver(source.id, body, slackSigned(body, 'not the secret'));
    expect(forged.status).toBe(401);
  });

  it('records a mention once, even when Slack retries it, and the trigger decides on its text', async () => {
    const body = fixture('slack/app_mention.json');
    const first = await deliver(source.id, body, slackSigned(body, secret));
    expect(first.status).toBe(202);
    const retry = await deliver(source.id, body, { ...slackSigned(body, secret), 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' });
    expect([retry.status, retry.body]).toEqual([202, { activityId: first.body.activityId, duplicate: true }]);
    const row = await evaluated(first.body.activityId);
    expect(row).toMatchObject({ event: 'app_mention', deliveryId: JSON.parse(body).event_id });
    expect(row.context.payload).not.toHaveProperty('token');
    expect(Object.keys(row.context.headers)).not.toContain('x-slack-signature');
    const matched = row.decisions.find((decision: { jobId: string }) => decision.jobId === jobId);
    expect(JSON.parse(body).event.text).toContain('fix');
    expect(matched).toMatchObject({ decision: 'match' });
  });

  it('answers a slash command at once with an empty 200, and records it', async () => {
    const body = fixture('slack/slash_command.txt').trim();
    const res = await deliver(source.id, body, slackSigned(body, secret, 'application/x-www-form-urlencoded'));
    expect([res.status, res.text]).toEqual([200, '']);
    const form = new URLSearchParams(body);
    const row = (await activityOf(source.id)).find((candidate) => candidate.event === 'slash_command');
    expect(row).toMatchObject({ action: form.get('command'), deliveryId: form.get('trigger_id') });
  });

  it('refuses a request signed more than five minutes ago, saying which clock to check', async () => {
    const body = fixture('slack/app_mention.json').replace(/"event_id":\s*"[^"]+"/, '"event_id": "Ev0STALE"');
    const timestamp = String(Math.floor(Date.now() / 1000) - 400);
    const res = await deliver(source.id, body, { 'content-type': 'application/json', 'x-slack-request-timestamp': timestamp, 'x-slack-signature': `v0=${hex(`v0:${timestamp}:${body}`, secret)}` });
    expect([res.status, res.body.error.code]).toEqual([401, 'timestamp_out_of_tolerance']);
    const refusals = await call(app, 'GET', `/api/v1/webhook-sources/${source.id}/refusals`, { headers: bearer });
    expect(refusals.body[0].advice).toContain('X-Slack-Request-Timestamp');
  });
});

describe('a GitLab webhook', () => {
  it('is verified by its secret token, named by object kind and action, and the token is never kept', async () => {
    const source = await created({ name: 'GitLab', format: 'gitlab' });
    const body = fixture('gitlab/note.MergeRequest.json');
    const headers = { 'content-type': 'application/json', 'x-gitlab-event': 'Note Hook', 'idempotency-key': randomUUID() };
    const wrong = await deliver(source.id, body, { ...headers, 'x-gitlab-token': 'guessed' });
    expect([wrong.status, wrong.body.error.code]).toEqual([401, 'invalid_signature']);
    const refusals = await call(app, 'GET', `/api/v1/webhook-sources/${source.id}/refusals`, { headers: bearer });
    expect(refusals.body[0].advice).toContain('Secret token');
    const res = await deliver(source.id, body, { ...headers, 'x-gitlab-token': source.signingSecret! });
    expect(res.status).toBe(202);
    const row = await evaluated(res.body.activityId);
    expect(row).toMatchObject({ event: 'note', action: 'MergeRequest', deliveryId: headers['idempotency-key'] });
    expect(JSON.stringify(row.context)).not.toContain(source.signingSecret);
  });
});

describe('templates and conditions', () => {
  it('are told each new sender\'s events and fields', async () => {
    const contexts = (await call(app, 'GET', '/api/v1/trigger-contexts', { headers: bearer })).body;
    const providers = Object.fromEntries(contexts.providers.map((provider: { format: string; events: string[] }) => [provider.format, provider.events]));
    expect(providers).toMatchObject({ gitlab: expect.arrayContaining(['note.MergeRequest', 'merge_request.open']), slack: expect.arrayContaining(['app_mention']), sentry: expect.arrayContaining(['issue.created']), jira: expect.arrayContaining(['issue_created.issue_created']) });
    const paths = (format: string) => contexts.variables.filter((variable: { provider?: string }) => variable.provider === format).map((variable: { path: string }) => variable.path);
    expect(paths('slack')).toContain('payload.event.text');
    expect(paths('gitlab')).toContain('payload.object_attributes.note');
    expect(paths('jira')).toContain('payload.issue.key');
    expect(paths('sentry')).toContain('payload.data.issue.title');
  });
});

describe('presets', () => {
  const preset = async (id: string) => (await call(app, 'GET', '/api/v1/trigger-contexts', { headers: bearer })).body.presets.find((candidate: { id: string }) => candidate.id === id).job;

  it('"someone mentions the app in Slack" saves once its source and connection are filled in, and a bot\'s message starts nothing', async () => {
    const secret = `slack-${randomUUID()}`;
    const source = await created({ name: 'Slack for the preset', format: 'slack', signingSecret: secret });
    const connection = await call(app, 'POST', '/api/v1/sender-connections', { headers: bearer, body: { name: 'Slack bot', kind: 'slack', token: 'xoxb-preset-token' } });
    const job = await preset('slack-mention');
    job.name = `${job.name} ${randomUUID()}`;
    job.triggers[0].sourceId = source.id;
    job.report.senderConnectionId = connection.body.id;
    const saved = await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: job });
    expect([saved.status, saved.body.error?.message]).toEqual([201, undefined]);
    const person = fixture('slack/app_mention.json');
    const bot = person.replace('"type": "app_mention",', '"type": "app_mention", "bot_id": "B0OTHERBOT",').replace(/"event_id":\s*"[^"]+"/, '"event_id": "Ev0BOT"');
    expect(bot).toContain('B0OTHERBOT');
    const decisions = [];
    for (const body of [person, bot]) {
      const res = await deliver(source.id, body, slackSigned(body, secret));
      decisions.push((await evaluated(res.body.activityId)).decisions.find((decision: { jobId: string }) => decision.jobId === saved.body.id)?.decision ?? 'no-match');
    }
    expect(decisions).toEqual(['match', 'no-match']);
  });

  it('"a Sentry issue was created for a project" matches its project\'s new errors', async () => {
    const source = await created({ name: 'Sentry for the preset', format: 'sentry', signingSecret: 'sentry client secret' });
    const job = await preset('sentry-issue');
    job.name = `${job.name} ${randomUUID()}`;
    job.triggers[0].sourceId = source.id;
    const saved = await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: job });
    expect(saved.status).toBe(201);
    const body = fixture('sentry/issue.created.json');
    const res = await deliver(source.id, body, { 'content-type': 'application/json', 'sentry-hook-resource': 'issue', 'request-id': randomUUID(), 'sentry-hook-signature': hex(body, 'sentry client secret') });
    const row = await evaluated(res.body.activityId);
    expect(row.decisions.find((decision: { jobId: string }) => decision.jobId === saved.body.id)).toMatchObject({ decision: 'match' });
  });

  it('"a merge request note mentions @flows" matches a person\'s note with the mention, and not a system note', async () => {
    const source = await created({ name: 'GitLab for the preset', format: 'gitlab' });
    const connection = await call(app, 'POST', '/api/v1/sender-connections', { headers: bearer, body: { name: 'GitLab bot', kind: 'gitlab', token: 'glpat-preset-token' } });
    const job = await preset('gitlab-mention');
    job.name = `${job.name} ${randomUUID()}`;
    job.triggers[0].sourceId = source.id;
    job.report.senderConnectionId = connection.body.id;
    const saved = await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: job });
    expect([saved.status, saved.body.error?.message]).toEqual([201, undefined]);
    const asking = fixture('gitlab/note.MergeRequest.json');
    expect(JSON.parse(asking).object_attributes.note).toContain('@flows');
    const system = asking.replace('"system": false', '"system": true');
    const decisions = [];
    for (const body of [asking, system]) {
      const res = await deliver(source.id, body, { 'content-type': 'application/json', 'x-gitlab-token': source.signingSecret!, 'idempotency-key': randomUUID() });
      decisions.push((await evaluated(res.body.activityId)).decisions.find((decision: { jobId: string }) => decision.jobId === saved.body.id)?.decision ?? 'no-match');
    }
    expect(decisions).toEqual(['match', 'no-match']);
  });
});
