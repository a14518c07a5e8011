// The built-in `local` target: the operator's agent command, run by /bin/sh with the prompt on stdin and
// only the FLOWS_* run variables (and PATH, and the variables the operator passes on) in its environment,
// inside a bubblewrap sandbox (sandbox.ts) unless the operator turned it off: never root, with its own
// network reaching out only through the run's egress proxy (egress-proxy.ts), and within its limits
// (run-limits.ts). It runs in a process group of its own (the sandbox in its own PID namespace), so that
// stop, timeout, a limit and the end of the run take every process it started with it. Its process is
// started by the spawner process (spawner.ts): this server never forks itself per run.
import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access, chmod, mkdir, readdir, readFile, realpath, rm } from 'node:fs/promises';
import path from 'node:path';
import type { StreamKind } from '../agents/agent-events-fns';
import { agentCommandLine, agentVariables, AGENT_CLIS, AGENT_INSTALL, isStreamKind } from '../agents/agents-fns';
import { agentBinVariable } from '../lib/agent-clis';
import { DEFAULT_AGENT_STATE_DIR, type LocalAgent, type SandboxBind } from '../config';
import { DEFAULT_LIMITS, limitMessage, type LimitName } from '../lib/resource-limits';
import { sizeOf } from '../lib/folder-size';
import { clip } from '../lib/text';
import { agentOutput, outputBounds, resultOf } from './agent-output';
import { openEgress, type EgressOptions } from './egress-proxy';
import { failedAtStart, runVariables, type Execution, type ExecutionEvents, type Executor, type Outcome, type RunSpec } from './executor';
import { createLocalSessionStates, type OpenedState } from './local-session-states';
import { openCgroups, rlimitOptions, type Cgroups, type RunCgroup } from './run-limits';
import { EGRESS_SOCKET, findBusybox, INSTALL_HINT, makeRunDir, proxyEnv, sandboxArgs, sandboxProblem, sandboxUid, spawnSandbox, sweepRunDirs } from './sandbox';
import { processSpawner, type SpawnedProcess, type Spawner } from './spawner';

const KILL_GRACE_MS = 5_000;
/** How often a run's control group is read for a limit it ran into. */
const WATCH_MS = 500;
/** How often a repository workspace's size is measured (a walk of its files). */
const WORKSPACE_MEASURE_MS = 2_000;

