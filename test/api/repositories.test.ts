// GitHub App connections and repository workspaces, against GitHub on loopback (test/support/fake-github.ts):
// a real git server behind installation tokens and a REST API that verifies the app's JWT. A run clones its
// repository, the sandboxed agent edits it, and Flows commits, pushes its own branch and opens one pull
// request; the token never reaches the agent, its files, the trace or any answer.
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { DEFAULT_LIMITS } from '../../src/lib/resource-limits';
import { startTestApp, type TestApp } from '../support/app';
import { agentCommand } from '../support/agent';
import { startFakeGithub, type FakeGithub } from '../support/fake-github';
import { AGENT_TOKEN, startFakeProviders, VMHOST_TOKEN } from '../support/fake-providers';
import { call } from '../support/http';
import { accessToken, createOwner, type TestOwner } from '../support/identity';
import { githubDelivery, jobSettled, runSettled } from '../support/kit';
import { until } from '../support/until';

// The agent: fixes the typo (or changes nothing), and says whether it can find a token anywhere it can look.
const AGENT = `prompt=$(cat)
if env | grep -q ghs_; then echo "TOKEN IN ENV"; fi
if grep -rqs ghs_ . ; then echo "TOKEN IN FILES"; fi
echo "head=$(git log --format=%s -1 2>&1)"
case "$prompt" in
  nothing*) echo '{"summary":"Nothing needed changing."}' ;;
  *) sleep 0.3; sed -i 's/evey/every/' README.md && echo "$prompt" | head -n 1 | cut -c 1-60 >> NOTES.md && sleep 0.3 && echo '{"summary":"Fixed the typo in the README."}' ;;
esac
`;

let app: TestApp;
let github: FakeGithub;
let owner: TestOwner;
let bearer: Record<string, string>;
let appId: string;

beforeAll(async () => {
  github = await startFakeGithub();
  github.addRepository('acme/widgets', { 'README.md': 'Widgets for evey team\n', 'src/index.js': 'module.exports = 1;\n' });
  github.addRepository('other/secret', { 'README.md': 'not yours\n' }, { installationId: null });
  // Progress comments may be edited every 100 ms here (every 3 s by default), so that a short run shows its steps.
  // A coding agent too (the fake Gemini CLI, replaying its recorded stream), whose sessions are kept between runs.
  const stateDir = mkdtempSync(path.join(tmpdir(), 'flows-agent-state-'));
  chmodSync(stateDir, 0o711);
  const nodeBind = process.execPath.startsWith('/usr/') ? [] : [{ path: path.dirname(process.execPath), writable: false }];
  const fakeClis = path.resolve(__dirname, '../support/fake-agent-clis');
  const localAgent = {
    command: agentCommand(AGENT),
    timeoutSeconds: 60,
    stateDir,
    binds: [{ path: fakeClis, writable: false }, { path: path.resolve(__dirname, '../fixtures/agents'), writable: false }, ...nodeBind],
    agentBins: { gemini: path.join(fakeClis, 'gemini') },
  };
  app = await startTestApp(
    { localAgent, rateLimits: { api: 0, apiAddress: 0 }, repositoryCache: { dir: mkdtempSync(path.join(tmpdir(), 'flows-repository-cache-')), maxMb: 64 } },
    { reportEditEveryMs: 100, vmhostTiming: { bootTimeoutMs: 2000, pollMs: 10, callTimeoutMs: 1500 } },
  );
  owner = await createOwner(app.database.db);
  bearer = { authorization: `Bearer ${await accessToken(app, owner, { scopes: ['flows:read', 'flows:write', 'runs:read', 'runs:write'] })}` };
  const created = await call(app, 'POST', '/api/v1/github-apps', { headers: bearer, body: { name: 'Flows test', appId: github.app.id, privateKey: github.app.privateKey, apiBaseUrl: github.apiBaseUrl } });
  expect(created.status).toBe(201);
  appId = created.body.id;
});
afterAll(async () => {
  // Every token minted for a run is a secret the scan at close looks for in answers, logs and rows.
  for (const token of github.tokens.keys()) app.rememberSecret(token);
  await app.close();
  await github.close();
});

async function createJob(workspace: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const res = await call(app, 'POST', '/api/v1/jobs', {
    headers: bearer,
    body: { name: 'Fix it', promptTemplate: '{{ data.task | default: "fix" }}', executionTargetId: 'local', runNameTemplate: 'Fix #{{ data.issue | default: 0 }}', workspace, ...extra },
  });
  expect(res.status).toBe(201);
  return res.body;
}
const runOf = async (jobId: string, data: Record<string, unknown>) => {
  const invoked = await call(app, 'POST', `/api/v1/jobs/${jobId}/invocations`, { headers: bearer, body: { data } });
  expect(invoked.status).toBe(202);
  return runSettled(app, bearer, invoked.body.runId);
};
const traceOf = async (runId: string) => (await call(app, 'GET', `/api/v1/runs/${runId}/trace?limit=100`, { headers: bearer })).body as { type: string; data: any }[];
const outputOf = (trace: { type: string; data: any }[]) => trace.filter((event) => event.type === 'agent_output').map((event) => event.data.text);

