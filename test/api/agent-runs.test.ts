// Jobs that name their agent, run end to end: the real Claude Code and Codex CLIs in the local sandbox,
// reaching a scripted model provider on loopback through the run's egress proxy (which counts the provider's
// made-up name as public), and the fake Gemini, opencode and Cursor CLIs replaying their recorded streams.
// The run's trace says what the agent did, typed; its usage says what it spent; its API key, a tenant
// secret, shows nowhere.
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestApp, type TestApp } from '../support/app';
import { createLocalExecutor } from '../../src/integrations/local-executor';
import { agentCliPath } from '../support/agent-clis';
import { startFakeModelProvider, type FakeModelProvider } from '../support/fake-model-provider';
import { call } from '../support/http';
import { accessToken, createOwner } from '../support/identity';
import { createJob } from '../support/kit';

jest.setTimeout(120_000);

const MODEL_HOST = 'models.example.test';
/** The fake CLIs are node scripts: a node outside the system folders (a Node 22 of CI's own) is bound for them. */
const nodeBind = process.execPath.startsWith('/usr/') ? [] : [{ path: path.dirname(process.execPath), writable: false }];
const API_KEY = 'sk-test-agent-runs-5f0c2e9a71d4';
const FAKE_CLIS = path.resolve(__dirname, '../support/fake-agent-clis');
const FIXTURES = path.resolve(__dirname, '../fixtures/agents');

let app: TestApp;
let fake: FakeModelProvider;
let bearer: Record<string, string>;
let codexHome: string;
let stateDir: string;

beforeAll(async () => {
  fake = await startFakeModelProvider();
  const port = new URL(fake.url).port;
  // Codex reaches a provider other than OpenAI's only through its configuration, kept where the job says (CODEX_HOME).
  codexHome = mkdtempSync(path.join(tmpdir(), 'flows-codex-home-'));
  writeFileSync(
    path.join(codexHome, 'config.toml'),
    `model_provider = "fake"\n[model_providers.fake]\nname = "fake"\nbase_url = "http://${MODEL_HOST}:${port}/v1"\nenv_key = "FAKE_MODEL_API_KEY"\nwire_api = "responses"\n`,
  );
  chmodSync(codexHome, 0o777);
  stateDir = mkdtempSync(path.join(tmpdir(), 'flows-agent-state-'));
  chmodSync(stateDir, 0o711);
  app = await startTestApp(
    {
      modelPrices: { 'gpt-5.5': { input: 1.25, cachedInput: 0.125, output: 10 } },
      localAgent: {
        command: 'true',
        timeoutSeconds: 90,
        stateDir,
        binds: [{ path: codexHome, writable: true }, { path: FAKE_CLIS, writable: false }, { path: FIXTURES, writable: false }, ...nodeBind],
        agentBins: { 'claude-code': agentCliPath('claude'), codex: agentCliPath('codex'), gemini: path.join(FAKE_CLIS, 'gemini'), opencode: path.join(FAKE_CLIS, 'opencode'), cursor: path.join(FAKE_CLIS, 'cursor-agent') },
      },
    },
    { localEgress: { resolve: async (host) => (host === MODEL_HOST ? ['127.0.0.1'] : []), isPublic: () => true } },
  );
  const owner = await createOwner(app.database.db);
  bearer = { authorization: `Bearer ${await accessToken(app, owner)}` };
  expect((await call(app, 'POST', '/api/v1/secrets', { headers: bearer, body: { name: 'MODEL_KEY', value: API_KEY } })).status).toBe(201);
});

afterAll(async () => {
  await app?.close();
  await fake?.close();
  rmSync(codexHome, { recursive: true, force: true });
  rmSync(stateDir, { recursive: true, force: true });
});

