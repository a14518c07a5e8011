// `flows runs …`: list, show, stop, read the trace, and watch a run live until it ends.
import type { Command } from 'commander';
import type { Run, RunState, TraceEvent } from '@flows/sdk';
import { action, all, type CommandContext } from '../context';
import { CliError, EXIT } from '../errors';
import { bold, dim, state } from '../output';

const showRun = ({ print }: CommandContext, run: Run) =>
  print.value(run, () => {
    print.line(`${bold(run.name)} ${dim(run.id)} is ${state(run.state)}${run.attempt > 1 ? ` (attempt ${run.attempt})` : ''}`);
    print.line(`job: ${run.jobId}  trigger: ${run.trigger.type}  created: ${run.createdAt}${run.finishedAt ? `  finished: ${run.finishedAt}` : ''}`);
    if (run.error) print.line(`error: ${run.error}`);
    if (run.result) print.line(`result: ${JSON.stringify(run.result)}`);
  });

/** A trace event as a line for people. */
function traceLine(event: TraceEvent): string {
  const data = event.data as Record<string, any>;
  if (event.type === 'agent_output') return `${data.stream === 'stderr' ? dim('err ') : ''}${data.text}`;
  if (event.type === 'state_changed') return dim(`— ${data.from} → ${data.to}`);
  return dim(`— ${event.type} ${JSON.stringify(data)}`);
}

/** Prints the run's trace as it comes until the run ends; the exit code tells whether it succeeded. */
export async function followRun(context: CommandContext, runId: string): Promise<void> {
  for await (const event of context.flows.runs.follow(runId)) {
    if (context.print.json) process.stdout.write(`${JSON.stringify(event)}\n`);
    else context.print.line(traceLine(event));
  }
  const run = await context.flows.runs.get(runId);
  if (!context.print.json) context.print.line(`Run ${run.id} ${state(run.state)}${run.error ? `: ${run.error}` : '.'}`);
  if (run.state !== 'succeeded') throw new CliError('', EXIT.runNotSucceeded);
}

export function runsCommands(program: Command) {
  const runs = program.command('runs').description('list, show, stop, read and watch runs');
  runs
    .command('list')
    .description('runs, newest first')
    .option('--job <job>', 'only runs of this job (id or slug)')
    .option('--state <state>', 'only runs in this state')
    .option('--limit <n>', 'at most this many', (value) => Number(value), 50)
    .action(
      action(async ({ flows, print }, options: { job?: string; state?: RunState; limit: number }) => {
        const rows: Run[] = [];
        for await (const run of flows.runs.list({ jobId: options.job, state: options.state })) {
          rows.push(run);
          if (rows.length >= options.limit) break;
        }
        print.table(rows, [
          ['id', (run) => run.id],
          ['state', (run) => state(run.state)],
          ['name', (run) => run.name],
          ['created', (run) => run.createdAt],
        ]);
      }),
    );
  runs.command('get <run>').description('one run').action(action(async (context, id: string) => showRun(context, await context.flows.runs.get(id))));
  runs.command('stop <run>').description('stop a queued or active run').action(action(async (context, id: string) => showRun(context, await context.flows.runs.stop(id))));
  runs
    .command('trace <run>')
    .description('the run\'s trace so far')
    .action(
      action(async ({ flows, print }, id: string) => {
        const events = await all(flows.runs.trace(id));
        print.value(events, () => events.forEach((event) => print.line(traceLine(event))));
      }),
    );
  runs
    .command('watch <run>')
    .description('follow the run live until it ends; exit code 0 when it succeeded, 3 otherwise')
    .action(action(async (context, id: string) => followRun(context, id)));
}
