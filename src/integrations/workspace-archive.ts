// A repository workspace on its way into a container and back, as tar (what Docker's archive API speaks).
// In: the work tree, owned by the agent's user. Back: what the agent left, which is untrusted: only folders,
// regular files and symbolic links are written (a link is written as a link, never followed), nothing outside
// the folder, nothing beneath a link the archive made, and no more than a bounded size.
import { createReadStream } from 'node:fs';
import { lstat, mkdir, readdir, readlink, rm, symlink } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { extract, pack, type Headers } from 'tar-stream';

/** A tar of `dir` as the folder `folder`, everything owned by `uid`. */
export function archiveOf(dir: string, folder: string, uid: number): Readable {
  const archive = pack();
  archive.entry({ name: `${folder}/`, type: 'directory', mode: 0o755, uid, gid: uid });
  const add = async (relative: string) => {
    for (const entry of await readdir(path.join(dir, relative), { withFileTypes: true })) {
      const name = relative ? `${relative}/${entry.name}` : entry.name;
      const full = path.join(dir, name);
      const stat = await lstat(full);
      const owner = { uid, gid: uid, mtime: stat.mtime };
      const inFolder = `${folder}/${name}`;
      if (entry.isSymbolicLink()) archive.entry({ name: inFolder, type: 'symlink', linkname: await readlink(full), ...owner });
      else if (entry.isDirectory()) {
        archive.entry({ name: `${inFolder}/`, type: 'directory', mode: 0o755, ...owner });
        await add(name);
      } else if (entry.isFile()) {
        await new Promise<void>((resolve, reject) => {
          const sink = archive.entry({ name: inFolder, type: 'file', size: stat.size, mode: stat.mode & 0o111 ? 0o755 : 0o644, ...owner }, (err) => (err ? reject(err) : resolve()));
          createReadStream(full).on('error', reject).pipe(sink);
        });
      }
    }
  };
  add('').then(
    () => archive.finalize(),
    (err) => archive.destroy(err),
  );
  return archive;
}

/** An archive that would write outside its folder or beyond its size. */
export class ArchiveRefused extends Error {}

/**
 * Writes `archive` into `dir`, emptied first; the first folder of every name (the one Docker puts the
 * contents under) is dropped. Throws ArchiveRefused beyond `maxBytes` of files.
 */
export async function extractInto(archive: Readable, dir: string, maxBytes: number): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const links = new Set<string>();
  let bytes = 0;
  const reader = extract();
  reader.on('entry', (header: Headers, body, next) => {
    write(header, body).then(
      () => next(),
      (err) => next(err),
    );
  });
  const write = async (header: Headers, body: Readable) => {
    const name = path.posix.normalize(header.name.split('/').slice(1).join('/')).replace(/\/+$/, '');
    const unsafe = !name || name === '.' || name.startsWith('../') || name === '..' || path.posix.isAbsolute(name);
    const parts = name.split('/');
    const underLink = parts.some((_, i) => links.has(parts.slice(0, i).join('/')));
    const target = path.join(dir, name);
    if (unsafe || underLink) {
      body.resume();
      if (unsafe && name && name !== '.') throw new ArchiveRefused(`the workspace holds a path outside itself (${name.slice(0, 100)})`);
      if (underLink) throw new ArchiveRefused(`the workspace holds a path beneath a link (${name.slice(0, 100)})`);
      return;
    }
    if (header.type === 'directory') await mkdir(target, { recursive: true });
    else if (header.type === 'symlink' && header.linkname) {
      await mkdir(path.dirname(target), { recursive: true });
      await symlink(header.linkname, target);
      links.add(name);
    } else if (header.type === 'file') {
      bytes += header.size ?? 0;
      if (bytes > maxBytes) {
        body.resume();
        throw new ArchiveRefused(`the workspace is larger than ${Math.round(maxBytes / 1024 / 1024)} MB`);
      }
      await mkdir(path.dirname(target), { recursive: true });
      // `wx`: never through something already there (a link of the same name).
      await pipeline(body, createWriteStream(target, { flags: 'wx', mode: (header.mode ?? 0o644) & 0o111 ? 0o755 : 0o644 }));
      return;
    }
    body.resume();
  };
  await pipeline(archive, reader);
}
