// The `flows` CLI and the coding agents, run as a child process against a listening server: a job's agent
// and its settings, a run's usage, its trace read as what the agent said, ran and changed, and an
// invocation that continues a run's session (refused here for a run of another job, with the API's reason).
import { startCliSession, type CliSession } from '../support/cli-session';
import { createJob } from '../support/kit';
import { AGENT_TRACE, insertTracedRun } from '../support/traced-runs';

let cli: CliSession;
let jobId: string;
let runId: string;

beforeAll(async () => {
  cli = await startCliSession();
  jobId = (
    await createJob(cli.server.app, cli.headers, {
      name: 'Fix bugs',
      slug: 'fix-bugs',
      promptTemplate: 'Fix it',
      model: 'claude-sonnet-4-5',
      agent: { kind: 'claude-code', maxTurns: 30, maxCostUsd: 2.5, continue: { key: 'data.issue' } },
      triggers: [{ type: 'invocation' }],
    })
  ).id;
  const usage = { inputTokens: 48210, outputTokens: 3120, cachedTokens: 12000, turns: 7, costUsd: 0.4213, costSource: 'reported' };
  runId = await insertTracedRun(cli.server.app.database.db, { tenantId: cli.owner.tenantId, jobId, state: 'succeeded', events: AGENT_TRACE, usage });
});
afterAll(() => cli?.close());

it("shows a job's agent with its settings", async () => {
  const { code, stdout } = await cli.flows(['jobs', 'get', 'fix-bugs']);
  expect(code).toBe(0);
  expect(stdout).toContain('agent: claude-code (at most 30 turns; at most $2.5; continues sessions by data.issue)  model: claude-sonnet-4-5');
});

it("shows a run's usage, and its trace as what the agent said, ran and changed", async () => {
  const run = await cli.flows(['runs', 'get', runId]);
  expect(run.stdout).toContain('usage: 48210 tokens in (12000 cached), 3120 out, 7 turns, $0.4213 (reported)');
  const { code, stdout } = await cli.flows(['runs', 'trace', runId]);
  expect(code).toBe(0);
  const lines = stdout.split('\n');
  expect(lines).toContain('— claude-code session sess-7f3a9c (claude-sonnet-4-5)');
  expect(lines.some((line) => line.startsWith('$ echo "<b>bold</b>"') && line.endsWith('exit 1'))).toBe(true);
  expect(lines).toContain('  FAIL test/a.test.ts');
  expect(lines).toContain('$ git status --short exit 0');
  expect(lines.some((line) => /^update src\/deeply-nested-folder/.test(line))).toBe(true);
  expect(lines).toContain('I will look at <script>alert("said")</script> first.');
});

it("continues a run's session on invocation, and says why not for another job's run", async () => {
  const other = await createJob(cli.server.app, cli.headers, { name: 'Other', slug: 'other', promptTemplate: 'x', agent: { kind: 'codex' }, triggers: [{ type: 'invocation' }] });
  const { code, stderr } = await cli.flows(['invoke', other.slug, '--continue', runId]);
  expect(code).toBe(1);
  expect(stderr).toContain(`\`continueRunId\` "${runId}" is not a run of this job.`);
});

it("shows and sets the tenant's monthly budget, and goes back to the server's default", async () => {
  const set = await cli.flows(['budget', '--set', '0.25']);
  expect(set.code).toBe(0);
  expect(set.stdout).toContain("a monthly budget of $0.25 (the tenant's own); spent $0.4213 from ");
  expect(set.stdout).toContain('spent: no new run starts until next month or a higher budget');
  const back = await cli.flows(['budget', '--set', 'default']);
  expect(back.stdout).toContain('no monthly budget; spent $0.4213');
  expect((await cli.flows(['budget', '--set', 'lots'])).code).toBe(2);
});
