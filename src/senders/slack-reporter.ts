// Answering where the work was asked, on Slack (`report.senderConnectionId` on a job, a Slack connection):
// 👀 on the message that asked, one reply in its thread (for a slash command, a message in the channel)
// edited in place as the run advances, at most once every few seconds, ending with the result. Each part
// that fails is recorded in the run's trace once, and the run goes on as if nothing happened.
import type { components } from '../../generated/openapi';
import type { TenantDb } from '../db/tenant-scope';
import { coalescedEdits, reportAttempts, trackProgress, type FinalReport, type Reporter, type ReportRecord } from '../lib/progress';
import { clip } from '../lib/text';
import type { SendersService } from './senders-service';
import { SlackFailure } from './slack-api';
import { slackProgress, slackTargetOf } from './slack-report-fns';

type JobReport = components['schemas']['JobReport'];

const message = (err: unknown) => (err instanceof SlackFailure ? err.message : `internal error: ${clip((err as Error).message)}`);

export function createSlackReporting({ senders, baseUrl, editEveryMs = 3_000 }: { senders: Pick<SendersService, 'slack'>; baseUrl: URL; editEveryMs?: number }) {
  return {
    /** Starts reporting for a run a Slack delivery started; null when there is nowhere or no way to report (the trace says which). */
    async open(db: TenantDb, settings: JobReport & { senderConnectionId: string }, context: Record<string, unknown>, run: { id: string; name: string; attempt: number }, record: ReportRecord): Promise<Reporter | null> {
      const target = slackTargetOf(context);
      if (!target) {
        record({ action: 'skipped', message: 'The run was not started by a Slack message or command: there is nowhere to report.' });
        return null;
      }
      const slack = await senders.slack(db, settings.senderConnectionId);
      if ('problem' in slack) {
        record({ action: 'skipped', ok: false, message: slack.problem });
        return null;
      }
      const { api } = slack;
      const progress = trackProgress(run.name, new URL(`/console/runs/${run.id}`, baseUrl).href);
      const attempt = reportAttempts(record, message);

      // A run tried again reacts once, on its first attempt.
      if (settings.reaction !== false && target.ts && run.attempt === 1) await attempt('reaction', () => api.react(target.channel, target.ts!, 'eyes'));
      const text = (final: FinalReport | null) => slackProgress(progress.at(final));
      let reply: { ts: string } | null = null;
      if (settings.comment !== false) {
        await attempt('reply', async () => {
          reply = await api.post(target.channel, target.threadTs, text(null));
          return { ts: reply.ts };
        });
      }
      const posted = reply as { ts: string } | null;
      const edits = posted && coalescedEdits((final) => api.edit(target.channel, posted.ts, text(final)).then(() => {}), (err) => record({ action: 'reply', ok: false, message: message(err) }), editEveryMs);

      return {
        token: slack.token,
        observe(type, data) {
          if (progress.observe(type, data)) edits?.soon();
        },
        async finish(final) {
          await edits?.final(final);
        },
      };
    },
  };
}

export type SlackReporting = ReturnType<typeof createSlackReporting>;
