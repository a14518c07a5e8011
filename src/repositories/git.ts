// Git on the server's side of the sandbox. A run's repository lives in two folders: the work tree the agent
// gets (with a `.git` copy of its own, which nothing here ever reads) and the git folder Flows keeps, which
// the agent never sees. Every command here names both, so no setting, hook or attribute the agent wrote can
// take effect: the configuration read is the kept folder's own (no system or user files), hooks and
// filesystem monitors are off, and only HTTP(S) is spoken. The credential goes to git in its environment,
// as a header for the remote's site only, never on a command line, in a file or in a URL.
import { spawn } from 'node:child_process';
import { cp, rm } from 'node:fs/promises';
import path from 'node:path';
import { sizeOf } from '../lib/folder-size';
import { clip } from '../lib/text';
import type { CloneSource } from './mirrors';

/** Where a repository is fetched from and pushed to, and the token (if any) that opens it. */
export interface Remote {
  /** The repository's HTTP(S) URL, without credentials. */
  url: string;
  /** The token, sent as the password of `username`; null: anonymous. */
  token: string | null;
  /** Whom the token is the password of: `x-access-token` (GitHub, the default), `oauth2` (GitLab). */
  username?: string;
}

/** A git command that failed; the message is git's own (the credential is never in it). */
export class GitFailure extends Error {}

const SAFE_CONFIG = ['core.hooksPath=/dev/null', 'core.fsmonitor=false', 'protocol.allow=never', 'protocol.https.allow=always', 'protocol.http.allow=always', 'http.followRedirects=false', 'gc.auto=0', 'advice.detachedHead=false', 'init.defaultBranch=main'];

function gitEnv(remote: Remote | null): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    LANG: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '/bin/false',
  };
  if (remote?.token) {
    const origin = new URL(remote.url).origin;
    const basic = Buffer.from(`${remote.username ?? 'x-access-token'}:${remote.token}`).toString('base64');
    Object.assign(env, { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: `http.${origin}/.extraHeader`, GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}` });
  }
  return env;
}

interface GitOptions {
  gitDir?: string;
  workTree?: string;
  remote?: Remote | null;
  env?: Record<string, string>;
  timeoutMs?: number;
  /** Exit codes that are answers, not failures (`diff --quiet` answers 1 for "there are changes"). */
  answers?: number[];
  /** Stdout beyond this many bytes fails the command. */
  maxOutput?: number;
  /** Called every quarter second while the command runs; a message it returns stops the command with it. */
  watch?: () => Promise<string | null>;
  /** Settings over the safe ones, for this command only. */
  config?: string[];
}

const DEFAULT_TIMEOUT_MS = 300_000;
const MAX_OUTPUT = 1024 * 1024;

/** Runs git with the safe configuration; answers its stdout and exit code. */
export function git(args: string[], { gitDir, workTree, remote = null, env = {}, timeoutMs = DEFAULT_TIMEOUT_MS, answers = [], maxOutput = MAX_OUTPUT, watch, config = [] }: GitOptions = {}): Promise<{ stdout: string; code: number }> {
  const prefix = [...[...SAFE_CONFIG, ...config].flatMap((setting) => ['-c', setting]), ...(gitDir ? [`--git-dir=${gitDir}`] : []), ...(workTree ? [`--work-tree=${workTree}`] : [])];
  return new Promise((resolve, reject) => {
    const child = spawn('git', [...prefix, ...args], { env: { ...gitEnv(remote), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let outBytes = 0;
    let stderr = '';
    let stopped: string | null = null;
    const stop = (why: string) => {
      stopped ??= why;
      child.kill('SIGKILL');
    };
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > maxOutput) return stop(`its output passed ${Math.round(maxOutput / 1024)} KB`);
      out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr = `${stderr}${chunk}`.slice(-4000)));
    const timer = setTimeout(() => stop(`it took longer than ${Math.round(timeoutMs / 1000)} s`), timeoutMs);
    let watching = false;
    const watcher =
      watch &&
      setInterval(() => {
        if (watching) return;
        watching = true;
        watch()
          .then((why) => why && stop(why))
          .catch(() => {})
          .finally(() => (watching = false));
      }, 250);
    child.on('error', (err) => {
      clearTimeout(timer);
      if (watcher) clearInterval(watcher);
      reject(new GitFailure(`git could not be run: ${err.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (watcher) clearInterval(watcher);
      const stdout = Buffer.concat(out).toString('utf8');
      if (stopped) return reject(new GitFailure(`git ${args[0]} was stopped: ${stopped}`));
      if (code === 0 || answers.includes(code ?? -1)) return resolve({ stdout, code: code ?? 0 });
      reject(new GitFailure(`git ${args[0]} failed: ${clip(lastLines(stderr, remote)) || `exit code ${code}`}`));
    });
  });
}

