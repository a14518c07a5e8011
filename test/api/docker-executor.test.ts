// The Docker executor against a real daemon, with a busybox image made without a registry: the prompt on
// stdin and the run variables in, the output and the result out; failure, stop, timeout and running out of
// memory; the hardening and limits as the daemon reports them and as the agent meets them; images the
// operator does not allow or the host does not have; a container left by a crash reaped; the diagnostics;
// the egress network as a boundary (probed from inside against services of this machine, a metadata
// stand-in and another run, beside a plain container on Docker's bridge that reaches them all).
// Every container goes, whatever the path.
import Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, mkdtemp, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createDockerEgress } from '../../src/integrations/docker-egress';
import { createDockerExecutor, dockerDiagnostics, type DockerSettings } from '../../src/integrations/docker-executor';
import { createFirewall } from '../../src/integrations/docker-firewall';
import { EGRESS_NETWORK } from '../../src/integrations/docker-fns';
import type { RunSpec } from '../../src/integrations/executor';
import { egressRules, ensureAgentTestImage, ensureDockerd, ensureTestImage, httpStandIn, lanAddress, metadataStandIn, runPlain, TEST_IMAGE } from '../support/docker';

jest.setTimeout(120_000);

const docker = new Docker();
const INSTANCE = `test-${process.pid}`;
const TENANT = 'ten_docker';
const ALLOWED = ['flows-test/*:1', 'ghcr.io/acme/*'];
const BASE: DockerSettings = { image: TEST_IMAGE, command: null, cpus: 0.5, memoryMb: 64, pids: 32, network: 'none', networkAllow: [] };
const MIB = 1024 * 1024;

/** The settings of each target a test made; a target not in here is gone. */
const targets = new Map<string, DockerSettings>();
const settingsOf = async (_tenantId: string, targetId: string) => targets.get(targetId) ?? null;
const executor = createDockerExecutor({ docker, instanceId: INSTANCE, allowedImages: ALLOWED, settingsOf, killGraceMs: 1_000 });

beforeAll(async () => {
  await ensureDockerd();
  await ensureTestImage();
});

afterAll(async () => {
  for (const container of await executor.containers()) if (container.instanceId === INSTANCE) await executor.remove(container.id);
});

let runs = 0;

/** Starts a run with these settings on `executor`, collecting what it reports. */
async function startRun(settings: Partial<DockerSettings>, spec: Partial<RunSpec> = {}, on = executor) {
  const targetId = `target_${++runs}`;
  targets.set(targetId, { ...BASE, ...settings });
  const runId = `run_${process.pid}_${runs}`;
  const lines: { stream: string; text: string }[] = [];
  const provisioning: Record<string, unknown>[] = [];
  const denied: Record<string, unknown>[] = [];
  const execution = await on.start(
    { tenantId: TENANT, targetId, runId, jobSlug: 'docker-job', prompt: 'Fix the bug', model: 'large', effort: 'high', timeoutSeconds: 30, env: {}, ...spec },
    {
      output: (stream, text) => lines.push({ stream, text }),
      provisioning: (data) => provisioning.push(data),
      sandbox: (type, data) => (type === 'network_denied' ? denied.push(data) : undefined),
    },
  );
  const containerId = execution.ref.slice('docker:'.length);
  return { execution, runId, containerId, lines, provisioning, denied, stdout: () => lines.filter((line) => line.stream === 'stdout').map((line) => line.text) };
}

async function until(condition: () => boolean | Promise<boolean>, what: string) {
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 25))) {
    if (await condition()) return;
  }
  throw new Error(`never: ${what}`);
}

/** The HTTP status inspecting the container gets: 404 once it is gone. */
const inspectStatus = (id: string) => docker.getContainer(id).inspect().then(() => 200, (err: { statusCode?: number }) => err.statusCode);

