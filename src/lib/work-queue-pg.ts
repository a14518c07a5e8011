// The work queue on PostgreSQL: the instances sharing a database share their background work through
// pg-boss 10, in a schema of its own. Each kind is a pg-boss queue of policy `short`: at most one job of a
// key waits (the coalescing of work-queue.ts) while another of the same key may run, on this instance or
// another; the handlers are written for that. `stately` and `singleton` would keep a key to one at a time,
// but in 10.x their unique index on active jobs makes a fetch fail, and the whole queue stall, once a
// waiting job's key is active (pg-boss issues #535, #492).
import type { Client as PgClient } from 'pg';
import type PgBoss from 'pg-boss';
import type { Logger } from './logger';
import { repeater, type WorkHandler, type WorkMessage, type WorkQueue } from './work-queue';

type Job = PgBoss.Job<Record<string, unknown>>;

/** pg, loaded on PostgreSQL only: the embedded database never pays for it at start. */
const pg = () => require('pg') as typeof import('pg');
type QueueOptions = Omit<PgBoss.Queue, 'name'>;

/** Delayed messages of a key due within this many milliseconds of each other are one message. */
const DELAY_STEP_MS = 100;
/** Retried twice a second apart; a job taken by an instance that died is failed (and retried) after a minute. */
const KIND_QUEUE = { policy: 'short', retryLimit: 2, retryDelay: 1, expireInSeconds: 60 } as const;
/**
 * `short` too: while a turn waits, the asks of later periods are refused rather than piling up behind a long
 * sweep. A failed turn is not retried (the next period is); a sweep may take a while.
 */
const EVERY_QUEUE = { policy: 'short', retryLimit: 0, expireInSeconds: 15 * 60 } as const;
/** Polling only finds the work of other instances: an instance wakes its own worker when it queues a job. */
const POLLING_SECONDS = 0.5;
const STOP_TIMEOUT_MS = 10_000;
const IDLE_POLL_MS = 20;

const everyQueue = (kind: string) => `every.${kind}`;

/** What of an error a log line carries: a database error's detail, or a handler's error, may hold a payload. */
function summary(err: unknown) {
  const { name, code, message } = (typeof err === 'object' && err !== null ? err : { message: String(err) }) as Record<string, unknown>;
  return { name, code, message };
}