/** The end of git's complaint, without a token, should one ever appear in it. */
function lastLines(stderr: string, remote: Remote | null): string {
  const text = stderr.trim().split('\n').slice(-3).join(' ').trim();
  return remote?.token ? text.split(remote.token).join('***') : text;
}

/** The remote's default branch and the commit its branch `branch` is at (null when there is no such branch). */
export async function remoteHeads(remote: Remote, branch: string): Promise<{ defaultBranch: string | null; branchCommit: string | null }> {
  const { stdout } = await git(['ls-remote', '--symref', remote.url, 'HEAD', `refs/heads/${branch}`], { remote, timeoutMs: 60_000 });
  let defaultBranch: string | null = null;
  let branchCommit: string | null = null;
  for (const line of stdout.split('\n')) {
    const symref = /^ref: refs\/heads\/(\S+)\tHEAD$/.exec(line);
    if (symref) defaultBranch = symref[1];
    const [commit, ref] = line.split('\t');
    if (ref === `refs/heads/${branch}`) branchCommit = commit;
  }
  return { defaultBranch, branchCommit };
}

/** Whether `name` is a branch name git takes. */
export async function validBranch(name: string): Promise<boolean> {
  const { code } = await git(['check-ref-format', '--branch', name], { answers: [1, 128] }).catch(() => ({ code: 1 }));
  return code === 0 && !name.startsWith('-');
}

/**
 * Fetches `source.ref` (a branch, a tag or a commit) one commit deep, from the remote or a mirror of it on
 * this machine, into the kept git folder (whose `origin` is the remote), and checks it out into the work tree
 * as branch `branch`; answers the commit. The fetch stops once the kept folder passes `maxBytes`, and so does
 * a checkout that would.
 */
export async function cloneInto({ remote, source, branch, gitDir, workTree, maxBytes, timeoutMs }: { remote: Remote; source: CloneSource; branch: string; gitDir: string; workTree: string; maxBytes: number; timeoutMs?: number }): Promise<string> {
  const mb = `${Math.round(maxBytes / 1024 / 1024)} MB`;
  await git(['init', '-q', `--separate-git-dir=${gitDir}`, workTree]);
  await git(['remote', 'add', 'origin', remote.url], { gitDir });
  const watch = async () => ((await sizeOf(path.join(gitDir, 'objects'))) > maxBytes ? `the repository is larger than ${mb}` : null);
  const from = source.local ? { config: ['protocol.file.allow=always'] } : { remote };
  await git(['fetch', '-q', '--depth=1', '--no-tags', source.url, source.ref], { gitDir, timeoutMs, watch, ...from });
  await git(['checkout', '-q', '-B', branch, 'FETCH_HEAD'], { gitDir, workTree, timeoutMs, watch: async () => ((await sizeOf(workTree)) > maxBytes ? `its files take more than ${mb}` : null) });
  return (await git(['rev-parse', 'HEAD'], { gitDir })).stdout.trim();
}

/** Gives the agent a `.git` of its own, a copy of the kept one: it may read history and commit; nothing reads it back. */
export async function giveAgentCopy(gitDir: string, workTree: string) {
  const own = path.join(workTree, '.git');
  await rm(own, { force: true, recursive: true });
  await cp(gitDir, own, { recursive: true, verbatimSymlinks: true });
}

export interface Committed {
  commit: string;
  files: number;
  insertions: number;
  deletions: number;
}

/**
 * Commits every change in the work tree onto the kept folder's branch (what `.gitignore` ignores aside);
 * null when nothing changed.
 */
