// A fake VM host and a fake coding-agent provider, as one real HTTP server on loopback, speaking the
// provider APIs of openapi/providers.yaml. Knobs inject the failures drivers must survive: missing
// permissions, 5xx and non-JSON answers, calls never answered, slow or failed boots, lost VMs, agents that
// fail, hang or cannot reach a model.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ProviderRepository } from '../../src/lib/provider-repository';

export const VMHOST_TOKEN = 'vmhost-token-s3cr3t-0123456789';
export const AGENT_TOKEN = 'agent-token-s3cr3t-9876543210';

export interface Knobs {
  permissions: string[];
  /** Status to answer VM creation with instead of 201. */
  createStatus: number;
  /** Polls of a VM that answer `booting` before `ready`; `failed` boots fail. */
  bootPolls: number | 'failed';
  /** The agent's output lines, then its end. */
  output: { stream: 'stdout' | 'stderr'; text: string }[];
  end: { state: 'succeeded'; result: Record<string, unknown> } | { state: 'failed'; error: string } | 'hang';
  probeOk: boolean;
  /** What the agent writes in a repository it is given (a file and its text; null: it changes nothing). */
  edit: { file: string; text: string } | null;
  /** VMs vanish: reading one answers 404. */
  lost: boolean;
  /**
   * Calls that fail, as a provider having a bad moment does: answered with a status, with a body that is not
   * JSON, or never answered (`hang`), `times` times (always when not given).
   */
  fail: Partial<Record<ProviderCall, { with: number | 'not-json' | 'hang'; times?: number }>>;
}

export type ProviderCall = 'token' | 'create' | 'read' | 'destroy' | 'start' | 'output' | 'probe';

/** Which call a request is. */
function callOf(method: string, path: string): ProviderCall | null {
  if (path === '/v1/token') return 'token';
  if (path === '/v1/vms') return method === 'POST' ? 'create' : null;
  if (path.startsWith('/v1/vms/')) return method === 'DELETE' ? 'destroy' : 'read';
  if (path === '/v1/sessions') return 'start';
  if (path.endsWith('/output')) return 'output';
  if (path === '/v1/probe') return 'probe';
  return null;
}

export const defaultKnobs = (): Knobs => ({
  permissions: ['vms:create', 'vms:read', 'vms:delete'],
  createStatus: 201,
  bootPolls: 1,
  output: [
    { stream: 'stdout', text: 'cloning acme/widgets' },
    { stream: 'stderr', text: 'warning: shallow clone' },
  ],
  end: { state: 'succeeded', result: { summary: 'Fixed it', pullRequestUrl: 'https://example.test/pr/7' } },
  probeOk: true,
  edit: { file: 'FROM-THE-VM.md', text: 'Written on the VM.\n' },
  lost: false,
  fail: {},
});

export interface FakeProviders {
  url: string;
  knobs: Knobs;
  vms: Map<string, { polls: number; destroyed: boolean; image: string }>;
  sessions: Map<string, { reads: number; canceled: boolean; prompt: string; model?: string; env?: Record<string, string>; repository?: ProviderRepository; pushed?: string | null }>;
  /** The calls failed on purpose, in order. */
  failed: ProviderCall[];
  /** Every request that reached the fake, as `METHOD /path`. */
  requests: string[];
  /** Back to working providers. */
  reset(): void;
  close(): Promise<void>;
}

/**
 * What a provider does with a repository: clones it with the token (as a header, never in the agent's
 * folder), lets the agent write, commits and pushes the branch over its lease; answers the commit pushed.
 */
async function workOn(repository: ProviderRepository, edit: Knobs['edit']): Promise<string | null> {
  const dir = mkdtempSync(path.join(tmpdir(), 'fake-provider-'));
  const header = `http.extraHeader=Authorization: Basic ${Buffer.from(`x-access-token:${repository.token}`).toString('base64')}`;
  const env = { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_AUTHOR_NAME: repository.author.name, GIT_AUTHOR_EMAIL: repository.author.email, GIT_COMMITTER_NAME: repository.author.name, GIT_COMMITTER_EMAIL: repository.author.email };
  // Not synchronous: the git server may be in this same process (the tests' fake GitHub).
  const git = async (...args: string[]) => (await promisify(execFile)('git', ['-c', header, '-c', 'init.defaultBranch=main', ...args], { cwd: dir, env, encoding: 'utf8' })).stdout.trim();
  try {
    await git('init', '-q');
    await git('fetch', '-q', '--depth=1', repository.url, repository.ref);
    await git('checkout', '-q', '-B', repository.branch, 'FETCH_HEAD');
    if (!edit) return null;
    writeFileSync(path.join(dir, edit.file), edit.text);
    await git('add', '-A');
    await git('commit', '-q', '-m', repository.commitMessage);
    await git('push', '-q', `--force-with-lease=refs/heads/${repository.branch}:${repository.lease ?? ''}`, repository.url, `HEAD:refs/heads/${repository.branch}`);
    return await git('rev-parse', 'HEAD');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function bodyOf(req: IncomingMessage): Promise<any> {
  return new Promise((resolve) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => resolve(text ? JSON.parse(text) : null));
  });
}

