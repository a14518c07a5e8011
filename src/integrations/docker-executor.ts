// Docker targets: every run gets a fresh container (hardened and limited as docker-fns.ts says, nothing of
// the host mounted) from an image the operator allows, with the prompt on its stdin and its output followed
// into the trace like the local agent's. With `network: egress` it reaches out only through a proxy of its
// run's own (docker-egress.ts), which reports what it refuses. An agent whose session continues keeps its
// state on a volume of the session's (docker-session-states.ts). A run with a repository workspace gets it on
// a volume of its own at /workspace (the repository at /workspace/<name>, its working folder), put there
// before the start and read back as an archive after a success (workspace-archive.ts). The container is removed on every path
// (success, failure, timeout, stop, a start that went wrong); after a crash, `reap` removes the one a run
// left behind, and the firewall rule of its proxy.
import type Dockerode from 'dockerode';
import type { Duplex } from 'node:stream';
import { PassThrough } from 'node:stream';
import { finished } from 'node:stream/promises';
import { clip } from '../lib/text';
import { agentCommandLine, AGENT_CLIS, isStreamKind } from '../agents/agents-fns';
import { agentOutput, outputBounds, resultOf } from './agent-output';
import { localImage, messageOf, removeContainer, statusOf } from './docker-client';
import { notAllowed } from './docker-diagnostics';
import { createDockerSessionStates } from './docker-session-states';
import { createDockerEgress, EgressSetupError, type RunEgress } from './docker-egress';
import { AGENT_UID, containerOptions, EGRESS_NETWORK, egressPolicy, imageAllowed, LABELS, runEnv, WORKSPACE, type DockerSettings } from './docker-fns';
import type { EgressOptions } from './egress-proxy';
import { ArchiveRefused, archiveOf, extractInto } from './workspace-archive';
import { failedAtStart, type Execution, type ExecutionEvents, type Executor, type Outcome, type RunSpec } from './executor';

export type { DockerSettings } from './docker-fns';
export { dockerDiagnostics, type DiagnosticStep } from './docker-diagnostics';

const KILL_GRACE_MS = 5_000;
/** Labels a run's repository volume with its run. */
const WORKSPACE_LABEL = 'flows.workspace';
const workspaceVolume = (runId: string) => `flows-ws-${runId}`;
/** How long the output may still be on its way once the container has exited. */
const DRAIN_MS = 2_000;

export interface RunContainer {
  id: string;
  runId: string;
  tenantId: string;
  instanceId: string;
  running: boolean;
}

