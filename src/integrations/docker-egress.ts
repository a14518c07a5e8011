// `network: egress` for docker targets: the container reaches nothing but an egress proxy of its run's own
// (egress-proxy.ts, as the local target's), which resolves names itself, lets through public addresses
// only (or only the target's domains), and reports every refusal as a `network_denied` event.
//
// Why this shape (measured with Docker 20.10 on a local daemon):
// - Docker's default bridge is no boundary: from it the agent reached a listener on 0.0.0.0 of the host
//   through the gateway 172.17.0.1, and everything the host routes to, the metadata address included.
// - So the container sits on `flows-egress` (docker-fns.ts): an internal bridge (no route onward, no NAT)
//   without traffic between its containers. Internal alone still let the container reach the host's own
//   addresses (its gateway, 172.17.0.1, the LAN address); the firewall (docker-firewall.ts) drops all of it
//   but the way from each run's container to its own proxy.
// - The proxy listens on the bridge's gateway, on a port of its own per run, and the firewall rule names
//   the container's address and that port: a run cannot use another run's proxy (nor its policy).
// - Not `com.docker.network.bridge.inhibit_ipv4` (no host address on the bridge: measured, the host is then
//   out of reach, but so is any proxy on it), nor a proxy sidecar (Flows's proxy would need an image of its
//   own on the Docker host, and its refusals a way back into the trace).
// - The daemon must run on this machine, whose firewall Flows changes and where the gateway is an address
//   to listen on. With a daemon elsewhere (`tcp://`), `egress` runs do not start, and say why.
import type Dockerode from 'dockerode';
import type { EgressPolicy } from '../lib/egress-policy';
import { dockerIsLocal, statusOf } from './docker-client';
import { createFirewall, FenceProblem, type Firewall } from './docker-firewall';
import { EGRESS_NETWORK, egressEnv, egressGateway, egressNetworkOptions, LABELS } from './docker-fns';
import { openEgress, type EgressDenial, type EgressOptions } from './egress-proxy';

/** What keeps the runs of an `egress` target from starting until the operator changes it. */
export class EgressSetupError extends Error {}

const ELSEWHERE = `\`network: egress\` needs the Docker daemon on this machine (a Unix socket, or tcp:// on loopback): the runs' proxies listen on the gateway of its ${EGRESS_NETWORK} network, and its firewall fences it. Use \`network: none\`, or run Flows on the Docker host.`;

export interface RunEgress {
  /** The container's proxy variables. */
  env: Record<string, string>;
  /** Opens the way from the container's address (Docker gives it one at the start) to the proxy. */
  admit(address: string): Promise<void>;
  /** Closes that way and the proxy. */
  close(): Promise<void>;
}

export function createDockerEgress({
  docker,
  testing,
  firewall = createFirewall({ bridge: EGRESS_NETWORK }),
}: {
  docker: Dockerode;
  /** Tests only: where the proxies resolve names to, and which addresses they count as public. */
  testing?: Pick<EgressOptions, 'resolve' | 'isPublic'>;
  firewall?: Firewall;
}) {
  /** The network's gateway; the network is made when it is not there (again, should someone have removed it). */
  async function gateway(): Promise<string> {
    const inspect = () => docker.getNetwork(EGRESS_NETWORK).inspect();
    let info = await inspect().catch((err) => (statusOf(err) === 404 ? null : Promise.reject(err)));
    if (!info) {
      // 409: another server made it meanwhile.
      await docker.createNetwork(egressNetworkOptions()).catch((err) => (statusOf(err) === 409 ? null : Promise.reject(err)));
      info = await inspect();
    }
    const found = egressGateway(info);
    if ('problem' in found) throw new EgressSetupError(found.problem);
    return found.gateway;
  }

  const asSetup = (err: unknown) => Promise.reject(err instanceof FenceProblem ? new EgressSetupError(err.message) : err);

  /** The gateway of the network, made and fenced (a firewall reload may have dropped the fence: checked every time). */
  async function prepare(): Promise<string> {
    if (!dockerIsLocal(docker)) throw new EgressSetupError(ELSEWHERE);
    const address = await gateway();
    await firewall.fence().catch(asSetup);
    return address;
  }

  /** A proxy on the gateway; a gateway that is no address here is a daemon elsewhere (tcp:// to another machine). */
  async function listen(address: string, options: Omit<EgressOptions, 'resolve' | 'isPublic'>) {
    try {
      return await openEgress({ host: address, port: 0 }, { ...options, ...testing });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EADDRNOTAVAIL') {
        throw new EgressSetupError(`The gateway of the Docker network ${EGRESS_NETWORK}, ${address}, is no address of this machine: the daemon runs elsewhere, or made the network without a gateway on its bridge. ${ELSEWHERE}`);
      }
      throw err;
    }
  }

  return {
    /** The run's proxy, ready for its container, which `admit` lets reach it once it has an address. */
    async open({ tenantId, runId, policy, onDenied }: { tenantId: string; runId: string; policy: EgressPolicy; onDenied(denial: EgressDenial): void }): Promise<RunEgress> {
      const address = await prepare();
      const proxy = await listen(address, { policy, onDenied });
      let closeRule = async () => {};
      return {
        env: egressEnv(`http://${address}:${proxy.port}`),
        async admit(source) {
          closeRule = await firewall.open({ source, gateway: address, port: proxy.port!, tenantId, runId }).catch(asSetup);
        },
        async close() {
          await closeRule();
          await proxy.close();
        },
      };
    },

    /** Removes the rules a run left after a crash of the server that started it. */
    async reap(runId: string) {
      for (const rule of await firewall.rules()) if (rule.runId === runId) await firewall.close(rule.spec);
    },

    /**
     * Removes the rules of runs whose container is gone (a crash between the two removals). A rule is made
     * once its container runs and goes before it: with the rules read first, every rule read whose run is
     * still going has a container in the list read next.
     */
    async sweep() {
      const rules = await firewall.rules();
      if (rules.length === 0) return;
      const containers = await docker.listContainers({ all: true, filters: { label: [LABELS.run] } });
      const withContainer = new Set(containers.map((container) => container.Labels[LABELS.run]));
      for (const rule of rules) if (!withContainer.has(rule.runId)) await firewall.close(rule.spec);
    },

    /** What the diagnostics say of the network: made, fenced, and its gateway an address to listen on here. */
    async check(): Promise<string> {
      const address = await prepare();
      await (await listen(address, { policy: { mode: 'none', allow: [] }, onDenied: () => {} })).close();
      return `The network ${EGRESS_NETWORK} is fenced: from it, a run's container reaches only its own proxy on ${address}.`;
    },
  };
}

export type DockerEgress = ReturnType<typeof createDockerEgress>;
