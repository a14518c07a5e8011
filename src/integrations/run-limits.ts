// A sandboxed run's resource limits. Processes, memory and CPU time are held by a control group of the
// run's own where this server may make one (cgroup v2 delegated to it or as root, or v1's pids, memory and
// cpuacct hierarchies as root), which also tells which limit was hit; elsewhere by rlimits set on the
// sandbox (prlimit: processes per user, CPU seconds per process), which hold but cannot say that they did.
// The workspace and /tmp are size-limited filesystems of the sandbox's own (sandbox.ts), wherever it runs.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_LIMITS, type ResourceLimits } from '../lib/resource-limits';

export interface RunCgroup {
  /**
   * Puts a process (and what it starts from then on) in the group. Off the main thread: moving a process
   * between groups waits for the kernel's readers of every group to finish (an RCU grace period), which on a
   * busy machine takes milliseconds in which this server would answer nothing.
   */
  attach(pid: number): Promise<void>;
  /** The limit the group's processes ran into so far, or null. */
  hit(): 'processes' | 'memory' | 'cpu' | null;
  /** Kills every process in the group. */
  kill(): Promise<void>;
  /** Removes the group once its processes are gone; answers whether it could. */
  remove(): Promise<boolean>;
}

// Making, limiting and removing a group, like moving a process into one, hold the kernel's lock of every
// group, which a move keeps for an RCU grace period: done on the main thread, they would wait there for the
// moves of other runs. All of it goes through the thread pool; only reading a group's counters does not.
export interface Cgroups {
  version: 1 | 2;
  create(name: string, limits: ResourceLimits): Promise<RunCgroup>;
  /** Makes a group with a limit and removes it again, at once (at start): throws where that is not allowed. */
  probe(name: string): void;
  /** Removes the runs' groups that no process is left in (a server that crashed left them). */
  sweep(): void;
}

const MB = 1024 * 1024;
const ROOT = '/sys/fs/cgroup';

// A group's files are a few bytes the kernel makes up on reading: read at once, not through the thread pool,
// which costs many times more.
const write = (file: string, value: string | number) => writeFileSync(file, String(value));
const put = (file: string, value: string | number) => writeFile(file, String(value));
const read = (file: string) => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
};
/** `key value` lines of a cgroup file, as numbers. */
const counters = (file: string): Record<string, number> =>
  Object.fromEntries(read(file).split('\n').filter(Boolean).map((line) => line.split(' ')).map(([key, value]) => [key, Number(value)]));
const number = (file: string) => Number(read(file).trim() || 0);

/** This process's group in each hierarchy (`''` for v2's unified one), from /proc/self/cgroup. */
function ownGroups(): Map<string, string> {
  const groups = new Map<string, string>();
  for (const line of readFileSync('/proc/self/cgroup', 'utf8').split('\n').filter(Boolean)) {
    const [, controllers, group] = line.split(':');
    for (const controller of controllers.split(',')) groups.set(controller, group);
  }
  return groups;
}

function killAll(procsFile: string) {
  for (let round = 0; round < 20; round++) {
    const pids = read(procsFile).split('\n').filter(Boolean);
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  }
}

/** How old an empty group must be to be swept: a run of another server on this host may have just made its own. */
const SWEEP_AFTER_MS = 60_000;

/** Removes the empty `flows-run-*` groups under `bases` made over a minute ago; one with processes stays (rmdir refuses it). */
function sweepGroups(bases: string[]) {
  for (const base of bases) {
    for (const entry of readdirSync(base, { withFileTypes: true })) {
      const dir = path.join(base, entry.name);
      if (entry.isDirectory() && entry.name.startsWith('flows-run-') && statSync(dir).mtimeMs < Date.now() - SWEEP_AFTER_MS) removeDirs([dir]);
    }
  }
}

/** Removes run groups' folders at once: at start, before any run. */
const removeDirs = (dirs: string[]) =>
  dirs.every((dir) => {
    try {
      rmdirSync(dir);
      return true;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'ENOENT';
    }
  });

/** Removes a run's group folders; a folder already gone counts as removed. */
async function removeGroup(dirs: string[]): Promise<boolean> {
  const removed = await Promise.all(dirs.map((dir) => rmdir(dir).then(() => true, (err: NodeJS.ErrnoException) => err.code === 'ENOENT')));
  return removed.every(Boolean);
}

/**
 * cgroup v2: runs' groups beside a leaf this process moves into when its own group holds processes (a group
 * with processes cannot give its children controllers).
 */
