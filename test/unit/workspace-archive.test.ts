// A workspace read back from a container is untrusted: its archive writes nothing outside its folder, nothing
// through a link it made, and no more than its limit.
import { lstat, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pack } from 'tar-stream';
import { archiveOf, ArchiveRefused, extractInto } from '../../src/integrations/workspace-archive';

type Entry = { name: string; type?: 'file' | 'directory' | 'symlink' | 'link'; linkname?: string; body?: string };

function tarOf(entries: Entry[]): Readable {
  const archive = pack();
  for (const { body, ...header } of entries) archive.entry({ type: 'file', ...header }, body ?? '');
  archive.finalize();
  return archive;
}

let root: string;
beforeEach(async () => (root = await mkdtemp(path.join(tmpdir(), 'flows-archive-'))));
afterEach(() => rm(root, { recursive: true, force: true }));

it('round-trips a work tree: files, folders, links, executables', async () => {
  const from = path.join(root, 'from');
  await extractInto(tarOf([{ name: 'x/', type: 'directory' }, { name: 'x/a.txt', body: 'a' }, { name: 'x/sub/b.sh', body: 'echo', mode: 0o755 } as Entry, { name: 'x/l', type: 'symlink', linkname: 'a.txt' }]), from, 1024);
  const back = path.join(root, 'back');
  await extractInto(archiveOf(from, 'repo', 1000), back, 1024);
  expect((await readdir(back)).sort()).toEqual(['a.txt', 'l', 'sub']);
  expect(await readFile(path.join(back, 'sub/b.sh'), 'utf8')).toBe('echo');
  expect((await lstat(path.join(back, 'sub/b.sh'))).mode & 0o111).not.toBe(0);
  expect((await lstat(path.join(back, 'l'))).isSymbolicLink()).toBe(true);
});

it('refuses a path outside the folder', async () => {
  await expect(extractInto(tarOf([{ name: 'x/../../escaped', body: 'no' }]), path.join(root, 'ws'), 1024)).rejects.toThrow(ArchiveRefused);
  await expect(lstat(path.join(root, 'escaped'))).rejects.toThrow();
});

it('never writes through a link the archive made', async () => {
  const outside = path.join(root, 'outside');
  await writeFile(outside, 'kept');
  const entries: Entry[] = [
    { name: 'x/evil', type: 'symlink', linkname: root },
    { name: 'x/evil/outside', body: 'overwritten' },
  ];
  await expect(extractInto(tarOf(entries), path.join(root, 'ws'), 1024)).rejects.toThrow('beneath a link');
  expect(await readFile(outside, 'utf8')).toBe('kept');
  // A file of a link's own name is not written through it either.
  const same: Entry[] = [
    { name: 'x/f', type: 'symlink', linkname: outside },
    { name: 'x/f', body: 'overwritten' },
  ];
  await expect(extractInto(tarOf(same), path.join(root, 'ws2'), 1024)).rejects.toThrow();
  expect(await readFile(outside, 'utf8')).toBe('kept');
});

it('stops at its size', async () => {
  await expect(extractInto(tarOf([{ name: 'x/a', body: 'a'.repeat(600) }, { name: 'x/b', body: 'b'.repeat(600) }]), path.join(root, 'ws'), 1000)).rejects.toThrow('larger than');
});
