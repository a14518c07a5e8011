// The spawner process starts the local agents so that the server never forks itself per run: what a
// child writes and how it ends reach the server in order, its input reaches it, a missing binary is an
// 'error' as Node reports it, a spawner that dies fails what it held and is replaced at the next spawn,
// and a run's processes are the spawner's children, not the server's.
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Execution, Outcome, RunSpec } from '../../src/integrations/executor';
import { createLocalExecutor } from '../../src/integrations/local-executor';
import { createSpawner, type SpawnedProcess, type Spawner } from '../../src/integrations/spawner';

jest.setTimeout(60_000);

const PATH = process.env.PATH ?? '/usr/bin:/bin';
const spawners: Spawner[] = [];
// Each test's spawners end with it (a spawner starts again at its next spawn): where limits are rlimits,
// every thread of this user counts against a run's process limit.
afterEach(() => Promise.all(spawners.map((spawner) => spawner.close())));

function newSpawner(idleMs?: number) {
  const spawner = createSpawner({ idleMs });
  spawners.push(spawner);
  return spawner;
}

/** Every event of `child` in the order it came, output as the streams' whole texts. */
function record(child: SpawnedProcess) {
  const events: string[] = [];
  const text = { stdout: '', stderr: '' };
  child.stdout?.on('data', (chunk: Buffer) => (text.stdout += chunk));
  child.stderr?.on('data', (chunk: Buffer) => (text.stderr += chunk));
  child.on('error', (err) => events.push(`error ${err.code}`));
  child.on('exit', (code, signal) => events.push(`exit ${code} ${signal} after ${text.stdout.length + text.stderr.length} bytes`));
  const closed = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.on('close', (code, signal) => {
      events.push(`close ${code} ${signal} after ${text.stdout.length + text.stderr.length} bytes`);
      resolve({ code, signal });
    }),
  );
  return { events, text, closed };
}

/** The parent pid of each process of this machine. */
function parents(): Map<number, number> {
  const found = new Map<number, number>();
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      // The command name, in parentheses, may hold spaces: the fields that follow it are counted from its end.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      found.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // exited meanwhile
    }
  }
  return found;
}
const childrenOf = (pid: number) => [...parents()].filter(([, parent]) => parent === pid).map(([child]) => child);

describe('a spawned process', () => {
  const spawner = newSpawner();

  it('delivers its output, then its exit code: stdout and stderr whole, exit and close after what was read', async () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => `line ${i}`).join('\n');
    const child = await spawner.spawn('/bin/sh', ['-c', `seq -f 'line %.0f' 0 19999; echo oops >&2; exit 7`], { env: { PATH }, detached: true });
    const { events, text, closed } = record(child);
    expect(child.pid).toEqual(expect.any(Number));
    expect(await closed).toEqual({ code: 7, signal: null });
    expect(text).toEqual({ stdout: `${lines}\n`, stderr: 'oops\n' });
    const total = text.stdout.length + text.stderr.length;
    expect(events.at(-1)).toBe(`close 7 null after ${total} bytes`);
    expect(events.filter((event) => event.startsWith('exit'))).toEqual([expect.stringMatching(/^exit 7 null after \d+ bytes$/)]);
    expect(events.indexOf(events.find((event) => event.startsWith('exit'))!)).toBe(events.length - 2);
  });

  it('reads what is written to its stdin, a megabyte as one piece', async () => {
    const input = randomBytes(1024 * 1024);
    const child = await spawner.spawn('/bin/sh', ['-c', 'sha256sum | cut -d" " -f1'], { env: { PATH } });
    const { text, closed } = record(child);
    child.stdin!.end(input);
    expect((await closed).code).toBe(0);
    expect(text.stdout.trim()).toBe(createHash('sha256').update(input).digest('hex'));
  });

  it('of a missing binary, or a file that is not executable: no pid, an error as Node reports it, then close', async () => {
    const missing = await spawner.spawn('/nonexistent/agent', [], { env: { PATH } });
    const recorded = record(missing);
    expect(missing.pid).toBeUndefined();
    expect(await recorded.closed).toEqual({ code: -2, signal: null });
    expect(recorded.events).toEqual(['error ENOENT', 'close -2 null after 0 bytes']);

    const file = path.join(mkdtempSync(path.join(tmpdir(), 'flows-spawner-')), 'agent');
    writeFileSync(file, '#!/bin/sh\necho never\n');
    chmodSync(file, 0o644);
    const refused = await spawner.spawn(file, [], { env: { PATH } });
    const seen = record(refused);
    await seen.closed;
    expect(seen.events[0]).toBe('error EACCES');
  });

  it('is refused outright when Node refuses its options', async () => {
    await expect(spawner.spawn('/bin/true', [], { env: { PATH }, uid: 2 ** 31 })).rejects.toThrow('options.uid');
  });
});

