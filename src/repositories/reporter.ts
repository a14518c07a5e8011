// Answering where the work was asked (`report` on a job), on GitHub: as a run starts, 👀 on what asked for
// it, one progress comment and a check run on the pull request's head commit; as it advances, the comment
// edited in place (at most one edit every few seconds, the latest state winning); at its end, the comment's
// final text and the check run's conclusion. The token is the app's, minted for the one repository. Each
// part that fails is recorded in the run's trace once, and the run goes on as if nothing happened.
import type { components } from '../../generated/openapi';
import type { TenantDb } from '../db/tenant-scope';
import { clip } from '../lib/text';
import { GithubFailure, type Permissions } from './github-api';
import type { GithubAppsService } from './github-apps-service';
import { conclusionOf, githubTargetOf, progressBody, stepOf, type FinalReport } from './report-fns';
import { deliveredInstallation } from './workspace-fns';

type JobReport = components['schemas']['JobReport'];

export interface Reporter {
  /** The token reporting uses, which the run's trace must never show (masked like a secret). */
  token: string;
  /** A trace event of the run: a milestone or the current step, shown at the next edit. */
  observe(type: string, data: Record<string, unknown>): void;
  /** The run ended (or goes back to the queue): the final edit and the check run's conclusion, awaited. */
  finish(final: FinalReport): Promise<void>;
}

/** What reporting records in the run's trace (`report` events). */
export type ReportRecord = (data: Record<string, unknown>) => void;

const message = (err: unknown) => (err instanceof GithubFailure ? err.message : `internal error: ${clip((err as Error).message)}`);

export function createReporting({ apps, baseUrl, editEveryMs = 3_000 }: { apps: Pick<GithubAppsService, 'accessTo' | 'github'>; baseUrl: URL; editEveryMs?: number }) {
  return {
    /**
     * Starts reporting for a run with `context` (what its trigger saw), as `settings` say; null when there is
     * nowhere to report (a run no GitHub delivery started) or no way to (the app's token was refused): the
     * trace says which.
     */
    async open(db: TenantDb, settings: JobReport & { githubAppId: string }, context: Record<string, unknown>, run: { id: string; name: string; jobName: string; attempt: number }, record: ReportRecord): Promise<Reporter | null> {
      const target = githubTargetOf(context);
      if (!target) {
        record({ action: 'skipped', message: 'The run was not started by a GitHub delivery about a repository: there is nowhere to report.' });
        return null;
      }
      const { owner, name } = target;
      const checking = settings.checkRun !== false && target.isPullRequest && target.number !== null;
      const permissions: Permissions = { issues: 'write', pull_requests: 'write', metadata: 'read', ...(checking ? { checks: 'write' as const } : {}) };
      const granted = await apps.accessTo(db, settings.githubAppId, owner, name, permissions, deliveredInstallation(context, settings.githubAppId));
      if ('problem' in granted) {
        record({ action: 'skipped', ok: false, message: granted.problem });
        return null;
      }
      const api = await apps.github.withToken(granted.access.apiBaseUrl, granted.access.token);
      const runUrl = new URL(`/console/runs/${run.id}`, baseUrl).href;
      const began = Date.now();
      const attempt = async (action: string, work: () => Promise<Record<string, unknown> | void>) => {
        try {
          record({ action, ok: true, ...((await work()) ?? {}) });
          return true;
        } catch (err) {
          record({ action, ok: false, message: message(err) });
          return false;
        }
      };

      // A run tried again reacts once, on its first attempt.
      if (settings.reaction !== false && run.attempt === 1) await attempt('reaction', () => api.react(owner, name, target));
      const milestones: string[] = [];
      let current: string | null = null;
      const body = (final: FinalReport | null) => progressBody({ runName: run.name, runUrl, elapsedMs: Date.now() - began, milestones, current, final });
      let comment: { id: number; url: string } | null = null;
      if (settings.comment !== false && target.number !== null) {
        await attempt('comment', async () => {
          comment = await api.comment(owner, name, target.number!, body(null));
          return { url: comment.url };
        });
      }
      let check: { id: number; url: string } | null = null;
      if (checking) {
        await attempt('check_run', async () => {
          const headSha = target.headSha ?? (await api.headOf(owner, name, target.number!));
          check = await api.startCheck(owner, name, { name: `Flows: ${run.jobName}`, headSha, detailsUrl: runUrl });
          return { url: check.url };
        });
      }

      // Edits go one at a time; a change while one is waiting or under way is taken by the next.
      let editing: Promise<void> = Promise.resolve();
      let timer: NodeJS.Timeout | null = null;
      let lastEdit = Date.now();
      let editFailed = false;
      const edit = (final: FinalReport | null) => {
        const made = comment;
        if (!made) return editing;
        editing = editing.then(async () => {
          lastEdit = Date.now();
          try {
            await api.editComment(owner, name, made.id, body(final));
          } catch (err) {
            if (!editFailed) record({ action: 'comment', ok: false, message: message(err) });
            editFailed = true;
          }
        });
        return editing;
      };
      const soon = () => {
        if (!comment || timer) return;
        timer = setTimeout(
          () => {
            timer = null;
            void edit(null);
          },
          Math.max(0, lastEdit + editEveryMs - Date.now()),
        );
      };

      return {
        token: granted.access.token,
        observe(type, data) {
          const step = stepOf(type, data);
          if (!step) return;
          if ('milestone' in step) milestones.push(step.milestone);
          else current = step.current;
          soon();
        },
        async finish(final) {
          if (timer) clearTimeout(timer);
          timer = null;
          await edit(final);
          const made: { id: number } | null = check;
          if (made) {
            await attempt('check_run', async () => {
              const title = final.state === 'succeeded' ? (final.pullRequestUrl ? 'Changes pushed' : 'Succeeded') : final.state === 'queued' ? 'Tried again' : `Run ${final.state.replace('_', ' ')}`;
              await api.endCheck(owner, name, made.id, { conclusion: conclusionOf(final.state), title, summary: body(final) });
            });
          }
          await granted.revoke();
        },
      };
    },
  };
}

export type Reporting = ReturnType<typeof createReporting>;
