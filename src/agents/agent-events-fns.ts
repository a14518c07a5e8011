// One set of trace events for every agent CLI whose event stream Flows reads, and the running totals of
// what a run spent. Each CLI's stream has a reader of its own (`*-stream-fns.ts`) that turns its JSON lines
// into these events; the runner records them, masked, and keeps the totals on the run.
import type { components } from '../../generated/openapi';

import type { StreamKind } from '../lib/agent-clis';

export type { StreamKind };
export type AgentKind = components['schemas']['AgentKind'];
export type JobAgent = components['schemas']['JobAgent'];
export type RunUsage = components['schemas']['RunUsage'];

/** What a stream says it spent so far: tokens, turns and, where the CLI reports it, the cost. */
export interface Spent {
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  turns: number;
  /** As the agent reported it; null when it does not. */
  costUsd: number | null;
}

export type FileChangeKind = 'add' | 'update' | 'delete' | 'write';

export type AgentEvent =
  | { type: 'session_started'; data: { agent: StreamKind; sessionId: string; model?: string } }
  | { type: 'message'; data: { text: string } }
  | { type: 'tool_call'; data: { id: string; name: string; input: unknown } }
  | { type: 'tool_result'; data: { id: string; output: string; isError: boolean } }
  | { type: 'command'; data: { command: string; exitCode: number | null; output: string } }
  | { type: 'file_change'; data: { path: string; kind: FileChangeKind } }
  | { type: 'usage'; data: Spent }
  | { type: 'error'; data: { message: string; fatal: boolean } };

/** What a stream said by its end. */
export interface StreamSummary {
  sessionId: string | null;
  model: string | null;
  /** The agent's final answer, when it gave one. */
  finalText: string | null;
  /** Whether the stream ended with the CLI's final event (a result, a completed turn). */
  finished: boolean;
  /** The agent's own report that the run failed (an error result, a failed turn), or null. */
  failure: string | null;
  spent: Spent | null;
}

/** Reads one CLI's stream, a parsed JSON line at a time. */
export interface StreamReader {
  /** The trace events a line of the stream makes; null for a line it does not know, which is kept as text. */
  read(event: Record<string, unknown>): AgentEvent[] | null;
  summary(): StreamSummary;
}

export const NOTHING_SPENT: Spent = { inputTokens: 0, outputTokens: 0, cachedTokens: 0, turns: 0, costUsd: null };

/** A field as a string ('' when absent or not one). */
export const str = (value: unknown): string => (typeof value === 'string' ? value : '');

/** A field as a finite non-negative number (0 when absent or not one). */
export const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

export const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A tool's output as text: a string, or the text parts of a content list, or else its JSON. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (isObject(part) && typeof part.text === 'string' ? part.text : '')).join('');
  return content === undefined || content === null ? '' : JSON.stringify(content);
}

/** The state every reader keeps: the session, the totals, the last answer, how it ended. */
export function readerState(agent: StreamKind) {
  const state = {
    sessionId: null as string | null,
    model: null as string | null,
    finalText: null as string | null,
    finished: false,
    failure: null as string | null,
    spent: null as Spent | null,
    /** A `session_started` event the first time a session id is seen. */
    session(sessionId: unknown, model?: unknown): AgentEvent[] {
      if (typeof model === 'string' && model) state.model = model;
      if (typeof sessionId !== 'string' || !sessionId || state.sessionId) return [];
      state.sessionId = sessionId;
      return [{ type: 'session_started', data: { agent, sessionId, ...(state.model && { model: state.model }) } }];
    },
    /** Adds to the totals and answers the `usage` event that says them. */
    add(spent: Partial<Spent>): AgentEvent {
      const was = state.spent ?? NOTHING_SPENT;
      const costUsd = spent.costUsd === undefined || spent.costUsd === null ? was.costUsd : (was.costUsd ?? 0) + spent.costUsd;
      state.spent = {
        inputTokens: was.inputTokens + (spent.inputTokens ?? 0),
        outputTokens: was.outputTokens + (spent.outputTokens ?? 0),
        cachedTokens: was.cachedTokens + (spent.cachedTokens ?? 0),
        turns: was.turns + (spent.turns ?? 0),
        costUsd,
      };
      return { type: 'usage', data: state.spent };
    },
    /** Replaces the totals with the CLI's own (a final result) and answers the `usage` event. */
    total(spent: Spent): AgentEvent {
      state.spent = spent;
      return { type: 'usage', data: spent };
    },
    summary: (): StreamSummary => ({ sessionId: state.sessionId, model: state.model, finalText: state.finalText, finished: state.finished, failure: state.failure, spent: state.spent }),
  };
  return state;
}
