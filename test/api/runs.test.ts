// Invocations and the life of a run through the local executor with a real agent script: success,
// failure, timeout, stop while queued and while running, replay, idempotency under parallel repeats,
// the concurrency limit under load, and reading runs and traces (also across tenants: never).
import { startOtherInstance, startTestApp, type TestApp } from '../support/app';
import { agentCommand, processesOf } from '../support/agent';
import { BASE_URL } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner, sessionCookie, type TestOwner } from '../support/identity';
import { runSettled, TERMINAL } from '../support/kit';

let app: TestApp;
let owner: TestOwner;
let bearer: Record<string, string>;
let session: Record<string, string>;

beforeAll(async () => {
  // Polling runs takes more requests than the default rate limit allows.
  app = await startTestApp({ localAgent: { command: agentCommand(), timeoutSeconds: 60 }, rateLimits: { api: 0, apiAddress: 0 } });
  owner = await createOwner(app.database.db);
  bearer = { authorization: `Bearer ${await accessToken(app, owner, { scopes: ['flows:read', 'flows:write', 'runs:read', 'runs:write'] })}` };
  session = { cookie: await sessionCookie(app, owner), origin: BASE_URL };
});
afterAll(() => app.close());

async function createJob(extra: Record<string, unknown> = {}, headers = bearer, on = app) {
  const res = await call(on, 'POST', '/api/v1/jobs', { headers, body: { name: 'Agent job', promptTemplate: 'Hello {% if data.who %}{{ data.who }}{% else %}world{% endif %}', executionTargetId: 'local', ...extra } });
  expect(res.status).toBe(201);
  return res.body;
}

const invoke = (jobId: string, body: Record<string, unknown> = {}, headers = bearer, on = app) => call(on, 'POST', `/api/v1/jobs/${jobId}/invocations`, { headers, body });
const getRun = async (runId: string, on = app, headers = bearer) => (await call(on, 'GET', `/api/v1/runs/${runId}`, { headers })).body;

const waitFor = (runId: string, states: string[] = TERMINAL, on: Parameters<typeof runSettled>[0] = app, headers = bearer) => runSettled(on, headers, runId, states);

async function traceOf(runId: string, on = app) {
  const res = await call(on, 'GET', `/api/v1/runs/${runId}/trace?limit=100`, { headers: bearer });
  expect(res.status).toBe(200);
  return res.body as { seq: number; type: string; data: any }[];
}

