// Starts the local agents' processes from a small resident process (spawner-process.ts) instead of this
// one. libuv forks the calling process and waits for the exec: from a server of 150 MB or more that blocks
// the event loop for milliseconds per run (3.8 ms in a profile of the server under load); the spawner, a
// Node process that loads none of the app (about 45 MB), forks itself instead, and this process only
// writes a request and reads the answers. The spawner starts at the first spawn, again after it died,
// and ends when it has had no child for `idleMs`, when `close()` is called, or when this process ends (it
// reads the end of its socket). A spawned process looks like a ChildProcess to its user: a real pid (in a
// process group of its own when `detached`, signalled directly with process.kill(-pid)), streams for its
// descriptors, and 'error', 'exit' and 'close' events in Node's order, each after the output read before it.
import { spawn as spawnProcess, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { extname, join, resolve } from 'node:path';
import { RemoteProcess, type SpawnedProcess } from './spawned-process';
import { encodeFrame, frameReader, type Report, type Request, type SpawnRequest, type StdioKind } from './spawner-protocol';

export type { SpawnedProcess } from './spawned-process';
export type { StdioKind } from './spawner-protocol';

export type SpawnOptions = Omit<SpawnRequest, 'file' | 'args' | 'stdio'> & {
  /** From descriptor 0 on; `in`, `out`, `out` when not given. */
  stdio?: StdioKind[];
};

export interface Spawner {
  /**
   * Resolves once the process exists (or could not be started: no pid, an 'error' event next, as Node
   * reports ENOENT or EACCES); rejects when it was refused outright or the spawner ended before answering.
   */
  spawn(file: string, args: string[], options: SpawnOptions): Promise<SpawnedProcess>;
  /** The spawner process's id while it runs, or null (tests, the bench). */
  pid(): number | null;
  /** Ends the spawner; processes it still watched fail as lost. */
  close(): Promise<void>;
}

/** No child for this long, and the spawner ends (its restart costs one fork of this process and a Node start). */
const IDLE_MS = 30_000;
/** The spawner holds little: a request and the output the server has not read yet (bounded in spawner-process.ts). */
const HEAP_MB = 32;
/**
 * One V8 worker thread instead of four: where limits are rlimits, every thread of this server's user counts
 * against a run's process limit, and the spawner's work is too small to compile or collect in the background.
 */
const NODE_FLAGS = ['--v8-pool-size=1'];

// Built, this module is dist/src/integrations/spawner.js and the spawner's file is compiled beside it. Run
// from the sources (tests), it is a .ts file: the spawner first registers the swc hook the test suite's
// child processes use, as the render pool's workers do (src/jobs/render-pool.ts).
const SOURCES_ARE_TS = extname(__filename) === '.ts';
const SPAWNER_FILE = join(__dirname, `spawner-process${extname(__filename)}`);
const HOOK = SOURCES_ARE_TS ? ['-r', resolve(__dirname, '../../test/support/register-ts.js')] : [];

/** Today's way, child_process in this process: for a start-up check, before any run needs a spawner. */
export const directSpawner: Spawner = {
  async spawn(file, args, { stdio = ['in', 'out', 'out'], ...options }) {
    return spawnProcess(file, args, { ...options, stdio: stdio.map((kind) => (kind === 'ignore' ? 'ignore' : 'pipe')) });
  },
  pid: () => null,
  close: async () => {},
};

interface Instance {
  child: ChildProcess;
  channel: Socket;
  processes: Map<number, RemoteProcess>;
}

export function createSpawner({ idleMs = IDLE_MS, heapMb = HEAP_MB }: { idleMs?: number; heapMb?: number } = {}): Spawner {
  let current: Instance | null = null;
  let nextId = 1;
  let idle: NodeJS.Timeout | undefined;

  function open(): Instance {
    const child = spawnProcess(process.execPath, [...NODE_FLAGS, `--max-old-space-size=${heapMb}`, ...HOOK, SPAWNER_FILE], {
      stdio: ['ignore', 'ignore', 'inherit', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    const instance: Instance = { child, channel: child.stdio[3] as Socket, processes: new Map() };
    instance.channel.on('error', () => {}); // its end is the child's close
    instance.channel.on(
      'data',
      frameReader<Report>((report, payload) => {
        const remote = instance.processes.get(report.id);
        if (remote?.take(report, payload)) {
          instance.processes.delete(report.id);
          keepAlive(instance);
        }
      }),
    );
    child.on('error', () => {}); // Node itself could not be started: 'close' follows
    // After the socket's last frames: what the spawner reported before it ended is taken first.
    child.on('close', (code, signal) => {
      if (current === instance) current = null;
      const why = signal ? `signal ${signal}` : `exit code ${code}`;
      for (const remote of instance.processes.values()) remote.lost(why);
      instance.processes.clear();
    });
    return instance;
  }

  /** While processes are watched the spawner keeps this process alive; idle, it ends after a while. */
  function keepAlive(instance: Instance) {
    const busy = instance.processes.size > 0;
    for (const handle of [instance.child, instance.channel]) {
      if (busy) handle.ref();
      else handle.unref();
    }
    if (instance !== current) return;
    clearTimeout(idle);
    if (busy) return;
    idle = setTimeout(() => {
      if (current !== instance || instance.processes.size) return;
      current = null;
      instance.channel.end();
    }, idleMs).unref();
  }

  const send = (instance: Instance) => (request: Request, payload?: Buffer) => {
    if (instance.channel.writable) instance.channel.write(encodeFrame(request, payload));
  };

  return {
    spawn(file, args, { stdio = ['in', 'out', 'out'], ...options }) {
      const instance = (current ??= open());
      const id = nextId++;
      return new Promise<SpawnedProcess>((resolve, reject) => {
        instance.processes.set(id, new RemoteProcess(id, stdio, options.detached ?? false, send(instance), { resolve, reject }));
        keepAlive(instance);
        send(instance)({ t: 'spawn', id, file, args, ...options, stdio });
      });
    },

    pid: () => current?.child.pid ?? null,

    async close() {
      const instance = current;
      current = null;
      clearTimeout(idle);
      if (!instance || instance.child.exitCode !== null || instance.child.signalCode !== null) return;
      await new Promise((done) => {
        instance.child.once('close', done).ref();
        instance.channel.end();
      });
    },
  };
}

let shared: Spawner | undefined;

/**
 * The spawner of this process's executors, made at the first call: one process serves them all, and a
 * second would only cost another fork of this server and another Node's threads.
 */
export const processSpawner = (): Spawner => (shared ??= createSpawner());
