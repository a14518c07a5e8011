// The rules of invocations and runs: invoke a job (idempotently), read runs and their traces, stop them,
// replay finished ones. Starting and executing runs is the runner's.
import type { components } from '../../generated/openapi';
import { agentOf, isStreamKind } from '../agents/agents-fns';
import { isUniqueViolation } from '../db/errors';
import type { TenantDb } from '../db/tenant-scope';
import type { KeysetRequest } from '../http/pagination';
import { debounceMs, periodMs, ttlMs, type FlowControl } from '../jobs/flow-control-fns';
import { InvalidConditions, InvalidTemplate, type JobsService, type RenderedJob } from '../jobs/jobs-service';
import { Conflict, NotFound, ValidationFailed } from '../lib/errors';
import { clip } from '../lib/text';
import { sha256 } from '../lib/hash';
import { newId } from '../lib/ids';
import type { FinishedRun } from '../triggers/chain-evaluation';
import type { TriggeredStart } from '../triggers/trigger-starts';
import type { Runner } from './runner';
import { admit } from './engine/admission';
import { STOPPED, isRefused, isTerminal, transition, type RunState, type TraceEntry, type Transition } from './engine/lifecycle';
import { canonicalJson, runView, type RunView } from './runs-fns';
import { createRunsRepo, type NewRun, type RunFilter, type RunsRepo } from './runs-repo';

type InvocationRequest = components['schemas']['InvocationRequest'];
type Invocation = components['schemas']['Invocation'];
type TraceEvent = components['schemas']['RunTraceEvent'];

/** How long an idempotency key is remembered. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

const runNotFound = () => new NotFound('No such run.');

/**
 * The job's flow control over the run being created: its concurrency control, rate limit and debounce
 * (debounce only for a run a trigger starts) with the run's keys, how long the rate limit's window is,
 * and how long the run may wait queued.
 */
type Flow = ReturnType<JobsService['flowKeys']> & { periodMs: number | null; ttlMs: number | null };

/** Why no run was created: flow control decided so (naming the run that took its place or holds its key), or the tenant's budget is spent. */
export type Refusal =
  | { action: 'folded' | 'skipped'; runId: string; message: string }
  | { action: 'rate_limited' | 'budget_exhausted'; until: string; message: string };

/** What an invocation led to: its run (`duplicate` when a repeated idempotency key answers the first one's), or a refusal. */
export type Invoked = { invocation: Invocation; refused?: undefined } | { invocation?: undefined; refused: Refusal };

/** A run created, or why none was. */
type Created = { id: string; invocationId: string | null; refused?: undefined } | { refused: Refusal };

const jobDisabled = () => new Conflict('job_disabled', 'The job is disabled; enable it to invoke it.');

export interface RunsDeps {
  jobs: Pick<JobsService, 'find' | 'live' | 'render' | 'invocationData' | 'flowKeys'>;
  runner: Pick<Runner, 'dispatch' | 'cancel'>;
  /** Why the tenant may start no run now (its monthly budget is spent), or null; none when not given. */
  budgetRefusal?(db: TenantDb): Promise<{ until: Date; message: string } | null>;
  /** A run was created (`queued`): outbound events. */
  notify(tenantId: string, event: 'queued', runId: string): void;
  now?: () => Date;
}

