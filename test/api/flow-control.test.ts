// Flow control of a job's runs against a real server: concurrency keys checked at save, a burst for one
// pull request under `cancel-running` leaving one run on the last push and the others superseded (saying
// by which run), two pull requests side by side, `skip` naming the run that holds the key, `queue` waiting
// per key, and a key that cannot be worked out failing closed.
import request from 'supertest';
import { agentCommand } from '../support/agent';
import { AGENT_TOKEN, startFakeProviders, VMHOST_TOKEN, type FakeProviders } from '../support/fake-providers';
import { startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner, sessionCookie, type TestOwner } from '../support/identity';
import { createJob, githubDelivery, jobSettled, runSettled } from '../support/kit';
import { until } from '../support/until';

// `slow` prompts take three seconds, `fail` ones fail, the others take a moment.
const AGENT = `prompt=$(cat)
case "$prompt" in
  slow*) echo "working on $prompt" ; sleep 3 ;;
  fail*) echo "cannot do $prompt" >&2 ; exit 3 ;;
  many*) for i in $(seq 1 150); do echo "line $i"; done ;;
  *) echo "working on $prompt" ;;
esac
echo done
`;

let app: TestApp;
let providers: FakeProviders;
let bearer: Record<string, string>;
let owner: TestOwner;
let source: { id: string; signingSecret: string };

beforeAll(async () => {
  providers = await startFakeProviders();
  app = await startTestApp({ localAgent: { command: agentCommand(AGENT), timeoutSeconds: 60, sandbox: 'off' }, rateLimits: { api: 0, apiAddress: 0 }, traceMaxLines: 100 });
  owner = await createOwner(app.database.db);
  bearer = { authorization: `Bearer ${await accessToken(app, owner)}` };
  source = (await call(app, 'POST', '/api/v1/webhook-sources', { headers: bearer, body: { name: 'GitHub', format: 'github' } })).body;
});
afterAll(async () => {
  await app.close();
  await providers.close();
});

const api = (method: string, path: string, body?: unknown) => call(app, method, path, { headers: bearer, body });

/** A job on `pull_request.synchronize` of a source of its own, and a push to one of its pull requests. */
async function prJob(name: string, flowControl: Record<string, unknown>, promptTemplate = 'Review {{ payload.pull_request.head.sha }}') {
  const own = (await api('POST', '/api/v1/webhook-sources', { name, format: 'github' })).body as { id: string; signingSecret: string };
  const job = await createJob(app, bearer, {
    name,
    promptTemplate,
    executionTargetId: 'local',
    concurrencyLimit: 10,
    triggers: [{ type: 'webhook', sourceId: own.id, events: ['pull_request.synchronize'] }],
    flowControl,
  });
  const push = async (pr: number, sha: string) => {
    const { body, headers } = githubDelivery(own.signingSecret, { action: 'synchronize', number: pr, pull_request: { number: pr, head: { sha } } }, { event: 'pull_request' });
    const res = await request(app.app).post(`/hooks/${own.id}`).set(headers).send(body);
    expect(res.status).toBe(202);
    return res.body.activityId as string;
  };
  return { job, push };
}

// Polled, not waited for with the runner's idle, which would wait for the runs to end too.
const activity = async (activityId: string) =>
  until(`delivery ${activityId} decided`, async () => {
    const found = (await api('GET', `/api/v1/webhook-activity/${activityId}`)).body;
    return found.evaluatedAt && found;
  });
const traceOf = async (runId: string) => (await api('GET', `/api/v1/runs/${runId}/trace?limit=100`)).body as { type: string; data: any }[];

