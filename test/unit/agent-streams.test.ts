// Each agent CLI's stream, as recorded from the real Claude Code and Codex against a fake model provider and
// from the documented formats of Gemini CLI, opencode and Cursor (test/fixtures/agents), read into the one
// set of trace events, the run's usage and its outcome.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { JobAgent, StreamKind } from '../../src/agents/agent-events-fns';
import { agentCommandLine, agentProblem, unheldCostBudget } from '../../src/agents/agents-fns';
import { pricesProblem } from '../../src/lib/model-prices';
import type { Outcome } from '../../src/integrations/executor';
import { agentStream, MAX_TEXT } from '../../src/runs/agent-stream';
import type { TraceEntry } from '../../src/runs/engine/lifecycle';

const FIXTURES = path.join(__dirname, '../fixtures/agents');
const lines = (name: string) => readFileSync(path.join(FIXTURES, `${name}.jsonl`), 'utf8').split('\n').filter(Boolean);
const EXITED: Outcome = { state: 'succeeded', result: { summary: 'the last line' } };

/** Every line through a run's stream: the entries recorded (null: kept as a text line) and the stream. */
function replay(agent: JobAgent & { kind: StreamKind }, input: string[]) {
  const stream = agentStream(agent);
  const entries: (TraceEntry | { type: 'text'; data: { text: string } })[] = [];
  for (const line of input) {
    const read = stream.line(line);
    if (read) entries.push(...read);
    else entries.push({ type: 'text', data: { text: line } });
  }
  return { stream, entries, of: (type: string) => entries.filter((entry) => entry.type === type).map((entry) => entry.data) };
}

const RECORDED: Record<StreamKind, { sessionId: string; model?: string; command: string; file: { path: string; kind: string }; answer: string; usage: Record<string, unknown> }> = {
  'claude-code': {
    sessionId: '44e4324b-17bb-4c0e-9624-3e85834e2a61',
    model: 'claude-sonnet-4-5',
    command: 'echo hello > hello.txt && cat hello.txt',
    file: { path: '/workspace/notes.md', kind: 'add' },
    answer: 'Done: wrote hello.txt and notes.md',
    // 3 responses of 100 fresh, 10 written to and 50 read from the cache, 20 out; the cost as Claude Code reported it.
    usage: { inputTokens: 480, outputTokens: 60, cachedTokens: 150, turns: 3, costUsd: 0.0019575, costSource: 'reported' },
  },
  codex: {
    sessionId: '01a21918-c6eb-7d03-9d58-7dada51174fd',
    command: 'echo hello > hello.txt && cat hello.txt',
    file: { path: '/workspace/notes.md', kind: 'add' },
    answer: 'Done: wrote hello.txt and notes.md',
    usage: { inputTokens: 300, outputTokens: 60, cachedTokens: 150, turns: 1, costUsd: null, costSource: 'unknown' },
  },
  gemini: {
    sessionId: '7f3c2a9e-4b1d-4e8a-9c61-2d5b8f0e1a34',
    model: 'gemini-2.5-flash',
    command: 'echo hello > hello.txt && cat hello.txt',
    file: { path: '/workspace/project/notes.md', kind: 'write' },
    answer: 'I ran the command (it printed `hello`) and wrote a short summary to notes.md.',
    usage: { inputTokens: 24310, outputTokens: 566, cachedTokens: 15872, turns: 3, costUsd: null, costSource: 'unknown' },
  },
  opencode: {
    sessionId: 'ses_53b1f0a2c7e4Kq9ZpT2mVx8RdN',
    command: 'echo hello > hello.txt && cat hello.txt',
    file: { path: '/workspace/project/notes.md', kind: 'write' },
    answer: 'I ran the command (it printed `hello`) and wrote a short summary to notes.md.',
    usage: expect.objectContaining({ turns: 3, costSource: 'reported', costUsd: expect.any(Number) }),
  },
  cursor: {
    sessionId: 'c2d9e4f1-6a7b-4c8d-9e0f-1a2b3c4d5e6f',
    model: 'GPT-5',
    command: 'echo hello > hello.txt && cat hello.txt',
    file: { path: 'notes.md', kind: 'write' },
    answer: 'I ran the command (it printed `hello`) and wrote a short summary to notes.md.',
    usage: expect.objectContaining({ turns: 2, costUsd: null, costSource: 'unknown' }),
  },
};

