// Runs on VM-host targets against a fake VM host and a fake agent provider (real HTTP on loopback):
// the VM is destroyed on every path (success, agent failure, failed or slow boot, provider errors,
// timeout, stop, and after a crash); diagnostics report each step; no token ever comes back.
import { INTERRUPTED } from '../../src/runs/engine/lifecycle';
import { startTestApp, type TestApp } from '../support/app';
import { AGENT_TOKEN, startFakeProviders, VMHOST_TOKEN, type FakeProviders } from '../support/fake-providers';
import { call } from '../support/http';
import { accessToken, createOwner } from '../support/identity';
import { runSettled } from '../support/kit';

let app: TestApp;
let providers: FakeProviders;
let bearer: Record<string, string>;
let connectionId: string;
let targetId: string;
const answers: string[] = [];

async function api(method: string, path: string, body?: unknown, headers = bearer) {
  const res = await call(app, method, path, { headers, body });
  answers.push(res.text ?? '');
  return res;
}

beforeAll(async () => {
  providers = await startFakeProviders();
  app = await startTestApp({ rateLimits: { api: 0, apiAddress: 0 } }, { vmhostTiming: { bootTimeoutMs: 2000, pollMs: 10, callTimeoutMs: 1500 } });
  const owner = await createOwner(app.database.db);
  bearer = { authorization: `Bearer ${await accessToken(app, owner)}` };
  connectionId = (await api('POST', '/api/v1/vmhost-connections', { name: 'Fake host', apiToken: VMHOST_TOKEN, apiBaseUrl: providers.url })).body.id;
  targetId = (await api('POST', '/api/v1/execution-targets', { name: 'Fake VM', connectionId, image: 'agent-runner', size: 'small' })).body.id;
  await api('PUT', '/api/v1/integrations/agent-integration', { accessToken: AGENT_TOKEN, project: 'acme', connectionId, apiBaseUrl: providers.url });
});
afterAll(async () => {
  await app.close();
  await providers.close();
});
afterEach(() => providers.reset());

async function runOnVm(promptTemplate = 'Fix issue 7', extra: Record<string, unknown> = {}) {
  const job = (await api('POST', '/api/v1/jobs', { name: 'On a VM', promptTemplate, executionTargetId: targetId, model: 'large', ...extra })).body;
  return (await api('POST', `/api/v1/jobs/${job.id}/invocations`, {})).body.runId as string;
}

const finished = (runId: string) => runSettled(app, bearer, runId);

const traceOf = async (runId: string) => (await api('GET', `/api/v1/runs/${runId}/trace?limit=100`)).body as { type: string; data: any }[];
const allDestroyed = () => [...providers.vms.values()].every((vm) => vm.destroyed);

it('runs the agent on a disposable VM, follows its output, and destroys the VM', async () => {
  const runId = await runOnVm();
  const run = await finished(runId);
  expect(run).toMatchObject({ state: 'succeeded', result: { summary: 'Fixed it', pullRequestUrl: 'https://example.test/pr/7' } });
  const trace = await traceOf(runId);
  expect(trace.filter((e) => e.type === 'agent_output').map((e) => e.data)).toEqual([
    { stream: 'stdout', text: 'cloning acme/widgets' },
    { stream: 'stderr', text: 'warning: shallow clone' },
  ]);
  expect(trace.filter((e) => e.type === 'target_provisioning').map((e) => e.data.status)).toEqual(['vm_requested', 'vm_ready', 'vm_destroyed']);
  const [sessionRow] = [...providers.sessions.values()].slice(-1);
  expect(sessionRow).toMatchObject({ prompt: 'Fix issue 7', model: 'large' });
  expect(allDestroyed()).toBe(true);
});

it("does not start a job whose network allowlist a VM cannot hold to: no VM is booted", async () => {
  const before = providers.vms.size;
  const run = await finished(await runOnVm('Fix issue 7', { network: { allow: ['api.anthropic.com'] } }));
  expect(run).toMatchObject({ state: 'failed', error: "The job sets a network allowlist, which a vmhost target cannot enforce: run it on a local or docker target, or remove the job's network." });
  expect(providers.vms.size).toBe(before);
});

