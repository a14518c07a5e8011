// How much a folder holds, for the limits on what a run clones and leaves.
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';

/** The bytes of the files under `dir` (links not followed); 0 for a folder that is gone. */
export async function sizeOf(dir: string): Promise<number> {
  let total = 0;
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    total += (await stat(path.join(entry.parentPath, entry.name)).catch(() => ({ size: 0 }))).size;
  }
  return total;
}
