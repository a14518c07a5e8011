// The local agent's sandbox, with bubblewrap: a prompt is untrusted, so the agent sees its own workspace
// (read-write, at /workspace), the system (/usr and /etc read-only, without the files that hold the
// machine's credentials), a private /tmp and HOME, and what the operator binds in (FLOWS_LOCAL_AGENT_BIND);
// a run with a repository workspace works in the folder it was cloned into instead (bound at /workspace);
// not the project, the data directory, other runs' workspaces or the server's environment. It is never root:
// uid 1000 in a user namespace of its own, every capability dropped, no new privileges, no further user
// namespaces (so no mounts: a read-only bind stays read-only), and when this server runs as root, bubblewrap
// itself runs as an unprivileged user (FLOWS_LOCAL_AGENT_UID), so that even a way out of the namespaces
// leads nowhere privileged. Its network namespace is its own too: the only way out is the run's egress proxy,
// offered on the sandbox's loopback by a bridge (busybox's nc and socat) to the proxy's socket at /run/flows.
// The workspace and /tmp are size-limited filesystems; the wrapper reports on descriptor 4 which of them was
// full when the agent ended.
import { spawnSync } from 'node:child_process';
import { lstatSync, readdirSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { LocalAgent } from '../config';
import { proxyVariables } from '../lib/egress-policy';
import type { ResourceLimits } from '../lib/resource-limits';
import { directSpawner, type SpawnedProcess, type Spawner } from './spawner';

export const SANDBOX_WORKSPACE = '/workspace';
/** Where the run's folder (the egress proxy's socket) appears in the sandbox. */
const RUN_DIR = '/run/flows';
export const EGRESS_SOCKET = 'egress.sock';
/** The bridge's port on the sandbox's own loopback: what HTTP_PROXY names. */
const PROXY_PORT = 3128;
/** uid and gid of the agent inside its user namespace. */
const AGENT_ID = '1000';
const MB = 1024 * 1024;
const SYSTEM_DIRS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/** Credentials of the machine that /etc may hold: hidden behind empty files and folders. */
const HIDDEN_FILES = ['/etc/shadow', '/etc/gshadow', '/etc/shadow-', '/etc/gshadow-', '/etc/sudoers', '/etc/machine-id'];
const HIDDEN_DIRS = ['/etc/ssh', '/etc/ssl/private', '/etc/sudoers.d'];

export const INSTALL_HINT =
  'install bubblewrap and socat (Debian and Ubuntu: apt-get install bubblewrap socat; Fedora: dnf install bubblewrap socat) on a kernel that allows user namespaces, ' +
  'or set FLOWS_LOCAL_AGENT_SANDBOX=off, which lets the agent read everything this server can (unsafe for webhook jobs)';

function kindOf(file: string): 'link' | 'dir' | 'file' | null {
  try {
    const stat = lstatSync(file);
    return stat.isSymbolicLink() ? 'link' : stat.isDirectory() ? 'dir' : 'file';
  } catch {
    return null;
  }
}

/** What every sandbox mounts of the host, read once: merged-/usr links stay links, real folders are bound. */
function systemArgs(): string[] {
  const args = ['--ro-bind', '/usr', '/usr'];
  for (const dir of SYSTEM_DIRS) {
    const kind = kindOf(dir);
    if (kind === 'link') args.push('--symlink', readlinkSync(dir), dir);
    else if (kind === 'dir') args.push('--ro-bind', dir, dir);
  }
  args.push('--ro-bind', '/etc', '/etc');
  for (const file of HIDDEN_FILES) if (kindOf(file) === 'file') args.push('--ro-bind', '/dev/null', file);
  for (const dir of HIDDEN_DIRS) if (kindOf(dir) === 'dir') args.push('--tmpfs', dir);
  // Name resolution often points out of /etc (systemd-resolved's file under /run).
  try {
    const resolver = realpathSync('/etc/resolv.conf');
    if (!resolver.startsWith('/etc/')) args.push('--ro-bind', resolver, resolver);
  } catch {
    // no resolver configured: the agent has none either
  }
  return args;
}

let system: string[] | undefined;

/** Looks at the listener this often before waiting a millisecond between looks, and gives up after (about 5 s). */
const LISTEN_SPINS = 100;
const LISTEN_TRIES = LISTEN_SPINS + 5000;

/**
 * The agent's shell inside the sandbox: the bridge to the egress proxy first, ready before the agent starts,
 * then the agent (`$1`) without descriptor 4, then, when it failed, a line on descriptor 4 for each of
 * /workspace and /tmp that was (nearly) full. With busybox (`$2`, its path), busybox's `nc` listens and
 * starts socat for each connection only, so a run that never connects never pays for socat's start (about
 * 2 ms of CPU, its libraries' loading); it listens on every address of the sandbox's network, whose only
 * interface is its loopback. It is ready once busybox sleeps: the first thing nc waits for, once bound and
 * listening, is a connection. (/proc/net/tcp would say so too, but a read of it walks every socket of the
 * machine: milliseconds.)
 * Without busybox, socat listens itself: the shell waits, blocked on a pipe, for its "listening on" notice
 * (socat ignores SIGPIPE, so what it logs once nobody reads goes nowhere). A bridge that fails leaves the
 * agent to start without it.
 */
const WRAPPER = `if [ -S ${RUN_DIR}/${EGRESS_SOCKET} ]; then
  if [ -n "$2" ]; then
    "$2" nc -ll -p ${PROXY_PORT} -e socat STDIO UNIX-CONNECT:${RUN_DIR}/${EGRESS_SOCKET} </dev/null >/dev/null 2>&1 &
    tries=0
    while [ $tries -lt ${LISTEN_TRIES} ] && read -r _ name state _ 2>/dev/null </proc/$!/stat; do
      case "$name $state" in "(busybox) S" | *" Z") break ;; esac
      tries=$((tries + 1))
      [ $tries -lt ${LISTEN_SPINS} ] || "$2" usleep 1000
    done
  else
    { socat -d -d TCP-LISTEN:${PROXY_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${RUN_DIR}/${EGRESS_SOCKET} 2>&1 >/dev/null </dev/null & } |
      while read -r line; do case $line in *" listening on "*) break ;; esac; done
  fi
fi
/bin/sh -c "$1" 4>&-
status=$?
[ $status -eq 0 ] || for dir in ${SANDBOX_WORKSPACE} /tmp; do set -- $(df -kP "$dir" | tail -n 1); [ "\${4:-9999}" -lt 1024 ] && echo "\${dir#/}" >&4; done
exit $status`;

/**
 * busybox where every sandbox sees it, when its `nc` can serve a program per connection (`-ll -e`: not every
 * build has them), for the bridge's listener; null otherwise.
 */
export function findBusybox(): string | null {
  const found = ['/usr/bin/busybox', '/bin/busybox', '/usr/sbin/busybox'].find((file) => kindOf(file) !== null);
  if (!found) return null;
  const usage = spawnSync(found, ['nc', '--help'], { encoding: 'utf8', timeout: 5_000 }).stderr ?? '';
  return usage.includes('-ll') && usage.includes('-e PROG') ? found : null;
}

/** The variables that send the agent's HTTP(S) through the bridge to its egress proxy; the sandbox's own loopback stays off it. */
export const proxyEnv = () => proxyVariables(`http://127.0.0.1:${PROXY_PORT}`, ['localhost', '127.0.0.1', '::1']);

/**
 * The bubblewrap options of a sandbox with `env` as its whole environment, `home` private, and `runDir`
 * (the proxy's socket; null: no network at all) at /run/flows. They go to bubblewrap through a pipe
 * (`--args`), not its command line or its own environment: other users of the machine can read a command
 * line, and a job's variables (LD_PRELOAD…) must reach the agent only, never bubblewrap itself.
 */
export function sandboxArgs({
  runDir,
  home,
  agent,
  env,
  limits,
  workspace = null,
}: {
  runDir: string | null;
  home: string;
  agent: LocalAgent;
  env: Record<string, string>;
  limits: Pick<ResourceLimits, 'workspaceMb' | 'tmpMb'>;
  /** A folder of this server to work in (a repository workspace) instead of an empty, size-limited one. */
  workspace?: string | null;
}): string[] {
  system ??= systemArgs();
  // The wrapper is the sandbox's PID 1 (`--as-pid-1`): bubblewrap forks no reaper of its own, a process less
  // per run (a fifth of a sandbox's CPU where forks are dear). The wrapper's dash reaps any child while it
  // waits, and its end, or bubblewrap's, ends every process of the sandbox as the reaper's did.
  const args = ['--unshare-all', '--unshare-user', '--as-pid-1', '--uid', AGENT_ID, '--gid', AGENT_ID, '--disable-userns', '--cap-drop', 'ALL', '--die-with-parent', '--new-session', ...system];
  args.push('--clearenv', ...Object.entries(env).flatMap(([name, value]) => ['--setenv', name, value]));
  args.push('--proc', '/proc', '--dev', '/dev', '--size', String(limits.tmpMb * MB), '--tmpfs', '/tmp');
  if (home !== '/' && !home.startsWith('/usr') && !home.startsWith('/etc')) args.push('--tmpfs', home);
  if (workspace) args.push('--bind', workspace, SANDBOX_WORKSPACE, '--chdir', SANDBOX_WORKSPACE);
  else args.push('--size', String(limits.workspaceMb * MB), '--perms', '0700', '--tmpfs', SANDBOX_WORKSPACE, '--chdir', SANDBOX_WORKSPACE);
  if (runDir) args.push('--ro-bind', runDir, RUN_DIR);
  for (const bind of agent.binds ?? []) args.push(bind.writable ? '--bind' : '--ro-bind', bind.path, bind.at ?? bind.path);
  return args;
}

export interface SandboxProcess {
  /** bubblewrap (or prlimit before it), whose process group holds the sandbox. */
  child: SpawnedProcess;
  /** What the wrapper reported of full filesystems (`workspace`, `tmp`), once the child closed. */
  full(): string[];
}

/**
 * Starts `command` by /bin/sh in a sandbox of `options` (given through file descriptor 3), in a process
 * group of its own, as `uid` when set (a server running as root), under `rlimits` (prlimit options) when
 * set, through `spawner`. `beforeStart` runs once the process exists and before bubblewrap has its options,
 * so before anything of the sandbox runs: where it joins its control group. `busybox` (findBusybox) listens
 * for the egress bridge when given.
 */
export async function spawnSandbox(
  spawner: Spawner,
  bwrap: string,
  options: string[],
  command: string,
  env: Record<string, string>,
  {
    uid,
    rlimits = [],
    beforeStart,
    stdio = ['pipe', 'pipe', 'pipe'],
    busybox = null,
  }: { uid?: number; rlimits?: string[]; beforeStart?: (pid: number) => Promise<void>; stdio?: ('pipe' | 'ignore')[]; busybox?: string | null } = {},
): Promise<SandboxProcess> {
  const argv = [bwrap, '--args', '3', '--', '/bin/sh', '-c', WRAPPER, 'flows-run', command, busybox ?? ''];
  const [file, ...args] = rlimits.length ? ['prlimit', ...rlimits, ...argv] : argv;
  const [stdin, stdout, stderr] = stdio.map((how, fd) => (how === 'ignore' ? 'ignore' : fd === 0 ? 'in' : 'out'));
  const child = await spawner.spawn(file, args, { detached: true, stdio: [stdin, stdout, stderr, 'in', 'out'], env, ...(uid === undefined ? {} : { uid, gid: uid }) });
  const channel = child.stdio[3] as NodeJS.WritableStream;
  channel.on('error', () => {}); // bubblewrap missing: the child's own error says so
  let report = '';
  (child.stdio[4] as NodeJS.ReadableStream).on('data', (chunk: Buffer) => (report = `${report}${chunk}`.slice(0, 100)));
  // Awaited only for a process that exists: one that could not be started says so in an 'error' event, which
  // the caller must be listening for by then.
  if (child.pid !== undefined && beforeStart) {
    try {
      await beforeStart(child.pid);
    } catch (err) {
      child.kill('SIGKILL'); // it waits for its options, which it will not get
      throw err;
    }
  }
  channel.end(options.map((option) => `${option}\0`).join(''));
  return { child, full: () => report.split('\n').filter((line) => line === 'workspace' || line === 'tmp') };
}

/**
 * The host uid bubblewrap runs as: when this server is root, the operator's unprivileged one
 * (FLOWS_LOCAL_AGENT_UID, `nobody` by default); otherwise this server's own, which is unprivileged already.
 */
export const sandboxUid = (agent: LocalAgent): number | undefined => (process.getuid?.() === 0 ? (agent.uid ?? NOBODY) : undefined);
const NOBODY = 65534;

/** A run's folder on the host (`flows-run-<server pid>-…`, so that a later start can tell a dead server's apart), reachable by the sandbox's user. */
export async function makeRunDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), `flows-run-${process.pid}-`));
  await chmod(dir, 0o711);
  return dir;
}

