// The run lifecycle as data: which state may follow which, and what a move changes. Every state change goes
// through `transition`, and every write of one is guarded by the state it moves from.
import type { components } from '../../generated/openapi';
import type { FailureCause } from '../integrations/executor';
import { durationMs } from '../jobs/flow-control-fns';

export type RunState = components['schemas']['RunState'];
export type RunView = components['schemas']['Run'];

const NEXT: Record<RunState, readonly RunState[]> = {
  queued: ['starting', 'canceling', 'expired'],
  // Back to `queued`: a new attempt (flowControl.retry).
  starting: ['running', 'failed', 'timed_out', 'canceling', 'queued'],
  running: ['succeeded', 'failed', 'timed_out', 'canceling', 'queued'],
  canceling: ['canceled'],
  succeeded: [],
  failed: [],
  timed_out: [],
  canceled: [],
  expired: [],
};

/** Every state, in lifecycle order. */
export const RUN_STATES = Object.keys(NEXT) as RunState[];

/** States that hold a slot of the job's `concurrencyLimit`. */
export const ACTIVE_STATES: RunState[] = ['starting', 'running', 'canceling'];

export const isTerminal = (state: RunState) => NEXT[state].length === 0;
export const isStoppable = (state: RunState) => NEXT[state].includes('canceling');
export const canTransition = (from: RunState, to: RunState) => NEXT[from].includes(to);

/**
 * What a new run does about the unfinished runs of its concurrency key (oldest first) under `onConflict`:
 * `queue` waits its turn, `cancel-running` supersedes the oldest so that the newest `limit` remain, `skip` is
 * not created while the key is at its limit (naming the run that holds it).
 */
export function onArrival(
  { limit, onConflict = 'queue' }: { limit: number; onConflict?: 'queue' | 'cancel-running' | 'skip' },
  unfinished: { id: string }[],
): { skippedFor: string | null; supersede: string[] } {
  if (onConflict === 'skip' && unfinished.length >= limit) return { skippedFor: unfinished[0].id, supersede: [] };
  // The newest win: the new run and the newest `limit - 1` of the others keep the key's places.
  const superseded = onConflict === 'cancel-running' ? unfinished.slice(0, Math.max(0, unfinished.length - (limit - 1))) : [];
  return { skippedFor: null, supersede: superseded.map((run) => run.id) };
}

/** A match a backtest replays through flow control: when, with which keys (or why a key failed), and for what. */
export interface Arrival<T> {
  at: number;
  concurrencyKey: string | null;
  rateKey: string | null;
  debounceKey?: string | null;
  keyError?: string;
  of: T;
}

export interface Simulated<T> {
  outcome: 'started' | 'superseded' | 'skipped' | 'rate_limited' | 'folded' | 'key_error';
  by?: T;
  message: string;
}

export interface SimulatedFlow {
  concurrency: { limit: number; onConflict?: 'queue' | 'cancel-running' | 'skip' } | null;
  rateLimit: { limit: number; periodMs: number; period: string } | null;
  debounce?: { periodMs: number; maxWaitMs: number } | null;
  runMs: number;
}

/**
 * What flow control would have made of `arrivals` (in time order), in the order the run engine decides: a
 * match folds into a run of its debounce key still waiting, else `onArrival` and the rate limit decide on a
 * new run. Each run is taken to last `runMs` from its start: when its key has room, and not before its
 * debounce period is over (each fold pushes it back, at most `maxWait` after the first). A model, not a
 * replay: the job's own `concurrencyLimit`, ttl and retries are left out.
 */
