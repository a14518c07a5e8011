// Flow control's pure parts: how an update merges into a job's flow control, the key a context gives,
// and what a new run does about its key's unfinished runs.
import { compileKeys, durationMs, keyOf, mergeFlowControl, runKeys } from '../../src/jobs/flow-control-fns';
import { onArrival, retryDelayMs, simulateFlow } from '../../src/runs/engine/admission';
import { compileCel } from '../../src/triggers/cel-fns';

const runs = (...ids: string[]) => ids.map((id) => ({ id }));

describe('onArrival', () => {
  it('queues by default, whatever the key holds', () => {
    expect(onArrival({ limit: 1 }, runs('r1', 'r2'))).toEqual({ skippedFor: null, supersede: [] });
  });
  it('skips while the key is at its limit, naming its oldest run', () => {
    expect(onArrival({ limit: 2, onConflict: 'skip' }, runs('r1', 'r2'))).toEqual({ skippedFor: 'r1', supersede: [] });
    expect(onArrival({ limit: 2, onConflict: 'skip' }, runs('r1'))).toEqual({ skippedFor: null, supersede: [] });
  });
  it('supersedes the oldest so that the newest keep the key\'s places', () => {
    expect(onArrival({ limit: 1, onConflict: 'cancel-running' }, runs('r1', 'r2'))).toEqual({ skippedFor: null, supersede: ['r1', 'r2'] });
    expect(onArrival({ limit: 2, onConflict: 'cancel-running' }, runs('r1', 'r2', 'r3'))).toEqual({ skippedFor: null, supersede: ['r1', 'r2'] });
    expect(onArrival({ limit: 3, onConflict: 'cancel-running' }, runs('r1'))).toEqual({ skippedFor: null, supersede: [] });
  });
});

describe('mergeFlowControl', () => {
  const saved = { concurrency: { key: 'data.repo', limit: 2 } };
  it('replaces the parts sent, removes those sent as null, clears all with null', () => {
    expect(mergeFlowControl(saved, { concurrency: { limit: 1, onConflict: 'skip' } })).toEqual({ concurrency: { limit: 1, onConflict: 'skip' } });
    expect(mergeFlowControl(saved, { concurrency: null })).toEqual({});
    expect(mergeFlowControl(saved, {})).toEqual(saved);
    expect(mergeFlowControl(saved, null)).toEqual({});
  });
});

describe('keyOf', () => {
  const key = (expression: string, context: Record<string, unknown>) => keyOf('concurrency', compileCel(expression), context);
  it('gives equal keys for equal values, told apart by type', () => {
    expect(key('data.n', { data: { n: 7 } })).toEqual({ ok: true, key: '7' });
    expect(key('data.n', { data: { n: '7' } })).toEqual({ ok: true, key: '"7"' });
    expect(key('data.repo + "#" + string(data.n)', { data: { repo: 'a', n: 1 } })).toEqual({ ok: true, key: '"a#1"' });
  });
  it('hashes a long value, so that a key stays short', () => {
    const long = key('data.text', { data: { text: 'x'.repeat(500) } });
    expect(long).toEqual({ ok: true, key: expect.stringMatching(/^sha256:[\w-]{43}$/) });
  });
  it('fails closed on a value that names no key, or an expression that errs', () => {
    expect(key('data', { data: {} })).toEqual({ ok: false, error: expect.stringContaining('it gave a map') });
    expect(key('data.list', { data: { list: [1] } })).toEqual({ ok: false, error: expect.stringContaining('it gave a list') });
    expect(key('data.missing', { data: {} })).toEqual({ ok: false, error: expect.stringContaining('`flowControl.concurrency.key`') });
  });
  it('is null without a key: the whole job is one key', () => {
    expect(keyOf('rateLimit', null, {})).toEqual({ ok: true, key: null });
  });
});

describe('runKeys', () => {
  const flowControl = { concurrency: { key: 'data.pr', limit: 1 }, rateLimit: { limit: 5, period: '1m' }, debounce: { key: 'data.missing', period: '5s' } };
  const compiled = compileKeys(flowControl);
  it('gives a key for each part the job sets, null for a keyless one', () => {
    expect(runKeys(flowControl, compiled, { data: { pr: 4 } }, ['concurrency', 'rateLimit'])).toEqual({ ok: true, keys: { concurrency: '4', rateLimit: null } });
    expect(runKeys({}, compileKeys({}), { data: {} })).toEqual({ ok: true, keys: {} });
  });
  it('fails closed on the first part whose key errs', () => {
    expect(runKeys(flowControl, compiled, { data: { pr: 4 } })).toEqual({ ok: false, error: expect.stringContaining('`flowControl.debounce.key`') });
  });
});

describe('durationMs', () => {
  it('reads ISO 8601 durations and a number with a unit', () => {
    expect(durationMs('PT30S')).toBe(30_000);
    expect(durationMs('PT1H30M')).toBe(5_400_000);
    expect(durationMs('P1DT2H')).toBe(93_600_000);
    expect(durationMs('5m')).toBe(300_000);
    expect(durationMs('2h')).toBe(7_200_000);
    expect(durationMs('1d')).toBe(86_400_000);
  });
  it('refuses what is not one', () => {
    for (const text of ['P', 'PT', 'P1DT', '5', 'm5', '1w', 'PT1.5S']) expect([text, durationMs(text)]).toEqual([text, null]);
  });
});