describe('a run in a container', () => {
  it('succeeds: prompt on stdin, run variables and the job variables in, the output line by line, the last line as result', async () => {
    const command = [
      'prompt=$(cat)',
      'echo "prompt=$prompt"',
      'echo "run=$FLOWS_RUN_ID slug=$FLOWS_JOB_SLUG model=$FLOWS_MODEL effort=$FLOWS_EFFORT"',
      'echo "token=$API_TOKEN home=$HOME tmp=$TMPDIR dir=$PWD user=$(id -u):$(id -g)"',
      'echo "a warning" >&2',
      'printf \'{"summary":"done","changed":2}\'',
    ].join('; ');
    const run = await startRun({ command }, { env: { API_TOKEN: 'tok-123', FLOWS_RUN_ID: 'forged' } });
    expect(run.execution.ref).toMatch(/^docker:[0-9a-f]{64}$/);

    expect(await run.execution.done).toEqual({ state: 'succeeded', result: { summary: 'done', changed: 2 } });
    expect(run.stdout()).toEqual([
      'prompt=Fix the bug',
      `run=${run.runId} slug=docker-job model=large effort=high`,
      'token=tok-123 home=/workspace tmp=/tmp dir=/workspace user=1000:1000',
      '{"summary":"done","changed":2}',
    ]);
    expect(run.lines.filter((line) => line.stream === 'stderr')).toEqual([{ stream: 'stderr', text: 'a warning' }]);
    const containerId = run.containerId.slice(0, 12);
    expect(run.provisioning).toEqual([
      { status: 'container_started', containerId },
      { status: 'container_removed', containerId },
    ]);
    expect(await inspectStatus(run.containerId)).toBe(404);
  });

  it('runs the image as it is when the target has no command, the prompt on its stdin', async () => {
    // The test image's entrypoint is /bin/sh: the prompt is its script.
    const run = await startRun({ command: null }, { prompt: 'echo "entrypoint ran as $(id -u) in $PWD"' });
    expect(await run.execution.done).toEqual({ state: 'succeeded', result: { summary: 'entrypoint ran as 1000 in /workspace' } });
  });

  it('fails on a non-zero exit, with the code and the last error line', async () => {
    const run = await startRun({ command: 'echo working; echo "bad things happened" >&2; exit 3' });
    expect(await run.execution.done).toEqual({ state: 'failed', error: 'The agent exited with code 3: bad things happened', cause: 'agent' });
    // stdout and stderr are separate pipes: each keeps its order, but nothing orders one against the other.
    expect(run.lines).toHaveLength(2);
    expect(run.lines).toEqual(expect.arrayContaining([
      { stream: 'stdout', text: 'working' },
      { stream: 'stderr', text: 'bad things happened' },
    ]));
    expect(await inspectStatus(run.containerId)).toBe(404);
  });

  it('fails as out of memory when the agent goes over its memory limit', async () => {
    // /tmp is memory: filling it beyond the limit has the kernel kill the agent.
    const run = await startRun({ command: 'echo filling; head -c 64m /dev/zero > /tmp/fill; echo survived', memoryMb: 16 });
    expect(await run.execution.done).toEqual({ state: 'failed', error: 'The agent ran out of memory (16 MB).', cause: 'agent' });
    expect(run.stdout()).toEqual(['filling']);
  });

  it('is stopped with SIGTERM while running: canceled, and the container is gone', async () => {
    // A grace far longer than the test: the agent ends on the SIGTERM alone, which the init in the container passes on.
    const patient = createDockerExecutor({ docker, instanceId: INSTANCE, allowedImages: ALLOWED, settingsOf, killGraceMs: 60_000 });
    const run = await startRun({ command: 'echo started; sleep 30; echo never' }, {}, patient);
    await until(() => run.stdout().includes('started'), 'the agent started');
    const stoppedAt = Date.now();
    run.execution.stop();
    expect(await run.execution.done).toEqual({ state: 'canceled', error: 'The run was stopped.' });
    expect(Date.now() - stoppedAt).toBeLessThan(10_000);
    expect(run.stdout()).toEqual(['started']);
    expect(await inspectStatus(run.containerId)).toBe(404);
  });

  it('times out, killing an agent that ignores SIGTERM once the grace is over, and the container is gone', async () => {
    const startedAt = Date.now();
    const run = await startRun({ command: 'trap "" TERM; echo started; sleep 30' }, { timeoutSeconds: 1 });
    expect(await run.execution.done).toEqual({ state: 'timed_out', error: 'The agent was still running after 1 seconds.' });
    // The timeout (1 s) and the grace (1 s) passed, not the sleep.
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(2_000);
    expect(Date.now() - startedAt).toBeLessThan(15_000);
    expect(await inspectStatus(run.containerId)).toBe(404);
  });
  it('fails when the daemon refuses to create the container, leaving none', async () => {
    const run = await startRun({ command: 'true', memoryMb: 1 });
    expect(run.execution.ref).toBe('docker:none');
    expect(await run.execution.done).toMatchObject({ state: 'failed', error: expect.stringMatching(/^The container could not be created: .*memory/i) });
    expect((await executor.containers()).map((container) => container.runId)).not.toContain(run.runId);
  });
});

