// Runs, their trace and invocations in the database, through the tenant-bound client. A state change is
// one guarded update (it names the state it moves from), and trace positions are handed out by the run row
// itself (`traceLength`), so that concurrent writers never take the same `seq`.
import type { Prisma } from '../../generated/prisma/sqlite/client';
import { toJson } from '../db/json';
import type { TenantDb } from '../db/tenant-scope';
import type { KeysetRequest } from '../http/pagination';
import { ACTIVE_STATES, transition, type RunState } from './runs-fns';

export interface TraceEntry {
  type: 'prompt_rendered' | 'target_provisioning' | 'agent_output' | 'result' | 'error' | 'state_changed';
  data: Record<string, unknown>;
}

export interface NewRun {
  id: string;
  jobId: string;
  invocationId: string | null;
  name: string;
  prompt: string;
  triggerType: string;
  triggerId: string | null;
  inputs: Record<string, unknown>;
  replayOf?: string;
  startKey?: string;
}

export interface NewInvocation {
  id: string;
  idempotencyKey: string | null;
  requestHash: string;
  expiresAt: Date;
}

export interface RunFilter {
  jobId?: string;
  state?: RunState;
  triggerType?: string;
}

export function createRunsRepo(db: TenantDb) {
  /** Appends `entries` after the run's last trace event, in one transaction with `change` (when given). */
  async function appendTrace(tx: Pick<TenantDb, 'run' | 'runEvent'>, runId: string, entries: TraceEntry[], change: Prisma.RunUpdateManyMutationInput = {}, from?: RunState) {
    const where = from ? { id: runId, state: from } : { id: runId };
    const { traceLength } = await tx.run.update({ where, data: { ...change, traceLength: { increment: entries.length } }, select: { traceLength: true } });
    const first = traceLength - entries.length + 1;
    if (entries.length) await tx.runEvent.createMany({ data: entries.map((entry, i) => ({ id: `${runId}:${first + i}`, runId, seq: first + i, type: entry.type, data: toJson(entry.data) })) as Prisma.RunEventCreateManyInput[] });
  }

  return {
    /** The run and the invocation that created it, with the first trace entries, in one transaction. */
    createInvoked: (run: NewRun, invocation: NewInvocation | null, trace: TraceEntry[]) =>
      db.$transaction([
        db.run.create({
          data: {
            ...run,
            inputs: toJson(run.inputs),
            state: 'queued',
            traceLength: trace.length,
            events: { create: trace.map((entry, i) => ({ id: `${run.id}:${i + 1}`, seq: i + 1, type: entry.type, data: toJson(entry.data) })) },
          } as Prisma.RunUncheckedCreateInput,
        }),
        ...(invocation ? [db.invocation.create({ data: { ...invocation, jobId: run.jobId, runId: run.id } as Prisma.InvocationUncheckedCreateInput })] : []),
      ]),

    findInvocation: (jobId: string, idempotencyKey: string) => db.invocation.findFirst({ where: { jobId, idempotencyKey } }),
    deleteInvocation: (id: string) => db.invocation.deleteMany({ where: { id } }),

    find: (id: string) => db.run.findFirst({ where: { id } }),
    findStarted: (jobId: string, startKey: string) => db.run.findFirst({ where: { jobId, startKey }, select: { id: true } }),

    list: ({ limit, after }: KeysetRequest<string>, filter: RunFilter) =>
      db.run.findMany({
        where: { jobId: filter.jobId, state: filter.state, triggerType: filter.triggerType, id: after === undefined ? undefined : { lt: after } },
        orderBy: { id: 'desc' },
        take: limit + 1,
      }),

    trace: (runId: string, { limit, after }: KeysetRequest<number>) =>
      db.runEvent.findMany({ where: { runId, seq: after === undefined ? undefined : { gt: after } }, orderBy: { seq: 'asc' }, take: limit + 1 }),

    /** Moves the run from `from` to `to` (recording the change in its trace); false when it was not in `from`. */
    async move(id: string, from: RunState, to: RunState, extra: { result?: Record<string, unknown>; error?: string } = {}, trace: TraceEntry[] = []): Promise<boolean> {
      const change = { ...transition(from, to), result: extra.result === undefined ? undefined : toJson(extra.result), error: extra.error };
      try {
        await db.$transaction((tx) => appendTrace(tx, id, [...trace, { type: 'state_changed', data: { from, to } }], change, from));
        return true;
      } catch (err) {
        if ((err as { code?: string }).code === 'P2025') return false; // no longer in `from`
        throw err;
      }
    },

    append: (runId: string, entries: TraceEntry[]) => db.$transaction((tx) => appendTrace(tx, runId, entries)),

    setExecutorRef: (id: string, executorRef: string) => db.run.updateMany({ where: { id }, data: { executorRef } }),

    countActive: (jobId: string) => db.run.count({ where: { jobId, state: { in: ACTIVE_STATES } } }),

    /** The oldest queued runs of the job: ids sort by creation, so this is arrival order. */
    nextQueued: (jobId: string, take: number) => db.run.findMany({ where: { jobId, state: 'queued' }, orderBy: { id: 'asc' }, take, select: { id: true, prompt: true } }),

    /** The enabled run triggers of live, enabled jobs that watch `jobId`, with their jobs. */
    chainedTriggers: (jobId: string) =>
      db.trigger.findMany({ where: { watchedJobId: jobId, type: 'run', enabled: true, job: { enabled: true, deletedAt: null } }, include: { job: true }, orderBy: [{ jobId: 'asc' }, { position: 'asc' }] }),

    unfinishedOfJob: (jobId: string) => db.run.findMany({ where: { jobId, state: { in: ['queued', 'starting', 'running'] } }, select: { id: true, state: true } }),
  };
}

export type RunsRepo = ReturnType<typeof createRunsRepo>;
export type RunRow = NonNullable<Awaited<ReturnType<RunsRepo['find']>>>;
