// Where a Slack, Linear or Jira delivery asked for the work (a message and its thread, an issue and the
// comment that asked), and the progress message in each one's markup: what reporting there needs without
// the network.
import { progressParts, type Progress } from '../lib/progress';

export interface SlackTarget {
  channel: string;
  /** The message that asked (an app mention, a message); null for a slash command, which has none. */
  ts: string | null;
  /** The thread the reply goes in: the asking message's thread, or the message itself; null for a slash command. */
  threadTs: string | null;
}

type Json = Record<string, unknown>;
const objectAt = (value: unknown): Json | null => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : null);
const textAt = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 ? value : null);

/** Where a run's Slack delivery asked for the work; null for a run something else started. */
export function slackTargetOf(context: Json): SlackTarget | null {
  if (objectAt(context.source)?.format !== 'slack') return null;
  const payload = objectAt(context.payload) ?? {};
  const event = objectAt(payload.event);
  if (event) {
    const channel = textAt(event.channel);
    const ts = textAt(event.ts);
    return channel && ts ? { channel, ts, threadTs: textAt(event.thread_ts) ?? ts } : null;
  }
  const channel = textAt(payload.channel_id);
  return channel ? { channel, ts: null, threadTs: null } : null;
}

/** Text as Slack shows it literally: its three control characters escaped. */
const escaped = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The progress reply in Slack's mrkdwn: the run's name, where it stands, its steps, and at the end its result. */
export function slackProgress(progress: Progress): string {
  const parts = progressParts(progress);
  const lines = [`*Flows: ${escaped(progress.runName)}*`, `*${parts.state}*${parts.timing} · <${progress.runUrl}|view the run>`];
  for (const step of parts.steps) lines.push(`• ${escaped(step)}`);
  if (parts.summary) lines.push('', escaped(parts.summary));
  if (parts.error) lines.push('', `> ${escaped(parts.error).replace(/\n/g, '\n> ')}`);
  if (parts.facts.length) lines.push('', ...parts.facts.map((fact) => `• ${escaped(fact)}`));
  return lines.join('\n').trim();
}

export interface LinearTarget {
  issueId: string;
  /** The comment that asked, when a comment delivery started the run. */
  commentId: string | null;
}

/** Where a run's Linear delivery asked for the work: its issue (a comment's issue); null for a run something else started. */
export function linearTargetOf(context: Json): LinearTarget | null {
  if (objectAt(context.source)?.format !== 'linear') return null;
  const payload = objectAt(context.payload) ?? {};
  const data = objectAt(payload.data) ?? {};
  if (payload.type === 'Comment') {
    const issueId = textAt(data.issueId);
    return issueId ? { issueId, commentId: textAt(data.id) } : null;
  }
  if (payload.type === 'Issue') {
    const issueId = textAt(data.id);
    return issueId ? { issueId, commentId: null } : null;
  }
  return null;
}

/** The issue a run's Jira delivery is about (its key); null for a run something else started. */
export function jiraIssueOf(context: Json): string | null {
  if (objectAt(context.source)?.format !== 'jira') return null;
  return textAt(objectAt(objectAt(context.payload)?.issue)?.key);
}

/** What Jira's wiki markup reads as markup (macros, links, tables, bold, italics): shown literally when escaped. */
const jiraEscaped = (text: string) => text.replace(/([{}[\]|*_])/g, '\\$1');

/** The progress comment in Jira's wiki markup (REST API v2). */
export function jiraProgress(progress: Progress): string {
  const parts = progressParts(progress);
  const lines = [`*Flows: ${jiraEscaped(progress.runName)}*`, `*${parts.state}*${parts.timing} · [view the run|${progress.runUrl}]`, ''];
  for (const step of parts.steps) lines.push(`* ${jiraEscaped(step)}`);
  if (parts.summary) lines.push('', jiraEscaped(parts.summary));
  if (parts.error) lines.push('', `{quote}${jiraEscaped(parts.error)}{quote}`);
  if (parts.facts.length) lines.push('', ...parts.facts.map((fact) => `* ${fact}`));
  return lines.join('\n').trim();
}

export interface GitlabTarget {
  projectId: number;
  kind: 'merge_requests' | 'issues';
  iid: number;
  /** The note that asked, when a note delivery started the run. */
  noteId: number | null;
  /** A merge request's head commit, when the delivery names it (its commit status follows the run). */
  sha: string | null;
}

const integerAt = (value: unknown): number | null => (typeof value === 'number' && Number.isInteger(value) ? value : null);

/** Where a run's GitLab delivery asked: a merge request or issue (a note's), with the note; null for a run something else started. */
export function gitlabTargetOf(context: Json): GitlabTarget | null {
  if (objectAt(context.source)?.format !== 'gitlab') return null;
  const payload = objectAt(context.payload) ?? {};
  const projectId = integerAt(objectAt(payload.project)?.id);
  const attributes = objectAt(payload.object_attributes) ?? {};
  if (projectId === null) return null;
  const on = (kind: GitlabTarget['kind'], of: Json | null, noteId: number | null): GitlabTarget | null => {
    const iid = integerAt(of?.iid);
    return iid === null ? null : { projectId, kind, iid, noteId, sha: kind === 'merge_requests' ? textAt(objectAt(of?.last_commit)?.id) : null };
  };
  switch (payload.object_kind) {
    case 'note': {
      const noteId = integerAt(attributes.id);
      if (attributes.noteable_type === 'MergeRequest') return on('merge_requests', objectAt(payload.merge_request), noteId);
      if (attributes.noteable_type === 'Issue') return on('issues', objectAt(payload.issue), noteId);
      return null;
    }
    case 'merge_request':
      return on('merge_requests', attributes, null);
    case 'issue':
    case 'work_item':
      return on('issues', attributes, null);
    default:
      return null;
  }
}