describe('the container', () => {
  it('is hardened and limited as the target says, labelled with its run, and mounts nothing of the host', async () => {
    const run = await startRun({ command: 'echo ready; sleep 30', cpus: 0.5, memoryMb: 96, pids: 40 });
    await until(() => run.stdout().includes('ready'), 'the container runs');

    const listed = (await executor.containers()).find((container) => container.runId === run.runId);
    expect(listed).toEqual({ id: run.containerId, runId: run.runId, tenantId: TENANT, instanceId: INSTANCE, running: true });
    const info = await docker.getContainer(listed!.id).inspect();
    expect(info.Name).toBe(`/flows-${run.runId}`);
    expect(info.Config.User).toBe('1000:1000');
    expect(info.Config.WorkingDir).toBe('/workspace');
    expect(info.Config.Labels).toEqual({ 'flows.run': run.runId, 'flows.tenant': TENANT, 'flows.instance': INSTANCE });
    expect(info.Config.Entrypoint).toEqual([]);
    expect(info.Config.Cmd).toEqual(['/bin/sh', '-c', 'echo ready; sleep 30']);
    expect(info.HostConfig).toMatchObject({
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      ReadonlyRootfs: true,
      Privileged: false,
      NanoCpus: 500_000_000,
      Memory: 96 * MIB,
      MemorySwap: 96 * MIB,
      PidsLimit: 40,
      NetworkMode: 'none',
      AutoRemove: false,
      Init: true,
      LogConfig: { Type: 'none', Config: {} },
    });
    expect(info.HostConfig.CapAdd ?? []).toEqual([]);
    expect(info.HostConfig.Binds ?? []).toEqual([]);
    // No bind and no volume: the image's declared /data is memory, like /workspace and /tmp.
    expect(info.Mounts).toEqual([]);
    expect(Object.keys(info.HostConfig.Tmpfs ?? {}).sort()).toEqual(['/data', '/tmp', '/workspace']);
    expect(info.HostConfig.Tmpfs!['/workspace']).toMatch(/^rw,exec,nosuid,nodev,size=96m,uid=1000,gid=1000/);

    run.execution.stop();
    expect((await run.execution.done).state).toBe('canceled');
  });

  it('leaves the agent only /workspace and /tmp to write, no network but loopback, no capabilities', async () => {
    const command = [
      'touch /etc/x 2>/dev/null && echo "root=writable" || echo "root=read-only"',
      'touch /data/x 2>/dev/null && echo "data=writable" || echo "data=read-only"',
      'echo "echo ran from the workspace" > /workspace/tool; chmod +x /workspace/tool; /workspace/tool',
      'touch /tmp/x && echo "tmp=writable"',
      'echo "mounts=$(grep -E " /(workspace|tmp|data) " /proc/mounts | cut -d" " -f1,2 | sort | tr "\\n" ,)"',
      'echo "net=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | tr "\\n" ,)"',
      'echo "caps=$(grep CapEff /proc/self/status | cut -f2) nnp=$(grep NoNewPrivs /proc/self/status | cut -f2)"',
      'echo "socket=$(ls /var/run/docker.sock /run/docker.sock 2>/dev/null | wc -l)"',
    ].join('; ');
    const run = await startRun({ command });
    expect((await run.execution.done).state).toBe('succeeded');
    expect(run.stdout()).toEqual([
      'root=read-only',
      'data=read-only',
      'ran from the workspace',
      'tmp=writable',
      'mounts=tmpfs /data,tmpfs /tmp,tmpfs /workspace,',
      'net=lo,',
      'caps=0000000000000000 nnp=1',
      'socket=0',
    ]);
  });
});