describe('at save', () => {
  it('checks the key like every CEL expression, naming what is wrong', async () => {
    const typo = await api('POST', '/api/v1/jobs', { name: 'Typo', promptTemplate: 'x', triggers: [{ type: 'webhook', sourceId: source.id, events: ['pull_request.synchronize'] }], flowControl: { concurrency: { key: 'paylod.pull_request.number', limit: 1 } } });
    expect([typo.status, typo.body.error.code]).toEqual([400, 'invalid_conditions']);
    expect(typo.body.error.message).toContain('`flowControl.concurrency.key`, column 1: `paylod` is not in the context');
    expect(typo.body.error.message).toContain('(did you mean `payload`?)');
    const syntax = await api('POST', '/api/v1/jobs', { name: 'Syntax', promptTemplate: 'x', flowControl: { concurrency: { key: 'data.(', limit: 1 } } });
    expect([syntax.status, syntax.body.error.code]).toEqual([400, 'invalid_conditions']);
    const limit = await api('POST', '/api/v1/jobs', { name: 'Limit', promptTemplate: 'x', flowControl: { concurrency: { limit: 0 } } });
    expect(limit.status).toBe(400);
    const mode = await api('POST', '/api/v1/jobs', { name: 'Mode', promptTemplate: 'x', flowControl: { concurrency: { limit: 1, onConflict: 'newest' } } });
    expect(mode.status).toBe(400);
  });

  it('is read back, merged by an update part by part, and cleared with null', async () => {
    const job = await createJob(app, bearer, { name: 'Merged', promptTemplate: 'x {{ data.repo }}', flowControl: { concurrency: { key: 'data.repo', limit: 2 } } });
    expect(job.flowControl).toEqual({ concurrency: { key: 'data.repo', limit: 2 } });
    expect((await api('PATCH', `/api/v1/jobs/${job.id}`, { name: 'Renamed' })).body.flowControl).toEqual({ concurrency: { key: 'data.repo', limit: 2 } });
    const changed = await api('PATCH', `/api/v1/jobs/${job.id}`, { flowControl: { concurrency: { key: 'data.repo', limit: 1, onConflict: 'skip' } } });
    expect(changed.body.flowControl).toEqual({ concurrency: { key: 'data.repo', limit: 1, onConflict: 'skip' } });
    // A trigger change that leaves the key unreadable is refused too.
    const moved = await api('PATCH', `/api/v1/jobs/${job.id}`, { promptTemplate: 'x', triggers: [{ type: 'webhook', sourceId: source.id, events: ['issues.opened'] }] });
    expect([moved.status, moved.body.error.message]).toEqual([400, expect.stringContaining('`flowControl.concurrency.key`, column 1: `data` is not in the context')]);
    expect((await api('PATCH', `/api/v1/jobs/${job.id}`, { flowControl: { concurrency: null } })).body.flowControl).toEqual({});
    await api('PATCH', `/api/v1/jobs/${job.id}`, { flowControl: { concurrency: { limit: 3 } } });
    expect((await api('PATCH', `/api/v1/jobs/${job.id}`, { flowControl: null })).body.flowControl).toEqual({});
    expect((await api('GET', `/api/v1/jobs/${job.id}`)).body.flowControl).toEqual({});
  });
});

