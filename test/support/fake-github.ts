// GitHub on loopback, as a GitHub App meets it: the REST API (under /api/v3, as GitHub Enterprise Server
// lays it out) verifies the app's RS256 JWT with the app's public key, mints installation tokens scoped to
// repositories and permissions, and records pull requests; the same origin serves real git repositories
// over smart HTTP (`git http-backend`), opened only by a live installation token of a repository it was
// minted for (Basic `x-access-token:<token>`, as GitHub takes it), or anonymously for public ones.
import { generateKeyPairSync, randomBytes, verify, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gitRepositories } from './git-http';

export interface MintedToken {
  token: string;
  installationId: number;
  repositories: string[];
  permissions: Record<string, string>;
  revoked: boolean;
}

export interface CommentRecord {
  repository: string;
  issue: number;
  id: number;
  url: string;
  /** Every text the comment had, the first one first. */
  bodies: string[];
}

export interface CheckRecord {
  repository: string;
  id: number;
  name: string;
  headSha: string;
  detailsUrl: string;
  status: string;
  conclusion: string | null;
  summary: string | null;
}

export interface PullRecord {
  repository: string;
  number: number;
  title: string;
  body: string;
  head: string;
  base: string;
  url: string;
  edits: number;
}

export async function startFakeGithub() {
  const root = mkdtempSync(path.join(tmpdir(), 'fake-github-'));
  const served = gitRepositories(root);
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const app = { id: 424242, slug: 'flows-test', privateKey: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(), publicKey: publicKey as KeyObject };
  const installations = new Map<number, { account: string; repositories: string[] }>();
  const publicRepositories = new Set<string>();
  const tokens = new Map<string, MintedToken>();
  const pulls: PullRecord[] = [];
  const comments: CommentRecord[] = [];
  const reactions: { repository: string; on: string; content: string }[] = [];
  const checks: CheckRecord[] = [];
  /** Head commits of pull requests the API answers for (`GET /repos/{o}/{r}/pulls/{n}`). */
  const heads = new Map<string, string>();
  /** Every git request: the repository, the service, and whose token (null: anonymous). */
  const gitRequests: { repository: string; service: string; token: string | null }[] = [];
  const apiRequests: { method: string; path: string }[] = [];
  let url = '';

  const send = (res: ServerResponse, status: number, body?: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(body === undefined ? '' : JSON.stringify(body));
  };
  const bodyOf = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };

  /** The app's JWT, verified as GitHub does; null when it is not one. */
  function appFromJwt(header: string | undefined): boolean {
    const jwt = /^Bearer (.+)$/i.exec(header ?? '')?.[1];
    if (!jwt) return false;
    const [head, payload, signature] = jwt.split('.');
    if (!signature || !verify('RSA-SHA256', Buffer.from(`${head}.${payload}`), app.publicKey, Buffer.from(signature, 'base64url'))) return false;
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as { iss: string | number; exp: number; iat: number };
    const now = Date.now() / 1000;
    return String(claims.iss) === String(app.id) && claims.exp > now && claims.iat <= now + 60 && claims.exp - claims.iat <= 600;
  }
  const liveToken = (value: string | null | undefined) => {
    const minted = value ? tokens.get(value) : undefined;
    return minted && !minted.revoked ? minted : null;
  };

  async function api(req: IncomingMessage, res: ServerResponse, route: string) {
    const method = req.method ?? 'GET';
    apiRequests.push({ method, path: route });
    const [pathname, search = ''] = route.split('?');
    const query = new URLSearchParams(search);
    const parts = pathname.split('/').filter(Boolean);
    if (parts[0] === 'app' || (parts[0] === 'repos' && parts[3] === 'installation')) {
      if (!appFromJwt(req.headers.authorization)) return send(res, 401, { message: 'A JSON web token could not be decoded' });
      if (method === 'GET' && pathname === '/app') return send(res, 200, { id: app.id, slug: app.slug, name: 'Flows test' });
      if (method === 'GET' && pathname === '/app/installations') {
        return send(res, 200, [...installations].map(([id, installation]) => ({ id, account: { login: installation.account }, repository_selection: 'selected' })));
      }
      if (parts[0] === 'repos') {
        const repository = `${parts[1]}/${parts[2]}`;
        const found = [...installations].find(([, installation]) => installation.repositories.includes(repository));
        return found ? send(res, 200, { id: found[0] }) : send(res, 404, { message: 'Not Found' });
      }
      const minting = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(pathname);
      if (method === 'POST' && minting) {
        const installationId = Number(minting[1]);
        const installation = installations.get(installationId);
        if (!installation) return send(res, 404, { message: 'Not Found' });
        const asked = JSON.parse((await bodyOf(req)).toString() || '{}') as { repositories?: string[]; permissions?: Record<string, string> };
        const repositories = asked.repositories ? asked.repositories.map((name) => installation.repositories.find((full) => full.endsWith(`/${name}`))) : installation.repositories;
        if (repositories.some((repository) => !repository)) return send(res, 422, { message: 'There is at least one repository that does not exist or is not accessible to the parent installation.' });
        const token = `ghs_${randomBytes(18).toString('base64url')}`;
        const permissions = asked.permissions ?? { contents: 'write', pull_requests: 'write', metadata: 'read' };
        tokens.set(token, { token, installationId, repositories: repositories as string[], permissions, revoked: false });
        return send(res, 201, { token, expires_at: new Date(Date.now() + 3_600_000).toISOString(), permissions, repository_selection: 'selected' });
      }
      return send(res, 404, { message: 'Not Found' });
    }
    const minted = liveToken(/^(?:token|Bearer) (.+)$/i.exec(req.headers.authorization ?? '')?.[1]);
    if (!minted) return send(res, 401, { message: 'Bad credentials' });
    if (method === 'GET' && pathname === '/installation/repositories') {
      return send(res, 200, { total_count: minted.repositories.length, repositories: minted.repositories.map((full_name) => ({ full_name })) });
    }
    if (method === 'DELETE' && pathname === '/installation/token') {
      minted.revoked = true;
      return send(res, 204);
    }
    if (parts[0] === 'repos') {
      const repository = `${parts[1]}/${parts[2]}`;
      const rest = parts.slice(3).join('/');
      const may = (permission: string) => minted.repositories.includes(repository) && minted.permissions[permission] === 'write';
      const reacting = /^(issues\/comments|pulls\/comments|issues)\/(\d+)\/reactions$/.exec(rest);
      if (method === 'POST' && reacting) {
        if (!may('issues') && !may('pull_requests')) return send(res, 403, { message: 'Resource not accessible by integration' });
        const { content } = JSON.parse((await bodyOf(req)).toString()) as { content: string };
        reactions.push({ repository, on: `${reacting[1]}/${reacting[2]}`, content });
        return send(res, 201, { id: reactions.length, content });
      }
      const commenting = /^issues\/(\d+)\/comments$/.exec(rest);
      if (method === 'POST' && commenting) {
        if (!may('issues')) return send(res, 403, { message: 'Resource not accessible by integration' });
        const { body } = JSON.parse((await bodyOf(req)).toString()) as { body: string };
        const id = 9000 + comments.length;
        const comment = { repository, issue: Number(commenting[1]), id, url: `${url}/${repository}/issues/${commenting[1]}#issuecomment-${id}`, bodies: [body] };
        comments.push(comment);
        return send(res, 201, { id, html_url: comment.url, body });
      }
      const editing = /^issues\/comments\/(\d+)$/.exec(rest);
      if (method === 'PATCH' && editing) {
        const comment = comments.find((candidate) => candidate.repository === repository && candidate.id === Number(editing[1]));
        if (!comment || !may('issues')) return send(res, comment ? 403 : 404, { message: comment ? 'Resource not accessible by integration' : 'Not Found' });
        comment.bodies.push((JSON.parse((await bodyOf(req)).toString()) as { body: string }).body);
        return send(res, 200, { id: comment.id, html_url: comment.url });
      }
      const pullAt = /^pulls\/(\d+)$/.exec(rest);
      if (method === 'GET' && pullAt && heads.has(`${repository}#${pullAt[1]}`)) return send(res, 200, { number: Number(pullAt[1]), head: { sha: heads.get(`${repository}#${pullAt[1]}`) }, base: { ref: 'main' } });
      if (rest === 'check-runs' && method === 'POST') {
        if (!may('checks')) return send(res, 403, { message: 'Resource not accessible by integration' });
        const asked = JSON.parse((await bodyOf(req)).toString()) as { name: string; head_sha: string; details_url: string; status: string };
        const check = { repository, id: 7000 + checks.length, name: asked.name, headSha: asked.head_sha, detailsUrl: asked.details_url, status: asked.status, conclusion: null, summary: null };
        checks.push(check);
        return send(res, 201, { id: check.id, html_url: `${url}/${repository}/runs/${check.id}` });
      }
      const checking = /^check-runs\/(\d+)$/.exec(rest);
      if (checking && method === 'PATCH') {
        const check = checks.find((candidate) => candidate.repository === repository && candidate.id === Number(checking[1]));
        if (!check || !may('checks')) return send(res, check ? 403 : 404, { message: 'Not Found' });
        const asked = JSON.parse((await bodyOf(req)).toString()) as { status: string; conclusion: string; output: { summary: string } };
        Object.assign(check, { status: asked.status, conclusion: asked.conclusion, summary: asked.output.summary });
        return send(res, 200, { id: check.id });
      }
    }
    if (parts[0] === 'repos' && parts[3] === 'pulls') {
      const repository = `${parts[1]}/${parts[2]}`;
      if (!minted.repositories.includes(repository)) return send(res, 404, { message: 'Not Found' });
      const view = (pull: PullRecord) => ({ number: pull.number, html_url: pull.url, title: pull.title, body: pull.body, head: { ref: pull.head }, base: { ref: pull.base } });
      if (method === 'GET' && parts.length === 4) {
        const head = query.get('head')?.split(':')[1];
        return send(res, 200, pulls.filter((pull) => pull.repository === repository && (!head || pull.head === head)).map(view));
      }
      if (minted.permissions.pull_requests !== 'write') return send(res, 403, { message: 'Resource not accessible by integration' });
      if (method === 'POST' && parts.length === 4) {
        const asked = JSON.parse((await bodyOf(req)).toString()) as { title: string; body: string; head: string; base: string };
        const number = pulls.length + 1;
        const pull = { repository, number, ...asked, url: `${url}/${repository}/pull/${number}`, edits: 0 };
        pulls.push(pull);
        return send(res, 201, view(pull));
      }
      const pull = pulls.find((candidate) => candidate.repository === repository && candidate.number === Number(parts[4]));
      if (method === 'PATCH' && pull) {
        Object.assign(pull, JSON.parse((await bodyOf(req)).toString()));
        pull.edits++;
        return send(res, 200, view(pull));
      }
    }
    return send(res, 404, { message: 'Not Found' });
  }

  /** Smart HTTP through git http-backend, behind GitHub's rules for who may read and push. */
  async function gitHttp(req: IncomingMessage, res: ServerResponse, repository: string, rest: string, search: string) {
    const service = new URLSearchParams(search).get('service') ?? rest.replace(/^\//, '');
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const [user, password] = basic ? Buffer.from(basic, 'base64').toString().split(':') : [];
    const minted = user === 'x-access-token' ? liveToken(password) : null;
    gitRequests.push({ repository, service, token: password ?? null });
    const pushing = service === 'git-receive-pack';
    const allowed = minted ? minted.repositories.includes(repository) && (!pushing || minted.permissions.contents === 'write') : !pushing && publicRepositories.has(repository);
    if (!allowed) {
      res.writeHead(minted || basic ? 403 : 401, { 'www-authenticate': 'Basic realm="GitHub"' });
      return res.end(minted ? 'Permission denied' : 'Authentication failed');
    }
    return served.serve(req, res, repository, rest, search, 'x-access-token');
  }

  const server = createServer((req, res) => {
    const route = req.url ?? '/';
    // What it recorded, for a person trying Flows against it (test/support/fake-github-server.ts).
    if (route === '/_fake/recorded') return send(res, 200, { reactions, comments, pulls, checks, branches: Object.fromEntries([...installations.values()].flatMap((i) => i.repositories).map((name) => [name, safeBranches(name)])) });
    if (route.startsWith('/api/v3/')) return void api(req, res, route.slice('/api/v3'.length)).catch(() => send(res, 500, { message: 'fake GitHub failed' }));
    const [pathname, search = ''] = route.split('?');
    const git = /^\/([^/]+\/[^/]+?)\.git(\/.*)$/.exec(pathname);
    if (git) return void gitHttp(req, res, git[1], git[2], search).catch(() => send(res, 500, { message: 'fake git failed' }));
    send(res, 404, { message: 'Not Found' });
  });
  const safeBranches = (fullName: string) => {
    try {
      return served.branches(fullName);
    } catch {
      return {};
    }
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    apiBaseUrl: `${url}/api/v3`,
    app,
    tokens,
    pulls,
    comments,
    reactions,
    checks,
    heads,
    gitRequests,
    apiRequests,
    /** A repository with one commit of `files` on `main`, reached by installation `installationId` (null: none). */
    addRepository(fullName: string, files: Record<string, string>, { installationId = 1 as number | null, account = fullName.split('/')[0], isPublic = false } = {}) {
      served.add(fullName, files);
      if (installationId !== null) {
        const installation = installations.get(installationId) ?? { account, repositories: [] };
        installation.repositories.push(fullName);
        installations.set(installationId, installation);
      }
      if (isPublic) publicRepositories.add(fullName);
    },
    fileAt: served.fileAt,
    branches: served.branches,
    log: served.log,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      rmSync(root, { recursive: true, force: true });
    },
  };
}

export type FakeGithub = Awaited<ReturnType<typeof startFakeGithub>>;