/** Invokes the job and answers its run, once ended, with its trace. */
async function runOf(jobId: string, body: Record<string, unknown> = {}) {
  const invoked = await call(app, 'POST', `/api/v1/jobs/${jobId}/invocations`, { headers: bearer, body });
  expect(invoked.status).toBe(202);
  await app.runner.idle();
  const run = (await call(app, 'GET', `/api/v1/runs/${invoked.body.runId}`, { headers: bearer })).body;
  const trace = (await call(app, 'GET', `/api/v1/runs/${run.id}/trace?limit=100`, { headers: bearer })).body as { type: string; data: Record<string, any> }[];
  return { run, trace, of: (type: string) => trace.filter((event) => event.type === type).map((event) => event.data) };
}

const invocable = { promptTemplate: 'Create hello.txt saying hello, then write notes.md.', triggers: [{ type: 'invocation' }] };

it('runs Claude Code in the sandbox: the command with its exit code, the file it wrote, its answer, tokens and cost', async () => {
  const job = await createJob(app, bearer, {
    ...invocable,
    name: 'Claude',
    model: 'claude-sonnet-4-5',
    agent: { kind: 'claude-code', maxTurns: 10 },
    env: { ANTHROPIC_BASE_URL: `http://${MODEL_HOST}:${new URL(fake.url).port}`, ANTHROPIC_API_KEY: { secret: 'MODEL_KEY' } },
  });
  expect(job.agent).toEqual({ kind: 'claude-code', maxTurns: 10 });
  const before = fake.requests.length;
  const { run, trace, of } = await runOf(job.id);
  expect(run).toMatchObject({ state: 'succeeded', result: { summary: 'Done: wrote hello.txt and notes.md', sessionId: expect.any(String) } });
  expect(run.usage).toEqual({ inputTokens: 480, outputTokens: 60, cachedTokens: 150, turns: 3, costUsd: 0.0019575, costSource: 'reported' });
  expect(of('target_provisioning')[0]).toMatchObject({ status: 'process_started', agent: 'claude-code', sandbox: 'bubblewrap' });
  expect(of('session_started')).toEqual([{ agent: 'claude-code', sessionId: run.result.sessionId, model: 'claude-sonnet-4-5' }]);
  expect(of('command')).toEqual([{ command: 'echo hello > hello.txt && cat hello.txt', exitCode: 0, output: 'hello' }]);
  expect(of('file_change')).toEqual([{ path: '/workspace/notes.md', kind: 'add' }]);
  expect(of('message')).toEqual([{ text: 'Done: wrote hello.txt and notes.md' }]);
  expect(of('agent_output').filter((data) => data.stream === 'stdout')).toEqual([]);
  // The model was asked with the tenant's key, with the flags Flows chose, and the key is nowhere in the trace.
  const asked = fake.requests.slice(before).filter((request) => request.path === '/v1/messages');
  expect(asked).toHaveLength(3);
  expect(asked.every((request) => request.apiKey === API_KEY && request.body.model === 'claude-sonnet-4-5')).toBe(true);
  expect(JSON.stringify(trace)).not.toContain(API_KEY);
});

it('runs Codex in the sandbox, able to edit (not its read-only default): its command unwrapped, the file it added, its tokens', async () => {
  const job = await createJob(app, bearer, {
    ...invocable,
    name: 'Codex',
    model: 'gpt-5.5',
    agent: { kind: 'codex' },
    env: { CODEX_HOME: codexHome, FAKE_MODEL_API_KEY: { secret: 'MODEL_KEY' } },
  });
  const { run, trace, of } = await runOf(job.id);
  expect(run).toMatchObject({ state: 'succeeded', result: { summary: 'Done: wrote hello.txt and notes.md', sessionId: expect.any(String) } });
  // Codex reports no cost: the operator's price of gpt-5.5 gives it, 150 fresh and 150 cached tokens in, 60 out.
  expect(run.usage).toEqual({ inputTokens: 300, outputTokens: 60, cachedTokens: 150, turns: 1, costUsd: 0.000806, costSource: 'computed' });
  expect(of('command')).toEqual([{ command: 'echo hello > hello.txt && cat hello.txt', exitCode: 0, output: 'hello\n' }]);
  expect(of('file_change')).toEqual([{ path: '/workspace/notes.md', kind: 'add' }]);
  expect(of('usage').at(-1)).toEqual(run.usage);
  expect(JSON.stringify(trace)).not.toContain(API_KEY);
});

