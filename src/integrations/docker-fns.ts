// The rules of the Docker executor, apart from the daemon: which images the operator allows, and what a
// run's container is (its hardening, limits, environment, labels and network), so that they read in one place.
import { agentVariables, isStreamKind } from '../agents/agents-fns';
import type { ContainerCreateOptions, MountSettings, NetworkCreateOptions, NetworkInspectInfo } from 'dockerode';
import { proxyVariables, type EgressPolicy } from '../lib/egress-policy';
import { runVariables, type RunSpec } from './executor';
import { globMatches } from '../lib/glob';

export interface DockerSettings {
  image: string;
  /** Run by /bin/sh in place of the image's entrypoint; null runs the image as it is. */
  command: string | null;
  cpus: number;
  memoryMb: number;
  pids: number;
  /** `none`: no interface but loopback. `egress`: the egress network, out only through the run's proxy (docker-egress.ts). */
  network: 'none' | 'egress';
  /** With `egress`, the only domains the proxy lets through (`*.npmjs.org` for the names under it); empty: any public address. */
  networkAllow: string[];
}

export const LABELS = { run: 'flows.run', tenant: 'flows.tenant', instance: 'flows.instance' } as const;
/** The user (and group) a run's agent is in its container. */
export const AGENT_UID = 1000;
const AGENT_USER = `${AGENT_UID}:${AGENT_UID}`;
export const WORKSPACE = '/workspace';

const MIB = 1024 * 1024;

/**
 * The Docker network of `egress` runs, and the name of its bridge on the host, which the firewall rules
 * name (docker-firewall.ts) and which a fixed name keeps stable when the network is made again.
 */
export const EGRESS_NETWORK = 'flows-egress';
const BRIDGE_OPTIONS = { 'com.docker.network.bridge.name': EGRESS_NETWORK, 'com.docker.network.bridge.enable_icc': 'false' };

/**
 * `Internal`: Docker routes nothing from it to anywhere (no default route out, no NAT). Without traffic
 * between its containers (`enable_icc`): one run cannot reach another. What Docker leaves open, the host's
 * own addresses, the firewall closes.
 */
export const egressNetworkOptions = (): NetworkCreateOptions => ({
  Name: EGRESS_NETWORK,
  CheckDuplicate: true,
  Driver: 'bridge',
  Internal: true,
  EnableIPv6: false,
  Options: BRIDGE_OPTIONS,
  Labels: { 'flows.network': 'egress' },
});

/** The gateway (the host's address on the bridge, where the runs' proxies listen), or why the network by that name will not do. */
export function egressGateway(info: NetworkInspectInfo): { gateway: string } | { problem: string } {
  const made = Object.entries(BRIDGE_OPTIONS).every(([name, value]) => info.Options?.[name] === value);
  if (info.Driver !== 'bridge' || !info.Internal || info.EnableIPv6 || !made) {
    return { problem: `The Docker network ${EGRESS_NETWORK} exists but is not as Flows makes it (an internal bridge named ${EGRESS_NETWORK}, no traffic between containers, no IPv6): remove it (\`docker network rm ${EGRESS_NETWORK}\`) and Flows makes it again at the next run.` };
  }
  const gateway = info.IPAM?.Config?.find((config) => config.Gateway && !config.Gateway.includes(':'))?.Gateway;
  return gateway ? { gateway } : { problem: `The Docker network ${EGRESS_NETWORK} has no IPv4 gateway.` };
}

/** What an `egress` run's proxy lets through: the target's domains, or any public address. */
export const egressPolicy = ({ networkAllow }: Pick<DockerSettings, 'networkAllow'>): EgressPolicy =>
  networkAllow.length > 0 ? { mode: 'allowlist', allow: networkAllow } : { mode: 'public', allow: [] };

/** How the agent finds its proxy: the variables most HTTP clients read, in both cases. */
export const egressEnv = (proxy: string) => proxyVariables(proxy, ['localhost', '127.0.0.1']);

/**
 * A pattern of FLOWS_DOCKER_IMAGES (`*` stands for any run of characters, `/` and `:` too) matched in linear
 * time against the reference as the target writes it (a tenant's): `busybox` is not `busybox:latest`.
 */
export const imageAllowed = (image: string, patterns: string[]) => patterns.some((glob) => globMatches(glob, image));

/**
 * The agent's environment: its home in the workspace (or where its session's state is kept), the job's
 * variables, and the proxy's and the run variables over them.
 */
export function runEnv(spec: Pick<RunSpec, 'runId' | 'jobSlug' | 'model' | 'effort' | 'env' | 'agent' | 'workspace'>, { proxy = {}, state = {} }: { proxy?: Record<string, string>; state?: Record<string, string> } = {}): string[] {
  const vars = {
    // A repository's volume at /workspace belongs to root, but for the repository's folder: home is in /tmp then.
    HOME: spec.workspace ? '/tmp' : WORKSPACE,
    TMPDIR: '/tmp',
    ...(spec.agent && isStreamKind(spec.agent.kind) ? agentVariables(spec.agent.kind) : {}),
    ...state,
    ...spec.env,
    ...proxy,
    ...runVariables(spec),
  };
  return Object.entries(vars).map(([name, value]) => `${name}=${value}`);
}

/**
 * A fresh container for one run: user 1000 with no capabilities and no way to gain privileges, a read-only
 * root with only /workspace and /tmp writable (in memory, counted in its memory limit), CPU, memory and
 * process limits, no network or the egress network, and nothing of the host mounted: the one volume
 * `mounts` may name is its session's kept agent state. The volumes the
 * image declares become memory too: Docker would otherwise make each a volume on the host. Without
 * NET_ADMIN and NET_RAW (every capability is dropped) the agent cannot change its address or routes, nor
 * forge packets: the firewall's rule for its address holds.
 */
export function containerOptions({
  name,
  settings,
  env,
  labels,
  imageVolumes,
  mounts = [],
  workingDir = WORKSPACE,
}: {
  name: string;
  settings: DockerSettings;
  env: string[];
  labels: Record<string, string>;
  imageVolumes: string[];
  /** Volumes of the run: its session's kept agent state, its repository workspace (then at /workspace, instead of memory). */
  mounts?: MountSettings[];
  workingDir?: string;
}): ContainerCreateOptions {
  const { image, command, cpus, memoryMb, pids, network } = settings;
  // Agents build and run code where they work: Docker's default `noexec` is lifted (it stops little anyway, `sh file` still runs).
  const scratch = `rw,exec,nosuid,nodev,size=${memoryMb}m`;
  return {
    name,
    Image: image,
    User: AGENT_USER,
    WorkingDir: workingDir,
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
        ...(mounts.some((mount) => mount.Target === WORKSPACE) ? {} : { [WORKSPACE]: `${scratch},uid=1000,gid=1000,mode=0700` }),
        '/tmp': `${scratch},mode=1777`,
      },
      NanoCpus: Math.round(cpus * 1e9),
      Memory: memoryMb * MIB,
      MemorySwap: memoryMb * MIB,
      PidsLimit: pids,
      Mounts: mounts,
      NetworkMode: network === 'none' ? 'none' : EGRESS_NETWORK,
      // The output reaches the trace through the attach stream; a log on the host would keep it, unbounded.
      LogConfig: { Type: 'none', Config: {} },
      AutoRemove: false,
    },
  };
}
