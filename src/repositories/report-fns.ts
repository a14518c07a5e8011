// What answering where the work was asked needs without the network: where a GitHub delivery asked (the
// repository, the issue or pull request, the comment, the head commit), what a trace event says as a step,
// and the progress comment's text at each point of the run.
import { clip } from '../lib/text';
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

/** What a trace event tells of the run's progress: a milestone kept in the list, or the current step. */
export function stepOf(type: string, data: Json): { milestone: string } | { current: string } | null {
  const text = (value: unknown) => (typeof value === 'string' ? clip(value.replace(/\s+/g, ' ')) : '');
  if (type === 'workspace') {
    if (data.step === 'cloned') return { milestone: `Cloned ${text(data.repository)} at \`${text(data.ref)}\`${data.continued ? ' (continuing its branch)' : ''}` };
    if (data.step === 'committed') return { milestone: `Committed ${data.files} file${data.files === 1 ? '' : 's'} (+${data.insertions} −${data.deletions})` };
    if (data.step === 'pushed') return { milestone: `Pushed \`${text(data.branch)}\`` };
    if (data.step === 'pull_request') return { milestone: `${data.action === 'updated' ? 'Updated' : 'Opened'} pull request #${data.number}` };
    if (data.step === 'unchanged') return { milestone: 'No file changed: nothing to push' };
    if (data.step === 'failed') return { milestone: `⚠️ ${text(data.message)}` };
  }
  if (type === 'command') return { current: `Ran \`${text(data.command)}\`` };
  if (type === 'file_change') return { current: `Changed \`${text(data.path)}\`` };
  if (type === 'tool_call') return { current: `Used ${text(data.name)}` };
  if (type === 'session_started' || (type === 'state_changed' && data.to === 'running')) return { current: 'The agent is working' };
  return null;
}

/** A duration as people say it: 45 s, 3 min 12 s, 1 h 4 min. */
export function elapsed(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

export interface FinalReport {
  state: string;
  error: string | null;
  summary: string | null;
  pullRequestUrl: string | null;
  spent: string | null;
}

const STATE_WORDS: Record<string, string> = { succeeded: '✅ Succeeded', failed: '❌ Failed', timed_out: '⏱️ Timed out', canceled: '⏹️ Stopped', expired: '⏹️ Expired', queued: '🔁 Trying again' };

/** The progress comment: the run's name, where it stands, its milestones and current step, and at the end its result. */
export function progressBody({ runName, runUrl, elapsedMs, milestones, current, final }: { runName: string; runUrl: string; elapsedMs: number; milestones: string[]; current: string | null; final: FinalReport | null }): string {
  const status = final ? `**${STATE_WORDS[final.state] ?? final.state}** after ${elapsed(elapsedMs)}` : `**⏳ Working** · ${elapsed(elapsedMs)}`;
  const lines = [`### Flows: ${runName}`, `${status} · [view the run](${runUrl})`, ''];
  for (const milestone of milestones) lines.push(`- ${milestone}`);
  if (!final && current) lines.push(`- ${current} …`);
  if (final) {
    if (final.summary) lines.push('', final.summary);
    if (final.error && final.state !== 'succeeded') lines.push('', `> ${final.error.replace(/\n/g, '\n> ')}`);
    const facts = [...(final.pullRequestUrl ? [`Pull request: ${final.pullRequestUrl}`] : []), ...(final.spent ? [`Spent: ${final.spent}`] : [])];
    if (facts.length) lines.push('', ...facts.map((fact) => `- ${fact}`));
  }
  return lines.join('\n').trim();
}

/** A check run's conclusion for a run's final state. */
export const conclusionOf = (state: string): 'success' | 'failure' | 'cancelled' | 'timed_out' =>
  state === 'succeeded' ? 'success' : state === 'timed_out' ? 'timed_out' : state === 'canceled' || state === 'expired' ? 'cancelled' : 'failure';