describe.each(Object.keys(RECORDED) as StreamKind[])('%s', (kind) => {
  const expected = RECORDED[kind];

  it('reads a recorded run into its session, command, file change, messages, usage and answer, leaving no line as text', () => {
    const { stream, entries, of } = replay({ kind }, lines(kind));
    expect(of('text')).toEqual([]);
    expect(of('session_started')).toEqual([{ agent: kind, sessionId: expected.sessionId, ...(expected.model && { model: expected.model }) }]);
    expect(of('command')).toEqual([{ command: expected.command, exitCode: 0, output: expect.stringContaining('hello') }]);
    expect(of('file_change')).toEqual([expected.file]);
    expect(of('message').at(-1)).toEqual({ text: expected.answer });
    expect(of('usage').at(-1)).toEqual(expected.usage);
    expect(stream.usage()).toEqual(expected.usage);
    expect(entries.filter((entry) => entry.type === 'error')).toEqual([]);
    expect(stream.outcome(EXITED)).toEqual({ state: 'succeeded', result: { summary: expected.answer, sessionId: expected.sessionId } });
  });

  it('keeps lines that are not its events as text, and reads the rest', () => {
    const recorded = lines(kind);
    const { of } = replay({ kind }, ['Loading…', recorded[0], '{"broken": ', '[1, 2]', '{"type":"something_new","x":1}', ...recorded.slice(1)]);
    expect(of('text').map((data) => data.text)).toEqual(['Loading…', '{"broken": ', '[1, 2]', '{"type":"something_new","x":1}']);
    expect(of('command')).toHaveLength(1);
  });

  it('fails a run whose stream stopped before its final event, though the CLI exited 0', () => {
    const recorded = lines(kind);
    const { stream } = replay({ kind }, recorded.slice(0, -1));
    expect(stream.outcome(EXITED)).toEqual({ state: 'failed', error: 'The agent exited without its final event: its stream stopped early.', cause: 'agent' });
  });

  it('keeps the exit code of a CLI that failed after its final event', () => {
    const { stream } = replay({ kind }, lines(kind));
    const exited: Outcome = { state: 'failed', error: 'The agent exited with code 1: boom', cause: 'agent' };
    expect(stream.outcome(exited)).toEqual(exited);
  });

  it('reads the resumed session under the same id', () => {
    const { of } = replay({ kind }, lines(`${kind}-resumed`));
    expect(of('session_started')).toEqual([expect.objectContaining({ sessionId: expected.sessionId })]);
    expect(of('text')).toEqual([]);
  });
});

describe('Claude Code', () => {
  it('counts this run of a resumed session, not the session so far', () => {
    const { stream } = replay({ kind: 'claude-code' }, lines('claude-code-resumed'));
    // total_cost_usd says 0.003915: both runs.
    expect(stream.usage()).toEqual(expect.objectContaining({ costUsd: 0.0019575, turns: 3 }));
  });

  it('fails a run whose result is an error, with what it says, and tells it in the trace', () => {
    const recorded = lines('claude-code');
    const result = { ...JSON.parse(recorded.at(-1)!), subtype: 'error_max_turns', is_error: true, result: undefined };
    const { stream, of } = replay({ kind: 'claude-code' }, [...recorded.slice(0, -1), JSON.stringify(result)]);
    expect(of('error')).toEqual([{ message: 'error_max_turns', fatal: true }]);
    expect(stream.outcome({ state: 'failed', error: 'The agent exited with code 1.', cause: 'agent' })).toEqual({ state: 'failed', error: 'The agent exited with code 1: error_max_turns', cause: 'agent' });
    expect(stream.outcome(EXITED)).toEqual({ state: 'failed', error: 'The agent reported a failure: error_max_turns', cause: 'agent' });
  });

  it('tells a failed Bash command with its exit code', () => {
    const use = { type: 'assistant', message: { id: 'm1', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'false' } }] } };
    const result = { type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 't1', content: 'Exit code 1', is_error: true }] } };
    expect(replay({ kind: 'claude-code' }, [JSON.stringify(use), JSON.stringify(result)]).of('command')).toEqual([{ command: 'false', exitCode: 1, output: 'Exit code 1' }]);
  });
});

describe('Codex', () => {
  it("shows a command without the login shell Codex wraps it in, quotes and all", () => {
    const item = { type: 'item.completed', item: { type: 'command_execution', command: `/bin/bash -lc 'echo '"'"'a'"'"' && echo it'\\''s'`, aggregated_output: '', exit_code: 2 } };
    const simple = { type: 'item.completed', item: { type: 'command_execution', command: "/bin/bash -lc 'echo it'\\''s'", aggregated_output: 'x', exit_code: 0 } };
    const { of } = replay({ kind: 'codex' }, [JSON.stringify(simple), JSON.stringify(item)]);
    expect(of('command')[0]).toEqual({ command: "echo it's", exitCode: 0, output: 'x' });
    expect(of('command')[1]).toMatchObject({ exitCode: 2 });
  });

  it('fails a run whose turn failed, with the reason', () => {
    const { stream, of } = replay({ kind: 'codex' }, ['{"type":"thread.started","thread_id":"t"}', '{"type":"turn.started"}', '{"type":"turn.failed","error":{"message":"stream disconnected"}}']);
    expect(of('error')).toEqual([{ message: 'stream disconnected', fatal: true }]);
    expect(stream.outcome(EXITED)).toMatchObject({ state: 'failed', error: 'The agent reported a failure: stream disconnected' });
  });
});

