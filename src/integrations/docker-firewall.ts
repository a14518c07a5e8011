// The fence of the egress network in the Docker host's firewall. Docker's `Internal` network routes
// nothing onward, but the host itself stays reachable from it: measured with Docker 20.10, a container on an
// internal network reached a listener on 0.0.0.0 of the host through the bridge's gateway, through the
// default bridge's 172.17.0.1 and through the host's LAN address alike, since packets for any of the
// host's own addresses go to INPUT, which Docker leaves alone. So a chain of Flows's own, entered from
// INPUT and FORWARD for everything that comes in on the bridge, lets each run's container reach its own
// proxy (its address, the gateway, the proxy's port) and drops the rest; IPv6 from the bridge is dropped
// whole (Docker turns IPv6 off in the containers of a network without it; this holds should it not).
// It takes iptables as root or with CAP_NET_ADMIN: the same `iptables` Docker itself drives.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

const exec = promisify(execFile);

export const FIREWALL_CHAIN = 'FLOWS-EGRESS';
/** Marks a run's rule: `flows-run:<tenantId>:<runId>`. */
const MARK = 'flows-run';
const EXEC_MS = 10_000;

/** What an operator has to change: the error says what, and that runs cannot have a network until then. */
export class FenceProblem extends Error {}

export interface RunRule {
  tenantId: string;
  runId: string;
  /** The rule as `iptables -S` prints it, without the chain: deleted with `-D`. */
  spec: string[];
}

/** A run's rule: its container, and only it, reaches its proxy. */
export function runRuleSpec({ source, gateway, port, tenantId, runId }: { source: string; gateway: string; port: number; tenantId: string; runId: string }): string[] {
  if (![tenantId, runId].every((id) => /^[\w-]{1,100}$/.test(id))) throw new Error('Run and tenant ids are words.');
  return ['-s', `${source}/32`, '-d', `${gateway}/32`, '-p', 'tcp', '-m', 'tcp', '--dport', String(port), '-m', 'comment', '--comment', `${MARK}:${tenantId}:${runId}`, '-j', 'ACCEPT'];
}

/** The runs' rules in `iptables -S FLOWS-EGRESS`, which quotes the comment. */
export function parseRunRules(listing: string): RunRule[] {
  return listing.split('\n').flatMap((line) => {
    const [append, chain, ...spec] = line.trim().split(/\s+/).map((word) => word.replace(/^"(.*)"$/, '$1'));
    const mark = spec[spec.indexOf('--comment') + 1]?.split(':');
    if (append !== '-A' || chain !== FIREWALL_CHAIN || mark?.length !== 3 || mark[0] !== MARK) return [];
    return [{ tenantId: mark[1], runId: mark[2], spec }];
  });
}

export function createFirewall({ bridge, iptables = 'iptables', ip6tables = 'ip6tables' }: { bridge: string; iptables?: string; ip6tables?: string }) {
  const run = async (binary: string, args: string[]) => (await exec(binary, ['-w', ...args], { timeout: EXEC_MS })).stdout;
  const failed = (binary: string, args: string[], err: unknown) => {
    const why = ((err as { stderr?: string }).stderr || (err as Error).message).trim().slice(0, 300);
    return new FenceProblem(
      `Flows could not fence the Docker network ${bridge} in the host's firewall (\`${binary} ${args.join(' ')}\`: ${why}). ` +
        '`network: egress` needs Flows on the Docker host with iptables, as root or with CAP_NET_ADMIN; until then such runs do not start.',
    );
  };
  /** Adds the rule unless it is there (`-C`). */
  const ensure = async (binary: string, check: string[], add: string[]) => {
    try {
      await run(binary, ['-C', ...check]);
    } catch {
      await run(binary, add).catch((err) => {
        throw failed(binary, add, err);
      });
    }
  };
  const ipv4 = async () => {
    // Made by whichever server came first; `-N` fails when it exists, which `-C` then tells from a real failure.
    await run(iptables, ['-N', FIREWALL_CHAIN]).catch(() => {});
    await ensure(iptables, [FIREWALL_CHAIN, '-j', 'DROP'], ['-A', FIREWALL_CHAIN, '-j', 'DROP']);
    // First in INPUT and FORWARD, ahead of whatever else the host's own rules let in.
    for (const hook of ['INPUT', 'FORWARD']) await ensure(iptables, [hook, '-i', bridge, '-j', FIREWALL_CHAIN], ['-I', hook, '1', '-i', bridge, '-j', FIREWALL_CHAIN]);
  };
  /** Deletes a run's rule; one gone already counts as deleted. */
  const close = (spec: string[]) => run(iptables, ['-D', FIREWALL_CHAIN, ...spec]).then(() => {}, () => {});
  const ipv6 = async () => {
    try {
      for (const hook of ['INPUT', 'FORWARD']) await ensure(ip6tables, [hook, '-i', bridge, '-j', 'DROP'], ['-I', hook, '1', '-i', bridge, '-j', 'DROP']);
    } catch (err) {
      // A kernel without IPv6 has nothing to fence.
      if (existsSync('/proc/net/if_inet6')) throw err;
    }
  };

  return {
    /** Makes sure the fence stands (a firewall reload may have dropped it); cheap enough for every run. */
    async fence(): Promise<void> {
      await ipv4();
      await ipv6();
    },

    /** Opens the way from a run's container to its proxy; answers how to close it again. */
    async open(rule: Parameters<typeof runRuleSpec>[0]): Promise<() => Promise<void>> {
      const spec = runRuleSpec(rule);
      await run(iptables, ['-I', FIREWALL_CHAIN, '1', ...spec]).catch((err) => {
        throw failed(iptables, ['-I', FIREWALL_CHAIN, '1', ...spec], err);
      });
      return () => close(spec);
    },

    close,

    /** The runs' rules there are (none when the chain is not there, or iptables cannot be run). */
    rules: async (): Promise<RunRule[]> => parseRunRules(await run(iptables, ['-S', FIREWALL_CHAIN]).catch(() => '')),
  };
}

export type Firewall = ReturnType<typeof createFirewall>;
