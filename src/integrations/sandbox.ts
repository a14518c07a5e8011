// The local agent's sandbox, with bubblewrap: a prompt is untrusted, so the agent sees its own workspace
// (read-write, at /workspace), the system (/usr and /etc read-only, without the files that hold the
// machine's credentials), a private /tmp and HOME, and what the operator binds in (FLOWS_LOCAL_AGENT_BIND);
// not the project, the data directory, other runs' workspaces or the server's environment. It gets its own
// user, PID, IPC, UTS and cgroup namespaces, and dies with the server. Network stays unless configured off.
import { spawn } from 'node:child_process';
import { lstatSync, mkdtempSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { LocalAgent } from '../config';

export const SANDBOX_WORKSPACE = '/workspace';
const SYSTEM_DIRS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/** Credentials of the machine that /etc may hold: hidden behind empty files and folders. */
const HIDDEN_FILES = ['/etc/shadow', '/etc/gshadow', '/etc/shadow-', '/etc/gshadow-', '/etc/sudoers', '/etc/machine-id'];
const HIDDEN_DIRS = ['/etc/ssh', '/etc/ssl/private', '/etc/sudoers.d'];

export const INSTALL_HINT =
  'install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) on a kernel that allows user namespaces, ' +
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

/**
 * The bubblewrap options of a sandbox around `workspace`, with `home` private and `env` as its whole
 * environment. They go to bubblewrap through a pipe (`--args`), not its command line or its own
 * environment: other users of the machine can read a command line, and a job's variables (LD_PRELOAD…)
 * must reach the agent only, never bubblewrap itself.
 */
export function sandboxArgs({ workspace, home, agent, env }: { workspace: string; home: string; agent: LocalAgent; env: Record<string, string> }): string[] {
  system ??= systemArgs();
  const args = ['--unshare-all', ...(agent.network === 'none' ? [] : ['--share-net']), '--die-with-parent', '--new-session', ...system];
  args.push('--clearenv', ...Object.entries(env).flatMap(([name, value]) => ['--setenv', name, value]));
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  if (home !== '/' && !home.startsWith('/usr') && !home.startsWith('/etc')) args.push('--tmpfs', home);
  args.push('--bind', workspace, SANDBOX_WORKSPACE, '--chdir', SANDBOX_WORKSPACE);
  for (const bind of agent.binds ?? []) args.push(bind.writable ? '--bind' : '--ro-bind', bind.path, bind.path);
  return args;
}

/** Starts `command` by /bin/sh in a sandbox of `options` (given through file descriptor 3), in a process group of its own. */
export function spawnSandbox(bwrap: string, options: string[], command: string, env: Record<string, string>, stdio: ('pipe' | 'ignore')[] = ['pipe', 'pipe', 'pipe']) {
  const child = spawn(bwrap, ['--args', '3', '--', '/bin/sh', '-c', command], { detached: true, stdio: [...stdio, 'pipe'], env });
  const channel = child.stdio[3] as NodeJS.WritableStream;
  channel.on('error', () => {}); // bubblewrap missing: the child's own error says so
  channel.end(options.map((option) => `${option}\0`).join(''));
  return child;
}

/**
 * Why a sandbox cannot be made here (bubblewrap missing, user namespaces refused), or null: a trivial
 * command is run once in a sandbox like the agent's.
 */
export function sandboxProblem(agent: LocalAgent, bwrap = 'bwrap'): Promise<string | null> {
  const workspace = mkdtempSync(path.join(tmpdir(), 'flows-probe-'));
  const options = sandboxArgs({ workspace, home: '/nonexistent-home', agent, env: { PATH: '/usr/bin:/bin' } });
  return new Promise<string | null>((resolve) => {
    const child = spawnSandbox(bwrap, options, 'true', { PATH: '/usr/bin:/bin' }, ['ignore', 'ignore', 'pipe']);
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    child.on('error', (err) => resolve(`bubblewrap cannot be run (${(err as NodeJS.ErrnoException).code ?? err.message})`));
    child.on('close', (code) => resolve(code === 0 ? null : `bubblewrap cannot make a sandbox here (${stderr.trim().slice(0, 200) || `exit code ${code}`})`));
  }).finally(() => rmSync(workspace, { recursive: true, force: true }));
}