describe('cancel-running', () => {
  it('leaves one run, on the last of a burst of 20 pushes to a pull request; the others say which run superseded them', async () => {
    const { job, push } = await prJob('Burst', { concurrency: { key: 'payload.pull_request.number', limit: 1, onConflict: 'cancel-running' } }, 'slow {{ payload.pull_request.head.sha }}');
    const deliveries: string[] = [];
    for (let n = 1; n <= 20; n++) deliveries.push(await push(7, `sha${n}`));
    const runs = await jobSettled(app, bearer, job.id, 20);
    expect(runs).toHaveLength(20);
    const succeeded = runs.filter((run) => run.state === 'succeeded');
    expect(succeeded).toHaveLength(1);
    expect(succeeded[0].prompt).toBe('slow sha20');
    const superseded = runs.filter((run) => run.state === 'canceled');
    expect(superseded).toHaveLength(19);
    // Each was superseded by the run of the next push, which says so in its error and trace.
    const byPrompt = new Map(runs.map((run) => [run.prompt, run]));
    for (let n = 1; n < 20; n++) {
      const run = byPrompt.get(`slow sha${n}`)!;
      const next = byPrompt.get(`slow sha${n + 1}`)!;
      expect(run.error).toBe(`Superseded by run ${next.id} (flowControl.concurrency: cancel-running).`);
      expect((await traceOf(run.id)).find((event) => event.type === 'flow_control')?.data).toEqual({ action: 'superseded', byRunId: next.id, key: '7' });
    }
    // Every delivery started its run.
    expect((await activity(deliveries[19])).decisions[0]).toMatchObject({ decision: 'match', runId: succeeded[0].id });
  });

  it('runs two pull requests side by side', async () => {
    const { job, push } = await prJob('Side by side', { concurrency: { key: 'payload.pull_request.number', limit: 1, onConflict: 'cancel-running' } }, 'slow {{ payload.pull_request.head.sha }}');
    await push(1, 'a1');
    await push(2, 'b1');
    await until('both pull requests running at once', async () => {
      const runs = (await api('GET', `/api/v1/runs?jobId=${job.id}`)).body as { state: string }[];
      return runs.length === 2 && runs.every((run) => run.state === 'running');
    });
    const runs = await jobSettled(app, bearer, job.id, 2);
    expect(runs.map((run) => run.state)).toEqual(['succeeded', 'succeeded']);
  });
});

describe('skip', () => {
  it('starts nothing while the key is held, naming the run that holds it, in the delivery and the invocation', async () => {
    const { job, push } = await prJob('Skipper', { concurrency: { key: 'payload.pull_request.number', limit: 1, onConflict: 'skip' } }, 'slow {{ payload.pull_request.head.sha }}');
    const first = await activity(await push(3, 'c1'));
    const holder = first.decisions[0].runId;
    const second = await activity(await push(3, 'c2'));
    expect(second.decisions[0]).toMatchObject({ decision: 'match', runId: null, flowControl: { action: 'skipped', runId: holder } });
    expect(second.decisions[0].flowControl.message).toContain(`run ${holder} holds this run's concurrency key`);
    // The console says the same.
    const cookie = await sessionCookie(app, owner);
    const page = await request(app.app).get(`/console/activity/${second.id}`).set('cookie', cookie);
    expect(page.text).toContain(`Flow control started no run: No run was started: run ${holder} holds`);
    expect((await request(app.app).get(`/console/jobs/${job.id}`).set('cookie', cookie)).text).toContain('1 at once per value of <code>payload.pull_request.number</code>; a new run of a busy key is not started');
    // Another pull request is not held back.
    expect((await activity(await push(4, 'd1'))).decisions[0].runId).toEqual(expect.stringMatching(/^run_/));
    await runSettled(app, bearer, holder);
    // Once the holder is over, the key is free again.
    expect((await activity(await push(3, 'c3'))).decisions[0].runId).toEqual(expect.stringMatching(/^run_/));

    const invoked = await createJob(app, bearer, { name: 'Invoked skipper', promptTemplate: 'slow {{ data.repo }}', executionTargetId: 'local', flowControl: { concurrency: { key: 'data.repo', limit: 1, onConflict: 'skip' } } });
    const held = (await api('POST', `/api/v1/jobs/${invoked.id}/invocations`, { data: { repo: 'widgets' } })).body.runId;
    const refused = await api('POST', `/api/v1/jobs/${invoked.id}/invocations`, { data: { repo: 'widgets' } });
    expect([refused.status, refused.body.error.code]).toEqual([409, 'run_skipped']);
    expect(refused.body.error.message).toContain(held);
    expect((await api('POST', `/api/v1/jobs/${invoked.id}/invocations`, { data: { repo: 'gadgets' } })).status).toBe(202);
  });

  it('creates exactly `limit` runs of a key asked for at once', async () => {
    const job = await createJob(app, bearer, { name: 'Skipper at once', promptTemplate: 'slow {{ data.repo }}', executionTargetId: 'local', concurrencyLimit: 10, flowControl: { concurrency: { key: 'data.repo', limit: 2, onConflict: 'skip' } } });
    const answers = await Promise.all(Array.from({ length: 10 }, () => api('POST', `/api/v1/jobs/${job.id}/invocations`, { data: { repo: 'widgets' } })));
    expect(answers.filter((res) => res.status === 202)).toHaveLength(2);
    expect(answers.filter((res) => res.status === 409 && res.body.error.code === 'run_skipped')).toHaveLength(8);
    expect((await jobSettled(app, bearer, job.id, 2)).map((run) => run.state)).toEqual(['succeeded', 'succeeded']);
  });
});