describe('GitHub App connections', () => {
  it('keep the key sealed: answers carry metadata only, and the site follows the API', async () => {
    const res = await call(app, 'GET', `/api/v1/github-apps/${appId}`, { headers: bearer });
    expect(res.body).toEqual({
      id: appId,
      name: 'Flows test',
      appId: github.app.id,
      apiBaseUrl: github.apiBaseUrl,
      webBaseUrl: github.url,
      hasWebhookSecret: false,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      lastVerifiedAt: null,
    });
    expect((await call(app, 'GET', '/api/v1/github-apps', { headers: bearer })).body.map((row: { id: string }) => row.id)).toContain(appId);
    const patched = await call(app, 'PATCH', `/api/v1/github-apps/${appId}`, { headers: bearer, body: { webhookSecret: 'whsec_app_secret_1' } });
    expect(patched.body.hasWebhookSecret).toBe(true);
    expect((await call(app, 'PATCH', `/api/v1/github-apps/${appId}`, { headers: bearer, body: { webhookSecret: null } })).body.hasWebhookSecret).toBe(false);
  });

  it('refuses a key that is not a private RSA key, and an API on a URL with credentials', async () => {
    const bad = await call(app, 'POST', '/api/v1/github-apps', { headers: bearer, body: { name: 'x', appId: 1, privateKey: 'not a key' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('`privateKey` is not a private key in PEM');
    const creds = await call(app, 'POST', '/api/v1/github-apps', { headers: bearer, body: { name: 'x', appId: 1, privateKey: github.app.privateKey, apiBaseUrl: 'https://u:p@ghe.example.com/api/v3' } });
    expect(creds.status).toBe(400);
    expect(creds.body.error.message).toContain('`apiBaseUrl`');
  });

  it('diagnostics: GitHub accepts the key, and the installations and their repositories are listed', async () => {
    const res = await call(app, 'POST', `/api/v1/github-apps/${appId}/diagnostics`, { headers: bearer });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ githubAppId: appId, ok: true, installations: [{ id: 1, account: 'acme', repositorySelection: 'selected', repositories: ['acme/widgets'] }] });
    expect(res.body.steps.map((step: { step: string; ok: boolean }) => [step.step, step.ok])).toEqual([
      ['app_authentication', true],
      ['installations', true],
    ]);
    expect(res.body.steps[0].detail).toContain('flows-test');
    // The tokens it minted to list repositories were revoked at once.
    expect([...github.tokens.values()].every((token) => token.revoked)).toBe(true);
    expect((await call(app, 'GET', `/api/v1/github-apps/${appId}`, { headers: bearer })).body.lastVerifiedAt).not.toBeNull();
  });

  it('diagnostics say so when GitHub does not accept the key', async () => {
    const { generateKeyPairSync } = await import('node:crypto');
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const created = await call(app, 'POST', '/api/v1/github-apps', { headers: bearer, body: { name: 'Wrong key', appId: github.app.id, privateKey: other, apiBaseUrl: github.apiBaseUrl } });
    const res = await call(app, 'POST', `/api/v1/github-apps/${created.body.id}/diagnostics`, { headers: bearer });
    expect(res.body.ok).toBe(false);
    expect(res.body.steps).toEqual([{ step: 'app_authentication', ok: false, durationMs: expect.any(Number), detail: expect.stringContaining('GitHub answered 401') }]);
    expect((await call(app, 'DELETE', `/api/v1/github-apps/${created.body.id}`, { headers: bearer })).status).toBe(204);
  });
});

describe('jobs with a workspace', () => {
  it('are checked at save: templates over the run\'s context, and an app of the tenant', async () => {
    const unknown = await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: { name: 'x', promptTemplate: 'x', workspace: { repository: '{{ payload.repository.full_name }}' } } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain('`workspace.repository`');
    const noApp = await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: { name: 'x', promptTemplate: 'x', workspace: { repository: 'acme/widgets', githubAppId: 'gha_nope' } } });
    expect(noApp.status).toBe(400);
    expect(noApp.body.error.message).toContain('is not a GitHub App connection of this tenant');
  });

  it('clone, let the agent edit, then commit, push the run\'s own branch and open one pull request', async () => {
    const job = await createJob({ repository: '{{ data.repository }}', branch: 'flows/issue-{{ data.issue }}', githubAppId: appId });
    expect(job.workspace).toEqual({ repository: '{{ data.repository }}', branch: 'flows/issue-{{ data.issue }}', githubAppId: appId });
    const run = await runOf(job.id, { repository: 'acme/widgets', issue: 42 });
    expect(run).toMatchObject({ state: 'succeeded', name: 'Fix #42' });
    expect(run.artifacts).toEqual({
      repository: 'acme/widgets',
      baseRef: 'main',
      baseCommit: expect.stringMatching(/^[0-9a-f]{40}$/),
      changed: true,
      branch: 'flows/issue-42',
      commit: expect.stringMatching(/^[0-9a-f]{40}$/),
      pushed: true,
      pullRequestUrl: `${github.url}/acme/widgets/pull/1`,
      diffStat: { files: 2, insertions: 2, deletions: 1 },
      error: null,
    });
    // On GitHub: the branch holds the change, main does not, and one pull request links the run.
    expect(github.fileAt('acme/widgets', 'flows/issue-42', 'README.md')).toBe('Widgets for every team\n');
    expect(github.fileAt('acme/widgets', 'main', 'README.md')).toBe('Widgets for evey team\n');
    expect(github.branches('acme/widgets')['flows/issue-42']).toBe(run.artifacts.commit);
    expect(github.log('acme/widgets', 'flows/issue-42')[0]).toBe('Fix #42 <flows@users.noreply.invalid>');
    expect(github.pulls).toHaveLength(1);
    expect(github.pulls[0]).toMatchObject({ repository: 'acme/widgets', title: 'Fix #42', head: 'flows/issue-42', base: 'main' });
    expect(github.pulls[0].body).toContain('Fixed the typo in the README.');
    expect(github.pulls[0].body).toContain(`/console/runs/${run.id}`);
    // The run's token reached this one repository with what a pull request needs, and was revoked at its end.
    // (The token is revoked as the run's folders are removed, just after its end is recorded.)
    const minted = [...github.tokens.values()].at(-1)!;
    expect(minted).toMatchObject({ repositories: ['acme/widgets'], permissions: { contents: 'write', pull_requests: 'write', metadata: 'read' } });
    await until('the run\'s token is revoked', async () => minted.revoked);

    const trace = await traceOf(run.id);
    const steps = trace.filter((event) => event.type === 'workspace').map((event) => event.data.step);
    expect(steps).toEqual(['cloned', 'committed', 'pushed', 'pull_request']);
    expect(trace.find((event) => event.type === 'workspace')!.data).toMatchObject({ repository: 'acme/widgets', ref: 'main', commit: run.artifacts.baseCommit, cache: 'miss' });
    // The agent, in its sandbox, had the files and a history of its own, and no token anywhere it could look.
    expect(trace.find((event) => event.type === 'target_provisioning')!.data).toMatchObject({ sandbox: 'bubblewrap' });
    const output = outputOf(trace);
    expect(output).toContain('head=First commit');
    expect(output.join('\n')).not.toContain('TOKEN IN');

    const patch = await call(app, 'GET', `/api/v1/runs/${run.id}/patch`, { headers: bearer });
    expect(patch.status).toBe(200);
    expect(patch.headers['content-type']).toMatch(/^text\/x-diff/);
    expect(patch.text).toContain('-Widgets for evey team');
    expect(patch.text).toContain('+Widgets for every team');
    expect(patch.text).toContain('Subject: [PATCH] Fix #42');

    // A follow-up on the same issue continues the branch, and its pull request is updated, not doubled.
    const again = await runOf(job.id, { repository: 'acme/widgets', issue: 42, task: 'fix more' });
    expect(again.state).toBe('succeeded');
    const againTrace = await traceOf(again.id);
    expect(againTrace.find((event) => event.type === 'workspace')!.data).toMatchObject({ step: 'cloned', ref: 'flows/issue-42', continued: true, commit: run.artifacts.commit, cache: 'hit' });
    expect(againTrace.filter((event) => event.type === 'workspace').map((event) => event.data.step)).toEqual(['cloned', 'committed', 'pushed', 'pull_request']);
    expect(againTrace.find((event) => event.data.step === 'pull_request')!.data).toMatchObject({ action: 'updated', number: 1 });
    expect(again.artifacts).toMatchObject({ baseRef: 'flows/issue-42', baseCommit: run.artifacts.commit, changed: true, pushed: true, pullRequestUrl: run.artifacts.pullRequestUrl, diffStat: { files: 1, insertions: 1, deletions: 0 } });
    expect(github.fileAt('acme/widgets', 'flows/issue-42', 'NOTES.md')).toBe('fix\nfix more\n');
    expect(github.log('acme/widgets', 'flows/issue-42').slice(0, 3)).toEqual(['Fix #42 <flows@users.noreply.invalid>', 'Fix #42 <flows@users.noreply.invalid>', 'First commit <ada@example.test>']);
    expect(github.pulls).toHaveLength(1);
    expect(github.pulls[0].edits).toBe(1);
    expect(github.pulls[0].body).toContain(`/console/runs/${again.id}`);
  });

  it('commit with the job\'s own message when it gives one', async () => {
    const job = await createJob({ repository: 'acme/widgets', githubAppId: appId, changes: 'push', commitMessage: 'Fix issue {{ data.issue }}\n\nAsked for in #{{ data.issue }}.' });
    const run = await runOf(job.id, { issue: 77 });
    expect(run.artifacts).toMatchObject({ pushed: true, pullRequestUrl: null });
    expect(github.log('acme/widgets', `flows/${job.slug}-${run.id}`)[0]).toBe('Fix issue 77 <flows@users.noreply.invalid>');
    expect([...github.tokens.values()].at(-1)!.permissions).toEqual({ contents: 'write', metadata: 'read' });
  });

  it('title the pull request and author the commit as the job says', async () => {
    const job = await createJob({ repository: 'acme/widgets', githubAppId: appId, pullRequestTitle: 'Fix #{{ data.issue }}: the README', author: { name: 'Widget Bot', email: 'bot@acme.example' } });
    const run = await runOf(job.id, { issue: 88 });
    const pull = github.pulls.find((candidate) => candidate.head === run.artifacts.branch)!;
    expect(pull.title).toBe('Fix #88: the README');
    expect(github.log('acme/widgets', run.artifacts.branch)[0]).toBe('Fix #88 <bot@acme.example>');
    const refused = await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: { name: 'x', promptTemplate: 'x', workspace: { repository: 'acme/widgets', author: { name: 'Evil <x@y>', email: 'x@y.example' } } } });
    expect(refused.status).toBe(400);
  });

  it('push nothing when the agent changed nothing', async () => {
    const job = await createJob({ repository: 'acme/widgets', githubAppId: appId });
    const pushes = github.gitRequests.filter((request) => request.service === 'git-receive-pack').length;
    const run = await runOf(job.id, { task: 'nothing to do' });
    expect(run.state).toBe('succeeded');
    expect(run.artifacts).toMatchObject({ changed: false, branch: null, commit: null, pushed: false, pullRequestUrl: null, diffStat: null });
    expect(github.gitRequests.filter((request) => request.service === 'git-receive-pack').length).toBe(pushes);
    expect((await call(app, 'GET', `/api/v1/runs/${run.id}/patch`, { headers: bearer })).status).toBe(404);
  });

  it('keep the changes as a patch only when the job says so, with a token that may only read', async () => {
    const job = await createJob({ repository: 'acme/widgets', githubAppId: appId, changes: 'patch-only' });
    const run = await runOf(job.id, { issue: 9 });
    expect(run.artifacts).toMatchObject({ changed: true, pushed: false, pullRequestUrl: null, branch: `flows/${job.slug}-${run.id}` });
    expect(github.branches('acme/widgets')[`flows/${job.slug}-${run.id}`]).toBeUndefined();
    expect([...github.tokens.values()].at(-1)!.permissions).toEqual({ contents: 'read', metadata: 'read' });
    expect((await call(app, 'GET', `/api/v1/runs/${run.id}/patch`, { headers: bearer })).text).toContain('+Widgets for every team');
  });

  it('fail as a setup failure, saying why, for a repository the app is not installed on', async () => {
    const job = await createJob({ repository: 'other/secret', githubAppId: appId });
    const run = await runOf(job.id, {});
    expect(run.state).toBe('failed');
    expect(run.error).toContain('is not installed on other/secret');
    expect(run.artifacts).toBeNull();
    expect(github.gitRequests.some((request) => request.repository === 'other/secret')).toBe(false);
  });

  it('never push to the default branch, and refuse a branch name git does not take', async () => {
    const onMain = await runOf((await createJob({ repository: 'acme/widgets', githubAppId: appId, branch: 'main' })).id, {});
    expect(onMain.state).toBe('failed');
    expect(onMain.error).toContain("the repository's default branch");
    const bad = await runOf((await createJob({ repository: 'acme/widgets', githubAppId: appId, branch: 'flows/..bad' })).id, {});
    expect(bad.error).toContain('not a branch name git takes');
    const notRepo = await runOf((await createJob({ repository: '{{ data.repository }}', githubAppId: appId })).id, { repository: 'no slash' });
    expect(notRepo.error).toContain('is not a repository (`owner/name`)');
  });

  it('work with a personal access token in a tenant secret, on the site the repository\'s URL names', async () => {
    // A token as a person's would be: not narrowed to the repository, nor minted for the run.
    const pat = 'ghs_personal_access_token_1';
    github.tokens.set(pat, { token: pat, installationId: 1, repositories: ['acme/widgets'], permissions: { contents: 'write', pull_requests: 'write' }, revoked: false });
    expect((await call(app, 'POST', '/api/v1/secrets', { headers: bearer, body: { name: 'GITHUB_PAT', value: pat } })).status).toBe(201);
    const both = await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: { name: 'x', promptTemplate: 'x', workspace: { repository: 'acme/widgets', githubAppId: appId, tokenSecret: 'GITHUB_PAT' } } });
    expect([both.status, both.body.error.message]).toEqual([400, '`workspace` takes one credential: `githubAppId`, `tokenSecret` or `senderConnectionId`.']);
    const missing = await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: { name: 'x', promptTemplate: 'x', workspace: { repository: 'acme/widgets', tokenSecret: 'NOPE' } } });
    expect(missing.body.error.message).toContain('refers to the secret NOPE');
    const job = await createJob({ repository: `${github.url}/acme/widgets`, tokenSecret: 'GITHUB_PAT', branch: 'flows/pat-{{ data.issue }}' });
    const run = await runOf(job.id, { issue: 3 });
    expect(run.state).toBe('succeeded');
    expect(run.artifacts).toMatchObject({ repository: 'acme/widgets', pushed: true, pullRequestUrl: expect.stringMatching(new RegExp(`^${github.url}/acme/widgets/pull/\\d+$`)) });
    expect(github.fileAt('acme/widgets', 'flows/pat-3', 'README.md')).toBe('Widgets for every team\n');
    expect(github.gitRequests.filter((request) => request.token === pat).length).toBeGreaterThan(0);
    expect(outputOf(await traceOf(run.id)).join('\n')).not.toContain('TOKEN IN');
  });

  it('an app in use by a job cannot be deleted', async () => {
    const res = await call(app, 'DELETE', `/api/v1/github-apps/${appId}`, { headers: bearer });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('in_use');
  });
});

