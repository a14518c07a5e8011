// Runs in the background: dispatch starts a job's queued runs, oldest first, while its `concurrencyLimit`
// has free slots; each started run goes to the executor of its target, its output into the trace, its
// outcome into its state. Dispatch of a job goes through the work queue, one at a time per job, so two
// dispatches never fill the same slot. `recover` ends what instances that are gone left active and starts the queues.
import { isDatabaseUnavailable } from '../db/errors';
import type { TenantDb } from '../db/tenant-scope';
import { agentOf, isStreamKind, unheldCostBudget } from '../agents/agents-fns';
import type { components } from '../../generated/openapi';
import type { RunUsage, StreamKind } from '../agents/agent-events-fns';
import type { Execution, Executor, Outcome, RunSpec } from '../integrations/executor';
import { unusableTarget, type TargetsService } from '../integrations/targets-service';
import { secretNamesOf, type JobEnv } from '../jobs/jobs-fns';
import type { FlowControl } from '../jobs/flow-control-fns';
import type { JobRow, JobsService } from '../jobs/jobs-service';
import type { Logger } from '../lib/logger';
import type { ModelPrices } from '../lib/model-prices';
import type { WorkQueue } from '../lib/work-queue';
import type { Reporter } from '../lib/progress';
import type { Reporting } from '../repositories/reporter';
import type { SenderReporting } from '../senders/sender-reporter';
import { deliveredInstallation, spentLine, summaryOf, type RunArtifacts } from '../repositories/workspace-fns';
import type { PreparedWorkspace, Workspaces } from '../repositories/workspaces';
import type { SecretsService } from '../secrets/secrets-service';
import { agentStream, type AgentStream } from './agent-stream';
import { createMasker, type Masker } from './masking-fns';
import { INTERRUPTED, isRefused, isStoppable, isTerminal, transition, type Refused, type RunEvent, type RunState, type TraceEntry, type Transition } from './engine/lifecycle';
import { retryOf, type Tries } from './engine/admission';
import { createRunsRepo, type Claimed, type RunsRepo } from './runs-repo';
import { runContext, sessionOf, stateUse, type Inputs } from './agent-sessions';
import type { RunsSweeps } from './runs-sweeps';

export interface RunnerDeps {
  tenantDb: (tenantId: string) => TenantDb;
  jobs: Pick<JobsService, 'settings' | 'sessionKey' | 'renderWorkspace'>;
  /** Clones a job's repository for its run, and delivers the changes after it. */
  workspaces?: Workspaces;
  /** Answers where a run's work was asked (`report` on its job): on GitHub, or through a sender connection (Slack, Linear, Jira). */
  reporting?: { github: Reporting; senders: SenderReporting };
  targets: Pick<TargetsService, 'resolve'>;
  secrets: Pick<SecretsService, 'open'>;
  executors: Partial<Record<'local' | 'vmhost' | 'docker', Executor>>;
  queue: WorkQueue;
  logger: Logger;
  /** This process among the instances sharing the database: the runs it executes carry it. */
  instanceId: string;
  /** Active runs of instances that are gone, and jobs with queued runs, across tenants. */
  sweeps: Pick<RunsSweeps, 'orphaned' | 'queuedJobs'>;
  /** Tells the other instances a run was stopped, for the one that executes it (PostgreSQL). */
  announceStop?(runId: string): void;
  /** Lines of agent output kept per attempt; the rest are dropped, and the trace says so. */
  traceMaxLines: number;
  /** Per model, what its tokens cost (FLOWS_MODEL_PRICES). */
  modelPrices?: ModelPrices;
  /** A run started (`running`) or finished (its terminal state): outbound events. */
  notify(tenantId: string, event: 'started' | RunState, runId: string): void;
  /** How each execution went (metrics). */
  executed?(run: Executed): void;
}

/** How one execution of a run ended, as the runner saw it (metrics). */
export interface Executed {
  tenantId: string;
  jobId: string;
  runId: string;
  attempt: number;
  /** When the agent was running; null when it never was (a setup failure, a stop while starting). */
  runningAt: Date | null;
  endedAt: Date;
  outcome: string;
  agent: StreamKind | null;
  usage: RunUsage | null;
}

/**
 * The event an attempt's end is, by the state the run is found in: another attempt when the job's retry
 * policy tries `outcome` again (never for a run being stopped), else `otherwise`.
 */
