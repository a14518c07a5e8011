// Linear's GraphQL API and Jira Cloud's REST API on loopback, as Flows' reporting meets them: each refuses a
// credential that is not its own (Linear's API key as the Authorization header, Jira's Basic email:token)
// and records what it is asked: comments with every body they had, reactions, and issue state moves.
import { mkdtempSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gitRepositories } from './git-http';

export interface TrackerComment {
  issue: string;
  id: string;
  /** Every body the comment had, the first one first. */
  bodies: string[];
}

const bodyOf = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, any>;
};
const listen = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};
const closer = (server: Server) => () => new Promise<void>((resolve) => server.close(() => resolve()));

export interface FakeLinear {
  url: string;
  key: string;
  comments: TrackerComment[];
  reactions: { issueId?: string; commentId?: string; emoji: string }[];
  /** Each issue's state, by name, after a move. */
  states: Map<string, string>;
  close(): Promise<void>;
}

/** Linear: one team whose workflow states are Todo, In Progress, In Review and Done. */
export async function startFakeLinear(key = 'lin_api_fakelinearkey0123456789'): Promise<FakeLinear> {
  const comments: TrackerComment[] = [];
  const reactions: FakeLinear['reactions'] = [];
  const states = new Map<string, string>();
  const workflow = ['Todo', 'In Progress', 'In Review', 'Done'].map((name, i) => ({ id: `state-${i}`, name }));
  const server = createServer(async (req, res) => {
    const { query = '', variables = {} } = await bodyOf(req);
    const answer = (body: Record<string, unknown>) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.headers.authorization !== key) return answer({ errors: [{ message: 'Authentication required, not authenticated' }] });
    if (query.includes('viewer')) return answer({ data: { viewer: { name: 'Flows Bot', organization: { name: 'Acme' } } } });
    if (query.includes('reactionCreate')) {
      reactions.push(variables.input);
      return answer({ data: { reactionCreate: { success: true } } });
    }
    if (query.includes('commentCreate')) {
      const comment = { issue: variables.input.issueId, id: `comment-${comments.length + 1}`, bodies: [variables.input.body] };
      comments.push(comment);
      return answer({ data: { commentCreate: { success: true, comment: { id: comment.id } } } });
    }
    if (query.includes('commentUpdate')) {
      const comment = comments.find((candidate) => candidate.id === variables.id);
      if (!comment) return answer({ errors: [{ message: 'Entity not found' }] });
      comment.bodies.push(variables.input.body);
      return answer({ data: { commentUpdate: { success: true } } });
    }
    if (query.includes('issueUpdate')) {
      states.set(variables.id, workflow.find((state) => state.id === variables.input.stateId)!.name);
      return answer({ data: { issueUpdate: { success: true } } });
    }
    if (query.includes('issue(')) return answer({ data: { issue: { team: { states: { nodes: workflow } } } } });
    return answer({ errors: [{ message: 'Unknown query' }] });
  });
  return { url: `${await listen(server)}/graphql`, key, comments, reactions, states, close: closer(server) };
}

export interface FakeJira {
  /** The site (a Jira connection's `apiBaseUrl`). */
  url: string;
  login: string;
  token: string;
  comments: TrackerComment[];
  close(): Promise<void>;
}

export async function startFakeJira(login = 'flows@acme.example', token = 'ATATT-fake-jira-token-0123'): Promise<FakeJira> {
  const comments: TrackerComment[] = [];
  const server = createServer(async (req, res) => {
    const body = await bodyOf(req);
    const answer = (status: number, data: Record<string, unknown>) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(data));
    if (req.headers.authorization !== `Basic ${Buffer.from(`${login}:${token}`).toString('base64')}`) return answer(401, { errorMessages: ['Client must be authenticated to access this resource.'] });
    const url = new URL(req.url ?? '/', 'http://jira');
    if (req.method === 'GET' && url.pathname === '/rest/api/2/myself') return answer(200, { displayName: 'Flows Bot', emailAddress: login });
    const made = /^\/rest\/api\/2\/issue\/([^/]+)\/comment$/.exec(url.pathname);
    if (req.method === 'POST' && made) {
      const comment = { issue: decodeURIComponent(made[1]), id: String(10_000 + comments.length), bodies: [body.body] };
      comments.push(comment);
      return answer(201, { id: comment.id });
    }
    const edited = /^\/rest\/api\/2\/issue\/([^/]+)\/comment\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'PUT' && edited) {
      const comment = comments.find((candidate) => candidate.issue === decodeURIComponent(edited[1]) && candidate.id === edited[2]);
      if (!comment) return answer(404, { errorMessages: ['Can not find a comment for the id.'] });
      comment.bodies.push(body.body);
      return answer(200, { id: comment.id });
    }
    return answer(404, { errorMessages: ['Not found.'] });
  });
  return { url: await listen(server), login, token, comments, close: closer(server) };
}

export interface FakeGitlab {
  /** The API base URL (`…/api/v4`). */
  url: string;
  token: string;
  /** Notes, `issue` naming what they are on (`7/merge_requests/17`). */
  notes: TrackerComment[];
  awards: { on: string; name: string }[];
  statuses: { projectId: string; sha: string; state: string; name: string; targetUrl: string }[];
  mergeRequests: { project: string; iid: number; url: string; source: string; target: string; title: string; descriptions: string[] }[];
  /** Real repositories at `<site>/<path>.git`, cloned and pushed with Basic `oauth2:<token>`. */
  repositories: ReturnType<typeof gitRepositories>;
  /** Every git request, with whether it pushed. */
  gitRequests: { project: string; pushing: boolean; user: string | null }[];
  close(): Promise<void>;
}

