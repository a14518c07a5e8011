// The one port of background work: dispatching runs, chains, webhook evaluation, event attempts, and the
// repeating sweeps (schedules, due event retries, lapsed instances, expired records). Work is a message of
// a kind with a JSON payload, handled by the handler registered for its kind, so that a shared queue
// (pg-boss on PostgreSQL, work-queue-pg.ts) can carry it between instances. This in-process queue, for
// the embedded SQLite default, runs the messages of one key one at a time and coalesces: a message
// already waiting is not queued again, since the waiting one will see the newest state anyway.
import type { Logger } from './logger';

export type WorkHandler = (payload: Record<string, unknown>) => Promise<void>;

export interface WorkMessage {
  kind: string;
  /** A message waiting with the same kind and key takes this one's place (it will see the newest state). */
  key: string;
  payload: Record<string, unknown>;
  /** Not handled before this many milliseconds from now. */
  delayMs?: number;
}

export interface WorkQueue {
  handle(kind: string, handler: WorkHandler): void;
  enqueue(message: WorkMessage): void;
  /**
   * Runs `handler` about every `everyMs` once `start` was called: once per period among all the instances
   * sharing the queue (one of them does it), never twice at once in one instance.
   */
  every(kind: string, everyMs: number, handler: () => Promise<void>): void;
  /** Starts the repeating work (and, for a shared queue, taking messages from other instances). */
  start(): Promise<void>;
  /** Stops taking work and waits for the handlers under way. */
  stop(): Promise<void>;
  /** Resolves when nothing is queued, due or running (tests, shutdown); delayed messages not yet due are not waited for. */
  idle(): Promise<void>;
}

interface Repeating {
  kind: string;
  everyMs: number;
  handler: () => Promise<void>;
}

/** The repeating part of either queue: a timer per kind, the next turn timed from the end of the last. */
export function repeater(logger: Logger, turn: (repeating: Repeating) => Promise<void>) {
  const repeating: Repeating[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const running = new Set<Promise<void>>();
  let started = false;

  const schedule = (job: Repeating, ms: number) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      const done = turn(job)
        .catch((err) => logger.error({ err, kind: job.kind }, 'repeating background work failed'))
        .finally(() => {
          running.delete(done);
          if (started) schedule(job, job.everyMs);
        });
      running.add(done);
    }, ms).unref();
    timers.add(timer);
  };

  return {
    add(job: Repeating) {
      repeating.push(job);
      if (started) schedule(job, 0);
    },
    start() {
      if (started) return;
      started = true;
      for (const job of repeating) schedule(job, 0);
    },
    async stop() {
      started = false;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await Promise.all(running);
    },
  };
}

export function createInProcessQueue(logger: Logger): WorkQueue {
  const handlers = new Map<string, WorkHandler>();
  const tails = new Map<string, Promise<void>>();
  const waiting = new Set<string>();
  const delayed = new Set<NodeJS.Timeout>();
  const repeats = repeater(logger, (job) => job.handler());
  let stopped = false;

  const enqueueNow = ({ kind, key, payload }: WorkMessage) => {
    const id = `${kind}:${key}`;
    if (stopped || waiting.has(id)) return;
    const handler = handlers.get(kind);
    if (!handler) throw new Error(`no handler for work of kind ${kind}`);
    waiting.add(id);
    const tail = (tails.get(id) ?? Promise.resolve())
      // After the current turn of the event loop: the answer of the request that queued the work leaves first.
      .then(() => new Promise((resolve) => setImmediate(resolve)))
      .then(() => {
        waiting.delete(id);
        return handler(payload);
      })
      .catch((err) => logger.error({ err, kind, key }, 'background work failed'))
      .finally(() => {
        if (tails.get(id) === tail) tails.delete(id);
      });
    tails.set(id, tail);
  };

  return {
    handle(kind, handler) {
      handlers.set(kind, handler);
    },
    enqueue(message) {
      if (!message.delayMs) return enqueueNow(message);
      const timer = setTimeout(() => {
        delayed.delete(timer);
        enqueueNow(message);
      }, message.delayMs).unref();
      delayed.add(timer);
    },
    every(kind, everyMs, handler) {
      repeats.add({ kind, everyMs, handler });
    },
    async start() {
      stopped = false;
      repeats.start();
    },
    async stop() {
      stopped = true;
      for (const timer of delayed) clearTimeout(timer);
      delayed.clear();
      await repeats.stop();
      await this.idle();
    },
    async idle() {
      while (tails.size > 0) await Promise.all(tails.values());
    },
  };
}