export async function commitAll({ gitDir, workTree, message, author }: { gitDir: string; workTree: string; message: string; author: { name: string; email: string } }): Promise<Committed | null> {
  await git(['add', '-A', '--', '.'], { gitDir, workTree });
  const { code } = await git(['diff', '--cached', '--quiet'], { gitDir, workTree, answers: [1] });
  if (code === 0) return null;
  const stat = await diffStat(['--cached'], { gitDir, workTree });
  const identity = { GIT_AUTHOR_NAME: author.name, GIT_AUTHOR_EMAIL: author.email, GIT_COMMITTER_NAME: author.name, GIT_COMMITTER_EMAIL: author.email };
  await git(['commit', '-q', '--no-verify', '--no-gpg-sign', '-m', message], { gitDir, workTree, env: identity });
  const commit = (await git(['rev-parse', 'HEAD'], { gitDir })).stdout.trim();
  return { commit, ...stat };
}

/** How many files a diff touches, and its lines in and out (`what`: the arguments that choose the diff). */
async function diffStat(what: string[], options: GitOptions): Promise<Omit<Committed, 'commit'>> {
  const { stdout } = await git(['diff', ...what, '--numstat', '-z'], { ...options, maxOutput: 16 * MAX_OUTPUT });
  let files = 0;
  let insertions = 0;
  let deletions = 0;
  // -z: "added\tdeleted\tpath\0", or "added\tdeleted\t\0from\0to\0" for a rename.
  const fields = stdout.split('\0');
  for (let i = 0; i < fields.length; i++) {
    const stat = /^(\d+|-)\t(\d+|-)\t(.*)$/.exec(fields[i]);
    if (!stat) continue;
    files++;
    insertions += Number(stat[1]) || 0;
    deletions += Number(stat[2]) || 0;
    if (stat[3] === '') i += 2;
  }
  return { files, insertions, deletions };
}

/**
 * The commits from `from` to `to` as patches `git am` takes (binary files included), or null when they are
 * larger than `maxBytes`.
 */
export async function patchOf(gitDir: string, from: string, maxBytes: number, to = 'HEAD'): Promise<string | null> {
  try {
    return (await git(['format-patch', '--stdout', '--binary', `${from}..${to}`], { gitDir, maxOutput: maxBytes })).stdout;
  } catch (err) {
    if (err instanceof GitFailure && err.message.includes('output passed')) return null;
    throw err;
  }
}

/**
 * Pushes the kept folder's HEAD to `branch` of the remote, only if the branch is still where it was seen
 * (`expected`; null: it did not exist), so that nobody's work is overwritten.
 */
export async function pushBranch({ gitDir, remote, branch, expected }: { gitDir: string; remote: Remote; branch: string; expected: string | null }) {
  await git(['push', '-q', `--force-with-lease=refs/heads/${branch}:${expected ?? ''}`, 'origin', `HEAD:refs/heads/${branch}`], { gitDir, remote, timeoutMs: 120_000 });
}

/**
 * Fetches `ref` one commit deep into a bare folder of this server's (a run whose provider clones the
 * repository itself: what its branch is compared with); answers the commit.
 */
export async function fetchCommit({ remote, ref, gitDir, maxBytes, timeoutMs }: { remote: Remote; ref: string; gitDir: string; maxBytes: number; timeoutMs?: number }): Promise<string> {
  await git(['init', '-q', '--bare', gitDir]);
  const watch = async () => ((await sizeOf(path.join(gitDir, 'objects'))) > maxBytes ? `the repository is larger than ${Math.round(maxBytes / 1024 / 1024)} MB` : null);
  await git(['fetch', '-q', '--depth=1', '--no-tags', remote.url, ref], { gitDir, remote, timeoutMs, watch });
  return (await git(['rev-parse', 'FETCH_HEAD'], { gitDir })).stdout.trim();
}

/**
 * Where `branch` of the remote is now, fetched into `gitDir` over `base` (which it already holds), with the
 * size of its change from `base`; null when the branch does not exist.
 */
export async function fetchBranch({ remote, branch, gitDir, base, timeoutMs }: { remote: Remote; branch: string; gitDir: string; base: string; timeoutMs?: number }): Promise<Committed | null> {
  const { branchCommit } = await remoteHeads(remote, branch);
  if (!branchCommit) return null;
  await git(['fetch', '-q', '--no-tags', remote.url, `refs/heads/${branch}`], { gitDir, remote, timeoutMs });
  return { commit: branchCommit, ...(await diffStat([base, branchCommit], { gitDir })) };
}