describe('a webhook source bound to the GitHub App', () => {
  it('verifies with the app\'s webhook secret, which stays the app\'s: never answered, changed on the app alone', async () => {
    const appOnly = await call(app, 'POST', '/api/v1/github-apps', { headers: bearer, body: { name: 'Bound', appId: github.app.id, privateKey: github.app.privateKey, apiBaseUrl: github.apiBaseUrl } });
    const id = appOnly.body.id;
    const noSecret = await call(app, 'POST', '/api/v1/webhook-sources', { headers: bearer, body: { name: 'Via app', format: 'github', githubAppId: id } });
    expect(noSecret.status).toBe(400);
    expect(noSecret.body.error.message).toContain('has no webhook secret');
    expect((await call(app, 'POST', '/api/v1/webhook-sources', { headers: bearer, body: { name: 'x', format: 'linear', githubAppId: id } })).body.error.message).toContain('only a source of the github format');
    expect((await call(app, 'POST', '/api/v1/webhook-sources', { headers: bearer, body: { name: 'x', format: 'github', githubAppId: 'gha_nope' } })).status).toBe(400);

    await call(app, 'PATCH', `/api/v1/github-apps/${id}`, { headers: bearer, body: { webhookSecret: 'whsec_bound_1' } });
    const created = await call(app, 'POST', '/api/v1/webhook-sources', { headers: bearer, body: { name: 'Via app', format: 'github', githubAppId: id } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ githubAppId: id, signingSecret: null });
    expect((await call(app, 'GET', `/api/v1/webhook-sources/${created.body.id}`, { headers: bearer })).body.githubAppId).toBe(id);
    const status = async (secret: string) => {
      const { body, headers } = githubDelivery(secret, { zen: 'Keep it logically awesome.', hook_id: 1 }, { event: 'ping' });
      return (await request(app.app).post(`/hooks/${created.body.id}`).set(headers).send(body)).status;
    };
    expect(await status('whsec_bound_1')).toBe(202);
    expect((await call(app, 'POST', `/api/v1/webhook-sources/${created.body.id}/rotate-secret`, { headers: bearer })).status).toBe(409);
    // A new secret on the app is the source's at once; the old one is refused.
    await call(app, 'PATCH', `/api/v1/github-apps/${id}`, { headers: bearer, body: { webhookSecret: 'whsec_bound_2' } });
    expect(await status('whsec_bound_2')).toBe(202);
    expect(await status('whsec_bound_1')).toBe(401);
    // The app cannot lose its secret, nor go, while a source verifies with it; once the source is gone, it can.
    expect((await call(app, 'PATCH', `/api/v1/github-apps/${id}`, { headers: bearer, body: { webhookSecret: null } })).status).toBe(409);
    const inUse = await call(app, 'DELETE', `/api/v1/github-apps/${id}`, { headers: bearer });
    expect(inUse.status).toBe(409);
    expect(inUse.body.error.message).toContain('webhook source is bound');
    expect((await call(app, 'DELETE', `/api/v1/webhook-sources/${created.body.id}`, { headers: bearer })).status).toBe(204);
    expect((await call(app, 'DELETE', `/api/v1/github-apps/${id}`, { headers: bearer })).status).toBe(204);
  });
});