describe('a run through the local executor', () => {
  it('succeeds: prompt on stdin, run variables in the environment and nothing else of the server, output in the trace', async () => {
    const job = await createJob({ slug: 'echo', model: 'large', effort: 'high', runNameTemplate: 'For {{ data.who }}' });
    const res = await invoke(job.slug, { data: { who: 'Ada' } });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ invocationId: expect.stringMatching(/^inv_/), runId: expect.stringMatching(/^run_/), state: 'queued', duplicate: false });

    const run = await waitFor(res.body.runId);
    expect(run).toMatchObject({ state: 'succeeded', jobId: job.id, invocationId: res.body.invocationId, name: 'For Ada', prompt: 'Hello Ada', trigger: { type: 'invocation', id: null }, error: null, replayOf: null });
    expect(run.startedAt).not.toBeNull();
    expect(run.finishedAt).not.toBeNull();
    expect(run.result).toEqual({ summary: 'prompt=Hello Ada' });

    const trace = await traceOf(run.id);
    expect(trace.map((event) => event.seq)).toEqual(trace.map((_, i) => i + 1));
    const changes = trace.filter((event) => event.type === 'state_changed').map((event) => `${event.data.from}→${event.data.to}`);
    expect(changes).toEqual(['queued→starting', 'starting→running', 'running→succeeded']);
    expect(trace[0]).toMatchObject({ type: 'prompt_rendered', data: { name: 'For Ada', promptLength: 9 } });
    expect(trace.find((event) => event.type === 'target_provisioning')?.data).toMatchObject({ targetId: 'local' });
    const output = trace.filter((event) => event.type === 'agent_output').map((event) => event.data.text);
    expect(output[0]).toBe(`slug=echo model=large effort=high run=${run.id}`);
    // The environment holds the run variables and the basics of a shell, never the server's configuration.
    const names = output[1].trim().split(' ');
    expect(names.filter((name: string) => name.startsWith('FLOWS_')).sort()).toEqual(['FLOWS_EFFORT', 'FLOWS_JOB_SLUG', 'FLOWS_MODEL', 'FLOWS_RUN_ID']);
    expect(names).not.toContain('DATABASE_URL');
    expect(names).not.toContain('TEST_DATABASE_URL');
    expect(output[2]).toBe('dir=/workspace');
    expect(trace.find((event) => event.type === 'result')?.data).toEqual({ summary: 'prompt=Hello Ada' });
  });

  it('takes a JSON object on the last line as the structured result', async () => {
    const job = await createJob({ promptTemplate: 'json please' });
    const run = await waitFor((await invoke(job.id)).body.runId);
    expect(run.result).toEqual({ summary: 'done', pullRequestUrl: 'https://example.test/pr/1' });
  });

  it('fails on a non-zero exit, with the last error line', async () => {
    const job = await createJob({ promptTemplate: 'fail now' });
    const run = await waitFor((await invoke(job.id)).body.runId);
    expect(run).toMatchObject({ state: 'failed', result: null, error: 'The agent exited with code 3: bad things happened' });
    const trace = await traceOf(run.id);
    // Two pipes: nothing orders stdout against stderr.
    const output = trace.filter((event) => event.type === 'agent_output').map((event) => event.data);
    expect(output).toHaveLength(2);
    expect(output).toEqual(expect.arrayContaining([
      { stream: 'stdout', text: 'working' },
      { stream: 'stderr', text: 'bad things happened' },
    ]));
  });

  it('times out after the target timeout, and the agent is gone', async () => {
    const quick = await startTestApp({ localAgent: { command: agentCommand(), timeoutSeconds: 1 } });
    try {
      const other = await createOwner(quick.database.db);
      const headers = { authorization: `Bearer ${await accessToken(quick, other, { scopes: ['flows:write', 'runs:read', 'runs:write'] })}` };
      const created = await call(quick, 'POST', '/api/v1/jobs', { headers, body: { name: 'Slow', promptTemplate: 'sleep', executionTargetId: 'local' } });
      const res = await call(quick, 'POST', `/api/v1/jobs/${created.body.id}/invocations`, { headers, body: {} });
      const run = await waitFor(res.body.runId, TERMINAL, quick, headers);
      expect(run).toMatchObject({ state: 'timed_out', error: 'The agent was still running after 1 seconds.' });
      expect(processesOf(run.id)).toEqual([]);
    } finally {
      await quick.close();
    }
  });

  it('fails with a clear error when the job has no usable target', async () => {
    const bare = await startTestApp();
    try {
      const other = await createOwner(bare.database.db);
      const headers = { authorization: `Bearer ${await accessToken(bare, other, { scopes: ['flows:write', 'runs:read', 'runs:write'] })}` };
      const created = await call(bare, 'POST', '/api/v1/jobs', { headers, body: { name: 'Nowhere', promptTemplate: 'x' } });
      const res = await call(bare, 'POST', `/api/v1/jobs/${created.body.id}/invocations`, { headers, body: {} });
      const run = await waitFor(res.body.runId, TERMINAL, bare, headers);
      expect(run).toMatchObject({
        state: 'failed',
        error: 'The run has no execution target: the job names no `executionTargetId` and this server has no default target (the operator must set FLOWS_LOCAL_AGENT_COMMAND and restart the server to offer the `local` target); name one of GET /api/v1/execution-targets.',
      });
    } finally {
      await bare.close();
    }
  });

  it('fails saying what the operator must set when the job names `local` and the server that runs it has no local agent any more', async () => {
    // Saved while the server had one; started by a server on the same database without it (restarted so, or another instance).
    const job = await createJob({ promptTemplate: 'x', executionTargetId: 'local' });
    const bare = await startOtherInstance(app, { config: { localAgent: null } });
    try {
      const res = await invoke(job.id, {}, bearer, bare as unknown as TestApp);
      const run = await waitFor(res.body.runId, TERMINAL, bare);
      expect(run).toMatchObject({
        state: 'failed',
        error: 'The run has no execution target: `executionTargetId` "local" is not available: this server has no local agent (the operator must set FLOWS_LOCAL_AGENT_COMMAND and restart the server to offer the `local` target).',
      });
    } finally {
      await bare.close();
    }
  });
});