describe('retryDelayMs', () => {
  const retry = { maxAttempts: 4, on: ['infrastructure', 'timed_out'] as ('infrastructure' | 'timed_out' | 'failed')[], backoff: { initial: '10s', factor: 3, max: '1m' } };
  it('waits the backoff, growing by the factor, capped', () => {
    const infra = { state: 'failed', cause: 'infrastructure' as const };
    expect([1, 2, 3].map((attempt) => retryDelayMs(retry, attempt, infra)?.delayMs)).toEqual([10_000, 30_000, 60_000]);
    expect(retryDelayMs(retry, 4, infra)).toBeNull(); // the attempts are used up
  });
  it('tries again only the classes given; a run that cannot be set up, or was stopped, never', () => {
    expect(retryDelayMs(retry, 1, { state: 'timed_out' })).toEqual({ delayMs: 10_000, because: 'timed_out' });
    expect(retryDelayMs(retry, 1, { state: 'failed', cause: 'agent' })).toBeNull();
    expect(retryDelayMs({ ...retry, on: ['failed'] }, 1, { state: 'failed', cause: 'agent' })).toEqual({ delayMs: 10_000, because: 'failed' });
    expect(retryDelayMs({ ...retry, on: ['failed', 'infrastructure'] }, 1, { state: 'failed', cause: 'setup' })).toBeNull();
    expect(retryDelayMs(retry, 1, { state: 'canceled' })).toBeNull();
    expect(retryDelayMs(undefined, 1, { state: 'timed_out' })).toBeNull();
  });
  it('defaults to 10 s, doubling, at most 10 min', () => {
    const plain = { maxAttempts: 10, on: ['failed' as const] };
    expect([1, 2, 7, 9].map((attempt) => retryDelayMs(plain, attempt, { state: 'failed', cause: 'agent' })?.delayMs)).toEqual([10_000, 20_000, 600_000, 600_000]);
  });
});

describe('simulateFlow', () => {
  const arrivals = (...at: number[]) => at.map((when, i) => ({ at: when, concurrencyKey: '7', rateKey: null, of: `d${i + 1}` }));
  const outcomes = (results: { outcome: string; by?: string }[]) => results.map((result) => (result.by ? `${result.outcome} by ${result.by}` : result.outcome));

  it('supersedes every run of a burst but the last under cancel-running', () => {
    const results = simulateFlow(arrivals(0, 1000, 2000), { concurrency: { limit: 1, onConflict: 'cancel-running' }, rateLimit: null, runMs: 60_000 });
    expect(outcomes(results)).toEqual(['superseded by d2', 'superseded by d3', 'started']);
  });
  it('leaves runs that ended alone', () => {
    const results = simulateFlow(arrivals(0, 120_000), { concurrency: { limit: 1, onConflict: 'cancel-running' }, rateLimit: null, runMs: 60_000 });
    expect(outcomes(results)).toEqual(['started', 'started']);
  });
  it('skips while the key is held, and starts once the run holding it is over', () => {
    const results = simulateFlow(arrivals(0, 1000, 61_000), { concurrency: { limit: 1, onConflict: 'skip' }, rateLimit: null, runMs: 60_000 });
    expect(outcomes(results)).toEqual(['started', 'skipped by d1', 'started']);
  });
  it('starts every run under queue, each in its turn', () => {
    const queued = simulateFlow(arrivals(0, 1000, 61_000, 62_000), { concurrency: { limit: 1 }, rateLimit: null, runMs: 60_000 });
    expect(outcomes(queued)).toEqual(['started', 'started', 'started', 'started']);
  });
  it('refuses beyond the rate limit in a sliding window, and names a key that failed', () => {
    const results = simulateFlow([...arrivals(0, 1000, 2000, 61_000), { at: 62_000, concurrencyKey: null, rateKey: null, keyError: 'no key', of: 'd5' }], { concurrency: null, rateLimit: { limit: 2, periodMs: 60_000, period: '1m' }, runMs: 0 });
    expect(outcomes(results)).toEqual(['started', 'started', 'rate_limited', 'started', 'key_error']);
  });
  it('folds a debounce key\'s matches into its waiting run, each pushing its start back a period, at most maxWait after the first', () => {
    const debounce = { periodMs: 10_000, maxWaitMs: 25_000 };
    // 0 waits until 10 s; 8 s and 16 s push it to 26 s, capped at 25 s; 24 s still folds; 30 s finds it started.
    const results = simulateFlow(arrivals(0, 8000, 16_000, 24_000, 30_000), { concurrency: null, rateLimit: null, debounce, runMs: 60_000 });
    expect(outcomes(results)).toEqual(['started', 'folded by d1', 'folded by d1', 'folded by d1', 'started']);
    const keyed = [{ at: 0, concurrencyKey: null, rateKey: null, debounceKey: 'a', of: 'a1' }, { at: 1000, concurrencyKey: null, rateKey: null, debounceKey: 'b', of: 'b1' }, { at: 2000, concurrencyKey: null, rateKey: null, debounceKey: 'a', of: 'a2' }];
    expect(outcomes(simulateFlow(keyed, { concurrency: null, rateLimit: null, debounce, runMs: 0 }))).toEqual(['started', 'started', 'folded by a1']);
  });
  it('counts only the runs a debounce creates against the rate limit, and lets cancel-running supersede a run that started', () => {
    const debounce = { periodMs: 1000, maxWaitMs: Infinity };
    const limited = simulateFlow(arrivals(0, 500, 5000, 9000), { concurrency: null, rateLimit: { limit: 2, periodMs: 60_000, period: '1m' }, debounce, runMs: 60_000 });
    expect(outcomes(limited)).toEqual(['started', 'folded by d1', 'started', 'rate_limited']);
    const superseding = simulateFlow(arrivals(0, 500, 5000), { concurrency: { limit: 1, onConflict: 'cancel-running' }, rateLimit: null, debounce, runMs: 60_000 });
    expect(outcomes(superseding)).toEqual(['superseded by d3', 'folded by d1', 'started']);
  });
});
