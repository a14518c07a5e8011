// The real Claude Code and Codex CLIs, run headless as child processes against a scripted model provider on
// loopback, each in a fresh folder with its own home and state folder: the command runs, the file gets written,
// stdout is the JSON lines the agent adapters parse, usage carries the provider's numbers, and a resumed
// session sends the model its earlier turns. With FLOWS_RECORD_AGENT_FIXTURES=1 the output is also saved to
// test/fixtures/agents (see the README there).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { agentCliPath } from '../support/agent-clis';
import { startFakeModelProvider, USAGE, type FakeModelProvider, type RecordedRequest } from '../support/fake-model-provider';

const FIRST_PROMPT = 'Create hello.txt saying hello, then write notes.md.';
const RESUMED_PROMPT = 'Do it once more, please.';
const FINAL_TEXT = 'Done: wrote hello.txt and notes.md';
const SHELL_COMMAND = 'echo hello > hello.txt && cat hello.txt';
const API_KEY = 'sk-test-fake-model-0123456789';
const FIXTURES = path.join(__dirname, '../fixtures/agents');

let fake: FakeModelProvider;
const roots: string[] = [];
beforeAll(async () => {
  fake = await startFakeModelProvider();
});
afterAll(async () => {
  await fake?.close();
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

interface Folders {
  root: string;
  work: string;
  home: string;
  state: string;
  temp: string;
}

function folders(name: string): Folders {
  const root = mkdtempSync(path.join(tmpdir(), `flows-${name}-`));
  roots.push(root);
  const [work, home, state, temp] = ['work', 'home', 'state', 'tmp'].map((part) => path.join(root, part));
  for (const folder of [work, home, state, temp]) mkdirSync(folder);
  return { root, work, home, state, temp };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  events: any[];
  /** What the CLI asked the model during this run. */
  requests: RecordedRequest[];
  seconds: number;
}

/** Runs a CLI with the prompt on stdin and nothing of this process's environment but PATH. */
function run(command: string, args: string[], dirs: Folders, env: Record<string, string>, prompt: string): Promise<Run> {
  const from = fake.requests.length;
  const started = Date.now();
  const child = spawn(command, args, { cwd: dirs.work, env: { PATH: process.env.PATH!, HOME: dirs.home, TMPDIR: dirs.temp, ...env } });
  const deadline = setTimeout(() => child.kill('SIGKILL'), 90_000);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  child.stdin.end(prompt);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(deadline);
      const events = stdout.split('\n').filter((line) => line.trim()).map((line) => JSON.parse(line));
      resolve({ code, stdout, stderr, events, requests: fake.requests.slice(from), seconds: (Date.now() - started) / 1000 });
    }),
  );
}

/** Saves what a CLI printed, with the temporary folders replaced by fixed names so that fixtures don't churn. */
function record(file: string, { stdout }: Run, dirs: Folders) {
  if (process.env.FLOWS_RECORD_AGENT_FIXTURES !== '1') return;
  const encoded = (folder: string) => folder.replace(/[/.]/g, '-');
  const text = stdout.split(dirs.work).join('/workspace').split(encoded(dirs.work)).join('-workspace').split(dirs.root).join('/agent-home');
  writeFileSync(path.join(FIXTURES, file), text);
}

const modelCalls = (requests: RecordedRequest[], endpoint: string) => requests.filter((request) => request.path === endpoint);
const stringified = (value: unknown) => JSON.stringify(value);

function expectFilesWritten(dirs: Folders) {
  expect(readFileSync(path.join(dirs.work, 'hello.txt'), 'utf8')).toBe('hello\n');
  expect(readFileSync(path.join(dirs.work, 'notes.md'), 'utf8')).toContain('hello.txt says hello.');
}

