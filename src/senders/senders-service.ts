// Sender connections: the credential Flows answers a webhook sender with where the work was asked (a Slack
// app's bot token), sealed at rest and never answered, with diagnostics that ask the sender whom it speaks as.
import type { components } from '../../generated/openapi';
import type { TenantDb } from '../db/tenant-scope';
import { Conflict, NotFound, ValidationFailed } from '../lib/errors';
import { newId } from '../lib/ids';
import { checkApiUrl, type Outbound } from '../lib/outbound';
import type { SecretBox } from '../lib/secrets';
import { clip } from '../lib/text';
import { createSendersRepo, type SenderConnectionRow } from './senders-repo';
import { createGitlabApi, GITLAB_API, siteOf, type GitlabApi } from './gitlab-api';
import { createJiraApi, type JiraApi } from './jira-api';
import { createLinearApi, LINEAR_API, type LinearApi } from './linear-api';
import { SenderFailure } from './sender-failure';
import { createSlackApi, SLACK_API, type SlackApi } from './slack-api';

type ConnectionView = components['schemas']['SenderConnection'];
type ConnectionCreate = components['schemas']['SenderConnectionCreate'];
type ConnectionUpdate = components['schemas']['SenderConnectionUpdate'];
type Diagnostics = components['schemas']['SenderConnectionDiagnostics'];

const SENDER_NAMES: Record<ConnectionView['kind'], string> = { slack: 'Slack', linear: 'Linear', jira: 'Jira', gitlab: 'GitLab' };
const connectionNotFound = () => new NotFound('No such sender connection.');

/** A connection's API, opened with its token (which the run's trace must never show). */
export type Connected = { token: string } & ({ kind: 'slack'; api: SlackApi } | { kind: 'linear'; api: LinearApi } | { kind: 'jira'; api: JiraApi } | { kind: 'gitlab'; api: GitlabApi });

/** Where each kind's API is when the connection does not say (Jira's is the tenant's own site). */
const DEFAULT_API: Record<ConnectionView['kind'], string | null> = { slack: SLACK_API, linear: LINEAR_API, jira: null, gitlab: GITLAB_API };

/** Whom the token speaks as, in words; the sender's refusal is thrown. */
async function identityOf(connected: Connected): Promise<string> {
  switch (connected.kind) {
    case 'slack': {
      const { user, team } = await connected.api.whoAmI();
      return `${user} in the workspace ${team}`;
    }
    case 'linear': {
      const { user, organization } = await connected.api.whoAmI();
      return `${user} in the organization ${organization}`;
    }
    case 'jira':
    case 'gitlab':
      return (await connected.api.whoAmI()).user;
  }
}

function connectionView(row: SenderConnectionRow): ConnectionView {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind as ConnectionView['kind'],
    apiBaseUrl: row.apiBaseUrl,
    login: row.login,
    account: row.account,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    lastVerifiedAt: row.lastVerifiedAt?.toISOString() ?? null,
  };
}