it.each([
  ['gemini', { turns: 3, costSource: 'unknown' }],
  ['opencode', { turns: 3, costSource: 'reported' }],
  ['cursor', { turns: 2, costSource: 'unknown' }],
])('runs %s from its command line: typed trace and usage', async (kind, usage) => {
  const job = await createJob(app, bearer, { ...invocable, name: kind, agent: { kind } });
  const { run, of } = await runOf(job.id);
  expect(run).toMatchObject({ state: 'succeeded', usage });
  expect(of('command')).toEqual([expect.objectContaining({ command: 'echo hello > hello.txt && cat hello.txt', exitCode: 0 })]);
  expect(of('file_change')).toHaveLength(1);
  expect(of('session_started')).toHaveLength(1);
});

it('fails a run whose stream stops before its end, and keeps what came before', async () => {
  const job = await createJob(app, bearer, { ...invocable, name: 'Truncated', agent: { kind: 'gemini' }, env: { FAKE_AGENT_SCENARIO: 'truncated' } });
  const { run, of } = await runOf(job.id);
  expect(run).toMatchObject({ state: 'failed', error: 'The agent exited without its final event: its stream stopped early.' });
  expect(of('session_started')).toHaveLength(1);
});

it('stops a run that crosses its turn budget, failed with the budget and the figure', async () => {
  const job = await createJob(app, bearer, { ...invocable, name: 'Budget', agent: { kind: 'opencode', maxTurns: 1 }, env: { FAKE_AGENT_LINE_DELAY_MS: '200' } });
  const { run, of } = await runOf(job.id);
  expect(run).toMatchObject({ state: 'failed', error: 'budget_exceeded: the agent took 2 turns, over its budget of 1 (agent.maxTurns).' });
  expect(of('error')[0]).toMatchObject({ reason: 'budget_exceeded' });
  expect(of('message').map((data) => data.text)).not.toContain('I ran the command (it printed `hello`) and wrote a short summary to notes.md.');
});

it('fails a run at its start when its cost budget cannot be held: an agent that reports no cost, a model without a price', async () => {
  const job = await createJob(app, bearer, { ...invocable, name: 'Unpriced', model: 'gemini-2.5-flash', agent: { kind: 'gemini', maxCostUsd: 1 } });
  const { run, of } = await runOf(job.id);
  expect(run).toMatchObject({
    state: 'failed',
    error: '`agent.maxCostUsd` cannot be held: gemini reports no cost and FLOWS_MODEL_PRICES has no price for the model "gemini-2.5-flash", so this run\'s cost would be unknown.',
  });
  expect(of('session_started')).toEqual([]);
});

it('fails a run at its start, saying how to install the CLI, when the kind has none here', async () => {
  const bare = await startTestApp({ localAgent: { command: 'true', timeoutSeconds: 30, agentBins: { codex: '/nonexistent/codex' } } });
  try {
    const owner = await createOwner(bare.database.db);
    const headers = { authorization: `Bearer ${await accessToken(bare, owner)}` };
    const job = await createJob(bare, headers, { ...invocable, name: 'Nowhere', agent: { kind: 'codex' } });
    const invoked = await call(bare, 'POST', `/api/v1/jobs/${job.id}/invocations`, { headers, body: {} });
    await bare.runner.idle();
    const run = (await call(bare, 'GET', `/api/v1/runs/${invoked.body.runId}`, { headers })).body;
    expect(run).toMatchObject({
      state: 'failed',
      error: 'The local target has no codex CLI at /nonexistent/codex (FLOWS_AGENT_BIN_CODEX): install it (npm install -g @openai/codex) or set FLOWS_AGENT_BIN_CODEX to its path.',
      usage: null,
    });
  } finally {
    await bare.close();
  }
});