it.each([
  ['the agent fails', () => (providers.knobs.end = { state: 'failed', error: 'tests do not pass' }), 'The agent failed: tests do not pass'],
  ['the VM fails to boot', () => (providers.knobs.bootPolls = 'failed'), 'The run failed on the VM host: the VM failed to boot.'],
  ['the VM is lost while booting', () => (providers.knobs.lost = true), 'The run failed on the VM host: reading the VM: the provider answered 404.'],
  ['the VM boots too slowly', () => (providers.knobs.bootPolls = 1000), 'The run failed on the VM host: the VM did not boot within 2 seconds.'],
])('fails when %s, and destroys the VM', async (_, inject, error) => {
  inject();
  const run = await finished(await runOnVm());
  expect(run).toMatchObject({ state: 'failed', error });
  expect(allDestroyed()).toBe(true);
});

it.each([
  ['reading the VM answers 502 twice', { read: { with: 502, times: 2 } }, ['read', 'read']],
  ['reading the agent output answers 503 twice', { output: { with: 503, times: 2 } }, ['output', 'output']],
  ['reading the agent output answers 429 once', { output: { with: 429, times: 1 } }, ['output']],
  ['reading the agent output goes unanswered once', { output: { with: 'hang', times: 1 } }, ['output']],
] as const)('rides out a passing provider failure (%s), and destroys the VM', async (_, fail, failed) => {
  providers.knobs.fail = structuredClone(fail) as typeof providers.knobs.fail;
  const run = await finished(await runOnVm());
  expect(run).toMatchObject({ state: 'succeeded', result: { summary: 'Fixed it' } });
  expect(providers.failed).toEqual(failed);
  expect(allDestroyed()).toBe(true);
});

it.each([
  ['reading the agent output keeps answering 502', { output: { with: 502 } }, 'The run failed on the VM host: reading the agent output: the provider answered 502.'],
  ['reading the VM is never answered', { read: { with: 'hang' } }, 'The run failed on the VM host: reading the VM: no answer (timed out).'],
  ['the agent output is not JSON', { output: { with: 'not-json' } }, 'The run failed on the VM host: reading the agent output: unexpected answer.'],
  ['starting the agent answers 500', { start: { with: 500 } }, 'The run failed on the VM host: starting the agent: the provider answered 500.'],
  ['creating the VM is never answered', { create: { with: 'hang' } }, 'The VM could not be created: booting a VM: no answer (timed out).'],
] as const)('fails clearly when %s, and destroys any VM it booted', async (_, fail, error) => {
  providers.knobs.fail = structuredClone(fail) as typeof providers.knobs.fail;
  const run = await finished(await runOnVm());
  expect(run).toMatchObject({ state: 'failed', error });
  expect(allDestroyed()).toBe(true);
});

it('tries destroying a VM again when the host fails, and records a VM it could not destroy', async () => {
  providers.knobs.fail = { destroy: { with: 503, times: 1 } };
  const once = await runOnVm();
  expect((await finished(once)).state).toBe('succeeded');
  expect(providers.failed).toEqual(['destroy']);
  expect((await traceOf(once)).filter((e) => e.type === 'target_provisioning').map((e) => e.data.status)).toEqual(['vm_requested', 'vm_ready', 'vm_destroyed']);
  expect(allDestroyed()).toBe(true);

  providers.knobs.fail = { destroy: { with: 500 } };
  const never = await runOnVm();
  expect((await finished(never)).state).toBe('succeeded');
  const provisioning = (await traceOf(never)).filter((e) => e.type === 'target_provisioning').map((e) => e.data);
  expect(provisioning.at(-1)).toMatchObject({ status: 'vm_destroy_failed', detail: 'destroying the VM: the provider answered 500' });
  expect(providers.failed.filter((call) => call === 'destroy')).toHaveLength(1 + 3);
  expect([...providers.vms.values()].filter((vm) => !vm.destroyed)).toHaveLength(1);
  // What an operator does with a VM reported as not destroyed, so that the next tests start clean.
  for (const vm of providers.vms.values()) vm.destroyed = true;
});

