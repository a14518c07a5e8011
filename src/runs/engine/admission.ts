// Admission: the one decision of flow control on a new run — fold it into a run still waiting (debounce),
// skip it (its concurrency key is held), refuse it (its rate limit is reached), or queue it, superseding
// older runs of its key (cancel-running). Run creation asks it with what the database shows; backtests ask
// it with what they simulate. Also the retry policy: whether and when an attempt that ended is tried again.
import type { components } from '../../../generated/openapi';
import type { FailureCause, Outcome } from '../../integrations/executor';
import { durationMs, type FlowControl } from '../../jobs/flow-control-fns';
import type { RunEvent, RunState } from './lifecycle';

type OnConflict = 'queue' | 'cancel-running' | 'skip';

/** The job's flow control over one run, with durations in milliseconds. */
export interface AdmissionRules {
  concurrency: { limit: number; onConflict?: OnConflict } | null;
  rateLimit: { limit: number } | null;
  debounce: { periodMs: number; maxWaitMs: number } | null;
}

/** What the new run finds under its keys. */
export interface Seen {
  /** The run of its debounce key still waiting for more, with when it was created (epoch ms). */
  waiting: { id: string; createdAt: number } | null;
  /** The runs of its concurrency key not yet ending, oldest first. */
  unfinished: { id: string }[];
  /** How many runs of its rate key were created within the window; null when the write checks it (run creation). */
  recent: number | null;
}

export type Admission =
  | { action: 'fold'; into: string; notBefore: number }
  | { action: 'skip'; holder: string }
  | { action: 'rate_limit' }
  /** Created: it waits for its debounce period (`notBefore`, epoch ms) and supersedes `supersede`. */
  | { action: 'queue'; supersede: string[]; notBefore: number | null };

/**
 * What a new run does about the unfinished runs of its concurrency key (oldest first) under `onConflict`:
 * `queue` waits its turn, `cancel-running` supersedes the oldest so that the newest `limit` remain, `skip` is
 * not created while the key is at its limit (naming the run that holds it).
 */
export function onArrival({ limit, onConflict = 'queue' }: { limit: number; onConflict?: OnConflict }, unfinished: { id: string }[]): { skippedFor: string | null; supersede: string[] } {
  if (onConflict === 'skip' && unfinished.length >= limit) return { skippedFor: unfinished[0].id, supersede: [] };
  // The newest win: the new run and the newest `limit - 1` of the others keep the key's places.
  const superseded = onConflict === 'cancel-running' ? unfinished.slice(0, Math.max(0, unfinished.length - (limit - 1))) : [];
  return { skippedFor: null, supersede: superseded.map((run) => run.id) };
}

/** Flow control's decision on a run arriving at `at` (epoch ms), in its order: debounce, concurrency, rate limit. */
export function admit({ concurrency, rateLimit, debounce }: AdmissionRules, { waiting, unfinished, recent }: Seen, at: number): Admission {
  // A run still waiting takes the arrival's place and waits again, at most `maxWait` after it was created.
  if (debounce && waiting) return { action: 'fold', into: waiting.id, notBefore: Math.min(at + debounce.periodMs, waiting.createdAt + debounce.maxWaitMs) };
  const arrived = concurrency && onArrival(concurrency, unfinished);
  if (arrived?.skippedFor) return { action: 'skip', holder: arrived.skippedFor };
  if (rateLimit && recent !== null && recent >= rateLimit.limit) return { action: 'rate_limit' };
  return { action: 'queue', supersede: arrived?.supersede ?? [], notBefore: debounce ? at + debounce.periodMs : null };
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
  concurrency: { limit: number; onConflict?: OnConflict } | null;
  rateLimit: { limit: number; periodMs: number; period: string } | null;
  debounce?: { periodMs: number; maxWaitMs: number } | null;
  runMs: number;
}

/**
 * What flow control would have made of `arrivals` (in time order): each is admitted (`admit`) against the
 * runs simulated so far. Each run is taken to last `runMs` from its start: when its key has room, and not
 * before its debounce period is over (each fold pushes it back, at most `maxWait` after the first). A model,
 * not a replay: the job's own `concurrencyLimit`, ttl and retries are left out.
 */
