// A run's outcome once its agent's stream is read (agent-stream.ts).
import type { StreamSummary } from '../agents/agent-events-fns';
import { resultOf } from '../integrations/agent-output';
import type { FailureCause, Outcome } from '../integrations/executor';

/**
 * A run's outcome once its agent's stream is read: an exit that looks fine is a failure when the agent said
 * it failed, or when its stream stopped before its final event; a failed exit says the agent's own reason.
 * A success's result is the agent's answer (a JSON object answer is the structured result).
 */
export function agentOutcome(outcome: Outcome, summary: StreamSummary): Outcome {
  const failed = (error: string, cause: FailureCause = 'agent'): Outcome => ({ state: 'failed', error, cause });
  if (outcome.state === 'succeeded') {
    if (summary.failure) return failed(`The agent reported a failure: ${summary.failure}`);
    if (!summary.finished) return failed('The agent exited without its final event: its stream stopped early.');
    return { state: 'succeeded', result: { ...resultOf(summary.finalText ?? ''), ...(summary.sessionId && { sessionId: summary.sessionId }) } };
  }
  if (outcome.state === 'failed' && outcome.cause === 'agent' && summary.failure) return failed(`${outcome.error.replace(/[:.].*$/s, '')}: ${summary.failure}`);
  return outcome;
}

