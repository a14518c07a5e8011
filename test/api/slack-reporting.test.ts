// Answering on Slack where the work was asked: a sender connection holding a Slack app's bot token (sealed,
// never answered, with diagnostics), and a job whose `report` names it. A signed `app_mention` starts a run;
// the message gets 👀 and one reply in its thread, edited as the run advances and ending with its result.
// Slack is a fake Web API on loopback that records what it receives.
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { agentCommand } from '../support/agent';
import { startTestApp, type TestApp } from '../support/app';
import { startFakeSlack, type FakeSlack } from '../support/fake-slack';
import { call } from '../support/http';
import { accessToken, createOwner } from '../support/identity';
import { jobSettled } from '../support/kit';

const AGENT = `prompt=$(cat)
case "$prompt" in
  fail*) echo "it broke" >&2; exit 3 ;;
  *) echo "looking"; sleep 0.4; echo '{"summary":"Large exports now stream: <fixed> & tested."}' ;;
esac
`;

let app: TestApp;
let slack: FakeSlack;
let bearer: Record<string, string>;
let connectionId: string;
let source: { id: string };
const SIGNING_SECRET = `slack-signing-${randomUUID()}`;

beforeAll(async () => {
  slack = await startFakeSlack();
  app = await startTestApp({ localAgent: { command: agentCommand(AGENT), timeoutSeconds: 30 }, rateLimits: { api: 0, apiAddress: 0 } }, { reportEditEveryMs: 100 });
  bearer = { authorization: `Bearer ${await accessToken(app, await createOwner(app.database.db), { scopes: ['flows:read', 'flows:write', 'runs:read', 'runs:write'] })}` };
  source = (await call(app, 'POST', '/api/v1/webhook-sources', { headers: bearer, body: { name: 'Acme Slack', format: 'slack', signingSecret: SIGNING_SECRET } })).body;
});
afterAll(async () => {
  await app.close();
  await slack.close();
});

const mention = (text: string, { ts = `${Date.now() / 1000}`, threadTs }: { ts?: string; threadTs?: string } = {}) => {
  const body = JSON.parse(readFileSync(path.join(__dirname, '../fixtures/webhooks/slack/app_mention.json'), 'utf8'));
  body.event_id = `Ev${randomUUID().replace(/-/g, '').slice(0, 10)}`;
  Object.assign(body.event, { text: `<@U0FLOWSBOT> ${text}`, ts, thread_ts: threadTs });
  if (!threadTs) delete body.event.thread_ts;
  return { raw: JSON.stringify(body), event: body.event as { channel: string; ts: string } };
};
const signed = (raw: string, type = 'application/json') => {
  const timestamp = String(Math.floor(Date.now() / 1000));
  return { 'content-type': type, 'x-slack-request-timestamp': timestamp, 'x-slack-signature': `v0=${createHmac('sha256', SIGNING_SECRET).update(`v0:${timestamp}:${raw}`).digest('hex')}` };
};
const deliver = (raw: string, type?: string) => request(app.app).post(`/hooks/${source.id}`).set(signed(raw, type)).send(raw);
const traceOf = async (runId: string) => (await call(app, 'GET', `/api/v1/runs/${runId}/trace?limit=100`, { headers: bearer })).body as { type: string; data: Record<string, any> }[];

