// The pure parts of the docker egress network: which network Flows accepts as its own, what a run's proxy
// lets through, how the proxy's variables sit among the job's, and the firewall rules of the runs as
// iptables prints them back.
import type { NetworkInspectInfo } from 'dockerode';
import { FIREWALL_CHAIN, parseRunRules, runRuleSpec } from '../../src/integrations/docker-firewall';
import { EGRESS_NETWORK, egressEnv, egressGateway, egressNetworkOptions, egressPolicy, runEnv } from '../../src/integrations/docker-fns';

const made = (changes: Partial<NetworkInspectInfo> = {}): NetworkInspectInfo =>
  ({
    Name: EGRESS_NETWORK,
    Driver: 'bridge',
    Internal: true,
    EnableIPv6: false,
    Options: egressNetworkOptions().Options,
    IPAM: { Driver: 'default', Config: [{ Subnet: '172.21.0.0/16', Gateway: '172.21.0.1' }] },
    ...changes,
  }) as NetworkInspectInfo;

describe('egressGateway', () => {
  it.each([
    ['the network as Flows makes it', made(), { gateway: '172.21.0.1' }],
    ['an IPv6 range besides', made({ IPAM: { Driver: 'default', Config: [{ Subnet: 'fd00::/64', Gateway: 'fd00::1' }, { Subnet: '172.21.0.0/16', Gateway: '172.21.0.1' }] } }), { gateway: '172.21.0.1' }],
  ])('answers the gateway of %s', (_name, info, expected) => {
    expect(egressGateway(info)).toEqual(expected);
  });

  it.each([
    ['not internal', made({ Internal: false })],
    ['traffic between containers', made({ Options: { 'com.docker.network.bridge.name': EGRESS_NETWORK, 'com.docker.network.bridge.enable_icc': 'true' } })],
    ['a bridge of another name', made({ Options: { 'com.docker.network.bridge.enable_icc': 'false' } })],
    ['IPv6', made({ EnableIPv6: true })],
    ['another driver', made({ Driver: 'macvlan' })],
  ])('refuses a network by that name with %s', (_name, info) => {
    expect(egressGateway(info)).toEqual({ problem: expect.stringContaining('is not as Flows makes it') });
  });

  it('refuses a network without an IPv4 gateway', () => {
    expect(egressGateway(made({ IPAM: { Driver: 'default', Config: [] } }))).toEqual({ problem: `The Docker network ${EGRESS_NETWORK} has no IPv4 gateway.` });
  });
});

describe('egressPolicy', () => {
  it.each([
    [[], { mode: 'public', allow: [] }],
    [['api.anthropic.com', '*.npmjs.org'], { mode: 'allowlist', allow: ['api.anthropic.com', '*.npmjs.org'] }],
  ])('with networkAllow %j is %j', (networkAllow, expected) => {
    expect(egressPolicy({ networkAllow })).toEqual(expected);
  });
});

describe('runEnv with a proxy', () => {
  it('puts the proxy over the job’s variables of the same names, and the run variables over both', () => {
    const env = runEnv(
      { runId: 'run_1', jobSlug: 'job', model: null, effort: null, env: { HTTP_PROXY: 'http://elsewhere:1', no_proxy: '*', FLOWS_RUN_ID: 'forged', TOKEN: 't' } },
      { proxy: egressEnv('http://172.21.0.1:40000') },
    );
    expect(env.filter((entry) => /^(https?_proxy|no_proxy|FLOWS_RUN_ID|TOKEN)=/i.test(entry)).sort()).toEqual([
      'FLOWS_RUN_ID=run_1',
      'HTTPS_PROXY=http://172.21.0.1:40000',
      'HTTP_PROXY=http://172.21.0.1:40000',
      'NO_PROXY=localhost,127.0.0.1',
      'TOKEN=t',
      'http_proxy=http://172.21.0.1:40000',
      'https_proxy=http://172.21.0.1:40000',
      'no_proxy=localhost,127.0.0.1',
    ]);
  });
});

describe('the runs’ firewall rules', () => {
  const spec = runRuleSpec({ source: '172.21.0.2', gateway: '172.21.0.1', port: 40000, tenantId: 'ten_1', runId: 'run_2' });

  it('are read back from `iptables -S` as they were written, the quoted comment unquoted', () => {
    const listing = [
      `-N ${FIREWALL_CHAIN}`,
      `-A ${FIREWALL_CHAIN} -s 172.21.0.2/32 -d 172.21.0.1/32 -p tcp -m tcp --dport 40000 -m comment --comment "flows-run:ten_1:run_2" -j ACCEPT`,
      `-A ${FIREWALL_CHAIN} -s 10.0.0.1/32 -m comment --comment "someone else's" -j ACCEPT`,
      `-A ${FIREWALL_CHAIN} -j DROP`,
      '-A INPUT -m comment --comment "flows-run:ten_1:run_3" -j ACCEPT',
    ].join('\n');
    expect(parseRunRules(listing)).toEqual([{ tenantId: 'ten_1', runId: 'run_2', spec }]);
  });

  it('refuse ids that are not words, which would not survive the round trip', () => {
    expect(() => runRuleSpec({ source: '172.21.0.2', gateway: '172.21.0.1', port: 1, tenantId: 'ten 1', runId: 'run_2' })).toThrow();
    expect(() => runRuleSpec({ source: '172.21.0.2', gateway: '172.21.0.1', port: 1, tenantId: 'ten_1', runId: 'run:2' })).toThrow();
  });
});
