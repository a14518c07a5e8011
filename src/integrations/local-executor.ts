// The built-in `local` target: the operator's agent command, run by /bin/sh in a fresh temporary
// directory with the prompt on stdin and only the FLOWS_* run variables (and PATH, and the variables the
// operator passes on) in its environment, inside a bubblewrap sandbox (sandbox.ts) unless the operator
// turned it off. It runs in a process group of its own (the sandbox in its own PID namespace), so that
// stop, timeout and the end of the run take every process it started with it.
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { LocalAgent } from '../config';
import { INSTALL_HINT, sandboxArgs, sandboxProblem, spawnSandbox } from './sandbox';
import { clip } from '../lib/text';
import { agentOutput, resultOf } from './agent-output';
import { failedAtStart, runVariables, type Execution, type ExecutionEvents, type Executor, type Outcome, type RunSpec } from './executor';

const KILL_GRACE_MS = 5_000;

function killGroup(pid: number, signal: NodeJS.Signals) {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/**
 * Kills every process that carries the run's id: the shell may be gone while what it started lives on,
 * and a recorded pid may belong to something else by now.
 */
async function killMarked(runId: string) {
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
}

export function createLocalExecutor({ killGraceMs = KILL_GRACE_MS, bwrap = 'bwrap', ...agent }: LocalAgent & { killGraceMs?: number; bwrap?: string }): Executor {
  const sandboxed = agent.sandbox !== 'off';
  // Probed until a sandbox could be made once (bubblewrap may be installed while the server runs); until
  // then every run fails, saying why.
  let problem: Promise<string | null> | undefined;
  const home = process.env.HOME ?? '/';
  const passed = Object.fromEntries((agent.env ?? []).flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]!]])));

  return {
    async start(spec: RunSpec, events: ExecutionEvents): Promise<Execution> {
      if (sandboxed) {
        const why = await (problem ??= sandboxProblem(agent, bwrap));
        if (why) {
          problem = undefined;
          return failedAtStart('local', `The local target runs agents in a sandbox, and ${why}: ${INSTALL_HINT}.`, 'setup');
        }
      }
      const dir = await mkdtemp(path.join(tmpdir(), 'flows-run-'));
      const env = {
        PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
        HOME: sandboxed ? home : (process.env.HOME ?? dir),
        LANG: 'C.UTF-8',
        TMPDIR: sandboxed ? '/tmp' : dir,
        ...passed,
        ...spec.env,
        ...runVariables(spec),
      };
      // Sandboxed, bubblewrap itself gets only what finds it and marks its processes as the run's (`reap`).
      const child = sandboxed
        ? spawnSandbox(bwrap, sandboxArgs({ workspace: dir, home, agent, env }), agent.command, { PATH: env.PATH, FLOWS_RUN_ID: spec.runId })
        : spawn('/bin/sh', ['-c', agent.command], { cwd: dir, detached: true, stdio: ['pipe', 'pipe', 'pipe'], env });
      const pid = child.pid!;
      let ending: 'timed_out' | 'canceled' | null = null;
      const end = (why: 'timed_out' | 'canceled') => {
        ending ??= why;
        killGroup(pid, 'SIGTERM');
        setTimeout(() => killGroup(pid, 'SIGKILL'), killGraceMs).unref();
      };
      const timer = setTimeout(() => end('timed_out'), spec.timeoutSeconds * 1000);

      const output = agentOutput(events);
      output.follow('stdout', child.stdout!);
      output.follow('stderr', child.stderr!);
      child.stdin!.on('error', () => {}); // an agent that does not read its prompt closes stdin early
      child.stdin!.end(spec.prompt);

      const done = new Promise<Outcome>((resolve) => {
        child.on('error', (err) => {
          ending ??= null;
          resolve({ state: 'failed', error: `The agent command could not be started: ${clip(err.message)}`, cause: 'infrastructure' });
        });
        // The shell has exited: whatever it left running goes too. A sandbox stopped just after it was made
        // may have lost its link to bubblewrap (--die-with-parent is set a moment after the fork): found by its mark.
        child.on('exit', () => {
          killGroup(pid, 'SIGKILL');
          if (ending && sandboxed) void killMarked(spec.runId);
        });
        child.on('close', (code, signal) => {
          clearTimeout(timer);
          void rm(dir, { recursive: true, force: true });
          if (ending === 'timed_out') return resolve({ state: 'timed_out', error: `The agent was still running after ${spec.timeoutSeconds} seconds.` });
          if (ending === 'canceled') return resolve({ state: 'canceled', error: 'The run was stopped.' });
          if (code === 0) return resolve({ state: 'succeeded', result: resultOf(output.last.stdout) });
          const why = code === null ? `was killed by ${signal}` : `exited with code ${code}`;
          resolve({ state: 'failed', error: `The agent ${why}${output.last.stderr ? `: ${clip(output.last.stderr)}` : '.'}`, cause: 'agent' });
        });
      });
      events.provisioning({ status: 'process_started', sandbox: sandboxed ? 'bubblewrap' : 'off' });
      return { ref: `local:${pid}`, done, stop: () => end('canceled') };
    },

    async reap(_ref: string, runId: string) {
      await killMarked(runId);
    },
  };
}
