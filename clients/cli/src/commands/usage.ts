// `flows usage`: what the runs of a window spent, per job or per day, as a table for people or the whole
// answer as JSON for scripts.
import { Option, type Command } from 'commander';
import type { Budget, UsageSummary, UsageTotals } from '@flows/sdk';
import { action } from '../context';
import { CliError, EXIT } from '../errors';
import { dim } from '../output';

/** A bare day (`2025-03-01`) is its first instant in UTC; anything else goes to the server as written. */
const instant = (value: string) => (/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);

const tokens = (count: number) => count.toLocaleString('en-US');

/** Known costs in dollars, and how many runs' costs are unknown (so a sum that leaves some out says so). */
const cost = ({ costUsd, unknownCostRuns }: UsageTotals) => `$${costUsd.toFixed(4)}${unknownCostRuns ? ` + ${unknownCostRuns} unknown` : ''}`;

/** The budget in force, where it comes from, and what this month spent of it. */
function budgetLines(budget: Budget): string[] {
  const source = budget.tenantMonthlyUsd !== null ? 'the tenant\'s own' : budget.defaultMonthlyUsd !== null ? 'the server\'s default' : '';
  const limit = budget.monthlyUsd === null ? 'no monthly budget' : `a monthly budget of $${budget.monthlyUsd} (${source})`;
  const unknown = budget.unknownCostRuns ? `, and ${budget.unknownCostRuns} runs of unknown cost` : '';
  return [`${limit}; spent $${budget.spentUsd.toFixed(4)} from ${budget.since.slice(0, 10)} to ${budget.until.slice(0, 10)}${unknown}`, ...(budget.exhausted ? ['spent: no new run starts until next month or a higher budget'] : [])];
}

export function usageCommands(program: Command) {
  program
    .command('budget')
    .description("the tenant's monthly budget for its agents' cost and this month's spending; --set changes it")
    .option('--set <dollars>', "the tenant's own budget in US dollars a month, or `default` for the server's")
    .action(
      action(async ({ flows, print }, options: { set?: string }) => {
        let budget: Budget;
        if (options.set === undefined) budget = await flows.budget.get();
        else {
          const amount = options.set === 'default' ? null : Number(options.set);
          if (amount !== null && !(amount > 0)) throw new CliError('--set takes an amount of US dollars above 0, or `default`.', EXIT.usage);
          budget = await flows.budget.set(amount);
        }
        print.value(budget, () => budgetLines(budget).forEach((line) => print.line(line)));
      }),
    );

  program
    .command('usage')
    .description('tokens and cost of the runs created in a window (the last 30 days by default), per job or per day')
    .option('--since <when>', 'start of the window (a date-time, or a day: 2025-03-01 is its first instant in UTC); default: 30 days before --until')
    .option('--until <when>', 'end of the window, not included; default: now')
    .addOption(new Option('--by <grouping>', 'one line per job (the costliest first) or per UTC day').choices(['job', 'day']).default('job'))
    .action(
      action(async ({ flows, print }, options: { since?: string; until?: string; by: UsageSummary['groupBy'] }) => {
        const summary = await flows.usage({
          ...(options.since ? { since: instant(options.since) } : {}),
          ...(options.until ? { until: instant(options.until) } : {}),
          groupBy: options.by,
        });
        print.value(summary, () => {
          print.line(dim(`Runs created from ${summary.since} to ${summary.until}, those with usage:`));
          print.table(summary.groups, [
            [summary.groupBy, (group) => (summary.groupBy === 'job' ? (group.jobSlug ?? group.jobId ?? '') : (group.day ?? ''))],
            ['runs', (group) => String(group.runs)],
            ['tokens in', (group) => tokens(group.inputTokens)],
            ['tokens out', (group) => tokens(group.outputTokens)],
            ['cost', cost],
          ]);
          const { total } = summary;
          print.line(`Total: ${total.runs} runs, ${tokens(total.inputTokens)} tokens in (${tokens(total.cachedTokens)} cached), ${tokens(total.outputTokens)} out, ${total.turns} turns, ${cost(total)}.`);
        });
      }),
    );
}