describe('a spawner that dies', () => {
  it('fails the spawn it had not answered yet; the next spawn starts another', async () => {
    const spawner = newSpawner();
    const pending = spawner.spawn('/bin/echo', ['hi'], { env: { PATH } });
    const first = spawner.pid()!;
    process.kill(first, 'SIGKILL');
    await expect(pending).rejects.toThrow('the process spawner ended (signal SIGKILL) before the process started');
    const next = await spawner.spawn('/bin/echo', ['again'], { env: { PATH } });
    const { text, closed } = record(next);
    expect((await closed).code).toBe(0);
    expect(text.stdout).toBe('again\n');
    expect(spawner.pid()).not.toBe(first);
  });

  it('keeps the error of a process it lost until someone listens for it, and stops that process', async () => {
    const spawner = newSpawner();
    const child = await spawner.spawn('/bin/sleep', ['30'], { env: { PATH }, detached: true });
    process.kill(spawner.pid()!, 'SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 300)); // nobody listens meanwhile: nothing is thrown
    const { events, closed } = record(child);
    expect(await closed).toEqual({ code: null, signal: 'SIGKILL' });
    expect(events).toEqual(['error undefined', 'close null SIGKILL after 0 bytes']);
    for (const until = Date.now() + 5_000; alive(child.pid!) && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(alive(child.pid!)).toBe(false);
  });

  it('mid-run: the run fails as an infrastructure failure, its sandbox is gone, and the next run succeeds', async () => {
    const spawner = newSpawner();
    const executor = createLocalExecutor({ command: 'sh', timeoutSeconds: 30, spawner });
    const lines: string[] = [];
    let started: () => void;
    const said = new Promise<void>((resolve) => (started = resolve));
    const execution = await executor.start(spec('run_spawner_dies', 'echo started; sleep 30; echo never'), {
      output: (_stream, text) => (lines.push(text), text === 'started' && started()),
      provisioning: () => {},
      sandbox: () => {},
    });
    await said;
    const agent = Number(execution.ref.slice('local:'.length));
    process.kill(spawner.pid()!, 'SIGKILL');
    const outcome = await execution.done;
    expect(outcome).toEqual({ state: 'failed', cause: 'infrastructure', error: expect.stringContaining("The agent's process was lost: the process spawner ended (signal SIGKILL)") });
    expect(lines).toEqual(['started']);
    // Killed with its group, and what ran in the sandbox with it (bubblewrap's --die-with-parent), a moment later.
    for (const until = Date.now() + 5_000; (alive(agent) || marked('run_spawner_dies').length) && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(alive(agent)).toBe(false);
    expect(marked('run_spawner_dies')).toEqual([]);

    const next = await executor.start(spec('run_spawner_next', 'echo fine'), { output: () => {}, provisioning: () => {}, sandbox: () => {} });
    expect(await next.done).toEqual({ state: 'succeeded', result: expect.anything() });
  });
});

describe('runs through the spawner', () => {
  it('are children of the spawner, never of this process, and a stop ends them by their process group', async () => {
    const spawner = newSpawner();
    const executor = createLocalExecutor({ command: 'sh', timeoutSeconds: 30, killGraceMs: 500, spawner });
    await (await executor.start(spec('run_spawner_warm', 'true'), { output: () => {}, provisioning: () => {}, sandbox: () => {} })).done;
    const before = childrenOf(process.pid);
    const ready: Promise<void>[] = [];
    const executions: Execution[] = [];
    for (let i = 0; i < 4; i++) {
      let started: () => void;
      ready.push(new Promise<void>((resolve) => (started = resolve)));
      executions.push(await executor.start(spec(`run_spawner_${i}`, 'echo started; sleep 30'), { output: (_stream, text) => text === 'started' && started(), provisioning: () => {}, sandbox: () => {} }));
    }
    await Promise.all(ready);
    const agents = executions.map((execution) => Number(execution.ref.slice('local:'.length)));
    const family = parents();
    expect(agents.map((agent) => family.get(agent))).toEqual(agents.map(() => spawner.pid()));
    expect(childrenOf(process.pid).filter((child) => !before.includes(child))).toEqual([]);
    expect(before).toContain(spawner.pid());

    for (const execution of executions) execution.stop();
    const outcomes: Outcome[] = await Promise.all(executions.map((execution) => execution.done));
    expect(outcomes.map((outcome) => outcome.state)).toEqual(['canceled', 'canceled', 'canceled', 'canceled']);
    expect(agents.filter(alive)).toEqual([]);
  });
});

function spec(runId: string, prompt: string): RunSpec {
  return { tenantId: 't', targetId: 'local', runId: `${runId}_${process.pid}`, jobSlug: 'job', prompt, model: null, effort: null, timeoutSeconds: 30, env: {} };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

/** The processes that carry the run's id (every process of its sandbox does). */
function marked(runId: string): number[] {
  return [...parents().keys()].filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`FLOWS_RUN_ID=${runId}_${process.pid}`);
    } catch {
      return false;
    }
  });
}
