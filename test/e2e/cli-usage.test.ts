// `flows usage` as a person and a script use it, run as a child process against a listening server: the
// table per job and per day, known and unknown costs, the default window, --json, and a wrong grouping or
// window with the documented exit codes. The login is what `flows login` leaves: a real token of the
// server's own authorization server in the credentials file.
import type { components } from '../../generated/openapi';
import { newId } from '../../src/lib/ids';
import { startCliSession, type CliSession } from '../support/cli-session';
import { createJob } from '../support/kit';

let cli: CliSession;
const jobs: Record<string, string> = {};
const flows = (args: string[]) => cli.flows(args);

/** A finished run written straight to the database, created at `createdAt`, with what its agent spent. */
async function runOf(jobId: string, createdAt: string, usage: components['schemas']['RunUsage'] | null) {
  await cli.server.app.database.db.run.create({
    data: { id: newId('run'), tenantId: cli.owner.tenantId, jobId, name: 'n', state: 'succeeded', triggerType: 'invocation', prompt: 'p', inputs: {}, createdAt: new Date(createdAt), ...(usage ? { usage } : {}) },
  });
}

const spent = (inputTokens: number, outputTokens: number, costUsd: number | null): components['schemas']['RunUsage'] => ({ inputTokens, outputTokens, cachedTokens: 0, turns: 2, costUsd, costSource: costUsd === null ? 'unknown' : 'reported' });

beforeAll(async () => {
  cli = await startCliSession();
  for (const slug of ['triage', 'fix-issues']) jobs[slug] = (await createJob(cli.server.app, cli.headers, { name: slug, slug, promptTemplate: 'x' })).id;
  await runOf(jobs.triage, '2025-03-01T09:00:00Z', spent(1200, 300, 0.05));
  await runOf(jobs.triage, '2025-03-02T09:00:00Z', spent(800, 100, null));
  await runOf(jobs['fix-issues'], '2025-03-02T10:00:00Z', spent(48210, 3120, 0.1843));
  await runOf(jobs['fix-issues'], '2025-03-02T11:00:00Z', null);
  // After the window.
  await runOf(jobs.triage, '2025-03-08T00:00:00Z', spent(1, 1, 9));
});
afterAll(() => cli?.close());

/** The printed table's rows, each as its cells (columns are two spaces or more apart). */
const rowsOf = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .slice(1, -1)
    .map((line) => line.trim().split(/\s{2,}/));

it('prints a table per job, the costliest first, with unknown costs counted, and the total', async () => {
  const { code, stdout } = await flows(['usage', '--since', '2025-03-01', '--until', '2025-03-08']);
  expect(code).toBe(0);
  expect(stdout.split('\n')[0]).toBe('Runs created from 2025-03-01T00:00:00.000Z to 2025-03-08T00:00:00.000Z, those with usage:');
  expect(rowsOf(stdout)).toEqual([
    ['JOB', 'RUNS', 'TOKENS IN', 'TOKENS OUT', 'COST'],
    ['fix-issues', '1', '48,210', '3,120', '$0.1843'],
    ['triage', '2', '2,000', '400', '$0.0500 + 1 unknown'],
  ]);
  expect(stdout.trim().split('\n').pop()).toBe('Total: 3 runs, 50,210 tokens in (0 cached), 3,520 out, 6 turns, $0.2343 + 1 unknown.');
});

it('prints a line per UTC day with --by day', async () => {
  const { code, stdout } = await flows(['usage', '--since', '2025-03-01T00:00:00Z', '--until', '2025-03-08T00:00:00Z', '--by', 'day']);
  expect(code).toBe(0);
  expect(rowsOf(stdout)).toEqual([
    ['DAY', 'RUNS', 'TOKENS IN', 'TOKENS OUT', 'COST'],
    ['2025-03-01', '1', '1,200', '300', '$0.0500'],
    ['2025-03-02', '2', '49,010', '3,220', '$0.1843 + 1 unknown'],
  ]);
});

it('prints the whole answer as JSON with --json', async () => {
  const { code, stdout } = await flows(['usage', '--since', '2025-03-01', '--until', '2025-03-08', '--json']);
  expect(code).toBe(0);
  expect(JSON.parse(stdout)).toEqual({
    since: '2025-03-01T00:00:00.000Z',
    until: '2025-03-08T00:00:00.000Z',
    groupBy: 'job',
    total: { runs: 3, inputTokens: 50210, outputTokens: 3520, cachedTokens: 0, turns: 6, costUsd: 0.2343, unknownCostRuns: 1 },
    groups: [
      { jobId: jobs['fix-issues'], jobSlug: 'fix-issues', runs: 1, inputTokens: 48210, outputTokens: 3120, cachedTokens: 0, turns: 2, costUsd: 0.1843, unknownCostRuns: 0 },
      { jobId: jobs.triage, jobSlug: 'triage', runs: 2, inputTokens: 2000, outputTokens: 400, cachedTokens: 0, turns: 4, costUsd: 0.05, unknownCostRuns: 1 },
    ],
  });
});

it('reads the last 30 days by default', async () => {
  const { code, stdout } = await flows(['usage', '--json']);
  expect(code).toBe(0);
  const summary = JSON.parse(stdout);
  expect(Date.parse(summary.until) - Date.parse(summary.since)).toBe(30 * 86_400_000);
  expect(summary.groups).toEqual([]);
  expect((await flows(['usage'])).stdout).toContain('(none)\nTotal: 0 runs');
});

it('refuses a grouping it does not know (exit 2) and a window the server refuses (exit 1)', async () => {
  const grouping = await flows(['usage', '--by', 'week']);
  expect([grouping.code, grouping.stderr]).toEqual([2, expect.stringContaining("'week' is invalid")]);
  const window = await flows(['usage', '--since', '2025-03-08', '--until', '2025-03-01']);
  expect([window.code, window.stderr.trim()]).toEqual([1, expect.stringMatching(/^flows: validation_failed: `since` must be before `until`\. \(request \S+\)$/)]);
});