export function createSendersService({ box, outbound }: { box: SecretBox; outbound: Outbound }) {
  async function found(db: TenantDb, id: string) {
    const row = await createSendersRepo(db).find(id);
    if (!row) throw connectionNotFound();
    return row;
  }
  function connected(row: SenderConnectionRow): Connected {
    const token = box.open(row.tokenCiphertext);
    const kind = row.kind as ConnectionView['kind'];
    if (kind === 'linear') return { kind, token, api: createLinearApi(outbound, row.apiBaseUrl, token) };
    if (kind === 'jira') return { kind, token, api: createJiraApi(outbound, row.apiBaseUrl, row.login ?? '', token) };
    if (kind === 'gitlab') return { kind, token, api: createGitlabApi(outbound, row.apiBaseUrl, token) };
    return { kind, token, api: createSlackApi(outbound, row.apiBaseUrl, token) };
  }

  return {
    async create(db: TenantDb, input: ConnectionCreate): Promise<ConnectionView> {
      const apiBaseUrl = input.apiBaseUrl ?? DEFAULT_API[input.kind];
      if (!apiBaseUrl) throw new ValidationFailed('A Jira connection needs `apiBaseUrl`: the Jira site, such as https://acme.atlassian.net.');
      if (input.kind === 'jira' && !input.login) throw new ValidationFailed('A Jira connection needs `login`: the email address of the Atlassian account the API token belongs to.');
      if (input.kind !== 'jira' && input.login !== undefined) throw new ValidationFailed('`login` is taken only for a Jira connection.');
      checkApiUrl(outbound, apiBaseUrl, 'apiBaseUrl');
      const row = await createSendersRepo(db).create({ id: newId('snd'), name: input.name, kind: input.kind, apiBaseUrl, login: input.login ?? null, tokenCiphertext: box.seal(input.token) });
      return connectionView(row);
    },
    async list(db: TenantDb): Promise<ConnectionView[]> {
      return (await createSendersRepo(db).list()).map(connectionView);
    },
    async get(db: TenantDb, id: string): Promise<ConnectionView> {
      return connectionView(await found(db, id));
    },
    async update(db: TenantDb, id: string, patch: ConnectionUpdate): Promise<ConnectionView> {
      checkApiUrl(outbound, patch.apiBaseUrl, 'apiBaseUrl');
      if (patch.login !== undefined && (await found(db, id)).kind !== 'jira') throw new ValidationFailed('`login` is taken only for a Jira connection.');
      const { token, ...fields } = patch;
      // A new token may speak as someone else: whom it speaks as is found again by the next diagnostics.
      const row = await createSendersRepo(db).update(id, { ...fields, ...(token !== undefined && { tokenCiphertext: box.seal(token), account: null }) });
      if (!row) throw connectionNotFound();
      return connectionView(row);
    },
    async delete(db: TenantDb, id: string): Promise<void> {
      const repo = createSendersRepo(db);
      await found(db, id);
      const users = await repo.usersOf(id);
      if (users > 0) throw new Conflict('in_use', `${users === 1 ? 'A job names' : `${users} jobs name`} this sender connection (\`report.senderConnectionId\`); change or delete ${users === 1 ? 'it' : 'them'} first.`);
      if (!(await repo.delete(id))) throw connectionNotFound();
    },

    /** A job may name only a connection of its tenant (of `kind`, when it says). */
    async checkExists(db: TenantDb, id: string | undefined, field: string, kind?: ConnectionView['kind']): Promise<void> {
      if (id === undefined) return;
      const row = await createSendersRepo(db).find(id);
      if (!row) throw new ValidationFailed(`\`${field}\` "${clip(id)}" is not a sender connection of this tenant.`);
      if (kind && row.kind !== kind) throw new ValidationFailed(`\`${field}\` names a ${row.kind} connection; it takes a ${SENDER_NAMES[kind]} one.`);
    },

    async diagnose(db: TenantDb, id: string): Promise<Diagnostics> {
      const row = await found(db, id);
      const startedAt = new Date();
      const began = Date.now();
      let identity: string | null = null;
      let detail: string;
      try {
        identity = await identityOf(connected(row));
        detail = `${SENDER_NAMES[row.kind as ConnectionView['kind']]} accepted the token of ${identity}.`;
        await createSendersRepo(db).verified(row.id, identity);
      } catch (err) {
        detail = err instanceof SenderFailure ? err.message : `The check failed: ${clip((err as Error).message)}`;
      }
      const step = { step: 'authentication' as const, ok: identity !== null, durationMs: Date.now() - began, detail };
      return { senderConnectionId: row.id, ok: step.ok, startedAt: startedAt.toISOString(), finishedAt: new Date().toISOString(), steps: [step], identity };
    },

    /** Repositories on the GitLab a connection reaches, as run workspaces use them (`workspace.senderConnectionId`). */
    gitlabRepositories: {
      async access(db: TenantDb, id: string) {
        const row = await createSendersRepo(db).find(id);
        if (!row) return { problem: `The sender connection ${clip(id)} that \`workspace.senderConnectionId\` names no longer exists.` };
        if (row.kind !== 'gitlab') return { problem: `The sender connection ${clip(row.name)} is a ${row.kind} connection: a workspace's repository needs a GitLab one.` };
        return { webBaseUrl: siteOf(row.apiBaseUrl), apiBaseUrl: row.apiBaseUrl, token: box.open(row.tokenCiphertext) };
      },
      mergeRequest: (access: { apiBaseUrl: string; token: string }, project: string, request: { branch: string; base: string | null; title: string; body: string }) => createGitlabApi(outbound, access.apiBaseUrl, access.token).mergeRequest(project, request),
      isFailure: (err: unknown) => err instanceof SenderFailure,
    },

    /** The connection `id`'s API, opened with its token; or why not. */
    async connect(db: TenantDb, id: string): Promise<Connected | { problem: string }> {
      const row = await createSendersRepo(db).find(id);
      if (!row) return { problem: `The sender connection ${clip(id)} that \`report.senderConnectionId\` names no longer exists.` };
      return connected(row);
    },
  };
}

export type SendersService = ReturnType<typeof createSendersService>;
