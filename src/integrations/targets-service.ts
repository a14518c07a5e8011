// Where runs execute: the tenant's own targets (`vmhost`, and `docker` when the operator configured a Docker
// host), and the built-in `local` target when the operator set an agent command. `local` is configuration,
// not data: it is never stored, changed or deleted through the API.
import type { components } from '../../generated/openapi';
import type Dockerode from 'dockerode';
import type { DockerHost, LocalAgent } from '../config';
import type { TenantDb } from '../db/tenant-scope';
import type { KeysetRequest } from '../http/pagination';
import { domainProblem } from '../lib/egress-policy';
import { Conflict, NotFound, ValidationFailed } from '../lib/errors';
import { newId } from '../lib/ids';
import type { ConnectionsService } from './connections-service';
import { clip } from '../lib/text';
import { dockerDiagnostics } from './docker-executor';
import { imageAllowed, type DockerSettings } from './docker-fns';
import { createTargetsRepo, type TargetRow } from './targets-repo';

export type TargetView = components['schemas']['ExecutionTarget'];
type TargetCreate = components['schemas']['ExecutionTargetCreate'];
type TargetUpdate = components['schemas']['ExecutionTargetUpdate'];
type DockerDiagnostics = components['schemas']['DockerDiagnostics'];

const DEFAULT_TIMEOUT_SECONDS = 3600;
const DOCKER_DEFAULTS = { command: null, cpus: 1, memoryMb: 2048, pids: 512, network: 'none' } as const;
const VM_FIELDS = ['connectionId', 'size', 'region'] as const;
const DOCKER_FIELDS = ['command', 'cpus', 'memoryMb', 'pids', 'network', 'networkAllow'] as const;
export const LOCAL_TARGET_ID = 'local';

/** The paging key of a target: ids sort by creation, and `local`, listed first, sorts above them all. */
export const targetKey = (target: TargetView) => (target.id === LOCAL_TARGET_ID ? '~' : target.id);

/** What a run needs to know of its target. */
export interface UsableTarget {
  id: string;
  kind: 'local' | 'vmhost' | 'docker';
  timeoutSeconds: number;
}

const targetNotFound = () => new NotFound('No such execution target.');

/**
 * Why runs on target `id` (null: the operator's default, which is `local`) cannot run on this server: what a
 * job naming `local` is refused with at save, and what a run says when it has no target (its job names none
 * and there is no default, or the server that runs it has no local agent, taken away since or never set).
 */
export function unusableTarget(id: string | null): string {
  const operator = 'the operator must set FLOWS_LOCAL_AGENT_COMMAND and restart the server to offer the `local` target';
  if (id === null) return `the job names no \`executionTargetId\` and this server has no default target (${operator}); name one of GET /api/v1/execution-targets`;
  if (id === LOCAL_TARGET_ID) return `\`executionTargetId\` "local" is not available: this server has no local agent (${operator})`;
  return `\`executionTargetId\` "${clip(id)}" is not an execution target of this tenant`;
}

type Network = Pick<DockerSettings, 'network' | 'networkAllow'>;

/**
 * The `network` column holds the mode and, when there is one, the allowlist after it:
 * `egress:api.anthropic.com,*.npmjs.org` (a domain pattern has no `:` or `,`). It spares the table a column
 * until its schema changes next; the API only ever sees the two fields.
 */
const storedNetwork = ({ network, networkAllow }: Network) => (networkAllow.length > 0 ? `${network}:${networkAllow.join(',')}` : network);

function networkOf(stored: string | null): Network {
  const [network, allow = ''] = (stored ?? DOCKER_DEFAULTS.network).split(':');
  return { network: network as Network['network'], networkAllow: allow ? allow.split(',') : [] };
}

/** The network fields of a create or a change over the current ones, stored as one; undefined when neither is given. */
function networkChange(current: Network, { network, networkAllow }: Partial<Network>): string | undefined {
  if (network === undefined && networkAllow === undefined) return undefined;
  const problem = networkAllow?.map(domainProblem).find((found) => found !== null);
  if (problem) throw new ValidationFailed(`\`networkAllow\`: ${problem}.`);
  return storedNetwork({ network: network ?? current.network, networkAllow: networkAllow ? [...new Set(networkAllow)] : current.networkAllow });
}

function dockerSettingsOf(row: TargetRow): DockerSettings & { image: string } {
  return {
    image: row.image ?? '',
    command: row.command,
    cpus: row.cpus ?? DOCKER_DEFAULTS.cpus,
    memoryMb: row.memoryMb ?? DOCKER_DEFAULTS.memoryMb,
    pids: row.pids ?? DOCKER_DEFAULTS.pids,
    ...networkOf(row.network),
  };
}

/** Settings of the other kind are refused, not ignored: the caller meant something. */
function refuseFieldsOf(input: Record<string, unknown>, fields: readonly string[], kind: string) {
  const field = fields.find((name) => input[name] !== undefined);
  if (field) throw new ValidationFailed(`\`${field}\` is not a setting of ${kind} targets.`);
}