describe('images', () => {
  it('fails a run on an image outside the allowlist, without a container', async () => {
    const run = await startRun({ image: 'docker.io/library/alpine:3' });
    expect(run.execution.ref).toBe('docker:none');
    expect(await run.execution.done).toEqual({ state: 'failed', error: "The operator's FLOWS_DOCKER_IMAGES does not allow the image docker.io/library/alpine:3.", cause: 'setup' });
    expect(run.provisioning).toEqual([]);
    expect((await executor.containers()).map((container) => container.runId)).not.toContain(run.runId);
  });

  it('matches the allowlist as globs: `*` for any run of characters, the rest literally', async () => {
    // Allowed by `flows-test/*:1`, but the tag is not 1.
    const wrongTag = await startRun({ image: 'flows-test/busybox:2' });
    expect(await wrongTag.execution.done).toMatchObject({ state: 'failed', error: expect.stringContaining('FLOWS_DOCKER_IMAGES does not allow the image') });
    // `ghcr.io/acme/*` allows a nested name; the dots of the pattern are dots, so this is not allowed.
    const lookalike = await startRun({ image: 'ghcrXio/acme/agent:1' });
    expect(await lookalike.execution.done).toMatchObject({ state: 'failed', error: expect.stringContaining('FLOWS_DOCKER_IMAGES does not allow the image') });
    const nested = await startRun({ image: 'ghcr.io/acme/team/agent:1' });
    expect(await nested.execution.done).toMatchObject({ state: 'failed', error: expect.stringContaining('is not available on the Docker host') });
  });

  it('fails a run clearly on an allowed image the host does not have and cannot pull', async () => {
    const run = await startRun({ image: 'flows-test/absent:1' });
    expect(run.execution.ref).toBe('docker:none');
    const outcome = await run.execution.done;
    // The daemon's words follow, not the client's wrapping of them.
    expect(outcome).toMatchObject({ state: 'failed', error: expect.stringMatching(/^The image flows-test\/absent:1 is not available on the Docker host, and pulling it failed: [^(]/) });
    expect((await executor.containers()).map((container) => container.runId)).not.toContain(run.runId);
  });

  it('fails a run whose target is gone', async () => {
    const lines: string[] = [];
    const execution = await executor.start(
      { tenantId: TENANT, targetId: 'target_gone', runId: `run_${process.pid}_gone`, jobSlug: 'docker-job', prompt: 'x', model: null, effort: null, timeoutSeconds: 5, env: {} },
      { output: (_stream, text) => lines.push(text), provisioning: () => lines.push('provisioning'), sandbox: () => {} },
    );
    expect(await execution.done).toEqual({ state: 'failed', error: 'The container could not be created: the execution target no longer exists.', cause: 'setup' });
    expect(lines).toEqual([]);
  });
});

describe('after a crash', () => {
  it('reaps the container a run left behind, only for its own run, and the run still settles', async () => {
    const run = await startRun({ command: 'echo ready; sleep 30' });
    await until(() => run.stdout().includes('ready'), 'the container runs');

    await executor.reap(run.execution.ref, 'run_someone_else');
    expect(await inspectStatus(run.containerId)).toBe(200);

    await executor.reap(run.execution.ref, run.runId);
    expect(await inspectStatus(run.containerId)).toBe(404);
    expect(await run.execution.done).toEqual({ state: 'failed', error: 'The container was removed while the agent was running.', cause: 'infrastructure' });
    // Nothing left to reap: no error.
    await executor.reap(run.execution.ref, run.runId);
    await executor.reap('docker:none', run.runId);
  });

  it('lists the runs’ containers from their labels, and removes one on request', async () => {
    const run = await startRun({ command: 'echo ready; sleep 30' });
    await until(() => run.stdout().includes('ready'), 'the container runs');
    expect(await executor.containers()).toContainEqual({ id: run.containerId, runId: run.runId, tenantId: TENANT, instanceId: INSTANCE, running: true });

    await executor.remove(run.containerId);
    expect(await inspectStatus(run.containerId)).toBe(404);
    await executor.remove(run.containerId); // gone already: no error
    expect(await run.execution.done).toEqual({ state: 'failed', error: 'The container was removed while the agent was running.', cause: 'infrastructure' });
    expect((await executor.containers()).map((container) => container.id)).not.toContain(run.containerId);
  });
});

describe('diagnostics', () => {
  it('passes every step for the test image, and leaves no container', async () => {
    const steps = await dockerDiagnostics(docker, BASE, ALLOWED);
    expect(steps.map((step) => [step.step, step.ok])).toEqual([
      ['daemon', true],
      ['image', true],
      ['run', true],
    ]);
    expect(steps[0].detail).toMatch(/^Docker \S+ answers \(API [\d.]+\)\.$/);
    // Another test file's check may be under way for a moment; one left behind would stay.
    await until(async () => (await docker.listContainers({ all: true, filters: { label: ['flows.check'] } })).length === 0, 'no diagnostic container is left');
  });

  it('stops at the image when it is missing or not allowed', async () => {
    const missing = await dockerDiagnostics(docker, { ...BASE, image: 'flows-test/absent:1' }, ALLOWED);
    expect(missing.map((step) => [step.step, step.ok])).toEqual([
      ['daemon', true],
      ['image', false],
    ]);
    expect(missing[1].detail).toContain('flows-test/absent:1 is not on the Docker host');
    const refused = await dockerDiagnostics(docker, BASE, ['ghcr.io/acme/*']);
    expect(refused[1]).toEqual({ step: 'image', ok: false, durationMs: expect.any(Number), detail: `The operator's FLOWS_DOCKER_IMAGES does not allow the image ${TEST_IMAGE}.` });
  });

  it('fails the run step when a container with the target’s limits cannot run', async () => {
    // Below the smallest memory limit Docker accepts.
    const steps = await dockerDiagnostics(docker, { ...BASE, memoryMb: 1 }, ALLOWED);
    expect(steps.map((step) => [step.step, step.ok])).toEqual([
      ['daemon', true],
      ['image', true],
      ['run', false],
    ]);
    expect(steps[2].detail).toMatch(/^`true` did not run in a container hardened and limited like a run's: .*memory/i);
  });
});

describe('the egress network', () => {
  // Nothing public is reachable from here: a made-up name leads to a second loopback address, which these
  // proxies alone count as public. The rest of the proxy's judgement is its own.
  const PUBLIC_STAND_IN = '127.0.0.2';
  const names: Record<string, string[]> = { 'public.flows-test': [PUBLIC_STAND_IN], 'other.flows-test': [PUBLIC_STAND_IN], 'rebind.flows-test': ['127.0.0.1'] };
  const testing = { resolve: async (host: string) => names[host] ?? [], isPublic: (address: string) => address === PUBLIC_STAND_IN };
  const networked = createDockerExecutor({ docker, instanceId: INSTANCE, allowedImages: ALLOWED, settingsOf, killGraceMs: 1_000, egress: testing });
  const lan = lanAddress();
  let hostService: Awaited<ReturnType<typeof httpStandIn>>;
  let publicSite: Awaited<ReturnType<typeof httpStandIn>>;
  let metadata: Awaited<ReturnType<typeof metadataStandIn>>;

  beforeAll(async () => {
    // A service of this machine on every address, as an operator's database or this server could be.
    hostService = await httpStandIn('0.0.0.0', 'host service');
    publicSite = await httpStandIn(PUBLIC_STAND_IN, 'public answer');
    metadata = await metadataStandIn();
  });
  afterAll(() => Promise.all([hostService?.close(), publicSite?.close(), metadata?.close()]));

  /**
   * Shell lines trying each address directly, without the proxy, side by side: `NAME=open` when the answer
   * holds `expected`, `NAME=closed` otherwise. (busybox's `wget -T` crashes: nc and `timeout` instead.)
   */
  const reach = (targets: [name: string, address: string, port: number | string, expected: string][]) => [
    `reach() { if printf 'GET / HTTP/1.0\r\n\r\n' | timeout 6 nc -w 4 "$2" "$3" 2>/dev/null | grep -q "$4"; then echo "$1=open"; else echo "$1=closed"; fi; }`,
    `${targets.map(([name, address, port, expected]) => `reach ${name} "${address}" "${port}" '${expected}' &`).join(' ')} wait`,
  ];
  /** Through the proxy, as the agent's HTTP clients go: wget reads http_proxy. `NAME=` the first line of the answer or of the error. */
  const fetchLines = (targets: [name: string, url: string][]) => [
    `fetch() { echo "$1=$(timeout 10 wget -q -O - "$2" 2>&1 | head -n 1)"; }`,
    ...targets.map(([name, url]) => `fetch ${name} "${url}"`),
  ];
  const PROXY_PARTS = 'gw=${HTTP_PROXY#http://}; port=${gw##*:}; gw=${gw%:*}';
  const said = (lines: string[], name: string) => lines.find((line) => line.startsWith(`${name}=`))?.slice(name.length + 1);
  const gatewayAddress = async () => (await docker.getNetwork(EGRESS_NETWORK).inspect()).IPAM!.Config![0].Gateway as string;
  const rulesOf = async (runId: string) => (await egressRules()).filter((rule) => rule.includes(`:${runId}" `));

  it('was needed: a plain container on Docker’s default bridge reaches a service of this machine and the metadata stand-in', async () => {
    const lines = await runPlain(docker, 'bridge', reach([
      ['BRIDGE_GATEWAY', '172.17.0.1', hostService.port, 'host service'],
      ['LAN', lan, hostService.port, 'host service'],
      ['METADATA', '169.254.169.254', 80, 'metadata'],
    ]).join('\n'));
    expect(['BRIDGE_GATEWAY', 'LAN', 'METADATA'].map((name) => [name, said(lines, name)])).toEqual([
      ['BRIDGE_GATEWAY', 'open'],
      ['LAN', 'open'],
      ['METADATA', 'open'],
    ]);
  });

  it('reaches nothing directly, a public site through its proxy, and every refusal of the proxy is reported', async () => {
    const command = [
      PROXY_PARTS,
      'echo "env=$HTTP_PROXY|$HTTPS_PROXY|$http_proxy|$https_proxy|$NO_PROXY|$no_proxy"',
      ...reach([
        ['GATEWAY', '$gw', hostService.port, 'host service'],
        ['BRIDGE_GATEWAY', '172.17.0.1', hostService.port, 'host service'],
        ['LAN', lan, hostService.port, 'host service'],
        ['METADATA', '169.254.169.254', 80, 'metadata'],
      ]),
      ...fetchLines([
        ['PUBLIC', `http://public.flows-test:${publicSite.port}/`],
        ['METADATA_PROXIED', 'http://169.254.169.254/latest/meta-data/'],
        ['REBIND', `http://rebind.flows-test:${hostService.port}/`],
        ['GATEWAY_PROXIED', `http://$gw:${hostService.port}/`],
      ]),
      `echo "CONNECT=$(printf 'CONNECT 10.0.0.1:443 HTTP/1.1\r\n\r\n' | timeout 6 nc -w 4 "$gw" "$port" | head -n 1 | tr -d '\r')"`,
      'echo "caps=$(grep CapEff /proc/self/status | cut -f2) net=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | sort | tr "\\n" ,)"',
    ].join('\n');
    // A job's own proxy variables give way to the run's.
    const run = await startRun({ network: 'egress', command }, { env: { HTTP_PROXY: 'http://10.0.0.9:3128', no_proxy: '*' } }, networked);
    expect((await run.execution.done).state).toBe('succeeded');
    const lines = run.stdout();
    const gateway = await gatewayAddress();

    expect(said(lines, 'env')).toMatch(new RegExp(`^(http://${gateway.replace(/\./g, '\\.')}:\\d+)\\|\\1\\|\\1\\|\\1\\|localhost,127\\.0\\.0\\.1\\|localhost,127\\.0\\.0\\.1$`));
    for (const name of ['GATEWAY', 'BRIDGE_GATEWAY', 'LAN', 'METADATA']) expect([name, said(lines, name)]).toEqual([name, 'closed']);
    expect(said(lines, 'PUBLIC')).toBe('public answer');
    for (const name of ['METADATA_PROXIED', 'REBIND', 'GATEWAY_PROXIED']) expect([name, said(lines, name)]).toEqual([name, expect.stringContaining('403 Forbidden')]);
    expect(said(lines, 'CONNECT')).toBe('HTTP/1.1 403 Forbidden');
    expect(said(lines, 'caps')).toBe('0000000000000000 net=eth0,lo,');
    expect(run.denied).toEqual([
      { host: '169.254.169.254', port: 80, reason: 'the cloud metadata address (169.254.169.254)' },
      { host: 'rebind.flows-test', port: hostService.port, reason: 'a loopback address (127.0.0.1)' },
      { host: gateway, port: hostService.port, reason: `a private address (${gateway})` },
      { host: '10.0.0.1', port: 443, reason: 'a private address (10.0.0.1)' },
    ]);
    expect(run.provisioning[0]).toEqual({ status: 'container_started', containerId: run.containerId.slice(0, 12), network: 'public' });
    // The way to the proxy closed with the run.
    expect(await rulesOf(run.runId)).toEqual([]);
  });

  it('lets only the target’s domains through when it has a `networkAllow`', async () => {
    const command = fetchLines([
      ['LISTED', `http://public.flows-test:${publicSite.port}/`],
      ['UNLISTED', `http://other.flows-test:${publicSite.port}/`],
    ]).join('\n');
    const run = await startRun({ network: 'egress', networkAllow: ['public.flows-test'], command }, {}, networked);
    expect((await run.execution.done).state).toBe('succeeded');
    expect(said(run.stdout(), 'LISTED')).toBe('public answer');
    expect(said(run.stdout(), 'UNLISTED')).toContain('403 Forbidden');
    expect(run.denied).toEqual([{ host: 'other.flows-test', port: publicSite.port, reason: 'not on the allowlist' }]);
    expect(run.provisioning[0]).toMatchObject({ network: 'allowlist' });
  });

  it('runs an agent that is done before it could reach out (it need not read its prompt)', async () => {
    // Its container has exited, and lost its address, before the way to the proxy is opened.
    for (const attempt of [1, 2, 3]) {
      const run = await startRun({ network: 'egress', command: `echo quick ${attempt}` }, {}, networked);
      expect(await run.execution.done).toEqual({ state: 'succeeded', result: { summary: `quick ${attempt}` } });
      expect(await rulesOf(run.runId)).toEqual([]);
    }
  });

  it('keeps runs apart: one cannot reach another’s container or use its proxy; each container hardened as with no network', async () => {
    const first = await startRun({ network: 'egress', command: 'nc -l -p 8080 -e echo first-answer & echo "proxy=$HTTP_PROXY ip=$(hostname -i)"; sleep 30' }, {}, networked);
    await until(() => first.stdout().some((line) => line.startsWith('proxy=')), 'the first run is up');
    const [, proxy, address] = /^proxy=http:\/\/(\S+) ip=(\S+)$/.exec(first.stdout()[0])!;
    const [gateway, port] = proxy.split(':');

    const info = await docker.getContainer(first.containerId).inspect();
    expect(info.HostConfig).toMatchObject({ NetworkMode: EGRESS_NETWORK, CapDrop: ['ALL'], SecurityOpt: ['no-new-privileges'], ReadonlyRootfs: true, Privileged: false });
    expect(info.HostConfig.CapAdd ?? []).toEqual([]);
    expect(info.NetworkSettings.Networks[EGRESS_NETWORK].IPAddress).toBe(address);
    const network = await docker.getNetwork(EGRESS_NETWORK).inspect();
    expect(network).toMatchObject({ Internal: true, EnableIPv6: false, Options: { 'com.docker.network.bridge.enable_icc': 'false', 'com.docker.network.bridge.name': EGRESS_NETWORK } });
    // The first run's way to its proxy: from its address only.
    expect(await rulesOf(first.runId)).toEqual([expect.stringContaining(`-s ${address}/32 -d ${gateway}/32 -p tcp -m tcp --dport ${port} `)]);

    const second = await startRun({ network: 'egress', command: [PROXY_PARTS, ...reach([
      ['OWN_PROXY', '$gw', '$port', 'HTTP/1.1'],
      ['OTHER_PROXY', gateway, port, 'HTTP/1.1'],
      ['OTHER_RUN', address, 8080, 'first-answer'],
    ])].join('\n') }, {}, networked);
    expect((await second.execution.done).state).toBe('succeeded');
    expect(['OWN_PROXY', 'OTHER_PROXY', 'OTHER_RUN'].map((name) => [name, said(second.stdout(), name)])).toEqual([
      ['OWN_PROXY', 'open'],
      ['OTHER_PROXY', 'closed'],
      ['OTHER_RUN', 'closed'],
    ]);
    first.execution.stop();
    expect((await first.execution.done).state).toBe('canceled');
    expect(await rulesOf(first.runId)).toEqual([]);
  });

  it('reaps the firewall rule a run left behind with its container, and sweeps the rules of containers that are gone', async () => {
    const run = await startRun({ network: 'egress', command: 'echo ready; sleep 30' }, {}, networked);
    await until(() => run.stdout().includes('ready'), 'the container runs');
    expect(await rulesOf(run.runId)).toHaveLength(1);
    await networked.reap(run.execution.ref, run.runId);
    expect(await inspectStatus(run.containerId)).toBe(404);
    expect(await rulesOf(run.runId)).toEqual([]);
    await run.execution.done;

    // As a server killed between removing a container and its rule would leave it.
    const firewall = createFirewall({ bridge: EGRESS_NETWORK });
    const orphan = `run_${process.pid}_orphan`;
    await firewall.open({ source: '10.255.0.2', gateway: '10.255.0.1', port: 9, tenantId: TENANT, runId: orphan });
    const alive = await startRun({ network: 'egress', command: 'echo ready; sleep 30' }, {}, networked);
    await until(() => alive.stdout().includes('ready'), 'the container runs');
    expect(await rulesOf(orphan)).toHaveLength(1);
    await networked.sweep!(async () => false);
    expect(await rulesOf(orphan)).toEqual([]);
    expect(await rulesOf(alive.runId)).toHaveLength(1);
    alive.execution.stop();
    await alive.execution.done;
  });

  it('fails a run at its start, saying why, when the Docker daemon is on another machine', async () => {
    // The daemon through TCP on this machine's LAN address: to the client, a daemon elsewhere. Half-open
    // both ways, as a daemon's own TCP socket is: the executor ends the agent's stdin after the prompt while
    // its output is still to come (a relay that closed on that end would lose the output, now and then).
    const relay = net.createServer({ allowHalfOpen: true }, (client) =>
      client
        .pipe(net.connect({ path: '/var/run/docker.sock', allowHalfOpen: true }))
        .pipe(client)
        .on('error', () => client.destroy()),
    );
    await new Promise<void>((resolve) => relay.listen(0, lan, resolve));
    try {
      const remote = new Docker({ host: lan, port: (relay.address() as net.AddressInfo).port, protocol: 'http' });
      const elsewhere = createDockerExecutor({ docker: remote, instanceId: INSTANCE, allowedImages: ALLOWED, settingsOf, egress: testing });
      const run = await startRun({ network: 'egress', command: 'echo never' }, {}, elsewhere);
      expect(run.execution.ref).toBe('docker:none');
      expect(await run.execution.done).toEqual({ state: 'failed', error: expect.stringMatching(/^`network: egress` needs the Docker daemon on this machine/), cause: 'setup' });
      // The same daemon runs what needs no network.
      const offline = await startRun({ network: 'none', command: 'echo fine' }, {}, elsewhere);
      expect(await offline.execution.done).toEqual({ state: 'succeeded', result: { summary: 'fine' } });
    } finally {
      relay.close();
    }
  });

  it('is checked by the diagnostics, which fail at the network when the firewall cannot be changed', async () => {
    const steps = await dockerDiagnostics(docker, { ...BASE, network: 'egress' }, ALLOWED);
    expect(steps.map((step) => [step.step, step.ok])).toEqual([
      ['daemon', true],
      ['image', true],
      ['network', true],
      ['run', true],
    ]);
    expect(steps[2].detail).toMatch(/^The network flows-egress is fenced: from it, a run's container reaches only its own proxy on [\d.]+\.$/);

    // iptables as a user without CAP_NET_ADMIN, as a server not run as root would call it.
    const unprivileged = path.join(tmpdir(), `flows-iptables-${process.pid}`);
    await writeFile(unprivileged, '#!/bin/sh\nexec setpriv --reuid 65534 --regid 65534 --clear-groups iptables "$@"\n', { mode: 0o755 });
    const egress = createDockerEgress({ docker, firewall: createFirewall({ bridge: EGRESS_NETWORK, iptables: unprivileged, ip6tables: unprivileged }) });
    const refused = await dockerDiagnostics(docker, { ...BASE, network: 'egress' }, ALLOWED, egress).finally(() => rm(unprivileged, { force: true }));
    expect(refused.map((step) => [step.step, step.ok])).toEqual([
      ['daemon', true],
      ['image', true],
      ['network', false],
    ]);
    expect(refused[2].detail).toMatch(/^Flows could not fence the Docker network flows-egress .*Permission denied \(you must be root\).*CAP_NET_ADMIN/);
  });
});

describe('an agent session', () => {
  const JOB = 'job_docker_sessions';
  let agentImage: string;
  const gemini = { agent: { kind: 'gemini' as const }, model: null, effort: null };
  const sessionKey = () => `sess_${randomBytes(16).toString('hex')}`;
  const volumeLabels = async (key: string) => (await docker.getVolume(`flows-${key}`).inspect()).Labels;
  /** A run of the fake gemini CLI in the agents' image, in the session kept under `key`. */
  const geminiRun = async (key: string, resume: string | null, env: Record<string, string> = {}) => {
    const run = await startRun({ image: agentImage, memoryMb: 256, pids: 64 }, { ...gemini, env, session: { key, jobId: JOB, resume } });
    return { ...run, outcome: run.execution.done };
  };
  const sessionIdOf = (lines: string[]) => (JSON.parse(lines.find((line) => line.includes('"type":"init"'))!) as { session_id: string }).session_id;

  beforeAll(async () => {
    agentImage = await ensureAgentTestImage();
    ALLOWED.push(agentImage);
  });

  afterAll(async () => {
    const { Volumes } = await docker.listVolumes({ filters: { label: [`flows.tenant=${TENANT}`] } });
    for (const volume of Volumes ?? []) await docker.getVolume(volume.Name).remove({ force: true }).catch(() => {});
  });

  it('keeps the agent’s state on a volume of the session’s: the next run resumes it, another session’s cannot', async () => {
    const key = sessionKey();
    expect(await executor.sessionStates!.has(key)).toBe(false);
    const first = await geminiRun(key, null);
    expect(await first.outcome).toMatchObject({ state: 'succeeded' });
    const sessionId = sessionIdOf(first.stdout());
    expect(await executor.sessionStates!.has(key)).toBe(true);
    expect(await volumeLabels(key)).toEqual({ 'flows.session-state': key, 'flows.tenant': TENANT, 'flows.job': JOB });

    // The fake CLI, like gemini, refuses to resume a session it has no record of in GEMINI_CLI_HOME.
    const second = await geminiRun(key, sessionId);
    expect(await second.outcome).toMatchObject({ state: 'succeeded' });
    expect(second.stdout()[0]).toContain(`"session_id":"${sessionId}"`);
    expect(second.stdout().join('\n')).toContain('What did notes.md say?');

    const elsewhere = sessionKey();
    const stranger = await geminiRun(elsewhere, sessionId);
    expect(await stranger.outcome).toMatchObject({ state: 'failed', cause: 'agent', error: expect.stringContaining('Error resuming session') });
  });

  it('gives the agent its state folder and nothing else of the volume to write, as its own user', async () => {
    const key = sessionKey();
    // A `command` target's run keeps no state: only agents whose CLI Flows runs have a session.
    await (await startRun({ image: agentImage, command: 'true' }, { env: {}, session: { key, jobId: JOB, resume: null } })).execution.done;
    expect(await executor.sessionStates!.has(key)).toBe(false);

    const probe = await startRun(
      { image: agentImage, memoryMb: 256 },
      { ...gemini, env: { FAKE_AGENT_SCENARIO: 'sleep' }, session: { key, jobId: JOB, resume: null }, timeoutSeconds: 30 },
    );
    await until(() => probe.stdout().length > 0, 'the agent started');
    const container = docker.getContainer(probe.containerId);
    const exec = await container.exec({ Cmd: ['/bin/sh', '-c', 'id -u; stat -c "%u %a %n" /agent-state /agent-state/home; touch /agent-state/x 2>/dev/null || echo refused'], AttachStdout: true, AttachStderr: true, User: '1000:1000' });
    const stream = await exec.start({});
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    await new Promise((resolve) => stream.on('end', resolve));
    const text = Buffer.concat(chunks).toString().replace(/[\x00-\x08]/g, '');
    expect(text).toContain('0 755 /agent-state');
    expect(text).toContain('1000 700 /agent-state/home');
    expect(text).toContain('refused');
    probe.execution.stop();
    await probe.execution.done;
  });

  it('is swept once no run uses it and it is older than the grace, never while a container has it', async () => {
    const graceless = createDockerExecutor({ docker, instanceId: INSTANCE, allowedImages: ALLOWED, settingsOf, killGraceMs: 1_000, stateGraceMs: 0 });
    const [kept, unused, busy] = [sessionKey(), sessionKey(), sessionKey()];
    for (const key of [kept, unused]) expect(await (await geminiRun(key, null)).outcome).toMatchObject({ state: 'succeeded' });
    const running = await startRun({ image: agentImage, memoryMb: 256 }, { ...gemini, env: { FAKE_AGENT_SCENARIO: 'sleep' }, session: { key: busy, jobId: JOB, resume: null } }, graceless);
    await until(() => running.stdout().length > 0, 'the agent started');

    // Young: spared whatever the runs say.
    await executor.sessionStates!.sweep(async () => false);
    for (const key of [kept, unused, busy]) expect(await executor.sessionStates!.has(key)).toBe(true);

    const asked: unknown[] = [];
    const ours = [kept, unused, busy];
    const removed = await graceless.sessionStates!.sweep(async (owner) => {
      if (!ours.includes(owner.key)) return true; // another test file's
      asked.push(owner);
      return owner.key === kept;
    });
    expect(asked).toEqual(expect.arrayContaining(ours.map((key) => ({ key, tenantId: TENANT, jobId: JOB }))));
    expect(removed).toBeGreaterThanOrEqual(1);
    expect(await executor.sessionStates!.has(kept)).toBe(true);
    expect(await executor.sessionStates!.has(unused)).toBe(false);
    expect(await executor.sessionStates!.has(busy)).toBe(true);
    running.execution.stop();
    await running.execution.done;
  });
});

describe('a repository workspace', () => {
  const workTree = async (files: Record<string, string>) => {
    const dir = await mkdtemp(path.join(tmpdir(), 'flows-test-ws-'));
    for (const [name, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
      await writeFile(path.join(dir, name), text);
    }
    return dir;
  };

  it('goes into the container as the agent\'s own, and what the agent left comes back as files and links, not followed', async () => {
    const dir = await workTree({ 'README.md': 'Widgets for evey team\n', 'src/index.js': '1\n', '.git/HEAD': 'ref: refs/heads/main\n' });
    const command = 'cat >/dev/null; pwd; echo "home=$HOME"; sed -i s/evey/every/ README.md && echo new > NEW.md && ln -s /etc/passwd link && rm src/index.js && echo done';
    const { execution, runId, stdout } = await startRun({ command }, { workspace: { dir, name: 'widgets', maxBytes: 10 * MIB } });
    expect(await execution.done).toEqual({ state: 'succeeded', result: { summary: 'done' } });
    expect(stdout().slice(0, 2)).toEqual(['/workspace/widgets', 'home=/tmp']);
    expect(await readFile(path.join(dir, 'README.md'), 'utf8')).toBe('Widgets for every team\n');
    expect(await readFile(path.join(dir, 'NEW.md'), 'utf8')).toBe('new\n');
    expect(await readFile(path.join(dir, '.git/HEAD'), 'utf8')).toBe('ref: refs/heads/main\n');
    expect((await lstat(path.join(dir, 'link'))).isSymbolicLink()).toBe(true);
    expect(await readlink(path.join(dir, 'link'))).toBe('/etc/passwd');
    await expect(lstat(path.join(dir, 'src/index.js'))).rejects.toThrow();
    // The run's volume went with its container.
    await expect(docker.getVolume(`flows-ws-${runId}`).inspect()).rejects.toMatchObject({ statusCode: 404 });
    await rm(dir, { recursive: true, force: true });
  });

  it('fails the run, keeping nothing, when the agent leaves more than the workspace may hold', async () => {
    const dir = await workTree({ 'README.md': 'x\n' });
    const command = 'cat >/dev/null; dd if=/dev/zero of=big bs=1024 count=2048 2>/dev/null; echo done';
    const { execution } = await startRun({ command, memoryMb: 64 }, { workspace: { dir, name: 'small', maxBytes: MIB } });
    expect(await execution.done).toMatchObject({ state: 'failed', cause: 'agent', error: expect.stringContaining('the workspace is larger than 1 MB') });
    await rm(dir, { recursive: true, force: true });
  });
});

describe('in the end', () => {
  it('leaves no container behind', async () => {
    expect((await executor.containers()).filter((container) => container.instanceId === INSTANCE)).toEqual([]);
  });
});
