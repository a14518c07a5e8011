// VM-host connections and the coding-agent integration: credentials for external providers, sealed at
// rest and answered as metadata only. A connection in use by a target or the integration cannot be deleted.
import type { components } from '../../generated/openapi';
import type { TenantDb } from '../db/tenant-scope';
import { Conflict, NotFound, ValidationFailed } from '../lib/errors';
import { newId } from '../lib/ids';
import { checkApiUrl, type Outbound } from '../lib/outbound';
import type { SecretBox } from '../lib/secrets';
import { clip } from '../lib/text';
import { createConnectionsRepo, type ConnectionRow, type IntegrationRow } from './connections-repo';

type ConnectionView = components['schemas']['VmhostConnection'];
type ConnectionCreate = components['schemas']['VmhostConnectionCreate'];
type ConnectionUpdate = components['schemas']['VmhostConnectionUpdate'];
type IntegrationView = components['schemas']['AgentIntegration'];
type IntegrationInput = components['schemas']['AgentIntegrationInput'];

const connectionNotFound = () => new NotFound('No such VM-host connection.');

function connectionView(row: ConnectionRow): ConnectionView {
  return {
    id: row.id,
    name: row.name,
    apiBaseUrl: row.apiBaseUrl,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    lastVerifiedAt: row.lastVerifiedAt?.toISOString() ?? null,
  };
}

function integrationView(row: IntegrationRow): IntegrationView {
  return { project: row.project, connectionId: row.connectionId, apiBaseUrl: row.apiBaseUrl, createdAt: row.createdAt.toISOString(), updatedAt: row.updatedAt.toISOString() };
}

export function createConnectionsService({ box, outbound }: { box: SecretBox; outbound: Outbound }) {
  async function found(db: TenantDb, id: string) {
    const row = await createConnectionsRepo(db).find(id);
    if (!row) throw connectionNotFound();
    return row;
  }

  return {
    async create(db: TenantDb, input: ConnectionCreate): Promise<ConnectionView> {
      checkApiUrl(outbound, input.apiBaseUrl, 'apiBaseUrl');
      const row = await createConnectionsRepo(db).create({ id: newId('vmc'), name: input.name, apiBaseUrl: input.apiBaseUrl, tokenCiphertext: box.seal(input.apiToken) });
      return connectionView(row);
    },
    async list(db: TenantDb): Promise<ConnectionView[]> {
      return (await createConnectionsRepo(db).list()).map(connectionView);
    },
    async get(db: TenantDb, id: string): Promise<ConnectionView> {
      return connectionView(await found(db, id));
    },
    async update(db: TenantDb, id: string, patch: ConnectionUpdate): Promise<ConnectionView> {
      checkApiUrl(outbound, patch.apiBaseUrl, 'apiBaseUrl');
      const { apiToken, ...fields } = patch;
      const row = await createConnectionsRepo(db).update(id, { ...fields, ...(apiToken ? { tokenCiphertext: box.seal(apiToken) } : {}) });
      if (!row) throw connectionNotFound();
      return connectionView(row);
    },
    async delete(db: TenantDb, id: string): Promise<void> {
      const repo = createConnectionsRepo(db);
      await found(db, id);
      const users = await repo.usersOf(id);
      if (users > 0) throw new Conflict('in_use', 'An execution target or the agent integration still uses this connection; change or delete it first.');
      if (!(await repo.delete(id))) throw connectionNotFound();
    },
    /** The connection a target or the integration names must exist in the tenant. */
    async checkExists(db: TenantDb, id: string | undefined, field: string): Promise<void> {
      if (id !== undefined && !(await createConnectionsRepo(db).find(id))) {
        throw new ValidationFailed(`\`${field}\` "${clip(id)}" is not a VM-host connection of this tenant.`);
      }
    },

    async saveIntegration(db: TenantDb, input: IntegrationInput): Promise<IntegrationView> {
      checkApiUrl(outbound, input.apiBaseUrl, 'apiBaseUrl');
      await this.checkExists(db, input.connectionId, 'connectionId');
      const row = await createConnectionsRepo(db).saveIntegration(
        { project: input.project, connectionId: input.connectionId ?? null, apiBaseUrl: input.apiBaseUrl, tokenCiphertext: box.seal(input.accessToken) },
        newId('agi'),
      );
      return integrationView(row);
    },
    async getIntegration(db: TenantDb): Promise<IntegrationView> {
      const row = await createConnectionsRepo(db).findIntegration();
      if (!row) throw new NotFound('No agent integration is saved.');
      return integrationView(row);
    },
    async deleteIntegration(db: TenantDb): Promise<void> {
      if (!(await createConnectionsRepo(db).deleteIntegration())) throw new NotFound('No agent integration is saved.');
    },
  };
}

export type ConnectionsService = ReturnType<typeof createConnectionsService>;
