// The Linear GraphQL API calls reporting needs, as an API key speaks them: who the key is (`viewer`), a
// reaction, a comment on an issue and that comment edited, and the issue moved to a workflow state named
// by the job. Every call goes through the outbound guard; Linear answers refusals as GraphQL `errors`.
import type { Outbound } from '../lib/outbound';
import { clip } from '../lib/text';
import { SenderFailure } from './sender-failure';

const CALL_TIMEOUT_MS = 30_000;
export const LINEAR_API = 'https://api.linear.app/graphql';


export function createLinearApi(outbound: Pick<Outbound, 'fetch'>, apiUrl: string, token: string) {
  async function call<T>(what: string, query: string, variables: Record<string, unknown> = {}): Promise<T> {
    let answer: { data?: T; errors?: { message?: string }[] };
    try {
      const res = await outbound.fetch(apiUrl, {
        method: 'POST',
        // A personal API key goes as it is; an OAuth token with its scheme.
        headers: { authorization: token.startsWith('lin_oauth_') ? `Bearer ${token}` : token, 'content-type': 'application/json' },
        body: JSON.stringify({ query, variables }),
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      });
      answer = (await res.json().catch(() => ({}))) as typeof answer;
      if (!res.ok && !answer.errors?.length) throw new SenderFailure(`${what}: Linear answered ${res.status}`);
    } catch (err) {
      if (err instanceof SenderFailure) throw err;
      throw new SenderFailure(`${what}: Linear could not be reached (${clip((err as Error).message)})`);
    }
    if (answer.errors?.length || !answer.data) throw new SenderFailure(`${what}: Linear answered "${clip(answer.errors?.[0]?.message ?? 'no data')}"`);
    return answer.data;
  }

  return {
    whoAmI: () => call<{ viewer: { name: string; organization?: { name: string } } }>('Linear did not accept the key', 'query { viewer { name organization { name } } }').then(({ viewer }) => ({ user: viewer.name, organization: viewer.organization?.name ?? '?' })),
    react: (on: { issueId: string } | { commentId: string }) => call('Reacting failed', 'mutation ($input: ReactionCreateInput!) { reactionCreate(input: $input) { success } }', { input: { ...on, emoji: 'eyes' } }),
    comment: (issueId: string, body: string) =>
      call<{ commentCreate: { comment: { id: string } } }>('Commenting failed', 'mutation ($input: CommentCreateInput!) { commentCreate(input: $input) { success comment { id } } }', { input: { issueId, body } }).then((data) => data.commentCreate.comment.id),
    editComment: (id: string, body: string) => call('Editing the comment failed', 'mutation ($id: String!, $input: CommentUpdateInput!) { commentUpdate(id: $id, input: $input) { success } }', { id, input: { body } }),
    /** Moves the issue to its team's workflow state named `name`; false when the team has none by that name. */
    async moveTo(issueId: string, name: string): Promise<boolean> {
      const { issue } = await call<{ issue: { team: { states: { nodes: { id: string; name: string }[] } } } }>('Reading the issue\'s workflow states failed', 'query ($id: String!) { issue(id: $id) { team { states { nodes { id name } } } } }', { id: issueId });
      const state = issue.team.states.nodes.find((candidate) => candidate.name.toLowerCase() === name.toLowerCase());
      if (!state) return false;
      await call('Moving the issue failed', 'mutation ($id: String!, $input: IssueUpdateInput!) { issueUpdate(id: $id, input: $input) { success } }', { id: issueId, input: { stateId: state.id } });
      return true;
    },
  };
}

export type LinearApi = ReturnType<typeof createLinearApi>;
