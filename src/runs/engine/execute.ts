// Executing a claimed run: its target's executor, its env with secrets opened, its repository workspace
// and its report where the work was asked; the agent's output masked into the trace in batches; its
// outcome into its state through the lifecycle (runs/engine/lifecycle.ts), or another attempt when the
// job's retry policy says so (admission.ts).
import type { components } from '../../../generated/openapi';
import { isDatabaseUnavailable } from '../../db/errors';
import type { TenantDb } from '../../db/tenant-scope';
import { agentOf, isStreamKind, unheldCostBudget } from '../../agents/agents-fns';
import type { RunUsage, StreamKind } from '../../agents/agent-events-fns';
import type { Execution, Executor, Outcome, RunSpec } from '../../integrations/executor';
import { unusableTarget, type TargetsService } from '../../integrations/targets-service';
import { secretNamesOf, type JobEnv } from '../../jobs/jobs-fns';
import type { FlowControl } from '../../jobs/flow-control-fns';
import type { JobRow, JobsService } from '../../jobs/jobs-service';
import type { Logger } from '../../lib/logger';
import type { ModelPrices } from '../../lib/model-prices';
import type { Reporter } from '../../lib/progress';
import type { Reporting } from '../../repositories/reporter';
import type { SenderReporting } from '../../senders/sender-reporter';
import { deliveredInstallation, spentLine, summaryOf, type RunArtifacts } from '../../repositories/workspace-fns';
import type { PreparedWorkspace, Workspaces } from '../../repositories/workspaces';
import type { SecretsService } from '../../secrets/secrets-service';
import { agentStream, type AgentStream } from '../agent-stream';
import { runContext, sessionOf, type Inputs } from '../agent-sessions';
import { createMasker, type Masker } from '../masking-fns';
import { createRunsRepo, type Claimed, type RunsRepo } from '../runs-repo';
import { ending, type Tries } from './admission';
import { isRefused, type RunState, type TraceEntry, type Transition, type Refused } from './lifecycle';

export interface ExecuteDeps {
  jobs: Pick<JobsService, 'sessionKey' | 'renderWorkspace'>;
  /** Clones a job's repository for its run, and delivers the changes after it. */
  workspaces?: Workspaces;
  /** Answers where a run's work was asked (`report` on its job): on GitHub, or through a sender connection (Slack, Linear, Jira). */
  reporting?: { github: Reporting; senders: SenderReporting };
  targets: Pick<TargetsService, 'resolve'>;
  secrets: Pick<SecretsService, 'open'>;
  executors: Partial<Record<'local' | 'vmhost' | 'docker', Executor>>;
  logger: Logger;
  /** Lines of agent output kept per attempt; the rest are dropped, and the trace says so. */
  traceMaxLines: number;
  /** Per model, what its tokens cost (FLOWS_MODEL_PRICES). */
  modelPrices?: ModelPrices;
  /** How each execution went (metrics). */
  executed?(run: Executed): void;
  /** Who hears of a move the execution made (dispatch.ts). */
  announce(tenantId: string, jobId: string, runId: string, move: Transition | Refused): Promise<void>;
  /** The job may have a free slot: an execution ended. */
  dispatch(tenantId: string, jobId: string): void;
  /** The server is going down: no new state is waited for, no new run is started. */
  closed(): boolean;
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

const FLUSH_EVERY_MS = 200;
const FLUSH_AT = 100;

/**
 * The variables a run's agent gets from its job's `env`, secrets opened, and the secret values among them
 * (to mask); or why the run cannot start (a secret deleted since the job was saved).
 */
async function runEnv(secrets: ExecuteDeps['secrets'], db: TenantDb, env: JobEnv): Promise<{ env: Record<string, string>; secretValues: string[] } | { missing: string }> {
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

export function createExecution({ jobs, workspaces, reporting, targets, secrets, executors, logger, traceMaxLines, modelPrices = {}, executed = () => {}, announce, dispatch, closed }: ExecuteDeps) {
  /** The runs executing here, between being started by dispatch and their outcome written. */
  const executions = new Map<string, { tenantId: string; stop(): void }>();
  let executing = 0;

  /**
   * Moves the run to where `outcome` (or a stop asked for meanwhile) leads, from the state the runner last
   * left it in (read again when a stop moved it meanwhile); a finished run stays as it is. An outcome the
   * job's retry policy tries again queues the run for its next attempt instead (a stopped run is not tried again).
   */
  async function finish(db: TenantDb, runId: string, outcome: Outcome, expected: RunState, tries: Tries, sessionId?: string | null) {
    const move = await createRunsRepo(db).advance(runId, ending(outcome, tries, { type: 'outcome', outcome, sessionId }), expected);
    await announce(db.$tenant().id, tries.jobId, runId, move);
  }

  /**
   * A move of the run is kept until the database takes it: while the database is unavailable, the write is
   * tried again (the agent goes on meanwhile), unless the server is going down.
   */
  async function surely<T>(runId: string, write: () => Promise<T>): Promise<T> {
    for (let pause = 500; ; pause = Math.min(pause * 2, 10_000)) {
      try {
        return await write();
      } catch (err) {
        if (!isDatabaseUnavailable(err) || closed()) throw err;
        logger.warn({ runId }, 'the database is unavailable: the run\'s state is written once it is back');
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  const finishSurely = (...args: Parameters<typeof finish>) => surely(args[1], () => finish(...args));

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
      const began = closed() ? null : await surely(runId, () => repo.advance(runId, { type: 'started', executorRef: execution.ref, sessionKey: session?.sessionKey }, 'starting'));
      if (began && !isRefused(began)) {
        state = began.to;
        runningAt = new Date();
        await announce(tenantId, job.id, runId, began);
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
      if (!closed()) dispatch(tenantId, job.id);
    }
  }

  return {
    execute,
    /** The runs whose execution is here, by id, with how to end each. */
    executions: executions as ReadonlyMap<string, { tenantId: string; stop(): void }>,
    /** How many runs are between being claimed and their outcome written. */
    executing: () => executing,
  };
}
