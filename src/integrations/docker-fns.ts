// The rules of the Docker executor, apart from the daemon: which images the operator allows, and what a
// run's container is (its hardening, limits, environment and labels), so that they read in one place.
import type { ContainerCreateOptions } from 'dockerode';
import { runVariables, type RunSpec } from './executor';

export interface DockerSettings {
  image: string;
  /** Run by /bin/sh in place of the image's entrypoint; null runs the image as it is. */
  command: string | null;
  cpus: number;
  memoryMb: number;
  pids: number;
  network: 'none' | 'egress';
}

export const LABELS = { run: 'flows.run', tenant: 'flows.tenant', instance: 'flows.instance' } as const;
const AGENT_USER = '1000:1000';
const WORKSPACE = '/workspace';

const MIB = 1024 * 1024;

/** A pattern of FLOWS_DOCKER_IMAGES as an anchored expression: `*` stands for any run of characters, `/` and `:` too. */
function imagePattern(glob: string): RegExp {
  const literal = (part: string) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${glob.split('*').map(literal).join('.*')}$`, 's');
}

/** Matched against the reference as the target writes it: `busybox` is not `busybox:latest`. */
export const imageAllowed = (image: string, patterns: string[]) => patterns.some((glob) => imagePattern(glob).test(image));

/** The agent's environment: its home in the workspace, the job's variables, and the run variables over them. */
export function runEnv(spec: Pick<RunSpec, 'runId' | 'jobSlug' | 'model' | 'effort' | 'env'>): string[] {
  const vars = {
    HOME: WORKSPACE,
    TMPDIR: '/tmp',
    ...spec.env,
    ...runVariables(spec),
  };
  return Object.entries(vars).map(([name, value]) => `${name}=${value}`);
}

/**
 * A fresh container for one run: user 1000 with no capabilities and no way to gain privileges, a read-only
 * root with only /workspace and /tmp writable (in memory, counted in its memory limit), CPU, memory and
 * process limits, no network or the default bridge, and nothing of the host mounted. The volumes the
 * image declares become memory too: Docker would otherwise make each a volume on the host.
 */
export function containerOptions({ name, settings, env, labels, imageVolumes }: { name: string; settings: DockerSettings; env: string[]; labels: Record<string, string>; imageVolumes: string[] }): ContainerCreateOptions {
  const { image, command, cpus, memoryMb, pids, network } = settings;
  // Agents build and run code where they work: Docker's default `noexec` is lifted (it stops little anyway, `sh file` still runs).
  const scratch = `rw,exec,nosuid,nodev,size=${memoryMb}m`;
  return {
    name,
    Image: image,
    User: AGENT_USER,
    WorkingDir: WORKSPACE,
    Env: env,
    // An empty entrypoint, or the image's would get the command as arguments.
    ...(command === null ? {} : { Entrypoint: [], Cmd: ['/bin/sh', '-c', command] }),
    OpenStdin: true,
    StdinOnce: true,
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
    Labels: labels,
    HostConfig: {
      // A real init as PID 1: the agent gets the SIGTERM of a stop (a shell as PID 1 ignores it), and zombies are reaped.
      Init: true,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      ReadonlyRootfs: true,
      Tmpfs: {
        ...Object.fromEntries(imageVolumes.map((volume) => [volume, scratch])),
        [WORKSPACE]: `${scratch},uid=1000,gid=1000,mode=0700`,
        '/tmp': `${scratch},mode=1777`,
      },
      NanoCpus: Math.round(cpus * 1e9),
      Memory: memoryMb * MIB,
      MemorySwap: memoryMb * MIB,
      PidsLimit: pids,
      NetworkMode: network === 'none' ? 'none' : 'bridge',
      // The output reaches the trace through the attach stream; a log on the host would keep it, unbounded.
      LogConfig: { Type: 'none', Config: {} },
      AutoRemove: false,
    },
  };
}