it('fails clearly when the VM host refuses connections', async () => {
  const dead = (await api('POST', '/api/v1/vmhost-connections', { name: 'Gone host', apiToken: VMHOST_TOKEN, apiBaseUrl: 'http://127.0.0.1:9' })).body.id;
  const target = (await api('POST', '/api/v1/execution-targets', { name: 'Gone VM', connectionId: dead, image: 'agent-runner' })).body.id;
  const job = (await api('POST', '/api/v1/jobs', { name: 'On a gone host', promptTemplate: 'x', executionTargetId: target })).body;
  const run = await finished((await api('POST', `/api/v1/jobs/${job.id}/invocations`, {})).body.runId);
  expect(run).toMatchObject({ state: 'failed', error: 'The VM could not be created: booting a VM: no answer (connection failed).' });
});

it('blanks out the agent token where a provider echoes it, in agent output, errors and results', async () => {
  providers.knobs.output = [{ stream: 'stdout', text: `env: AGENT_TOKEN=${AGENT_TOKEN}` }];
  providers.knobs.end = { state: 'failed', error: `401 for ${AGENT_TOKEN}` };
  const runId = await runOnVm();
  expect(await finished(runId)).toMatchObject({ state: 'failed', error: 'The agent failed: 401 for [redacted]' });
  expect((await traceOf(runId)).filter((e) => e.type === 'agent_output').map((e) => e.data.text)).toEqual(['env: AGENT_TOKEN=[redacted]']);
  providers.knobs.end = { state: 'succeeded', result: { summary: `pushed with ${AGENT_TOKEN}`, [AGENT_TOKEN]: 1 } };
  expect(await finished(await runOnVm())).toMatchObject({ state: 'succeeded', result: { summary: 'pushed with [redacted]', '[redacted]': 1 } });
});

it('fails clearly when the host refuses to create a VM', async () => {
  providers.knobs.createStatus = 503;
  const run = await finished(await runOnVm());
  expect(run).toMatchObject({ state: 'failed', error: 'The VM could not be created: booting a VM: the provider answered 503.' });
});

