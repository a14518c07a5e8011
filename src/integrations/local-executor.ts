// The built-in `local` target: the operator's agent command, run by /bin/sh in a fresh temporary
// directory with the prompt on stdin and only the FLOWS_* run variables (and PATH) in its environment.
// It runs in a process group of its own, so that stop, timeout and the end of the run take every process
// it started with it.
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { LocalAgent } from '../config';
import { clip } from '../lib/text';
import type { Execution, ExecutionEvents, Executor, Outcome, RunSpec } from './executor';

/** Longest line kept in the trace, and all output of one run; the rest is dropped with a notice. */
export const MAX_LINE = 8_000;
export const MAX_OUTPUT = 1_000_000;
const KILL_GRACE_MS = 5_000;

function killGroup(pid: number, signal: NodeJS.Signals) {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/** A JSON object on the last line is the agent's structured result; any other last line is its summary. */
function resultOf(lastLine: string | undefined): Record<string, unknown> {
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

export function createLocalExecutor({ command, killGraceMs = KILL_GRACE_MS }: Pick<LocalAgent, 'command'> & { killGraceMs?: number }): Executor {
  return {
    async start(spec: RunSpec, events: ExecutionEvents): Promise<Execution> {
      const dir = await mkdtemp(path.join(tmpdir(), 'flows-run-'));
      const child = spawn('/bin/sh', ['-c', command], {
        cwd: dir,
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
        env: {
          PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
          HOME: process.env.HOME ?? dir,
          LANG: 'C.UTF-8',
          TMPDIR: dir,
          FLOWS_RUN_ID: spec.runId,
          FLOWS_JOB_SLUG: spec.jobSlug,
          FLOWS_MODEL: spec.model ?? '',
          FLOWS_EFFORT: spec.effort ?? '',
        },
      });
      const pid = child.pid!;
      let ending: 'timed_out' | 'canceled' | null = null;
      const end = (why: 'timed_out' | 'canceled') => {
        ending ??= why;
        killGroup(pid, 'SIGTERM');
        setTimeout(() => killGroup(pid, 'SIGKILL'), killGraceMs).unref();
      };
      const timer = setTimeout(() => end('timed_out'), spec.timeoutSeconds * 1000);

      let written = 0;
      let lastStdout: string | undefined;
      let lastStderr: string | undefined;
      const follow = (stream: 'stdout' | 'stderr', input: NodeJS.ReadableStream) =>
        createInterface({ input, crlfDelay: Infinity }).on('line', (line) => {
          if (line.trim()) stream === 'stdout' ? (lastStdout = line) : (lastStderr = line);
          if (written > MAX_OUTPUT) return;
          written += line.length;
          if (written > MAX_OUTPUT) events.output(stream, `[output beyond ${MAX_OUTPUT} characters is not kept]`);
          else events.output(stream, line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)}…` : line);
        });
      follow('stdout', child.stdout);
      follow('stderr', child.stderr);
      child.stdin.on('error', () => {}); // an agent that does not read its prompt closes stdin early
      child.stdin.end(spec.prompt);

      const done = new Promise<Outcome>((resolve) => {
        child.on('error', (err) => {
          ending ??= null;
          resolve({ state: 'failed', error: `The agent command could not be started: ${clip(err.message)}` });
        });
        // The shell has exited: whatever it left running goes too.
        child.on('exit', () => killGroup(pid, 'SIGKILL'));
        child.on('close', (code, signal) => {
          clearTimeout(timer);
          void rm(dir, { recursive: true, force: true });
          if (ending === 'timed_out') return resolve({ state: 'timed_out', error: `The agent was still running after ${spec.timeoutSeconds} seconds.` });
          if (ending === 'canceled') return resolve({ state: 'canceled', error: 'The run was stopped.' });
          if (code === 0) return resolve({ state: 'succeeded', result: resultOf(lastStdout) });
          const why = code === null ? `was killed by ${signal}` : `exited with code ${code}`;
          resolve({ state: 'failed', error: `The agent ${why}${lastStderr ? `: ${clip(lastStderr)}` : '.'}` });
        });
      });
      events.provisioning({ status: 'process_started' });
      return { ref: `local:${pid}`, done, stop: () => end('canceled') };
    },

    async reap(_ref: string, runId: string) {
      // Every process that still carries the run's id: the shell may be gone while what it started lives on,
      // and a recorded pid may belong to something else by now.
      const marker = `FLOWS_RUN_ID=${runId}`;
      for (const entry of await readdir('/proc').catch(() => [])) {
        if (!/^\d+$/.test(entry)) continue;
        const environ = await readFile(`/proc/${entry}/environ`, 'utf8').catch(() => '');
        if (environ.split('\0').includes(marker)) {
          try {
            process.kill(Number(entry), 'SIGKILL');
          } catch {
            // exited meanwhile
          }
        }
      }
    },
  };
}