describe('budgets', () => {
  it('says once, with the figure, when the turns cross agent.maxTurns, and the run fails for it', () => {
    const { stream, of } = replay({ kind: 'claude-code', maxTurns: 2 }, lines('claude-code'));
    expect(of('error')).toEqual([{ message: 'budget_exceeded: the agent took 3 turns, over its budget of 2 (agent.maxTurns).', reason: 'budget_exceeded', fatal: true }]);
    expect(stream.crossed()).toMatch(/^budget_exceeded/);
    expect(stream.outcome({ state: 'canceled', error: 'The run was stopped.' })).toEqual({ state: 'failed', error: stream.crossed(), cause: 'resource_limit' });
  });

  it('stops on the reported cost crossing agent.maxCostUsd', () => {
    const { of } = replay({ kind: 'opencode', maxCostUsd: 0.0001 }, lines('opencode'));
    expect(of('error')).toEqual([expect.objectContaining({ reason: 'budget_exceeded', message: expect.stringMatching(/^budget_exceeded: the agent spent \$0\.\d{4}, over its budget of \$0\.0001 \(agent\.maxCostUsd\)\.$/) })]);
  });

  it('is not crossed by a run within its budgets', () => {
    expect(replay({ kind: 'codex', maxTurns: 5 }, lines('codex')).stream.crossed()).toBeNull();
  });
});

it('cuts long texts in the trace, but reads the whole line', () => {
  const long = 'x'.repeat(MAX_TEXT * 3);
  const { of } = replay({ kind: 'codex' }, [JSON.stringify({ type: 'item.completed', item: { type: 'agent_message', text: long } })]);
  expect(of('message')[0].text).toHaveLength(MAX_TEXT + '… [cut]'.length);
});

describe('settings and command lines', () => {
  it('refuses a setting the kind has not, naming the kinds that have it', () => {
    expect(agentProblem({ kind: 'command', maxTurns: 3 })).toBe('`agent.maxTurns` is for agents whose events Flows reads, not `command` (the target\'s own command).');
    expect(agentProblem({ kind: 'codex', allowedTools: ['Bash'] })).toBe('`agent.allowedTools` is not a setting of `codex`; only `claude-code` and `gemini` have it.');
    expect(agentProblem({ kind: 'gemini', disallowedTools: ['x'] })).toBe('`agent.disallowedTools` is not a setting of `gemini`; only `claude-code` has it.');
    expect(agentProblem({ kind: 'claude-code', maxTurns: 3, maxCostUsd: 1, allowedTools: ['Bash(git:*)'], disallowedTools: ['WebFetch'], permissionMode: 'read-only' })).toBeNull();
  });

  it('builds each CLI headless, acting inside the sandbox, with the model, effort and limits, quoted for the shell', () => {
    const call = { bin: '/opt/agents/claude', model: 'claude-sonnet-4-5', effort: 'high' };
    expect(agentCommandLine({ kind: 'claude-code', maxTurns: 5, maxCostUsd: 2, allowedTools: ["Bash(echo 'x':*)"] }, call)).toBe(
      "exec '/opt/agents/claude' '-p' '--output-format' 'stream-json' '--verbose' '--permission-mode' 'bypassPermissions' '--model' 'claude-sonnet-4-5' '--effort' 'high' '--max-turns' '5' '--max-budget-usd' '2' '--allowedTools' 'Bash(echo '\\''x'\\'':*)'",
    );
    expect(agentCommandLine({ kind: 'codex', permissionMode: 'read-only' }, { bin: 'codex', model: null, effort: 'low' })).toBe(
      "exec 'codex' 'exec' '--json' '--skip-git-repo-check' '--disable' 'plugins' '-c' 'analytics.enabled=false' '-c' 'sandbox_mode=\"read-only\"' '-c' 'model_reasoning_effort=\"low\"' '-'",
    );
    expect(agentCommandLine({ kind: 'opencode' }, { bin: 'opencode', model: 'openai/gpt-5', effort: null })).toBe(`exec 'opencode' 'run' '--format' 'json' '--auto' '--model' 'openai/gpt-5' "$(cat)"`);
    expect(agentCommandLine({ kind: 'cursor' }, { bin: 'cursor-agent', model: null, effort: null })).toBe(`exec 'cursor-agent' '-p' '--output-format' 'stream-json' '--trust' '--force' "$(cat)"`);
    expect(agentCommandLine({ kind: 'gemini' }, { bin: 'gemini', model: null, effort: null })).toBe("exec 'gemini' '--output-format' 'stream-json' '--approval-mode' 'yolo' '--skip-trust'");
  });

  it("continues a session with each CLI's own resume", () => {
    const call = { bin: 'x', model: null, effort: null, resume: 'ses-1' };
    expect(agentCommandLine({ kind: 'claude-code' }, call)).toMatch(/ '--resume=ses-1'$/);
    expect(agentCommandLine({ kind: 'codex' }, call)).toMatch(/ 'resume' 'ses-1' '-'$/);
    expect(agentCommandLine({ kind: 'gemini' }, call)).toContain(" '--resume' 'ses-1'");
    expect(agentCommandLine({ kind: 'opencode' }, call)).toContain(" '--session' 'ses-1'");
    expect(agentCommandLine({ kind: 'cursor' }, call)).toContain(" '--resume' 'ses-1'");
  });
});

