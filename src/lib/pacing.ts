// Background work that yields to answering requests. Node runs both on one thread, and work that writes a
// lot (evaluating a webhook delivery starts runs) would otherwise take the loop from the requests that
// queue it. While the foreground is busy and the event loop is saturated, each step is followed by a pause
// that keeps the work to `share` of the loop; otherwise steps run back to back, one per turn of the loop.
import { performance } from 'node:perf_hooks';

/** Utilization above this counts as saturated. */
const SATURATED = 0.9;
/** Utilization is measured over windows of about this long. */
const WINDOW_MS = 250;

export interface Pacing {
  /** Runs one step of background work, then waits as long as the pacing asks before answering. */
  step<T>(work: () => Promise<T>): Promise<T>;
}

/** Whether the event loop was saturated in the last whole window. */
export function loopSaturation(): () => boolean {
  let windowStart = performance.eventLoopUtilization();
  let windowAt = performance.now();
  let utilization = 0;
  return () => {
    if (performance.now() - windowAt >= WINDOW_MS) {
      utilization = performance.eventLoopUtilization(windowStart).utilization;
      windowStart = performance.eventLoopUtilization();
      windowAt = performance.now();
    }
    return utilization > SATURATED;
  };
}

export function createPacing({ share, foregroundBusy, saturated = loopSaturation() }: { share: number; foregroundBusy: () => boolean; saturated?: () => boolean }): Pacing {
  return {
    async step(work) {
      await new Promise((resolve) => setImmediate(resolve));
      const started = performance.now();
      try {
        return await work();
      } finally {
        if (foregroundBusy() && saturated()) {
          const pause = ((performance.now() - started) * (1 - share)) / share;
          await new Promise((resolve) => setTimeout(resolve, pause));
        }
      }
    },
  };
}