export async function startFakeProviders(): Promise<FakeProviders> {
  const fake = { knobs: defaultKnobs(), vms: new Map(), sessions: new Map(), failed: [] as ProviderCall[], requests: [] as string[] } as Omit<FakeProviders, 'url' | 'close' | 'reset'>;
  let next = 0;
  const server: Server = createServer(async (req, res) => {
    const send = (status: number, body?: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(body === undefined ? undefined : JSON.stringify(body));
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const url = new URL(req.url!, 'http://fake');
    fake.requests.push(`${req.method} ${url.pathname}`);
    const body = await bodyOf(req);
    const vmRoute = /^\/v1\/vms\/([^/]+)$/.exec(url.pathname);
    const sessionRoute = /^\/v1\/sessions\/([^/]+)\/(output|cancel)$/.exec(url.pathname);
    const forVmhost = url.pathname.startsWith('/v1/token') || url.pathname.startsWith('/v1/vms');
    if (token !== (forVmhost ? VMHOST_TOKEN : AGENT_TOKEN)) return send(401, { error: 'bad token' });
    const { knobs } = fake;
    const call = callOf(req.method!, url.pathname);
    const failure = call && knobs.fail[call];
    if (failure && (failure.times ?? Infinity) > 0) {
      failure.times = (failure.times ?? Infinity) - 1;
      fake.failed.push(call);
      if (failure.with === 'hang') return; // never answered: the caller's deadline ends it
      if (failure.with === 'not-json') return res.writeHead(200, { 'content-type': 'text/html' }).end('<html>maintenance</html>');
      return send(failure.with, { error: 'provider trouble' });
    }
    if (url.pathname === '/v1/token') return send(200, { permissions: knobs.permissions });
    if (url.pathname === '/v1/vms' && req.method === 'POST') {
      if (knobs.createStatus !== 201) return send(knobs.createStatus, { error: 'nope' });
      const id = `vm-${++next}`;
      fake.vms.set(id, { polls: 0, destroyed: false, image: body.image });
      return send(201, { id, status: 'booting' });
    }
    if (vmRoute) {
      const vm = fake.vms.get(vmRoute[1]);
      if (!vm || vm.destroyed || (knobs.lost && req.method === 'GET')) return send(404, { error: 'no such VM' });
      if (req.method === 'DELETE') {
        vm.destroyed = true;
        return send(204);
      }
      vm.polls++;
      const status = knobs.bootPolls === 'failed' ? 'failed' : vm.polls > knobs.bootPolls ? 'ready' : 'booting';
      return send(200, { id: vmRoute[1], status });
    }
    if (url.pathname === '/v1/sessions' && req.method === 'POST') {
      const id = `session-${++next}`;
      const repository = body.repository as ProviderRepository | undefined;
      let pushed: string | null = null;
      try {
        pushed = repository ? await workOn(repository, knobs.edit) : null;
      } catch {
        return send(500, { error: 'the provider could not work on the repository' });
      }
      fake.sessions.set(id, { reads: 0, canceled: false, prompt: body.prompt, model: body.model, env: body.env, repository, pushed });
      return send(201, { id });
    }
    if (sessionRoute) {
      const session = fake.sessions.get(sessionRoute[1]);
      if (!session) return send(404, { error: 'no such session' });
      if (sessionRoute[2] === 'cancel') {
        session.canceled = true;
        return send(202, {});
      }
      session.reads++;
      const after = Number(url.searchParams.get('after') ?? 0);
      const output = knobs.output.map((line, i) => ({ seq: i + 1, ...line })).filter((line) => line.seq > after);
      const end = knobs.end;
      if (end === 'hang' || session.canceled || session.reads < 2) return send(200, { state: 'running', output });
      return send(200, { output, ...end });
    }
    if (url.pathname === '/v1/probe') return send(200, knobs.probeOk ? { ok: true, model: 'large-model-1' } : { ok: false, detail: 'model quota exhausted' });
    send(404, { error: 'unknown path' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    ...fake,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    reset: () => {
      Object.assign(fake.knobs, defaultKnobs());
      fake.failed.length = 0;
      fake.requests.length = 0;
    },
    // Hung requests are cut, so that closing does not wait for them.
    close: () => new Promise((resolve) => server.close(() => resolve()).closeAllConnections()),
  } as FakeProviders;
}
