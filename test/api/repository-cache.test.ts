// The cache of repositories runs clone, against a real git server on loopback: one mirror per tenant and
// repository, used one run at a time (runs of one repository at once leave it sound), within its size (the
// mirrors used longest ago go; a repository larger than the cache is cloned without it), and never a way
// around the remote's own refusal.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cloneInto } from '../../src/repositories/git';
import { createMirrors } from '../../src/repositories/mirrors';
import { startFakeGithub, type FakeGithub } from '../support/fake-github';

let github: FakeGithub;
let root: string;
/** A token of the fake GitHub's installation 1 for every repository it reaches. */
let token: string;

beforeAll(async () => {
  github = await startFakeGithub();
  github.addRepository('acme/widgets', { 'README.md': 'Widgets\n' });
  github.addRepository('acme/gadgets', { 'README.md': 'Gadgets\n' });
  github.addRepository('acme/huge', { 'blob.bin': randomBytes(3 * 1024 * 1024).toString('base64') });
  root = await mkdtemp(path.join(tmpdir(), 'flows-cache-test-'));
  token = 'ghs_cache_test_token';
  github.tokens.set(token, { token, installationId: 1, repositories: ['acme/widgets', 'acme/gadgets', 'acme/huge'], permissions: { contents: 'read' }, revoked: false });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
  await github.close();
});

let clones = 0;
async function cloneWith(mirrors: ReturnType<typeof createMirrors>, repository: string, { tenant = 'ten_a', secret = token } = {}) {
  const dir = path.join(root, `run-${++clones}`);
  const remote = { url: `${github.url}/${repository}.git`, token: secret };
  const { value, cache } = await mirrors.through(tenant, remote, 'main', (source) =>
    cloneInto({ remote, source, branch: 'work', gitDir: path.join(dir, 'git'), workTree: path.join(dir, 'work'), maxBytes: 64 * 1024 * 1024 }),
  );
  return { commit: value, cache, work: path.join(dir, 'work') };
}
const mirrorsIn = async (dir: string) => (await readdir(dir).catch(() => [])).filter((name) => name.endsWith('.git'));

it('clones through a mirror: a miss, then hits, each run with the files at the remote\'s commit', async () => {
  const dir = path.join(root, 'cache-1');
  const mirrors = createMirrors({ dir, maxBytes: 16 * 1024 * 1024 });
  const first = await cloneWith(mirrors, 'acme/widgets');
  expect(first.cache).toBe('miss');
  expect(first.commit).toBe(github.branches('acme/widgets').main);
  expect(await readFile(path.join(first.work, 'README.md'), 'utf8')).toBe('Widgets\n');
  const second = await cloneWith(mirrors, 'acme/widgets');
  expect(second.cache).toBe('hit');
  expect(second.commit).toBe(first.commit);
  expect(await mirrorsIn(dir)).toHaveLength(1);
});

it('serves runs of one repository at once one after another, leaving the mirror sound', async () => {
  const dir = path.join(root, 'cache-2');
  const mirrors = createMirrors({ dir, maxBytes: 16 * 1024 * 1024 });
  const results = await Promise.all(Array.from({ length: 6 }, () => cloneWith(mirrors, 'acme/widgets')));
  expect(new Set(results.map((result) => result.commit))).toEqual(new Set([github.branches('acme/widgets').main]));
  expect(results.filter((result) => result.cache === 'miss')).toHaveLength(1);
  for (const result of results) expect(await readFile(path.join(result.work, 'README.md'), 'utf8')).toBe('Widgets\n');
  const [mirror] = await mirrorsIn(dir);
  expect(() => execFileSync('git', ['--git-dir', path.join(dir, mirror), 'fsck', '--no-progress'], { stdio: 'pipe' })).not.toThrow();
});

it('keeps within its size: the mirror used longest ago goes, and a repository larger than the cache is cloned without one', async () => {
  const dir = path.join(root, 'cache-3');
  // Room for one small mirror: the second pushes the first out.
  const mirrors = createMirrors({ dir, maxBytes: 40 * 1024 });
  await cloneWith(mirrors, 'acme/widgets');
  const widgets = await mirrorsIn(dir);
  await cloneWith(mirrors, 'acme/gadgets');
  const after = await mirrorsIn(dir);
  expect(after).toHaveLength(1);
  expect(after).not.toEqual(widgets);
  // Fetched through a mirror (or without one, when the fetch saw it grow too large), which is not kept.
  const huge = await cloneWith(mirrors, 'acme/huge');
  expect(['miss', 'off']).toContain(huge.cache);
  expect(huge.commit).toBe(github.branches('acme/huge').main);
  expect(await mirrorsIn(dir)).toEqual(after);
});

it('is no way around the remote: each tenant has its own mirror, and a token that may not read gets nothing from it', async () => {
  const dir = path.join(root, 'cache-4');
  const mirrors = createMirrors({ dir, maxBytes: 16 * 1024 * 1024 });
  await cloneWith(mirrors, 'acme/widgets', { tenant: 'ten_a' });
  await expect(cloneWith(mirrors, 'acme/widgets', { tenant: 'ten_a', secret: 'ghs_not_a_token' })).rejects.toThrow(/git fetch failed/);
  await cloneWith(mirrors, 'acme/widgets', { tenant: 'ten_b' });
  expect(await mirrorsIn(dir)).toHaveLength(2);
});