describe('stopping', () => {
  it('stops a running run: canceling, then canceled, with its processes killed', async () => {
    const job = await createJob({ promptTemplate: 'sleep' });
    const { runId } = (await invoke(job.id)).body;
    await waitFor(runId, ['running']);
    for (let i = 0; i < 100 && processesOf(runId).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(processesOf(runId).length).toBeGreaterThan(0);

    const res = await call(app, 'POST', `/api/v1/runs/${runId}/stop`, { headers: bearer });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ id: runId, state: 'canceling' });
    const run = await waitFor(runId);
    expect(run).toMatchObject({ state: 'canceled', error: 'The run was stopped.' });
    expect(processesOf(runId)).toEqual([]);

    const again = await call(app, 'POST', `/api/v1/runs/${runId}/stop`, { headers: bearer });
    expect([again.status, again.body.error.code]).toEqual([409, 'run_not_stoppable']);
  });

  it('stops a queued run without starting it; the running one goes on', async () => {
    const job = await createJob({ promptTemplate: 'sleep' });
    const first = (await invoke(job.id)).body.runId;
    const second = (await invoke(job.id)).body.runId;
    await waitFor(first, ['running']);
    expect((await getRun(second)).state).toBe('queued');

    expect((await call(app, 'POST', `/api/v1/runs/${second}/stop`, { headers: bearer })).status).toBe(202);
    expect(await waitFor(second)).toMatchObject({ state: 'canceled', startedAt: null });
    expect((await getRun(first)).state).toBe('running');
    const changes = (await traceOf(second)).filter((event) => event.type === 'state_changed').map((event) => `${event.data.from}→${event.data.to}`);
    expect(changes).toEqual(['queued→canceling', 'canceling→canceled']);

    await call(app, 'POST', `/api/v1/runs/${first}/stop`, { headers: bearer });
    expect((await waitFor(first)).state).toBe('canceled');
  });

  it('cancels the queued and active runs of a deleted job; its finished runs stay readable', async () => {
    const job = await createJob({ promptTemplate: '{% if data.slow %}sleep{% else %}quick{% endif %}' });
    const done = (await invoke(job.id)).body.runId;
    await waitFor(done);
    const active = (await invoke(job.id, { data: { slow: true } })).body.runId;
    const queued = (await invoke(job.id, { data: { slow: true } })).body.runId;
    await waitFor(active, ['running']);
    expect((await call(app, 'DELETE', `/api/v1/jobs/${job.id}`, { headers: bearer })).status).toBe(204);
    expect((await waitFor(active)).state).toBe('canceled');
    expect((await waitFor(queued)).state).toBe('canceled');
    expect((await getRun(done)).state).toBe('succeeded');
    const listed = await call(app, 'GET', `/api/v1/runs?jobId=${job.id}`, { headers: bearer });
    expect(listed.body.map((run: { id: string }) => run.id)).toEqual([queued, active, done]);
  });
});

describe('replay', () => {
  it('needs the owner session, a finished run, and makes a new run from the recorded inputs', async () => {
    const job = await createJob();
    const original = await waitFor((await invoke(job.id, { data: { who: 'Grace' }, name: 'Named by hand' })).body.runId);

    const refused = await call(app, 'POST', `/api/v1/runs/${original.id}/replay`, { headers: bearer });
    expect([refused.status, refused.body.error.code]).toEqual([403, 'owner_session_required']);

    // The template changes; the replay keeps the recorded prompt and name.
    await call(app, 'PATCH', `/api/v1/jobs/${job.id}`, { headers: bearer, body: { promptTemplate: 'Changed' } });
    const res = await call(app, 'POST', `/api/v1/runs/${original.id}/replay`, { headers: session });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ state: 'queued', duplicate: false });
    const replayed = await waitFor(res.body.runId);
    expect(replayed).toMatchObject({ state: 'succeeded', replayOf: original.id, prompt: 'Hello Grace', name: 'Named by hand', invocationId: res.body.invocationId });

    const slow = await createJob({ promptTemplate: 'sleep' });
    const running = (await invoke(slow.id)).body.runId;
    const early = await call(app, 'POST', `/api/v1/runs/${running}/replay`, { headers: session });
    expect([early.status, early.body.error.code]).toEqual([409, 'run_not_finished']);
    await call(app, 'POST', `/api/v1/runs/${running}/stop`, { headers: bearer });
    await waitFor(running);
  });
});