const ending = (outcome: Outcome, tries: Tries, otherwise: RunEvent) => (from: RunState, at: Date): RunEvent => (from !== 'canceling' && retryOf(outcome, tries, at.getTime())) || otherwise;

const FLUSH_EVERY_MS = 200;
const FLUSH_AT = 100;

/**
 * The variables a run's agent gets from its job's `env`, secrets opened, and the secret values among them
 * (to mask); or why the run cannot start (a secret deleted since the job was saved).
 */
async function runEnv(secrets: RunnerDeps['secrets'], db: TenantDb, env: JobEnv): Promise<{ env: Record<string, string>; secretValues: string[] } | { missing: string }> {
  const entries = Object.entries(env);
  const opened = await secrets.open(db, secretNamesOf(env));
  const resolved: Record<string, string> = {};
  for (const [name, value] of entries) {
    if (typeof value === 'string') resolved[name] = value;
    else if (opened.has(value.secret)) resolved[name] = opened.get(value.secret)!;
    else return { missing: `The secret ${value.secret} that env.${name} refers to does not exist (any more): create it (POST /api/v1/secrets) or change the job's env.` };
  }
  return { env: resolved, secretValues: [...opened.values()] };
}

/**
 * What an execution reports, masked before it is recorded; output beyond `maxLines` is dropped, once said.
 * The stdout of an agent whose events are read (`agent`) is recorded as its events; `onBudget` is told once
 * when they cross one of its budgets.
 */
function maskedEvents(masker: Masker, trace: ReturnType<typeof traceWriter>, targetId: string, maxLines: number, agent: AgentStream | null, onBudget: () => void) {
  const streams = { stdout: masker.stream(), stderr: masker.stream() };
  let lines = 0;
  const record = (entry: TraceEntry) => {
    lines++;
    if (lines <= maxLines) trace.push(entry);
    else if (lines === maxLines + 1) trace.push({ type: 'trace_capped', data: { maxLines, message: `The agent's output beyond ${maxLines} lines is not kept (FLOWS_TRACE_MAX_LINES).` } });
  };
  const output = (stream: 'stdout' | 'stderr', texts: string[]) => texts.forEach((text) => record({ type: 'agent_output', data: { stream, text } }));
  return {
    output(stream: 'stdout' | 'stderr', text: string) {
      const entries = stream === 'stdout' ? agent?.line(text) : null;
      if (!entries) return output(stream, streams[stream].push(text));
      entries.forEach((entry) => record({ type: entry.type, data: masker.value(entry.data) }));
      if (entries.some((entry) => entry.type === 'usage')) trace.usage(agent!.usage()!);
      if (agent!.crossed() && entries.some((entry) => entry.data.reason === 'budget_exceeded')) onBudget();
    },
    provisioning: (data: Record<string, unknown>) => trace.push({ type: 'target_provisioning', data: masker.value({ targetId, ...data }) }),
    sandbox: (type: 'network_denied' | 'resource_limit', data: Record<string, unknown>) => trace.push({ type, data: masker.value(data) }),
    /** What was held back for a value that might continue. */
    end: () => (['stdout', 'stderr'] as const).forEach((stream) => output(stream, streams[stream].end())),
    outcome(reported: Outcome): Outcome {
      const outcome = agent ? agent.outcome(reported) : reported;
      return outcome.state === 'succeeded' ? { ...outcome, result: masker.value(outcome.result) } : { ...outcome, error: masker.text(outcome.error) };
    },
  };
}

/** Trace entries of a running agent, written in batches: one transaction per batch, not per line. */
function traceWriter(repo: RunsRepo, runId: string, logger: Logger, observe: (entry: TraceEntry) => void = () => {}) {
  let buffer: TraceEntry[] = [];
  /** What the agent spent, written with the next batch. */
  let usage: RunUsage | undefined;
  let writing: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | null = null;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    const batch = buffer;
    const spent = usage;
    buffer = [];
    usage = undefined;
    if (batch.length) {
      writing = writing
        .then(async () => {
          await repo.append(runId, batch, spent);
        })
        .catch((err) => logger.error({ err, runId }, 'writing the trace failed'));
    }
    return writing;
  };
  return {
    push(entry: TraceEntry) {
      buffer.push(entry);
      observe(entry);
      if (buffer.length >= FLUSH_AT) void flush();
      else timer ??= setTimeout(flush, FLUSH_EVERY_MS);
    },
    usage(spent: RunUsage) {
      usage = spent;
    },
    flush,
  };
}

