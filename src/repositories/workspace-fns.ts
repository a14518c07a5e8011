// The rules of a repository workspace that need no git and no network: what a repository name may be,
// which branch a run's changes go to, what its token may do, and what its commit and pull request say.
import type { components } from '../../generated/openapi';
import type { RunUsage } from '../agents/agent-events-fns';
import type { Permissions } from './github-api';

export type JobWorkspace = components['schemas']['JobWorkspace'];
export type Changes = NonNullable<JobWorkspace['changes']>;
export type RunArtifacts = components['schemas']['RunArtifacts'];

/**
 * `owner/name`, or a repository's URL `http(s)://HOST[/prefix]/owner/name` (its `site` is what comes before
 * the owner), a `.git` ending and surrounding blanks dropped; null when it is neither.
 */
export function parseRepository(value: string): { owner: string; name: string; site: string | null } | null {
  const trimmed = value.trim().replace(/\.git$/, '');
  let site: string | null = null;
  let path = trimmed;
  if (/^https?:\/\//.test(trimmed)) {
    const url = URL.canParse(trimmed) ? new URL(trimmed) : null;
    if (!url || url.username || url.password || url.search || url.hash) return null;
    const parts = url.pathname.replace(/\/+$/, '').split('/');
    path = parts.slice(-2).join('/');
    site = `${url.origin}${parts.slice(0, -2).join('/')}`;
  }
  const match = /^([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))\/([A-Za-z0-9._-]{1,100})$/.exec(path);
  if (!match || match[2] === '.' || match[2] === '..') return null;
  return { owner: match[1], name: match[2], site };
}

/** A GitLab project's path (`group/subgroup/project`), or null when it is not one. */
export function parseProjectPath(value: string): string | null {
  const path = value.trim().replace(/\.git$/, '').replace(/^\/+|\/+$/g, '');
  const parts = path.split('/');
  return parts.length >= 2 && parts.length <= 20 && parts.every((part) => /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}$/.test(part) && !part.endsWith('.')) ? path : null;
}

/** The REST API of a GitHub site: api.github.com for github.com, `/api/v3` of a GitHub Enterprise Server. */
export const apiOf = (site: string) => (new URL(site).hostname === 'github.com' ? 'https://api.github.com' : `${site.replace(/\/+$/, '')}/api/v3`);

/** The branch of a run whose job names none: its own, so that nothing else is ever pushed over. */
export const defaultBranchOf = (jobSlug: string, runId: string) => `flows/${jobSlug}-${runId}`;

/** The least a run's token needs: reading for a patch, contents for a push, pull requests for one. */
export function permissionsFor(changes: Changes): Permissions {
  if (changes === 'patch-only') return { contents: 'read', metadata: 'read' };
  if (changes === 'push') return { contents: 'write', metadata: 'read' };
  return { contents: 'write', pull_requests: 'write', metadata: 'read' };
}

const MAX_SUBJECT = 72;

/** The commit message: the job's own, or the run's name over the agent's last words. */
export function commitMessageOf(given: string | null, runName: string, summary: string | null): string {
  if (given?.trim()) return given.trim();
  const subject = runName.length > MAX_SUBJECT ? `${runName.slice(0, MAX_SUBJECT - 1)}…` : runName;
  return summary?.trim() ? `${subject}\n\n${summary.trim()}` : subject;
}

/** What the agent said last, where its result says it. */
export function summaryOf(result: Record<string, unknown> | null | undefined): string | null {
  const value = result?.summary ?? result?.text ?? result?.result;
  return typeof value === 'string' && value.trim() ? value.trim() : null;
}

const usd = (value: number) => `$${value < 0.01 ? value.toFixed(4) : value.toFixed(2)}`;

/** One line of what the agent spent, or null when nothing was read of it. */
export function spentLine(usage: RunUsage | null | undefined): string | null {
  if (!usage) return null;
  const cost = usage.costUsd === null || usage.costUsd === undefined ? 'cost unknown' : usd(usage.costUsd);
  return `${usage.inputTokens.toLocaleString('en-US')} tokens in, ${usage.outputTokens.toLocaleString('en-US')} out, ${usage.turns} turn${usage.turns === 1 ? '' : 's'}, ${cost}`;
}

/** The pull request's body: the agent's summary, the run's link and what it spent. */
export function pullRequestBody({ summary, runUrl, usage, diffStat }: { summary: string | null; runUrl: string; usage: RunUsage | null; diffStat: { files: number; insertions: number; deletions: number } }): string {
  const spent = spentLine(usage);
  return [
    summary ?? 'The agent made these changes.',
    '',
    '---',
    `Run: ${runUrl}`,
    `Changes: ${diffStat.files} file${diffStat.files === 1 ? '' : 's'}, +${diffStat.insertions} −${diffStat.deletions}`,
    ...(spent ? [`Spent: ${spent}`] : []),
  ].join('\n');
}

/**
 * The installation of the app `githubAppId` that a run's delivery came through: set when the delivery's
 * source is bound to that app (GitHub signed it with the app's secret, so its `installation.id` is the
 * app's own). Null otherwise: the installation is then asked of GitHub.
 */
export function deliveredInstallation(context: Record<string, unknown>, githubAppId: string): number | null {
  const source = context.source as { githubAppId?: unknown } | undefined;
  const id = (context.payload as { installation?: { id?: unknown } } | undefined)?.installation?.id;
  return source?.githubAppId === githubAppId && typeof id === 'number' && Number.isSafeInteger(id) && id > 0 ? id : null;
}
