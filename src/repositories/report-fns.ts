// Where a GitHub delivery asked for the work (the repository, the issue or pull request, the comment, the
// head commit), and a check run's conclusion: what reporting on GitHub needs without the network.
import { parseRepository } from './workspace-fns';

export interface GithubTarget {
  owner: string;
  name: string;
  /** The issue or pull request the run was asked on; null for a delivery about neither (a push). */
  number: number | null;
  /** The comment that asked (`review`: a comment on a pull request's diff), or null. */
  comment: { id: number; review: boolean } | null;
  isPullRequest: boolean;
  /** The pull request's head commit, when the delivery names it. */
  headSha: string | null;
}

type Json = Record<string, unknown>;
const objectAt = (value: unknown): Json | null => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : null);
const numberAt = (value: unknown): number | null => (typeof value === 'number' && Number.isInteger(value) ? value : null);

/** Where a run's GitHub delivery asked for the work; null for a run something else started. */
export function githubTargetOf(context: Json): GithubTarget | null {
  if (objectAt(context.source)?.format !== 'github') return null;
  const payload = objectAt(context.payload) ?? {};
  const fullName = objectAt(payload.repository)?.full_name;
  const repository = typeof fullName === 'string' ? parseRepository(fullName) : null;
  if (!repository || repository.site) return null;
  const issue = objectAt(payload.issue);
  const pull = objectAt(payload.pull_request);
  const comment = objectAt(payload.comment);
  const commentId = numberAt(comment?.id);
  const headSha = objectAt(pull?.head)?.sha;
  return {
    owner: repository.owner,
    name: repository.name,
    number: numberAt(issue?.number) ?? numberAt(pull?.number),
    comment: commentId === null ? null : { id: commentId, review: context.event === 'pull_request_review_comment' },
    isPullRequest: Boolean(pull || issue?.pull_request),
    headSha: typeof headSha === 'string' ? headSha : null,
  };
}

/** A check run's conclusion for a run's final state. */
export const conclusionOf = (state: string): 'success' | 'failure' | 'cancelled' | 'timed_out' =>
  state === 'succeeded' ? 'success' : state === 'timed_out' ? 'timed_out' : state === 'canceled' || state === 'expired' ? 'cancelled' : 'failure';
