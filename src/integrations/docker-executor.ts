// Docker targets: every run gets a fresh container (hardened and limited as docker-fns.ts says, nothing of
// the host mounted) from an image the operator allows, with the prompt on its stdin and its output followed
// into the trace like the local agent's. The container is removed on every path (success, failure, timeout,
// stop, a start that went wrong); after a crash, `reap` removes the one a run left behind.
import type Dockerode from 'dockerode';
import type { Duplex } from 'node:stream';
import { PassThrough } from 'node:stream';
import { finished } from 'node:stream/promises';
import { newId } from '../lib/ids';
import { clip } from '../lib/text';
import { agentOutput, resultOf } from './agent-output';
import { containerOptions, imageAllowed, LABELS, runEnv, type DockerSettings } from './docker-fns';
import { failedAtStart, type Execution, type ExecutionEvents, type Executor, type Outcome, type RunSpec } from './executor';

export type { DockerSettings } from './docker-fns';

const KILL_GRACE_MS = 5_000;
/** How long the output may still be on its way once the container has exited. */
const DRAIN_MS = 2_000;
const REMOVE_ATTEMPTS = 3;
/** How long the diagnostic container may take to run `true`. */
const CHECK_MS = 30_000;

export interface RunContainer {
  id: string;
  runId: string;
  tenantId: string;
  instanceId: string;
  running: boolean;
}

export interface DiagnosticStep {
  step: 'daemon' | 'image' | 'run';
  ok: boolean;
  durationMs: number;
  detail: string;
}