describe('invocations', () => {
  it('answers a repeat of the same key and body with the first invocation, and refuses the key with another body', async () => {
    const job = await createJob();
    const body = { data: { who: 'Linus' }, idempotencyKey: 'key-1' };
    const first = await invoke(job.id, body);
    expect(first.status).toBe(202);
    // Key order does not make another body.
    const repeat = await invoke(job.id, { idempotencyKey: 'key-1', data: { who: 'Linus' } });
    expect(repeat.status).toBe(200);
    expect(repeat.body).toEqual({ ...first.body, state: expect.any(String), duplicate: true });
    const other = await invoke(job.id, { ...body, data: { who: 'Someone else' } });
    expect([other.status, other.body.error.code]).toEqual([409, 'idempotency_key_reused']);
    // Keys are per job.
    const elsewhere = await invoke((await createJob()).id, body);
    expect(elsewhere.status).toBe(202);
    expect(await app.database.db.run.count({ where: { jobId: job.id } })).toBe(1);
  });

  it('makes exactly one run of parallel repeats', async () => {
    const job = await createJob({ concurrencyLimit: 5 });
    const answers = await Promise.all(Array.from({ length: 12 }, () => invoke(job.id, { idempotencyKey: 'parallel', data: { who: 'x' } })));
    expect(answers.map((res) => res.status).sort()).toEqual([...Array(11).fill(200), 202]);
    expect(new Set(answers.map((res) => res.body.runId)).size).toBe(1);
    expect(await app.database.db.run.count({ where: { jobId: job.id } })).toBe(1);
    await waitFor(answers[0].body.runId);
  });

  it('forgets a key after 24 hours', async () => {
    const job = await createJob();
    const first = await invoke(job.id, { idempotencyKey: 'old' });
    await app.database.db.invocation.updateMany({ where: { id: first.body.invocationId }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const again = await invoke(job.id, { idempotencyKey: 'old', data: { other: 'body' } });
    expect(again.status).toBe(202);
    expect(again.body.runId).not.toBe(first.body.runId);
  });

  it('merges data over the trigger default data and validates it against the input schema', async () => {
    const job = await createJob({
      promptTemplate: '{{ data.who }} #{{ data.number }}',
      triggers: [{ type: 'invocation', id: 'trg_manual', defaultData: { who: 'Default', number: 1 }, inputSchema: { type: 'object', properties: { number: { type: 'integer', minimum: 1 } } } }],
    });
    const run = await waitFor((await invoke(job.id, { data: { number: 7 } })).body.runId);
    expect(run).toMatchObject({ prompt: 'Default #7', trigger: { type: 'invocation', id: 'trg_manual' } });
    const bad = await invoke(job.id, { data: { number: 0 } });
    expect([bad.status, bad.body.error.code]).toEqual([400, 'validation_failed']);
    expect(bad.body.error.message).toMatch(/^`data\.number` must be >= 1/);
  });

  it('refuses a template that cannot render with the data, a disabled job, and an unknown job', async () => {
    const job = await createJob({ promptTemplate: 'Issue {{ data.issue.number }}' });
    const unrendered = await invoke(job.id);
    expect([unrendered.status, unrendered.body.error.code]).toEqual([400, 'invalid_template']);
    expect(unrendered.body.error.message).toMatch(/promptTemplate.*line 1, column/);

    await call(app, 'POST', `/api/v1/jobs/${job.id}/disable`, { headers: bearer });
    const disabled = await invoke(job.id, { data: { issue: { number: 1 } } });
    expect([disabled.status, disabled.body.error.code]).toEqual([409, 'job_disabled']);

    const unknown = await invoke('no-such-job');
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'not_found']);
  });

  it('takes the caller prompt and name instead of the templates', async () => {
    const job = await createJob({ promptTemplate: 'Needs {{ data.missing }}' });
    const run = await waitFor((await invoke(job.id, { prompt: 'Direct prompt', name: 'Direct name' })).body.runId);
    expect(run).toMatchObject({ prompt: 'Direct prompt', name: 'Direct name', state: 'succeeded' });
  });
});

