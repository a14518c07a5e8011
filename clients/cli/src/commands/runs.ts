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
    if (run.usage) print.line(`usage: ${usageText(run.usage)}`);
    if (run.error) print.line(`error: ${run.error}`);
    if (run.result) print.line(`result: ${JSON.stringify(run.result)}`);
  });

/** What a run's agent spent, in a line. */
export function usageText(usage: NonNullable<Run['usage']>): string {
  const cost = usage.costUsd === null ? 'cost unknown' : `$${usage.costUsd.toFixed(4)} (${usage.costSource})`;
  return `${usage.inputTokens} tokens in (${usage.cachedTokens} cached), ${usage.outputTokens} out, ${usage.turns} turns, ${cost}`;
}

/** A command's output under it, dimmed, its first lines only. */
const OUTPUT_LINES = 10;
function outputLines(output: string): string[] {
  const lines = output.replace(/\n$/, '').split('\n').filter((line, n, all) => line || n < all.length - 1);
  const shown = lines.slice(0, OUTPUT_LINES).map((line) => dim(`  ${line}`));
  return lines.length > OUTPUT_LINES ? [...shown, dim(`  … ${lines.length - OUTPUT_LINES} more lines`)] : shown;
}

/** A trace event as lines for people: what the agent said, ran and changed as such, the rest as data. */
function traceLine(event: TraceEvent): string {
  const data = event.data as Record<string, any>;
  switch (event.type) {
    case 'agent_output':
      return `${data.stream === 'stderr' ? dim('err ') : ''}${data.text}`;
    case 'state_changed':
      return dim(`— ${data.from} → ${data.to}`);
    case 'session_started': {
      const from = data.continuedFromRunId ? `, continued from run ${data.continuedFromRunId}` : data.notContinued ? `, new (${data.notContinued})` : '';
      return dim(`— ${data.agent} session ${data.sessionId}${data.model ? ` (${data.model})` : ''}${from}`);
    }
    case 'message':
      return String(data.text);
    case 'command':
      return [`${bold(`$ ${data.command}`)} ${data.exitCode === 0 ? dim('exit 0') : `exit ${data.exitCode ?? '?'}`}`, ...outputLines(String(data.output ?? ''))].join('\n');
    case 'file_change':
      return `${data.kind} ${data.path}`;
    case 'tool_call':
      return dim(`— ${data.name} ${JSON.stringify(data.input)}`);
    case 'tool_result':
      return data.isError ? `tool error: ${String(data.output).split('\n')[0]}` : dim(`— result of ${data.id}`);
    case 'usage':
      return dim(`— ${usageText(data as NonNullable<Run['usage']>)}`);
    default:
      return dim(`— ${event.type} ${JSON.stringify(data)}`);
  }
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