describe('a mention in a comment, through the preset, on a source bound to the app', () => {
  const APP_WEBHOOK_SECRET = 'whsec_app_mentions';
  let source: { id: string; signingSecret: string | null };
  let jobId: string;
  const comment = (id: number, body: string, { association = 'OWNER', type = 'User', number = 5, pullRequest = false } = {}) => ({
    action: 'created',
    issue: { number, title: 'Typo in the README', body: 'It says evey.', ...(pullRequest && { pull_request: { url: `${github.apiBaseUrl}/repos/acme/widgets/pulls/${number}` } }) },
    comment: { id, body, user: { login: type === 'Bot' ? 'helper[bot]' : 'ada', type }, author_association: association },
    repository: { full_name: 'acme/widgets', default_branch: 'main' },
    installation: { id: 1 },
    sender: { login: 'ada' },
  });
  const deliver = async (payload: Record<string, unknown>) => {
    const { body, headers } = githubDelivery(APP_WEBHOOK_SECRET, payload, { event: 'issue_comment' });
    // Intake is outside the contract: a plain request, as GitHub sends it.
    const res = await request(app.app).post(`/hooks/${source.id}`).set(headers).send(body);
    expect(res.status).toBe(202);
    return res.body as { activityId: string };
  };

  beforeAll(async () => {
    // The app's webhook goes to a source bound to it: signed with the app's secret, naming its installation.
    await call(app, 'PATCH', `/api/v1/github-apps/${appId}`, { headers: bearer, body: { webhookSecret: APP_WEBHOOK_SECRET } });
    source = (await call(app, 'POST', '/api/v1/webhook-sources', { headers: bearer, body: { name: 'GitHub', format: 'github', githubAppId: appId } })).body;
    expect(source.signingSecret).toBeNull();
    const contexts = await call(app, 'GET', '/api/v1/trigger-contexts', { headers: bearer });
    const preset = contexts.body.presets.find((candidate: { id: string }) => candidate.id === 'github-mention').job;
    // The preset as a user adapts it: the source and the app filled in, and the local target's own agent.
    const { agent: _agent, ...job } = preset;
    const created = await call(app, 'POST', '/api/v1/jobs', {
      headers: bearer,
      body: { ...job, executionTargetId: 'local', triggers: [{ ...preset.triggers[0], sourceId: source.id }], workspace: { ...preset.workspace, githubAppId: appId } },
    });
    expect(created.status).toBe(201);
    jobId = created.body.id;
  });

  it('reacts, keeps one progress comment up to date, opens the pull request, and ends the comment with its link', async () => {
    const before = github.comments.length;
    const asked = github.apiRequests.length;
    await deliver(comment(555, '@flows please fix the typo'));
    const [run] = await jobSettled(app, bearer, jobId, 1);
    expect(run).toMatchObject({ state: 'succeeded', trigger: { type: 'webhook' } });
    expect(github.reactions).toContainEqual({ repository: 'acme/widgets', on: 'issues/comments/555', content: 'eyes' });
    const progress = github.comments.slice(before);
    expect(progress).toHaveLength(1);
    const [first, ...edits] = progress[0].bodies;
    expect(progress[0].issue).toBe(5);
    expect(first).toContain('⏳ Working');
    expect(first).toContain(`/console/runs/${run.id}`);
    // It went through its steps: the clone, the agent at work, the push and the pull request, then the end.
    expect(edits.some((body) => body.includes('Cloned acme/widgets at `main`'))).toBe(true);
    const last = edits.at(-1)!;
    expect(last).toContain('✅ Succeeded');
    expect(last).toContain('Fixed the typo in the README.');
    expect(last).toContain(`Pull request: ${run.artifacts.pullRequestUrl}`);
    expect(last).toContain('Pushed `flows/issue-5`');
    expect(github.fileAt('acme/widgets', 'flows/issue-5', 'NOTES.md')).toContain('ada asked, on acme/widgets#5');
    // The comment's text reached the agent's prompt.
    expect(run.prompt).toContain('@flows please fix the typo');
    const trace = await traceOf(run.id);
    expect(trace.filter((event) => event.type === 'report').map((event) => [event.data.action, event.data.ok])).toEqual([
      ['reaction', true],
      ['comment', true],
    ]);
    // No check run on an issue; the report's token was for this repository and revoked.
    expect(github.checks).toHaveLength(0);
    // The tokens came from the installation the delivery named: GitHub was not asked which one reaches the repository.
    expect(github.apiRequests.slice(asked).filter((call) => call.path.endsWith('/installation'))).toEqual([]);
    expect(github.apiRequests.slice(asked).filter((call) => call.path.startsWith('/app/installations/1/access_tokens'))).toHaveLength(2);
  });

  it('a second comment on the issue continues on the same branch, and the same pull request says so', async () => {
    const pulls = github.pulls.length;
    const [pull] = github.pulls.filter((candidate) => candidate.head === 'flows/issue-5');
    const edits = pull.edits;
    await deliver(comment(560, '@flows also note the follow-up'));
    const runs = await jobSettled(app, bearer, jobId, 2);
    const run = runs.find((candidate) => candidate.prompt.includes('also note the follow-up'))!;
    expect(run.state).toBe('succeeded');
    expect(run.artifacts).toMatchObject({ branch: 'flows/issue-5', pushed: true, pullRequestUrl: pull.url });
    const cloned = (await traceOf(run.id)).find((event) => event.type === 'workspace' && event.data.step === 'cloned')!;
    expect(cloned.data).toMatchObject({ ref: 'flows/issue-5', continued: true });
    // Both requests' notes are on the branch: the second run started from the first one's commit.
    const notes = github.fileAt('acme/widgets', 'flows/issue-5', 'NOTES.md');
    expect(notes!.trim().split('\n')).toHaveLength(2);
    expect(github.pulls).toHaveLength(pulls);
    expect(pull.edits).toBe(edits + 1);
  });

  it('on a pull request\'s conversation: a check run on its head commit, from in progress to success', async () => {
    github.heads.set('acme/widgets#12', github.branches('acme/widgets').main);
    await deliver(comment(556, '@flows fix it here', { number: 12, pullRequest: true }));
    const runs = await jobSettled(app, bearer, jobId, 3);
    const run = runs.find((candidate) => candidate.name.startsWith('#12'))!;
    expect(run.state).toBe('succeeded');
    expect(github.checks).toHaveLength(1);
    expect(github.checks[0]).toMatchObject({ repository: 'acme/widgets', name: 'Flows: Answer @flows mentions', headSha: github.branches('acme/widgets').main, status: 'completed', conclusion: 'success', detailsUrl: expect.stringContaining(`/console/runs/${run.id}`) });
    expect(github.checks[0].summary).toContain('✅ Succeeded');
    await until('the report\'s tokens are revoked', async () => [...github.tokens.values()].filter((token) => token.permissions.checks === 'write').every((token) => token.revoked));
  });

  it('a bot\'s comment and a comment by someone without write access start nothing, and the decision says why', async () => {
    const runs = (await call(app, 'GET', `/api/v1/runs?jobId=${jobId}`, { headers: bearer })).body.length;
    const fromBot = await deliver(comment(557, '@flows do it', { type: 'Bot' }));
    const fromStranger = await deliver(comment(558, '@flows do it', { association: 'CONTRIBUTOR' }));
    const decided = async (activityId: string) =>
      until('evaluated', async () => {
        const activity = (await call(app, 'GET', `/api/v1/webhook-activity/${activityId}`, { headers: bearer })).body;
        return activity.evaluatedAt && activity;
      });
    const bot = await decided(fromBot.activityId);
    expect(bot.decisions[0]).toMatchObject({ decision: 'no-match' });
    expect(bot.decisions[0].details).toContainEqual(expect.objectContaining({ part: 'none', path: 'payload.comment.user.type', actual: 'Bot', result: true }));
    const stranger = await decided(fromStranger.activityId);
    expect(stranger.decisions[0].details).toContainEqual(expect.objectContaining({ part: 'all', path: 'payload.comment.author_association', actual: 'CONTRIBUTOR', result: false }));
    await app.runner.idle();
    expect((await call(app, 'GET', `/api/v1/runs?jobId=${jobId}`, { headers: bearer })).body).toHaveLength(runs);
  });
});

