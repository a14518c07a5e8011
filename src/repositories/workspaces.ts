// A run's repository workspace, from the clone before its agent starts to the pull request after it ends.
// The clone and everything after it happen here, on the server, with a token minted for the one repository
// (github-apps-service.ts); the agent gets a work tree and a `.git` copy of its own, and never the token,
// the kept git folder, or a remote it could push to. What happens to the changes is recorded in the run's
// trace (`workspace` events) and artifacts; a failure to push or to open the pull request is recorded
// there too, and never fails a run whose agent succeeded.
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { RunUsage } from '../agents/agent-events-fns';
import type { TenantDb } from '../db/tenant-scope';
import type { Outbound } from '../lib/outbound';
import type { ProviderRepository } from '../lib/provider-repository';
import { clip } from '../lib/text';
import { GithubFailure } from './github-api';
import { GITHUB_API, webBaseOf, type GithubAppsService } from './github-apps-service';
import { cloneInto, commitAll, fetchBranch, fetchCommit, giveAgentCopy, GitFailure, patchOf, pushBranch, remoteHeads, validBranch, type Remote } from './git';
import { NO_MIRRORS, type Mirrors } from './mirrors';
import type { SecretsService } from '../secrets/secrets-service';
import { apiOf, commitMessageOf, defaultBranchOf, parseProjectPath, parseRepository, permissionsFor, pullRequestBody, summaryOf, type Changes, type JobWorkspace, type RunArtifacts } from './workspace-fns';

/** A workspace as one run asks for it: the job's settings with their templates rendered. */
export type WorkspaceRequest = Omit<JobWorkspace, 'ref' | 'branch' | 'commitMessage' | 'pullRequestTitle'> & {
  ref: string | null;
  branch: string | null;
  commitMessage: string | null;
  pullRequestTitle: string | null;
  /** The installation of `githubAppId` the run's delivery came through, if it came through one (`deliveredInstallation`). */
  installationId?: number | null;
};

/** What a workspace records in the run's trace (`workspace` events). */
export type WorkspaceRecord = (data: Record<string, unknown>) => void;

export interface Delivered {
  artifacts: RunArtifacts;
  /** The change as a patch; null when nothing changed or it is larger than the kept maximum. */
  patch: string | null;
}

export interface PreparedWorkspace {
  /** The work tree the agent gets, on this server; null when the provider clones (`provider`). */
  dir: string | null;
  /** What the provider is given to clone and push, for targets whose provider clones; null otherwise. */
  provider: ProviderRepository | null;
  /** The repository's name (a container holds it at `/workspace/<name>`). */
  name: string;
  /** What the agent may leave in it, at most. */
  maxBytes: number;
  artifacts: RunArtifacts;
  /** The token cloned with, which the run's trace must never show (masked like a secret). */
  token: string | null;
  /** After the agent succeeded: commits what changed and pushes it as the job says. */
  deliver(outcome: { result: Record<string, unknown>; usage: RunUsage | null }): Promise<Delivered>;
  /** Removes the folders and revokes the token, whatever happened. */
  dispose(): Promise<void>;
}

export interface WorkspacesOptions {
  apps: Pick<GithubAppsService, 'accessTo' | 'github'>;
  /** Opens the personal access token a workspace's `tokenSecret` names. */
  secrets: Pick<SecretsService, 'open'>;
  outbound: Pick<Outbound, 'urlProblem'>;
  /** Where a run's page is: pull requests link to it. */
  baseUrl: URL;
  /** The largest repository a run clones (its kept objects, and its checked-out files). */
  maxBytes: number;
  /** How long fetching and checking out may take. */
  cloneTimeoutMs?: number;
  /** Who commits the agent's changes when the job does not say. */
  author?: { name: string; email: string };
  /** The cache of repositories runs clone from (none: every run fetches from the remote). */
  mirrors?: Mirrors;
  /** Repositories on GitLab, through a GitLab sender connection (`workspace.senderConnectionId`). */
  gitlab?: GitlabRepositories;
}

/** A GitLab as a sender connection reaches it: its site, its API and the connection's token. */
export interface GitlabAccess {
  webBaseUrl: string;
  apiBaseUrl: string;
  token: string;
}