/** Waits for `promise`, but no longer than `ms`. */
async function within(promise: Promise<unknown>, ms: number) {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

async function pull(docker: Dockerode, image: string) {
  const progress = await docker.pull(image);
  await new Promise<void>((resolve, reject) => docker.modem.followProgress(progress, (err: Error | null) => (err ? reject(err) : resolve())));
}

/** The volumes the image declares, or why a run cannot use it: not allowed, or not on the host and not pullable. */
async function runnableImage(docker: Dockerode, image: string, allowedImages: string[]): Promise<{ volumes: string[] } | { problem: string }> {
  if (!imageAllowed(image, allowedImages)) return { problem: notAllowed(image) };
  let info = await localImage(docker, image);
  if (!info) {
    const unavailable = `The image ${clip(image)} is not available on the Docker host`;
    try {
      await pull(docker, image);
    } catch (err) {
      return { problem: `${unavailable}, and pulling it failed: ${messageOf(err)}` };
    }
    info = await localImage(docker, image);
    if (!info) return { problem: `${unavailable}.` };
  }
  return { volumes: Object.keys(info.Config?.Volumes ?? {}) };
}

export function createDockerExecutor({
  docker,
  instanceId,
  allowedImages,
  settingsOf,
  killGraceMs = KILL_GRACE_MS,
  egress: egressTesting,
  stateGraceMs,
}: {
  docker: Dockerode;
  /** Labels every container (`flows.instance`), to tell apart what each server sharing the daemon started. */
  instanceId: string;
  /** The operator's allowlist of image patterns (FLOWS_DOCKER_IMAGES), where `*` stands for anything. */
  allowedImages: string[];
  /** The Docker settings of a tenant's target, or null when it is gone. */
  settingsOf(tenantId: string, targetId: string): Promise<DockerSettings | null>;
  killGraceMs?: number;
  /** Tests only: where the egress proxies resolve names to, and which addresses they count as public. */
  egress?: Pick<EgressOptions, 'resolve' | 'isPublic'>;
  /** Tests only: how young a session's kept state is spared by the sweep. */
  stateGraceMs?: number;
}): Executor & { containers(): Promise<RunContainer[]>; remove(containerId: string): Promise<void> } {
  const egressNetwork = createDockerEgress({ docker, testing: egressTesting });
  const sessionStates = createDockerSessionStates({ docker, graceMs: stateGraceMs });

  /** The run's proxy for an `egress` target, its variables for the container; null without a network. */
  const openEgress = (spec: RunSpec, settings: DockerSettings, events: ExecutionEvents) =>
    settings.network === 'none'
      ? null
      : egressNetwork.open({ tenantId: spec.tenantId, runId: spec.runId, policy: { ...egressPolicy(settings), narrowedTo: spec.network?.allow }, onDenied: (denial) => events.sandbox('network_denied', { ...denial }) });

  /**
   * Lets the started container reach its proxy, from the address Docker gave it on the egress network. An
   * agent may be done already (it need not read its prompt): then it has no address, and needs no way out.
   */
  const admit = async (container: Dockerode.Container, egress: RunEgress) => {
    const { State, NetworkSettings } = await container.inspect();
    const address = NetworkSettings.Networks[EGRESS_NETWORK]?.IPAddress;
    if (!State.Running) return;
    if (!address) throw new Error(`the container has no address on the ${EGRESS_NETWORK} network`);
    // Until the rule is in, its connections are dropped, not refused: the agent's first ones are retried.
    await egress.admit(address);
  };

  /** The run's repository volume at /workspace, made with the container (labelled, so that a sweep finds it). */
  const workspaceMount = (spec: RunSpec, labels: Record<string, string>): Dockerode.MountSettings => ({
    Type: 'volume',
    Source: workspaceVolume(spec.runId),
    Target: WORKSPACE,
    ReadOnly: false,
    VolumeOptions: { NoCopy: true, Labels: { ...labels, [WORKSPACE_LABEL]: spec.runId }, DriverConfig: { Name: 'local', Options: {} } },
  });
  const removeWorkspace = (runId: string) =>
    docker
      .getVolume(workspaceVolume(runId))
      .remove()
      .catch(() => {}); // gone already, or held: the sweep tries again

  /** The repository as the agent left it, into the run's work tree on this server; a refusal fails the run. */
  async function bringBack(container: Dockerode.Container, workspace: NonNullable<RunSpec['workspace']>, succeeded: Outcome): Promise<Outcome> {
    try {
      const archive = (await container.getArchive({ path: `${WORKSPACE}/${workspace.name}` })) as unknown as NodeJS.ReadableStream;
      await extractInto(archive as never, workspace.dir, workspace.maxBytes);
      return succeeded;
    } catch (err) {
      if (err instanceof ArchiveRefused) return { state: 'failed', error: `The agent's changes cannot be taken: ${err.message}.`, cause: 'agent' };
      return { state: 'failed', error: `The repository could not be read back from the container: ${messageOf(err)}`, cause: 'infrastructure' };
    }
  }

  return {
    takesWorkspace: true,

    async start(spec: RunSpec, events: ExecutionEvents): Promise<Execution> {
      const settings = await settingsOf(spec.tenantId, spec.targetId);
      // An agent whose events are read runs its CLI from the image's PATH, with the command line built for it.
      const agentKind = spec.agent && isStreamKind(spec.agent.kind) ? spec.agent.kind : null;
      if (!settings) return failedAtStart('docker', 'The container could not be created: the execution target no longer exists.', 'setup');
      let container: Dockerode.Container;
      let egress: RunEgress | null = null;
      try {
        const image = await runnableImage(docker, settings.image, allowedImages);
        if ('problem' in image) return failedAtStart('docker', image.problem, 'setup');
        try {
          egress = await openEgress(spec, settings, events);
        } catch (err) {
          if (err instanceof EgressSetupError) return failedAtStart('docker', err.message, 'setup');
          return failedAtStart('docker', `The egress network could not be set up: ${messageOf(err)}`, 'infrastructure');
        }
        const labels = { [LABELS.run]: spec.runId, [LABELS.tenant]: spec.tenantId, [LABELS.instance]: instanceId };
        const state = agentKind && spec.session ? sessionStates.mount({ key: spec.session.key, tenantId: spec.tenantId, jobId: spec.session.jobId }, agentKind) : null;
        // The proxy's variables win over the job's, which could only point the agent at a way that is closed.
        const env = runEnv(spec, { proxy: egress?.env, state: state?.env });
        const command = agentKind ? agentCommandLine({ ...spec.agent!, kind: agentKind }, { bin: AGENT_CLIS[agentKind], model: spec.model, effort: spec.effort, resume: spec.session?.resume }) : settings.command;
        const repository = spec.workspace ? workspaceMount(spec, labels) : null;
        const mounts = [...(state ? [state.mount] : []), ...(repository ? [repository] : [])];
        const workingDir = spec.workspace ? `${WORKSPACE}/${spec.workspace.name}` : undefined;
        container = await docker.createContainer(containerOptions({ name: `flows-${spec.runId}`, settings: { ...settings, command }, env, labels, imageVolumes: image.volumes, mounts, workingDir }));
        try {
          if (state) await sessionStates.prepare(container, agentKind!);
          if (spec.workspace) await container.putArchive(archiveOf(spec.workspace.dir, spec.workspace.name, AGENT_UID) as unknown as NodeJS.ReadableStream, { path: WORKSPACE });
        } catch (err) {
          await removeContainer(docker, container.id).catch(() => {});
          await removeWorkspace(spec.runId);
          throw err;
        }
      } catch (err) {
        await egress?.close();
        return failedAtStart('docker', `The container could not be created: ${messageOf(err)}`, 'infrastructure');
      }
      const containerId = container.id.slice(0, 12);

      // Attached before the start, so that no output is missed; the output waits in the pipes until the start is told.
      const stdout = new PassThrough();
      const stderr = new PassThrough();
      let attached: Duplex | undefined;
      try {
        attached = (await container.attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true })) as Duplex;
        docker.modem.demuxStream(attached, stdout, stderr);
        attached.on('error', () => {}); // an agent that does not read its prompt closes stdin early
        attached.once('close', () => {
          stdout.end();
          stderr.end();
        });
        await container.start();
        if (egress) await admit(container, egress);
      } catch (err) {
        attached?.destroy();
        await egress?.close();
        await removeContainer(docker, container.id).catch(() => {});
        if (err instanceof EgressSetupError) return failedAtStart('docker', err.message, 'setup');
        return failedAtStart('docker', `The container could not be started: ${messageOf(err)}`, 'infrastructure');
      }
      const socket = attached;
      socket.end(spec.prompt);
      events.provisioning({ status: 'container_started', containerId, ...(egress && { network: egressPolicy(settings).mode }) });
      const output = agentOutput(events, outputBounds(agentKind !== null));
      output.follow('stdout', stdout);
      output.follow('stderr', stderr);
      const drained = Promise.all([finished(stdout), finished(stderr)]);

      let ending: 'timed_out' | 'canceled' | null = null;
      let killer: NodeJS.Timeout | undefined;
      const signal = (name: 'SIGTERM' | 'SIGKILL') => container.kill({ signal: name }).catch(() => {}); // it has exited
      const end = (why: 'timed_out' | 'canceled') => {
        if (ending) return;
        ending = why;
        void signal('SIGTERM');
        killer = setTimeout(() => void signal('SIGKILL'), killGraceMs).unref();
      };
      const timer = setTimeout(() => end('timed_out'), spec.timeoutSeconds * 1000);

      /** What the exit says, told apart from a kill for memory and a removal from outside (a reap, the operator). */
      const exitOutcome = async (code: number): Promise<Outcome> => {
        const state = await container.inspect().then(
          (info) => (info.State.Status === 'removing' ? 'removed' : info.State),
          (err) => (statusOf(err) === 404 ? 'removed' : null),
        );
        if (state === 'removed') return { state: 'failed', error: 'The container was removed while the agent was running.', cause: 'infrastructure' };
        if (code === 0) return { state: 'succeeded', result: resultOf(output.last.stdout) };
        if (state?.OOMKilled) return { state: 'failed', error: `The agent ran out of memory (${settings.memoryMb} MB).`, cause: 'agent' };
        return { state: 'failed', error: `The agent exited with code ${code}${output.last.stderr ? `: ${clip(output.last.stderr)}` : '.'}`, cause: 'agent' };
      };

      const done = (async (): Promise<Outcome> => {
        let outcome: Outcome;
        try {
          const { StatusCode } = await container.wait();
          await within(drained, DRAIN_MS);
          outcome = await exitOutcome(StatusCode);
          // What the agent left in the repository comes back to this server, before the container goes.
          if (spec.workspace && outcome.state === 'succeeded' && !ending) outcome = await bringBack(container, spec.workspace, outcome);
        } catch (err) {
          outcome = { state: 'failed', error: `The container was lost: ${messageOf(err)}`, cause: 'infrastructure' };
        } finally {
          clearTimeout(timer);
          clearTimeout(killer);
          socket.destroy();
          // Before the container goes, and its address with it to the next container.
          await egress?.close().catch(() => {});
          try {
            await removeContainer(docker, container.id);
            events.provisioning({ status: 'container_removed', containerId });
          } catch (err) {
            events.provisioning({ status: 'container_remove_failed', containerId, detail: messageOf(err) });
          }
          if (spec.workspace) await removeWorkspace(spec.runId);
        }
        if (ending === 'timed_out') return { state: 'timed_out', error: `The agent was still running after ${spec.timeoutSeconds} seconds.` };
        if (ending === 'canceled') return { state: 'canceled', error: 'The run was stopped.' };
        return outcome;
      })();
      return { ref: `docker:${container.id}`, done, stop: () => end('canceled') };
    },

    async reap(ref: string, runId: string) {
      const id = ref.slice('docker:'.length);
      if (!ref.startsWith('docker:') || id === 'none') return;
      try {
        const info = await docker.getContainer(id).inspect();
        // The id could name a container of another run by now: only the run's own is removed.
        if (info.Config.Labels?.[LABELS.run] === runId) await removeContainer(docker, id);
      } catch {
        // Gone already, or the daemon does not answer: recovering the other runs goes on.
      }
      await egressNetwork.reap(runId).catch(() => {});
    },

    async containers(): Promise<RunContainer[]> {
      const found = await docker.listContainers({ all: true, filters: { label: [LABELS.run] } });
      return found.map((container) => ({
        id: container.Id,
        runId: container.Labels[LABELS.run],
        tenantId: container.Labels[LABELS.tenant] ?? '',
        instanceId: container.Labels[LABELS.instance] ?? '',
        running: container.State === 'running',
      }));
    },

    remove: (containerId: string) => removeContainer(docker, containerId),

    sessionStates,

    async sweep(isOver) {
      let removed = 0;
      for (const container of await this.containers()) {
        if (!(await isOver(container.tenantId, container.runId))) continue;
        await removeContainer(docker, container.id).catch(() => {}); // tried again at the next sweep
        removed++;
      }
      await egressNetwork.sweep().catch(() => {}); // the rules of the containers that went
      const { Volumes } = await docker.listVolumes({ filters: { label: [WORKSPACE_LABEL] } });
      for (const volume of Volumes ?? []) {
        if (!(await isOver(volume.Labels?.[LABELS.tenant] ?? '', volume.Labels?.[WORKSPACE_LABEL] ?? ''))) continue;
        await docker.getVolume(volume.Name).remove().then(() => removed++, () => {}); // held by a container still there: next time
      }
      return removed;
    },
  };
}
