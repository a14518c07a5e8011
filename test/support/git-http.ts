// Real git repositories served over smart HTTP (`git http-backend`) by a fake forge on loopback, and read
// back by tests: bare repositories under one folder, seeded with files on `main`.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';

const gitEnv = { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', PATH: process.env.PATH ?? '/usr/bin:/bin' };
const gitIn = (cwd: string, args: string[]) => execFileSync('git', ['-c', 'gc.auto=0', ...args], { cwd, env: { ...gitEnv, GIT_AUTHOR_NAME: 'Ada', GIT_AUTHOR_EMAIL: 'ada@example.test', GIT_COMMITTER_NAME: 'Ada', GIT_COMMITTER_EMAIL: 'ada@example.test' }, encoding: 'utf8' });

export function gitRepositories(root: string) {
  const bareOf = (name: string) => path.join(root, 'repos', `${name}.git`);
  return {
    /** A repository with one commit of `files` on `main`. */
    add(name: string, files: Record<string, string>) {
      const bare = bareOf(name);
      mkdirSync(bare, { recursive: true });
      gitIn(bare, ['init', '-q', '--bare', '-b', 'main']);
      gitIn(bare, ['config', 'http.receivepack', 'true']);
      gitIn(bare, ['config', 'uploadpack.allowReachableSHA1InWant', 'true']);
      const work = mkdtempSync(path.join(root, 'seed-'));
      gitIn(work, ['init', '-q', '-b', 'main']);
      for (const [file, text] of Object.entries(files)) {
        mkdirSync(path.dirname(path.join(work, file)), { recursive: true });
        writeFileSync(path.join(work, file), text);
      }
      gitIn(work, ['add', '-A']);
      gitIn(work, ['commit', '-q', '-m', 'First commit']);
      gitIn(work, ['push', '-q', bare, 'main']);
      rmSync(work, { recursive: true, force: true });
    },
    /** A branch of its own, from `main`, as a person would have pushed it. */
    branch(name: string, branch: string) {
      gitIn(bareOf(name), ['branch', branch, 'main']);
    },
    /** A file of `branch`, or null when the branch or the file is not there. */
    fileAt(name: string, branch: string, file: string): string | null {
      try {
        return gitIn(bareOf(name), ['show', `${branch}:${file}`]);
      } catch {
        return null;
      }
    },
    /** The branches of a repository, with their commits. */
    branches(name: string): Record<string, string> {
      const out = gitIn(bareOf(name), ['for-each-ref', '--format=%(refname:short) %(objectname)', 'refs/heads']);
      return Object.fromEntries(out.trim().split('\n').filter(Boolean).map((line) => line.split(' ')));
    },
    /** Commits on `branch`, newest first: subject and author. */
    log(name: string, branch: string): string[] {
      return gitIn(bareOf(name), ['log', '--format=%s <%ae>', branch]).trim().split('\n');
    },
    /** Answers a smart HTTP request for `name` (`rest`: the path after `.git`), through git http-backend. */
    async serve(req: IncomingMessage, res: ServerResponse, name: string, rest: string, search: string, user: string) {
      const cgi = spawn('git', ['http-backend'], {
        env: {
          ...gitEnv,
          GIT_PROJECT_ROOT: path.join(root, 'repos'),
          GIT_HTTP_EXPORT_ALL: '1',
          REMOTE_USER: user,
          PATH_INFO: `/${name}.git${rest}`,
          REQUEST_METHOD: req.method ?? 'GET',
          QUERY_STRING: search,
          CONTENT_TYPE: req.headers['content-type'] ?? '',
          ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: String(req.headers['content-encoding']) } : {}),
          ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
        },
      });
      req.pipe(cgi.stdin);
      const chunks: Buffer[] = [];
      cgi.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
      await new Promise((resolve) => cgi.on('close', resolve));
      const output = Buffer.concat(chunks);
      const split = output.indexOf('\r\n\r\n');
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of output.subarray(0, split).toString().split('\r\n')) {
        const [header, ...value] = line.split(': ');
        if (header.toLowerCase() === 'status') status = Number(value.join(': ').split(' ')[0]);
        else if (header) headers[header] = value.join(': ');
      }
      res.writeHead(status, headers);
      res.end(output.subarray(split + 4));
    },
  };
}
