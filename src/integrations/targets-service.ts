// Where runs execute: the tenant's own targets, and the built-in `local` target when the operator set an
// agent command. `local` is configuration, not data: it is never stored, changed or deleted through the API.
import type { components } from '../../generated/openapi';
import type { LocalAgent } from '../config';
import type { TenantDb } from '../db/tenant-scope';
import type { KeysetRequest } from '../http/pagination';
import { Conflict, NotFound, ValidationFailed } from '../lib/errors';
import { newId } from '../lib/ids';
import type { ConnectionsService } from './connections-service';
import { clip } from '../lib/text';
import { createTargetsRepo, type TargetRow } from './targets-repo';

export type TargetView = components['schemas']['ExecutionTarget'];
type TargetCreate = components['schemas']['ExecutionTargetCreate'];
type TargetUpdate = components['schemas']['ExecutionTargetUpdate'];

const DEFAULT_TIMEOUT_SECONDS = 3600;
export const LOCAL_TARGET_ID = 'local';

/** The paging key of a target: ids sort by creation, and `local`, listed first, sorts above them all. */
export const targetKey = (target: TargetView) => (target.id === LOCAL_TARGET_ID ? '~' : target.id);

/** What a run needs to know of its target. */
export interface UsableTarget {
  id: string;
  kind: 'local' | 'vmhost';
  timeoutSeconds: number;
}

const targetNotFound = () => new NotFound('No such execution target.');

function view(row: TargetRow): TargetView {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind as TargetView['kind'],
    connectionId: row.connectionId,
    image: row.image,
    size: row.size ?? '',
    region: row.region,
    timeoutSeconds: row.timeoutSeconds,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function createTargetsService({
  localAgent,
  connections,
  startedAt = new Date(),
}: {
  localAgent: LocalAgent | null;
  connections: Pick<ConnectionsService, 'checkExists'>;
  startedAt?: Date;
}) {
  const operatorOwned = () => new Conflict('conflict', 'The local target is configured by the operator; it cannot be changed or deleted through the API.');

  const local: TargetView | null = localAgent && {
    id: LOCAL_TARGET_ID,
    name: 'Local agent',
    kind: 'local',
    connectionId: null,
    image: null,
    size: 'local',
    region: null,
    timeoutSeconds: localAgent.timeoutSeconds,
    createdAt: startedAt.toISOString(),
    updatedAt: startedAt.toISOString(),
  };

  return {
    /** Newest first; the `local` target, when configured, heads the first page. */
    async list(db: TenantDb, page: KeysetRequest<string>): Promise<TargetView[]> {
      const rows = (await createTargetsRepo(db).list(page)).map(view);
      return local && page.after === undefined ? [local, ...rows] : rows;
    },

    async get(db: TenantDb, id: string): Promise<TargetView> {
      if (id === LOCAL_TARGET_ID) {
        if (!local) throw targetNotFound();
        return local;
      }
      const row = await createTargetsRepo(db).find(id);
      if (!row) throw targetNotFound();
      return view(row);
    },

    async create(db: TenantDb, input: TargetCreate): Promise<TargetView> {
      await connections.checkExists(db, input.connectionId, 'connectionId');
      return view(await createTargetsRepo(db).create({ id: newId('tgt'), kind: 'vmhost', timeoutSeconds: DEFAULT_TIMEOUT_SECONDS, ...input }));
    },

    async update(db: TenantDb, id: string, patch: TargetUpdate): Promise<TargetView> {
      if (id === LOCAL_TARGET_ID && local) throw operatorOwned();
      await connections.checkExists(db, patch.connectionId, 'connectionId');
      const row = await createTargetsRepo(db).update(id, patch);
      if (!row) throw targetNotFound();
      return view(row);
    },

    async delete(db: TenantDb, id: string): Promise<void> {
      if (id === LOCAL_TARGET_ID && local) throw operatorOwned();
      const repo = createTargetsRepo(db);
      if (!(await repo.find(id))) throw targetNotFound();
      const using = await repo.jobsUsing(id);
      if (using > 0) throw new Conflict('in_use', `${using} job${using === 1 ? '' : 's'} still run${using === 1 ? 's' : ''} on this target; move ${using === 1 ? 'it' : 'them'} first.`);
      if (!(await repo.delete(id))) throw targetNotFound();
    },

    /** The target a job's runs use: the one named, or the operator's default (`local`); null when there is none. */
    async resolve(db: TenantDb, id: string | null): Promise<UsableTarget | null> {
      if (id === null || id === LOCAL_TARGET_ID) return local && { id: LOCAL_TARGET_ID, kind: 'local', timeoutSeconds: local.timeoutSeconds };
      const row = await createTargetsRepo(db).find(id);
      return row && { id: row.id, kind: row.kind as UsableTarget['kind'], timeoutSeconds: row.timeoutSeconds };
    },

    /** Refuses a target the tenant cannot use, naming the field. */
    async checkUsable(db: TenantDb, id: string | undefined): Promise<void> {
      if (id === undefined) return;
      if (!(await this.resolve(db, id))) {
        const hint = id === LOCAL_TARGET_ID ? ' (the operator has not set FLOWS_LOCAL_AGENT_COMMAND)' : '';
        throw new ValidationFailed(`\`executionTargetId\` "${clip(id)}" is not an execution target of this tenant${hint}.`);
      }
    },
  };
}

export type TargetsService = ReturnType<typeof createTargetsService>;