describe('a coding agent with a workspace', () => {
  it('resumes its session on a follow-up, in a workspace on the branch its first run pushed', async () => {
    const job = await createJob({ repository: 'acme/widgets', branch: 'flows/gemini-{{ data.issue }}', githubAppId: appId }, { agent: { kind: 'gemini', continue: { key: 'data.issue' } } });
    const first = await runOf(job.id, { issue: 7 });
    expect(first.state).toBe('succeeded');
    expect(first.artifacts).toMatchObject({ changed: true, pushed: true, branch: 'flows/gemini-7' });
    expect(github.fileAt('acme/widgets', 'flows/gemini-7', 'hello.txt')).toBe('hello\n');
    // The pull request says what the agent spent, from its typed events.
    expect(github.pulls.find((pull) => pull.head === 'flows/gemini-7')!.body).toMatch(/Spent: [\d,]+ tokens in, [\d,]+ out, \d+ turns?, /);
    const second = await runOf(job.id, { issue: 7 });
    expect(second.state).toBe('succeeded');
    const trace = await traceOf(second.id);
    expect(trace.find((event) => event.type === 'session_started')!.data).toMatchObject({ agent: 'gemini', sessionId: first.result.sessionId, continuedFromRunId: first.id });
    expect(trace.find((event) => event.type === 'workspace' && event.data.step === 'cloned')!.data).toMatchObject({ ref: 'flows/gemini-7', continued: true });
    // The resumed agent changed nothing: its workspace already held the first run's files.
    expect(second.artifacts).toMatchObject({ changed: false, pushed: false });
  });
});