function killGroup(pid: number, signal: NodeJS.Signals) {
  if (pid <= 0) return; // -0 would be this server's own group
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

const SYSTEM_PREFIXES = ['/usr/', '/bin/', '/sbin/', '/lib/', '/lib64/'];

/** The real path of an executable file named `name` on `PATH` (or of `path` itself when absolute), or null. */
async function findExecutable(name: string, searchPath: string): Promise<string | null> {
  const candidates = name.startsWith('/') ? [name] : searchPath.split(':').filter(Boolean).map((dir) => path.join(dir, name));
  for (const candidate of candidates) {
    try {
      await access(candidate, constants.X_OK);
      return await realpath(candidate);
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * What the run executes: the operator's command, or the CLI of the job's agent with the command line built
 * for it, its variables, and, when it lives outside the system folders the sandbox shows, its folder bound
 * read-only; or why it cannot run here.
 */
async function commandOf(spec: RunSpec, agent: LocalAgent): Promise<{ command: string; env: Record<string, string>; binds: SandboxBind[]; kind: StreamKind | null } | { problem: string }> {
  const kind = spec.agent?.kind;
  if (!kind || !isStreamKind(kind)) return { command: agent.command, env: {}, binds: [], kind: null };
  const configured = agent.agentBins?.[kind];
  const bin = await findExecutable(configured ?? AGENT_CLIS[kind], process.env.PATH ?? '');
  if (!bin) {
    const variable = agentBinVariable(kind);
    const where = configured ? `at ${configured} (${variable})` : `on this server's PATH as \`${AGENT_CLIS[kind]}\``;
    return { problem: `The local target has no ${kind} CLI ${where}: install it (${AGENT_INSTALL[kind]}) or set ${variable} to its path.` };
  }
  const binds = SYSTEM_PREFIXES.some((prefix) => bin.startsWith(prefix)) ? [] : [{ path: path.dirname(bin), writable: false }];
  const command = agentCommandLine({ ...spec.agent!, kind }, { bin, model: spec.model, effort: spec.effort, resume: spec.session?.resume });
  return { command, env: agentVariables(kind), binds, kind };
}

/** Gives every file under `dir` (links themselves, not what they point to) to `uid`. */
async function chownTree(dir: string, uid: number) {
  await new Promise<void>((resolve, reject) =>
    execFile('chown', ['-R', '-h', `${uid}:${uid}`, dir], (err) => (err ? reject(new Error(`the workspace could not be given to uid ${uid}: ${err.message}`)) : resolve())),
  );
}

async function emptyFolder(dir: string): Promise<string> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { mode: 0o700 });
  return dir;
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

export interface LocalExecutorOptions extends LocalAgent {
  killGraceMs?: number;
  bwrap?: string;
  /** Control groups for the runs' limits; found at creation when not given, null for rlimits only. */
  cgroups?: Cgroups | null;
  /** Tests only: where the egress proxy resolves names to, and which addresses it counts as public. */
  egress?: Pick<EgressOptions, 'resolve' | 'isPublic'>;
  /** What starts the agents' processes: the spawner process this server's executors share when not given. */
  spawner?: Spawner;
  /** busybox, whose `nc` listens for the egress bridge: found where the sandbox sees it when not given; null: socat alone. */
  busybox?: string | null;
}

export function createLocalExecutor({ killGraceMs = KILL_GRACE_MS, bwrap = 'bwrap', cgroups: givenCgroups, egress: egressTesting, spawner = processSpawner(), busybox: givenBusybox, ...agent }: LocalExecutorOptions): Executor {
  const stateRoot = agent.stateDir ?? DEFAULT_AGENT_STATE_DIR;
  const sandboxed = agent.sandbox !== 'off';
  const limits = agent.limits ?? DEFAULT_LIMITS;
  const network = agent.network ?? 'public';
  // Probed until a sandbox could be made once (bubblewrap may be installed while the server runs); until
  // then every run fails, saying why.
  let problem: Promise<string | null> | undefined;
  const home = process.env.HOME ?? '/';
  const passed = Object.fromEntries((agent.env ?? []).flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]!]])));
  const uid = sandboxed ? sandboxUid(agent) : undefined;
  const cgroups = sandboxed ? (givenCgroups === undefined ? openCgroups() : givenCgroups) : null;
  // Looked for only where a bridge is made: finding it runs busybox once.
  const busybox = sandboxed && network !== 'none' ? (givenBusybox === undefined ? findBusybox() : givenBusybox) : null;
  const sessionStates = createLocalSessionStates({ root: stateRoot, sandboxed, uid });
  // What servers that are gone left behind: run folders, and their runs' control groups.
  sweepRunDirs();
  cgroups?.sweep();

  /** The sandboxed agent, its proxy and its control group; `limit` ends the run when one is hit. */
  async function sandbox(spec: RunSpec, events: ExecutionEvents, env: Record<string, string>, runDir: string, run: { command: string; binds: SandboxBind[] }, limit: (name: LimitName) => void) {
    const proxy =
      network === 'none'
        ? null
        : await openEgress(path.join(runDir, EGRESS_SOCKET), {
            policy: { mode: network, allow: agent.allow ?? [], narrowedTo: spec.network?.allow },
            onDenied: (denial) => events.sandbox('network_denied', { ...denial }),
            ...egressTesting,
          });
    let group: RunCgroup | null = null;
    let started: Awaited<ReturnType<typeof spawnSandbox>>;
    try {
      if (proxy) await chmod(path.join(runDir, EGRESS_SOCKET), 0o666);
      group = (await cgroups?.create(`flows-run-${spec.runId}`, limits)) ?? null;
      const joined = group;
      started = await spawnSandbox(
        spawner,
        bwrap,
        sandboxArgs({ runDir: proxy ? runDir : null, home, agent: { ...agent, binds: [...(agent.binds ?? []), ...run.binds] }, env: proxy ? { ...env, ...proxyEnv() } : env, limits, workspace: spec.workspace?.dir }),
        run.command,
        // bubblewrap itself gets only what finds it and marks its processes as the run's (`reap`).
        { PATH: env.PATH, FLOWS_RUN_ID: spec.runId },
        { uid, rlimits: joined ? [] : rlimitOptions(limits), beforeStart: joined ? (pid) => joined.attach(pid) : undefined, busybox },
      );
    } catch (err) {
      await group?.remove();
      await proxy?.close();
      throw err;
    }
    const watch =
      group &&
      setInterval(() => {
        const name = group.hit();
        if (name) limit(name);
      }, WATCH_MS);
    // A repository workspace is a folder of this server's, not a sized filesystem: its size is measured instead.
    let measuring = false;
    const measure =
      spec.workspace &&
      setInterval(() => {
        if (measuring) return;
        measuring = true;
        sizeOf(spec.workspace!.dir)
          .then((bytes) => bytes > limits.workspaceMb * 1024 * 1024 && limit('workspace'))
          .catch(() => {})
          .finally(() => (measuring = false));
      }, WORKSPACE_MEASURE_MS);
    return {
      ...started,
      /** The limit that ended the agent, read once it has exited; then the proxy closes and the group goes. */
      async release(): Promise<LimitName | null> {
        if (watch) clearInterval(watch);
        if (measure) clearInterval(measure);
        const hit = group?.hit() ?? null;
        await group?.kill();
        await group?.remove();
        await proxy?.close();
        return hit ?? ((started.full()[0] as LimitName | undefined) || null);
      },
    };
  }

  return {
    async start(spec: RunSpec, events: ExecutionEvents): Promise<Execution> {
      if (sandboxed) {
        const why = await (problem ??= sandboxProblem(agent, bwrap, spawner));
        if (why) {
          problem = undefined;
          return failedAtStart('local', `The local target runs agents in a sandbox, and ${why}: ${INSTALL_HINT}.`, 'setup');
        }
      }
      const run = await commandOf(spec, agent);
      if ('problem' in run) return failedAtStart('local', run.problem, 'setup');
      let state: OpenedState | null = null;
      if (run.kind && spec.session) {
        try {
          state = await sessionStates.open({ key: spec.session.key, tenantId: spec.tenantId, jobId: spec.session.jobId }, run.kind);
        } catch (err) {
          return failedAtStart('local', `The agent's state could not be kept in ${stateRoot} (FLOWS_AGENT_STATE_DIR): ${clip((err as Error).message)}`, 'setup');
        }
        Object.assign(run.env, state.env);
        run.binds.push(...state.binds);
      }
      // The sandbox's user (unprivileged when this server is root) must own the files it is to change.
      if (spec.workspace && uid !== undefined) {
        try {
          await chownTree(spec.workspace.dir, uid);
        } catch (err) {
          state?.release();
          return failedAtStart('local', `The repository workspace could not be set up: ${clip((err as Error).message)}`, 'infrastructure');
        }
      }
      // Unsandboxed, a session's runs share one working folder path (agents key their sessions by it), empty each
      // time; a repository workspace is where it was cloned.
      const dir = state && !sandboxed && !spec.workspace ? await emptyFolder(path.join(state.dir, 'workspace')) : await makeRunDir();
      const cwd = !sandboxed && spec.workspace ? spec.workspace.dir : dir;
      const env = {
        PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
        HOME: sandboxed ? home : (process.env.HOME ?? cwd),
        LANG: 'C.UTF-8',
        TMPDIR: sandboxed ? '/tmp' : dir,
        ...run.env,
        ...passed,
        ...spec.env,
        ...runVariables(spec),
      };
      let ending: 'timed_out' | 'canceled' | LimitName | null = null;
      let pid = 0;
      const end = (why: NonNullable<typeof ending>) => {
        if (ending) return;
        ending = why;
        if (why !== 'timed_out' && why !== 'canceled') events.sandbox('resource_limit', { limit: why, message: limitMessage(why, limits) });
        killGroup(pid, 'SIGTERM');
        setTimeout(() => killGroup(pid, 'SIGKILL'), why === 'timed_out' || why === 'canceled' ? killGraceMs : 0).unref();
      };
      let child: SpawnedProcess;
      let release: () => Promise<LimitName | null> = async () => null;
      try {
        if (sandboxed) ({ child, release } = await sandbox(spec, events, env, dir, run, end));
        else child = await spawner.spawn('/bin/sh', ['-c', run.command], { cwd, detached: true, env });
      } catch (err) {
        state?.release();
        await rm(dir, { recursive: true, force: true });
        return failedAtStart('local', `${sandboxed ? 'The sandbox could not be set up' : 'The agent command could not be started'}: ${clip((err as Error).message)}`, 'infrastructure');
      }
      pid = child.pid ?? 0;
      const timer = setTimeout(() => end('timed_out'), spec.timeoutSeconds * 1000);

      const output = agentOutput(events, { maxBytes: limits.outputMb * 1024 * 1024, onExcess: () => end('output'), ...outputBounds(run.kind !== null) });
      output.follow('stdout', child.stdout!);
      output.follow('stderr', child.stderr!);
      child.stdin!.on('error', () => {}); // an agent that does not read its prompt closes stdin early
      child.stdin!.end(spec.prompt);

      const done = new Promise<Outcome>((resolve) => {
        child.on('error', (err) => {
          const what = pid ? "The agent's process was lost" : 'The agent command could not be started';
          resolve({ state: 'failed', error: `${what}: ${clip(err.message)}`, cause: 'infrastructure' });
        });
        // The shell has exited: whatever it left running goes too. A sandbox stopped just after it was made
        // may have lost its link to bubblewrap (--die-with-parent is set a moment after the fork): found by its mark.
        child.on('exit', () => {
          killGroup(pid, 'SIGKILL');
          if (ending && sandboxed) void killMarked(spec.runId);
        });
        child.on('close', async (code, signal) => {
          clearTimeout(timer);
          const hit = await release();
          // Gone before the outcome is given: an unsandboxed session's next run empties and uses the same folder.
          await rm(dir, { recursive: true, force: true }).catch(() => {});
          state?.release();
          if (ending === 'timed_out') return resolve({ state: 'timed_out', error: `The agent was still running after ${spec.timeoutSeconds} seconds.` });
          if (ending === 'canceled') return resolve({ state: 'canceled', error: 'The run was stopped.' });
          if (ending) return resolve({ state: 'failed', error: limitMessage(ending, limits), cause: 'resource_limit' });
          if (code === 0) return resolve({ state: 'succeeded', result: resultOf(output.last.stdout) });
          if (hit) {
            events.sandbox('resource_limit', { limit: hit, message: limitMessage(hit, limits) });
            return resolve({ state: 'failed', error: limitMessage(hit, limits), cause: 'resource_limit' });
          }
          const why = code === null ? `was killed by ${signal}` : `exited with code ${code}`;
          resolve({ state: 'failed', error: `The agent ${why}${output.last.stderr ? `: ${clip(output.last.stderr)}` : '.'}`, cause: 'agent' });
        });
      });
      events.provisioning({ status: 'process_started', ...(run.kind && { agent: run.kind }), sandbox: sandboxed ? 'bubblewrap' : 'off', ...(sandboxed ? { network, limits: cgroups ? `cgroup v${cgroups.version}` : 'rlimits' } : {}) });
      return { ref: `local:${pid}`, done, stop: () => end('canceled') };
    },

    async reap(_ref: string, runId: string) {
      await killMarked(runId);
    },

    sessionStates,
    takesWorkspace: true,
  };
}