describe('the concurrency limit', () => {
  it('keeps at most concurrencyLimit runs active and starts the queue in arrival order', async () => {
    const job = await createJob({ promptTemplate: 'quick', concurrencyLimit: 2 });
    // Three bursts, one after the other, of four invocations at once. A burst's runs arrive together: on
    // PostgreSQL their transactions may commit in any order, and a run is queued once its own commits.
    const bursts: string[][] = [];
    for (let burst = 0; burst < 3; burst++) {
      const answers = await Promise.all(Array.from({ length: 4 }, () => invoke(job.id)));
      bursts.push(answers.map((res) => res.body.runId).sort());
    }
    let most = 0;
    for (let i = 0; i < 600; i++) {
      const active = await app.database.db.run.count({ where: { jobId: job.id, state: { in: ['starting', 'running', 'canceling'] } } });
      most = Math.max(most, active);
      const open = await app.database.db.run.count({ where: { jobId: job.id, state: { in: ['queued', 'starting', 'running', 'canceling'] } } });
      if (open === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(most).toBeLessThanOrEqual(2);
    expect(most).toBeGreaterThan(0);
    // Every run of a burst started before any of the next.
    const runs = await app.database.db.run.findMany({ where: { jobId: job.id }, orderBy: [{ startedAt: 'asc' }, { id: 'asc' }] });
    expect(runs.every((run) => run.state === 'succeeded')).toBe(true);
    const started = runs.map((run) => run.id);
    expect(bursts.map((_, i) => started.slice(i * 4, i * 4 + 4).sort())).toEqual(bursts);
  });

  it('starts queued runs at once when the limit is raised', async () => {
    const job = await createJob({ promptTemplate: 'sleep' });
    const [first, second] = [(await invoke(job.id)).body.runId, (await invoke(job.id)).body.runId];
    await waitFor(first, ['running']);
    expect((await getRun(second)).state).toBe('queued');
    expect((await call(app, 'PATCH', `/api/v1/jobs/${job.id}`, { headers: bearer, body: { concurrencyLimit: 2 } })).status).toBe(200);
    await waitFor(second, ['running']);
    expect((await getRun(first)).state).toBe('running');
    for (const runId of [first, second]) await call(app, 'POST', `/api/v1/runs/${runId}/stop`, { headers: bearer });
    await waitFor(second);
  });
});

describe('reading runs', () => {
  it('lists newest first with filters and keyset pages', async () => {
    const job = await createJob({ slug: 'listed' });
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await invoke(job.id)).body.runId);
    for (const id of made) await waitFor(id);

    const seen: string[] = [];
    let next: string | null = '/api/v1/runs?jobId=listed&limit=2';
    while (next) {
      const res = await call(app, 'GET', next, { headers: bearer });
      expect(res.status).toBe(200);
      seen.push(...res.body.map((run: { id: string }) => run.id));
      next = /^<([^>]+)>; rel="next"$/.exec(res.headers.link ?? '')?.[1] ?? null;
    }
    expect(seen).toEqual([...made].reverse());

    const succeeded = await call(app, 'GET', `/api/v1/runs?jobId=${job.id}&state=succeeded&triggerType=invocation`, { headers: bearer });
    expect(succeeded.body).toHaveLength(5);
    const none = await call(app, 'GET', `/api/v1/runs?jobId=${job.id}&triggerType=webhook`, { headers: bearer });
    expect(none.body).toEqual([]);

    const first = await call(app, 'GET', `/api/v1/runs?jobId=${job.id}&limit=2`, { headers: bearer });
    const cursor = new URL(/^<([^>]+)>/.exec(first.headers.link)![1], BASE_URL).searchParams.get('cursor');
    const crossed = await call(app, 'GET', `/api/v1/runs?state=failed&limit=2&cursor=${cursor}`, { headers: bearer });
    expect([crossed.status, crossed.body.error.code]).toEqual([400, 'invalid_cursor']);
  });

  it('pages a trace in seq order', async () => {
    const job = await createJob();
    const { runId } = (await invoke(job.id)).body;
    await waitFor(runId);
    const all = await traceOf(runId);
    const seen: number[] = [];
    let next: string | null = `/api/v1/runs/${runId}/trace?limit=3`;
    while (next) {
      const res = await call(app, 'GET', next, { headers: bearer });
      seen.push(...res.body.map((event: { seq: number }) => event.seq));
      next = /^<([^>]+)>; rel="next"$/.exec(res.headers.link ?? '')?.[1] ?? null;
    }
    expect(seen).toEqual(all.map((event) => event.seq));
  });

  it('follows a running trace with `after`: only what came after the last seq read, never the whole trace again', async () => {
    const job = await createJob();
    const { runId } = (await invoke(job.id, { prompt: 'sleep' })).body;
    await waitFor(runId, ['running']);
    const read = async (after: number) => (await call(app, 'GET', `/api/v1/runs/${runId}/trace?after=${after}`, { headers: bearer })).body as { seq: number; type: string }[];
    const first = await read(0);
    const last = first[first.length - 1].seq;
    expect(first.map((event) => event.seq)).toEqual(first.map((_, i) => i + 1));
    expect(await read(last)).toEqual([]);
    await call(app, 'POST', `/api/v1/runs/${runId}/stop`, { headers: bearer });
    await waitFor(runId);
    const more = await read(last);
    expect(more.length).toBeGreaterThan(0);
    expect(more.every((event) => event.seq > last)).toBe(true);
    expect(more.map((event) => event.type)).toContain('state_changed');
    const both = await call(app, 'GET', `/api/v1/runs/${runId}/trace?after=1&cursor=abc`, { headers: bearer });
    expect([both.status, both.body.error.code]).toEqual([400, 'validation_failed']);
  });

  it('needs runs:read to read and runs:write to invoke and stop', async () => {
    const job = await createJob();
    const reader = { authorization: `Bearer ${await accessToken(app, owner, { scopes: ['runs:read'] })}` };
    const refused = await invoke(job.id, {}, reader);
    expect([refused.status, refused.body.error.code]).toEqual([403, 'insufficient_scope']);
    const writer = { authorization: `Bearer ${await accessToken(app, owner, { scopes: ['runs:write'] })}` };
    const { runId } = (await invoke(job.id, {}, writer)).body;
    const unreadable = await call(app, 'GET', `/api/v1/runs/${runId}`, { headers: writer });
    expect([unreadable.status, unreadable.body.error.code]).toEqual([403, 'insufficient_scope']);
    expect((await call(app, 'GET', `/api/v1/runs/${runId}`, { headers: reader })).status).toBe(200);
    await waitFor(runId);
  });
});

