// `node scripts/bench-agent-stream.mjs`: what reading an agent's event stream costs the server, in process,
// from dist/ (run `npm run build` first). A BENCH_STREAM_EVENTS-line (10,000) Claude Code stream is made from
// the recorded run in test/fixtures/agents (each response under a new id, tool results of 2 KB), then read
// line by line as the runner reads it (parse, typed events, texts cut, usage and budgets), with secrets
// masked in each event's data as the runner does. Baseline, in the same run: JSON.parse of the same lines.
// Prints one line, then one JSON line for scripts/bench.mjs.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { dist } from './bench-app.mjs';

const EVENTS = Number(process.env.BENCH_STREAM_EVENTS ?? 10_000);
const TARGET_MS = 1;
const root = path.resolve(import.meta.dirname, '..');
const { agentStream } = dist('src/runs/agent-stream.js');
const { createMasker } = dist('src/runs/masking-fns.js');

const recorded = readFileSync(path.join(root, 'test/fixtures/agents/claude-code.jsonl'), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
const [init, ...turns] = recorded;
const body = turns.slice(0, -1);
const output = 'x'.repeat(2048);
const lines = [JSON.stringify(init)];
for (let n = 0; lines.length < EVENTS - 1; n++) {
  for (const event of body) {
    if (lines.length >= EVENTS - 1) break;
    const copy = structuredClone(event);
    if (copy.type === 'assistant') {
      copy.message.id = `msg_${n}_${copy.message.id}`;
      for (const block of copy.message.content) if (block.type === 'tool_use') block.id = `${block.id}_${n}`;
    } else for (const block of copy.message.content) if (block.type === 'tool_result') [block.tool_use_id, block.content] = [`${block.tool_use_id}_${n}`, output];
    lines.push(JSON.stringify(copy));
  }
}
lines.push(JSON.stringify(recorded.at(-1)));

function timed(each) {
  const started = performance.now();
  for (const line of lines) each(line);
  return (performance.now() - started) / lines.length;
}

// Warm both, then take the best of 5 passes each (the least disturbed by the rest of the machine).
const masker = createMasker(['sk-ant-secret-value-0123456789']);
const read = () => {
  const stream = agentStream({ kind: 'claude-code', maxTurns: 1_000_000 });
  return (line) => stream.line(line)?.forEach((entry) => masker.value(entry.data));
};
timed(read());
timed(JSON.parse);
const streamMs = Math.min(...Array.from({ length: 5 }, () => timed(read())));
const parseMs = Math.min(...Array.from({ length: 5 }, () => timed(JSON.parse)));
console.log(
  `agent stream: ${lines.length} Claude Code events read in ${(streamMs * 1000).toFixed(1)} µs each (target < ${TARGET_MS} ms), ` +
    `${(streamMs / parseMs).toFixed(1)} × JSON.parse of the same lines (${(parseMs * 1000).toFixed(1)} µs)`,
);
console.log(JSON.stringify({ events: lines.length, perEventMs: streamMs, parseMs, ratio: streamMs / parseMs }));
