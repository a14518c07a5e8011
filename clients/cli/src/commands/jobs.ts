// `flows jobs …` and `flows invoke`.
import type { Command } from 'commander';
import type { Job, JobCreate, JobUpdate } from '@flows/sdk';
import { action, all, type CommandContext } from '../context';
import { CliError, EXIT } from '../errors';
import { bold, dim, jsonArgument, state } from '../output';
import { followRun } from './runs';

/** What a new run does when its concurrency key is busy, in words. */
const ON_CONFLICT = { queue: 'waits its turn', 'cancel-running': 'supersedes the older ones', skip: 'is skipped' } as const;

const showJob = ({ print }: CommandContext, job: Job) =>
  print.value(job, () => {
    print.line(`${bold(job.name)} (${job.slug}) ${dim(job.id)}`);
    print.line(`enabled: ${job.enabled}  target: ${job.executionTargetId ?? 'default'}  concurrency: ${job.concurrencyLimit}`);
    print.line(`agent: ${agentText(job.agent)}${job.model ? `  model: ${job.model}` : ''}${job.effort ? `  effort: ${job.effort}` : ''}`);
    const keyed = job.flowControl?.concurrency;
    if (keyed) print.line(`per key: ${keyed.limit} at once of ${keyed.key ?? 'the whole job'}, a new run ${ON_CONFLICT[keyed.onConflict ?? 'queue']}`);
    print.line(`triggers: ${job.triggers.map((trigger) => `${trigger.type}${trigger.enabled ? '' : ' (disabled)'}`).join(', ') || 'none'}`);
    print.line(`prompt: ${job.promptTemplate.split('\n')[0]}${job.promptTemplate.includes('\n') ? ' …' : ''}`);
  });

/** The job's agent and its settings, in a line. */
function agentText(agent: Job['agent']): string {
  const settings = [
    agent.maxTurns !== undefined && `at most ${agent.maxTurns} turns`,
    agent.maxCostUsd !== undefined && `at most $${agent.maxCostUsd}`,
    agent.permissionMode === 'read-only' && 'read-only',
    agent.allowedTools?.length && `allowed: ${agent.allowedTools.join(', ')}`,
    agent.disallowedTools?.length && `denied: ${agent.disallowedTools.join(', ')}`,
    agent.continue && `continues sessions by ${agent.continue.key}`,
  ].filter(Boolean);
  return `${agent.kind}${settings.length ? ` (${settings.join('; ')})` : ''}`;
}

export function jobsCommands(program: Command) {
  const jobs = program.command('jobs').description('list, show, create, change, enable, disable and delete jobs');
  jobs
    .command('list')
    .description('the jobs of your tenant, newest first')
    .option('--enabled <boolean>', 'only enabled (true) or disabled (false) jobs')
    .action(
      action(async ({ flows, print }, options: { enabled?: string }) => {
        const rows = await all(flows.jobs.list(options.enabled === undefined ? {} : { enabled: options.enabled === 'true' }));
        print.table(rows, [
          ['slug', (job) => job.slug],
          ['name', (job) => job.name],
          ['enabled', (job) => String(job.enabled)],
          ['triggers', (job) => [...new Set(job.triggers.map((trigger) => trigger.type))].join(',')],
          ['id', (job) => dim(job.id)],
        ]);
      }),
    );
  jobs.command('get <job>').description('one job, by id or slug').action(action(async (context, ref: string) => showJob(context, await context.flows.jobs.get(ref))));
  jobs
    .command('create')
    .description('create a job from a JSON file (the API\'s JobCreate)')
    .requiredOption('-f, --file <file>', 'the job as JSON (- for stdin)')
    .action(action(async (context, options: { file: string }) => showJob(context, await context.flows.jobs.create(jsonArgument(options.file === '-' ? '-' : `@${options.file}`, 'the job') as JobCreate))));
  jobs
    .command('update <job>')
    .description('change a job with a JSON patch file (the API\'s JobUpdate)')
    .requiredOption('-f, --file <file>', 'the changes as JSON (- for stdin)')
    .action(action(async (context, ref: string, options: { file: string }) => showJob(context, await context.flows.jobs.update(ref, jsonArgument(options.file === '-' ? '-' : `@${options.file}`, 'the changes') as JobUpdate))));
  jobs.command('enable <job>').description('let the job be invoked and its triggers fire').action(action(async (context, ref: string) => showJob(context, await context.flows.jobs.enable(ref))));
  jobs.command('disable <job>').description('stop the job from being invoked or triggered').action(action(async (context, ref: string) => showJob(context, await context.flows.jobs.disable(ref))));
  jobs
    .command('delete <job>')
    .description('delete the job (its finished runs stay readable)')
    .action(
      action(async ({ flows, print }, ref: string) => {
        await flows.jobs.delete(ref);
        print.value({ deleted: ref }, () => print.line(`Deleted ${ref}.`));
      }),
    );

  program
    .command('invoke <job>')
    .description('start a run of a job')
    .option('--data <json>', 'the data for the templates: inline JSON, @file.json or - for stdin')
    .option('--prompt <text>', 'a prompt to use instead of the rendered template')
    .option('--idempotency-key <key>', 'repeat safely: the same key and data start one run')
    .option('--continue <run>', "continue that run's agent session")
    .option('--wait', 'follow the run until it ends; exit code 3 unless it succeeded')
    .action(
      action(async (context, ref: string, options: { data?: string; prompt?: string; idempotencyKey?: string; continue?: string; wait?: boolean }) => {
        const data = options.data === undefined ? undefined : jsonArgument(options.data, '--data');
        if (data !== undefined && (typeof data !== 'object' || data === null || Array.isArray(data))) throw new CliError('--data must be a JSON object.', EXIT.usage);
        const invocation = await context.flows.jobs.invoke(ref, { ...(data ? { data: data as Record<string, unknown> } : {}), ...(options.prompt ? { prompt: options.prompt } : {}), ...(options.idempotencyKey ? { idempotencyKey: options.idempotencyKey } : {}), ...(options.continue ? { continueRunId: options.continue } : {}) });
        if (!options.wait) {
          return context.print.value(invocation, () => context.print.line(`Run ${invocation.runId} is ${state(invocation.state)}${invocation.duplicate ? ' (started earlier with this key)' : ''}.`));
        }
        context.print.line(`Run ${invocation.runId} started.`);
        await followRun(context, invocation.runId);
      }),
    );
}
