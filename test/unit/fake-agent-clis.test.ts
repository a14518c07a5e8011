// The fake agent CLIs replay recorded streams; these checks keep them honest about exits, side effects and sessions.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const FAKES = path.resolve(__dirname, '../support/fake-agent-clis');
// The line every recorded run writes into notes.md.
const NOTES_LINE = 'Ran `echo hello > hello.txt && cat hello.txt`; it printed `hello`.';

type Event = Record<string, any>;
type Run = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string };

interface Cli {
  name: string;
  args: (prompt: string, resume?: string) => string[];
  sessionOf: (event: Event) => string | undefined;
  isTerminal: (event: Event) => boolean;
  withoutRequired: { args: string[]; code: number; stderr: RegExp };
}

const CLIS: Cli[] = [
  {
    name: 'gemini',
    args: (prompt, resume) => ['-p', prompt, '-o', 'stream-json', '--approval-mode', 'yolo', '-m', 'gemini-2.5-flash', '--skip-trust', ...(resume ? ['--resume', resume] : [])],
    sessionOf: (event) => event.session_id,
    isTerminal: (event) => event.type === 'result',
    withoutRequired: { args: ['-o', 'stream-json', '--approval-mode', 'yolo', '--skip-trust'], code: 42, stderr: /No input provided via stdin/ },
  },
  {
    name: 'opencode',
    args: (prompt, resume) => ['run', '--format', 'json', '-m', 'openai/gpt-5', '--auto', ...(resume ? ['--session', resume] : []), prompt],
    sessionOf: (event) => event.sessionID,
    isTerminal: (event) => event.type === 'step_finish' && event.part.reason === 'stop',
    withoutRequired: { args: ['run', '--format', 'json', '--auto'], code: 1, stderr: /You must provide a message or a command/ },
  },
  {
    name: 'cursor-agent',
    args: (prompt, resume) => ['-p', '--output-format', 'stream-json', '--force', '--trust', '--model', 'gpt-5', ...(resume ? ['--resume', resume] : []), prompt],
    sessionOf: (event) => event.session_id,
    isTerminal: (event) => event.type === 'result',
    withoutRequired: { args: ['-p', '--output-format', 'stream-json', '--force', 'do it'], code: 1, stderr: /Workspace Trust Required/ },
  },
];

