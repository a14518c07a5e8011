// Answering where the work was asked, on Slack, Linear, Jira and GitLab (`report.senderConnectionId` on a
// job): 👀 on what asked (a Slack message, a Linear comment or issue, a GitLab note or merge request), one
// reply in its thread or one comment (note) on the issue or merge request, edited in place as the run
// advances (at most once every few seconds), ending with the result; on Linear the issue then moves to the
// job's `successState`, on GitLab a merge request's head commit gets a status that follows the run. Each
// part that fails is recorded in the run's trace once, and the run goes on as if nothing happened.
import type { components } from '../../generated/openapi';
import type { TenantDb } from '../db/tenant-scope';
import { coalescedEdits, progressBody, reportAttempts, trackProgress, type FinalReport, type Progress, type Reporter, type ReportRecord } from '../lib/progress';
import { clip } from '../lib/text';
import type { CommitState } from './gitlab-api';
import { gitlabTargetOf, jiraIssueOf, jiraProgress, linearTargetOf, slackProgress, slackTargetOf } from './report-fns';
import type { Connected, SendersService } from './senders-service';
import { SenderFailure } from './sender-failure';

type JobReport = components['schemas']['JobReport'];

/** How one sender shows a run: what asked gets a reaction, the progress is posted once and edited. */
interface ReportChannel {
  /** Where the progress goes, as the trace names the part (`reply` in a Slack thread, `comment` on an issue). */
  part: 'reply' | 'comment';
  react: (() => Promise<unknown>) | null;
  post(text: string): Promise<string>;
  edit(ref: string, text: string): Promise<unknown>;
  render(progress: Progress): string;
  /** After the first post: what else the run's start does there (a GitLab commit status), as recorded. */
  started?(): Promise<Record<string, unknown> | null>;
  /** After the final edit: what else the run's end does there (a Linear issue's new state, a GitLab commit status), as recorded. */
  ended?(final: FinalReport): Promise<Record<string, unknown> | null>;
}

/** A GitLab commit status for a run's state. */
const commitState = (state: string): CommitState => (state === 'succeeded' ? 'success' : state === 'canceled' || state === 'expired' ? 'canceled' : state === 'queued' ? 'running' : 'failed');

const message = (err: unknown) => (err instanceof SenderFailure ? err.message : `internal error: ${clip((err as Error).message)}`);

/** The channel to the place a run's delivery asked, through the connection; null when the delivery names none. */
function channelOf(connected: Connected, context: Record<string, unknown>, settings: JobReport, run: { jobName: string; url: string }): ReportChannel | null {
  switch (connected.kind) {
    case 'slack': {
      const target = slackTargetOf(context);
      if (!target) return null;
      const { api } = connected;
      return {
        part: 'reply',
        react: target.ts ? () => api.react(target.channel, target.ts!, 'eyes') : null,
        post: async (text) => (await api.post(target.channel, target.threadTs, text)).ts,
        edit: (ts, text) => api.edit(target.channel, ts, text),
        render: slackProgress,
      };
    }
    case 'linear': {
      const target = linearTargetOf(context);
      if (!target) return null;
      const { api } = connected;
      return {
        part: 'comment',
        react: () => api.react(target.commentId ? { commentId: target.commentId } : { issueId: target.issueId }),
        post: (text) => api.comment(target.issueId, text),
        edit: (id, text) => api.editComment(id, text),
        render: progressBody,
        ended: async (final) => {
          if (!settings.successState || final.state !== 'succeeded') return null;
          const moved = await api.moveTo(target.issueId, settings.successState);
          return moved ? { action: 'state', ok: true, state: settings.successState } : { action: 'state', ok: false, message: `The issue's team has no workflow state named "${clip(settings.successState)}".` };
        },
      };
    }
    case 'jira': {
      const issue = jiraIssueOf(context);
      if (!issue) return null;
      const { api } = connected;
      return { part: 'comment', react: null, post: (text) => api.comment(issue, text), edit: (id, text) => api.editComment(issue, id, text), render: jiraProgress };
    }
    case 'gitlab': {
      const target = gitlabTargetOf(context);
      if (!target) return null;
      const { api } = connected;
      // A merge request's head commit gets a status that follows the run, unless the job turns it off.
      const sha = settings.checkRun !== false ? target.sha : null;
      const status = (state: CommitState, description: string) => api.status(target.projectId, sha!, state, `Flows: ${run.jobName}`, run.url, description);
      return {
        part: 'comment',
        react: () => api.react(target, target.noteId),
        post: (text) => api.note(target, text),
        edit: (id, text) => api.editNote(target, id, text),
        render: progressBody,
        ...(sha && {
          started: async () => (await status('running', 'The run is under way'), { action: 'commit_status', ok: true, state: 'running' }),
          ended: async (final: FinalReport) => {
            const state = commitState(final.state);
            await status(state, final.state === 'succeeded' ? 'The run succeeded' : `The run ${final.state.replace('_', ' ')}`);
            return { action: 'commit_status', ok: true, state };
          },
        }),
      };
    }
  }
}

export function createSenderReporting({ senders, baseUrl, editEveryMs = 3_000 }: { senders: Pick<SendersService, 'connect'>; baseUrl: URL; editEveryMs?: number }) {
  return {
    /** Starts reporting for a run a Slack, Linear, Jira or GitLab delivery started; null when there is nowhere or no way to report (the trace says which). */
    async open(db: TenantDb, settings: JobReport & { senderConnectionId: string }, context: Record<string, unknown>, run: { id: string; name: string; jobName: string; attempt: number }, record: ReportRecord): Promise<Reporter | null> {
      const connected = await senders.connect(db, settings.senderConnectionId);
      if ('problem' in connected) {
        record({ action: 'skipped', ok: false, message: connected.problem });
        return null;
      }
      const format = (context.source as { format?: string } | undefined)?.format;
      const runUrl = new URL(`/console/runs/${run.id}`, baseUrl).href;
      const channel = format === connected.kind ? channelOf(connected, context, settings, { jobName: run.jobName, url: runUrl }) : null;
      if (!channel) {
        record({ action: 'skipped', message: `The run was not started by a ${connected.kind} delivery about a message or an issue: the ${connected.kind} connection has nowhere to report.` });
        return null;
      }
      const progress = trackProgress(run.name, runUrl);
      const attempt = reportAttempts(record, message);
      const text = (final: FinalReport | null) => channel.render(progress.at(final));

      // A run tried again reacts once, on its first attempt.
      if (settings.reaction !== false && channel.react && run.attempt === 1) await attempt('reaction', async () => void (await channel.react!()));
      let posted: string | null = null;
      if (settings.comment !== false) {
        await attempt(channel.part, async () => {
          posted = await channel.post(text(null));
        });
      }
      const ref = posted as string | null;
      const also = async (part: 'start' | 'end', work: () => Promise<Record<string, unknown> | null>) => {
        const done = await work().catch((err) => ({ action: part === 'start' ? 'commit_status' : 'state', ok: false, message: message(err) }));
        if (done) record(done);
      };
      if (channel.started) await also('start', channel.started);
      const edits = ref !== null ? coalescedEdits((final) => channel.edit(ref, text(final)).then(() => {}), (err) => record({ action: channel.part, ok: false, message: message(err) }), editEveryMs) : null;

      return {
        token: connected.token,
        observe(type, data) {
          if (progress.observe(type, data)) edits?.soon();
        },
        async finish(final) {
          await edits?.final(final);
          if (channel.ended) await also('end', () => channel.ended!(final));
        },
      };
    },
  };
}

export type SenderReporting = ReturnType<typeof createSenderReporting>;
