// What every executor does with an agent's output: each line of stdout and stderr goes to the trace (cut at
// MAX_LINE, and nothing beyond MAX_OUTPUT characters a run), the last non-empty lines are kept, and the
// last stdout line gives the result: a JSON object is the agent's structured result, anything else its summary.
import { createInterface } from 'node:readline';
import type { ExecutionEvents } from './executor';

export const MAX_LINE = 8_000;
export const MAX_OUTPUT = 1_000_000;

export function resultOf(lastLine: string | undefined): Record<string, unknown> {
  if (lastLine?.startsWith('{')) {
    try {
      const parsed = JSON.parse(lastLine);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed;
    } catch {
      // not JSON: a summary like any other
    }
  }
  return { summary: lastLine ?? '' };
}

/** Follows the agent's streams into `events`; `last` holds the last non-empty line of each. */
export function agentOutput(events: Pick<ExecutionEvents, 'output'>) {
  let written = 0;
  const last: { stdout?: string; stderr?: string } = {};
  return {
    last,
    follow(stream: 'stdout' | 'stderr', input: NodeJS.ReadableStream) {
      createInterface({ input, crlfDelay: Infinity }).on('line', (line) => {
        if (line.trim()) last[stream] = line;
        if (written > MAX_OUTPUT) return;
        written += line.length;
        if (written > MAX_OUTPUT) events.output(stream, `[output beyond ${MAX_OUTPUT} characters is not kept]`);
        else events.output(stream, line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)}…` : line);
      });
    },
  };
}
