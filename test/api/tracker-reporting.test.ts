// Answering on Linear, Jira and GitLab where the work was asked: sender connections holding a Linear API key,
// a Jira API token and a GitLab access token (sealed, never answered, with diagnostics), and jobs whose
// `report` names them. A GitLab note on a merge request starts a run answered by one note there, with 👀 on
// the note that asked and a commit status on the merge request's head commit. A signed
// Linear comment starts a run: 👀 on the comment, one comment on the issue edited as the run advances and
// ending with its result, and the issue moved to the job's `successState`. A signed Jira issue delivery
// starts a run answered by one comment on the issue. Linear, Jira and GitLab are fakes on loopback.
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { agentCommand } from '../support/agent';
import { startTestApp, type TestApp } from '../support/app';
import { startFakeGitlab, startFakeJira, startFakeLinear, type FakeGitlab, type FakeJira, type FakeLinear } from '../support/fake-trackers';
import { call } from '../support/http';
import { accessToken, createOwner } from '../support/identity';
import { jobSettled } from '../support/kit';

const AGENT = `prompt=$(cat)
echo "working on it"; sleep 0.3
if [ -f README.md ]; then sed -i 's/evey/every/' README.md; fi
echo '{"summary":"Exports over 10 MB stream now [see *notes*]."}'
`;

let app: TestApp;
let linear: FakeLinear;
let jira: FakeJira;
let gitlab: FakeGitlab;
let bearer: Record<string, string>;

beforeAll(async () => {
  [linear, jira, gitlab] = await Promise.all([startFakeLinear(), startFakeJira(), startFakeGitlab()]);
  app = await startTestApp({ localAgent: { command: agentCommand(AGENT), timeoutSeconds: 30 }, rateLimits: { api: 0, apiAddress: 0 } }, { reportEditEveryMs: 100 });
  bearer = { authorization: `Bearer ${await accessToken(app, await createOwner(app.database.db), { scopes: ['flows:read', 'flows:write', 'runs:read', 'runs:write'] })}` };
});
afterAll(async () => {
  await app.close();
  await Promise.all([linear.close(), jira.close(), gitlab.close()]);
});

const hex = (content: string, secret: string) => createHmac('sha256', secret).update(content).digest('hex');
const post = (path: string, body: unknown) => call(app, 'POST', path, { headers: bearer, body });
const traceOf = async (runId: string) => (await call(app, 'GET', `/api/v1/runs/${runId}/trace?limit=100`, { headers: bearer })).body as { type: string; data: Record<string, any> }[];
const reportsOf = async (runId: string) => (await traceOf(runId)).filter((entry) => entry.type === 'report').map((entry) => entry.data);

