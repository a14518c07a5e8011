// Waiting between polls of a run: the states after which a run never changes, and a pause that an
// AbortSignal ends early.
import type { RunState } from './types';

export const DEFAULT_INTERVAL_MS = 1000;

export const TERMINAL_STATES: ReadonlySet<RunState> = new Set<RunState>(['succeeded', 'failed', 'timed_out', 'canceled', 'expired']);

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