it('stops a running agent, and times out a hanging one, destroying the VM both times', async () => {
  providers.knobs.end = 'hang';
  const stopped = await runOnVm();
  for (let i = 0; i < 200 && (await api('GET', `/api/v1/runs/${stopped}`)).body.state !== 'running'; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  await api('POST', `/api/v1/runs/${stopped}/stop`);
  expect((await finished(stopped)).state).toBe('canceled');
  expect([...providers.sessions.values()].at(-1)!.canceled).toBe(true);
  expect(allDestroyed()).toBe(true);

  // Targets take at least 60 s through the API; the test shortens this one in the database.
  await app.database.db.executionTarget.updateMany({ where: { id: targetId }, data: { timeoutSeconds: 1 } });
  try {
    const timedOut = await finished(await runOnVm());
    expect(timedOut).toMatchObject({ state: 'timed_out', error: 'The run was still going after 1 seconds.' });
    expect(allDestroyed()).toBe(true);
  } finally {
    await app.database.db.executionTarget.updateMany({ where: { id: targetId }, data: { timeoutSeconds: 3600 } });
  }
});

it('destroys the VM of a run left active by a crash when the next process starts', async () => {
  providers.knobs.end = 'hang';
  const runId = await runOnVm();
  const running = async () => (await app.database.db.run.findUniqueOrThrow({ where: { id: runId } })).state === 'running';
  for (let i = 0; i < 300 && !(await running()); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  const { executorRef } = await app.database.db.run.findUniqueOrThrow({ where: { id: runId } });
  const vmId = executorRef!.split(':').at(-1)!;
  expect(providers.vms.get(vmId)!.destroyed).toBe(false);
  // What the other instances find after this run's instance crashed: the run still `running`, its VM
  // alive, and its owner beating no more.
  await app.database.db.run.update({ where: { id: runId }, data: { ownerId: 'inst_crashed' } });
  await app.runner.recover();
  expect(providers.vms.get(vmId)!.destroyed).toBe(true);
  const run = await finished(runId);
  expect(run).toMatchObject({ state: 'failed', error: INTERRUPTED });
});

describe('diagnostics', () => {
  const diagnose = async () => (await api('POST', `/api/v1/integrations/vmhost/${connectionId}/diagnostics`)).body;

  it('passes every step and records the verification', async () => {
    const result = await diagnose();
    expect(result).toMatchObject({ connectionId, ok: true });
    expect(result.steps.map((s: any) => [s.step, s.ok])).toEqual([
      ['token_permissions', true],
      ['vm_boot', true],
      ['agent_model_reachability', true],
      ['vm_destroy', true],
    ]);
    expect(result.steps[2].detail).toBe('The agent reached its model (large-model-1).');
    expect((await api('GET', `/api/v1/vmhost-connections/${connectionId}`)).body.lastVerifiedAt).not.toBeNull();
    expect(allDestroyed()).toBe(true);
  });

  it('ends at the first failed step, and destroys a booted VM all the same', async () => {
    providers.knobs.permissions = ['vms:read'];
    let result = await diagnose();
    expect(result.steps.map((s: any) => [s.step, s.ok, s.detail])).toEqual([['token_permissions', false, 'the token lacks vms:create, vms:delete']]);
    providers.reset();

    providers.knobs.probeOk = false;
    result = await diagnose();
    expect(result.ok).toBe(false);
    expect(result.steps.map((s: any) => [s.step, s.ok])).toEqual([
      ['token_permissions', true],
      ['vm_boot', true],
      ['agent_model_reachability', false],
      ['vm_destroy', true],
    ]);
    expect(result.steps[2].detail).toBe('the agent did not reach its model: model quota exhausted');
    providers.reset();

    providers.knobs.fail = { probe: { with: 502 } };
    result = await diagnose();
    expect(result.steps.map((s: any) => [s.step, s.ok, s.detail])).toEqual([
      ['token_permissions', true, expect.any(String)],
      ['vm_boot', true, expect.any(String)],
      ['agent_model_reachability', false, 'probing the model: the provider answered 502'],
      ['vm_destroy', true, expect.any(String)],
    ]);
    providers.reset();

    const vmsBefore = providers.vms.size;
    providers.knobs.fail = { token: { with: 'hang' } };
    result = await diagnose();
    expect(result.steps.map((s: any) => [s.step, s.ok, s.detail])).toEqual([['token_permissions', false, 'checking the token: no answer (timed out)']]);
    expect(providers.vms.size).toBe(vmsBefore);
    providers.reset();

    providers.knobs.bootPolls = 'failed';
    result = await diagnose();
    expect(result.steps.map((s: any) => [s.step, s.ok])).toEqual([
      ['token_permissions', true],
      ['vm_boot', false],
      ['vm_destroy', true],
    ]);
    expect(allDestroyed()).toBe(true);
  });

  it('is the tenant\'s own', async () => {
    const stranger = { authorization: `Bearer ${await accessToken(app, await createOwner(app.database.db, { tenantName: 'Other' }))}` };
    // The owner's diagnostics verify the connection; a stranger's probe must neither boot a VM nor re-verify it.
    expect((await diagnose()).ok).toBe(true);
    const verifiedAt = (await app.database.db.vmhostConnection.findUniqueOrThrow({ where: { id: connectionId } })).lastVerifiedAt;
    expect(verifiedAt).not.toBeNull();
    const vmsBefore = providers.vms.size;
    const res = await api('POST', `/api/v1/integrations/vmhost/${connectionId}/diagnostics`, undefined, stranger);
    expect([res.status, res.body.error.code]).toEqual([404, 'not_found']);
    expect(providers.vms.size).toBe(vmsBefore);
    expect((await app.database.db.vmhostConnection.findUniqueOrThrow({ where: { id: connectionId } })).lastVerifiedAt).toEqual(verifiedAt);
  });

  it('survives a stranger\'s change or delete of the connection and its target, and still boots with the owner\'s token', async () => {
    const stranger = { authorization: `Bearer ${await accessToken(app, await createOwner(app.database.db, { tenantName: 'Other' }))}` };
    const rows = async () => ({
      connection: await app.database.db.vmhostConnection.findUniqueOrThrow({ where: { id: connectionId } }),
      target: await app.database.db.executionTarget.findUniqueOrThrow({ where: { id: targetId } }),
    });
    const before = await rows();
    for (const [method, path, body] of [
      ['PATCH', `/api/v1/vmhost-connections/${connectionId}`, { name: 'Taken', apiBaseUrl: 'https://attacker.example', apiToken: 'attacker-token' }],
      ['DELETE', `/api/v1/vmhost-connections/${connectionId}`],
      ['PATCH', `/api/v1/execution-targets/${targetId}`, { name: 'Taken', image: 'attacker-image' }],
      ['DELETE', `/api/v1/execution-targets/${targetId}`],
    ] as const) {
      const res = await api(method, path, body, stranger);
      expect([method, path, res.status, res.body.error?.code]).toEqual([method, path, 404, 'not_found']);
    }
    expect(await rows()).toEqual(before);
    // The token, base URL and image still work: the owner's diagnostics pass and boot the owner's image.
    const vmsBefore = providers.vms.size;
    const result = await diagnose();
    expect(result.ok).toBe(true);
    expect([...providers.vms.values()].slice(vmsBefore).map((vm) => vm.image)).toEqual(['agent-runner']);
    expect(allDestroyed()).toBe(true);
  });
});

it('never answers a provider token, in responses, traces or log lines', async () => {
  const traces = await app.database.db.runEvent.findMany();
  expect(app.logLines.length).toBeGreaterThan(50);
  const all = answers.join('\n') + JSON.stringify(traces) + app.logLines.join('\n');
  for (const token of [VMHOST_TOKEN, AGENT_TOKEN]) expect(all).not.toContain(token);
});

it('refuses a diagnostics request that carries a body other than JSON', async () => {
  const res = await call(app, 'POST', `/api/v1/integrations/vmhost/${connectionId}/diagnostics`, { headers: { ...bearer, 'content-type': 'text/plain' }, raw: 'probe please' });
  expect([res.status, res.body.error.code]).toEqual([415, 'unsupported_media_type']);
});

it('takes a signed delivery through to a run on a VM and a signed event at a receiver', async () => {
  const { createServer } = await import('node:http');
  const { createHmac, randomUUID } = await import('node:crypto');
  const { Webhook } = await import('standardwebhooks');
  const request = (await import('supertest')).default;
  const bodies: { headers: Record<string, string>; body: string }[] = [];
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      bodies.push({ headers: req.headers as Record<string, string>, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  try {
    const port = (receiver.address() as import('node:net').AddressInfo).port;
    const subscription = (await api('POST', '/api/v1/event-subscriptions', { url: `http://127.0.0.1:${port}/`, events: ['run.succeeded'] })).body;
    const source = (await call(app, 'POST', '/api/v1/webhook-sources', { headers: bearer, body: { name: 'gh', format: 'github' } })).body;
    const job = (await api('POST', '/api/v1/jobs', { name: 'Labelled on a VM', executionTargetId: targetId, promptTemplate: 'Fix #{{ payload.issue.number }}', triggers: [{ type: 'webhook', sourceId: source.id, events: ['issues.labeled'] }] })).body;
    const delivery = JSON.stringify({ action: 'labeled', issue: { number: 9 } });
    const signature = createHmac('sha256', source.signingSecret).update(delivery).digest('hex');
    const intake = await request(app.app).post(`/hooks/${source.id}`).set({ 'content-type': 'application/json', 'x-github-event': 'issues', 'x-github-delivery': randomUUID(), 'x-hub-signature-256': `sha256=${signature}` }).send(delivery);
    expect(intake.status).toBe(202);

    let activity: any;
    for (let i = 0; i < 200 && !activity?.runIds.length; i++) {
      activity = (await api('GET', `/api/v1/webhook-activity/${intake.body.activityId}`)).body;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const run = await finished(activity.runIds[0]);
    expect(run).toMatchObject({ jobId: job.id, state: 'succeeded', prompt: 'Fix #9', trigger: { type: 'webhook' } });
    for (let i = 0; i < 200 && bodies.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    const event = new Webhook(subscription.signingSecret).verify(bodies[0].body, bodies[0].headers) as { type: string; data: { id: string } };
    expect([event.type, event.data.id]).toEqual(['run.succeeded', run.id]);
    expect(allDestroyed()).toBe(true);
  } finally {
    receiver.close();
  }
});
