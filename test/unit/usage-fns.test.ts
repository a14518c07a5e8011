// The window a usage request asks for, and the database's sums made into the answer: numbers as either
// database answers them, costs to the millionth, the order of groups, the total as their sum.
import { usageSummary, usageWindow, type UsageRow } from '../../src/usage/usage-fns';

const NOW = new Date('2025-06-04T08:00:00.000Z');

describe('usageWindow', () => {
  it.each([
    [{}, '2025-05-05T08:00:00.000Z', '2025-06-04T08:00:00.000Z'],
    [{ until: '2025-03-31T00:00:00Z' }, '2025-03-01T00:00:00.000Z', '2025-03-31T00:00:00.000Z'],
    [{ since: '2025-06-01T00:00:00+02:00' }, '2025-05-31T22:00:00.000Z', '2025-06-04T08:00:00.000Z'],
    [{ since: '2024-03-01T00:00:00Z', until: '2025-03-02T00:00:00Z' }, '2024-03-01T00:00:00.000Z', '2025-03-02T00:00:00.000Z'],
  ])('%j is [%s, %s)', (query, since, until) => {
    const window = usageWindow(query, NOW);
    expect([window.since.toISOString(), window.until.toISOString()]).toEqual([since, until]);
  });

  it.each([
    [{ since: '2025-06-04T08:00:00Z' }, '`since` must be before `until`.'],
    [{ since: '2025-03-02T00:00:00Z', until: '2025-03-01T00:00:00Z' }, '`since` must be before `until`.'],
    [{ since: '2024-03-01T00:00:00Z', until: '2025-03-02T00:00:00.001Z' }, 'The window from `since` to `until` may span at most 366 days.'],
    [{ until: '1970-01-02T00:00:00Z' }, expect.stringContaining('`since` (30 days before `until`) would fall outside')],
  ])('refuses %j', (query, message) => {
    expect(() => usageWindow(query, NOW)).toThrow(expect.objectContaining({ status: 400, code: 'validation_failed', message }));
  });
});

const row = (key: string, costUsd: unknown, extra: Partial<UsageRow> = {}): UsageRow => ({
  key,
  jobSlug: `slug-${key}`,
  runs: 1n,
  inputTokens: '10',
  outputTokens: 2,
  cachedTokens: null,
  turns: 1n,
  costUsd,
  unknownCostRuns: 0n,
  ...extra,
});

describe('usageSummary', () => {
  const window = { since: new Date('2025-03-01T00:00:00Z'), until: new Date('2025-03-08T00:00:00Z') };

  it('orders jobs by cost, then id, and sums the total to the millionth', () => {
    const summary = usageSummary(window, 'job', [row('job_b', null, { unknownCostRuns: 1n }), row('job_c', 0.1), row('job_a', null), row('job_d', 0.2 + 1e-9)]);
    expect(summary.groups.map((group) => [group.jobId, group.jobSlug, group.costUsd])).toEqual([
      ['job_d', 'slug-job_d', 0.2],
      ['job_c', 'slug-job_c', 0.1],
      ['job_a', 'slug-job_a', 0],
      ['job_b', 'slug-job_b', 0],
    ]);
    expect(summary.total).toEqual({ runs: 4, inputTokens: 40, outputTokens: 8, cachedTokens: 0, turns: 4, costUsd: 0.3, unknownCostRuns: 1 });
    expect(summary).toMatchObject({ since: '2025-03-01T00:00:00.000Z', until: '2025-03-08T00:00:00.000Z', groupBy: 'job' });
  });

  it('orders days oldest first, without job fields', () => {
    const summary = usageSummary(window, 'day', [row('2025-03-03', 1), row('2025-03-01', 5)]);
    expect(summary.groups).toEqual([
      { day: '2025-03-01', runs: 1, inputTokens: 10, outputTokens: 2, cachedTokens: 0, turns: 1, costUsd: 5, unknownCostRuns: 0 },
      { day: '2025-03-03', runs: 1, inputTokens: 10, outputTokens: 2, cachedTokens: 0, turns: 1, costUsd: 1, unknownCostRuns: 0 },
    ]);
  });

  it('answers zeros and no groups for a window without usage', () => {
    expect(usageSummary(window, 'day', [])).toMatchObject({ total: { runs: 0, inputTokens: 0, outputTokens: 0, cachedTokens: 0, turns: 0, costUsd: 0, unknownCostRuns: 0 }, groups: [] });
  });
});