describe('Claude Code', () => {
  const dirs = folders('claude');
  const args = ['-p', '--output-format', 'stream-json', '--verbose', '--model', 'claude-sonnet-4-5', '--permission-mode', 'bypassPermissions'];
  const env = () => ({
    CLAUDE_CONFIG_DIR: dirs.state,
    ANTHROPIC_BASE_URL: fake.url,
    ANTHROPIC_API_KEY: API_KEY,
    // No telemetry, update checks or reachability probes: nothing but the model calls leaves the process.
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    // Bypassing permissions as root is refused unless the CLI is told it runs in a sandbox.
    IS_SANDBOX: '1',
  });
  let first: Run;

  test('runs a command and writes a file, printing stream-json lines with usage and cost', async () => {
    first = await run(agentCliPath('claude'), args, dirs, env(), FIRST_PROMPT);
    record('claude-code.jsonl', first, dirs);
    expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: '' });
    expectFilesWritten(dirs);

    const calls = modelCalls(first.requests, '/v1/messages');
    expect(calls.length).toBe(3);
    expect(calls.every((call) => call.apiKey === API_KEY && call.body.stream === true)).toBe(true);
    expect(first.requests.filter((request) => request.path !== '/v1/messages')).toEqual([]);

    const [init] = first.events;
    expect(init).toMatchObject({ type: 'system', subtype: 'init', cwd: dirs.work, model: 'claude-sonnet-4-5', permissionMode: 'bypassPermissions' });
    const assistantBlocks = first.events.filter((event) => event.type === 'assistant').flatMap((event) => event.message.content);
    const toolUses = assistantBlocks.filter((block: any) => block.type === 'tool_use');
    expect(toolUses.map((use: any) => [use.name, use.input.command ?? use.input.file_path])).toEqual([
      ['Bash', SHELL_COMMAND],
      ['Write', path.join(dirs.work, 'notes.md')],
    ]);
    const toolResults = first.events.filter((event) => event.type === 'user').flatMap((event) => event.message.content);
    expect(toolResults[0]).toMatchObject({ type: 'tool_result', tool_use_id: toolUses[0].id, content: 'hello', is_error: false });
    expect(toolResults[1]).toMatchObject({ type: 'tool_result', tool_use_id: toolUses[1].id });
    // Usage per assistant message is that one API response's, not a running sum.
    for (const event of first.events.filter((event) => event.type === 'assistant')) expect(event.message.usage.input_tokens).toBe(USAGE.input);

    const result = first.events.at(-1);
    expect(result).toMatchObject({ type: 'result', subtype: 'success', is_error: false, num_turns: 3, result: FINAL_TEXT, session_id: init.session_id });
    expect(result.usage).toMatchObject({
      input_tokens: 3 * USAGE.input,
      output_tokens: 3 * USAGE.output,
      cache_read_input_tokens: 3 * USAGE.cacheRead,
      cache_creation_input_tokens: 3 * USAGE.cacheWrite,
    });
    expect(result.total_cost_usd).toBeGreaterThan(0);
    expect(result.modelUsage['claude-sonnet-4-5'].costUSD).toBe(result.total_cost_usd);
  });

  test('resumes the session in the same folder, sending the earlier turns to the model', async () => {
    expect(first?.code).toBe(0);
    const sessionId = first.events[0].session_id;
    const resumed = await run(agentCliPath('claude'), [...args, `--resume=${sessionId}`], dirs, env(), RESUMED_PROMPT);
    record('claude-code-resumed.jsonl', resumed, dirs);
    expect({ code: resumed.code, stderr: resumed.stderr }).toEqual({ code: 0, stderr: '' });
    expect(resumed.events[0]).toMatchObject({ type: 'system', subtype: 'init', session_id: sessionId });

    const [call] = modelCalls(resumed.requests, '/v1/messages');
    const earlier = first.events.filter((event) => event.type === 'assistant').flatMap((event) => event.message.content);
    for (const block of earlier) expect(call.body.messages.some((message: any) => stringified(message.content).includes(stringified(block)))).toBe(true);
    expect(stringified(call.body.messages[0])).toContain(FIRST_PROMPT);
    expect(stringified(call.body.messages.at(-1))).toContain(RESUMED_PROMPT);

    // The result's usage covers this run only, but its cost is the session's so far: the first run's plus this one's.
    const [before, after] = [first.events.at(-1), resumed.events.at(-1)];
    expect(after).toMatchObject({ type: 'result', subtype: 'success', session_id: sessionId, usage: { input_tokens: 3 * USAGE.input } });
    expect(after.total_cost_usd).toBeCloseTo(2 * before.total_cost_usd, 10);
    expect(after.modelUsage['claude-sonnet-4-5'].inputTokens).toBe(6 * USAGE.input);
  });
});

