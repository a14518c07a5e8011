// A cache of the repositories runs clone: a bare mirror per tenant and repository on this server. Before a
// run's clone, its ref is fetched into the mirror (with the run's own token: only what changed since the
// last run crosses the network, and a token that may not read the repository fetches nothing), and the run
// then fetches from the mirror on this machine. One run at a time uses a mirror; the cache stays within its
// size by removing a mirror that cannot fit, then the mirrors used longest ago; a mirror that fails is removed
// and the run clones as if there were none.
import { mkdir, readdir, rm, utimes, stat } from 'node:fs/promises';
import path from 'node:path';
import { sha256 } from '../lib/hash';
import { sizeOf } from '../lib/folder-size';
import { git, type Remote } from './git';

/** Where a run fetches its ref from: the remote itself, or a mirror on this machine. */
export interface CloneSource {
  url: string;
  ref: string;
  /** Whether it is a mirror on this machine (fetched without credentials, over the file protocol). */
  local: boolean;
}

export interface Mirrors {
  /** Runs `clone` with a source for `ref` of `remote`: the tenant's mirror, or the remote when the cache cannot serve. */
  through<T>(tenantId: string, remote: Remote, ref: string, clone: (source: CloneSource) => Promise<T>): Promise<{ value: T; cache: 'hit' | 'miss' | 'off' }>;
}

/** No cache: every run fetches from the remote. */
export const NO_MIRRORS: Mirrors = {
  through: async (_tenantId, remote, ref, clone) => ({ value: await clone({ url: remote.url, ref, local: false }), cache: 'off' }),
};

const HEAD = 'refs/flows/head';

export function createMirrors({ dir, maxBytes, timeoutMs = 300_000 }: { dir: string; maxBytes: number; timeoutMs?: number }): Mirrors {
  /** Each mirror's queue: one run at a time fetches into it and from it. */
  const queues = new Map<string, Promise<unknown>>();
  const inUse = new Set<string>();

  const exclusive = <T>(mirror: string, work: () => Promise<T>): Promise<T> => {
    const before = queues.get(mirror) ?? Promise.resolve();
    const done = before.catch(() => {}).then(work);
    const settled = done.catch(() => {});
    queues.set(mirror, settled);
    void settled.then(() => queues.get(mirror) === settled && queues.delete(mirror));
    return done;
  };

  /** Removes the mirrors used longest ago, but those in use, until the cache holds no more than its size. */
  async function prune() {
    const mirrors = await Promise.all(
      (await readdir(dir).catch(() => [] as string[]))
        .filter((name) => name.endsWith('.git'))
        .map(async (name) => {
          const at = path.join(dir, name);
          return { at, used: (await stat(at).catch(() => null))?.mtimeMs ?? 0, size: await sizeOf(at) };
        }),
    );
    let total = mirrors.reduce((sum, mirror) => sum + mirror.size, 0);
    // One that could never fit goes first, whenever it was used; then the ones used longest ago.
    const order = (mirror: { used: number; size: number }) => (mirror.size > maxBytes ? -Infinity : mirror.used);
    for (const mirror of mirrors.sort((a, b) => order(a) - order(b))) {
      if (total <= maxBytes) break;
      if (inUse.has(mirror.at)) continue;
      await rm(mirror.at, { recursive: true, force: true });
      total -= mirror.size;
    }
  }

  return {
    async through(tenantId, remote, ref, clone) {
      const mirror = path.join(dir, `${sha256(`${tenantId}\0${remote.url}`).slice(0, 32)}.git`);
      let fetched = false;
      let existed = false;
      const result = await exclusive(mirror, async () => {
        inUse.add(mirror);
        try {
          existed = await stat(mirror).then(
            () => true,
            () => false,
          );
          if (!existed) {
            await mkdir(dir, { recursive: true });
            await git(['init', '-q', '--bare', mirror]);
          }
          await git(['fetch', '-q', '--depth=1', '--no-tags', remote.url, `+${ref}:${HEAD}`], {
            gitDir: mirror,
            remote,
            timeoutMs,
            watch: async () => ((await sizeOf(path.join(mirror, 'objects'))) > maxBytes ? 'the repository is larger than the cache may hold' : null),
          });
          fetched = true;
          const now = new Date();
          await utimes(mirror, now, now);
          return { value: await clone({ url: `file://${mirror}`, ref: HEAD, local: true }) };
        } catch (err) {
          // A clone from the mirror that failed, or a fetch into a new one: not trusted again. A fetch into a
          // mirror that was there fails as the remote refused it, or the mirror is broken: the remote decides below.
          if (fetched || !existed) await rm(mirror, { recursive: true, force: true });
          if (fetched) throw err;
          return null;
        } finally {
          inUse.delete(mirror);
        }
      });
      await prune().catch(() => {});
      if (result) return { value: result.value, cache: existed ? 'hit' : 'miss' };
      const value = await clone({ url: remote.url, ref, local: false });
      // The remote gave what the mirror could not fetch: the mirror was broken.
      if (existed) await exclusive(mirror, () => rm(mirror, { recursive: true, force: true }));
      return { value, cache: 'off' };
    },
  };
}
