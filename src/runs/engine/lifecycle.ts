// The run lifecycle, in one place: the closed set of states a run can be in, the groups of them the engine
// asks about, and `transition`, which answers for every event in every state where the run goes and what
// the move writes. Nothing else chooses a run's next state; the repository only writes what this returns,
// guarded by the state it moves from.
import type { components } from '../../../generated/openapi';
import type { Outcome } from '../../integrations/executor';

export type RunState = components['schemas']['RunState'];

/** Every state, in lifecycle order. */
export const RUN_STATES = ['queued', 'starting', 'running', 'canceling', 'succeeded', 'failed', 'timed_out', 'canceled', 'expired'] as const satisfies readonly RunState[];

/** Waiting for a slot of its job: the only state dispatch starts runs from. */
export const QUEUED = ['queued'] as const satisfies readonly RunState[];
/** Holding a slot of the job's `concurrencyLimit`: something executes the run, or is being stopped. */
export const ACTIVE = ['starting', 'running', 'canceling'] as const satisfies readonly RunState[];
/** Not yet ending: holds a place of its concurrency key, and may be stopped. */
export const UNENDED = ['queued', 'starting', 'running'] as const satisfies readonly RunState[];
/** Not over: it and what it refers to are kept (retention), and it counts as work in progress. */
export const UNFINISHED = ['queued', 'starting', 'running', 'canceling'] as const satisfies readonly RunState[];
/** Over: nothing moves it again. */
export const TERMINAL = ['succeeded', 'failed', 'timed_out', 'canceled', 'expired'] as const satisfies readonly RunState[];

const among = (group: readonly RunState[]) => (state: RunState | string) => group.includes(state as RunState);
export const isTerminal = among(TERMINAL);
export const isStoppable = among(UNENDED);
export const isActive = among(ACTIVE);

export interface TraceEntry {
  type: components['schemas']['RunTraceEvent']['type'];
  data: Record<string, unknown>;
}

/** A run that executed to an end, ended by the server going down rather than by a caller or the agent. */
export const INTERRUPTED = 'interrupted: the server stopped while the run was active';
export const STOPPED = 'The run was stopped.';

/** What happens to a run. */
export type RunEvent =
  /** Dispatch took it from the queue for an instance (`claim` marks the batch). */
  | { type: 'claimed'; claim: string; ownerId: string }
  /** Its execution began: the agent is running. */
  | { type: 'started'; executorRef: string; sessionKey?: string | null }
  /** Its execution ended as the executor (and the agent's events) say. */
  | { type: 'outcome'; outcome: Outcome; sessionId?: string | null }
  /** A caller, a superseding run or a deleted job asked it to stop; `error` is why (kept as the run's error). */
  | { type: 'stop'; error: string; trace?: TraceEntry[] }
  /** Nothing executes it any more: its instance is gone, or a stop found no execution of it here. */
  | { type: 'lost' }
  /** Its time in the queue (flowControl.ttl) is over; `waited` says how long it was. */
  | { type: 'expired'; waited: string }
  /** The job's retry policy tries it again: attempt `attempt` starts from `notBefore`. */
  | { type: 'retry'; error: string; attempt: number; notBefore: Date; after: string; because: string }
  /** A later delivery folded into it while it waits (flowControl.debounce): its context replaces the run's. */
  | { type: 'fold'; prompt: string; name: string; inputs: Record<string, unknown>; notBefore: Date; cause: string | null };

/**
 * The run's columns a move sets: a value sets it, `null` clears it, absent leaves it. `errorUnlessSet` is an
 * error that does not replace one the run has (a stop's reason stays the run's error).
 */
export interface RunColumns {
  startedAt?: Date | null;
  finishedAt?: Date;
  result?: Record<string, unknown>;
  error?: string;
  errorUnlessSet?: string;
  executorRef?: string | null;
  sessionKey?: string;
  sessionId?: string;
  claim?: string | null;
  ownerId?: string | null;
  attempt?: number;
  notBefore?: Date | null;
  expiresAt?: null;
  debounceKey?: null;
  prompt?: string;
  name?: string;
  inputs?: Record<string, unknown>;
}

/** A move the lifecycle allows: where the run goes, what it writes, and who must hear of it. */
export interface Transition {
  from: RunState;
  to: RunState;
  /** When it happens: the time the move's columns and trace events carry. */
  at: Date;
  columns: RunColumns;
  /** Recorded in the run's trace, in order; a change of state ends with its `state_changed`. */
  trace: TraceEntry[];
  /** Outbound: the run began running, or ended (chains, events, the slot it freed). */
  notice: 'started' | 'ended' | null;
}