describe('prices', () => {
  it('computes the cost of an agent that reports none from the price of its model, cached input at its own price', () => {
    const stream = agentStream({ kind: 'codex' }, { model: 'gpt-5.5', prices: { 'gpt-5.5': { input: 2, cachedInput: 0.5, output: 8 } } });
    for (const line of lines('codex')) stream.line(line);
    // 150 fresh × 2 + 150 cached × 0.5 + 60 out × 8, per million.
    expect(stream.usage()).toEqual({ inputTokens: 300, outputTokens: 60, cachedTokens: 150, turns: 1, costUsd: 0.000855, costSource: 'computed' });
  });

  it('prices the model the agent says it used before the one the job asked for, and keeps a reported cost', () => {
    const gemini = agentStream({ kind: 'gemini' }, { model: 'other', prices: { 'gemini-2.5-flash': { input: 1, output: 1 } } });
    for (const line of lines('gemini')) gemini.line(line);
    expect(gemini.usage()).toMatchObject({ costSource: 'computed', costUsd: (24310 + 566) / 1e6 });
    const claude = agentStream({ kind: 'claude-code' }, { model: 'claude-sonnet-4-5', prices: { 'claude-sonnet-4-5': { input: 100, output: 100 } } });
    for (const line of lines('claude-code')) claude.line(line);
    expect(claude.usage()).toMatchObject({ costSource: 'reported', costUsd: 0.0019575 });
  });

  it('holds a cost budget only where the cost is known', () => {
    const priced = (model: string) => model === 'gpt-5.5';
    expect(unheldCostBudget({ kind: 'claude-code', maxCostUsd: 1 }, null, priced)).toBeNull();
    expect(unheldCostBudget({ kind: 'codex', maxCostUsd: 1 }, 'gpt-5.5', priced)).toBeNull();
    expect(unheldCostBudget({ kind: 'codex' }, null, priced)).toBeNull();
    expect(unheldCostBudget({ kind: 'cursor', maxCostUsd: 1 }, null, priced)).toBe(
      "`agent.maxCostUsd` cannot be held: cursor reports no cost and the job names no `model` to price, so this run's cost would be unknown.",
    );
  });

  it('refuses a price table that is not one, naming the field', () => {
    expect(pricesProblem({ 'gpt-5.5': { input: 1, output: 2, cachedInput: 0.1 } })).toBeNull();
    expect(pricesProblem([])).toBe('must be a JSON object of models');
    expect(pricesProblem({ m: { input: 1 } })).toBe('m.output: must be a number of US dollars per million tokens, 0 or more');
    expect(pricesProblem({ m: { input: -1, output: 1 } })).toBe('m.input: must be a number of US dollars per million tokens, 0 or more');
    expect(pricesProblem({ m: { input: 1, output: 1, per: 'token' } })).toBe('m.per: is not a field of a price (input, output, cachedInput)');
  });
});

describe('resumed sessions', () => {
  it("takes the earlier runs' tokens off Codex's totals of a resumed thread, and only off Codex's", () => {
    const earlier = { inputTokens: 300, outputTokens: 60, cachedTokens: 150 };
    const codex = agentStream({ kind: 'codex' }, { earlier });
    for (const line of lines('codex-resumed')) codex.line(line);
    // The resumed thread reports 600 in, 300 cached, 120 out: the first run's and this one's.
    expect(codex.usage()).toEqual({ inputTokens: 300, outputTokens: 60, cachedTokens: 150, turns: 1, costUsd: null, costSource: 'unknown' });
    const claude = agentStream({ kind: 'claude-code' }, { earlier });
    for (const line of lines('claude-code-resumed')) claude.line(line);
    expect(claude.usage()).toMatchObject({ inputTokens: 480, outputTokens: 60 });
  });
});
