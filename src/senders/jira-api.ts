// The Jira Cloud REST API calls reporting needs, as an API token speaks them (Basic authentication with the
// account's email): who the token is (`myself`), and a comment on an issue and that comment edited. Every
// call goes through the outbound guard.
import type { Outbound } from '../lib/outbound';
import { clip } from '../lib/text';
import { SenderFailure } from './sender-failure';

const CALL_TIMEOUT_MS = 30_000;


export function createJiraApi(outbound: Pick<Outbound, 'fetch'>, site: string, login: string, token: string) {
  const authorization = `Basic ${Buffer.from(`${login}:${token}`).toString('base64')}`;
  async function call<T>(what: string, method: string, pathname: string, body?: unknown): Promise<T> {
    let res: Awaited<ReturnType<Outbound['fetch']>>;
    try {
      res = await outbound.fetch(`${site.replace(/\/+$/, '')}${pathname}`, {
        method,
        headers: { authorization, accept: 'application/json', ...(body !== undefined && { 'content-type': 'application/json' }) },
        ...(body !== undefined && { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      });
    } catch (err) {
      throw new SenderFailure(`${what}: Jira could not be reached (${clip((err as Error).message)})`);
    }
    const answer = (await res.json().catch(() => ({}))) as { errorMessages?: string[] } & T;
    if (!res.ok) throw new SenderFailure(`${what}: Jira answered ${res.status}${answer.errorMessages?.[0] ? ` ("${clip(answer.errorMessages[0])}")` : ''}`);
    return answer;
  }

  return {
    whoAmI: () => call<{ displayName?: string }>('Jira did not accept the token', 'GET', '/rest/api/2/myself').then((me) => ({ user: me.displayName ?? login })),
    comment: (issueKey: string, body: string) => call<{ id: string }>('Commenting failed', 'POST', `/rest/api/2/issue/${encodeURIComponent(issueKey)}/comment`, { body }).then((made) => made.id),
    editComment: (issueKey: string, id: string, body: string) => call('Editing the comment failed', 'PUT', `/rest/api/2/issue/${encodeURIComponent(issueKey)}/comment/${encodeURIComponent(id)}`, { body }),
  };
}

export type JiraApi = ReturnType<typeof createJiraApi>;
