// Runs, their trace and invocations in the database, through the tenant-bound client. The writes of a run's
// life are hand-written statements (db/sql.ts) of what the lifecycle (engine/lifecycle.ts) answers: a move
// and its trace events are one batch, guarded by the state it moves from, and trace positions come from the
// run row itself (`traceLength`, raised by the same write), so concurrent writers never take the same `seq`
// and nothing is read first.
import type { Prisma } from '../../generated/prisma/sqlite/client';
import type { RunUsage } from '../agents/agent-events-fns';
import type { SqlParam } from '../db/sql';
import type { TenantDb } from '../db/tenant-scope';
import type { KeysetRequest } from '../http/pagination';
import type { RunArtifacts } from '../repositories/workspace-fns';
import { ACTIVE, UNENDED, isRefused, transition, type Refused, type RunColumns, type RunEvent, type RunState, type TraceEntry, type Transition } from './engine/lifecycle';

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
  /** The value of the job's concurrency key for the run (flowControl.concurrency). */
  concurrencyKey?: string | null;
  /** When the run, still queued, ends `expired` (flowControl.ttl). */
  expiresAt?: Date | null;
  /** The value of the job's rate-limit key for the run (flowControl.rateLimit). */
  rateKey?: string | null;
  /** The run waits for deliveries to fold into it until `notBefore` (flowControl.debounce). */
  debounceKey?: string | null;
  notBefore?: Date | null;
}

/** A rate limit the run must fit: fewer than `limit` runs of its `rateKey` created since `since`. */
export interface RateWindow {
  limit: number;
  since: Date;
}

/**
 * What must hold when the run is written, or it is not: its rate key's window has room, no run of its
 * debounce key waits (`debounced`: it would fold into that one), and its concurrency key holds fewer than
 * `keyLimit` unfinished runs (`skip`).
 */