function view(row: TargetRow): TargetView {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind as TargetView['kind'],
    connectionId: row.connectionId,
    image: row.image,
    size: row.size ?? '',
    region: row.region,
    docker: row.kind === 'docker' ? dockerSettingsOf(row) : null,
    timeoutSeconds: row.timeoutSeconds,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function createTargetsService({
  localAgent,
  docker,
  connections,
  startedAt = new Date(),
}: {
  localAgent: LocalAgent | null;
  /** The operator's Docker host with its client, when `docker` targets are offered. */
  docker: (DockerHost & { client: Dockerode }) | null;
  connections: Pick<ConnectionsService, 'checkExists'>;
  startedAt?: Date;
}) {
  function checkImage(image: string | undefined) {
    if (image !== undefined && !imageAllowed(image, docker!.images)) {
      throw new ValidationFailed(`\`image\` "${clip(image)}" is not allowed on this server's Docker host (FLOWS_DOCKER_IMAGES: ${docker!.images.join(', ')}).`);
    }
  }

  const operatorOwned = () => new Conflict('conflict', 'The local target is configured by the operator; it cannot be changed or deleted through the API.');

  const local: TargetView | null = localAgent && {
    id: LOCAL_TARGET_ID,
    name: 'Local agent',
    kind: 'local',
    connectionId: null,
    image: null,
    size: 'local',
    region: null,
    docker: null,
    timeoutSeconds: localAgent.timeoutSeconds,
    createdAt: startedAt.toISOString(),
    updatedAt: startedAt.toISOString(),
  };

  return {
    /** Whether a job naming no target has one: the operator's default, `local`. */
    hasDefault: local !== null,

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

    async create(db: TenantDb, { kind = 'vmhost', ...input }: TargetCreate): Promise<TargetView> {
      const fields = { id: newId('tgt'), kind, timeoutSeconds: DEFAULT_TIMEOUT_SECONDS };
      if (kind === 'docker') {
        if (!docker) throw new ValidationFailed('`kind`: this server offers no docker targets (the operator has not set FLOWS_DOCKER_HOST).');
        refuseFieldsOf(input, VM_FIELDS, 'docker');
        checkImage(input.image);
        const { network, networkAllow, ...settings } = input;
        const stored = networkChange(networkOf(null), { network, networkAllow }) ?? DOCKER_DEFAULTS.network;
        return view(await createTargetsRepo(db).create({ ...fields, ...DOCKER_DEFAULTS, ...settings, network: stored }));
      }
      refuseFieldsOf(input, DOCKER_FIELDS, 'vmhost');
      if (!input.connectionId) throw new ValidationFailed('`connectionId` is required for vmhost targets.');
      await connections.checkExists(db, input.connectionId, 'connectionId');
      return view(await createTargetsRepo(db).create({ ...fields, ...input }));
    },

    async update(db: TenantDb, id: string, patch: TargetUpdate): Promise<TargetView> {
      if (id === LOCAL_TARGET_ID && local) throw operatorOwned();
      const repo = createTargetsRepo(db);
      const target = await repo.find(id);
      if (!target) throw targetNotFound();
      const { network, networkAllow, ...fields } = patch;
      let stored: string | undefined;
      if (target.kind === 'docker') {
        refuseFieldsOf(patch, VM_FIELDS, 'docker');
        if (docker) checkImage(patch.image);
        stored = networkChange(networkOf(target.network), { network, networkAllow });
      } else {
        refuseFieldsOf(patch, DOCKER_FIELDS, 'vmhost');
        await connections.checkExists(db, patch.connectionId, 'connectionId');
      }
      const row = await repo.update(id, stored === undefined ? fields : { ...fields, network: stored });
      if (!row) throw targetNotFound();
      return view(row);
    },

    /** What a run on a `docker` target needs of it; null when it is gone (or of another kind). */
    async dockerSettings(db: TenantDb, id: string): Promise<(DockerSettings & { image: string }) | null> {
      const row = await createTargetsRepo(db).find(id);
      return row?.kind === 'docker' ? dockerSettingsOf(row) : null;
    },

    /** Checks a `docker` target end to end: the host answers, the image is allowed and there, `true` runs. */
    async diagnose(db: TenantDb, id: string): Promise<DockerDiagnostics> {
      const row = id === LOCAL_TARGET_ID ? null : await createTargetsRepo(db).find(id);
      if (!row && !(id === LOCAL_TARGET_ID && local)) throw targetNotFound();
      if (row?.kind !== 'docker') throw new Conflict('conflict', 'Only docker targets are checked here; a vmhost target is checked through its connection (POST /api/v1/integrations/vmhost/{connectionId}/diagnostics).');
      if (!docker) throw new Conflict('conflict', 'This server offers no docker targets any more (the operator has not set FLOWS_DOCKER_HOST); its runs fail.');
      const startedAt = new Date();
      const steps = await dockerDiagnostics(docker.client, dockerSettingsOf(row), docker.images);
      return { targetId: row.id, ok: steps.every((step) => step.ok), startedAt: startedAt.toISOString(), finishedAt: new Date().toISOString(), steps };
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

    /** Refuses a target the tenant cannot use, naming the field; null is the operator's default, always allowed. */
    async checkUsable(db: TenantDb, id: string | null | undefined): Promise<void> {
      if (id !== undefined && id !== null && !(await this.resolve(db, id))) throw new ValidationFailed(`${unusableTarget(id)}.`);
    },
  };
}

export type TargetsService = ReturnType<typeof createTargetsService>;