describe('Linear', () => {
  let connectionId: string;
  it('a connection keeps the API key sealed, and diagnostics say whom it speaks as', async () => {
    const created = await post('/api/v1/sender-connections', { name: 'Acme Linear', kind: 'linear', token: linear.key, apiBaseUrl: linear.url });
    expect(created.body).toMatchObject({ kind: 'linear', apiBaseUrl: linear.url, login: null });
    connectionId = created.body.id;
    const checked = await post(`/api/v1/sender-connections/${connectionId}/diagnostics`, {});
    expect(checked.body).toMatchObject({ ok: true, identity: 'Flows Bot in the organization Acme' });
    expect(JSON.stringify([created.body, checked.body])).not.toContain(linear.key);
    const wrong = await post('/api/v1/sender-connections', { name: 'Wrong key', kind: 'linear', token: 'lin_api_not_the_key', apiBaseUrl: linear.url });
    expect((await post(`/api/v1/sender-connections/${wrong.body.id}/diagnostics`, {})).body.steps[0]).toMatchObject({ ok: false, detail: 'Linear did not accept the key: Linear answered "Authentication required, not authenticated"' });
  });

  it('a comment asking for work: 👀 on it, one comment on the issue kept up to date, and the issue moved to the job\'s state', async () => {
    const source = (await post('/api/v1/webhook-sources', { name: 'Linear', format: 'linear' })).body;
    const job = await post('/api/v1/jobs', {
      name: 'Answer Linear comments',
      executionTargetId: 'local',
      promptTemplate: '{{ payload.data.body }}',
      report: { senderConnectionId: connectionId, successState: 'In Review' },
      triggers: [{ type: 'webhook', sourceId: source.id, events: ['Comment.create'] }],
    });
    expect([job.status, job.body.error?.message]).toEqual([201, undefined]);
    const issueId = randomUUID();
    const commentId = randomUUID();
    const body = JSON.stringify({ type: 'Comment', action: 'create', webhookTimestamp: Date.now(), data: { id: commentId, issueId, body: '@flows make exports stream' } });
    const delivered = await request(app.app).post(`/hooks/${source.id}`).set({ 'content-type': 'application/json', 'linear-delivery': randomUUID(), 'linear-signature': hex(body, source.signingSecret) }).send(body);
    expect(delivered.status).toBe(202);
    const [run] = await jobSettled(app, bearer, job.body.id, 1);
    expect(run.state).toBe('succeeded');
    expect(linear.reactions).toEqual([{ commentId, emoji: 'eyes' }]);
    expect(linear.comments).toHaveLength(1);
    const [comment] = linear.comments;
    expect(comment.issue).toBe(issueId);
    expect(comment.bodies[0]).toContain('⏳ Working');
    expect(comment.bodies.at(-1)).toContain('✅ Succeeded');
    expect(comment.bodies.at(-1)).toContain('Exports over 10 MB stream now');
    expect(linear.states.get(issueId)).toBe('In Review');
    expect(await reportsOf(run.id)).toEqual([{ action: 'reaction', ok: true }, { action: 'comment', ok: true }, { action: 'state', ok: true, state: 'In Review' }]);
  });
});

describe('Jira', () => {
  it('a connection needs the site and the account\'s email, and diagnostics say whom the token speaks as', async () => {
    const noSite = await post('/api/v1/sender-connections', { name: 'Jira', kind: 'jira', token: jira.token, login: jira.login });
    expect([noSite.status, noSite.body.error.message]).toEqual([400, expect.stringContaining('`apiBaseUrl`')]);
    const noLogin = await post('/api/v1/sender-connections', { name: 'Jira', kind: 'jira', token: jira.token, apiBaseUrl: jira.url });
    expect([noLogin.status, noLogin.body.error.message]).toEqual([400, expect.stringContaining('`login`')]);
    const slackWithLogin = await post('/api/v1/sender-connections', { name: 'Slack', kind: 'slack', token: 'xoxb-1234-5678-abcdefgh', login: 'someone@acme.example' });
    expect(slackWithLogin.status).toBe(400);
    const created = await post('/api/v1/sender-connections', { name: 'Acme Jira', kind: 'jira', token: jira.token, login: jira.login, apiBaseUrl: jira.url });
    expect(created.body).toMatchObject({ kind: 'jira', login: jira.login, apiBaseUrl: jira.url });
    expect((await post(`/api/v1/sender-connections/${created.body.id}/diagnostics`, {})).body).toMatchObject({ ok: true, identity: 'Flows Bot' });
  });

  it('an issue delivery: one comment on the issue, in Jira\'s markup, edited as the run advances', async () => {
    const connection = (await post('/api/v1/sender-connections', { name: 'Jira reporter', kind: 'jira', token: jira.token, login: jira.login, apiBaseUrl: jira.url })).body;
    const source = (await post('/api/v1/webhook-sources', { name: 'Jira', format: 'jira' })).body;
    const job = await post('/api/v1/jobs', {
      name: 'Answer Jira issues',
      executionTargetId: 'local',
      promptTemplate: '{{ payload.issue.fields.summary }}',
      report: { senderConnectionId: connection.id },
      triggers: [{ type: 'webhook', sourceId: source.id, events: ['issue_created.*'] }],
    });
    expect(job.status).toBe(201);
    const body = readFileSync(path.join(__dirname, '../fixtures/webhooks/jira/issue_created.json'), 'utf8');
    const key = JSON.parse(body).issue.key;
    const delivered = await request(app.app).post(`/hooks/${source.id}`).set({ 'content-type': 'application/json', 'x-atlassian-webhook-identifier': randomUUID(), 'x-hub-signature': `sha256=${hex(body, source.signingSecret)}` }).send(body);
    expect(delivered.status).toBe(202);
    const [run] = await jobSettled(app, bearer, job.body.id, 1);
    expect(run.state).toBe('succeeded');
    const comments = jira.comments.filter((comment) => comment.issue === key);
    expect(comments).toHaveLength(1);
    expect(comments[0].bodies[0]).toContain('*⏳ Working*');
    expect(comments[0].bodies[0]).toContain(`[view the run|`);
    const last = comments[0].bodies.at(-1)!;
    expect(last).toContain('*✅ Succeeded*');
    // The summary's brackets and stars are escaped: shown as written, not read as a link or bold.
    expect(last).toContain('Exports over 10 MB stream now \\[see \\*notes\\*\\].');
    expect(await reportsOf(run.id)).toEqual([{ action: 'comment', ok: true }]);
    expect(JSON.stringify(await traceOf(run.id))).not.toContain(jira.token);
  });
});