/** Removes run folders that servers no longer running left behind (a crash, a kill); answers how many. */
export function sweepRunDirs(): number {
  let swept = 0;
  for (const name of readdirSync(tmpdir())) {
    const owner = /^flows-run-(\d+)-/.exec(name)?.[1];
    if (!name.startsWith('flows-run-') || (owner && alive(Number(owner)))) continue;
    rmSync(path.join(tmpdir(), name), { recursive: true, force: true });
    swept++;
  }
  return swept;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Why a sandbox cannot be made here (bubblewrap or socat missing, user namespaces refused, a bind the
 * agent's user cannot reach), or null: a trivial command is run once in a sandbox like the agent's, by
 * `spawner` (by this process itself for the check at start, before any run needs a spawner).
 */
export async function sandboxProblem(agent: LocalAgent, bwrap = 'bwrap', spawner: Spawner = directSpawner): Promise<string | null> {
  const runDir = await makeRunDir();
  const uid = sandboxUid(agent);
  const options = sandboxArgs({ runDir, home: '/nonexistent-home', agent, env: { PATH: '/usr/bin:/bin' }, limits: { workspaceMb: 1, tmpMb: 1 } });
  const command = agent.network === 'none' ? 'true' : 'command -v socat >/dev/null || { echo "socat is not installed" >&2; exit 1; }';
  const { child } = await spawnSandbox(spawner, bwrap, options, command, { PATH: '/usr/bin:/bin' }, { uid, stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise<string | null>((resolve) => {
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    child.on('error', (err) => resolve(`bubblewrap cannot be run (${(err as NodeJS.ErrnoException).code ?? err.message})`));
    child.on('close', (code) => {
      if (code === 0) return resolve(null);
      const said = stderr.trim().slice(0, 200);
      const unreachable = uid !== undefined && said.includes('Permission denied') ? ` (the agent's user, uid ${uid}, must be able to read every FLOWS_LOCAL_AGENT_BIND path)` : '';
      resolve(said === 'socat is not installed' ? said : `bubblewrap cannot make a sandbox here (${said || `exit code ${code}`})${unreachable}`);
    });
  }).finally(() => rm(runDir, { recursive: true, force: true }));
}