describe('Codex', () => {
  const dirs = folders('codex');
  // A provider of its own: Codex ignores OPENAI_BASE_URL, and its built-in OpenAI provider first tries a WebSocket.
  const config = () => [
    'model_provider="fake"',
    'model_providers.fake.name="fake"',
    `model_providers.fake.base_url="${fake.url}/v1"`,
    'model_providers.fake.env_key="FAKE_MODEL_API_KEY"',
    'model_providers.fake.wire_api="responses"',
    'analytics.enabled=false',
    // `exec resume` has no --sandbox flag: the sandbox is set as configuration for both runs.
    'sandbox_mode="workspace-write"',
  ];
  // gpt-5.5 is in Codex's built-in model list, whose metadata declares the apply_patch tool; an unknown model gets none.
  const args = () => ['exec', '--json', '-m', 'gpt-5.5', '--skip-git-repo-check', '--disable', 'plugins', ...config().flatMap((setting) => ['-c', setting])];
  const env = () => ({ CODEX_HOME: dirs.state, FAKE_MODEL_API_KEY: API_KEY });
  let first: Run;

  test('runs a command and applies a patch, printing JSON lines with usage', async () => {
    first = await run(agentCliPath('codex'), [...args(), '-'], dirs, env(), FIRST_PROMPT);
    record('codex.jsonl', first, dirs);
    expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: '' });
    expectFilesWritten(dirs);

    const calls = modelCalls(first.requests, '/v1/responses');
    expect(calls.length).toBe(3);
    expect(calls.every((call) => call.apiKey === API_KEY && call.body.stream === true && call.body.model === 'gpt-5.5')).toBe(true);
    expect(first.requests.filter((request) => request.path !== '/v1/responses')).toEqual([]);

    const types = first.events.map((event) => event.type);
    expect(types[0]).toBe('thread.started');
    expect(types.at(-1)).toBe('turn.completed');
    const completed = first.events.filter((event) => event.type === 'item.completed').map((event) => event.item);
    const command = completed.find((item) => item.type === 'command_execution');
    expect(command).toMatchObject({ exit_code: 0, status: 'completed', aggregated_output: 'hello\n' });
    expect(command.command).toContain(SHELL_COMMAND);
    const change = completed.find((item) => item.type === 'file_change');
    expect(change).toMatchObject({ status: 'completed', changes: [{ path: path.join(dirs.work, 'notes.md'), kind: 'add' }] });
    expect(completed.filter((item) => item.type === 'agent_message').at(-1).text).toBe(FINAL_TEXT);
    // The turn's usage sums the three model calls.
    const usage = { input_tokens: 3 * USAGE.input, cached_input_tokens: 3 * USAGE.cacheRead, output_tokens: 3 * USAGE.output };
    expect(first.events.at(-1)).toMatchObject({ type: 'turn.completed', usage });
  });

  test('resumes the thread in the same folder, sending the earlier turns to the model', async () => {
    expect(first?.code).toBe(0);
    const threadId = first.events[0].thread_id;
    const resumed = await run(agentCliPath('codex'), [...args(), 'resume', threadId, '-'], dirs, env(), RESUMED_PROMPT);
    record('codex-resumed.jsonl', resumed, dirs);
    expect({ code: resumed.code, stderr: resumed.stderr }).toEqual({ code: 0, stderr: '' });
    expect(resumed.events[0]).toEqual({ type: 'thread.started', thread_id: threadId });

    const [call] = modelCalls(resumed.requests, '/v1/responses');
    const input = call.body.input.map(stringified);
    const earlierCalls = modelCalls(first.requests, '/v1/responses').slice(1);
    // Each of the first run's later requests ended with the tool output it reported: all of them come back.
    for (const earlier of earlierCalls) expect(input).toContain(stringified(earlier.body.input.at(-1)));
    expect(input.some((item: string) => item.includes(FIRST_PROMPT))).toBe(true);
    expect(input.some((item: string) => item.includes(FINAL_TEXT))).toBe(true);
    expect(input.at(-1)).toContain(RESUMED_PROMPT);

    // After a resume, the turn's usage is the thread's running total: the first run's calls are counted again.
    expect(resumed.events.at(-1)).toMatchObject({ type: 'turn.completed', usage: { input_tokens: 6 * USAGE.input, output_tokens: 6 * USAGE.output } });
  });
});
