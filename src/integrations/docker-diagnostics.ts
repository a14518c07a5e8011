// Whether runs of a docker target can work, step by step, stopping at the first that fails: the daemon
// answers, the image is allowed and on the host, for `egress` the network is made and fenced, and `true`
// runs in a container hardened, limited and networked like a run's (removed afterwards).
import type Dockerode from 'dockerode';
import { newId } from '../lib/ids';
import { clip } from '../lib/text';
import { localImage, messageOf, removeContainer } from './docker-client';
import { createDockerEgress, EgressSetupError, type DockerEgress } from './docker-egress';
import { containerOptions, imageAllowed, type DockerSettings } from './docker-fns';

/** How long the diagnostic container may take to run `true`. */
const CHECK_MS = 30_000;

export interface DiagnosticStep {
  step: 'daemon' | 'image' | 'network' | 'run';
  ok: boolean;
  durationMs: number;
  detail: string;
}

export const notAllowed = (image: string) => `The operator's FLOWS_DOCKER_IMAGES does not allow the image ${clip(image)}.`;

/** A step's failure in words of its own (the daemon's words are cut and unwrapped). */
class StepFailure extends Error {}

async function runsTrue(docker: Dockerode, settings: DockerSettings, imageVolumes: string[]) {
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
}

export async function dockerDiagnostics(
  docker: Dockerode,
  settings: DockerSettings,
  allowedImages: string[],
  egress: Pick<DockerEgress, 'check'> = createDockerEgress({ docker }),
): Promise<DiagnosticStep[]> {
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
  const networked =
    present &&
    (settings.network === 'none' ||
      (await step('network', () => egress.check().catch((err) => Promise.reject(err instanceof EgressSetupError ? new StepFailure(err.message) : err)))));
  if (networked) await step('run', () => runsTrue(docker, settings, imageVolumes));
  return steps;
}
