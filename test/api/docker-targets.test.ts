// Docker execution targets through the API, against the real Docker daemon with an image made here:
// creating one (only from the operator's allowlist), a run in a fresh container that cannot read the
// server's files (the prompt-injection reproduction), its secrets masked, stop, diagnostics, no container
// left behind, and containers that finished runs left behind swept away; with `network: egress`, a run that
// reaches out only through its proxy, whose refusals land in its trace.
import Dockerode from 'dockerode';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LABELS } from '../../src/integrations/docker-fns';
import { startTestApp, type TestApp } from '../support/app';
import { ensureAgentTestImage, ensureDockerd, ensureTestImage, httpStandIn, TEST_IMAGE } from '../support/docker';
import { call } from '../support/http';
import request from 'supertest';
import { accessToken, createOwner, sessionCookie, type TestOwner } from '../support/identity';
import { runSettled } from '../support/kit';
import { startFakeGithub } from '../support/fake-github';

jest.setTimeout(120_000);

const docker = new Dockerode({ socketPath: '/var/run/docker.sock' });
const dataDir = mkdtempSync(path.join(tmpdir(), 'flows-data-'));
writeFileSync(path.join(dataDir, 'secret.key'), 'the-server-secret-key');
let app: TestApp;
let headers: Record<string, string>;
let owner: TestOwner;

beforeAll(async () => {
  await ensureDockerd();
  await ensureTestImage();
  app = await startTestApp({ docker: { host: 'unix:///var/run/docker.sock', images: ['flows-test/*'] }, rateLimits: { api: 0, apiAddress: 0 } });
  owner = await createOwner(app.database.db);
  headers = { authorization: `Bearer ${await accessToken(app, owner)}` };
});
afterAll(() => app.close());

const api = (method: string, route: string, body?: unknown) => call(app, method, route, { headers, body });
const containersOfRuns = async () => docker.listContainers({ all: true, filters: { label: [LABELS.run] } });

const finished = (runId: string, states?: string[]) => runSettled(app, headers, runId, states);
const outputOf = async (runId: string) =>
  ((await api('GET', `/api/v1/runs/${runId}/trace?limit=100`)).body as { type: string; data: any }[]).filter((e) => e.type === 'agent_output').map((e) => e.data.text);

async function dockerTarget(extra: Record<string, unknown> = {}) {
  const res = await api('POST', '/api/v1/execution-targets', { kind: 'docker', name: 'Busybox', image: TEST_IMAGE, command: 'sh', memoryMb: 256, ...extra });
  expect([res.status, res.body.error]).toEqual([201, undefined]);
  return res.body;
}