describe('another tenant', () => {
  it('sees none of these runs and cannot invoke, stop or replay them', async () => {
    const job = await createJob({ slug: 'private', promptTemplate: 'sleep' });
    const { runId } = (await invoke(job.id)).body;
    await waitFor(runId, ['running']);
    const stranger = await createOwner(app.database.db, { tenantName: 'Other' });
    const headers = { authorization: `Bearer ${await accessToken(app, stranger, { scopes: ['flows:read', 'flows:write', 'runs:read', 'runs:write'] })}` };
    const strangerSession = { cookie: await sessionCookie(app, stranger), origin: BASE_URL };
    const before = await app.database.db.run.findMany({ where: { jobId: job.id }, orderBy: { id: 'asc' } });

    const attempts = [
      call(app, 'POST', `/api/v1/jobs/${job.id}/invocations`, { headers, body: {} }),
      call(app, 'POST', '/api/v1/jobs/private/invocations', { headers, body: {} }),
      call(app, 'GET', `/api/v1/runs/${runId}`, { headers }),
      call(app, 'GET', `/api/v1/runs/${runId}/trace`, { headers }),
      call(app, 'POST', `/api/v1/runs/${runId}/stop`, { headers }),
      call(app, 'POST', `/api/v1/runs/${runId}/replay`, { headers: strangerSession }),
    ];
    for (const res of await Promise.all(attempts)) expect([res.status, res.body.error.code]).toEqual([404, 'not_found']);
    expect((await call(app, 'GET', `/api/v1/runs?jobId=${job.id}`, { headers })).body).toEqual([]);
    expect((await call(app, 'GET', '/api/v1/runs', { headers })).body).toEqual([]);

    const after = await app.database.db.run.findMany({ where: { jobId: job.id }, orderBy: { id: 'asc' } });
    expect(after.map((run) => [run.id, run.state, run.invocationId])).toEqual(before.map((run) => [run.id, run.state, run.invocationId]));
    await call(app, 'POST', `/api/v1/runs/${runId}/stop`, { headers: bearer });
    await waitFor(runId);
  });
});
