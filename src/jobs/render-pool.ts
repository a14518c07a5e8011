// Templates render in worker threads, never on the main thread: a tenant's template may loop for its
// whole render limit, and the main thread answers every request (and /healthz) of every tenant. The pool
// holds each render to the limit itself: a worker that overruns it is terminated and replaced, so even a
// render liquidjs cannot interrupt (one long filter) costs a worker thread, not the process. Each tenant
// has at most `perTenant` renders in flight; the others wait in line, and when `waitingPerTenant` already
// wait a request is refused with 429 (background work waits its turn instead: its own queue bounds it).
import { availableParallelism } from 'node:os';
import { extname, join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { RateLimited } from '../lib/errors';
import { lruFor } from '../lib/lru';
import { perKeyLimit } from '../lib/per-key-limit';
import type { RenderAnswer, RenderRequest } from './render-worker';
import { compileTemplate, pickPaths, RENDER_LIMIT_EXCEEDED, RENDER_LIMIT_MS, templatePaths, TemplateProblem } from './templates-fns';

/** A TemplateProblem of the `index`th of the sources rendered together. */
export class RenderProblem extends TemplateProblem {
  constructor(
    message: string,
    readonly index: number,
  ) {
    super(message);
  }
}

export interface RenderPool {
  /**
   * The outputs of `sources` (Liquid), rendered in order with `context` (structured-clone data). Rejects
   * with a RenderProblem for the first that fails, or RateLimited when the tenant's line is full and the
   * caller is not background work.
   */
  render(tenantId: string, sources: string[], context: Record<string, unknown>, options?: { background?: boolean }): Promise<string[]>;
  /** Workers running, and renders waiting for one (logs, tests). */
  stats(): { workers: number; waiting: number };
  /** Terminates the workers; renders not finished are rejected. */
  close(): Promise<void>;
}

export interface RenderPoolOptions {
  /** Worker threads at most, started as renders need them. */
  size?: number;
  /** How long one template may render before its worker is stopped (liquidjs stops it first, normally). */
  limitMs?: number;
  /** Beyond the limit, before the pool stops a worker: liquidjs's own answer, with the position, is better. */
  slackMs?: number;
  perTenant?: number;
  waitingPerTenant?: number;
  /** A worker's heap; one that runs out is replaced and the render answers liquidjs's memory problem. */
  heapMb?: number;
  /** A worker idle this long is stopped (about 10 MB each); the next render starts one again (~50 ms). */
  idleMs?: number;
}

// A worker thread loads JavaScript, not TypeScript. Built (`npm run build`), this module is
// dist/src/jobs/render-pool.js and the worker's file, render-worker.js, is compiled beside it. Run from the
// sources (jest's swc transform, or `node -r ./test/support/register-ts.js src/main.ts`), this module is a
// .ts file and a new thread knows no hook to load one: the bootstrap then first registers the swc hook the
// test suite's child processes use (test/support/register-ts.js), then loads render-worker.ts. One inline
// bootstrap serves both, so src/ holds only .ts files and dist/ only the compiler's output.
const SOURCES_ARE_TS = extname(__filename) === '.ts';
const WORKER_DATA = {
  file: join(__dirname, `render-worker${extname(__filename)}`),
  hook: SOURCES_ARE_TS ? resolve(__dirname, '../../test/support/register-ts.js') : null,
};
const BOOTSTRAP = "const { workerData } = require('node:worker_threads'); if (workerData.hook) require(workerData.hook); require(workerData.file);";

const MEMORY_EXCEEDED = 'memory alloc limit exceeded'; // liquidjs's words for its own memory limit

interface Task {
  request: RenderRequest;
  resolve(outputs: string[]): void;
  reject(err: unknown): void;
}

interface Slot {
  worker: Worker;
  task: Task | null;
  /** The source being rendered: the worker tells when it starts the next. */
  index: number;
  /** Whether the worker has loaded its modules: the render limit counts from then. */
  ready: boolean;
  timer?: NodeJS.Timeout;
  idle?: NodeJS.Timeout;
}

/** How long a new worker may take to load (compiling the sources first, when run from them). */
const STARTUP_MS = 30_000;

export function createRenderPool({
  size = Math.max(1, Math.min(4, availableParallelism() - 1)),
  limitMs = RENDER_LIMIT_MS,
  slackMs = 250,
  perTenant = 2,
  // A render takes a fraction of a millisecond: a tenant's burst of invocations (32 at once, as the bench
  // sends) waits its turn; only a pile-up of renders that run to their limit is refused.
  waitingPerTenant = 200,
  heapMb = 256,
  idleMs = 10_000,
}: RenderPoolOptions = {}): RenderPool {
  const slots: Slot[] = [];
  const pending: Task[] = [];
  const tenants = perKeyLimit({ inFlight: perTenant, waiting: waitingPerTenant, refuse: () => new RateLimited(1, 'Too many template renders of this tenant are under way') });

  const settle = (slot: Slot, outcome: (task: Task) => void) => {
    const { task } = slot;
    clearTimeout(slot.timer);
    slot.task = null;
    if (task) outcome(task);
  };

  /** The worker is gone (stopped, crashed, out of memory): its render fails, a new worker starts on demand. */
  const drop = (slot: Slot, err: unknown) => {
    const at = slots.indexOf(slot);
    if (at < 0) return;
    slots.splice(at, 1);
    clearTimeout(slot.idle);
    settle(slot, (task) => task.reject(err));
    void slot.worker.terminate();
    pump();
  };

  /** An idle worker keeps no process alive, and is stopped when it stays idle. */
  const rest = (slot: Slot) => {
    slot.worker.unref();
    slot.idle = setTimeout(() => drop(slot, new Error('idle')), idleMs).unref();
  };

  const arm = (slot: Slot) => {
    clearTimeout(slot.timer);
    slot.timer = slot.ready
      ? setTimeout(() => drop(slot, new RenderProblem(RENDER_LIMIT_EXCEEDED, slot.index)), limitMs + slackMs)
      : setTimeout(() => drop(slot, new Error('a template render worker did not start')), STARTUP_MS);
  };

  function spawn(): Slot {
    const worker = new Worker(BOOTSTRAP, { eval: true, workerData: WORKER_DATA, resourceLimits: { maxOldGenerationSizeMb: heapMb } });
    const slot: Slot = { worker, task: null, index: 0, ready: false };
    worker.on('message', (answer: RenderAnswer | { started: number } | { ready: true }) => {
      if (!slots.includes(slot)) return;
      if ('ready' in answer) {
        slot.ready = true;
        return slot.task && arm(slot);
      }
      if ('started' in answer) {
        slot.index = answer.started;
        return arm(slot);
      }
      rest(slot);
      settle(slot, (task) => {
        if ('outputs' in answer) task.resolve(answer.outputs);
        else if ('failed' in answer) task.reject(new RenderProblem(answer.message, answer.failed));
        else task.reject(new Error(`a template render failed in its worker: ${answer.error}`));
      });
      pump();
    });
    worker.on('error', (err: Error & { code?: string }) => drop(slot, err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? new RenderProblem(MEMORY_EXCEEDED, slot.index) : err));
    worker.on('exit', () => drop(slot, new Error('a template render worker exited')));
    slots.push(slot);
    return slot;
  }

  function pump() {
    while (pending.length) {
      const slot = slots.find((candidate) => !candidate.task) ?? (slots.length < size ? spawn() : null);
      if (!slot) return;
      const task = pending.shift()!;
      clearTimeout(slot.idle);
      slot.task = task;
      slot.index = 0;
      slot.worker.ref(); // a render under way is waited for
      arm(slot);
      try {
        slot.worker.postMessage(task.request);
      } catch (err) {
        settle(slot, (failed) => failed.reject(err)); // a context that is not structured-clone data
        rest(slot);
      }
    }
  }

  // What each source reads of its context, worked out once (parsing is bounded; the worker parses again):
  // only that is copied to the worker. A source that does not parse takes the whole context, for its problem.
  const reads = lruFor<{ paths: (string | number)[][] | null }>({ max: 1000, maxWeight: 10_000_000, weigh: (source) => source.length });
  const readsOf = (source: string) =>
    reads.get(source, () => {
      try {
        return { paths: templatePaths(compileTemplate(source)) };
      } catch {
        return { paths: null };
      }
    }).paths;
  const contextFor = (sources: string[], context: Record<string, unknown>) => {
    const paths = sources.map(readsOf);
    return paths.includes(null) ? context : pickPaths(context, paths.flat() as (string | number)[][]);
  };

  const enqueue = (request: RenderRequest) =>
    new Promise<string[]>((resolve, reject) => {
      pending.push({ request, resolve, reject });
      pump();
    });

  return {
    render(tenantId, sources, context, { background = false } = {}) {
      if (!sources.length) return Promise.resolve([]);
      return tenants.run(tenantId, () => enqueue({ sources, context: contextFor(sources, context) }), { waitWhateverTheLine: background });
    },
    stats: () => ({ workers: slots.length, waiting: pending.length }),
    async close() {
      const closed = new Error('the render pool is closed');
      for (const task of pending.splice(0)) task.reject(closed);
      const workers = [...slots];
      for (const slot of workers) drop(slot, closed);
      await Promise.all(workers.map((slot) => slot.worker.terminate()));
    },
  };
}

let shared: RenderPool | undefined;

/**
 * The process's pool, made at the first call (its workers start with the first render): its threads share
 * the machine's cores, so app instances in one process (as in tests) share it rather than multiply them.
 */
export const sharedRenderPool = (): RenderPool => (shared ??= createRenderPool());