export function createRunsService({ jobs, runner, notify, now = () => new Date(), budgetRefusal = async () => null }: RunsDeps) {
  /** What the job's flow control makes of a run with `context` (throws InvalidConditions for a key that fails). */
  const flowOf = (job: RenderedJob, context: Record<string, unknown>, { triggered }: { triggered: boolean }): Flow => {
    const flowControl = job.flowControl as FlowControl | null;
    // Only runs started by triggers are debounced: a caller invoking a job expects a run of its own.
    return { ...jobs.flowKeys(job, context, { debounced: triggered }), periodMs: periodMs(flowControl), ttlMs: ttlMs(flowControl) };
  };

  async function foundRun(repo: RunsRepo, runId: string) {
    const run = await repo.find(runId);
    if (!run) throw runNotFound();
    return run;
  }

  /**
   * Moves an unfinished run to `canceling` with the reason and has the runner end it; false when it could
   * not be stopped (already ending or over). The guarded write notices a run that moved on meanwhile.
   */
  async function stopping(db: TenantDb, run: { id: string; jobId: string; state: string }, reason: { error: string; trace?: TraceEntry[] }): Promise<boolean> {
    const move = await createRunsRepo(db).advance(run.id, { type: 'stop', ...reason }, run.state as RunState);
    if (isRefused(move)) return false;
    await runner.cancel(db, run.id, run.jobId);
    return true;
  }

  /**
   * Creates the run (and the invocation that asks for it, if any) and hands the job to dispatch, when
   * admission (engine/admission.ts) says so with what the database shows under the run's keys: it may fold
   * into a run of its debounce key still waiting, be refused (skipped, rate-limited), or supersede its
   * concurrency key's older runs. The insert checks again what was read, so that runs created at the same
   * moment (here or on another instance) decide as if one came after the other; a refused insert looks again.
   */
  async function create(db: TenantDb, run: Omit<NewRun, 'id' | 'invocationId'>, key: { idempotencyKey: string | null; requestHash: string } | null, { concurrency, rateLimit, debounce, periodMs, ttlMs }: Flow): Promise<Created> {
    const repo = createRunsRepo(db);
    const refused = await budgetRefusal(db);
    if (refused) return { refused: { action: 'budget_exhausted', until: refused.until.toISOString(), message: refused.message } };
    const at = now();
    const later = (ms: number) => new Date(at.getTime() + ms);
    // Dispatch also ends the runs whose time in the queue is over and starts a waiting run when its time comes.
    const dispatchIn = (delayMs?: number) => runner.dispatch(db.$tenant().id, run.jobId, delayMs);
    const rules = { concurrency, rateLimit, debounce: debounce ? debounceMs(debounce) : null };
    const debounceKey = debounce ? (debounce.runKey ?? '~') : null;
    const keyLimit = concurrency?.onConflict === 'skip' ? concurrency.limit : null;
    const ids = { id: newId('run'), invocationId: key ? newId('inv') : null };
    const trace: TraceEntry[] = [{ type: 'prompt_rendered', data: { name: run.name, promptLength: run.prompt.length } }];
    const invocation = key && { id: ids.invocationId!, ...key, expiresAt: later(IDEMPOTENCY_TTL_MS) };
    const expiresAt = ttlMs === null ? null : later(ttlMs);
    // Without a key, the whole job is one key of its rate limit.
    const rateKey = rateLimit ? (rateLimit.runKey ?? '~') : null;
    const window = rateLimit && { limit: rateLimit.limit, since: later(-periodMs!) };
    let supersede: string[] = [];
    for (let look = 1; ; look++) {
      const waiting = debounceKey === null ? null : await repo.waitingOf(run.jobId, debounceKey);
      const seen = {
        waiting: waiting && { id: waiting.id, createdAt: waiting.createdAt.getTime() },
        unfinished: concurrency ? await repo.unfinishedOfKey(run.jobId, concurrency.runKey) : [],
        recent: null,
      };
      const admission = admit(rules, seen, at.getTime());
      if (admission.action === 'skip') {
        return { refused: { action: 'skipped', runId: admission.holder, message: `No run was started: run ${admission.holder} holds this run's concurrency key (flowControl.concurrency.onConflict: skip).` } };
      }
      if (admission.action === 'fold') {
        const notBefore = new Date(admission.notBefore);
        const fold = transition('queued', { type: 'fold', prompt: run.prompt, name: run.name, inputs: run.inputs, notBefore, cause: run.startKey ?? null }) as Transition;
        if (await repo.apply(admission.into, fold)) {
          dispatchIn(notBefore.getTime() - at.getTime() + 50);
          return { refused: { action: 'folded', runId: admission.into, message: `Folded into run ${admission.into}, which waits for more (flowControl.debounce): the last one folded in gives it its context.` } };
        }
        // The waiting run started meanwhile: look again.
      } else if (admission.action === 'queue') {
        const waits = admission.notBefore === null ? {} : { debounceKey, notBefore: new Date(admission.notBefore) };
        const guards = { rate: window, debounced: debounceKey !== null, keyLimit };
        if (await repo.createInvoked({ ...run, ...ids, concurrencyKey: concurrency?.runKey ?? null, expiresAt, rateKey, ...waits }, invocation, trace, guards)) {
          supersede = admission.supersede;
          break;
        }
      }
      // Refused: the rate limit is full, or a run of the key came first (one now waits, or holds its places): look again.
      if ((debounceKey !== null || keyLimit !== null) && look < 3) continue;
      if (!window) throw new Conflict('conflict', 'Other runs of the job were created at the same moment; try again.');
      const freedFrom = await repo.rateRoomFrom(run.jobId, rateKey!, window.limit, window.since);
      // Retry-After counts from the refusal: a run of the key created since `at` leaves the window later than `at` + period.
      const until = new Date((freedFrom ?? at).getTime() + periodMs!).toISOString();
      return { refused: { action: 'rate_limited', until, message: `No run was started: the job's rate limit (${rateLimit!.limit} per ${rateLimit!.period} per key, flowControl.rateLimit) is reached until ${until}` } };
    }
    notify(db.$tenant().id, 'queued', ids.id);
    for (const older of supersede) {
      const trace: TraceEntry[] = [{ type: 'flow_control', data: { action: 'superseded', byRunId: ids.id, key: concurrency!.runKey } }];
      await stopping(db, { id: older, jobId: run.jobId, state: 'queued' }, { error: `Superseded by run ${ids.id} (flowControl.concurrency: cancel-running).`, trace });
    }
    dispatchIn();
    if (expiresAt) dispatchIn(ttlMs! + 100);
    if (rules.debounce) dispatchIn(rules.debounce.periodMs + 50);
    return ids;
  }

  async function start(db: TenantDb, run: Omit<NewRun, 'id' | 'invocationId'>, key: { idempotencyKey: string | null; requestHash: string }, flow: Flow): Promise<Invoked> {
    const created = await create(db, run, key, flow);
    if (created.refused) return created;
    return { invocation: { invocationId: created.invocationId!, runId: created.id, state: 'queued', duplicate: false } };
  }

  /** The first answer to a repeated key, or null when the key has expired (and is now free). */
  async function repeated(repo: RunsRepo, jobId: string, idempotencyKey: string, requestHash: string): Promise<Invoked | null> {
    const first = await repo.findInvocation(jobId, idempotencyKey);
    if (!first) return null;
    if (first.expiresAt <= now()) {
      await repo.deleteInvocation(first.id);
      return null;
    }
    if (first.requestHash !== requestHash) {
      throw new Conflict('idempotency_key_reused', 'This idempotency key was used with a different request body in the last 24 hours.');
    }
    const run = await repo.find(first.runId);
    return { invocation: { invocationId: first.id, runId: first.runId, state: (run?.state ?? 'queued') as RunState, duplicate: true } };
  }

  /**
   * A run started by a trigger (a webhook delivery, a schedule, another run) with the context it saw, once
   * per cause: the same trigger and cause again answer the run they started; `invalidTemplate` when the
   * job's templates cannot render with it.
   */
  async function startTriggered(
    db: TenantDb,
    job: RenderedJob & { slug: string },
    trigger: { type: 'webhook' | 'schedule' | 'run'; id: string },
    cause: string,
    context: Record<string, unknown>,
  ): Promise<TriggeredStart> {
    const seen = { ...context, job: { id: job.id, slug: job.slug, name: job.name } };
    // A trigger's start waits its turn to render: its own queue bounds how many there are.
    let rendered;
    try {
      rendered = await jobs.render(db, job, seen, {}, { background: true });
    } catch (err) {
      if (err instanceof InvalidTemplate) return { invalidTemplate: err.message };
      throw err;
    }
    const { prompt, name } = rendered;
    const startKey = `${trigger.type}:${trigger.id}:${cause}`;
    const run = { jobId: job.id, name, prompt, triggerType: trigger.type, triggerId: trigger.id, startKey, inputs: { context } };
    let created: Created;
    try {
      created = await create(db, run, null, flowOf(job, seen, { triggered: true }));
    } catch (err) {
      if (err instanceof InvalidConditions) return { runId: null, flowControl: { action: 'key_error', message: err.message } };
      // The same cause again: the unique start key refused the insert.
      const first = isUniqueViolation(err) && (await createRunsRepo(db).findStarted(job.id, startKey));
      if (first) return { runId: first.id };
      throw err;
    }
    if (!created.refused) return { runId: created.id };
    // The same cause again answers the run it started, before flow control would look at it.
    const first = created.refused.action !== 'folded' && (await createRunsRepo(db).findStarted(job.id, startKey));
    return first ? { runId: first.id } : { runId: null, flowControl: created.refused };
  }

  /** A run an invocation continues must be the job's, and the job's agent one whose sessions Flows keeps. */
  async function checkContinued(db: TenantDb, job: { id: string; agent: unknown }, runId: string) {
    const kind = agentOf(job.agent).kind;
    if (!isStreamKind(kind)) throw new ValidationFailed("`continueRunId` is for agents whose sessions Flows keeps; this job's `agent.kind` is `command`.");
    const continued = await createRunsRepo(db).find(runId);
    if (continued?.jobId !== job.id) throw new ValidationFailed(`\`continueRunId\` "${clip(runId)}" is not a run of this job.`);
  }

  return {
    async invoke(db: TenantDb, jobRef: string, body: InvocationRequest): Promise<Invoked> {
      const job = (await jobs.live(db)).find(jobRef);
      if (!job) throw new NotFound('No such job.');
      const requestHash = sha256(canonicalJson(body));
      const idempotencyKey = body.idempotencyKey ?? null;
      if (!job.enabled) throw jobDisabled();

      const { triggerId, data } = jobs.invocationData(job, body.data);
      if (body.continueRunId) await checkContinued(db, job, body.continueRunId);
      const context = { data, job: { id: job.id, slug: job.slug, name: job.name } };
      const { prompt, name } = await jobs.render(db, job, context, { prompt: body.prompt, name: body.name });
      const run = { jobId: job.id, name, prompt, triggerType: 'invocation', triggerId, inputs: { data, ...(body.continueRunId && { continueRunId: body.continueRunId }) } };
      const flow = flowOf(job, context, { triggered: false });

      // The unique index on (tenant, job, key) decides between concurrent repeats: one insert wins, the
      // others find its answer.
      for (let attempt = 0; ; attempt++) {
        try {
          return await start(db, run, { idempotencyKey, requestHash }, flow);
        } catch (err) {
          if (!idempotencyKey || !isUniqueViolation(err) || attempt >= 2) throw err;
          const answer = await repeated(createRunsRepo(db), job.id, idempotencyKey, requestHash);
          if (answer) return answer;
        }
      }
    },

    async list(db: TenantDb, page: KeysetRequest<string>, filter: RunFilter): Promise<RunView[]> {
      let jobId = filter.jobId;
      if (jobId) jobId = (await jobs.find(db, jobId))?.id ?? jobId; // a slug names a live job; an id also a deleted one
      return (await createRunsRepo(db).list(page, { ...filter, jobId })).map(runView);
    },

    async get(db: TenantDb, runId: string): Promise<RunView> {
      return runView(await foundRun(createRunsRepo(db), runId));
    },

    /** The changes the run's agent made to its repository workspace, as a patch. */
    async patch(db: TenantDb, runId: string): Promise<string> {
      const repo = createRunsRepo(db);
      await foundRun(repo, runId);
      const patch = await repo.patchOf(runId);
      if (patch === null) throw new NotFound('The run has no patch: its job has no `workspace`, it has not succeeded, or its agent changed nothing.');
      return patch;
    },

    async trace(db: TenantDb, runId: string, page: KeysetRequest<number>): Promise<TraceEvent[]> {
      const repo = createRunsRepo(db);
      await foundRun(repo, runId);
      return (await repo.trace(runId, page)).map((event) => ({ seq: event.seq, at: event.at.toISOString(), type: event.type as TraceEvent['type'], data: event.data as TraceEvent['data'] }));
    },

    async stop(db: TenantDb, runId: string): Promise<RunView> {
      const repo = createRunsRepo(db);
      const run = await foundRun(repo, runId);
      if (!(await stopping(db, run, { error: STOPPED }))) {
        const state = (await repo.find(run.id))?.state ?? run.state;
        throw new Conflict('run_not_stoppable', `The run is ${state}; only queued, starting and running runs can be stopped.`);
      }
      return runView({ ...run, state: 'canceling', error: run.error ?? STOPPED });
    },

    async replay(db: TenantDb, runId: string): Promise<Invoked> {
      const repo = createRunsRepo(db);
      const original = await foundRun(repo, runId);
      if (!isTerminal(original.state as RunState)) throw new Conflict('run_not_finished', `The run is ${original.state}; only finished runs can be replayed.`);
      const job = await jobs.find(db, original.jobId);
      if (!job) throw new NotFound('The job of this run has been deleted.');
      if (!job.enabled) throw jobDisabled();
      const inputs = original.inputs as { data?: Record<string, unknown>; context?: Record<string, unknown> };
      const run = { jobId: job.id, name: original.name, prompt: original.prompt, triggerType: 'invocation', triggerId: null, inputs, replayOf: original.id };
      // A replay takes the key the original's context gives now.
      const flow = flowOf(job, { ...(inputs.context ?? { data: inputs.data ?? {} }), job: { id: job.id, slug: job.slug, name: job.name } }, { triggered: false });
      return start(db, run, { idempotencyKey: null, requestHash: sha256(canonicalJson({ replayOf: original.id })) }, flow);
    },

    /** A run started by a trigger (a webhook delivery, a schedule, another run) with the context it saw. */
    startTriggered,

    /** A run as run triggers see it when it ends. */
    async finishedRun(db: TenantDb, runId: string): Promise<FinishedRun | null> {
      const run = await createRunsRepo(db).find(runId);
      return run && { jobId: run.jobId, state: run.state, view: runView(run) as unknown as Record<string, unknown> };
    },

    /** The latest run of each of the jobs, by job id (a job without runs is absent). */
    async latestOf(db: TenantDb, jobIds: string[]): Promise<Map<string, RunView>> {
      return new Map((await createRunsRepo(db).latestOf(jobIds)).map((run) => [run.jobId, runView(run)]));
    },

    /** How long a run of the job typically lasts: the median of its 50 latest finished runs, or `fallback`. */
    async typicalRunMs(db: TenantDb, jobId: string, fallback = 60_000): Promise<number> {
      const durations = (await createRunsRepo(db).recentDurations(jobId, 50)).sort((a, b) => a - b);
      return durations.length ? durations[Math.floor(durations.length / 2)] : fallback;
    },

    /** The job was deleted: its queued and active runs are stopped. */
    async cancelRunsOfJob(db: TenantDb, jobId: string) {
      const repo = createRunsRepo(db);
      for (const run of await repo.unfinishedOfJob(jobId)) {
        if (!isRefused(await repo.advance(run.id, { type: 'stop', error: STOPPED }, run.state as RunState))) await runner.cancel(db, run.id, null);
      }
    },
  };
}

export type RunsService = ReturnType<typeof createRunsService>;