describe('queue', () => {
  it('holds a key\'s runs back in order while other keys run', async () => {
    const job = await createJob(app, bearer, { name: 'Per repo', promptTemplate: 'slow {{ data.repo }} {{ data.n }}', executionTargetId: 'local', concurrencyLimit: 10, flowControl: { concurrency: { key: 'data.repo', limit: 1 } } });
    const invoke = async (repo: string, n: number) => (await api('POST', `/api/v1/jobs/${job.id}/invocations`, { data: { repo, n } })).body.runId as string;
    const a1 = await invoke('a', 1);
    const a2 = await invoke('a', 2);
    const b1 = await invoke('b', 1);
    await runSettled(app, bearer, b1, ['running']);
    await runSettled(app, bearer, a1, ['running']);
    expect((await api('GET', `/api/v1/runs/${a2}`)).body.state).toBe('queued');
    const [first, second] = [await runSettled(app, bearer, a1), await runSettled(app, bearer, a2)];
    expect([first.state, second.state]).toEqual(['succeeded', 'succeeded']);
    // The second of key `a` started only once the first had ended.
    expect(new Date(second.startedAt).getTime()).toBeGreaterThanOrEqual(new Date(first.finishedAt).getTime());
  });
});

describe('a key that cannot be worked out', () => {
  it('fails closed: the delivery says why, the invocation is refused', async () => {
    const { job, push } = await prJob('Keyed on a map', { concurrency: { key: 'payload.pull_request.head', limit: 1 } });
    const decided = await activity(await push(5, 'e1'));
    expect(decided.decisions[0]).toMatchObject({ decision: 'match', runId: null, flowControl: { action: 'key_error' } });
    expect(decided.decisions[0].flowControl.message).toContain('must give a string, number or boolean; it gave a map');
    expect((await api('GET', `/api/v1/runs?jobId=${job.id}`)).body).toEqual([]);

    const invoked = await createJob(app, bearer, { name: 'Keyed on data', promptTemplate: 'x', executionTargetId: 'local', flowControl: { concurrency: { key: 'data.repo.size()', limit: 1 } } });
    const refused = await api('POST', `/api/v1/jobs/${invoked.id}/invocations`, { data: {} });
    expect([refused.status, refused.body.error.code]).toEqual([400, 'invalid_conditions']);
    expect(refused.body.error.message).toContain('`flowControl.concurrency.key`');
  });
});