export function createRunner({ tenantDb, jobs, workspaces, reporting, targets, secrets, executors, queue, logger, instanceId, sweeps, announceStop, notify, traceMaxLines, modelPrices = {}, executed = () => {} }: RunnerDeps) {
  const executions = new Map<string, { tenantId: string; stop(): void }>();
  /** Runs between being started by dispatch and their outcome written. */
  let executing = 0;
  let shuttingDown = false;
  let dispatches = 0;

  const dispatch = (tenantId: string, jobId: string, delayMs?: number) => queue.enqueue({ kind: 'dispatch', key: `${tenantId}:${jobId}`, payload: { tenantId, jobId }, delayMs });
  /** A run reached a terminal state: jobs chained to its job may start (see runs-service). */
  const finished = (tenantId: string, jobId: string, runId: string, state: RunState) => {
    notify(tenantId, state, runId);
    queue.enqueue({ kind: 'run-finished', key: runId, payload: { tenantId, runId, jobId } });
  };

  /** Who hears of a move: a run queued again is dispatched when its attempt may start; one that began or ended is announced. */
  function announce(tenantId: string, jobId: string, runId: string, move: Transition | Refused) {
    if (isRefused(move)) return;
    // A little after the attempt may start: a timer may fire a millisecond before the clock says it is due.
    if (move.to === 'queued' && move.columns.notBefore) dispatch(tenantId, jobId, move.columns.notBefore.getTime() - Date.now() + 20);
    if (move.notice === 'started') notify(tenantId, 'started', runId);
    if (move.notice === 'ended') finished(tenantId, jobId, runId, move.to);
  }

  /**
   * Moves the run to where `outcome` (or a stop asked for meanwhile) leads, from the state the runner last
   * left it in (read again when a stop moved it meanwhile); a finished run stays as it is. An outcome the
   * job's retry policy tries again queues the run for its next attempt instead (a stopped run is not tried again).
   */
  async function finish(db: TenantDb, runId: string, outcome: Outcome, expected: RunState, tries: Tries, sessionId?: string | null) {
    const move = await createRunsRepo(db).advance(runId, ending(outcome, tries, { type: 'outcome', outcome, sessionId }), expected);
    announce(db.$tenant().id, tries.jobId, runId, move);
  }

  /** The outcome is kept until the database takes it: while the database is unavailable, the write is tried again. */
  async function finishSurely(...args: Parameters<typeof finish>) {
    for (let pause = 500; ; pause = Math.min(pause * 2, 10_000)) {
      try {
        return await finish(...args);
      } catch (err) {
        if (!isDatabaseUnavailable(err) || shuttingDown) throw err;
        logger.warn({ runId: args[1] }, 'the database is unavailable: the run\'s outcome is written once it is back');
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  /**
   * The run's repository workspace, cloned (recorded in its trace and artifacts); null for a job without
   * one; or why the run cannot start with it.
   */
  async function prepareWorkspace(db: TenantDb, job: JobRow, run: { id: string; name: string; context: Record<string, unknown> }, executor: Executor, trace: ReturnType<typeof traceWriter>): Promise<PreparedWorkspace | null | { problem: string }> {
    if (!job.workspace) return null;
    if (!workspaces || !(executor.takesWorkspace || executor.clonesRepository)) return { problem: 'This execution target cannot give its agent a repository workspace (`workspace` on the job): use the local target, a Docker target or a VM-host target.' };
    let request;
    try {
      request = await jobs.renderWorkspace(db, job, run.context);
    } catch (err) {
      if (err instanceof Error && 'code' in err) return { problem: err.message };
      throw err;
    }
    const installationId = request!.githubAppId ? deliveredInstallation(run.context, request!.githubAppId) : null;
    const prepare = executor.takesWorkspace ? workspaces.prepare : workspaces.prepareForProvider;
    const prepared = await prepare(db, { ...request!, installationId }, { id: run.id, name: run.name, jobSlug: job.slug }, (data) => trace.push({ type: 'workspace', data }));
    if ('problem' in prepared) return prepared;
    await createRunsRepo(db).setArtifacts(run.id, prepared.artifacts);
    return prepared;
  }

  /** Starts answering where the run's work was asked, when its job says to. */
  async function openReporter(db: TenantDb, job: JobRow, run: { id: string; name: string; attempt: number; context: Record<string, unknown> }, trace: ReturnType<typeof traceWriter>): Promise<Reporter | null> {
    const report = job.report as components['schemas']['JobReport'] | null;
    if (!report || !reporting) return null;
    const record = (data: Record<string, unknown>) => trace.push({ type: 'report', data });
    // A GitHub delivery's run reports on GitHub; another's through the job's sender connection, when it names one.
    const format = (run.context.source as { format?: string } | undefined)?.format;
    if (format !== 'github' && report.senderConnectionId) return reporting.senders.open(db, { ...report, senderConnectionId: report.senderConnectionId }, run.context, { ...run, jobName: job.name }, record);
    const githubAppId = report.githubAppId ?? (job.workspace as { githubAppId?: string } | null)?.githubAppId;
    if (!githubAppId) return null;
    return reporting.github.open(db, { ...report, githubAppId }, run.context, { id: run.id, name: run.name, jobName: job.name, attempt: run.attempt }, record);
  }

  /** What the run's progress comment ends with, from the run as it was left. */
  async function finalReport(db: TenantDb, runId: string) {
    const row = await createRunsRepo(db).find(runId);
    const artifacts = row?.artifacts as RunArtifacts | null;
    return {
      state: row?.state ?? 'failed',
      error: row?.error ?? null,
      summary: summaryOf(row?.result as Record<string, unknown> | null),
      pullRequestUrl: artifacts?.pullRequestUrl ?? null,
      spent: spentLine(row?.usage as RunUsage | null),
    };
  }

  async function execute(db: TenantDb, job: JobRow, run: Claimed) {
    const tenantId = db.$tenant().id;
    const repo = createRunsRepo(db);
    const runId = run.id;
    const tries: Tries = { jobId: job.id, attempt: run.attempt, retry: (job.flowControl as FlowControl | null)?.retry };
    let state: RunState = 'starting';
    let runningAt: Date | null = null;
    /** The agent whose events are read, with its stream: what the run spent comes from it. */
    let reading: { kind: StreamKind; stream: AgentStream } | null = null;
    let ended = 'failed';
    let workspace: PreparedWorkspace | null | { problem: string } = null;
    let reporter: Reporter | null = null;
    let traced: ReturnType<typeof traceWriter> | null = null;
    executing++;
    try {
      const target = await targets.resolve(db, job.executionTargetId);
      const executor = target && executors[target.kind];
      if (!target || !executor) {
        const error = !target ? `The run has no execution target: ${unusableTarget(job.executionTargetId)}.` : `Execution targets of kind ${target.kind} are not available on this server.`;
        await finishSurely(db, runId, { state: 'failed', error, cause: 'setup' }, state, tries);
        return;
      }
      const env = await runEnv(secrets, db, (job.env ?? {}) as JobEnv);
      if ('missing' in env) {
        await finishSurely(db, runId, { state: 'failed', error: env.missing, cause: 'setup' }, state, tries);
        return;
      }
      const trace = (traced = traceWriter(repo, runId, logger, (entry) => reporter?.observe(entry.type, entry.data)));
      const agent = agentOf(job.agent);
      // An agent whose events are read: its cost budget must be one a cost can hold, and its session is found.
      const read = isStreamKind(agent.kind) ? { ...agent, kind: agent.kind } : null;
      const unheld = read && unheldCostBudget(read, job.model, (model) => model in modelPrices);
      if (unheld) return await finishSurely(db, runId, { state: 'failed', error: unheld, cause: 'setup' }, state, tries);
      // What the run was started with, read once for the workspace, reporting and the agent's session.
      const row = job.workspace || job.report || read ? await repo.find(runId) : null;
      const inputs = (row?.inputs ?? {}) as Inputs;
      const about = { id: runId, name: row?.name ?? job.name, attempt: run.attempt, context: runContext(inputs, job) };
      reporter = await openReporter(db, job, about, trace);
      workspace = await prepareWorkspace(db, job, about, executor, trace);
      if (workspace && 'problem' in workspace) {
        await trace.flush();
        return await finishSurely(db, runId, { state: 'failed', error: workspace.problem, cause: 'setup' }, state, tries);
      }
      const session = read && (await sessionOf(db, jobs, job, runId, inputs, executor.sessionStates));
      const stream = read && agentStream(read, { session: session?.note, model: job.model, prices: modelPrices, earlier: session?.earlier });
      reading = stream && { kind: read.kind, stream };
      // A budget crossed stops the execution, at once or as soon as it exists.
      let execution: Execution | undefined;
      let overBudget = false;
      const stopForBudget = () => {
        overBudget = true;
        execution?.stop();
      };
      const events = maskedEvents(createMasker([...env.secretValues, ...[workspace?.token, reporter?.token].filter((token): token is string => Boolean(token))]), trace, target.id, traceMaxLines, stream, stopForBudget);
      execution = await executor.start(
        {
          tenantId,
          targetId: target.id,
          runId,
          jobSlug: job.slug,
          prompt: run.prompt,
          model: job.model,
          effort: job.effort,
          agent,
          session: session && { key: session.stateKey, jobId: job.id, resume: session.resume },
          timeoutSeconds: target.timeoutSeconds,
          env: env.env,
          network: job.network as RunSpec['network'],
          workspace: workspace?.dir ? { dir: workspace.dir, name: workspace.name, maxBytes: workspace.maxBytes } : null,
          repository: workspace?.provider ?? null,
        },
        events,
      );
      const started = execution;
      if (overBudget) started.stop();
      executions.set(runId, { tenantId, stop: () => started.stop() });
      await trace.flush();
      // Stopped while starting (or the server is going down): the execution ends at once.
      const began = shuttingDown ? null : await repo.advance(runId, { type: 'started', executorRef: execution.ref, sessionKey: session?.sessionKey }, 'starting');
      if (began && !isRefused(began)) {
        state = began.to;
        runningAt = new Date();
        announce(tenantId, job.id, runId, began);
        reporter?.observe('state_changed', { from: began.from, to: began.to });
      } else started.stop();
      const outcome = events.outcome(await started.done);
      ended = outcome.state;
      events.end();
      if (workspace && outcome.state === 'succeeded' && state === 'running') {
        const delivered = await workspace.deliver({ result: outcome.result, usage: stream?.usage() ?? null });
        await createRunsRepo(db).setArtifacts(runId, delivered.artifacts, delivered.patch);
      }
      await trace.flush();
      await finishSurely(db, runId, outcome, state, tries, stream?.sessionId());
    } catch (err) {
      logger.error({ err, runId }, 'the run failed to execute');
      executions.get(runId)?.stop();
      await finishSurely(db, runId, { state: 'failed', error: 'The run could not be executed (internal error).', cause: 'infrastructure' }, state, tries).catch(() => {});
    } finally {
      if (workspace && 'dispose' in workspace) await workspace.dispose().catch((err) => logger.warn({ err, runId }, 'removing the run\'s workspace failed'));
      if (reporter) {
        await reporter.finish(await finalReport(db, runId)).catch((err) => logger.warn({ err, runId }, 'reporting the run\'s end failed'));
        await traced?.flush();
      }
      executed({ tenantId, jobId: job.id, runId, attempt: run.attempt, runningAt, endedAt: new Date(), outcome: ended, agent: reading?.kind ?? null, usage: reading?.stream.usage() ?? null });
      executions.delete(runId);
      executing--;
      if (!shuttingDown) dispatch(tenantId, job.id);
    }
  }

  /** Ends the job's queued runs whose time in the queue (flowControl.ttl) is over, saying so in their trace. */
  async function expireOverdue(db: TenantDb, jobId: string) {
    const repo = createRunsRepo(db);
    for (const run of await repo.overdue(jobId, new Date())) {
      const waited = `${Math.round((run.expiresAt!.getTime() - run.createdAt.getTime()) / 1000)} s`;
      announce(db.$tenant().id, jobId, run.id, await repo.advance(run.id, { type: 'expired', waited }, 'queued'));
    }
  }

  /** Ends the job's overdue queued runs, then starts queued runs while it has free slots. */
  async function fill({ tenantId, jobId }: { tenantId: string; jobId: string }) {
    if (shuttingDown) return;
    const db = tenantDb(tenantId);
    const job = await jobs.settings(db, jobId);
    if (!job) return;
    const flowControl = job.flowControl as FlowControl | null;
    if (flowControl?.ttl) await expireOverdue(db, job.id);
    const limits = { limit: job.concurrencyLimit, keyLimit: flowControl?.concurrency?.limit ?? null, expiring: Boolean(flowControl?.ttl) };
    const claimed = await createRunsRepo(db).claim(job.id, limits, `${instanceId}:${++dispatches}`, instanceId);
    for (const run of claimed) void execute(db, job, run);
  }

  queue.handle('dispatch', (payload) => fill(payload as { tenantId: string; jobId: string }));

  return {
    dispatch,

    /**
     * A stop was recorded (`canceling`): end the execution, or, when nothing executes the run here, finish it
     * and tell the other instances, one of which may be executing it.
     */
    async cancel(db: TenantDb, runId: string, freedJobId: string | null) {
      const execution = executions.get(runId);
      if (execution) return execution.stop();
      // Only a run still `canceling` ends here: one that moved on ended by its execution, wherever that was.
      const move = transition('canceling', { type: 'lost' }) as Transition;
      const moved = await createRunsRepo(db).apply(runId, move);
      if (moved) announceStop?.(runId);
      if (freedJobId) {
        const tenantId = db.$tenant().id;
        if (moved) announce(tenantId, freedJobId, runId, move);
        dispatch(tenantId, freedJobId);
      }
    },

    /**
     * Ends the runs that instances now gone left active (their processes ended with them, or are ended
     * here: a container, a VM) and dispatches every job with queued runs, in case its dispatch went with an
     * instance. At start, and then now and then on one instance of those sharing the database.
     */
    async recover({ othersGone = false } = {}) {
      const orphans = await sweeps.orphaned({ othersGone });
      for (const run of orphans) {
        if (run.executorRef) await executors[run.executorRef.split(':')[0] as keyof typeof executors]?.reap(run.executorRef, run.id);
        const db = tenantDb(run.tenantId);
        // A run its instance lost is an infrastructure failure: the job's retry policy may try it again.
        const retry = run.state === 'canceling' ? undefined : ((await jobs.settings(db, run.jobId))?.flowControl as FlowControl | null)?.retry;
        const lost: Outcome = { state: 'failed', error: INTERRUPTED, cause: 'infrastructure' };
        const tries = { jobId: run.jobId, attempt: run.attempt, retry };
        const move = await createRunsRepo(db).advance(run.id, ending(lost, tries, { type: 'lost' }), run.state);
        announce(run.tenantId, run.jobId, run.id, move);
      }
      const queued = await sweeps.queuedJobs();
      for (const { tenantId, jobId } of queued) dispatch(tenantId, jobId);
      return { interrupted: orphans.length, jobsWithQueuedRuns: queued.length };
    },

    /** Another instance stopped a run: its execution ends, if it is here. */
    stopped(runId: string) {
      executions.get(runId)?.stop();
    },

    /** After a time of hearing nothing from the other instances: executions of runs stopped meanwhile end. */
    async recheckExecutions() {
      for (const [runId, execution] of executions) {
        const run = await createRunsRepo(tenantDb(execution.tenantId)).find(runId);
        if (!run || !isStoppable(run.state)) execution.stop();
      }
    },

    /** On shutdown: active runs end as interrupted, with their processes; queued runs wait for the next start. */
    async shutdown() {
      shuttingDown = true;
      for (const execution of executions.values()) execution.stop();
      const deadline = Date.now() + 7_000;
      while (executing > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    },

    /**
     * Removes what executors hold for runs that are over and not executing here (containers left by a
     * server killed before it recorded them), and the agents' kept state that no run uses any more (its
     * runs deleted by retention); at start, after `recover`, and now and then.
     */
    async sweepLeftovers(): Promise<number> {
      const isOver = async (tenantId: string, runId: string) => {
        if (executions.has(runId)) return false;
        const run = await createRunsRepo(tenantDb(tenantId)).find(runId);
        return !run || isTerminal(run.state as RunState);
      };
      const used = stateUse(tenantDb);
      let removed = 0;
      for (const executor of Object.values(executors)) removed += ((await executor.sweep?.(isOver)) ?? 0) + ((await executor.sessionStates?.sweep(used)) ?? 0);
      return removed;
    },

    /** Resolves when no dispatch and no execution is in progress (tests). */
    async idle() {
      do {
        await queue.idle();
        while (executing > 0) await new Promise((resolve) => setTimeout(resolve, 20));
        await queue.idle();
      } while (executing > 0);
    },
  };
}

export type Runner = ReturnType<typeof createRunner>;
