// What every executor does with an agent's output: each line of stdout and stderr goes to the trace (cut at
// MAX_LINE, and nothing beyond MAX_OUTPUT characters a run), the last non-empty lines are kept, and the
// last stdout line gives the result: a JSON object is the agent's structured result, anything else its
// summary. Lines are split with a buffer of MAX_LINE characters, whatever the agent prints: a line of 600 MB
// costs no more memory than one of 8 KB, and a stream past its byte limit is said once and read no further.
import { StringDecoder } from 'node:string_decoder';
import type { ExecutionEvents } from './executor';

export const MAX_LINE = 8_000;
export const MAX_OUTPUT = 1_000_000;
/**
 * The lines of an agent whose events are read are JSON events, cut only past this (a tool's whole output can
 * be in one); the trace keeps their fields cut shorter, so what is kept is bounded by the trace's limits.
 */
export const EVENT_LINE = 4_000_000;

/** How an agent's output is split and bounded: text lines (`command`), or a stream of JSON events. */
export const outputBounds = (events: boolean) => (events ? { maxLine: EVENT_LINE, maxOutput: Infinity } : { maxLine: MAX_LINE, maxOutput: MAX_OUTPUT });
const CUT = '… [line cut]';

export function resultOf(lastLine: string | undefined): Record<string, unknown> {
  if (lastLine?.startsWith('{')) {
    try {
      const parsed = JSON.parse(lastLine);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed;
    } catch {
      // not JSON (or cut): a summary like any other
    }
  }
  return { summary: lastLine ?? '' };
}

/**
 * Follows the agent's streams into `events`; `last` holds the last non-empty line of each (cut like every
 * line). A stream that passes `maxBytes` calls `onExcess` once; what follows it is dropped.
 */
export function agentOutput(
  events: Pick<ExecutionEvents, 'output'>,
  { maxBytes = Infinity, onExcess = () => {}, maxLine = MAX_LINE, maxOutput = MAX_OUTPUT }: { maxBytes?: number; onExcess?: () => void; maxLine?: number; maxOutput?: number } = {},
) {
  let written = 0;
  const last: { stdout?: string; stderr?: string } = {};
  const record = (stream: 'stdout' | 'stderr', line: string) => {
    if (line.trim()) last[stream] = line;
    if (written > maxOutput) return;
    written += line.length;
    if (written > maxOutput) events.output(stream, `[output beyond ${maxOutput} characters is not kept]`);
    else events.output(stream, line);
  };
  return {
    last,
    follow(stream: 'stdout' | 'stderr', input: NodeJS.ReadableStream) {
      const decoder = new StringDecoder('utf8');
      let line = '';
      let cut = false;
      let bytes = 0;
      const take = (piece: string) => {
        if (cut) return;
        if (line.length + piece.length <= maxLine) line += piece;
        else [line, cut] = [line + piece.slice(0, maxLine - line.length), true];
      };
      const end = () => {
        const text = line.endsWith('\r') ? line.slice(0, -1) : line;
        record(stream, cut ? `${text}${CUT}` : text);
        [line, cut] = ['', false];
      };
      input.on('data', (chunk: Buffer | string) => {
        if (bytes > maxBytes) return;
        bytes += chunk.length;
        if (bytes > maxBytes) return onExcess();
        const text = typeof chunk === 'string' ? chunk : decoder.write(chunk);
        let start = 0;
        for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', start)) {
          take(text.slice(start, newline));
          end();
          start = newline + 1;
        }
        take(text.slice(start));
      });
      input.on('end', () => {
        take(decoder.end());
        if (line || cut) end();
      });
    },
  };
}