export function createPgBossQueue({ connectionString, logger, schema = 'flows_work' }: { connectionString: string; logger: Logger; schema?: string }): WorkQueue {
  const handlers = new Map<string, WorkHandler>();
  const repeating = new Map<string, () => Promise<void>>();
  /** Queue name → that queue created and this instance's worker on it started. */
  const opened = new Map<string, Promise<void>>();
  /** Queue name → this instance's worker on it. */
  const workers = new Map<string, string>();
  const sends = new Set<Promise<void>>();
  /** Message handlers under way here (what idle waits for), and repeating turns (what stop also waits for). */
  const running = new Set<Promise<void>>();
  const turns = new Set<Promise<void>>();
  const early: WorkMessage[] = [];
  let boss: PgBoss | null = null;
  let starting: Promise<void> | null = null;
  let stopped = false;

  const dueSql = `SELECT count(*)::int AS n FROM ${schema}.job WHERE name = ANY($1::text[])
    AND (state = 'active' OR (state IN ('created', 'retry') AND start_after <= now()))`;

  const track = (set: Set<Promise<void>>, promise: Promise<void>) => {
    set.add(promise);
    void promise.finally(() => set.delete(promise));
    return promise;
  };
  const warn = (message: string, kind?: string) => (err: unknown) => logger.warn({ err: summary(err), kind }, message);
  const repeats = repeater(logger, ({ kind, everyMs }) => tick(kind, everyMs).catch(warn('repeating background work could not be queued', kind)));
  const wake = (name: string) => {
    const worker = workers.get(name);
    if (worker) boss?.notifyWorker(worker);
  };

  /**
   * Creates the queues missing. pg-boss makes each queue a table partition, and two creations at once
   * deadlock (PostgreSQL ends one of them after a second): they take turns under an advisory lock, held by
   * a connection of its own since pg-boss's pool gives no session.
   */
  async function createQueues(b: PgBoss, queues: [string, QueueOptions][]) {
    const existing = new Set((await b.getQueues()).map((queue) => queue.name));
    const missing = queues.filter(([name]) => !existing.has(name));
    if (missing.length === 0) return;
    const lock: PgClient = new (pg().Client)({ connectionString, application_name: 'flows-work' });
    lock.on('error', () => {}); // a lost connection fails the query under way, and ends the lock with it
    await lock.connect();
    try {
      await lock.query('SELECT pg_advisory_lock(hashtext($1))', [`${schema}.create_queue`]);
      for (const [name, options] of missing) await b.createQueue(name, { name, ...options });
    } finally {
      await lock.end();
    }
  }

  function open(name: string, options: QueueOptions, batchSize: number, onJobs: (jobs: Job[]) => Promise<void>) {
    const b = boss!;
    const ready = (async () => {
      await createQueues(b, [[name, options]]);
      workers.set(name, await b.work<Record<string, unknown>>(name, { batchSize, pollingIntervalSeconds: POLLING_SECONDS }, onJobs));
    })();
    opened.set(name, ready);
    return ready;
  }
  const openKind = (kind: string) => open(kind, KIND_QUEUE, 16, (jobs) => handleBatch(kind, jobs));
  // One at a time: an instance never runs two turns of a kind at once.
  const openEvery = (kind: string) => open(everyQueue(kind), EVERY_QUEUE, 1, () => track(turns, turn(kind)));

  /** Each job of a batch on its own: a handler that throws fails its job only. */
  async function handleBatch(kind: string, jobs: Job[]) {
    const handler = handlers.get(kind)!;
    const failed: string[] = [];
    const one = async (job: Job) => {
      try {
        await handler(job.data);
      } catch (err) {
        logger.error({ err: summary(err), kind }, 'background work failed');
        failed.push(job.id);
      }
    };
    await Promise.all(jobs.map((job) => track(running, one(job))));
    // Failed once the whole batch is done: pg-boss then completes every job of the batch still active, and a
    // job failed earlier could be active again by then, retried a second later by another instance.
    if (failed.length) await boss?.fail(kind, failed).catch(warn('background work could not be marked failed', kind));
  }

  async function turn(kind: string) {
    await repeating.get(kind)!().catch((err) => logger.error({ err: summary(err), kind }, 'repeating background work failed'));
  }

  /**
   * Every instance's timer asks for a turn; pg-boss takes the first ask of each time slot and refuses the
   * others (its unique index on the slot, `singleton_on`), so one turn runs per period among all instances.
   */
  async function tick(kind: string, everyMs: number) {
    const name = everyQueue(kind);
    await opened.get(name);
    const id = await boss!.send(name, {}, { singletonKey: kind, singletonSeconds: Math.max(1, Math.round(everyMs / 1000)) });
    if (id) wake(name);
  }

  /**
   * A delayed message coalesces only with delayed ones (waiting, it must not swallow an immediate one) due in
   * the same step, and is handled at the step's end: the message kept (the first) is never handled before
   * one it stood for was due, and a later ask is never refused for an earlier one still waiting.
   */
  function later(key: string, delayMs: number) {
    const due = Math.ceil((Date.now() + delayMs) / DELAY_STEP_MS) * DELAY_STEP_MS;
    return { singletonKey: `${key}@${due}`, startAfter: new Date(due) };
  }

  // A message lost to a database outage is found again by the sweeps, so a failed send is only logged.
  function send({ kind, key, payload, delayMs }: WorkMessage) {
    const sent = (async () => {
      await opened.get(kind);
      const options = delayMs ? later(key, delayMs) : { singletonKey: key };
      const id = await boss!.send(kind, payload, options);
      if (id && !delayMs) wake(kind);
    })().catch((err) => logger.warn({ err: summary(err), kind, key }, 'background work could not be queued'));
    track(sends, sent);
  }

  async function begin() {
    // Done work is moved aside after an hour and deleted an hour later (a busy instance queues thousands a
    // minute); an hour is also the longest repeating period, which pg-boss requires to fit in the first.
    const b = new (require('pg-boss') as typeof PgBoss)({
      connectionString,
      schema,
      application_name: 'flows-work',
      max: 4,
      schedule: false,
      supervise: true,
      migrate: true,
      archiveCompletedAfterSeconds: 3600,
      deleteAfterSeconds: 3600,
    });
    b.on('error', warn('the shared work queue met an error'));
    await b.start();
    try {
      // All under one turn of the lock, rather than one each.
      await createQueues(b, [
        ...[...handlers.keys()].map((kind): [string, QueueOptions] => [kind, KIND_QUEUE]),
        ...[...repeating.keys()].map((kind): [string, QueueOptions] => [everyQueue(kind), EVERY_QUEUE]),
      ]);
      // Opened at once with `boss` set: from then on a message is sent once its kind's queue is opened.
      boss = b;
      for (const kind of handlers.keys()) openKind(kind);
      for (const kind of repeating.keys()) openEvery(kind);
      await Promise.all(opened.values());
    } catch (err) {
      boss = null;
      opened.clear();
      workers.clear();
      await b.stop({ graceful: false }).catch(() => {});
      throw err;
    }
    for (const message of early.splice(0)) send(message);
    repeats.start();
  }

  const dueOrActive = async (b: PgBoss) => {
    const result = await b.getDb().executeSql(dueSql, [[...handlers.keys()]]);
    return (result?.rows[0]?.n as number | undefined) ?? 0;
  };

  return {
    handle(kind, handler) {
      handlers.set(kind, handler);
      if (boss && !opened.has(kind)) openKind(kind).catch(warn('the shared work queue could not take work', kind));
    },
    enqueue(message) {
      if (stopped) return;
      if (!handlers.has(message.kind)) throw new Error(`no handler for work of kind ${message.kind}`);
      if (boss) send(message);
      else early.push(message);
    },
    every(kind, everyMs, handler) {
      repeating.set(kind, handler);
      if (boss && !opened.has(everyQueue(kind))) openEvery(kind).catch(warn('the shared work queue could not take work', kind));
      repeats.add({ kind, everyMs, handler });
    },
    start() {
      stopped = false;
      starting ??= begin().catch((err) => {
        starting = null;
        throw err;
      });
      return starting;
    },
    async stop() {
      stopped = true;
      await starting?.catch(() => {});
      await repeats.stop();
      const b = boss;
      if (b) {
        await Promise.all(sends); // they land before the pool closes
        await b.stop({ graceful: true, wait: true, timeout: STOP_TIMEOUT_MS }).catch(warn('the shared work queue stopped badly'));
      }
      // A batch fetched as pg-boss began to stop runs after its wait for the work under way.
      await Promise.all([...running, ...turns]);
      boss = null;
      starting = null;
      opened.clear();
      workers.clear();
    },
    async idle() {
      for (;;) {
        await Promise.all([...sends, ...running]);
        const b = boss;
        if (!b || ((await dueOrActive(b)) === 0 && sends.size === 0 && running.size === 0)) return;
        await new Promise((resolve) => setTimeout(resolve, IDLE_POLL_MS));
      }
    },
  };
}
