// The one port of background work (dispatching runs; later schedules, retries, sweeps). Work is a message
// of a kind with a JSON payload, handled by the handler registered for its kind, so that a shared queue
// (pg-boss on PostgreSQL) can carry it between instances. This in-process queue runs the messages of one
// key one at a time and coalesces: a message already waiting is not queued again, since the waiting one
// will see the newest state anyway.
import type { Logger } from './logger';

export interface WorkMessage {
  kind: string;
  /** Messages with equal keys run one after another, never at once. */
  key: string;
  payload: Record<string, unknown>;
}

export interface WorkQueue {
  handle(kind: string, handler: (payload: Record<string, unknown>) => Promise<void>): void;
  enqueue(message: WorkMessage): void;
  /** Resolves when nothing is queued or running (tests, shutdown). */
  idle(): Promise<void>;
}

export function createInProcessQueue(logger: Logger): WorkQueue {
  const handlers = new Map<string, (payload: Record<string, unknown>) => Promise<void>>();
  const tails = new Map<string, Promise<void>>();
  const waiting = new Set<string>();

  return {
    handle(kind, handler) {
      handlers.set(kind, handler);
    },
    enqueue({ kind, key, payload }) {
      const id = `${kind}:${key}`;
      if (waiting.has(id)) return;
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
    },
    async idle() {
      while (tails.size > 0) await Promise.all(tails.values());
    },
  };
}