describe('saving', () => {
  it('keeps the agent, answers `command` for a job that names none, and replaces it whole on update', async () => {
    const plain = await createJob(app, bearer, { ...invocable, name: 'Plain' });
    expect(plain.agent).toEqual({ kind: 'command' });
    const changed = await call(app, 'PATCH', `/api/v1/jobs/${plain.id}`, { headers: bearer, body: { agent: { kind: 'claude-code', permissionMode: 'read-only', disallowedTools: ['WebFetch'] } } });
    expect(changed.body.agent).toEqual({ kind: 'claude-code', permissionMode: 'read-only', disallowedTools: ['WebFetch'] });
    const back = await call(app, 'PATCH', `/api/v1/jobs/${plain.id}`, { headers: bearer, body: { agent: { kind: 'codex' } } });
    expect(back.body.agent).toEqual({ kind: 'codex' });
  });

  it('refuses a setting the kind lacks, an unknown kind, and a budget for `command`, saving nothing', async () => {
    const refused = async (agent: unknown) => {
      const res = await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: { ...invocable, name: 'Refused', agent } });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      return res.body.error.message as string;
    };
    expect(await refused({ kind: 'codex', allowedTools: ['Bash'] })).toBe('`agent.allowedTools` is not a setting of `codex`; only `claude-code` and `gemini` have it.');
    expect(await refused({ kind: 'command', maxCostUsd: 1 })).toBe("`agent.maxCostUsd` is for agents whose events Flows reads, not `command` (the target's own command).");
    expect(await refused({ kind: 'aider' })).toContain('agent.kind');
    expect(await refused({ kind: 'codex', maxCostUsd: 0 })).toContain('agent.maxCostUsd');
    const names = ((await call(app, 'GET', '/api/v1/jobs', { headers: bearer })).body as { name: string }[]).map((job) => job.name);
    expect(names).not.toContain('Refused');
  });
});