/** What workspaces need of GitLab, handed in by the wiring (the connections live with the senders). */
export interface GitlabRepositories {
  /** The GitLab the connection `id` reaches; or why not (gone, not a GitLab connection). */
  access(db: TenantDb, id: string): Promise<GitlabAccess | { problem: string }>;
  /** Opens the merge request of `branch` into `base`, or updates the open one: its URL and number. */
  mergeRequest(access: GitlabAccess, project: string, request: { branch: string; base: string | null; title: string; body: string }): Promise<{ url: string; number: number; action: 'opened' | 'updated' }>;
  /** Whether a failure is GitLab's answer (its message says why) rather than an internal error. */
  isFailure(err: unknown): boolean;
}

const MAX_PATCH_BYTES = 5 * 1024 * 1024;
export const DEFAULT_AUTHOR = { name: 'Flows', email: 'flows@users.noreply.invalid' };

const failure = (err: unknown) => (err instanceof GitFailure || err instanceof GithubFailure ? err.message : `internal error: ${clip((err as Error).message)}`);

/** A repository as a run reaches it: the remote and its credential, the branch and where the run starts. */
interface Reached {
  /** Where the repository is: GitHub (an app or a token) or a GitLab connection's instance. */
  gitlab: GitlabAccess | null;
  owner: string;
  name: string;
  fullName: string;
  branch: string;
  changes: Changes;
  remote: Remote;
  token: string | null;
  apiBaseUrl: string;
  /** Where the branch was when the run started (null: it did not exist); a push goes over nothing else. */
  branchCommit: string | null;
  /** The branch exists already: the run continues it (a follow-up). */
  continued: boolean;
  /** What the run starts from: its branch when continued, else `ref` or the default branch. */
  ref: string;
  /** What a new pull request goes into. */
  base: string | null;
  /** How long asking the remote for its branches took (a part of the clone's time, as the trace reports it). */
  headsMs: number;
  revoke(): Promise<void>;
}

