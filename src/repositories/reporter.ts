// Answering where the work was asked (`report` on a job), on GitHub: as a run starts, 👀 on what asked for
// it, one progress comment and a check run on the pull request's head commit; as it advances, the comment
// edited in place (at most one edit every few seconds, the latest state winning); at its end, the comment's
// final text and the check run's conclusion. The token is the app's, minted for the one repository. Each
// part that fails is recorded in the run's trace once, and the run goes on as if nothing happened.
import type { components } from '../../generated/openapi';
import type { TenantDb } from '../db/tenant-scope';
import { coalescedEdits, progressBody, reportAttempts, trackProgress, type FinalReport, type Reporter, type ReportRecord } from '../lib/progress';
import { clip } from '../lib/text';
import { GithubFailure, type Permissions } from './github-api';
import type { GithubAppsService } from './github-apps-service';
import { conclusionOf, githubTargetOf } from './report-fns';
import { deliveredInstallation } from './workspace-fns';

type JobReport = components['schemas']['JobReport'];

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
      const progress = trackProgress(run.name, runUrl);
      const attempt = reportAttempts(record, message);

      // A run tried again reacts once, on its first attempt.
      if (settings.reaction !== false && run.attempt === 1) await attempt('reaction', () => api.react(owner, name, target));
      const body = (final: FinalReport | null) => progressBody(progress.at(final));
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

      const made = comment as { id: number } | null;
      const edits = made && coalescedEdits((final) => api.editComment(owner, name, made.id, body(final)), (err) => record({ action: 'comment', ok: false, message: message(err) }), editEveryMs);

      return {
        token: granted.access.token,
        observe(type, data) {
          if (progress.observe(type, data)) edits?.soon();
        },
        async finish(final) {
          await edits?.final(final);
          const started: { id: number } | null = check;
          if (started) {
            await attempt('check_run', async () => {
              const title = final.state === 'succeeded' ? (final.pullRequestUrl ? 'Changes pushed' : 'Succeeded') : final.state === 'queued' ? 'Tried again' : `Run ${final.state.replace('_', ' ')}`;
              await api.endCheck(owner, name, started.id, { conclusion: conclusionOf(final.state), title, summary: body(final) });
            });
          }
          await granted.revoke();
        },
      };
    },
  };
}

export type Reporting = ReturnType<typeof createReporting>;