describe('a workspace on a VM-host target', () => {
  it('is cloned and pushed by the provider with a token for the repository alone; Flows reads the branch back and opens the pull request', async () => {
    const providers = await startFakeProviders();
    try {
      const connectionId = (await call(app, 'POST', '/api/v1/vmhost-connections', { headers: bearer, body: { name: 'Fake host', apiToken: VMHOST_TOKEN, apiBaseUrl: providers.url } })).body.id;
      const targetId = (await call(app, 'POST', '/api/v1/execution-targets', { headers: bearer, body: { name: 'Fake VM', connectionId, image: 'agent-runner', size: 'small' } })).body.id;
      await call(app, 'PUT', '/api/v1/integrations/agent-integration', { headers: bearer, body: { accessToken: AGENT_TOKEN, project: 'acme', connectionId, apiBaseUrl: providers.url } });
      const job = await createJob({ repository: 'acme/widgets', branch: 'flows/vm-{{ data.issue }}', githubAppId: appId }, { executionTargetId: targetId });
      const run = await runOf(job.id, { issue: 9 });
      expect(run.state).toBe('succeeded');
      const [session] = [...providers.sessions.values()];
      expect(session.repository).toEqual({ url: `${github.url}/acme/widgets.git`, ref: 'main', branch: 'flows/vm-9', token: expect.any(String), lease: null, author: { name: 'Flows', email: 'flows@users.noreply.invalid' }, commitMessage: 'Fix #9' });
      // The provider's token was for this repository alone, and is revoked now that the run is over.
      expect(github.tokens.get(session.repository!.token)).toMatchObject({ repositories: ['acme/widgets'] });
      await until('the provider\'s token is revoked', async () => github.tokens.get(session.repository!.token)!.revoked);
      expect(run.artifacts).toMatchObject({ changed: true, pushed: true, branch: 'flows/vm-9', commit: session.pushed, diffStat: { files: 1, insertions: 1, deletions: 0 }, pullRequestUrl: expect.stringContaining('/pull/') });
      expect(github.fileAt('acme/widgets', 'flows/vm-9', 'FROM-THE-VM.md')).toBe('Written on the VM.\n');
      expect(github.pulls.find((pull) => pull.head === 'flows/vm-9')).toMatchObject({ base: 'main', title: 'Fix #9' });
      expect((await call(app, 'GET', `/api/v1/runs/${run.id}/patch`, { headers: bearer })).text).toContain('FROM-THE-VM.md');
      expect((await traceOf(run.id)).filter((event) => event.type === 'workspace').map((event) => [event.data.step, event.data.by])).toEqual([
        ['cloned', 'provider'],
        ['pushed', 'provider'],
        ['pull_request', undefined],
      ]);

      // A follow-up continues the branch: the provider's push goes over where the branch is.
      providers.knobs.edit = { file: 'FROM-THE-VM.md', text: 'Written on the VM, twice.\n' };
      const again = await runOf(job.id, { issue: 9 });
      expect(again.artifacts).toMatchObject({ pushed: true, baseRef: 'flows/vm-9', pullRequestUrl: run.artifacts.pullRequestUrl });
      expect([...providers.sessions.values()][1].repository!.lease).toBe(session.pushed);

      // Nothing changed: nothing pushed, and the run says so.
      providers.knobs.edit = null;
      const unchanged = await runOf(job.id, { issue: 10 });
      expect(unchanged.artifacts).toMatchObject({ changed: false, pushed: false, pullRequestUrl: null });
      expect(github.branches('acme/widgets')['flows/vm-10']).toBeUndefined();

      const patchOnly = await createJob({ repository: 'acme/widgets', changes: 'patch-only', githubAppId: appId }, { executionTargetId: targetId });
      expect(await runOf(patchOnly.id, {})).toMatchObject({ state: 'failed', error: expect.stringContaining('patch-only') });
    } finally {
      await providers.close();
    }
  });
});