export function createWorkspaces({ apps, secrets, outbound, baseUrl, maxBytes, cloneTimeoutMs = 300_000, author = DEFAULT_AUTHOR, mirrors = NO_MIRRORS, gitlab }: WorkspacesOptions) {
  /** The repository, its credential and its branches; or why the run cannot work on it. */
  async function reach(db: TenantDb, request: WorkspaceRequest, run: { id: string; jobSlug: string }): Promise<Reached | { problem: string }> {
    const changes: Changes = request.changes ?? 'pull-request';
    if (request.senderConnectionId) return reachGitlab(db, request, run, changes);
    const repository = parseRepository(request.repository);
    if (!repository) return { problem: `\`workspace.repository\` came out as "${clip(request.repository)}", which is not a repository (\`owner/name\`).` };
    const fullName = `${repository.owner}/${repository.name}`;
    const branch = await branchOf(request, run);
    if (typeof branch !== 'string') return branch;

    let token: string | null = null;
    let revoke = async () => {};
    let webBaseUrl = repository.site ?? webBaseOf(GITHUB_API);
    let apiBaseUrl = apiOf(webBaseUrl);
    if (request.githubAppId) {
      const granted = await apps.accessTo(db, request.githubAppId, repository.owner, repository.name, permissionsFor(changes), request.installationId);
      if ('problem' in granted) return granted;
      ({ token, apiBaseUrl, webBaseUrl } = granted.access);
      revoke = granted.revoke;
      if (repository.site && repository.site.replace(/\/+$/, '') !== webBaseUrl.replace(/\/+$/, '')) {
        await revoke();
        return { problem: `\`workspace.repository\` names a repository on ${clip(repository.site)}, but the GitHub App is on ${clip(webBaseUrl)}.` };
      }
    } else if (request.tokenSecret) {
      token = (await secrets.open(db, [request.tokenSecret])).get(request.tokenSecret) ?? null;
      if (!token) return { problem: `The secret ${clip(request.tokenSecret)} that \`workspace.tokenSecret\` names does not exist (any more): create it (POST /api/v1/secrets) or change the job's workspace.` };
    }
    const remote: Remote = { url: `${webBaseUrl.replace(/\/+$/, '')}/${fullName}.git`, token };
    return onRemote({ gitlab: null, owner: repository.owner, name: repository.name, fullName, branch, changes, remote, token, apiBaseUrl, revoke }, request);
  }

  /** The branch the run's changes go to: the job's, or one of the run's own; or why git would not take it. */
  async function branchOf(request: WorkspaceRequest, run: { id: string; jobSlug: string }): Promise<string | { problem: string }> {
    const branch = request.branch ?? defaultBranchOf(run.jobSlug, run.id);
    return (await validBranch(branch)) ? branch : { problem: `\`workspace.branch\` came out as "${clip(branch)}", which is not a branch name git takes.` };
  }

  /** A repository on GitLab, through the job's GitLab connection: the project's path, the connection's token. */
  async function reachGitlab(db: TenantDb, request: WorkspaceRequest, run: { id: string; jobSlug: string }, changes: Changes): Promise<Reached | { problem: string }> {
    if (!gitlab) return { problem: 'Repositories on GitLab are not available on this server.' };
    const project = parseProjectPath(request.repository);
    if (!project) return { problem: `\`workspace.repository\` came out as "${clip(request.repository)}", which is not a GitLab project's path (\`group/project\`).` };
    const branch = await branchOf(request, run);
    if (typeof branch !== 'string') return branch;
    const access = await gitlab.access(db, request.senderConnectionId!);
    if ('problem' in access) return access;
    const remote: Remote = { url: `${access.webBaseUrl.replace(/\/+$/, '')}/${project}.git`, token: access.token, username: 'oauth2' };
    const name = project.split('/').at(-1)!;
    return onRemote({ gitlab: access, owner: project.slice(0, -name.length - 1), name, fullName: project, branch, changes, remote, token: access.token, apiBaseUrl: access.apiBaseUrl, revoke: async () => {} }, request);
  }

  /** The remote's branches: where the run starts, and whether it continues its branch; or why it cannot work there. */
  async function onRemote(found: Pick<Reached, 'gitlab' | 'owner' | 'name' | 'fullName' | 'branch' | 'changes' | 'remote' | 'token' | 'apiBaseUrl' | 'revoke'>, request: WorkspaceRequest): Promise<Reached | { problem: string }> {
    const { remote, fullName, branch, changes, revoke } = found;
    const refused = outbound.urlProblem(remote.url);
    const unreachable = async (problem: string) => {
      await revoke();
      return { problem };
    };
    if (refused) return unreachable(`The repository's URL ${refused}.`);
    let heads;
    const asked = Date.now();
    try {
      heads = await remoteHeads(remote, branch);
    } catch (err) {
      return unreachable(`The repository ${fullName} could not be cloned: ${failure(err)}`);
    }
    if (changes !== 'patch-only' && branch === heads.defaultBranch) return unreachable(`\`workspace.branch\` came out as "${clip(branch)}", the repository's default branch: runs push only to branches of their own.`);
    // A branch that exists already is continued (a follow-up run); otherwise the run starts from the ref.
    const continued = heads.branchCommit !== null;
    const ref = continued ? branch : (request.ref ?? heads.defaultBranch);
    if (!ref) return unreachable(`${fullName} has no default branch (an empty repository?): set \`workspace.ref\`.`);
    // The pull request goes into the branch the run started from, unless that was a tag or a commit.
    const base = !continued && request.ref && !/^[0-9a-f]{40}$/.test(request.ref) ? request.ref : heads.defaultBranch;
    return { ...found, branchCommit: heads.branchCommit, continued, ref, base, headsMs: Date.now() - asked };
  }

  /**
   * Opens the branch's pull request, or updates the one open for it; recorded in `given` and the trace, and so
   * is a refusal (the run still succeeds).
   */
  async function pullRequest(reached: Reached, run: { id: string; name: string }, request: WorkspaceRequest, given: RunArtifacts, body: Parameters<typeof pullRequestBody>[0], record: WorkspaceRecord): Promise<void> {
    const { owner, name, branch, base } = reached;
    if (reached.gitlab) {
      try {
        const merge = await gitlab!.mergeRequest(reached.gitlab, reached.fullName, { branch, base, title: request.pullRequestTitle?.slice(0, 255) ?? run.name, body: pullRequestBody(body) });
        given.pullRequestUrl = merge.url;
        record({ step: 'pull_request', kind: 'merge_request', url: merge.url, number: merge.number, action: merge.action });
      } catch (err) {
        failed(given, record, `The merge request could not be opened: ${gitlab!.isFailure(err) ? (err as Error).message : failure(err)}`);
      }
      return;
    }
    try {
      const api = await apps.github.withToken(reached.apiBaseUrl, reached.token!);
      const open = await api.openPullRequest(owner, name, branch);
      if (open) await api.updatePull(owner, name, open.number, pullRequestBody(body));
      if (!open && !base) return failed(given, record, `${reached.fullName} has no default branch to open the pull request against.`);
      const pull = open ?? (await api.openPull(owner, name, { title: request.pullRequestTitle?.slice(0, 256) ?? run.name, body: pullRequestBody(body), head: branch, base: base! }));
      given.pullRequestUrl = pull.url;
      record({ step: 'pull_request', url: pull.url, number: pull.number, action: open ? 'updated' : 'opened' });
    } catch (err) {
      failed(given, record, `The pull request could not be opened: ${failure(err)}`);
    }
  }

  /** A failure after the agent succeeded: recorded, and the run still succeeds with what it has. */
  const failed = (given: RunArtifacts, record: WorkspaceRecord, message: string) => {
    given.error = message;
    record({ step: 'failed', message });
  };

  const runUrl = (runId: string) => new URL(`/console/runs/${runId}`, baseUrl).href;

  return {
    /**
     * Clones the repository for the run `runId` of the job `jobSlug` into a work tree on this server; or why
     * it cannot be (the run then fails as a setup failure: trying again mends none of these).
     */
    async prepare(db: TenantDb, request: WorkspaceRequest, run: { id: string; name: string; jobSlug: string }, record: WorkspaceRecord): Promise<PreparedWorkspace | { problem: string }> {
      const reached = await reach(db, request, run);
      if ('problem' in reached) return reached;
      const { remote, branch, changes, fullName, ref, token } = reached;
      const root = await mkdtemp(path.join(tmpdir(), `flows-run-${process.pid}-ws-`));
      const dispose = async () => {
        await reached.revoke();
        await rm(root, { recursive: true, force: true });
      };
      try {
        // The agent's user may pass through the root to its work tree; the kept git folder is this server's alone.
        await chmod(root, 0o711);
        const gitDir = path.join(root, 'git');
        const dir = path.join(root, 'work');
        await mkdir(gitDir, { mode: 0o700 });
        const began = Date.now();
        const { value: baseCommit, cache } = await mirrors.through(db.$tenant().id, remote, ref, (source) => cloneInto({ remote, source, branch, gitDir, workTree: dir, maxBytes, timeoutMs: cloneTimeoutMs }));
        await giveAgentCopy(gitDir, dir);
        record({ step: 'cloned', repository: fullName, ref, commit: baseCommit, durationMs: reached.headsMs + Date.now() - began, cache, ...(reached.continued && { continued: true }) });
        const artifacts: RunArtifacts = { repository: fullName, baseRef: ref, baseCommit, changed: false, branch: null, commit: null, pushed: false, pullRequestUrl: null, diffStat: null, error: null };

        return {
          dir,
          name: reached.name,
          maxBytes,
          artifacts,
          token,
          provider: null,
          dispose,
          async deliver({ result, usage }): Promise<Delivered> {
            const given = { ...artifacts };
            const committed = await commitAll({ gitDir, workTree: dir, message: commitMessageOf(request.commitMessage, run.name, summaryOf(result)), author: request.author ?? author }).catch((err) => {
              given.error = `The changes could not be committed: ${failure(err)}`;
              return null;
            });
            if (!committed) {
              if (given.error) record({ step: 'failed', message: given.error });
              else record({ step: 'unchanged', message: 'The agent changed no file: nothing is pushed.' });
              return { artifacts: given, patch: null };
            }
            const diffStat = { files: committed.files, insertions: committed.insertions, deletions: committed.deletions };
            record({ step: 'committed', commit: committed.commit, ...diffStat });
            Object.assign(given, { changed: true, branch, commit: committed.commit, diffStat });
            const patch = await patchOf(gitDir, baseCommit, MAX_PATCH_BYTES).catch(() => null);
            if (changes === 'patch-only') return { artifacts: given, patch };
            if (!token) {
              failed(given, record, 'No GitHub App (`workspace.githubAppId`) or token (`workspace.tokenSecret`) gives this job a credential: the changes are kept as a patch only.');
              return { artifacts: given, patch };
            }
            try {
              await pushBranch({ gitDir, remote, branch, expected: reached.branchCommit });
            } catch (err) {
              failed(given, record, `The branch ${branch} could not be pushed: ${failure(err)}`);
              return { artifacts: given, patch };
            }
            given.pushed = true;
            record({ step: 'pushed', branch, commit: committed.commit });
            if (changes === 'pull-request') {
              await pullRequest(reached, run, request, given, { summary: summaryOf(result), runUrl: runUrl(run.id), usage, diffStat }, record);
            }
            return { artifacts: given, patch };
          },
        };
      } catch (err) {
        await dispose();
        return { problem: `The repository ${fullName} could not be cloned: ${failure(err)}` };
      }
    },

    /**
     * The repository for a run whose provider clones it itself (a VM-host target): the provider gets the
     * remote, the ref, the branch and a token for this one repository, and pushes the branch when the agent
     * changed anything; after the run, Flows reads the branch back and opens the pull request.
     */
    async prepareForProvider(db: TenantDb, request: WorkspaceRequest, run: { id: string; name: string; jobSlug: string }, record: WorkspaceRecord): Promise<PreparedWorkspace | { problem: string }> {
      if ((request.changes ?? 'pull-request') === 'patch-only') return { problem: 'A VM-host target\'s provider pushes the run\'s branch itself: `changes: "patch-only"` needs the local target or a Docker target.' };
      if (request.senderConnectionId) return { problem: 'A VM-host target\'s provider clones from GitHub: a repository on GitLab needs the local target or a Docker target.' };
      if (!request.githubAppId && !request.tokenSecret) return { problem: 'A VM-host target\'s provider pushes the run\'s branch: the job\'s workspace needs a credential (`workspace.githubAppId` or `workspace.tokenSecret`).' };
      const reached = await reach(db, request, run);
      if ('problem' in reached) return reached;
      const { remote, branch, fullName, ref } = reached;
      const root = await mkdtemp(path.join(tmpdir(), `flows-run-${process.pid}-ws-`));
      const dispose = async () => {
        await reached.revoke();
        await rm(root, { recursive: true, force: true });
      };
      try {
        // The commit the run starts from, one commit deep: what the branch the provider pushes is compared with.
        const began = Date.now();
        const baseCommit = await fetchCommit({ remote, ref, gitDir: root, maxBytes, timeoutMs: cloneTimeoutMs });
        record({ step: 'cloned', repository: fullName, ref, commit: baseCommit, durationMs: reached.headsMs + Date.now() - began, by: 'provider', ...(reached.continued && { continued: true }) });
        const artifacts: RunArtifacts = { repository: fullName, baseRef: ref, baseCommit, changed: false, branch: null, commit: null, pushed: false, pullRequestUrl: null, diffStat: null, error: null };
        return {
          dir: null,
          name: reached.name,
          maxBytes,
          artifacts,
          token: reached.token,
          provider: { url: remote.url, ref, branch, token: reached.token!, lease: reached.branchCommit, author: request.author ?? author, commitMessage: commitMessageOf(request.commitMessage, run.name, null) },
          dispose,
          async deliver({ result, usage }): Promise<Delivered> {
            const given = { ...artifacts };
            let pushed;
            try {
              pushed = await fetchBranch({ remote, branch, gitDir: root, base: baseCommit, timeoutMs: cloneTimeoutMs });
            } catch (err) {
              failed(given, record, `The branch ${branch} could not be read back: ${failure(err)}`);
              return { artifacts: given, patch: null };
            }
            if (!pushed || pushed.commit === reached.branchCommit) {
              record({ step: 'unchanged', message: 'The provider pushed nothing: the agent changed no file.' });
              return { artifacts: given, patch: null };
            }
            const { commit, ...diffStat } = pushed;
            Object.assign(given, { changed: true, branch, commit, diffStat, pushed: true });
            record({ step: 'pushed', branch, commit, by: 'provider', ...diffStat });
            const patch = await patchOf(root, baseCommit, MAX_PATCH_BYTES, commit).catch(() => null);
            if (reached.changes === 'pull-request') {
              await pullRequest(reached, run, request, given, { summary: summaryOf(result), runUrl: runUrl(run.id), usage, diffStat }, record);
            }
            return { artifacts: given, patch };
          },
        };
      } catch (err) {
        await dispose();
        return { problem: `The repository ${fullName} could not be read: ${failure(err)}` };
      }
    },
  };
}

export type Workspaces = ReturnType<typeof createWorkspaces>;