export function simulateFlow<T>(arrivals: Arrival<T>[], { concurrency, rateLimit, debounce = null, runMs }: SimulatedFlow): Simulated<T>[] {
  const outcomes: Simulated<T>[] = [];
  type Planned = { index: number; firstAt: number; startsAt: number };
  const live = new Map<string, Planned[]>();
  const waiting = new Map<string, Planned>();
  const created = new Map<string, number[]>();
  const ongoing = (run: Planned, at: number) => run.startsAt + runMs > at && outcomes[run.index].outcome === 'started';
  arrivals.forEach((arrival, index) => {
    if (arrival.keyError !== undefined) return void outcomes.push({ outcome: 'key_error', message: arrival.keyError });
    const debounceKey = arrival.debounceKey ?? '~';
    const folding = debounce && waiting.get(debounceKey);
    if (folding && folding.startsAt > arrival.at && outcomes[folding.index].outcome === 'started') {
      folding.startsAt = Math.max(folding.startsAt, Math.min(arrival.at + debounce.periodMs, folding.firstAt + debounce.maxWaitMs));
      return void outcomes.push({ outcome: 'folded', by: arrivals[folding.index].of, message: 'would start nothing: folded into the waiting run of an earlier delivery (debounce)' });
    }
    const key = arrival.concurrencyKey ?? '~';
    const unfinished = (live.get(key) ?? []).filter((run) => ongoing(run, arrival.at));
    const arrived = concurrency && onArrival(concurrency, unfinished.map((run) => ({ id: String(run.index) })));
    if (arrived?.skippedFor) {
      return void outcomes.push({ outcome: 'skipped', by: arrivals[Number(arrived.skippedFor)].of, message: 'would start nothing: the run of an earlier delivery would hold its key (skip)' });
    }
    const rateKey = arrival.rateKey ?? '~';
    const recent = (created.get(rateKey) ?? []).filter((at) => at > arrival.at - (rateLimit?.periodMs ?? 0));
    if (rateLimit && recent.length >= rateLimit.limit) {
      return void outcomes.push({ outcome: 'rate_limited', message: `would start nothing: the rate limit (${rateLimit.limit} per ${rateLimit.period}) would be reached` });
    }
    created.set(rateKey, [...recent, arrival.at]);
    for (const older of arrived?.supersede ?? []) {
      outcomes[Number(older)] = { outcome: 'superseded', by: arrival.of, message: 'would start a run, superseded by the run of a later delivery (cancel-running)' };
    }
    const holding = unfinished.filter((run) => outcomes[run.index].outcome === 'started').map((run) => run.startsAt + runMs).sort((a, b) => a - b);
    const notBefore = arrival.at + (debounce?.periodMs ?? 0);
    const planned = { index, firstAt: arrival.at, startsAt: Math.max(notBefore, concurrency && holding.length >= concurrency.limit ? holding[holding.length - concurrency.limit] : 0) };
    live.set(key, [...(live.get(key) ?? []), planned]);
    if (debounce) waiting.set(debounceKey, planned);
    outcomes.push({ outcome: 'started', message: 'would start a run' });
  });
  return outcomes;
}

type Retry = components['schemas']['RetryControl'];

const BACKOFF = { initial: '10s', factor: 2, max: '10m' } as const;

/**
 * How long to wait before trying the run again after attempt `attempt` ended in `outcome`, under the job's
 * retry policy; null when it is not tried again (no policy, a class it leaves out, the attempts used up).
 */
export function retryDelayMs(retry: Retry | undefined, attempt: number, outcome: { state: string; cause?: FailureCause }): { delayMs: number; because: Retry['on'][number] } | null {
  const because = outcome.state === 'timed_out' ? 'timed_out' : outcome.state !== 'failed' ? null : outcome.cause === 'agent' ? 'failed' : outcome.cause === 'infrastructure' ? 'infrastructure' : null;
  if (!retry || !because || !retry.on.includes(because) || attempt >= retry.maxAttempts) return null;
  const { initial, factor, max } = { ...BACKOFF, ...retry.backoff };
  return { delayMs: Math.min(durationMs(max)!, durationMs(initial)! * factor ** (attempt - 1)), because };
}

export class IllegalTransition extends Error {
  constructor(from: RunState, to: RunState) {
    super(`a run cannot move from ${from} to ${to}`);
  }
}

/** The columns a move from `from` to `to` sets at `now`; throws for a move the lifecycle does not allow. */
export function transition(from: RunState, to: RunState, now = new Date()): { state: RunState; startedAt?: Date; finishedAt?: Date } {
  if (!canTransition(from, to)) throw new IllegalTransition(from, to);
  if (to === 'starting') return { state: to, startedAt: now };
  if (isTerminal(to)) return { state: to, finishedAt: now };
  return { state: to };
}

/** JSON with object keys sorted, so that equal bodies hash equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

interface RunRow {
  id: string;
  jobId: string;
  invocationId: string | null;
  name: string;
  state: string;
  triggerType: string;
  triggerId: string | null;
  prompt: string;
  result: unknown;
  error: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  replayOf: string | null;
  startKey: string | null;
  attempt: number;
  usage: unknown;
  artifacts: unknown;
}

/** What the cause in a triggered run's start key (`<type>:<trigger>:<cause>`) names, by the trigger's type. */
function causeOf(triggerType: string, startKey: string | null): Partial<RunView['trigger']> {
  const cause = startKey?.split(':').slice(2).join(':');
  if (!cause) return {};
  if (triggerType === 'webhook') return { activityId: cause };
  if (triggerType === 'schedule') return { scheduledFor: cause };
  if (triggerType === 'run') return { runId: cause };
  return {};
}

export function runView(run: RunRow): RunView {
  return {
    id: run.id,
    jobId: run.jobId,
    invocationId: run.invocationId,
    name: run.name,
    state: run.state as RunState,
    trigger: { type: run.triggerType as RunView['trigger']['type'], id: run.triggerId, ...causeOf(run.triggerType, run.startKey) },
    prompt: run.prompt,
    result: (run.result as RunView['result']) ?? null,
    error: run.error,
    createdAt: run.createdAt.toISOString(),
    startedAt: run.startedAt?.toISOString() ?? null,
    finishedAt: run.finishedAt?.toISOString() ?? null,
    replayOf: run.replayOf,
    attempt: run.attempt,
    usage: (run.usage as RunView['usage']) ?? null,
    artifacts: (run.artifacts as RunView['artifacts']) ?? null,
  };
}
