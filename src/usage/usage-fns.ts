// Pure rules of usage: the window a request asks for, and the sums the database answers made into the
// contract's totals and groups, in their order.
import type { components } from '../../generated/openapi';
import { ValidationFailed } from '../lib/errors';
import { checkInstant } from '../lib/instants';

export type UsageSummary = components['schemas']['UsageSummary'];
export type UsageTotals = components['schemas']['UsageTotals'];
export type UsageGroup = components['schemas']['UsageGroup'];
export type UsageGrouping = UsageSummary['groupBy'];
export type Budget = components['schemas']['Budget'];

const DAY_MS = 86_400_000;
export const DEFAULT_WINDOW_DAYS = 30;
export const MAX_WINDOW_DAYS = 366;

/** The window `[since, until)`: until defaults to now, since to 30 days before until; at most 366 days long. */
export function usageWindow(query: { since?: string; until?: string }, now: Date): { since: Date; until: Date } {
  // The contract's date-time format has checked what was sent; a derived bound is checked here.
  const until = query.until ? new Date(query.until) : now;
  const since = query.since ? new Date(query.since) : checkInstant(new Date(until.getTime() - DEFAULT_WINDOW_DAYS * DAY_MS), 'since', `${DEFAULT_WINDOW_DAYS} days before \`until\``);
  if (since >= until) throw new ValidationFailed('`since` must be before `until`.');
  if (until.getTime() - since.getTime() > MAX_WINDOW_DAYS * DAY_MS) throw new ValidationFailed(`The window from \`since\` to \`until\` may span at most ${MAX_WINDOW_DAYS} days.`);
  return { since, until };
}

/**
 * One group's sums as the database answers them: counts and sums come back as numbers, bigints (SQLite)
 * or numeric text (PostgreSQL), and a sum over no known cost as null.
 */
export interface UsageRow {
  key: string;
  jobSlug: string | null;
  runs: unknown;
  inputTokens: unknown;
  outputTokens: unknown;
  cachedTokens: unknown;
  turns: unknown;
  costUsd: unknown;
  unknownCostRuns: unknown;
}

const count = (value: unknown) => (value === null || value === undefined ? 0 : Number(value));
/** Dollars to the millionth: a sum of binary fractions would otherwise answer 0.30000000000000004. */
const dollars = (value: number) => Math.round(value * 1e6) / 1e6;

const ZERO: UsageTotals = { runs: 0, inputTokens: 0, outputTokens: 0, cachedTokens: 0, turns: 0, costUsd: 0, unknownCostRuns: 0 };

const totalsOf = (row: UsageRow): UsageTotals => ({
  runs: count(row.runs),
  inputTokens: count(row.inputTokens),
  outputTokens: count(row.outputTokens),
  cachedTokens: count(row.cachedTokens),
  turns: count(row.turns),
  costUsd: dollars(count(row.costUsd)),
  unknownCostRuns: count(row.unknownCostRuns),
});

function added(a: UsageTotals, b: UsageTotals): UsageTotals {
  return {
    runs: a.runs + b.runs,
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cachedTokens: a.cachedTokens + b.cachedTokens,
    turns: a.turns + b.turns,
    costUsd: dollars(a.costUsd + b.costUsd),
    unknownCostRuns: a.unknownCostRuns + b.unknownCostRuns,
  };
}

/** Per job the costliest first, then by job id; per day the oldest first. */
const ORDER: Record<UsageGrouping, (a: UsageGroup, b: UsageGroup) => number> = {
  job: (a, b) => b.costUsd - a.costUsd || (a.jobId! < b.jobId! ? -1 : a.jobId! > b.jobId! ? 1 : 0),
  day: (a, b) => (a.day! < b.day! ? -1 : a.day! > b.day! ? 1 : 0),
};

/** The answer of `GET /api/v1/usage` from the window and its groups' sums; the total is their sum. */
export function usageSummary(window: { since: Date; until: Date }, groupBy: UsageGrouping, rows: UsageRow[]): UsageSummary {
  const groups = rows
    .map((row): UsageGroup => (groupBy === 'job' ? { jobId: row.key, jobSlug: row.jobSlug ?? row.key, ...totalsOf(row) } : { day: row.key, ...totalsOf(row) }))
    .sort(ORDER[groupBy]);
  return { since: window.since.toISOString(), until: window.until.toISOString(), groupBy, total: groups.reduce(added, ZERO), groups };
}

/** The calendar month (UTC) of `now`: `[since, until)`. */
export function monthOf(now: Date): { since: Date; until: Date } {
  return { since: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)), until: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)) };
}

/** The tenant's budget in force (its own, else the operator's default) and this month's spending of it. */
export function budgetOf(month: { since: Date; until: Date }, own: number | null, fallback: number | null, spent: UsageTotals): Budget {
  const monthlyUsd = own ?? fallback;
  return {
    monthlyUsd,
    tenantMonthlyUsd: own,
    defaultMonthlyUsd: fallback,
    spentUsd: spent.costUsd,
    unknownCostRuns: spent.unknownCostRuns,
    since: month.since.toISOString(),
    until: month.until.toISOString(),
    exhausted: monthlyUsd !== null && spent.costUsd >= monthlyUsd,
  };
}

/** What a refused run is told: the budget, what is spent, and when runs start again. */
export const budgetMessage = (budget: Budget) =>
  `No run was started: the tenant's monthly budget of $${budget.monthlyUsd} is spent ($${budget.spentUsd} since ${budget.since.slice(0, 10)}); runs start again on ${budget.until.slice(0, 10)}, or once the budget is raised (PUT /api/v1/budget).`;