export function simulateFlow<T>(arrivals: Arrival<T>[], { concurrency, rateLimit, debounce = null, runMs }: SimulatedFlow): Simulated<T>[] {
  const outcomes: Simulated<T>[] = [];
  type Planned = { index: number; firstAt: number; startsAt: number };
  const live = new Map<string, Planned[]>();
  const waiting = new Map<string, Planned>();
  const created = new Map<string, number[]>();
  const started = (run: Planned) => outcomes[run.index].outcome === 'started';
  const ongoing = (run: Planned, at: number) => run.startsAt + runMs > at && started(run);
  arrivals.forEach((arrival, index) => {
    if (arrival.keyError !== undefined) return void outcomes.push({ outcome: 'key_error', message: arrival.keyError });
    const debounceKey = arrival.debounceKey ?? '~';
    const key = arrival.concurrencyKey ?? '~';
    const rateKey = arrival.rateKey ?? '~';
    const folding = waiting.get(debounceKey);
    const unfinished = (live.get(key) ?? []).filter((run) => ongoing(run, arrival.at));
    const recent = (created.get(rateKey) ?? []).filter((at) => at > arrival.at - (rateLimit?.periodMs ?? 0));
    const seen: Seen = {
      waiting: folding && folding.startsAt > arrival.at && started(folding) ? { id: String(folding.index), createdAt: folding.firstAt } : null,
      unfinished: unfinished.map((run) => ({ id: String(run.index) })),
      recent: recent.length,
    };
    const admission = admit({ concurrency, rateLimit, debounce }, seen, arrival.at);
    switch (admission.action) {
      case 'fold':
        folding!.startsAt = Math.max(folding!.startsAt, admission.notBefore);
        return void outcomes.push({ outcome: 'folded', by: arrivals[folding!.index].of, message: 'would start nothing: folded into the waiting run of an earlier delivery (debounce)' });
      case 'skip':
        return void outcomes.push({ outcome: 'skipped', by: arrivals[Number(admission.holder)].of, message: 'would start nothing: the run of an earlier delivery would hold its key (skip)' });
      case 'rate_limit':
        return void outcomes.push({ outcome: 'rate_limited', message: `would start nothing: the rate limit (${rateLimit!.limit} per ${rateLimit!.period}) would be reached` });
      case 'queue': {
        created.set(rateKey, [...recent, arrival.at]);
        for (const older of admission.supersede) {
          outcomes[Number(older)] = { outcome: 'superseded', by: arrival.of, message: 'would start a run, superseded by the run of a later delivery (cancel-running)' };
        }
        const holding = unfinished.filter(started).map((run) => run.startsAt + runMs).sort((a, b) => a - b);
        const planned = { index, firstAt: arrival.at, startsAt: Math.max(admission.notBefore ?? arrival.at, concurrency && holding.length >= concurrency.limit ? holding[holding.length - concurrency.limit] : 0) };
        live.set(key, [...(live.get(key) ?? []), planned]);
        if (debounce) waiting.set(debounceKey, planned);
        return void outcomes.push({ outcome: 'started', message: 'would start a run' });
      }
    }
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

/** What deciding on another attempt needs: the job, the attempt that ended, the job's retry policy. */
export interface Tries {
  jobId: string;
  attempt: number;
  retry: FlowControl['retry'];
}

/** Another attempt, when the job's retry policy tries `outcome` again; null when it does not. */
export function retryOf(outcome: Outcome, { attempt, retry }: Tries, now = Date.now()): RunEvent | null {
  if (outcome.state === 'succeeded') return null;
  const next = retryDelayMs(retry, attempt, outcome);
  if (!next) return null;
  const after = `${Math.round(next.delayMs / 100) / 10} s`;
  return { type: 'retry', error: outcome.error, attempt: attempt + 1, notBefore: new Date(now + next.delayMs), after, because: next.because };
}

/**
 * The event an attempt's end is, by the state the run is found in: another attempt when the job's retry
 * policy tries `outcome` again (never for a run being stopped), else `otherwise`.
 */
export const ending = (outcome: Outcome, tries: Tries, otherwise: RunEvent) => (from: RunState, at: Date): RunEvent => (from !== 'canceling' && retryOf(outcome, tries, at.getTime())) || otherwise;
