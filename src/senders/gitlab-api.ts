// The GitLab REST API (v4) calls reporting and workspaces need, as an access token speaks them (a project,
// group or personal access token, in `PRIVATE-TOKEN`): who the token is, an award emoji, a note on a merge
// request or issue and that note edited, a commit status, and a merge request opened or updated. Self-managed instances answer the same way under their
// own URL. Every call goes through the outbound guard.
import type { Outbound } from '../lib/outbound';
import { clip } from '../lib/text';
import { SenderFailure } from './sender-failure';

const CALL_TIMEOUT_MS = 30_000;
export const GITLAB_API = 'https://gitlab.com/api/v4';


/** A GitLab's site, from its API (`https://gitlab.example.com/api/v4` → `https://gitlab.example.com`). */
export const siteOf = (apiBaseUrl: string) => apiBaseUrl.replace(/\/+$/, '').replace(/\/api\/v4$/, '');

/** What a note is on: a merge request or an issue of a project, by its number in the project. */
export interface Noteable {
  projectId: number;
  kind: 'merge_requests' | 'issues';
  iid: number;
}

export type CommitState = 'running' | 'success' | 'failed' | 'canceled';

export function createGitlabApi(outbound: Pick<Outbound, 'fetch'>, apiBaseUrl: string, token: string) {
  async function call<T>(what: string, method: string, pathname: string, body?: unknown): Promise<T> {
    let res: Awaited<ReturnType<Outbound['fetch']>>;
    try {
      res = await outbound.fetch(`${apiBaseUrl.replace(/\/+$/, '')}${pathname}`, {
        method,
        headers: { 'private-token': token, accept: 'application/json', ...(body !== undefined && { 'content-type': 'application/json' }) },
        ...(body !== undefined && { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      });
    } catch (err) {
      throw new SenderFailure(`${what}: GitLab could not be reached (${clip((err as Error).message)})`);
    }
    const answer = (await res.json().catch(() => ({}))) as { message?: unknown; error?: unknown } & T;
    if (!res.ok) {
      const said = answer.message ?? answer.error;
      throw new SenderFailure(`${what}: GitLab answered ${res.status}${said ? ` (${clip(typeof said === 'string' ? said : JSON.stringify(said))})` : ''}`);
    }
    return answer;
  }
  const on = ({ projectId, kind, iid }: Noteable) => `/projects/${projectId}/${kind}/${iid}`;

  return {
    whoAmI: () => call<{ username?: string; name?: string }>('GitLab did not accept the token', 'GET', '/user').then((me) => ({ user: me.username ?? me.name ?? '?' })),
    /** 👀 on the note that asked, or on the merge request or issue itself. */
    react: (noteable: Noteable, noteId: number | null) => call('Reacting failed', 'POST', `${on(noteable)}${noteId === null ? '' : `/notes/${noteId}`}/award_emoji`, { name: 'eyes' }),
    note: (noteable: Noteable, body: string) => call<{ id: number }>('Commenting failed', 'POST', `${on(noteable)}/notes`, { body }).then((made) => String(made.id)),
    editNote: (noteable: Noteable, id: string, body: string) => call('Editing the note failed', 'PUT', `${on(noteable)}/notes/${encodeURIComponent(id)}`, { body }),
    /** Opens the merge request of `branch` into `base`, or updates the description of the one open for it. */
    async mergeRequest(project: string, { branch, base, title, body }: { branch: string; base: string | null; title: string; body: string }): Promise<{ url: string; number: number; action: 'opened' | 'updated' }> {
      const id = encodeURIComponent(project);
      const [open] = await call<{ iid: number; web_url: string }[]>('Finding the open merge request failed', 'GET', `/projects/${id}/merge_requests?state=opened&source_branch=${encodeURIComponent(branch)}`);
      if (open) {
        await call('Updating the merge request failed', 'PUT', `/projects/${id}/merge_requests/${open.iid}`, { description: body });
        return { url: open.web_url, number: open.iid, action: 'updated' };
      }
      if (!base) throw new SenderFailure(`${project} has no default branch to open the merge request against.`);
      const made = await call<{ iid: number; web_url: string }>('Opening the merge request failed', 'POST', `/projects/${id}/merge_requests`, { source_branch: branch, target_branch: base, title, description: body });
      return { url: made.web_url, number: made.iid, action: 'opened' };
    },
    status: (projectId: number, sha: string, state: CommitState, name: string, targetUrl: string, description: string) =>
      call('Setting the commit status failed', 'POST', `/projects/${projectId}/statuses/${encodeURIComponent(sha)}`, { state, name, target_url: targetUrl, description: clip(description) }),
  };
}

export type GitlabApi = ReturnType<typeof createGitlabApi>;