describe('a Slack sender connection', () => {
  it('keeps the bot token sealed: answers carry metadata only, and diagnostics say whom it speaks as', async () => {
    const created = await call(app, 'POST', '/api/v1/sender-connections', { headers: bearer, body: { name: 'Acme Slack', kind: 'slack', token: slack.token, apiBaseUrl: slack.url } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.stringMatching(/^snd_/), name: 'Acme Slack', kind: 'slack', apiBaseUrl: slack.url, login: null, account: null, createdAt: expect.any(String), updatedAt: expect.any(String), lastVerifiedAt: null });
    connectionId = created.body.id;
    const checked = await call(app, 'POST', `/api/v1/sender-connections/${connectionId}/diagnostics`, { headers: bearer });
    expect(checked.body).toMatchObject({ ok: true, identity: 'flows in the workspace Acme', steps: [{ step: 'authentication', ok: true, detail: expect.stringContaining('flows in the workspace Acme') }] });
    const read = await call(app, 'GET', `/api/v1/sender-connections/${connectionId}`, { headers: bearer });
    expect(read.body).toMatchObject({ account: 'flows in the workspace Acme', lastVerifiedAt: expect.any(String) });
    for (const res of [created, checked, read, await call(app, 'GET', '/api/v1/sender-connections', { headers: bearer })]) expect(JSON.stringify(res.body)).not.toContain(slack.token);
  });

  it('diagnostics say so when Slack refuses the token, and a new token is taken on PATCH', async () => {
    const created = await call(app, 'POST', '/api/v1/sender-connections', { headers: bearer, body: { name: 'Old token', kind: 'slack', token: 'xoxb-revoked-token', apiBaseUrl: slack.url } });
    const refused = await call(app, 'POST', `/api/v1/sender-connections/${created.body.id}/diagnostics`, { headers: bearer });
    expect(refused.body).toMatchObject({ ok: false, identity: null, steps: [{ step: 'authentication', ok: false, detail: 'Slack did not accept the token: Slack answered `invalid_auth`' }] });
    await call(app, 'PATCH', `/api/v1/sender-connections/${created.body.id}`, { headers: bearer, body: { token: slack.token } });
    expect((await call(app, 'POST', `/api/v1/sender-connections/${created.body.id}/diagnostics`, { headers: bearer })).body.ok).toBe(true);
    expect((await call(app, 'DELETE', `/api/v1/sender-connections/${created.body.id}`, { headers: bearer })).status).toBe(204);
  });

  it('refuses an API URL with credentials, and a job naming a connection the tenant does not have', async () => {
    const withCredentials = await call(app, 'POST', '/api/v1/sender-connections', { headers: bearer, body: { name: 'x', kind: 'slack', token: slack.token, apiBaseUrl: 'https://user:pass@slack.example/api' } });
    expect(withCredentials.status).toBe(400);
    const job = await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: { name: 'x', promptTemplate: 'x', report: { senderConnectionId: 'snd_nope' } } });
    expect([job.status, job.body.error.message]).toEqual([400, expect.stringContaining('is not a sender connection of this tenant')]);
  });
});

