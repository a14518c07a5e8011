// The run lifecycle as a table: every event in every state, where the run goes (or that it does not move),
// and what each move writes.
import { INTERRUPTED, RUN_STATES, STOPPED, TERMINAL, isRefused, transition, type RunEvent, type RunState, type Transition } from '../../src/runs/engine/lifecycle';

const at = new Date('2026-11-29T10:00:00.000Z');
const notBefore = new Date('2026-11-29T10:00:10.000Z');

const EVENTS: Record<string, RunEvent> = {
  claimed: { type: 'claimed', claim: 'inst:1', ownerId: 'inst' },
  started: { type: 'started', executorRef: 'local:1', sessionKey: 'pr-1' },
  succeeded: { type: 'outcome', outcome: { state: 'succeeded', result: { ok: true } }, sessionId: 's1' },
  failed: { type: 'outcome', outcome: { state: 'failed', error: 'exit 1', cause: 'agent' } },
  timed_out: { type: 'outcome', outcome: { state: 'timed_out', error: 'too long' } },
  canceled: { type: 'outcome', outcome: { state: 'canceled', error: 'stopped by the server' } },
  stop: { type: 'stop', error: 'Superseded.' },
  lost: { type: 'lost' },
  expired: { type: 'expired', waited: '60 s' },
  retry: { type: 'retry', error: 'exit 1', attempt: 2, notBefore, after: '10 s', because: 'failed' },
  fold: { type: 'fold', prompt: 'p2', name: 'n2', inputs: { context: {} }, notBefore, cause: 'webhook:trg:d2' },
};

// `-` where the state does not take the event.
const TABLE: Record<RunState, Record<keyof typeof EVENTS, RunState | '-'>> = {
  queued: { claimed: 'starting', started: '-', succeeded: '-', failed: '-', timed_out: '-', canceled: '-', stop: 'canceling', lost: '-', expired: 'expired', retry: '-', fold: 'queued' },
  starting: { claimed: '-', started: 'running', succeeded: 'failed', failed: 'failed', timed_out: 'timed_out', canceled: 'failed', stop: 'canceling', lost: 'failed', expired: '-', retry: 'queued', fold: '-' },
  running: { claimed: '-', started: '-', succeeded: 'succeeded', failed: 'failed', timed_out: 'timed_out', canceled: 'failed', stop: 'canceling', lost: 'failed', expired: '-', retry: 'queued', fold: '-' },
  canceling: { claimed: '-', started: '-', succeeded: 'canceled', failed: 'canceled', timed_out: 'canceled', canceled: 'canceled', stop: '-', lost: 'canceled', expired: '-', retry: '-', fold: '-' },
  ...(Object.fromEntries(TERMINAL.map((state) => [state, Object.fromEntries(Object.keys(EVENTS).map((name) => [name, '-']))])) as Record<(typeof TERMINAL)[number], Record<string, '-'>>),
};

const pairs = RUN_STATES.flatMap((state) => Object.keys(EVENTS).map((name) => [state, name, TABLE[state][name]] as const));

describe('transition', () => {
  it('covers every state', () => {
    expect(Object.keys(TABLE).sort()).toEqual([...RUN_STATES].sort());
  });

  it.each(pairs)('%s + %s → %s', (state, name, expected) => {
    const moved = transition(state, EVENTS[name], at);
    if (expected === '-') return expect(isRefused(moved)).toBe(true);
    expect(moved).toMatchObject({ from: state, to: expected });
    const { to, columns, trace, notice } = moved as Transition;
    // A change of state is traced last; times come with the states that set them.
    if (to !== state) expect(trace.at(-1)).toEqual({ type: 'state_changed', data: { from: state, to } });
    else expect(trace.some((entry) => entry.type === 'state_changed')).toBe(false);
    expect(columns.startedAt).toEqual(to === 'starting' ? at : name === 'retry' ? null : undefined);
    expect(columns.finishedAt).toEqual((TERMINAL as readonly string[]).includes(to) ? at : undefined);
    expect(notice).toBe(to === 'running' ? 'started' : (TERMINAL as readonly string[]).includes(to) ? 'ended' : null);
  });
});

describe('what the moves write', () => {
  const move = (state: RunState, name: keyof typeof EVENTS) => transition(state, EVENTS[name], at) as Transition;

  it('keeps the result of a success, and the session the agent began', () => {
    expect(move('running', 'succeeded')).toMatchObject({ columns: { result: { ok: true }, sessionId: 's1' }, trace: [{ type: 'result', data: { ok: true } }, { type: 'state_changed' }] });
  });

  it('fails an execution that ended well before the agent ran, or that the server stopped, as interrupted', () => {
    for (const [state, name] of [['starting', 'succeeded'], ['running', 'canceled'], ['running', 'lost']] as const) {
      expect(move(state, name)).toMatchObject({ to: 'failed', columns: { error: INTERRUPTED }, trace: [{ type: 'error', data: { message: INTERRUPTED } }, { type: 'state_changed' }] });
    }
    expect(move('running', 'failed').columns.error).toBe('exit 1');
  });

  it('ends a stopped run as canceled, keeping the stop\'s reason as its error', () => {
    expect(move('queued', 'stop').columns).toEqual({ error: 'Superseded.' });
    expect(move('canceling', 'failed').columns).toEqual({ finishedAt: at, errorUnlessSet: STOPPED });
    expect(move('canceling', 'lost').trace).toEqual([{ type: 'state_changed', data: { from: 'canceling', to: 'canceled' } }]);
  });

  it('queues a retry with what its last attempt held cleared, and says why in the trace', () => {
    const retry = move('running', 'retry');
    expect(retry.columns).toEqual({ startedAt: null, expiresAt: null, debounceKey: null, claim: null, ownerId: null, executorRef: null, attempt: 2, notBefore });
    expect(retry.trace.slice(0, 2)).toEqual([
      { type: 'error', data: { message: 'exit 1', attempt: 1 } },
      { type: 'flow_control', data: { action: 'retry', attempt: 2, after: '10 s', because: 'failed' } },
    ]);
  });

  it('folds a delivery into a waiting run without a change of state', () => {
    expect(move('queued', 'fold')).toEqual({
      from: 'queued',
      to: 'queued',
      at,
      columns: { prompt: 'p2', name: 'n2', inputs: { context: {} }, notBefore },
      trace: [{ type: 'flow_control', data: { action: 'folded', cause: 'webhook:trg:d2', waitsUntil: notBefore.toISOString() } }],
      notice: null,
    });
  });

  it('claims with the instance\'s marks and expires with how long it waited', () => {
    expect(move('queued', 'claimed').columns).toEqual({ startedAt: at, claim: 'inst:1', ownerId: 'inst' });
    expect(move('queued', 'expired')).toMatchObject({ columns: { error: 'Not started within 60 s of its creation (flowControl.ttl).' }, trace: [{ type: 'flow_control', data: { action: 'expired', after: '60 s' } }, { type: 'state_changed' }] });
  });
});
