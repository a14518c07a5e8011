// A run of a coding agent written straight into the database with the trace its stream would leave, for the
// console's tests of how a trace reads: each typed event, text that looks like markup, long unbroken words.
import type { Db } from '../../src/db/client';
import { newId } from '../../src/lib/ids';
import { monthOf } from '../../src/usage/usage-fns';

export interface TracedEvent {
  type: string;
  data: Record<string, unknown>;
}

/** One event of every kind an agent's stream leaves, with markup in what the agent said and ran. */
export const AGENT_TRACE: TracedEvent[] = [
  { type: 'session_started', data: { agent: 'claude-code', sessionId: 'sess-7f3a9c', model: 'claude-sonnet-4-5' } },
  { type: 'message', data: { text: 'I will look at <script>alert("said")</script> first.\nThen the tests.\n\nA second paragraph.' } },
  { type: 'tool_call', data: { id: 'toolu_01', name: 'WebFetch', input: { url: 'https://example.com/<b>' } } },
  { type: 'tool_result', data: { id: 'toolu_01', output: 'refused: <img src=x onerror=alert(1)>', isError: true } },
  {
    type: 'command',
    data: {
      command: `echo "<b>bold</b>" && npm test -- --testPathPattern=${'very-long-unbroken-test-path-segment/'.repeat(6)}`,
      exitCode: 1,
      output: 'FAIL test/a.test.ts\n<i>2 failed</i>\n',
    },
  },
  { type: 'command', data: { command: 'git status --short', exitCode: 0, output: '' } },
  { type: 'file_change', data: { path: `src/${'deeply-nested-folder-with-a-long-name/'.repeat(5)}editor.ts`, kind: 'update' } },
  { type: 'usage', data: { inputTokens: 48210, outputTokens: 3120, cachedTokens: 12000, turns: 7, costUsd: 0.4213, costSource: 'reported' } },
  { type: 'usage', data: { inputTokens: 10, outputTokens: 2, cachedTokens: 0, turns: 1, costUsd: null, costSource: 'unknown' } },
  { type: 'agent_output', data: { stream: 'stdout', text: 'a line that is not an event <u>as text</u>' } },
  { type: 'error', data: { message: 'Budget crossed', fatal: true, reason: 'budget_exceeded' } },
];

// The start of the budget's month: a traced run's usage counts in this month's spending, whatever day the tests run.
const traceStart = monthOf(new Date()).since.getTime();

/** When the `seq`th event of a traced run happened: a second apart, from the start of this month. */
export const tracedAt = (seq: number) => new Date(traceStart + seq * 1000);

/** A run of `jobId` in `state` with `events` as its trace (and `usage`), owned by `ownerId` while it is active. */
export async function insertTracedRun(
  db: Db,
  { tenantId, jobId, state, events, usage = null, ownerId = null }: { tenantId: string; jobId: string; state: string; events: TracedEvent[]; usage?: Record<string, unknown> | null; ownerId?: string | null },
): Promise<string> {
  const id = newId('run');
  const finished = !['queued', 'starting', 'running', 'canceling'].includes(state);
  await db.run.create({
    data: {
      id,
      tenantId,
      jobId,
      name: 'Fix the editor',
      prompt: 'Fix the editor.',
      state,
      triggerType: 'invocation',
      inputs: {},
      createdAt: tracedAt(0),
      startedAt: tracedAt(0),
      finishedAt: finished ? tracedAt(events.length + 1) : null,
      ownerId,
      ...(usage ? { usage: usage as object } : {}),
    },
  });
  await appendTrace(db, tenantId, id, events);
  return id;
}

/** Appends `events` to a run's trace, as the runner would, numbered after those it has. */
export async function appendTrace(db: Db, tenantId: string, runId: string, events: TracedEvent[]): Promise<void> {
  const { traceLength } = await db.run.update({ where: { id: runId }, data: { traceLength: { increment: events.length } }, select: { traceLength: true } });
  const first = traceLength - events.length + 1;
  await db.runEvent.createMany({
    data: events.map((event, i) => ({ id: `${runId}:${first + i}`, tenantId, runId, seq: first + i, at: tracedAt(first + i), type: event.type, data: event.data as object })),
  });
}
