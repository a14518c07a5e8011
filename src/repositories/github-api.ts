// The GitHub REST API as a GitHub App speaks it: as the app (an RS256 JWT its private key signs, through
// @octokit/auth-app) to find its installations and mint installation tokens, and with an installation token
// for the one repository a run works on. Every call goes through the outbound guard, like every URL a
// tenant gives. Octokit's packages load on first use: a server that never talks to GitHub does not pay for them.
import type { Outbound } from '../lib/outbound';
import { clip } from '../lib/text';

const CALL_TIMEOUT_MS = 30_000;

export interface AppCredentials {
  appId: number;
  privateKey: string;
  apiBaseUrl: string;
}

/** What a run's token may do: reading is enough for a patch; pushing needs contents, a pull request more. */
export type Permissions = Partial<Record<'contents' | 'pull_requests' | 'issues' | 'checks' | 'metadata', 'read' | 'write'>>;

/** A call GitHub refused or that did not reach it; the message says which and why, never a credential. */
export class GithubFailure extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }
}

export interface PullRequest {
  number: number;
  url: string;
  base: string;
}

const failure = (what: string, err: unknown): GithubFailure => {
  const status = typeof (err as { status?: unknown }).status === 'number' ? (err as { status: number }).status : null;
  const said = (err as { response?: { data?: { message?: unknown } } }).response?.data?.message;
  const why = typeof said === 'string' ? said : (err as Error).message;
  return new GithubFailure(`${what}: ${status ? `GitHub answered ${status}` : 'GitHub could not be reached'}${why ? ` (${clip(String(why))})` : ''}`, status);
};

async function call<T>(what: string, request: () => Promise<{ data: T }>): Promise<T> {
  try {
    return (await request()).data;
  } catch (err) {
    throw failure(what, err);
  }
}

