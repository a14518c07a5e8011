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
import { createSlackApi, SLACK_API, SlackFailure, type SlackApi } from './slack-api';

type ConnectionView = components['schemas']['SenderConnection'];
type ConnectionCreate = components['schemas']['SenderConnectionCreate'];
type ConnectionUpdate = components['schemas']['SenderConnectionUpdate'];
type Diagnostics = components['schemas']['SenderConnectionDiagnostics'];

const connectionNotFound = () => new NotFound('No such sender connection.');

function connectionView(row: SenderConnectionRow): ConnectionView {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind as ConnectionView['kind'],
    apiBaseUrl: row.apiBaseUrl,
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
  const slackOf = (row: SenderConnectionRow) => createSlackApi(outbound, row.apiBaseUrl, box.open(row.tokenCiphertext));

  return {
    async create(db: TenantDb, input: ConnectionCreate): Promise<ConnectionView> {
      const apiBaseUrl = input.apiBaseUrl ?? SLACK_API;
      checkApiUrl(outbound, apiBaseUrl, 'apiBaseUrl');
      const row = await createSendersRepo(db).create({ id: newId('snd'), name: input.name, kind: input.kind, apiBaseUrl, tokenCiphertext: box.seal(input.token) });
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

    /** A job's report may name only a connection of its tenant. */
    async checkExists(db: TenantDb, id: string | undefined, field: string): Promise<void> {
      if (id !== undefined && !(await createSendersRepo(db).find(id))) throw new ValidationFailed(`\`${field}\` "${clip(id)}" is not a sender connection of this tenant.`);
    },

    async diagnose(db: TenantDb, id: string): Promise<Diagnostics> {
      const row = await found(db, id);
      const startedAt = new Date();
      const began = Date.now();
      let identity: string | null = null;
      let detail: string;
      try {
        const { user, team } = await slackOf(row).whoAmI();
        identity = `${user} in the workspace ${team}`;
        detail = `Slack accepted the token of the bot ${identity}.`;
        await createSendersRepo(db).verified(row.id, identity);
      } catch (err) {
        detail = err instanceof SlackFailure ? err.message : `The check failed: ${clip((err as Error).message)}`;
      }
      const step = { step: 'authentication' as const, ok: identity !== null, durationMs: Date.now() - began, detail };
      return { senderConnectionId: row.id, ok: step.ok, startedAt: startedAt.toISOString(), finishedAt: new Date().toISOString(), steps: [step], identity };
    },

    /** Slack as the connection `id` speaks to it, with the token (to mask); or why not. */
    async slack(db: TenantDb, id: string): Promise<{ api: SlackApi; token: string } | { problem: string }> {
      const row = await createSendersRepo(db).find(id);
      if (!row) return { problem: `The sender connection ${clip(id)} that \`report.senderConnectionId\` names no longer exists.` };
      if (row.kind !== 'slack') return { problem: `The sender connection ${clip(row.name)} is a ${row.kind} connection, not a Slack one.` };
      const token = box.open(row.tokenCiphertext);
      return { api: createSlackApi(outbound, row.apiBaseUrl, token), token };
    },
  };
}

export type SendersService = ReturnType<typeof createSendersService>;