/** GitLab's REST API (v4): the token in `PRIVATE-TOKEN`, notes and award emoji on merge requests and issues, commit statuses. */
export async function startFakeGitlab(token = 'glpat-fakegitlabtoken01234'): Promise<FakeGitlab> {
  const notes: TrackerComment[] = [];
  const awards: FakeGitlab['awards'] = [];
  const statuses: FakeGitlab['statuses'] = [];
  const mergeRequests: FakeGitlab['mergeRequests'] = [];
  const gitRequests: FakeGitlab['gitRequests'] = [];
  const repositories = gitRepositories(mkdtempSync(path.join(tmpdir(), 'fake-gitlab-')));
  let site = '';
  const server = createServer(async (req, res) => {
    const [pathname0, search = ''] = (req.url ?? '/').split('?');
    const git = /^\/(.+?)\.git(\/.*)$/.exec(pathname0);
    if (git) {
      const [user, password] = Buffer.from(/^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '', 'base64').toString().split(':');
      const pushing = (new URLSearchParams(search).get('service') ?? git[2].replace(/^\//, '')) === 'git-receive-pack';
      gitRequests.push({ project: git[1], pushing, user: user || null });
      if (user !== 'oauth2' || password !== token) {
        res.writeHead(401, { 'www-authenticate': 'Basic realm="GitLab"' });
        return res.end('HTTP Basic: Access denied');
      }
      return repositories.serve(req, res, git[1], git[2], search, user);
    }
    const body = await bodyOf(req);
    const answer = (status: number, data: Record<string, unknown>) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(data));
    if (req.headers['private-token'] !== token) return answer(401, { message: '401 Unauthorized' });
    const pathname = new URL(req.url ?? '/', 'http://gitlab').pathname.replace(/^\/api\/v4/, '');
    if (req.method === 'GET' && pathname === '/user') return answer(200, { id: 1, username: 'flows-bot', name: 'Flows' });
    const award = /^\/projects\/(\d+\/(?:merge_requests|issues)\/\d+(?:\/notes\/\d+)?)\/award_emoji$/.exec(pathname);
    if (req.method === 'POST' && award) {
      awards.push({ on: award[1], name: body.name });
      return answer(201, { id: awards.length, name: body.name });
    }
    const noted = /^\/projects\/(\d+\/(?:merge_requests|issues)\/\d+)\/notes$/.exec(pathname);
    if (req.method === 'POST' && noted) {
      const note = { issue: noted[1], id: String(9000 + notes.length), bodies: [body.body] };
      notes.push(note);
      return answer(201, { id: Number(note.id), body: body.body });
    }
    const edited = /^\/projects\/(\d+\/(?:merge_requests|issues)\/\d+)\/notes\/(\d+)$/.exec(pathname);
    if (req.method === 'PUT' && edited) {
      const note = notes.find((candidate) => candidate.issue === edited[1] && candidate.id === edited[2]);
      if (!note) return answer(404, { message: '404 Not found' });
      note.bodies.push(body.body);
      return answer(200, { id: Number(note.id), body: body.body });
    }
    const merges = /^\/projects\/([^/]+)\/merge_requests$/.exec(pathname);
    if (merges) {
      const project = decodeURIComponent(merges[1]);
      if (req.method === 'GET') {
        const source = new URL(req.url ?? '/', 'http://gitlab').searchParams.get('source_branch');
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(mergeRequests.filter((merge) => merge.project === project && merge.source === source).map((merge) => ({ iid: merge.iid, web_url: merge.url }))));
      }
      if (!repositories.branches(project)[body.source_branch]) return answer(422, { message: ['Source branch does not exist'] });
      const iid = mergeRequests.filter((merge) => merge.project === project).length + 1;
      const merge = { project, iid, url: `${site}/${project}/-/merge_requests/${iid}`, source: body.source_branch, target: body.target_branch, title: body.title, descriptions: [body.description] };
      mergeRequests.push(merge);
      return answer(201, { iid, web_url: merge.url });
    }
    const mergeEdit = /^\/projects\/([^/]+)\/merge_requests\/(\d+)$/.exec(pathname);
    if (req.method === 'PUT' && mergeEdit) {
      const merge = mergeRequests.find((candidate) => candidate.project === decodeURIComponent(mergeEdit[1]) && candidate.iid === Number(mergeEdit[2]));
      if (!merge) return answer(404, { message: '404 Not found' });
      merge.descriptions.push(body.description);
      return answer(200, { iid: merge.iid, web_url: merge.url });
    }
    const status = /^\/projects\/(\d+)\/statuses\/([0-9a-f]{40})$/.exec(pathname);
    if (req.method === 'POST' && status) {
      statuses.push({ projectId: status[1], sha: status[2], state: body.state, name: body.name, targetUrl: body.target_url });
      return answer(201, { id: statuses.length, status: body.state });
    }
    return answer(404, { message: '404 Not found' });
  });
  site = await listen(server);
  return { url: `${site}/api/v4`, token, notes, awards, statuses, mergeRequests, repositories, gitRequests, close: closer(server) };
}