describe('a job that reports on Slack', () => {
  let jobId: string;
  beforeAll(async () => {
    const job = await call(app, 'POST', '/api/v1/jobs', {
      headers: bearer,
      body: {
        name: 'Answer Slack mentions',
        executionTargetId: 'local',
        promptTemplate: "{{ payload.event.text | remove: '<@U0FLOWSBOT> ' }}",
        runNameTemplate: 'Slack: {{ payload.event.text | remove: "<@U0FLOWSBOT> " | truncate: 30 }}',
        report: { senderConnectionId: connectionId },
        triggers: [{ type: 'webhook', sourceId: source.id, events: ['app_mention'] }],
      },
    });
    expect([job.status, job.body.error?.message]).toEqual([201, undefined]);
    jobId = job.body.id;
  });

  it('reacts to the mention, keeps one reply in its thread up to date, and ends it with the result', async () => {
    const { raw, event } = mention('exports fail for large reports', { ts: '1764400001.000200', threadTs: '1764400000.000100' });
    expect((await deliver(raw)).status).toBe(202);
    const [run] = await jobSettled(app, bearer, jobId, 1);
    expect(run).toMatchObject({ state: 'succeeded', prompt: 'exports fail for large reports' });
    expect(slack.reactions).toEqual([{ channel: event.channel, ts: '1764400001.000200', name: 'eyes' }]);
    // One reply, in the thread the mention was in; edited from "working" to the result.
    const replies = slack.messages.filter((message) => message.channel === event.channel);
    expect(replies).toHaveLength(1);
    expect(replies[0].threadTs).toBe('1764400000.000100');
    const [first, ...edits] = replies[0].texts;
    expect(first).toContain('⏳ Working');
    expect(first).toContain(`/console/runs/${run.id}|view the run>`);
    const last = edits.at(-1)!;
    expect(last).toContain('✅ Succeeded');
    // The agent's summary, with Slack's control characters escaped: shown as written, never as a link.
    expect(last).toContain('Large exports now stream: &lt;fixed&gt; &amp; tested.');
    const trace = await traceOf(run.id);
    expect(trace.filter((entry) => entry.type === 'report').map((entry) => [entry.data.action, entry.data.ok])).toEqual([
      ['reaction', true],
      ['reply', true],
    ]);
    expect(JSON.stringify(trace)).not.toContain(slack.token);
  });

  it('a mention outside a thread starts one, under the mention itself; a failed run says why', async () => {
    const { raw, event } = mention('fail please', { ts: '1764400002.000300' });
    const before = slack.messages.length;
    await deliver(raw);
    const runs = await jobSettled(app, bearer, jobId, 2);
    expect(runs.find((candidate) => candidate.prompt === 'fail please')).toMatchObject({ state: 'failed' });
    const [reply] = slack.messages.slice(before);
    expect(reply).toMatchObject({ channel: event.channel, threadTs: '1764400002.000300' });
    expect(reply.texts.at(-1)).toContain('❌ Failed');
  });

  it('records a refused reply in the trace, and the run still succeeds', async () => {
    const other = await call(app, 'POST', '/api/v1/sender-connections', { headers: bearer, body: { name: 'Revoked', kind: 'slack', token: 'xoxb-revoked-token', apiBaseUrl: slack.url } });
    const job = await call(app, 'POST', '/api/v1/jobs', {
      headers: bearer,
      body: { name: 'Revoked reporter', executionTargetId: 'local', promptTemplate: 'revoked {{ payload.event.ts }}', report: { senderConnectionId: other.body.id }, triggers: [{ type: 'webhook', sourceId: source.id, events: ['app_mention'], conditions: { all: [{ path: 'payload.event.text', op: 'contains', value: 'revoked' }] } }] },
    });
    await deliver(mention('revoked token here', { ts: '1764400003.000400' }).raw);
    const [run] = await jobSettled(app, bearer, job.body.id, 1);
    expect(run.state).toBe('succeeded');
    const reports = (await traceOf(run.id)).filter((entry) => entry.type === 'report').map((entry) => entry.data);
    expect(reports).toEqual([
      { action: 'reaction', ok: false, message: 'Reacting failed: Slack answered `invalid_auth`' },
      { action: 'reply', ok: false, message: 'Replying failed: Slack answered `invalid_auth`' },
    ]);
    // The connection a job names cannot be deleted.
    const deleted = await call(app, 'DELETE', `/api/v1/sender-connections/${other.body.id}`, { headers: bearer });
    expect([deleted.status, deleted.body.error.code]).toEqual([409, 'in_use']);
  });

  it('a slash command is answered at once, then by a message in its channel that follows the run', async () => {
    const job = await call(app, 'POST', '/api/v1/jobs', {
      headers: bearer,
      body: { name: 'Slash command', executionTargetId: 'local', promptTemplate: '{{ payload.text }}', report: { senderConnectionId: connectionId }, triggers: [{ type: 'webhook', sourceId: source.id, events: ['slash_command.*'] }] },
    });
    const form = new URLSearchParams({ command: '/flows', text: 'tidy the changelog', channel_id: 'C0SLASH', user_id: 'U1', trigger_id: `${randomUUID()}`, team_id: 'T1' }).toString();
    const answered = await deliver(form, 'application/x-www-form-urlencoded');
    expect([answered.status, answered.text]).toEqual([200, '']);
    const [run] = await jobSettled(app, bearer, job.body.id, 1);
    expect(run).toMatchObject({ state: 'succeeded', prompt: 'tidy the changelog' });
    const replies = slack.messages.filter((message) => message.channel === 'C0SLASH');
    expect(replies).toHaveLength(1);
    expect(replies[0].threadTs).toBeNull();
    expect(replies[0].texts.at(-1)).toContain('✅ Succeeded');
    expect(slack.reactions.filter((reaction) => reaction.channel === 'C0SLASH')).toEqual([]);
  });
});