describe('sessions', () => {
  const claude = () => ({
    name: `Claude session ${Math.random()}`,
    model: 'claude-sonnet-4-5',
    env: { ANTHROPIC_BASE_URL: `http://${MODEL_HOST}:${new URL(fake.url).port}`, ANTHROPIC_API_KEY: { secret: 'MODEL_KEY' } },
  });
  /** The conversation the model was sent in a run's first request: every message's text, tool use and result. */
  const firstRequestOf = (since: number, api: string) => JSON.stringify(fake.requests.slice(since).find((request) => request.path === api)?.body);

  it('continues the Claude Code session of the latest run with the same key, which the model sees, and begins another for a new key', async () => {
    const job = await createJob(app, bearer, {
      ...claude(),
      promptTemplate: 'Issue {{ data.issue }}: {{ data.ask }}',
      triggers: [{ type: 'invocation' }],
      agent: { kind: 'claude-code', continue: { key: 'data.issue' } },
    });
    const first = await runOf(job.id, { data: { issue: 7, ask: 'create hello.txt' } });
    expect(first.run.state).toBe('succeeded');
    expect(first.of('session_started')[0]).not.toHaveProperty('continuedFromRunId');
    const since = fake.requests.length;
    const second = await runOf(job.id, { data: { issue: 7, ask: 'and once more' } });
    expect(second.run.state).toBe('succeeded');
    expect(second.of('session_started')).toEqual([{ agent: 'claude-code', sessionId: first.run.result.sessionId, model: 'claude-sonnet-4-5', continuedFromRunId: first.run.id }]);
    // The model is sent the first run's prompt and turns, then the new prompt.
    const sent = firstRequestOf(since, '/v1/messages');
    expect(sent).toContain('Issue 7: create hello.txt');
    expect(sent).toContain('Issue 7: and once more');
    const other = await runOf(job.id, { data: { issue: 8, ask: 'create hello.txt' } });
    expect(other.run.result.sessionId).not.toBe(first.run.result.sessionId);
    expect(other.of('session_started')[0]).not.toHaveProperty('continuedFromRunId');
  });

  it('continues a Claude Code session unsandboxed too: its runs share one working folder path', async () => {
    const unsandboxedState = mkdtempSync(path.join(tmpdir(), 'flows-agent-state-off-'));
    const off = await startTestApp({ localAgent: { command: 'true', timeoutSeconds: 90, sandbox: 'off', stateDir: unsandboxedState, agentBins: { 'claude-code': agentCliPath('claude') } } });
    try {
      const owner = await createOwner(off.database.db);
      const headers = { authorization: `Bearer ${await accessToken(off, owner)}` };
      const job = await createJob(off, headers, {
        name: 'Unsandboxed',
        model: 'claude-sonnet-4-5',
        promptTemplate: 'Ask {{ data.n }}',
        triggers: [{ type: 'invocation' }],
        agent: { kind: 'claude-code', continue: { key: '"one"' } },
        env: { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: API_KEY },
      });
      const invoke = async (n: number) => {
        const { body } = await call(off, 'POST', `/api/v1/jobs/${job.id}/invocations`, { headers, body: { data: { n } } });
        await off.runner.idle();
        return (await call(off, 'GET', `/api/v1/runs/${body.runId}`, { headers })).body;
      };
      const first = await invoke(1);
      const since = fake.requests.length;
      const second = await invoke(2);
      expect(second).toMatchObject({ state: 'succeeded', result: { sessionId: first.result.sessionId } });
      expect(firstRequestOf(since, '/v1/messages')).toContain('Ask 1');
    } finally {
      await off.close();
      rmSync(unsandboxedState, { recursive: true, force: true });
    }
  });

  it("removes an unsandboxed session's shared folder before its run's outcome is given, so that it never takes the next run's", async () => {
    const sessionState = mkdtempSync(path.join(tmpdir(), 'flows-agent-state-off-'));
    const executor = createLocalExecutor({ command: 'true', timeoutSeconds: 30, sandbox: 'off', stateDir: sessionState, agentBins: { gemini: '/bin/true' } });
    const key = `sess_${'a'.repeat(32)}`;
    try {
      for (const runId of ['run_first', 'run_second']) {
        const spec = { tenantId: 't', targetId: 'local', runId, jobSlug: 'job', prompt: '', model: null, effort: null, timeoutSeconds: 30, env: {}, agent: { kind: 'gemini' as const }, session: { key, jobId: 'job_1', resume: null } };
        const execution = await executor.start(spec, { output: () => {}, provisioning: () => {}, sandbox: () => {} });
        expect(await execution.done).toMatchObject({ state: 'succeeded' });
        expect(existsSync(path.join(sessionState, key, 'workspace'))).toBe(false);
      }
    } finally {
      rmSync(sessionState, { recursive: true, force: true });
    }
  });

  it('continues the Codex thread of the run an invocation names', async () => {
    const job = await createJob(app, bearer, { ...invocable, name: 'Codex session', model: 'gpt-5.5', agent: { kind: 'codex' }, env: { CODEX_HOME: codexHome, FAKE_MODEL_API_KEY: { secret: 'MODEL_KEY' } } });
    const first = await runOf(job.id);
    const since = fake.requests.length;
    const second = await runOf(job.id, { continueRunId: first.run.id, prompt: 'Now say goodbye.' });
    expect(second.run.state).toBe('succeeded');
    expect(second.of('session_started')).toEqual([{ agent: 'codex', sessionId: first.run.result.sessionId, continuedFromRunId: first.run.id }]);
    // Codex reports the thread's totals (600 in by now): the run's own are what the earlier run had not spent.
    expect(second.run.usage).toEqual(first.run.usage);
    const third = await runOf(job.id, { continueRunId: second.run.id, prompt: 'And once more.' });
    expect(third.run.usage).toEqual(first.run.usage);
    const sent = firstRequestOf(since, '/v1/responses');
    expect(sent).toContain('Create hello.txt saying hello');
    expect(sent).toContain('Now say goodbye.');
  });

  it('begins a new session, saying why, when the state kept for the earlier one is gone', async () => {
    const job = await createJob(app, bearer, { ...invocable, name: 'Gemini session', agent: { kind: 'gemini', continue: { key: '"always the same"' } } });
    const first = await runOf(job.id);
    const again = await runOf(job.id);
    expect(again.of('session_started')[0]).toMatchObject({ sessionId: first.run.result.sessionId, continuedFromRunId: first.run.id });
    for (const entry of readdirSync(stateDir)) rmSync(path.join(stateDir, entry), { recursive: true, force: true });
    const cold = await runOf(job.id);
    expect(cold.run.state).toBe('succeeded');
    expect(cold.of('session_started')[0]).toEqual({
      agent: 'gemini',
      sessionId: expect.not.stringMatching(first.run.result.sessionId),
      model: 'gemini-2.5-flash',
      notContinued: `the state kept for run ${again.run.id}'s session is gone`,
    });
  });

  it('keeps a session’s state while a run of it is kept, and sweeps it once retention has deleted the last', async () => {
    const job = await createJob(app, bearer, { ...invocable, name: 'Gemini retention', agent: { kind: 'gemini', continue: { key: 'data.issue' } } });
    const ofJob = () =>
      readdirSync(stateDir).filter((key) => {
        const owner = path.join(stateDir, key, 'owner.json');
        return existsSync(owner) && JSON.parse(readFileSync(owner, 'utf8')).jobId === job.id;
      });
    const old = await runOf(job.id, { data: { issue: 1 } });
    await runOf(job.id, { data: { issue: 2 } });
    expect(ofJob()).toHaveLength(2);
    // Older than the grace a state gets while its first run records its session.
    const hoursAgo = new Date(Date.now() - 2 * 3_600_000);
    for (const key of readdirSync(stateDir)) if (existsSync(path.join(stateDir, key, 'owner.json'))) utimesSync(path.join(stateDir, key, 'owner.json'), hoursAgo, hoursAgo);
    await app.runner.sweepLeftovers();
    expect(ofJob()).toHaveLength(2);

    // Retention keeps the newest run of each job: the run of issue 1 goes, and its session's state with it.
    await app.sweeps.pruneRuns({ before: null, maxPerJob: 1, until: Date.now() + 10_000 });
    expect((await call(app, 'GET', `/api/v1/runs/${old.run.id}`, { headers: bearer })).status).toBe(404);
    await app.runner.sweepLeftovers();
    expect(ofJob()).toHaveLength(1);
    const kept = await runOf(job.id, { data: { issue: 2 } });
    expect(kept.of('session_started')[0]).toHaveProperty('continuedFromRunId');
    const anew = await runOf(job.id, { data: { issue: 1 } });
    expect(anew.run.state).toBe('succeeded');
    expect(anew.of('session_started')[0]).not.toHaveProperty('continuedFromRunId');
    expect(anew.run.result.sessionId).not.toBe(old.run.result.sessionId);
  });

  it('refuses to continue a run of another job, or for a job whose agent is its command; and a key that does not compile', async () => {
    const codex = await createJob(app, bearer, { ...invocable, name: 'Refuses', agent: { kind: 'opencode' } });
    const plain = await createJob(app, bearer, { ...invocable, name: 'Plain command' });
    const elsewhere = await runOf(plain.id);
    const invoke = (jobId: string, continueRunId: string) => call(app, 'POST', `/api/v1/jobs/${jobId}/invocations`, { headers: bearer, body: { continueRunId } });
    const other = await invoke(codex.id, elsewhere.run.id);
    expect(other.status).toBe(400);
    expect(other.body.error.message).toBe(`\`continueRunId\` "${elsewhere.run.id}" is not a run of this job.`);
    const command = await invoke(plain.id, elsewhere.run.id);
    expect(command.status).toBe(400);
    expect(command.body.error.message).toBe("`continueRunId` is for agents whose sessions Flows keeps; this job's `agent.kind` is `command`.");
    const bad = await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: { ...invocable, name: 'Bad key', agent: { kind: 'codex', continue: { key: 'data.(' } } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("`agent.continue.key` CEL parse error");
  });
});
