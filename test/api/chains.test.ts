// Run triggers chain jobs: a run reaching a listed state starts the watching jobs whose conditions hold
// on it, with the finished run as their context; a chain that would loop is refused when saved.
import { agentCommand } from '../support/agent';
import { startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner } from '../support/identity';
import { jobSettled } from '../support/kit';

let app: TestApp;
let bearer: Record<string, string>;

beforeAll(async () => {
  app = await startTestApp({ localAgent: { command: agentCommand(), timeoutSeconds: 60 }, rateLimits: { api: 0, apiAddress: 0 } });
  bearer = { authorization: `Bearer ${await accessToken(app, await createOwner(app.database.db))}` };
});
afterAll(() => app.close());

async function job(body: Record<string, unknown>) {
  const res = await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: { executionTargetId: 'local', ...body } });
  expect(res.status).toBe(201);
  return res.body as { id: string; slug: string };
}

const settledRuns = (jobId: string) => jobSettled(app, bearer, jobId);

it('starts the watching jobs whose states and conditions match, with the finished run as context', async () => {
  const first = await job({ name: 'Triage', promptTemplate: 'json please' });
  const onSuccess = await job({
    name: 'Follow up',
    promptTemplate: 'After {{ name }} ({{ state }}): {{ result.summary }} {{ result.pullRequestUrl }}',
    triggers: [{ type: 'run', id: 'trg_after', jobId: first.slug, states: ['succeeded'], conditions: { all: [{ path: 'result.pullRequestUrl', op: 'exists', value: true }] } }],
  });
  const onFailure = await job({ name: 'On failure', promptTemplate: 'x', triggers: [{ type: 'run', jobId: first.id, states: ['failed'] }] });
  const unmet = await job({ name: 'Unmet', promptTemplate: 'x', triggers: [{ type: 'run', jobId: first.id, states: ['succeeded'], conditions: { all: [{ path: 'result.summary', op: 'eq', value: 'something else' }] } }] });

  const invoked = await call(app, 'POST', `/api/v1/jobs/${first.id}/invocations`, { headers: bearer, body: {} });
  expect(invoked.status).toBe(202);
  expect((await settledRuns(first.id))[0].state).toBe('succeeded');
  const firstRun = invoked.body.runId;
  const chained = await settledRuns(onSuccess.id);
  expect(chained).toHaveLength(1);
  expect(chained[0]).toMatchObject({
    trigger: { type: 'run', id: 'trg_after', runId: firstRun },
    invocationId: null,
    prompt: 'After Triage (succeeded): done https://example.test/pr/1',
    state: 'succeeded',
  });
  expect(await settledRuns(onFailure.id)).toEqual([]);
  expect(await settledRuns(unmet.id)).toEqual([]);
});

const settledCount = (jobId: string, count: number) => jobSettled(app, bearer, jobId, count);

it('refuses a chain that loops, including a job watching itself', async () => {
  const a = await job({ name: 'A', promptTemplate: 'x' });
  const b = await job({ name: 'B', promptTemplate: 'x', triggers: [{ type: 'run', jobId: a.id, states: ['succeeded'] }] });
  const c = await job({ name: 'C', promptTemplate: 'x', triggers: [{ type: 'run', jobId: b.id, states: ['succeeded'] }] });
  for (const watched of [c.id, b.slug, a.id]) {
    const res = await call(app, 'PATCH', `/api/v1/jobs/${a.id}`, { headers: bearer, body: { triggers: [{ type: 'run', jobId: watched, states: ['failed'] }] } });
    expect([res.status, res.body.error.code]).toEqual([400, 'validation_failed']);
    expect(res.body.error.message).toMatch(/would chain jobs in a loop/);
  }
  // Replacing B's trigger is no loop: B's own old edge does not count.
  const ok = await call(app, 'PATCH', `/api/v1/jobs/${b.id}`, { headers: bearer, body: { triggers: [{ type: 'run', jobId: a.id, states: ['failed'] }] } });
  expect(ok.status).toBe(200);
  expect((await call(app, 'GET', `/api/v1/jobs/${a.id}`, { headers: bearer })).body.triggers).toEqual([]);
});

it('follows failed and canceled runs to the jobs watching those states, and an evaluation error starts nothing', async () => {
  const flaky = await job({ name: 'Flaky', promptTemplate: '{{ data.mode }}' });
  const onFailure = await job({ name: 'Report failure', promptTemplate: 'Failed: {{ error }}', triggers: [{ type: 'run', id: 'trg_failed', jobId: flaky.id, states: ['failed', 'timed_out'] }] });
  const onCancel = await job({ name: 'Clean up', promptTemplate: 'Canceled {{ name }}', triggers: [{ type: 'run', id: 'trg_canceled', jobId: flaky.id, states: ['canceled'] }] });
  const broken = await job({ name: 'Broken', promptTemplate: 'x', triggers: [{ type: 'run', jobId: flaky.id, states: ['failed', 'canceled'], conditions: { if: 'result.missing.deeper == 1.0' } }] });

  const invoke = async (mode: string) => (await call(app, 'POST', `/api/v1/jobs/${flaky.id}/invocations`, { headers: bearer, body: { data: { mode } } })).body.runId as string;
  await invoke('fail');
  expect((await settledRuns(flaky.id)).map((run) => run.state)).toEqual(['failed']);
  const reported = await settledCount(onFailure.id, 1);
  expect(reported).toHaveLength(1);
  expect(reported[0]).toMatchObject({ trigger: { type: 'run', id: 'trg_failed' }, prompt: expect.stringMatching(/^Failed: .*bad things happened/) });
  expect(await settledRuns(onCancel.id)).toEqual([]);

  const sleeping = await invoke('sleep');
  for (let i = 0; i < 200 && (await call(app, 'GET', `/api/v1/runs/${sleeping}`, { headers: bearer })).body.state !== 'running'; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect((await call(app, 'POST', `/api/v1/runs/${sleeping}/stop`, { headers: bearer })).status).toBe(202);
  const cleaned = await settledCount(onCancel.id, 1);
  expect(cleaned).toHaveLength(1);
  expect(cleaned[0]).toMatchObject({ trigger: { type: 'run', id: 'trg_canceled' }, prompt: expect.stringMatching(/^Canceled /) });
  expect(await settledRuns(onFailure.id)).toHaveLength(1);
  expect(await settledRuns(broken.id)).toEqual([]);
  // Its conditions were looked at and failed to evaluate (fail closed), once for each finished run.
  expect(app.logLines.filter((line) => line.includes('run trigger conditions could not be evaluated'))).toHaveLength(2);
});