describe('ttl', () => {
  it('is a duration from a second to a week', async () => {
    for (const ttl of ['banana', 'PT0S', '0s', '8d', 'P']) {
      const res = await api('POST', '/api/v1/jobs', { name: `TTL ${ttl}`, promptTemplate: 'x', flowControl: { ttl } });
      expect([ttl, res.status]).toEqual([ttl, 400]);
    }
    for (const ttl of ['30s', 'PT1H30M', 'P1D', '7d']) expect((await api('POST', '/api/v1/jobs', { name: `TTL ${ttl}`, promptTemplate: 'x', flowControl: { ttl } })).status).toBe(201);
  });

  it('ends a run still queued when its time is over as expired, saying so; a run that started is not touched', async () => {
    const job = await createJob(app, bearer, { name: 'Short-lived', promptTemplate: 'slow {{ data.n }}', executionTargetId: 'local', flowControl: { ttl: '1s' } });
    const invoke = async (n: number) => (await api('POST', `/api/v1/jobs/${job.id}/invocations`, { data: { n } })).body.runId as string;
    const first = await invoke(1);
    await runSettled(app, bearer, first, ['running']);
    const waiting = await invoke(2);
    const expired = await runSettled(app, bearer, waiting);
    expect(expired).toMatchObject({ state: 'expired', startedAt: null, error: 'Not started within 1 s of its creation (flowControl.ttl).' });
    const waited = new Date(expired.finishedAt).getTime() - new Date(expired.createdAt).getTime();
    expect(waited).toBeGreaterThanOrEqual(1000);
    expect(waited).toBeLessThan(2900); // before the first run freed its slot
    expect((await traceOf(waiting)).filter((event) => event.type !== 'prompt_rendered').map((event) => [event.type, event.data])).toEqual([
      ['flow_control', { action: 'expired', after: '1 s' }],
      ['state_changed', { from: 'queued', to: 'expired' }],
    ]);
    expect((await runSettled(app, bearer, first)).state).toBe('succeeded');
    expect((await api('GET', `/api/v1/runs?jobId=${job.id}&state=expired`)).body.map((run: { id: string }) => run.id)).toEqual([waiting]);
  });
});