export function createGithubApi(outbound: Outbound) {
  const requestFor = async (apiBaseUrl: string) => {
    const { request } = await import('@octokit/request');
    // A call GitHub does not answer ends, so that a run never waits on it for long.
    const fetch = (url: string, init?: Parameters<Outbound['fetch']>[1]) => outbound.fetch(url, { ...init, signal: init?.signal ?? AbortSignal.timeout(CALL_TIMEOUT_MS) });
    return request.defaults({ baseUrl: apiBaseUrl.replace(/\/+$/, ''), headers: { 'user-agent': 'flows' }, request: { fetch } });
  };

  return {
    /** The app, as itself. */
    async asApp({ appId, privateKey, apiBaseUrl }: AppCredentials) {
      const [{ createAppAuth }, request] = await Promise.all([import('@octokit/auth-app'), requestFor(apiBaseUrl)]);
      const auth = createAppAuth({ appId, privateKey, request });
      const app = request.defaults({ request: { hook: auth.hook } });
      return {
        about: () => call('GitHub did not accept the app\'s token', () => app('GET /app')).then((data) => ({ slug: data?.slug ?? null, name: data?.name ?? null })),
        installations: () => call('Listing the app\'s installations failed', () => app('GET /app/installations', { per_page: 100 })),
        /** The installation that reaches `owner/repo`, or null when the app is not installed there. */
        async installationOf(owner: string, repo: string): Promise<number | null> {
          try {
            return (await app('GET /repos/{owner}/{repo}/installation', { owner, repo })).data.id;
          } catch (err) {
            if ((err as { status?: number }).status === 404) return null;
            throw failure(`Finding the app's installation on ${owner}/${repo} failed`, err);
          }
        },
        /** A token of the installation, for the repositories named (all it reaches when none) with the permissions given. */
        async token(installationId: number, repositoryNames?: string[], permissions?: Permissions): Promise<{ token: string; expiresAt: string }> {
          try {
            const minted = await auth({ type: 'installation', installationId, repositoryNames, permissions, refresh: true });
            return { token: minted.token, expiresAt: minted.expiresAt };
          } catch (err) {
            throw failure(`Minting an installation token failed`, err);
          }
        },
      };
    },

    /** The API with an installation token. */
    async withToken(apiBaseUrl: string, token: string) {
      const api = (await requestFor(apiBaseUrl)).defaults({ headers: { authorization: `token ${token}` } });
      return {
        repositories: () => call('Listing the installation\'s repositories failed', () => api('GET /installation/repositories', { per_page: 100 })),
        /** Ends the token before its hour is up. */
        revoke: () => call('Revoking the token failed', () => api('DELETE /installation/token')),
        /** The open pull request from `branch`, or null. */
        async openPullRequest(owner: string, repo: string, branch: string): Promise<PullRequest | null> {
          const found = await call('Looking for the branch\'s pull request failed', () => api('GET /repos/{owner}/{repo}/pulls', { owner, repo, head: `${owner}:${branch}`, state: 'open', per_page: 1 }));
          const pull = found[0];
          return pull ? { number: pull.number, url: pull.html_url, base: pull.base.ref } : null;
        },
        async openPull(owner: string, repo: string, pull: { title: string; body: string; head: string; base: string }): Promise<PullRequest> {
          const made = await call('Opening the pull request failed', () => api('POST /repos/{owner}/{repo}/pulls', { owner, repo, ...pull }));
          return { number: made.number, url: made.html_url, base: made.base.ref };
        },
        async updatePull(owner: string, repo: string, number: number, body: string): Promise<void> {
          await call('Updating the pull request failed', () => api('PATCH /repos/{owner}/{repo}/pulls/{pull_number}', { owner, repo, pull_number: number, body }));
        },
        /** 👀 on the comment that asked, or on the issue or pull request itself. */
        async react(owner: string, repo: string, on: { comment: { id: number; review: boolean } | null; number: number | null }): Promise<void> {
          const what = 'Reacting failed';
          if (on.comment?.review) await call(what, () => api('POST /repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions', { owner, repo, comment_id: on.comment!.id, content: 'eyes' }));
          else if (on.comment) await call(what, () => api('POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions', { owner, repo, comment_id: on.comment!.id, content: 'eyes' }));
          else if (on.number !== null) await call(what, () => api('POST /repos/{owner}/{repo}/issues/{issue_number}/reactions', { owner, repo, issue_number: on.number!, content: 'eyes' }));
        },
        async comment(owner: string, repo: string, number: number, body: string): Promise<{ id: number; url: string }> {
          const made = await call('Commenting failed', () => api('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', { owner, repo, issue_number: number, body }));
          return { id: Number(made.id), url: made.html_url };
        },
        async editComment(owner: string, repo: string, id: number, body: string): Promise<void> {
          await call('Editing the progress comment failed', () => api('PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}', { owner, repo, comment_id: id, body }));
        },
        async headOf(owner: string, repo: string, number: number): Promise<string> {
          return (await call('Reading the pull request failed', () => api('GET /repos/{owner}/{repo}/pulls/{pull_number}', { owner, repo, pull_number: number }))).head.sha;
        },
        async startCheck(owner: string, repo: string, check: { name: string; headSha: string; detailsUrl: string }): Promise<{ id: number; url: string }> {
          const made = await call('Creating the check run failed', () =>
            api('POST /repos/{owner}/{repo}/check-runs', { owner, repo, name: check.name, head_sha: check.headSha, status: 'in_progress', details_url: check.detailsUrl, started_at: new Date().toISOString() }),
          );
          return { id: Number(made.id), url: made.html_url ?? check.detailsUrl };
        },
        async endCheck(owner: string, repo: string, id: number, end: { conclusion: 'success' | 'failure' | 'cancelled' | 'timed_out'; title: string; summary: string }): Promise<void> {
          await call('Completing the check run failed', () =>
            api('PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}', { owner, repo, check_run_id: id, status: 'completed', conclusion: end.conclusion, completed_at: new Date().toISOString(), output: { title: end.title, summary: end.summary } }),
          );
        },
      };
    },
  };
}

export type GithubApi = ReturnType<typeof createGithubApi>;