describe('docker targets', () => {
  it('are created from an allowed image with their container settings, and refuse what is not theirs', async () => {
    const target = await dockerTarget({ cpus: 0.5, pids: 64 });
    expect(target).toMatchObject({ kind: 'docker', image: TEST_IMAGE, connectionId: null, size: '', docker: { command: 'sh', cpus: 0.5, memoryMb: 256, pids: 64, network: 'none', networkAllow: [] } });
    const outside = await api('POST', '/api/v1/execution-targets', { kind: 'docker', name: 'Elsewhere', image: 'docker.io/library/ubuntu:24.04' });
    expect([outside.status, outside.body.error.message]).toEqual([400, expect.stringContaining('`image`')]);
    const vmField = await api('POST', '/api/v1/execution-targets', { kind: 'docker', name: 'Mixed', image: TEST_IMAGE, region: 'fra1' });
    expect([vmField.status, vmField.body.error.message]).toEqual([400, expect.stringContaining('`region`')]);
    const changed = await api('PATCH', `/api/v1/execution-targets/${target.id}`, { memoryMb: 512, network: 'egress' });
    expect(changed.body.docker).toMatchObject({ memoryMb: 512, network: 'egress' });
    // null goes back to the image's own entrypoint.
    expect((await api('PATCH', `/api/v1/execution-targets/${target.id}`, { command: null })).body.docker).toMatchObject({ command: null, memoryMb: 512 });
    expect((await api('PATCH', `/api/v1/execution-targets/${target.id}`, { image: 'ubuntu' })).status).toBe(400);
  });

  it('take the domains an egress proxy lets through, checked as domains, kept when the network changes', async () => {
    const target = await dockerTarget({ network: 'egress', networkAllow: ['api.anthropic.com', '*.npmjs.org', 'api.anthropic.com'] });
    expect(target.docker).toMatchObject({ network: 'egress', networkAllow: ['api.anthropic.com', '*.npmjs.org'] });
    const patch = (body: Record<string, unknown>) => api('PATCH', `/api/v1/execution-targets/${target.id}`, body);
    expect((await patch({ network: 'none' })).body.docker).toMatchObject({ network: 'none', networkAllow: ['api.anthropic.com', '*.npmjs.org'] });
    expect((await patch({ network: 'egress' })).body.docker).toMatchObject({ network: 'egress', networkAllow: ['api.anthropic.com', '*.npmjs.org'] });
    expect((await patch({ networkAllow: ['registry.npmjs.org'] })).body.docker).toMatchObject({ network: 'egress', networkAllow: ['registry.npmjs.org'] });
    expect((await patch({ networkAllow: [] })).body.docker).toMatchObject({ network: 'egress', networkAllow: [] });
    expect((await api('GET', `/api/v1/execution-targets/${target.id}`)).body.docker).toMatchObject({ network: 'egress', networkAllow: [] });

    for (const [allow, message] of [
      [['10.0.0.1'], '`networkAllow`: 10.0.0.1 is an address; name a domain.'],
      [['Api.Example.com'], '`networkAllow`: Api.Example.com is not a domain name (lower case, * only as the first label).'],
      [['api.*.com'], '`networkAllow`: api.*.com is not a domain name (lower case, * only as the first label).'],
    ] as const) {
      const res = await api('POST', '/api/v1/execution-targets', { kind: 'docker', name: 'Bad', image: TEST_IMAGE, network: 'egress', networkAllow: allow });
      expect([res.status, res.body.error]).toEqual([400, { code: 'validation_failed', message }]);
      expect((await patch({ networkAllow: allow })).status).toBe(400);
    }
    expect((await api('POST', '/api/v1/execution-targets', { kind: 'docker', name: 'Bad', image: TEST_IMAGE, networkAllow: 'api.anthropic.com' })).status).toBe(400);
    const vm = await api('POST', '/api/v1/execution-targets', { kind: 'vmhost', name: 'VM', image: 'x', connectionId: 'vmc_x', networkAllow: ['api.anthropic.com'] });
    expect([vm.status, vm.body.error.message]).toEqual([400, '`networkAllow` is not a setting of vmhost targets.']);
  });

  it('are not offered by a server without a Docker host', async () => {
    const plain = await startTestApp();
    try {
      const owner = await createOwner(plain.database.db);
      const as = { authorization: `Bearer ${await accessToken(plain, owner)}` };
      const res = await call(plain, 'POST', '/api/v1/execution-targets', { headers: as, body: { kind: 'docker', name: 'No', image: TEST_IMAGE } });
      expect([res.status, res.body.error.message]).toEqual([400, expect.stringContaining('FLOWS_DOCKER_HOST')]);
    } finally {
      await plain.close();
    }
  });

  it('run a prompt that asks for the server\'s files in a container that has none of them, and leave no container behind', async () => {
    const target = await dockerTarget();
    const injection = `x; cat ${dataDir}/secret.key; echo PROJECT=$(cat ${process.cwd()}/package.json 2>&1 | head -c 40); echo ME=$(id -u); touch /etc/owned 2>&1 | head -c 0 || true; echo NET=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ,)`;
    const job = await api('POST', '/api/v1/jobs', { name: 'Triage', promptTemplate: 'echo Working on: {{ data.title }}', executionTargetId: target.id });
    const run = await finished((await api('POST', `/api/v1/jobs/${job.body.id}/invocations`, { data: { title: injection } })).body.runId);
    expect(run.state).toBe('succeeded');
    const output = (await outputOf(run.id)).join('\n');
    expect(output).toContain('Working on: x');
    expect(output).toContain(`can't open '${dataDir}/secret.key': No such file or directory`);
    expect(output).not.toContain('the-server-secret-key');
    expect(output).toContain('PROJECT=cat: can\'t open');
    expect(output).toContain('ME=1000');
    expect(output).toContain('NET=lo,');
    expect(await containersOfRuns()).toEqual([]);
  });

  it('continue an agent\'s session on the volume kept for its key, with what the trace says', async () => {
    const target = await dockerTarget({ image: await ensureAgentTestImage() });
    const job = await api('POST', '/api/v1/jobs', { name: 'Gemini in Docker', promptTemplate: 'Issue {{ data.issue }}', executionTargetId: target.id, agent: { kind: 'gemini', continue: { key: 'data.issue' } } });
    expect([job.status, job.body.error]).toEqual([201, undefined]);
    const invoke = async (issue: number) => finished((await api('POST', `/api/v1/jobs/${job.body.id}/invocations`, { data: { issue } })).body.runId);
    const sessionOf = async (runId: string) => ((await api('GET', `/api/v1/runs/${runId}/trace?limit=100`)).body as { type: string; data: any }[]).find((event) => event.type === 'session_started')!.data;
    const first = await invoke(5);
    expect(first).toMatchObject({ state: 'succeeded', result: { sessionId: expect.any(String) } });
    const again = await invoke(5);
    expect(again).toMatchObject({ state: 'succeeded', result: { sessionId: first.result.sessionId } });
    expect(await sessionOf(again.id)).toMatchObject({ agent: 'gemini', sessionId: first.result.sessionId, continuedFromRunId: first.id });
    const other = await invoke(6);
    expect(other.result.sessionId).not.toBe(first.result.sessionId);
    expect(await sessionOf(other.id)).not.toHaveProperty('continuedFromRunId');
    const volumes = (await docker.listVolumes({ filters: { label: [`flows.job=${job.body.id}`] } })).Volumes ?? [];
    expect(volumes.map((volume) => volume.Labels)).toEqual([
      { 'flows.session-state': expect.stringMatching(/^sess_/), 'flows.tenant': owner.tenantId, 'flows.job': job.body.id },
      { 'flows.session-state': expect.stringMatching(/^sess_/), 'flows.tenant': owner.tenantId, 'flows.job': job.body.id },
    ]);
    for (const volume of volumes) await docker.getVolume(volume.Name).remove();
    expect(await containersOfRuns()).toEqual([]);
  });

  it('with `network: egress` reach out only through the run\'s proxy: the host is out of reach, and the proxy\'s refusals are in the trace', async () => {
    const hostService = await httpStandIn('0.0.0.0', 'host service');
    try {
      const target = await dockerTarget({ network: 'egress' });
      const script = [
        'gw=${HTTP_PROXY#http://}; gw=${gw%:*}',
        `echo DIRECT=$(printf "GET / HTTP/1.0\\r\\n\\r\\n" | timeout 6 nc -w 4 "$gw" ${hostService.port} 2>/dev/null | grep -c "host service")`,
        'echo PROXIED=$(timeout 10 wget -q -O - http://169.254.169.254/latest/meta-data/ 2>&1 | head -n 1)',
      ].join('; ');
      const job = await api('POST', '/api/v1/jobs', { name: 'Reaching out', promptTemplate: script, executionTargetId: target.id });
      const run = await finished((await api('POST', `/api/v1/jobs/${job.body.id}/invocations`, {})).body.runId);
      expect(run.state).toBe('succeeded');
      const trace = (await api('GET', `/api/v1/runs/${run.id}/trace?limit=100`)).body as { type: string; data: any }[];
      const output = trace.filter((e) => e.type === 'agent_output').map((e) => e.data.text);
      expect(output).toEqual(['DIRECT=0', expect.stringMatching(/^PROXIED=.*403 Forbidden/)]);
      expect(trace.filter((e) => e.type === 'network_denied').map((e) => e.data)).toEqual([{ host: '169.254.169.254', port: 80, reason: 'the cloud metadata address (169.254.169.254)' }]);
      expect(trace.find((e) => e.type === 'target_provisioning' && e.data.status === 'container_started')?.data).toMatchObject({ network: 'public' });
      expect(await containersOfRuns()).toEqual([]);
    } finally {
      await hostService.close();
    }
  });

  it('give the container the job\'s secrets and mask them', async () => {
    await api('PUT', '/api/v1/secrets/REPO_TOKEN', { value: 'ghp_container_s3cret' });
    const target = await dockerTarget();
    const job = await api('POST', '/api/v1/jobs', { name: 'With a secret', promptTemplate: 'echo "token=$REPO_TOKEN"', executionTargetId: target.id, env: { REPO_TOKEN: { secret: 'REPO_TOKEN' } } });
    const run = await finished((await api('POST', `/api/v1/jobs/${job.body.id}/invocations`, {})).body.runId);
    expect(run).toMatchObject({ state: 'succeeded', result: { summary: 'token=***' } });
    expect(await outputOf(run.id)).toEqual(['token=***']);
  });

  it('stop a run: the container goes', async () => {
    const target = await dockerTarget();
    const job = await api('POST', '/api/v1/jobs', { name: 'Slow', promptTemplate: 'echo started; sleep 30', executionTargetId: target.id });
    const runId = (await api('POST', `/api/v1/jobs/${job.body.id}/invocations`, {})).body.runId;
    await finished(runId, ['running']);
    for (let i = 0; i < 200 && (await outputOf(runId)).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect((await api('POST', `/api/v1/runs/${runId}/stop`)).status).toBe(202);
    expect(await finished(runId)).toMatchObject({ state: 'canceled' });
    expect(await containersOfRuns()).toEqual([]);
  });

  it('are checked end to end by their diagnostics; a missing image stops the check there', async () => {
    const target = await dockerTarget();
    const good = await api('POST', `/api/v1/execution-targets/${target.id}/diagnostics`);
    expect(good.status).toBe(200);
    expect(good.body).toMatchObject({ targetId: target.id, ok: true });
    expect(good.body.steps.map((step: { step: string; ok: boolean }) => [step.step, step.ok])).toEqual([['daemon', true], ['image', true], ['run', true]]);
    const missing = await dockerTarget({ image: 'flows-test/missing:1' });
    const bad = (await api('POST', `/api/v1/execution-targets/${missing.id}/diagnostics`)).body;
    expect(bad.ok).toBe(false);
    expect(bad.steps.map((step: { step: string; ok: boolean }) => [step.step, step.ok])).toEqual([['daemon', true], ['image', false]]);
    expect((await api('POST', '/api/v1/execution-targets/tgt_nope/diagnostics')).status).toBe(404);
  });

  it('are created and checked from the console, the form sending only their own fields', async () => {
    const cookie = await sessionCookie(app, owner);
    const post = (route: string, form: Record<string, string> = {}) => request(app.app).post(route).set('cookie', cookie).set('origin', 'http://localhost:3000').type('form').send(form);
    const made = await post('/console/targets', { kind: 'docker', name: 'From the console', image: TEST_IMAGE, connectionId: '', size: 'ignored', region: '', command: 'sh', cpus: '0.5', memoryMb: '256', pids: '', network: 'none', timeoutSeconds: '' });
    expect(made.status).toBe(303);
    const targetId = /^\/console\/targets\/(tgt_\w+)$/.exec(made.headers.location)![1];
    expect((await api('GET', `/api/v1/execution-targets/${targetId}`)).body).toMatchObject({ kind: 'docker', size: '', docker: { command: 'sh', cpus: 0.5, memoryMb: 256, pids: 512 } });
    const checked = await post(`/console/targets/${targetId}/diagnostics`);
    expect(checked.status).toBe(200);
    expect(checked.text).toContain('Diagnostics: every step passed');
    for (const step of ['daemon', 'image', 'run']) expect(checked.text).toContain(`<code>${step}</code>`);
    // Emptying the command goes back to the image's own entrypoint.
    const page = await request(app.app).get(`/console/targets/${targetId}`).set('cookie', cookie);
    expect(page.text).not.toContain('name="region"');
    expect((await post(`/console/targets/${targetId}`, { name: 'From the console', image: TEST_IMAGE, command: '', cpus: '0.5', memoryMb: '256', pids: '512', network: 'egress', timeoutSeconds: '600' })).status).toBe(303);
    expect((await api('GET', `/api/v1/execution-targets/${targetId}`)).body).toMatchObject({ timeoutSeconds: 600, docker: { command: null, network: 'egress' } });
  });

  it('sweeps away containers that runs which are over left behind, and keeps those of runs still going', async () => {
    const target = await dockerTarget();
    const job = await api('POST', '/api/v1/jobs', { name: 'Leftovers', promptTemplate: 'true', executionTargetId: target.id });
    const over = await finished((await api('POST', `/api/v1/jobs/${job.body.id}/invocations`, {})).body.runId);
    const tenantId = (await app.database.db.run.findUniqueOrThrow({ where: { id: over.id } })).tenantId;
    // As a server killed between creating a container and recording it would leave it: one for a run that
    // is over, one for a run of another instance that is still active.
    const active = await app.database.db.run.create({ data: { id: 'run_elsewhere', tenantId, jobId: job.body.id, name: 'x', prompt: 'x', state: 'running', triggerType: 'invocation', inputs: {} } as never });
    const leftover = (runId: string) =>
      docker.createContainer({ Image: TEST_IMAGE, Cmd: ['true'], Labels: { [LABELS.run]: runId, [LABELS.tenant]: tenantId, [LABELS.instance]: 'inst_gone' } });
    const left = await leftover(over.id);
    const kept = await leftover(active.id);
    try {
      expect(await app.runner.sweepLeftovers()).toBe(1);
      expect((await containersOfRuns()).map((container) => container.Id)).toEqual([kept.id]);
    } finally {
      await left.remove({ force: true }).catch(() => {});
      await kept.remove({ force: true });
    }
  });
});

describe('a repository workspace in a container', () => {
  it('clones on the server, lets the container\'s agent change the files, and pushes the change as a pull request', async () => {
    const github = await startFakeGithub();
    try {
      github.addRepository('acme/widgets', { 'README.md': 'Widgets for evey team\n' });
      const created = await api('POST', '/api/v1/github-apps', { name: 'Flows test', appId: github.app.id, privateKey: github.app.privateKey, apiBaseUrl: github.apiBaseUrl });
      const target = await dockerTarget({ command: 'cat >/dev/null; pwd; sed -i s/evey/every/ README.md && echo "{\\"summary\\":\\"Fixed in a container.\\"}"' });
      const job = await api('POST', '/api/v1/jobs', { name: 'In a container', promptTemplate: 'fix', executionTargetId: target.id, workspace: { repository: 'acme/widgets', githubAppId: created.body.id } });
      expect(job.status).toBe(201);
      const run = await finished((await api('POST', `/api/v1/jobs/${job.body.id}/invocations`, {})).body.runId);
      expect(run.state).toBe('succeeded');
      expect(await outputOf(run.id)).toContain('/workspace/widgets');
      expect(run.artifacts).toMatchObject({ changed: true, pushed: true, diffStat: { files: 1, insertions: 1, deletions: 1 }, pullRequestUrl: `${github.url}/acme/widgets/pull/1` });
      expect(github.fileAt('acme/widgets', run.artifacts.branch, 'README.md')).toBe('Widgets for every team\n');
      for (const token of github.tokens.keys()) app.rememberSecret(token);
    } finally {
      await github.close();
    }
  });
});