export interface CreateGuards {
  rate?: RateWindow | null;
  debounced?: boolean;
  keyLimit?: number | null;
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

/** A run dispatch started: what executing it needs. */
export interface Claimed {
  id: string;
  prompt: string;
  attempt: number;
}

/** The states of a group as an SQL list. */
const inList = (states: readonly RunState[]) => states.map((state) => `'${state}'`).join(', ');
const CASTS: Partial<Record<keyof RunColumns, string>> = { startedAt: '::timestamp(3)', finishedAt: '::timestamp(3)', notBefore: '::timestamp(3)', result: '::jsonb', inputs: '::jsonb', attempt: '::int' };
const JSON_COLUMNS = new Set<keyof RunColumns>(['result', 'inputs']);

/** The SET of a move: its state, when, and its columns (`null` clears one; `errorUnlessSet` keeps an error the run has). */
function setOf({ to, columns, at }: Transition): { text: string; params: SqlParam[] } {
  const parts = ['"state" = ?', '"updatedAt" = ?::timestamp(3)'];
  const params: SqlParam[] = [to, at];
  for (const [column, value] of Object.entries(columns) as [keyof RunColumns, RunColumns[keyof RunColumns]][]) {
    if (value === undefined) continue;
    if (column === 'errorUnlessSet') parts.push('"error" = COALESCE("error", ?::text)');
    else if (value === null) {
      parts.push(`"${column}" = NULL`);
      continue;
    } else parts.push(`"${column}" = ?${CASTS[column] ?? ''}`);
    params.push(JSON_COLUMNS.has(column) ? { json: value } : (value as SqlParam));
  }
  return { text: parts.join(', '), params };
}
const EVENT_COLUMNS = '"id", "tenantId", "runId", "seq", "at", "type", "data"';

/** The entries as rows `(k, type, data)`, k counting from 1, to join with the run they are appended to. */
function entryRows(entries: TraceEntry[]): { text: string; params: SqlParam[] } {
  const text = entries.map((_, i) => (i === 0 ? 'SELECT ?::int AS k, ?::text AS type, ?::jsonb AS data' : 'SELECT ?::int, ?::text, ?::jsonb')).join(' UNION ALL ');
  return { text, params: entries.flatMap((entry, i) => [i + 1, entry.type, { json: entry.data }]) };
}

export function createRunsRepo(db: TenantDb) {
  const { id: tenantId, sql } = db.$tenant();

  /**
   * Raises the run's `traceLength` (with `set`, and only while it is in `from` when given) and appends the
   * entries after its last event, in one batch; false when the run was not in `from` (or is gone). On
   * PostgreSQL one statement (the update feeding the insert); on SQLite two, the insert guarded by the
   * update's row count.
   */
  async function write(runId: string, entries: TraceEntry[], set: { text: string; params: SqlParam[] } | null, from: RunState | null, at = new Date()): Promise<boolean> {
    const n = entries.length;
    const rows = entryRows(entries);
    const update = {
      text: `UPDATE "Run" SET ${set ? `${set.text}, ` : ''}"traceLength" = "traceLength" + ? WHERE "tenantId" = ? AND "id" = ?${from ? ' AND "state" = ?' : ''}`,
      params: [...(set?.params ?? []), n, tenantId, runId, ...(from ? [from] : [])],
    };
    const values = `"Run"."id" || ':' || ("Run"."traceLength" - ? + e.k), "Run"."tenantId", "Run"."id", "Run"."traceLength" - ? + e.k, ?::timestamp(3), e.type, e.data`;
    if (sql.dialect === 'postgresql') {
      const inserted = await sql.run(
        `WITH "Run" AS (${update.text} RETURNING "tenantId", "id", "traceLength") INSERT INTO "RunEvent" (${EVENT_COLUMNS}) SELECT ${values} FROM "Run", (${rows.text}) AS e`,
        [...update.params, n, n, at, ...rows.params],
      );
      return inserted > 0;
    }
    const [updated] = await sql.batch<[number, number]>([
      sql.run(update.text, update.params),
      sql.run(`INSERT INTO "RunEvent" (${EVENT_COLUMNS}) SELECT ${values} FROM "Run", (${rows.text}) AS e WHERE "Run"."tenantId" = ? AND "Run"."id" = ? AND changes() = 1`, [n, n, at, ...rows.params, tenantId, runId]),
    ]);
    return updated === 1;
  }

  return {
    /**
     * The run (queued), its first trace entries and the invocation that asks for it, in one batch; false
     * when a guard does not hold (nothing is written). The guards and the insert are one statement, and on
     * PostgreSQL the locks of the keys guarded are taken first (always in the same order), so that
     * instances never both take the last place of a key.
     */
    async createInvoked(run: NewRun, invocation: NewInvocation | null, trace: TraceEntry[], { rate, debounced, keyLimit }: CreateGuards = {}): Promise<boolean> {
      const now = new Date();
      const rows = entryRows(trace);
      const ofJob = `"tenantId" = ? AND "jobId" = ?`;
      const guards = [
        rate && { lock: `rate:${run.rateKey}`, text: `(SELECT COUNT(*) FROM "Run" WHERE ${ofJob} AND "rateKey" = ? AND "createdAt" > ?::timestamp(3)) < ?`, params: [tenantId, run.jobId, run.rateKey ?? null, rate.since, rate.limit] },
        debounced && { lock: `debounce:${run.debounceKey}`, text: `NOT EXISTS (SELECT 1 FROM "Run" WHERE ${ofJob} AND "debounceKey" = ? AND "state" = 'queued')`, params: [tenantId, run.jobId, run.debounceKey ?? null] },
        keyLimit != null && {
          lock: `concurrency:${run.concurrencyKey}`,
          text: `(SELECT COUNT(*) FROM "Run" WHERE ${ofJob} AND "concurrencyKey" ${run.concurrencyKey == null ? 'IS NULL' : '= ?'} AND "state" IN (${inList(UNENDED)})) < ?`,
          params: [tenantId, run.jobId, ...(run.concurrencyKey == null ? [] : [run.concurrencyKey]), keyLimit],
        },
      ].filter((guard) => !!guard);
      const room = { text: guards.length ? ` WHERE ${guards.map((guard) => guard.text).join(' AND ')}` : '', params: guards.flatMap((guard) => guard.params) };
      const created = { text: ` WHERE EXISTS (SELECT 1 FROM "Run" WHERE "tenantId" = ? AND "id" = ?)`, params: [tenantId, run.id] };
      const statements = [
        sql.run(
          `INSERT INTO "Run" ("id", "tenantId", "jobId", "invocationId", "name", "state", "triggerType", "triggerId", "prompt", "inputs", "createdAt", "updatedAt", "replayOf", "traceLength", "startKey", "concurrencyKey", "expiresAt", "rateKey", "debounceKey", "notBefore") ` +
            `SELECT ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?::jsonb, ?::timestamp(3), ?::timestamp(3), ?, ?::int, ?, ?, ?::timestamp(3), ?, ?, ?::timestamp(3)${room.text}`,
          [run.id, tenantId, run.jobId, run.invocationId, run.name, run.triggerType, run.triggerId, run.prompt, { json: run.inputs }, now, now, run.replayOf ?? null, trace.length, run.startKey ?? null, run.concurrencyKey ?? null, run.expiresAt ?? null, run.rateKey ?? null, run.debounceKey ?? null, run.notBefore ?? null, ...room.params],
        ),
        sql.run(`INSERT INTO "RunEvent" (${EVENT_COLUMNS}) SELECT ? || ':' || e.k, ?, ?, e.k, ?::timestamp(3), e.type, e.data FROM (${rows.text}) AS e${created.text}`, [run.id, tenantId, run.id, now, ...rows.params, ...created.params]),
        ...(invocation
          ? [
              sql.run(`INSERT INTO "Invocation" ("id", "tenantId", "jobId", "runId", "idempotencyKey", "requestHash", "createdAt", "expiresAt") SELECT ?, ?, ?, ?, ?, ?, ?::timestamp(3), ?::timestamp(3)${created.text}`, [
                invocation.id,
                tenantId,
                run.jobId,
                run.id,
                invocation.idempotencyKey,
                invocation.requestHash,
                now,
                invocation.expiresAt,
                ...created.params,
              ]),
            ]
          : []),
      ];
      const locks = sql.dialect === 'postgresql' ? guards.map((guard) => sql.run('SELECT pg_advisory_xact_lock(hashtext(?))', [`${tenantId}:${run.jobId}:${guard.lock}`])) : [];
      const results = await sql.batch<number[]>([...locks, ...statements]);
      return results[locks.length] > 0;
    },

    /**
     * When the key's rate limit makes room again: the moment the `limit`-th newest of its runs created
     * since `since` leaves the window (to which the caller adds the period).
     */
    rateRoomFrom: async (jobId: string, rateKey: string, limit: number, since: Date): Promise<Date | null> =>
      (await db.run.findMany({ where: { jobId, rateKey, createdAt: { gt: since } }, orderBy: { createdAt: 'desc' }, skip: limit - 1, take: 1, select: { createdAt: true } }))[0]?.createdAt ?? null,

    findInvocation: (jobId: string, idempotencyKey: string) => db.invocation.findFirst({ where: { jobId, idempotencyKey } }),
    deleteInvocation: (id: string) => db.invocation.deleteMany({ where: { id } }),

    find: (id: string) => db.run.findFirst({ where: { id } }),

    /** What the runs of the job that took part in the agent session `sessionId` recorded as spent. */
    sessionUsages: async (jobId: string, sessionId: string) => (await db.run.findMany({ where: { jobId, sessionId }, select: { usage: true } })).map((run) => run.usage as RunUsage | null),

    /** The session keys the job's runs recorded, each once. */
    sessionKeys: async (jobId: string) =>
      (await db.run.findMany({ where: { jobId, sessionKey: { not: null } }, distinct: ['sessionKey'], select: { sessionKey: true } })).map((run) => run.sessionKey!),

    /** The latest run of the job, other than `runId`, whose agent began or continued the session kept under `sessionKey`. */
    latestSession: (jobId: string, sessionKey: string, runId: string) =>
      db.run.findFirst({ where: { jobId, sessionKey, sessionId: { not: null }, id: { not: runId } }, orderBy: { id: 'desc' }, select: { id: true, sessionId: true } }),
    findStarted: (jobId: string, startKey: string) => db.run.findFirst({ where: { jobId, startKey }, select: { id: true } }),

    list: ({ limit, after }: KeysetRequest<string>, filter: RunFilter) =>
      db.run.findMany({
        where: { jobId: filter.jobId, state: filter.state, triggerType: filter.triggerType, id: after === undefined ? undefined : { lt: after } },
        orderBy: { id: 'desc' },
        take: limit + 1,
      }),

    trace: (runId: string, { limit, after }: KeysetRequest<number>) =>
      db.runEvent.findMany({ where: { runId, seq: after === undefined ? undefined : { gt: after } }, orderBy: { seq: 'asc' }, take: limit + 1 }),

    /** Writes a move the lifecycle answered, guarded by the state it moves from; false when the run was not in it (or is gone). */
    apply: (id: string, move: Transition) => write(id, move.trace, setOf(move), move.from, move.at),

    /**
     * Takes the run through `event` from the state it is in: `from` first when the caller knows it, read when
     * the run moved on meanwhile (a stop, another instance). `event` may depend on the state found and the
     * moment of the move. Answers the move written, or why none was (the state does not take it, or the run is gone).
     */
    async advance(id: string, event: RunEvent | ((from: RunState, at: Date) => RunEvent), from?: RunState): Promise<Transition | Refused> {
      for (let look = 0; look < 5; look++) {
        const state = look === 0 && from ? from : ((await db.run.findFirst({ where: { id }, select: { state: true } }))?.state as RunState | undefined);
        if (!state) return { refused: 'the run is gone' };
        const at = new Date();
        const move = transition(state, typeof event === 'function' ? event(state, at) : event, at);
        if (isRefused(move) || (await this.apply(id, move))) return move;
      }
      return { refused: 'the run kept changing state' };
    },

    /** What a run with a repository workspace started from and what became of its changes, with the patch of them. */
    async setArtifacts(runId: string, artifacts: RunArtifacts, patch?: string | null) {
      await db.run.updateMany({ where: { id: runId }, data: { artifacts: artifacts as Prisma.InputJsonValue } });
      if (patch) await db.runPatch.upsert({ where: { tenantId_runId: { tenantId: db.$tenant().id, runId } }, create: { runId, patch } as Prisma.RunPatchUncheckedCreateInput, update: { patch } });
    },
    patchOf: async (runId: string) => (await db.runPatch.findFirst({ where: { runId }, select: { patch: true } }))?.patch ?? null,

    /** Appends to the trace, and sets what the agent spent so far when given. */
    append: (runId: string, entries: TraceEntry[], usage?: RunUsage) => write(runId, entries, usage ? { text: '"usage" = ?::jsonb', params: [{ json: usage }] } : null, null),

    /**
     * Starts the oldest queued runs of the job while fewer than `limit` are active (`starting`, with their
     * trace event), marked with `claim` and `ownerId`; answers them. One batch; on PostgreSQL it first takes
     * a lock of the job's for the transaction, so that two instances never fill the same slot, and the
     * update feeds the trace's insert in one statement. The outer `state` test is checked again on a row
     * another transaction changed meanwhile (a stop), the subquery is not.
     */
    async claim(jobId: string, { limit, keyLimit = null, expiring = false }: { limit: number; keyLimit?: number | null; expiring?: boolean }, claim: string, ownerId: string): Promise<Claimed[]> {
      const now = new Date();
      // While the job has a ttl, a run whose time in the queue is over is not started (dispatch ends it,
      // `overdue`); without one (any more), every queued run may start. A run queued again for a new attempt
      // waits for its backoff (`notBefore`).
      const ready = (alias: string) => ({
        text: `${expiring ? ` AND (${alias}"expiresAt" IS NULL OR ${alias}"expiresAt" > ?::timestamp(3))` : ''} AND (${alias}"notBefore" IS NULL OR ${alias}"notBefore" <= ?::timestamp(3))`,
        params: expiring ? [now, now] : [now],
      });
      const active = { text: `FROM "Run" WHERE "tenantId" = ? AND "jobId" = ? AND "state" IN (${inList(ACTIVE)})`, params: [tenantId, jobId] };
      const readyTest = ready('');
      const queued = { text: `FROM "Run" WHERE "tenantId" = ? AND "jobId" = ? AND "state" = 'queued'${readyTest.text}`, params: [tenantId, jobId, ...readyTest.params] };
      // With a key's limit, a queued run is due while its key has room: the runs of its key queued before
      // it and those of its key active stay under `keyLimit` (a key at its limit holds back only its own).
      const dueByKey = (limitOfKey: number) => {
        const readyQ = ready('q.');
        return {
          text:
            `SELECT "id" FROM (SELECT q."id", ROW_NUMBER() OVER (PARTITION BY q."concurrencyKey" ORDER BY q."id") + ` +
            `(SELECT COUNT(*) FROM "Run" a WHERE a."tenantId" = q."tenantId" AND a."jobId" = q."jobId" AND a."state" IN (${inList(ACTIVE)}) AND COALESCE(a."concurrencyKey", '') = COALESCE(q."concurrencyKey", '')) AS "place" ` +
            `FROM "Run" q WHERE q."tenantId" = ? AND q."jobId" = ? AND q."state" = 'queued'${readyQ.text}) AS "ranked" WHERE "place" <= ?`,
          params: [tenantId, jobId, ...readyQ.params, limitOfKey],
        };
      };
      const due = keyLimit === null ? { text: `SELECT "id" ${queued.text}`, params: queued.params } : dueByKey(keyLimit);
      // Most dispatches find nothing to start: the one after a run's end usually has nothing queued, and during
      // a burst the slots are full. One statement says so, without the batch (on PostgreSQL four statements
      // in a transaction under the job's lock). It only spares work: whoever queues a run or frees a slot
      // after this reading dispatches again.
      const [{ go }] = await sql.query<{ go: unknown }>(`SELECT (SELECT COUNT(*) ${active.text}) < ? AND EXISTS (SELECT 1 ${queued.text}) AS "go"`, [...active.params, limit, ...queued.params]);
      if (!Number(go)) return [];
      const move = transition('queued', { type: 'claimed', claim, ownerId }, now) as Transition;
      const set = setOf(move);
      const update = {
        text:
          `UPDATE "Run" SET ${set.text}, "traceLength" = "traceLength" + 1 WHERE "tenantId" = ? AND "jobId" = ? AND "state" = ? ` +
          `AND "id" IN (${due.text} ORDER BY "id" LIMIT (SELECT ${sql.greatest}(0, ? - COUNT(*)) ${active.text}))`,
        params: [...set.params, tenantId, jobId, move.from, ...due.params, limit, ...active.params],
      };
      const [changed] = move.trace;
      const event = { text: `SELECT "id" || ':' || "traceLength", "tenantId", "id", "traceLength", ?::timestamp(3), ?, ?::jsonb FROM "Run"`, params: [now, changed.type, { json: changed.data }] };
      let runs: Claimed[];
      if (sql.dialect === 'postgresql') {
        [, runs] = await sql.batch<[number, Claimed[]]>([
          sql.run('SELECT pg_advisory_xact_lock(hashtext(?))', [`${tenantId}:${jobId}`]),
          sql.query<Claimed>(
            `WITH "Run" AS (${update.text} RETURNING "tenantId", "id", "prompt", "attempt", "traceLength"), ` +
              `"traced" AS (INSERT INTO "RunEvent" (${EVENT_COLUMNS}) ${event.text}) SELECT "id", "prompt", "attempt" FROM "Run"`,
            [...update.params, ...event.params],
          ),
        ]);
      } else {
        [runs] = await sql.batch<[Claimed[], number]>([
          sql.query<Claimed>(`${update.text} RETURNING "id", "prompt", "attempt"`, update.params),
          sql.run(`INSERT INTO "RunEvent" (${EVENT_COLUMNS}) ${event.text} WHERE "tenantId" = ? AND "jobId" = ? AND "state" = ? AND "claim" = ?`, [...event.params, tenantId, jobId, move.to, claim]),
        ]);
      }
      // SQLite answers integers as bigints through the raw query.
      return runs.map((run) => ({ ...run, attempt: Number(run.attempt) }));
    },

    /** The latest run of each of the jobs: the newest id of each found from the index, then those rows. */
    async latestOf(jobIds: string[]) {
      if (!jobIds.length) return [];
      const newest = await sql.query<{ id: string }>(`SELECT MAX("id") AS "id" FROM "Run" WHERE "tenantId" = ? AND "jobId" IN (${jobIds.map(() => '?').join(', ')}) GROUP BY "jobId"`, [tenantId, ...jobIds]);
      return db.run.findMany({ where: { id: { in: newest.map((row) => row.id) } } });
    },

    /** How long the job's latest finished runs ran (start to finish, in ms), newest first. */
    recentDurations: async (jobId: string, take: number) =>
      (await db.run.findMany({ where: { jobId, finishedAt: { not: null }, startedAt: { not: null } }, orderBy: { id: 'desc' }, take, select: { startedAt: true, finishedAt: true } })).map(
        (run) => run.finishedAt!.getTime() - run.startedAt!.getTime(),
      ),

    /** The run of the job still waiting for deliveries of the debounce key to fold into it, if any. */
    waitingOf: (jobId: string, debounceKey: string) =>
      db.run.findFirst({ where: { jobId, debounceKey, state: 'queued' }, orderBy: { id: 'desc' }, select: { id: true, createdAt: true } }),

    /** The job's queued runs whose time in the queue is over. */
    overdue: (jobId: string, at: Date) => db.run.findMany({ where: { jobId, state: 'queued', expiresAt: { lte: at } }, select: { id: true, expiresAt: true, createdAt: true } }),

    /**
     * The key's runs not yet ending (queued, starting, running), oldest first. Sorted here: asked to sort,
     * SQLite would walk all the job's runs in order rather than only the unfinished ones.
     */
    unfinishedOfKey: async (jobId: string, concurrencyKey: string | null) =>
      (await db.run.findMany({ where: { jobId, concurrencyKey, state: { in: [...UNENDED] } }, select: { id: true, state: true } })).sort((a, b) => (a.id < b.id ? -1 : 1)),

    unfinishedOfJob: (jobId: string) => db.run.findMany({ where: { jobId, state: { in: [...UNENDED] } }, select: { id: true, state: true } }),
  };
}

export type RunsRepo = ReturnType<typeof createRunsRepo>;
export type RunRow = NonNullable<Awaited<ReturnType<RunsRepo['find']>>>;