describe('a workspace on the local target', () => {
  it('is held to the sandbox\'s workspace size while the agent runs', async () => {
    const small = await startTestApp({
      localAgent: { command: agentCommand('cat >/dev/null; head -c 3000000 /dev/zero > big.bin; sleep 20; echo never'), timeoutSeconds: 60, limits: { ...DEFAULT_LIMITS, workspaceMb: 1 } },
      rateLimits: { api: 0, apiAddress: 0 },
    });
    try {
      const owner = await createOwner(small.database.db, { tenantName: 'Small' });
      const headers = { authorization: `Bearer ${await accessToken(small, owner)}` };
      const created = await call(small, 'POST', '/api/v1/github-apps', { headers, body: { name: 'Flows test', appId: github.app.id, privateKey: github.app.privateKey, apiBaseUrl: github.apiBaseUrl } });
      const job = await call(small, 'POST', '/api/v1/jobs', { headers, body: { name: 'Big', promptTemplate: 'x', executionTargetId: 'local', workspace: { repository: 'acme/widgets', githubAppId: created.body.id } } });
      const invoked = await call(small, 'POST', `/api/v1/jobs/${job.body.id}/invocations`, { headers, body: {} });
      const run = await runSettled(small, headers, invoked.body.runId);
      expect(run).toMatchObject({ state: 'failed', error: expect.stringContaining('the size of its workspace (1 MB)') });
      const trace = (await call(small, 'GET', `/api/v1/runs/${run.id}/trace?limit=100`, { headers })).body as { type: string; data: any }[];
      expect(trace.find((event) => event.type === 'resource_limit')?.data).toMatchObject({ limit: 'workspace' });
      for (const token of github.tokens.keys()) small.rememberSecret(token);
    } finally {
      await small.close();
    }
  });
});