function run(cli: string, args: string[], home: string, cwd: string, scenario = 'normal', onLine?: (line: string, stop: () => void) => void): Promise<Run> {
  return new Promise((resolve, reject) => {
    const env = { PATH: process.env.PATH, HOME: home, FAKE_AGENT_SCENARIO: scenario, FAKE_AGENT_LINE_DELAY_MS: '1' };
    const child = spawn(path.join(FAKES, cli), args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (onLine && stdout.includes('\n')) onLine(stdout.split('\n')[0], () => child.kill('SIGTERM'));
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

const jsonLines = (stdout: string): Event[] => stdout.split('\n').filter((line) => line.length > 0).map((line) => JSON.parse(line));

function parsedLines(stdout: string): { events: Event[]; broken: string[] } {
  const events: Event[] = [];
  const broken: string[] = [];
  for (const line of stdout.split('\n').filter((l) => l.length > 0)) {
    try {
      events.push(JSON.parse(line));
    } catch {
      broken.push(line);
    }
  }
  return { events, broken };
}

describe.each(CLIS)('fake $name', (cli) => {
  let home: string;
  let cwd: string;

  beforeEach(() => {
    home = mkdtempSync(path.join(tmpdir(), 'fake-cli-home-'));
    cwd = mkdtempSync(path.join(tmpdir(), 'fake-cli-work-'));
  });
  afterEach(() => {
    rmSync(home, { recursive: true, force: true });
    rmSync(cwd, { recursive: true, force: true });
  });

  it('replays a whole run: valid JSON lines, one session, the command and the file done in the cwd', async () => {
    const result = await run(cli.name, cli.args('do the task'), home, cwd);
    expect(result.code).toBe(0);
    const events = jsonLines(result.stdout);
    const sessions = new Set(events.map(cli.sessionOf).filter(Boolean));
    expect(sessions.size).toBe(1);
    expect(events.filter(cli.isTerminal)).toHaveLength(1);
    expect(cli.isTerminal(events[events.length - 1])).toBe(true);
    expect(readFileSync(path.join(cwd, 'hello.txt'), 'utf8')).toBe('hello\n');
    expect(readFileSync(path.join(cwd, 'notes.md'), 'utf8')).toContain(NOTES_LINE);
    expect(result.stdout).not.toContain('/workspace/project');
  });

  it('issues a new session per run and keeps it on resume', async () => {
    const first = jsonLines((await run(cli.name, cli.args('do the task'), home, cwd)).stdout);
    const second = jsonLines((await run(cli.name, cli.args('do the task'), home, cwd)).stdout);
    const id = cli.sessionOf(first[0]) ?? '';
    expect(id).not.toBe('');
    expect(cli.sessionOf(second[0])).not.toBe(id);

    const resumed = await run(cli.name, cli.args('and then?', id), home, cwd);
    expect(resumed.code).toBe(0);
    const events = jsonLines(resumed.stdout);
    expect(events.length).toBeGreaterThan(1);
    expect(new Set(events.map(cli.sessionOf).filter(Boolean))).toEqual(new Set([id]));
    expect(cli.isTerminal(events[events.length - 1])).toBe(true);
  });

  it('refuses a resume id it never issued', async () => {
    await run(cli.name, cli.args('do the task'), home, cwd);
    const result = await run(cli.name, cli.args('and then?', 'never-issued-0000'), home, cwd);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/session/i);
  });

  it('refuses a command line without what the real one requires', async () => {
    const result = await run(cli.name, cli.withoutRequired.args, home, cwd);
    expect(result.code).toBe(cli.withoutRequired.code);
    expect(result.stderr).toMatch(cli.withoutRequired.stderr);
    expect(result.stdout).toBe('');
  });

  it('truncated: stops mid-line with exit 0 and no terminal event', async () => {
    const result = await run(cli.name, cli.args('do the task'), home, cwd, 'truncated');
    expect(result.code).toBe(0);
    expect(result.stdout.endsWith('\n')).toBe(false);
    const { events, broken } = parsedLines(result.stdout);
    expect(broken).toHaveLength(1);
    expect(events.some(cli.isTerminal)).toBe(false);
  });

  it('malformed: the same events with non-JSON and broken lines between them', async () => {
    const normal = jsonLines((await run(cli.name, cli.args('do the task'), home, cwd)).stdout);
    const result = await run(cli.name, cli.args('do the task'), home, cwd, 'malformed');
    expect(result.code).toBe(0);
    const { events, broken } = parsedLines(result.stdout);
    expect(broken.length).toBeGreaterThanOrEqual(3);
    expect(events.map((e) => e.type)).toEqual(normal.map((e) => e.type));
  });

  it('no-result: every event but the terminal one', async () => {
    const result = await run(cli.name, cli.args('do the task'), home, cwd, 'no-result');
    expect(result.code).toBe(0);
    const events = jsonLines(result.stdout);
    expect(events.length).toBeGreaterThan(3);
    expect(events.some(cli.isTerminal)).toBe(false);
    expect(existsSync(path.join(cwd, 'notes.md'))).toBe(true);
  });

  it('error-after-result: the terminal event, then exit 1 with a line on stderr', async () => {
    const result = await run(cli.name, cli.args('do the task'), home, cwd, 'error-after-result');
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n').pop()).toMatch(/^Error: /);
    const events = jsonLines(result.stdout);
    expect(cli.isTerminal(events[events.length - 1])).toBe(true);
  });

  it('sleep: prints its first event and waits until stopped', async () => {
    const started = Date.now();
    let firstLine = '';
    const result = await run(cli.name, cli.args('do the task'), home, cwd, 'sleep', (line, stop) => {
      if (firstLine) return;
      firstLine = line;
      setTimeout(stop, 300);
    });
    expect(result.signal).toBe('SIGTERM');
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(cli.sessionOf(JSON.parse(firstLine))).toBeTruthy();
    expect(existsSync(path.join(cwd, 'hello.txt'))).toBe(false);
  });
});
