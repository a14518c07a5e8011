// The local target's kept agent state: a folder per session under FLOWS_AGENT_STATE_DIR. Its `home` is what
// the agent sees (bound read-write at /agent-state in the sandbox); beside it, out of the agent's reach, the
// owner file says whose runs keep it, and its time when a run last used it. Unsandboxed, a session's runs
// also share its `workspace` folder, emptied each run: agents key their sessions by the working folder.
import { chown, mkdir, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { StreamKind } from '../agents/agent-events-fns';
import { agentStateFolders, agentStateVariables } from '../agents/agents-fns';
import type { SandboxBind } from '../config';
import { STATE_GRACE_MS, STATE_MOUNT, type SessionStates, type StateOwner } from './executor';

const OWNER = 'owner.json';
/** The names of the states' folders: anything else in the folder is not Flows' to remove. */
const STATE_KEY = /^sess_[\w-]{32}$/;

export interface OpenedState {
  /** The variables and bind that put the agent's state in the session's folder. */
  env: Record<string, string>;
  binds: SandboxBind[];
  /** The session's folder on this machine. */
  dir: string;
  /** The run is over: its state may be swept again. */
  release(): void;
}

export function createLocalSessionStates({ root, sandboxed, uid }: { root: string; sandboxed: boolean; uid: number | undefined }): SessionStates & {
  open(owner: StateOwner, kind: StreamKind): Promise<OpenedState>;
} {
  /** How many runs here use each state now: a state in use is never swept. */
  const inUse = new Map<string, number>();

  return {
    /** Makes the session's state when new (for the sandbox's user) and marks it used now. */
    async open({ key, tenantId, jobId }, kind) {
      await mkdir(root, { recursive: true, mode: 0o711 });
      const dir = path.join(root, key);
      const home = path.join(dir, 'home');
      // Passable (not readable) for the sandbox's user, who binds its `home` from here.
      await mkdir(dir, { recursive: true, mode: 0o711 });
      for (const folder of [home, ...agentStateFolders(kind, home)]) {
        await mkdir(folder, { recursive: true, mode: 0o700 });
        if (uid !== undefined) await chown(folder, uid, uid);
      }
      const ownerFile = path.join(dir, OWNER);
      await writeFile(ownerFile, JSON.stringify({ tenantId, jobId }));
      const now = new Date();
      await utimes(ownerFile, now, now);
      inUse.set(key, (inUse.get(key) ?? 0) + 1);
      let released = false;
      return {
        dir,
        env: agentStateVariables(kind, sandboxed ? STATE_MOUNT : home),
        binds: sandboxed ? [{ path: home, at: STATE_MOUNT, writable: true }] : [],
        release() {
          if (released) return;
          released = true;
          const left = (inUse.get(key) ?? 1) - 1;
          if (left > 0) inUse.set(key, left);
          else inUse.delete(key);
        },
      };
    },

    has: async (key) => (await stat(path.join(root, key, OWNER)).catch(() => null)) !== null,

    async sweep(used) {
      let removed = 0;
      for (const key of await readdir(root).catch(() => [] as string[])) {
        if (!STATE_KEY.test(key) || inUse.has(key)) continue;
        const dir = path.join(root, key);
        const owner = await readFile(path.join(dir, OWNER), 'utf8').then(
          (text) => JSON.parse(text) as Omit<StateOwner, 'key'>,
          () => null,
        );
        const since = (await stat(owner ? path.join(dir, OWNER) : dir).catch(() => null))?.mtimeMs;
        if (since === undefined || Date.now() - since < STATE_GRACE_MS) continue;
        if (owner && (await used({ key, tenantId: owner.tenantId, jobId: owner.jobId }))) continue;
        await rm(dir, { recursive: true, force: true });
        removed++;
      }
      return removed;
    },
  };
}