describe('rateLimit', () => {
  it('is checked at save: a period from a second to a day, a key that reads the run\'s context', async () => {
    for (const rateLimit of [{ limit: 1, period: '25h' }, { limit: 0, period: '1m' }, { limit: 1, period: '1m', key: 'dta.repo' }]) {
      expect((await api('POST', '/api/v1/jobs', { name: 'Rated', promptTemplate: 'x', flowControl: { rateLimit } })).status).toBe(400);
    }
  });

  it('creates exactly `limit` runs per key in the window, even when asked at once, and answers 429 with Retry-After beyond', async () => {
    const job = await createJob(app, bearer, { name: 'Capped', promptTemplate: 'x {{ data.repo }}', executionTargetId: 'local', concurrencyLimit: 10, flowControl: { rateLimit: { key: 'data.repo', limit: 5, period: '1h' } } });
    const invoke = (repo: string) => api('POST', `/api/v1/jobs/${job.id}/invocations`, { data: { repo } });
    const answers = await Promise.all(Array.from({ length: 12 }, () => invoke('widgets')));
    expect(answers.filter((res) => res.status === 202)).toHaveLength(5);
    const refused = answers.filter((res) => res.status === 429);
    expect(refused).toHaveLength(7);
    expect(refused[0].body.error.code).toBe('rate_limited');
    expect(refused[0].body.error.message).toContain("the job's rate limit (5 per 1h per key, flowControl.rateLimit) is reached until");
    const retryAfter = Number(refused[0].headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    // Another key has its own count; the runs refused were never created.
    expect((await invoke('gadgets')).status).toBe(202);
    expect((await jobSettled(app, bearer, job.id, 6)).length).toBe(6);
  });

  it('keeps a delivery from starting a run beyond it, saying until when', async () => {
    const { job, push } = await prJob('Rated pushes', { rateLimit: { limit: 2, period: '10m' } });
    const decisions = [];
    for (const sha of ['r1', 'r2', 'r3']) decisions.push((await activity(await push(9, sha))).decisions.find((decision: { jobId: string }) => decision.jobId === job.id));
    expect(decisions.map((decision) => Boolean(decision.runId))).toEqual([true, true, false]);
    expect(decisions[2]).toMatchObject({ decision: 'match', runId: null, flowControl: { action: 'rate_limited', until: expect.stringMatching(/Z$/) } });
    const until = new Date(decisions[2].flowControl.until).getTime() - Date.now();
    expect(until).toBeGreaterThan(9 * 60_000);
    expect(until).toBeLessThanOrEqual(10 * 60_000);
  });
});

describe('retry', () => {
  const at = (event: { at: string }) => new Date(event.at).getTime();
  const fullTrace = async (runId: string) => (await api('GET', `/api/v1/runs/${runId}/trace?limit=100`)).body as { type: string; at: string; data: any }[];

  it('tries a run whose agent failed again, as attempts of the same run, waiting the backoff between them', async () => {
    const job = await createJob(app, bearer, { name: 'Tries', promptTemplate: 'fail {{ data.n }}', executionTargetId: 'local', flowControl: { retry: { maxAttempts: 3, on: ['failed'], backoff: { initial: '1s', factor: 2, max: '10s' } } } });
    const runId = (await api('POST', `/api/v1/jobs/${job.id}/invocations`, { data: { n: 1 } })).body.runId;
    const run = await runSettled(app, bearer, runId);
    expect(run).toMatchObject({ state: 'failed', attempt: 3, error: expect.stringContaining('exited with code 3') });
    expect((await api('GET', `/api/v1/runs?jobId=${job.id}`)).body).toHaveLength(1); // one run, three attempts
    const trace = await fullTrace(runId);
    const retries = trace.filter((event) => event.type === 'flow_control');
    expect(retries.map((event) => event.data)).toEqual([
      { action: 'retry', attempt: 2, after: '1 s', because: 'failed' },
      { action: 'retry', attempt: 3, after: '2 s', because: 'failed' },
    ]);
    // Each new attempt started no sooner than its backoff after the retry was decided.
    const starts = trace.filter((event) => event.type === 'state_changed' && event.data.to === 'starting');
    expect(starts).toHaveLength(3);
    expect(at(starts[1]) - at(retries[0])).toBeGreaterThanOrEqual(1000);
    expect(at(starts[2]) - at(retries[1])).toBeGreaterThanOrEqual(2000);
    expect(trace.filter((event) => event.type === 'error').map((event) => event.data.attempt)).toEqual([1, 2, undefined]);
  });

  it('leaves the classes it was not given alone', async () => {
    const job = await createJob(app, bearer, { name: 'Infra only', promptTemplate: 'fail {{ data.n }}', executionTargetId: 'local', flowControl: { retry: { maxAttempts: 3, on: ['infrastructure'] } } });
    const run = await runSettled(app, bearer, (await api('POST', `/api/v1/jobs/${job.id}/invocations`, { data: { n: 2 } })).body.runId);
    expect(run).toMatchObject({ state: 'failed', attempt: 1 });
  });

  it('tries again when the VM host failed, and the next attempt succeeds', async () => {
    const connectionId = (await api('POST', '/api/v1/vmhost-connections', { name: 'Fake host', apiToken: VMHOST_TOKEN, apiBaseUrl: providers.url })).body.id;
    const targetId = (await api('POST', '/api/v1/execution-targets', { name: 'Fake VM', connectionId, image: 'agent-runner' })).body.id;
    await api('PUT', '/api/v1/integrations/agent-integration', { accessToken: AGENT_TOKEN, project: 'acme', connectionId, apiBaseUrl: providers.url });
    const job = await createJob(app, bearer, { name: 'On a flaky host', promptTemplate: 'Fix it', executionTargetId: targetId, flowControl: { retry: { maxAttempts: 2, on: ['infrastructure'], backoff: { initial: '1s' } } } });
    providers.knobs.fail.create = { with: 503, times: 1 };
    const run = await runSettled(app, bearer, (await api('POST', `/api/v1/jobs/${job.id}/invocations`, {})).body.runId);
    expect(run).toMatchObject({ state: 'succeeded', attempt: 2 });
    const trace = await fullTrace(run.id);
    expect(trace.find((event) => event.type === 'error')?.data).toEqual({ message: expect.stringContaining('The VM could not be created'), attempt: 1 });
    expect(trace.find((event) => event.type === 'flow_control')?.data).toEqual({ action: 'retry', attempt: 2, after: '1 s', because: 'infrastructure' });
    providers.reset();
  });
});

describe('the trace', () => {
  it('keeps at most FLOWS_TRACE_MAX_LINES lines of output per attempt, and says so', async () => {
    const job = await createJob(app, bearer, { name: 'Chatty', promptTemplate: 'many', executionTargetId: 'local' });
    const run = await runSettled(app, bearer, (await api('POST', `/api/v1/jobs/${job.id}/invocations`, {})).body.runId);
    expect(run.state).toBe('succeeded');
    const events: { type: string; data: any }[] = [];
    for (let cursor = ''; ; ) {
      const page = await api('GET', `/api/v1/runs/${run.id}/trace?limit=100${cursor}`);
      events.push(...page.body);
      const next = /<[^>]*[?&]cursor=([^&>]+)[^>]*>; rel="next"/.exec(page.headers.link ?? '')?.[1];
      if (!next) break;
      cursor = `&cursor=${next}`;
    }
    const output = events.filter((event) => event.type === 'agent_output');
    expect(output).toHaveLength(100);
    expect(output[99].data.text).toBe('line 100');
    expect(events.filter((event) => event.type === 'trace_capped').map((event) => event.data)).toEqual([{ maxLines: 100, message: "The agent's output beyond 100 lines is not kept (FLOWS_TRACE_MAX_LINES)." }]);
  });
});

describe('backtest', () => {
  it('applies a draft flow control to the recorded deliveries in time order, saying what became of each match', async () => {
    const { job, push } = await prJob('Backtested', {}, 'slow {{ payload.pull_request.head.sha }}');
    const pushed = [await push(11, 'b1'), await push(11, 'b2'), await push(11, 'b3')];
    await jobSettled(app, bearer, job.id, 3);
    const backtest = (flowControl: Record<string, unknown>) => api('POST', `/api/v1/jobs/${job.id}/backtest`, { flowControl });
    const superseding = (await backtest({ concurrency: { key: 'payload.pull_request.number', limit: 1, onConflict: 'cancel-running' } })).body;
    expect(superseding.assumedRunSeconds).toBeGreaterThanOrEqual(2.5); // the median of its runs, three seconds each
    const byActivity = (body: any) => new Map(body.results.map((result: any) => [result.activityId, result.decisions[0].flowControl]));
    // The pushes came well within a run's time: each run would have been superseded by the next.
    const supersededBy = byActivity(superseding);
    expect(pushed.map((id) => (supersededBy.get(id) as any).outcome)).toEqual(['superseded', 'superseded', 'started']);
    expect((supersededBy.get(pushed[0]) as any).byActivityId).toBe(pushed[1]);
    const limited = byActivity((await backtest({ rateLimit: { key: 'payload.pull_request.number', limit: 2, period: '1h' } })).body);
    expect(pushed.map((id) => (limited.get(id) as any).outcome)).toEqual(['started', 'started', 'rate_limited']);
    // Debounced by pull request, the later pushes fold into the first one's waiting run.
    const folded = byActivity((await backtest({ debounce: { key: 'payload.pull_request.number', period: '1m' } })).body);
    expect(pushed.map((id) => (folded.get(id) as any).outcome)).toEqual(['started', 'folded', 'folded']);
    expect(pushed.slice(1).map((id) => (folded.get(id) as any).byActivityId)).toEqual([pushed[0], pushed[0]]);
    const typo = await backtest({ concurrency: { key: 'paylod.pull_request.number', limit: 1 } });
    expect([typo.status, typo.body.error.code]).toEqual([400, 'invalid_conditions']);
  });

  it('takes a run to last as long as the job\'s runs did: a skip while one would still run', async () => {
    const { job, push } = await prJob('Backtested slow', {}, 'slow {{ payload.pull_request.head.sha }}');
    const pushed = [await push(12, 's1'), await push(12, 's2'), await push(13, 't1')];
    await jobSettled(app, bearer, job.id, 3);
    const body = (await api('POST', `/api/v1/jobs/${job.id}/backtest`, { flowControl: { concurrency: { key: 'payload.pull_request.number', limit: 1, onConflict: 'skip' } } })).body;
    expect(body.assumedRunSeconds).toBeGreaterThanOrEqual(2.5);
    const flows = new Map(body.results.map((result: any) => [result.activityId, result.decisions[0].flowControl]));
    expect(pushed.map((id) => (flows.get(id) as any).outcome)).toEqual(['started', 'skipped', 'started']);
    expect(flows.get(pushed[1])).toMatchObject({ byActivityId: pushed[0] });
  });
});

describe('debounce', () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('is checked at save: a period up to an hour, maxWait no shorter', async () => {
    for (const debounce of [{ period: '2h' }, { period: '10s', maxWait: '5s' }, { period: '1s', key: 'paylod.x' }]) {
      expect((await api('POST', '/api/v1/jobs', { name: 'Debounced', promptTemplate: 'x', flowControl: { debounce } })).status).toBe(400);
    }
  });

  it('folds the deliveries of a key into one run with the last one\'s context, started a period after the last', async () => {
    const { job, push } = await prJob('Folding', { debounce: { key: 'payload.pull_request.number', period: '2s' } });
    // The later ones come well after the first: the run's start is pushed back past the moment the first asked for.
    const first = await push(21, 'f1');
    await sleep(600);
    const pushed = [first, await push(21, 'f2'), await push(21, 'f3'), await push(22, 'g1')];
    const lastAt = Date.now();
    const decided = await Promise.all(pushed.map(activity));
    const held = decided[0].decisions[0].runId;
    expect(held).toEqual(expect.stringMatching(/^run_/));
    for (const later of decided.slice(1, 3)) expect(later.decisions[0]).toMatchObject({ decision: 'match', runId: null, flowControl: { action: 'folded', runId: held } });
    expect(decided[3].decisions[0].runId).toEqual(expect.stringMatching(/^run_/)); // another pull request, another run
    const runs = await jobSettled(app, bearer, job.id, 2);
    expect(runs).toHaveLength(2);
    const run = runs.find((one) => one.id === held)!;
    expect(run).toMatchObject({ state: 'succeeded', prompt: 'Review f3' });
    expect(new Date(run.startedAt).getTime() - lastAt).toBeGreaterThanOrEqual(1500);
    expect((await traceOf(held)).filter((event) => event.type === 'flow_control').map((event) => event.data.action)).toEqual(['folded', 'folded']);
  });

  it('starts the run by maxWait under a steady stream, and a direct invocation is never folded', async () => {
    const { job, push } = await prJob('Steady', { debounce: { period: '2s', maxWait: '3s' } });
    const first = Date.now();
    const pushed: string[] = [];
    for (let n = 0; n < 5; n++) {
      pushed.push(await push(31, `s${n}`));
      await sleep(1000);
    }
    const runs = await jobSettled(app, bearer, job.id, 2);
    const oldest = runs[runs.length - 1];
    // The first run started by its maxWait, not a period after the last push.
    expect(new Date(oldest.startedAt).getTime() - first).toBeLessThan(4500);
    expect(runs.length).toBeGreaterThanOrEqual(2);
    const direct = await createJob(app, bearer, { name: 'Invoked, debounced', promptTemplate: 'x', executionTargetId: 'local', flowControl: { debounce: { period: '1h' } } });
    const invoked = await Promise.all([1, 2].map(async () => (await api('POST', `/api/v1/jobs/${direct.id}/invocations`, {})).body.runId));
    expect(new Set(invoked).size).toBe(2);
    expect((await runSettled(app, bearer, invoked[1])).state).toBe('succeeded'); // not held for the period
  });
});