describe('GitLab', () => {
  it('a note on a merge request: 👀 on the note, one note kept up to date, and a commit status that follows the run', async () => {
    const connection = await post('/api/v1/sender-connections', { name: 'Acme GitLab', kind: 'gitlab', token: gitlab.token, apiBaseUrl: gitlab.url });
    expect(connection.body).toMatchObject({ kind: 'gitlab', apiBaseUrl: gitlab.url });
    expect((await post(`/api/v1/sender-connections/${connection.body.id}/diagnostics`, {})).body).toMatchObject({ ok: true, identity: 'flows-bot' });
    const source = (await post('/api/v1/webhook-sources', { name: 'GitLab', format: 'gitlab' })).body;
    const job = await post('/api/v1/jobs', {
      name: 'Answer GitLab notes',
      executionTargetId: 'local',
      promptTemplate: '{{ payload.object_attributes.note }}',
      report: { senderConnectionId: connection.body.id },
      triggers: [{ type: 'webhook', sourceId: source.id, events: ['note.MergeRequest'] }],
    });
    expect(job.status).toBe(201);
    const body = readFileSync(path.join(__dirname, '../fixtures/webhooks/gitlab/note.MergeRequest.json'), 'utf8');
    const note = JSON.parse(body);
    const delivered = await request(app.app).post(`/hooks/${source.id}`).set({ 'content-type': 'application/json', 'x-gitlab-event': 'Note Hook', 'x-gitlab-token': source.signingSecret, 'idempotency-key': randomUUID() }).send(body);
    expect(delivered.status).toBe(202);
    const [run] = await jobSettled(app, bearer, job.body.id, 1);
    expect(run.state).toBe('succeeded');
    const on = `${note.project.id}/merge_requests/${note.merge_request.iid}`;
    expect(gitlab.awards).toEqual([{ on: `${on}/notes/${note.object_attributes.id}`, name: 'eyes' }]);
    expect(gitlab.notes.map((made) => made.issue)).toEqual([on]);
    expect(gitlab.notes[0].bodies[0]).toContain('⏳ Working');
    expect(gitlab.notes[0].bodies.at(-1)).toContain('✅ Succeeded');
    const sha = note.merge_request.last_commit.id;
    expect(gitlab.statuses.map(({ sha: at, state, name }) => [at, state, name])).toEqual([
      [sha, 'running', 'Flows: Answer GitLab notes'],
      [sha, 'success', 'Flows: Answer GitLab notes'],
    ]);
    expect(gitlab.statuses[0].targetUrl).toContain(`/console/runs/${run.id}`);
    expect(await reportsOf(run.id)).toEqual([
      { action: 'reaction', ok: true },
      { action: 'comment', ok: true },
      { action: 'commit_status', ok: true, state: 'running' },
      { action: 'commit_status', ok: true, state: 'success' },
    ]);
    expect(JSON.stringify(await traceOf(run.id))).not.toContain(gitlab.token);
  });

  it('a note on a merge request: the run works on the merge request\'s branch, pushes it, and the note says so', async () => {
    gitlab.repositories.add('acme/widgets', { 'README.md': 'Widgets for evey team\n' });
    gitlab.repositories.branch('acme/widgets', 'fix/double-save');
    const before = gitlab.repositories.branches('acme/widgets')['fix/double-save'];
    gitlab.mergeRequests.push({ project: 'acme/widgets', iid: 17, url: 'https://gitlab.example.com/acme/widgets/-/merge_requests/17', source: 'fix/double-save', target: 'main', title: 'Debounce the save action', descriptions: ['Closes #42.'] });
    const connection = (await post('/api/v1/sender-connections', { name: 'GitLab with a repository', kind: 'gitlab', token: gitlab.token, apiBaseUrl: gitlab.url })).body;
    const source = (await post('/api/v1/webhook-sources', { name: 'GitLab repository', format: 'gitlab' })).body;
    const job = await post('/api/v1/jobs', {
      name: 'Work on merge requests',
      executionTargetId: 'local',
      promptTemplate: '{{ payload.object_attributes.note }}',
      workspace: { repository: '{{ payload.project.path_with_namespace }}', branch: '{{ payload.merge_request.source_branch }}', senderConnectionId: connection.id },
      report: { senderConnectionId: connection.id, checkRun: false },
      triggers: [{ type: 'webhook', sourceId: source.id, events: ['note.MergeRequest'] }],
    });
    expect([job.status, job.body.error?.message]).toEqual([201, undefined]);
    const body = readFileSync(path.join(__dirname, '../fixtures/webhooks/gitlab/note.MergeRequest.json'), 'utf8');
    const notesBefore = gitlab.notes.length;
    await request(app.app).post(`/hooks/${source.id}`).set({ 'content-type': 'application/json', 'x-gitlab-token': source.signingSecret, 'idempotency-key': randomUUID() }).send(body);
    const [run] = await jobSettled(app, bearer, job.body.id, 1);
    expect(run.state).toBe('succeeded');
    // The merge request's branch moved on from where it was, with the agent's change; main did not.
    const after = gitlab.repositories.branches('acme/widgets')['fix/double-save'];
    expect(after).not.toBe(before);
    expect(run.artifacts).toMatchObject({ repository: 'acme/widgets', branch: 'fix/double-save', pushed: true, commit: after, pullRequestUrl: 'https://gitlab.example.com/acme/widgets/-/merge_requests/17' });
    expect(gitlab.repositories.fileAt('acme/widgets', 'fix/double-save', 'README.md')).toBe('Widgets for every team\n');
    expect(gitlab.repositories.fileAt('acme/widgets', 'main', 'README.md')).toBe('Widgets for evey team\n');
    expect(gitlab.mergeRequests.find((merge) => merge.iid === 17)!.descriptions.at(-1)).toContain('Exports over 10 MB stream now');
    // Cloned and pushed with the connection's token, as GitLab takes it; the note says what happened.
    expect(gitlab.gitRequests.filter((git) => git.project === 'acme/widgets').every((git) => git.user === 'oauth2')).toBe(true);
    const last = gitlab.notes.slice(notesBefore)[0].bodies.at(-1)!;
    expect(last).toContain('Pushed `fix/double-save`');
    expect(last).toContain('Updated merge request !17');
    expect(JSON.stringify(await traceOf(run.id))).not.toContain(gitlab.token);
  });
});
