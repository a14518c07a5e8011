// A real Docker daemon and a test image for the Docker executor's tests, with no registry: the daemon is
// started when it does not answer, and the image is made from the host's static busybox (an applet link
// for every command, a user 1000) by `docker import`. Safe to call from test files running side by side.
// And what the egress network's tests probe for: services of the host, a stand-in for the cloud metadata
// service, plain containers to compare with, and the firewall's rules of the runs.
import type Dockerode from 'dockerode';
import { execFile, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { chmod, copyFile, cp, mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { networkInterfaces, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const TEST_IMAGE = 'flows-test/busybox:1';
/** Where a daemon started here writes its output. */
export const DOCKERD_LOG = path.join(tmpdir(), 'flows-test-dockerd.log');

const BUSYBOX = '/usr/bin/busybox';

const answers = () =>
  run('docker', ['info', '--format', '{{.ServerVersion}}']).then(
    () => true,
    () => false,
  );

/** Starts dockerd (as root, in the background) unless a daemon already answers, and waits for it. */
export async function ensureDockerd(waitMs = 30_000) {
  if (await answers()) return;
  if (process.getuid?.() !== 0) throw new Error('The Docker daemon does not answer, and only root can start one here.');
  const log = openSync(DOCKERD_LOG, 'a');
  // A daemon started by a test file running beside this one makes this one fail to start: harmless.
  spawn('dockerd', [], { detached: true, stdio: ['ignore', log, log] }).unref();
  closeSync(log);
  for (const deadline = Date.now() + waitMs; Date.now() < deadline; await sleep(250)) {
    if (await answers()) return;
  }
  throw new Error(`The Docker daemon did not answer within ${waitMs / 1000} s (see ${DOCKERD_LOG}).`);
}

const imageId = (image: string) =>
  run('docker', ['image', 'inspect', '--format', '{{.Id}}', image]).then(
    ({ stdout }) => stdout.trim(),
    () => null,
  );

/**
 * Makes TEST_IMAGE unless it exists: busybox with every applet in /bin, a user 1000, `/bin/sh` as its
 * entrypoint (so that a run without a command proves the image's own entrypoint runs) and a declared
 * volume, as many real images have (so that tests see it never becomes a volume on the host).
 */
export const ensureTestImage = () => ensureImage(TEST_IMAGE, async () => {}, ['ENTRYPOINT ["/bin/sh"]', 'ENV PATH=/bin', 'VOLUME ["/data"]']);

const FAKE_CLIS = path.resolve(__dirname, 'fake-agent-clis');
const AGENT_FIXTURES = path.resolve(__dirname, '../fixtures/agents');

/**
 * Makes an image of agents unless it exists, and answers its name: TEST_IMAGE's busybox with this machine's
 * node (and the libraries it links) and the fake gemini, opencode and cursor-agent CLIs with their recorded
 * streams on its PATH. Its tag is a hash of those files: a changed CLI makes a new image.
 */
export async function ensureAgentTestImage(): Promise<string> {
  const node = await realpath(process.execPath);
  const files = async (dir: string) => (await readdir(dir)).sort().map((name) => path.join(dir, name));
  const sources = [node, ...(await files(FAKE_CLIS)), ...(await files(AGENT_FIXTURES))];
  const hash = createHash('sha256');
  for (const file of sources) hash.update(path.basename(file)).update(await readFile(file));
  const image = `flows-test/agents:${hash.digest('hex').slice(0, 12)}`;
  const inImage = '/opt/flows-test/support/fake-agent-clis';
  return ensureImage(
    image,
    async (root) => {
      const { stdout } = await run('ldd', [node]);
      const libraries = [...stdout.matchAll(/(\/\S+) \(0x/g)].map((match) => match[1]);
      for (const file of [node, ...libraries]) {
        const to = path.join(root, file === node ? '/usr/bin/node' : file);
        await mkdir(path.dirname(to), { recursive: true });
        await copyFile(await realpath(file), to);
        await chmod(to, 0o755);
      }
      await symlink('/bin/busybox', path.join(root, 'usr/bin/env'));
      await cp(FAKE_CLIS, path.join(root, inImage), { recursive: true });
      await cp(AGENT_FIXTURES, path.join(root, '/opt/flows-test/fixtures/agents'), { recursive: true });
    },
    ['ENTRYPOINT ["/bin/sh"]', `ENV PATH=${inImage}:/usr/bin:/bin`],
  );
}

/** Makes `image` unless it exists: the busybox root, what `fill` adds to it, and the image settings `changes`. */
async function ensureImage(image: string, fill: (root: string) => Promise<void>, changes: string[]) {
  if (await imageId(image)) return image;
  // Test files running side by side would each import a copy, leaving all but one untagged.
  await holding(path.join(tmpdir(), 'flows-test-image.lock'), async () => {
    if (!(await imageId(image))) await importImage(image, fill, changes);
  });
  return image;
}

async function importImage(image: string, fill: (root: string) => Promise<void>, changes: string[]) {
  const root = await mkdtemp(path.join(tmpdir(), 'flows-test-rootfs-'));
  const tarball = `${root}.tar`;
  try {
    for (const dir of ['bin', 'etc', 'tmp', 'data', 'proc', 'sys', 'dev', 'usr/bin']) await mkdir(path.join(root, dir), { recursive: true });
    // As in real images; a tmpfs mounted on a directory takes its mode.
    await chmod(path.join(root, 'tmp'), 0o1777);
    await copyFile(BUSYBOX, path.join(root, 'bin/busybox'));
    const { stdout } = await run(BUSYBOX, ['--list']);
    for (const applet of stdout.split('\n').filter((name) => name && name !== 'busybox')) await symlink('busybox', path.join(root, 'bin', applet));
    await writeFile(path.join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\nagent:x:1000:1000:agent:/workspace:/bin/sh\n');
    await writeFile(path.join(root, 'etc/group'), 'root:x:0:\nagent:x:1000:\n');
    await fill(root);
    await run('tar', ['-C', root, '-cf', tarball, '.']);
    await run('docker', ['import', ...changes.flatMap((change) => ['--change', change]), tarball, image]);
  } finally {
    await rm(root, { recursive: true, force: true });
    await rm(tarball, { force: true });
  }
}

/** Runs `work` while holding the lock `file` (it holds the holder's pid); a lock whose holder died is taken over. */
async function holding(file: string, work: () => Promise<void>) {
  for (;;) {
    try {
      await writeFile(file, `${process.pid}`, { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = Number(await readFile(file, 'utf8').catch(() => ''));
    if (holder && !alive(holder)) await rm(file, { force: true });
    else await sleep(100);
  }
  try {
    await work();
  } finally {
    await rm(file, { force: true });
  }
}

function alive(pid: number) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An HTTP server answering `body` to everything, on `host` (port 0: a free one); `close` ends it. */
export async function httpStandIn(host: string, body: string, port = 0) {
  const server = http.createServer((_req, res) => res.end(`${body}\n`));
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** This machine's first IPv4 address that is not loopback (its LAN address): a service there is the host's too. */
export function lanAddress(): string {
  const found = Object.values(networkInterfaces())
    .flat()
    .find((entry) => entry && entry.family === 'IPv4' && !entry.internal);
  if (!found) throw new Error('This machine has no IPv4 address but loopback.');
  return found.address;
}

const METADATA_LINK = 'flows-md-test';

/**
 * A stand-in for a cloud's metadata service, as a container whose traffic reaches the host would meet it:
 * 169.254.169.254 on an interface of this machine (a bridge of its own, made here and removed by `close`;
 * root only) with an HTTP server on port 80 answering `metadata`. One test file at a time uses it.
 */
export async function metadataStandIn() {
  const ip = (...args: string[]) => run('ip', args);
  await ip('link', 'del', METADATA_LINK).catch(() => {}); // left by a test run that was killed
  await ip('link', 'add', METADATA_LINK, 'type', 'bridge');
  try {
    await ip('addr', 'add', '169.254.169.254/32', 'dev', METADATA_LINK);
    await ip('link', 'set', METADATA_LINK, 'up');
    const server = await httpStandIn('169.254.169.254', 'metadata', 80);
    return {
      close: async () => {
        await server.close();
        await ip('link', 'del', METADATA_LINK);
      },
    };
  } catch (err) {
    await ip('link', 'del', METADATA_LINK).catch(() => {});
    throw err;
  }
}

/** Runs `script` by /bin/sh in a plain container of TEST_IMAGE (no hardening of Flows's) on `network`; answers its output lines. */
export async function runPlain(docker: Dockerode, network: string, script: string): Promise<string[]> {
  const container = await docker.createContainer({ Image: TEST_IMAGE, Cmd: ['-c', script], HostConfig: { NetworkMode: network } });
  try {
    await container.start();
    await container.wait();
    const logs = await container.logs({ stdout: true, stderr: true });
    // The log stream's frames: 8 bytes of header, then the text.
    const lines: string[] = [];
    for (let at = 0; at + 8 <= logs.length; at += 8 + logs.readUInt32BE(at + 4)) lines.push(logs.subarray(at + 8, at + 8 + logs.readUInt32BE(at + 4)).toString());
    return lines.join('').split('\n').filter(Boolean);
  } finally {
    await container.remove({ force: true });
  }
}

/** The runs' rules in the egress network's firewall chain, as `iptables -S` prints them. */
export async function egressRules(): Promise<string[]> {
  const { stdout } = await run('iptables', ['-w', '-S', 'FLOWS-EGRESS']).catch(() => ({ stdout: '' }));
  return stdout.split('\n').filter((line) => line.includes('flows-run:'));
}