/** An event the run's state does not take (it moved on meanwhile, or it never could): nothing is written. */
export interface Refused {
  refused: string;
}

const refuse = (state: RunState, event: RunEvent): Refused => ({ refused: `a ${state} run does not take ${event.type}` });

/** Moves to `to` with `columns`, tracing `before` and the change of state; the times the move sets come with it. */
function move(from: RunState, to: RunState, at: Date, columns: RunColumns = {}, before: TraceEntry[] = []): Transition {
  const trace = from === to ? before : [...before, { type: 'state_changed' as const, data: { from, to } }];
  const times = to === 'starting' ? { startedAt: at } : isTerminal(to) ? { finishedAt: at } : {};
  return { from, to, at, columns: { ...times, ...columns }, trace, notice: to === 'running' ? 'started' : isTerminal(to) ? 'ended' : null };
}

/** An execution's end: its outcome where the lifecycle allows it, else the interruption that ended it. */
function ended(from: 'starting' | 'running', outcome: Outcome, sessionId: string | null | undefined, at: Date): Transition {
  const session = sessionId ? { sessionId } : {};
  if (outcome.state === 'succeeded' && from === 'running') return move(from, 'succeeded', at, { result: outcome.result, ...session }, [{ type: 'result', data: outcome.result }]);
  // An execution that ended well before the run was running, or that the server stopped unasked, was interrupted.
  const interrupted = outcome.state === 'succeeded' || outcome.state === 'canceled';
  const [to, error] = interrupted ? (['failed', INTERRUPTED] as const) : [outcome.state, outcome.error];
  return move(from, to, at, { error, ...session }, [{ type: 'error', data: { message: error } }]);
}

/** Where `event` takes a run in `state` at `at`, with what the move writes; or why it does not move. */
export function transition(state: RunState, event: RunEvent, at = new Date()): Transition | Refused {
  if (isTerminal(state)) return refuse(state, event);
  switch (event.type) {
    case 'claimed':
      return state === 'queued' ? move(state, 'starting', at, { claim: event.claim, ownerId: event.ownerId }) : refuse(state, event);
    case 'started':
      return state === 'starting' ? move(state, 'running', at, { executorRef: event.executorRef, ...(event.sessionKey && { sessionKey: event.sessionKey }) }) : refuse(state, event);
    case 'outcome':
      if (state === 'canceling') return move(state, 'canceled', at, { errorUnlessSet: STOPPED, ...(event.sessionId && { sessionId: event.sessionId }) }, [{ type: 'error', data: { message: STOPPED } }]);
      return state === 'starting' || state === 'running' ? ended(state, event.outcome, event.sessionId, at) : refuse(state, event);
    case 'stop':
      return isStoppable(state) ? move(state, 'canceling', at, { error: event.error }, event.trace) : refuse(state, event);
    case 'lost':
      if (state === 'canceling') return move(state, 'canceled', at, { errorUnlessSet: STOPPED });
      return state === 'queued' ? refuse(state, event) : move(state, 'failed', at, { error: INTERRUPTED }, [{ type: 'error', data: { message: INTERRUPTED } }]);
    case 'expired': {
      const error = `Not started within ${event.waited} of its creation (flowControl.ttl).`;
      return state === 'queued' ? move(state, 'expired', at, { error }, [{ type: 'flow_control', data: { action: 'expired', after: event.waited } }]) : refuse(state, event);
    }
    case 'retry': {
      if (state !== 'starting' && state !== 'running') return refuse(state, event);
      // What the last attempt held (its start, claim and executor) is cleared; the queue's deadline and debounce are behind it.
      const cleared = { startedAt: null, expiresAt: null, debounceKey: null, claim: null, ownerId: null, executorRef: null } as const;
      const trace: TraceEntry[] = [
        { type: 'error', data: { message: event.error, attempt: event.attempt - 1 } },
        { type: 'flow_control', data: { action: 'retry', attempt: event.attempt, after: event.after, because: event.because } },
      ];
      return move(state, 'queued', at, { ...cleared, attempt: event.attempt, notBefore: event.notBefore }, trace);
    }
    case 'fold': {
      if (state !== 'queued') return refuse(state, event);
      const trace: TraceEntry[] = [{ type: 'flow_control', data: { action: 'folded', cause: event.cause, waitsUntil: event.notBefore.toISOString() } }];
      return move(state, state, at, { prompt: event.prompt, name: event.name, inputs: event.inputs, notBefore: event.notBefore }, trace);
    }
  }
}

export const isRefused = (moved: Transition | Refused): moved is Refused => 'refused' in moved;