const statusOf = (err: unknown) => (err as { statusCode?: number } | null)?.statusCode;
/** The daemon's own words, without the `(HTTP code 500) server error - ` dockerode puts first. */
const messageOf = (err: unknown) => clip((err instanceof Error ? err.message : String(err)).replace(/^\(HTTP code \d+\)[^-]*- /, '').trim());
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits for `promise`, but no longer than `ms`. */
async function within(promise: Promise<unknown>, ms: number) {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

const notAllowed = (image: string) => `The operator's FLOWS_DOCKER_IMAGES does not allow the image ${clip(image)}.`;

/** The image as the daemon has it, or null when it has none by that name. */
async function localImage(docker: Dockerode, image: string) {
  try {
    return await docker.getImage(image).inspect();
  } catch (err) {
    if (statusOf(err) === 404) return null;
    throw err;
  }
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

/** Force-removes the container with its anonymous volumes; one already gone counts as removed. */
async function removeContainer(docker: Dockerode, id: string) {
  for (let attempt = 1; ; attempt++) {
    try {
      await docker.getContainer(id).remove({ force: true, v: true });
      return;
    } catch (err) {
      if (statusOf(err) === 404) return;
      if (attempt >= REMOVE_ATTEMPTS) throw err;
      await sleep(500 * attempt);
    }
  }
}

export function createDockerExecutor({
  docker,
  instanceId,
  allowedImages,
  settingsOf,
  killGraceMs = KILL_GRACE_MS,
}: {
  docker: Dockerode;
  /** Labels every container (`flows.instance`), to tell apart what each server sharing the daemon started. */
  instanceId: string;
  /** The operator's allowlist of image patterns (FLOWS_DOCKER_IMAGES), where `*` stands for anything. */
  allowedImages: string[];
  /** The Docker settings of a tenant's target, or null when it is gone. */
  settingsOf(tenantId: string, targetId: string): Promise<DockerSettings | null>;
  killGraceMs?: number;
}): Executor & { containers(): Promise<RunContainer[]>; remove(containerId: string): Promise<void> } {
  return {
    async start(spec: RunSpec, events: ExecutionEvents): Promise<Execution> {
      const settings = await settingsOf(spec.tenantId, spec.targetId);
      if (!settings) return failedAtStart('docker', 'The container could not be created: the execution target no longer exists.', 'setup');
      let container: Dockerode.Container;
      try {
        const image = await runnableImage(docker, settings.image, allowedImages);
        if ('problem' in image) return failedAtStart('docker', image.problem, 'setup');
        const labels = { [LABELS.run]: spec.runId, [LABELS.tenant]: spec.tenantId, [LABELS.instance]: instanceId };
        container = await docker.createContainer(containerOptions({ name: `flows-${spec.runId}`, settings, env: runEnv(spec), labels, imageVolumes: image.volumes }));
      } catch (err) {
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
      } catch (err) {
        attached?.destroy();
        await removeContainer(docker, container.id).catch(() => {});
        return failedAtStart('docker', `The container could not be started: ${messageOf(err)}`, 'infrastructure');
      }
      const socket = attached;
      socket.end(spec.prompt);
      events.provisioning({ status: 'container_started', containerId });
      const output = agentOutput(events);
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
        } catch (err) {
          outcome = { state: 'failed', error: `The container was lost: ${messageOf(err)}`, cause: 'infrastructure' };
        } finally {
          clearTimeout(timer);
          clearTimeout(killer);
          socket.destroy();
          try {
            await removeContainer(docker, container.id);
            events.provisioning({ status: 'container_removed', containerId });
          } catch (err) {
            events.provisioning({ status: 'container_remove_failed', containerId, detail: messageOf(err) });
          }
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

    async sweep(isOver) {
      let removed = 0;
      for (const container of await this.containers()) {
        if (!(await isOver(container.tenantId, container.runId))) continue;
        await removeContainer(docker, container.id).catch(() => {}); // tried again at the next sweep
        removed++;
      }
      return removed;
    },
  };
}

/** A step's failure in words of its own (the daemon's words are cut and unwrapped). */
class StepFailure extends Error {}

/**
 * Whether runs of a target with these settings can work, step by step, stopping at the first that fails:
 * the daemon answers, the image is allowed and on the host, and `true` runs in a container hardened and
 * limited like a run's (removed afterwards).
 */
export async function dockerDiagnostics(docker: Dockerode, settings: DockerSettings, allowedImages: string[]): Promise<DiagnosticStep[]> {
  const steps: DiagnosticStep[] = [];
  const step = async (name: DiagnosticStep['step'], check: () => Promise<string>) => {
    const started = Date.now();
    const took = () => Date.now() - started;
    try {
      const detail = await check();
      steps.push({ step: name, ok: true, durationMs: took(), detail });
      return true;
    } catch (err) {
      steps.push({ step: name, ok: false, durationMs: took(), detail: err instanceof StepFailure ? err.message : messageOf(err) });
      return false;
    }
  };

  let imageVolumes: string[] = [];
  const answers = await step('daemon', async () => {
    try {
      await docker.ping();
      const { Version, ApiVersion } = await docker.version();
      return `Docker ${Version} answers (API ${ApiVersion}).`;
    } catch (err) {
      throw new StepFailure(`The Docker daemon does not answer: ${messageOf(err)}`);
    }
  });
  const present =
    answers &&
    (await step('image', async () => {
      if (!imageAllowed(settings.image, allowedImages)) throw new StepFailure(notAllowed(settings.image));
      const info = await localImage(docker, settings.image);
      if (!info) throw new StepFailure(`The image ${clip(settings.image)} is not on the Docker host (a run tries to pull it).`);
      imageVolumes = Object.keys(info.Config?.Volumes ?? {});
      return `The image ${clip(settings.image)} is allowed and on the host.`;
    }));
  if (present) {
    await step('run', async () => {
      const options = containerOptions({ name: `flows-${newId('check')}`, settings: { ...settings, command: 'true' }, env: [], labels: { 'flows.check': 'run' }, imageVolumes });
      let container: Dockerode.Container | undefined;
      let timer: NodeJS.Timeout | undefined;
      try {
        container = await docker.createContainer(options);
        await container.start();
        const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`it did not finish within ${CHECK_MS / 1000} seconds`)), CHECK_MS)));
        const { StatusCode } = await Promise.race([container.wait(), late]);
        if (StatusCode !== 0) throw new Error(`it exited with code ${StatusCode}`);
        return "`true` ran in a container hardened and limited like a run's.";
      } catch (err) {
        throw new StepFailure(`\`true\` did not run in a container hardened and limited like a run's: ${messageOf(err)}`);
      } finally {
        clearTimeout(timer);
        if (container) await removeContainer(docker, container.id).catch(() => {});
      }
    });
  }
  return steps;
}
