// The Docker target's kept agent state: a volume per session (`flows-sess_…`), labelled with whose runs keep
// it and mounted at /agent-state in each of its runs' containers; Docker makes it, with those labels, when
// the first run's container is created. A new volume belongs to root, and the agent runs as user 1000 with
// no capabilities: the folders it keeps its state in are put into the volume as a tar owned by that user
// before the container starts (Docker unpacks it inside the container's root, into a volume even when that
// root is read-only, and leaves what is there).
import type Dockerode from 'dockerode';
import { pack } from 'tar-stream';
import type { StreamKind } from '../agents/agent-events-fns';
import { agentStateFolders, agentStateVariables } from '../agents/agents-fns';
import { statusOf } from './docker-client';
import { AGENT_UID } from './docker-fns';
import { STATE_GRACE_MS, STATE_MOUNT, type SessionStates, type StateOwner } from './executor';

const LABELS = { key: 'flows.session-state', tenant: 'flows.tenant', job: 'flows.job' } as const;
/** The folder in the volume the agent owns: the volume's root is root's. */
const HOME = `${STATE_MOUNT}/home`;

const volumeOf = (key: string) => `flows-${key}`;

/** A tar of the folders `kind` keeps its state in, under the volume's `home`, owned by the agent's user. */
function stateFolders(kind: StreamKind): Promise<Buffer> {
  const archive = pack();
  for (const folder of [HOME, ...agentStateFolders(kind, HOME)]) {
    archive.entry({ name: `${folder.slice(STATE_MOUNT.length + 1)}/`, type: 'directory', mode: 0o700, uid: AGENT_UID, gid: AGENT_UID });
  }
  archive.finalize();
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    archive.on('data', (chunk: Buffer) => chunks.push(chunk));
    archive.on('end', () => resolve(Buffer.concat(chunks)));
    archive.on('error', reject);
  });
}

export function createDockerSessionStates({ docker, graceMs = STATE_GRACE_MS }: { docker: Dockerode; graceMs?: number }): SessionStates & {
  /** The mount of the session's volume (made with its labels when missing), and the variables that put the agent's state in it. */
  mount(owner: StateOwner, kind: StreamKind): { mount: Dockerode.MountSettings; env: Record<string, string> };
  /** Makes the agent's folders in the volume of a created container, before it starts. */
  prepare(container: Dockerode.Container, kind: StreamKind): Promise<void>;
} {
  return {
    mount: ({ key, tenantId, jobId }, kind) => ({
      mount: { Type: 'volume', Source: volumeOf(key), Target: STATE_MOUNT, ReadOnly: false, VolumeOptions: { NoCopy: true, Labels: { [LABELS.key]: key, [LABELS.tenant]: tenantId, [LABELS.job]: jobId }, DriverConfig: { Name: 'local', Options: {} } } },
      env: agentStateVariables(kind, HOME),
    }),

    prepare: async (container, kind) => void (await container.putArchive(await stateFolders(kind), { path: STATE_MOUNT })),

    has: (key) =>
      docker
        .getVolume(volumeOf(key))
        .inspect()
        .then(
          () => true,
          () => false,
        ),

    async sweep(used) {
      const { Volumes } = await docker.listVolumes({ filters: { label: [LABELS.key] } });
      let removed = 0;
      for (const volume of Volumes ?? []) {
        const labels = volume.Labels ?? {};
        const owner = { key: labels[LABELS.key], tenantId: labels[LABELS.tenant] ?? '', jobId: labels[LABELS.job] ?? '' };
        const created = Date.parse((volume as { CreatedAt?: string }).CreatedAt ?? '');
        if (volume.Name !== volumeOf(owner.key) || !(Date.now() - created >= graceMs)) continue;
        if (await used(owner)) continue;
        try {
          await docker.getVolume(volume.Name).remove();
          removed++;
        } catch (err) {
          if (statusOf(err) !== 409 && statusOf(err) !== 404) throw err; // 409: a container of a run still has it
        }
      }
      return removed;
    },
  };
}