function v2(): Cgroups | null {
  if (!existsSync(path.join(ROOT, 'cgroup.controllers'))) return null;
  const base = path.join(ROOT, ownGroups().get('') ?? '/');
  const enable = () => write(path.join(base, 'cgroup.subtree_control'), '+pids +memory');
  try {
    enable();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EBUSY') return null;
    const leaf = path.join(base, 'flows-server');
    mkdirSync(leaf, { recursive: true });
    for (const pid of readFileSync(path.join(base, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) write(path.join(leaf, 'cgroup.procs'), pid);
    enable();
  }
  return {
    version: 2,
    async create(name, limits) {
      const dir = path.join(base, name);
      await mkdir(dir, { recursive: true }); // left by a crash, it is taken over
      await put(path.join(dir, 'pids.max'), limits.pids);
      await put(path.join(dir, 'memory.max'), limits.memoryMb * MB);
      if (existsSync(path.join(dir, 'memory.swap.max'))) await put(path.join(dir, 'memory.swap.max'), 0);
      return {
        attach: (pid) => put(path.join(dir, 'cgroup.procs'), pid),
        hit() {
          if ((counters(path.join(dir, 'pids.events')).max ?? 0) > 0) return 'processes';
          if ((counters(path.join(dir, 'memory.events')).oom_kill ?? 0) > 0) return 'memory';
          if ((counters(path.join(dir, 'cpu.stat')).usage_usec ?? 0) > limits.cpuSeconds * 1e6) return 'cpu';
          return null;
        },
        async kill() {
          try {
            await put(path.join(dir, 'cgroup.kill'), 1);
          } catch {
            killAll(path.join(dir, 'cgroup.procs')); // before Linux 5.14
          }
        },
        remove: () => removeGroup([dir]),
      };
    },
    probe(name) {
      const dir = path.join(base, name);
      mkdirSync(dir, { recursive: true });
      write(path.join(dir, 'pids.max'), DEFAULT_LIMITS.pids);
      removeDirs([dir]);
    },
    sweep: () => sweepGroups([base]),
  };
}

/** cgroup v1: a group in each of the pids, memory and cpuacct hierarchies, under this process's own. */
function v1(): Cgroups | null {
  const own = ownGroups();
  const mount = (controller: string) => [controller, `cpu,${controller}`, `${controller},cpu`].map((dir) => path.join(ROOT, dir)).find((dir) => existsSync(path.join(dir, 'cgroup.procs')));
  const [pids, memory, cpuacct] = ['pids', 'memory', 'cpuacct'].map((controller) => {
    const dir = mount(controller);
    return dir && path.join(dir, own.get(controller) ?? '/');
  });
  if (!pids || !memory || !cpuacct) return null;
  return {
    version: 1,
    async create(name, limits) {
      const dirs = [pids, memory, cpuacct].map((base) => path.join(base, name));
      const [pidsDir, memoryDir, cpuDir] = dirs;
      await Promise.all(dirs.map((dir) => mkdir(dir, { recursive: true })));
      await put(path.join(pidsDir, 'pids.max'), limits.pids);
      await put(path.join(memoryDir, 'memory.limit_in_bytes'), limits.memoryMb * MB);
      // Swap counts too where the kernel accounts it.
      if (existsSync(path.join(memoryDir, 'memory.memsw.limit_in_bytes'))) await put(path.join(memoryDir, 'memory.memsw.limit_in_bytes'), limits.memoryMb * MB);
      return {
        attach: async (pid) => void (await Promise.all(dirs.map((dir) => put(path.join(dir, 'cgroup.procs'), pid)))),
        hit() {
          if ((counters(path.join(pidsDir, 'pids.events')).max ?? 0) > 0) return 'processes';
          if ((counters(path.join(memoryDir, 'memory.oom_control')).oom_kill ?? 0) > 0) return 'memory';
          if (number(path.join(cpuDir, 'cpuacct.usage')) > limits.cpuSeconds * 1e9) return 'cpu';
          return null;
        },
        kill: async () => killAll(path.join(pidsDir, 'cgroup.procs')),
        remove: () => removeGroup(dirs),
      };
    },
    probe(name) {
      const dirs = [pids, memory, cpuacct].map((base) => path.join(base, name));
      dirs.forEach((dir) => mkdirSync(dir, { recursive: true }));
      write(path.join(dirs[1], 'memory.limit_in_bytes'), DEFAULT_LIMITS.memoryMb * MB);
      removeDirs(dirs);
    },
    sweep: () => sweepGroups([pids, memory, cpuacct]),
  };
}

/** The control groups this server may make for its runs, tried once with a group made and removed; or null. */
export function openCgroups(): Cgroups | null {
  for (const open of [v2, v1]) {
    try {
      const cgroups = open();
      if (!cgroups) continue;
      cgroups.probe(`flows-probe-${process.pid}`);
      return cgroups;
    } catch {
      // not this one: read-only, not delegated, or a controller missing
    }
  }
  return null;
}

/** The rlimits that stand in for a group where there is none, as prlimit options. */
export const rlimitOptions = (limits: ResourceLimits) => [`--nproc=${limits.pids}`, `--cpu=${limits.cpuSeconds}`];
