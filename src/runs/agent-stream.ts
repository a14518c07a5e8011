// A run's agent stream, for agents whose events Flows reads: each line of the agent's stdout becomes its
// trace events (or stays a text line when it is not one of them), what the agent spent is kept as the run's
// usage, a budget crossed is said once, and the run's outcome is read from how the stream ended.
import { agentOutcome } from './agent-outcome-fns';
import { budgetCrossed, SESSION_TOTALS, streamReader } from '../agents/agents-fns';
import type { Tokens } from './agent-sessions';
import type { AgentEvent, JobAgent, RunUsage, Spent, StreamKind } from '../agents/agent-events-fns';
import type { Outcome } from '../integrations/executor';
import { costOf, type ModelPrice, type ModelPrices } from '../lib/model-prices';
import type { TraceEntry } from './engine/lifecycle';

/** Texts longer than this are cut in the trace (a tool's whole output is the agent's, not the trace's). */
export const MAX_TEXT = 8_000;

const cut = (text: string) => (text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}… [cut]` : text);

/** The event as it is recorded: long texts cut, a tool's input kept only when small. */
function recorded(event: AgentEvent): TraceEntry {
  switch (event.type) {
    case 'message':
      return { type: 'message', data: { text: cut(event.data.text) } };
    case 'tool_result':
    case 'command':
      return { type: event.type, data: { ...event.data, output: cut(event.data.output) } };
    case 'tool_call': {
      const input = JSON.stringify(event.data.input ?? {});
      return { type: 'tool_call', data: { ...event.data, input: input.length > MAX_TEXT ? cut(input) : event.data.input } };
    }
    case 'error':
      return { type: 'error', data: { ...event.data, message: cut(event.data.message) } };
    default:
      return { type: event.type, data: { ...event.data } };
  }
}

/**
 * What a run spent, with where its cost comes from: the agent's report, or the operator's price of the
 * model, or unknown (never a guess).
 */
export function usageOf(spent: Spent, price?: ModelPrice): RunUsage {
  const tokens = { inputTokens: spent.inputTokens, outputTokens: spent.outputTokens, cachedTokens: spent.cachedTokens, turns: spent.turns };
  if (spent.costUsd !== null) return { ...tokens, costUsd: spent.costUsd, costSource: 'reported' };
  if (price) return { ...tokens, costUsd: Math.round(costOf(price, spent) * 1e6) / 1e6, costSource: 'computed' };
  return { ...tokens, costUsd: null, costSource: 'unknown' };
}

/** What a stream needs besides the job's agent: the session it continues, and the price of its model. */
export interface StreamOptions {
  /** What its `session_started` says of the session it was to continue: the run it continued, or why it could not. */
  session?: Record<string, string> | null;
  /** The model the job asks for: priced when the agent does not say which it used. */
  model?: string | null;
  prices?: ModelPrices;
  /** What the session's earlier runs spent, taken off the totals of a CLI that reports a resumed session's (SESSION_TOTALS). */
  earlier?: Tokens | null;
}

export function agentStream(agent: JobAgent & { kind: StreamKind }, { session = null, model = null, prices = {}, earlier = null }: StreamOptions = {}) {
  const reader = streamReader(agent.kind);
  let crossed: string | null = null;
  const before = SESSION_TOTALS.includes(agent.kind) ? earlier : null;
  const usage = (reported: Spent) => {
    const priced = reader.summary().model ?? model;
    const spent = before
      ? {
          ...reported,
          inputTokens: Math.max(0, reported.inputTokens - before.inputTokens),
          outputTokens: Math.max(0, reported.outputTokens - before.outputTokens),
          cachedTokens: Math.max(0, reported.cachedTokens - before.cachedTokens),
        }
      : reported;
    return usageOf(spent, priced ? prices[priced] : undefined);
  };
  /** The event as it is recorded: its usage priced. */
  const entryOf = (event: AgentEvent): TraceEntry =>
    event.type === 'session_started' && session ? { type: event.type, data: { ...event.data, ...session } } : event.type === 'usage' ? { type: 'usage', data: { ...usage(event.data) } } : recorded(event);
  return {
    /** The trace entries of a line of stdout; null when it is not an event of the stream (kept as text). */
    line(text: string): TraceEntry[] | null {
      if (!text.startsWith('{')) return null;
      let event: unknown;
      try {
        event = JSON.parse(text);
      } catch {
        return null;
      }
      if (typeof event !== 'object' || event === null || Array.isArray(event)) return null;
      const events = reader.read(event as Record<string, unknown>);
      if (!events) return null;
      const entries = events.map(entryOf);
      const spent = reader.summary().spent;
      if (!crossed && spent && (crossed = budgetCrossed(agent, usage(spent)))) entries.push({ type: 'error', data: { message: crossed, reason: 'budget_exceeded', fatal: true } });
      return entries;
    },
    /** What the agent spent so far; null before its first report. */
    usage(): RunUsage | null {
      const spent = reader.summary().spent;
      return spent && usage(spent);
    },
    /** The CLI's id of the session, once it said it. */
    sessionId: () => reader.summary().sessionId,
    /** The budget the agent crossed, as the run's error; null while it is within its budgets. */
    crossed: () => crossed,
    /** The run's outcome, from the executor's and the stream's. */
    outcome(outcome: Outcome): Outcome {
      if (crossed && outcome.state !== 'succeeded') return { state: 'failed', error: crossed, cause: 'resource_limit' };
      return agentOutcome(outcome, reader.summary());
    },
  };
}

export type AgentStream = ReturnType<typeof agentStream>;
