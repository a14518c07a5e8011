// The local sandbox as an attacker tries it: the "agent" is `sh` running whatever the test injects, as an
// agent following a prompt injected through an issue title would. It must not gain privileges, reach this
// machine's services or networks, or use more than its limits; each refusal is visible in the run's trace.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { LocalAgent } from '../../src/config';
import { DEFAULT_LIMITS, type ResourceLimits } from '../../src/lib/resource-limits';
import { createLocalExecutor, type LocalExecutorOptions } from '../../src/integrations/local-executor';
import { processesOf } from '../support/agent';
import { accessToken, createOwner } from '../support/identity';
import { startListeningApp, type ListeningApp } from '../support/server';
import type { Outcome, RunSpec } from '../../src/integrations/executor';
import { openCgroups } from '../../src/integrations/run-limits';

jest.setTimeout(120_000);

const root = process.getuid?.() === 0;
const PUBLIC_STAND_IN = '127.0.0.2';

interface Ran {
  outcome: Outcome;
  lines: string[];
  denied: { host: string; port: number; reason: string }[];
  limits: { limit: string; message: string }[];
}

let runs = 0;
async function run(
  command: string,
  { runId = `run_hostile_${process.pid}_${runs++}`, limits, jobNetwork = null, ...options }: Partial<Omit<LocalExecutorOptions, 'limits'>> & { runId?: string; limits?: Partial<ResourceLimits>; jobNetwork?: RunSpec['network'] } = {},
): Promise<Ran> {
  const executor = createLocalExecutor({ command: 'sh', timeoutSeconds: 60, limits: { ...DEFAULT_LIMITS, ...limits }, ...options });
  const lines: string[] = [];
  const denied: Ran['denied'] = [];
  const hit: Ran['limits'] = [];
  const execution = await executor.start(
    { tenantId: 't', targetId: 'local', runId, jobSlug: 'job', prompt: command, model: null, effort: null, timeoutSeconds: 60, env: {}, network: jobNetwork },
    {
      output: (_stream, text) => lines.push(text),
      provisioning: () => {},
      sandbox: (type, data) => (type === 'network_denied' ? denied.push(data as Ran['denied'][number]) : hit.push(data as Ran['limits'][number])),
    },
  );
  return { outcome: await execution.done, lines, denied, limits: hit };
}

const said = (lines: string[], name: string) => lines.find((line) => line.startsWith(`${name}=`))?.slice(name.length + 1);

describe('privileges', () => {
  it('runs as uid 1000 with no capability, no new privileges and no user namespaces; on the host, an unprivileged user', async () => {
    const marker = mkdtempSync(path.join(tmpdir(), 'flows-hostile-'));
    const runId = `run_hostile_privileges_${process.pid}`;
    const started = run(`echo ID=$(id -u); grep -E '^(CapEff|CapBnd|CapPrm|NoNewPrivs)' /proc/self/status | tr -s '\\t' = ; unshare -U true 2>/dev/null && echo USERNS=made || echo USERNS=refused; sleep 2`, { runId });
    // Seen from the host while it sleeps: every process of the run belongs to nobody, not root.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const owners = new Set(processesOf(runId).map((pid) => /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]));
    const { outcome, lines } = await started;
    expect(outcome.state).toBe('succeeded');
    expect(said(lines, 'ID')).toBe('1000');
    expect(lines).toEqual(expect.arrayContaining(['CapEff:=0000000000000000', 'CapBnd:=0000000000000000', 'CapPrm:=0000000000000000', 'NoNewPrivs:=1', 'USERNS=refused']));
    if (root) expect([...owners]).toEqual(['65534']);
    expect(existsSync(marker)).toBe(true);
  });

  it('cannot remount a read-only bind or the system writable, nor uncover /etc/shadow', async () => {
    const readOnly = mkdtempSync(path.join(tmpdir(), 'flows-ro-'));
    chmodSync(readOnly, 0o755);
    writeFileSync(path.join(readOnly, 'file'), 'host\n');
    chmodSync(path.join(readOnly, 'file'), 0o666); // writable by anyone, were it not for the read-only bind
    const script = [
      `mount -o remount,rw,bind ${readOnly} 2>/dev/null && echo REMOUNT=done || echo REMOUNT=refused`,
      `(echo agent > ${readOnly}/file) 2>/dev/null && echo WRITE=done || echo WRITE=refused`,
      'mount -o remount,rw /etc 2>/dev/null && echo ETC=done || echo ETC=refused',
      'umount /etc/shadow 2>/dev/null && echo SHADOW=uncovered || echo SHADOW=covered',
      'echo SHADOW=$(cat /etc/shadow 2>/dev/null | grep -c root:)',
    ].join('; ');
    const { lines } = await run(script, { binds: [{ path: readOnly, writable: false }] });
    expect(lines).toEqual(expect.arrayContaining(['REMOUNT=refused', 'WRITE=refused', 'ETC=refused', 'SHADOW=covered', 'SHADOW=0']));
    expect(readFileSync(path.join(readOnly, 'file'), 'utf8')).toBe('host\n');
  });
});

describe('processes', () => {
  it("has the wrapper as the sandbox's PID 1, which reaps orphans while the agent runs; none outlives the run", async () => {
    const script = [
      'echo INIT=$(cat /proc/1/comm)',
      'echo BWRAP=$(cat /proc/[0-9]*/comm | grep -c bwrap)',
      '(sleep 0.2 &)', // an orphan that ends while the agent still runs
      '(sleep 60 &)', // one that would outlive it
      'sleep 1',
      "echo ZOMBIES=$(cat /proc/[0-9]*/stat | grep -c ') Z ')",
    ].join('; ');
    const runId = `run_hostile_processes_${process.pid}`;
    const { outcome, lines } = await run(script, { runId });
    expect(outcome.state).toBe('succeeded');
    expect([said(lines, 'INIT'), said(lines, 'BWRAP'), said(lines, 'ZOMBIES')]).toEqual(['sh', '0', '0']);
    expect(processesOf(runId)).toEqual([]);
  });
});

describe('the network', () => {
  let stand: http.Server;
  let port = 0;
  let server: http.Server;
  let serverPort = 0;
  beforeAll(async () => {
    // A stand-in for the public internet on a loopback address of its own, counted as public in these tests only.
    stand = http.createServer((_req, res) => res.end('public answer\n'));
    await new Promise<void>((resolve) => stand.listen(0, PUBLIC_STAND_IN, resolve));
    port = (stand.address() as AddressInfo).port;
    // And a service of this machine on 127.0.0.1, as PostgreSQL, Redis and the server itself are.
    server = http.createServer((_req, res) => res.end('private answer\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    serverPort = (server.address() as AddressInfo).port;
  });
  afterAll(() => Promise.all([stand, server].map((s) => new Promise((resolve) => s.close(resolve)))));

  const names: Record<string, string[]> = { 'public.flows-test': [PUBLIC_STAND_IN], 'other.flows-test': [PUBLIC_STAND_IN], 'rebind.flows-test': ['127.0.0.1'] };
  const egress = { resolve: async (host: string) => names[host] ?? [], isPublic: (address: string) => address === PUBLIC_STAND_IN };
  const fetchAll = (targets: [string, string][]) =>
    // Through the proxy even for loopback names, which NO_PROXY keeps on the sandbox's own loopback otherwise.
    targets.map(([name, url]) => `echo ${name}=$(curl -s -m 5 -x "$HTTP_PROXY" --noproxy '' -o /dev/null -w '%{http_code}' ${url} || true)`).join('; ');

  it('reaches no service of this machine, its network or the metadata address, directly or through the proxy; each refusal is reported', async () => {
    const direct = ['127.0.0.1:5432', '127.0.0.1:6379', `127.0.0.1:${serverPort}`, '169.254.169.254:80', '10.0.0.1:80']
      .map((address, i) => `curl -s -m 3 --noproxy '*' http://${address}/ >/dev/null 2>&1 && echo DIRECT${i}=open || echo DIRECT${i}=closed`)
      .join('; ');
    const proxied = fetchAll([
      ['PG', 'http://127.0.0.1:5432/'],
      ['REDIS', 'https://127.0.0.1:6379/'],
      ['SERVER', `http://localhost:${serverPort}/`],
      ['METADATA', 'http://169.254.169.254/latest/meta-data/'],
      ['PRIVATE', 'https://10.0.0.1/'],
      ['REBIND', `http://rebind.flows-test:${serverPort}/`],
      ['PUBLIC', `http://public.flows-test:${port}/`],
    ]);
    const { lines, denied } = await run(`${direct}; ${proxied}; echo BODY=$(curl -s http://public.flows-test:${port}/)`, { egress });
    for (let i = 0; i < 5; i++) expect(said(lines, `DIRECT${i}`)).toBe('closed');
    for (const name of ['PG', 'SERVER', 'METADATA', 'REBIND']) expect([name, said(lines, name)]).toEqual([name, '403']);
    // CONNECT refused: curl reports no HTTP answer of the origin.
    for (const name of ['REDIS', 'PRIVATE']) expect([name, said(lines, name)]).toEqual([name, '000']);
    expect(said(lines, 'PUBLIC')).toBe('200');
    expect(said(lines, 'BODY')).toBe('public answer');
    expect(denied).toEqual([
      { host: '127.0.0.1', port: 5432, reason: 'a loopback address (127.0.0.1)' },
      { host: '127.0.0.1', port: 6379, reason: 'a loopback address (127.0.0.1)' },
      { host: 'localhost', port: serverPort, reason: 'this machine' },
      { host: '169.254.169.254', port: 80, reason: 'the cloud metadata address (169.254.169.254)' },
      { host: '10.0.0.1', port: 443, reason: 'a private address (10.0.0.1)' },
      { host: 'rebind.flows-test', port: serverPort, reason: 'a loopback address (127.0.0.1)' },
    ]);
  });

  it('with an allowlist, reaches the listed domains only', async () => {
    const script = fetchAll([
      ['ALLOWED', `http://public.flows-test:${port}/`],
      ['OTHER', `http://other.flows-test:${port}/`],
    ]);
    const { lines, denied } = await run(script, { egress, network: 'allowlist', allow: ['public.flows-test'] });
    expect([said(lines, 'ALLOWED'), said(lines, 'OTHER')]).toEqual(['200', '403']);
    expect(denied).toEqual([{ host: 'other.flows-test', port, reason: 'not on the allowlist' }]);
  });

  it("is offered the proxy by busybox's nc, which starts socat for each connection only; by socat alone without busybox", async () => {
    const script = `echo BEFORE=$(cat /proc/[0-9]*/comm | sort -u | tr '\\n' ' '); ${fetchAll([['PUBLIC', `http://public.flows-test:${port}/`]])}`;
    const lazy = await run(script, { egress });
    expect(said(lazy.lines, 'PUBLIC')).toBe('200');
    expect(said(lazy.lines, 'BEFORE')).toContain('busybox');
    expect(said(lazy.lines, 'BEFORE')).not.toContain('socat');
    const plain = await run(script, { egress, busybox: null });
    expect(said(plain.lines, 'PUBLIC')).toBe('200');
    expect(said(plain.lines, 'BEFORE')).toContain('socat');
    expect(said(plain.lines, 'BEFORE')).not.toContain('busybox');
  });

  it("with a job's own allowlist, reaches its domains only, within the target's policy", async () => {
    const script = fetchAll([
      ['ALLOWED', `http://public.flows-test:${port}/`],
      ['OTHER', `http://other.flows-test:${port}/`],
      ['PRIVATE', `http://rebind.flows-test:${serverPort}/`],
    ]);
    const narrowed = await run(script, { egress, jobNetwork: { allow: ['public.flows-test', 'rebind.flows-test'] } });
    expect([said(narrowed.lines, 'ALLOWED'), said(narrowed.lines, 'OTHER'), said(narrowed.lines, 'PRIVATE')]).toEqual(['200', '403', '403']);
    expect(narrowed.denied.map((denial) => denial.reason)).toEqual(["not on the job's allowlist", 'a loopback address (127.0.0.1)']);
    // It never widens: the target's allowlist still holds.
    const within = await run(script, { egress, network: 'allowlist', allow: ['other.flows-test'], jobNetwork: { allow: ['public.flows-test'] } });
    expect([said(within.lines, 'ALLOWED'), said(within.lines, 'OTHER')]).toEqual(['403', '403']);
  });
});

describe('limits', () => {
  // Where no control group can be made (a server that is not root, without a delegated cgroup), rlimits hold
  // processes and CPU time but cannot say so: the run ends as the agent's own failure.
  const held = openCgroups() !== null;

  it('stops a fork bomb at its process limit', async () => {
    const { outcome, limits, lines } = await run(`f() { f | f & }; f; sleep 2; echo PROCS=$(ls -d /proc/[0-9]* | wc -l)${held ? '; sleep 30' : ''}`, { limits: { pids: 64 } });
    if (held) {
      expect(outcome).toEqual({ state: 'failed', error: 'The agent reached its process limit (64 processes).', cause: 'resource_limit' });
      expect(limits[0]).toEqual({ limit: 'processes', message: 'The agent reached its process limit (64 processes).' });
    } else {
      expect(Number(said(lines, 'PROCS'))).toBeLessThanOrEqual(64);
    }
  });

  it('keeps a 2 GB write within the workspace size, and /tmp within its own', async () => {
    const write = (dir: string) => `dd if=/dev/zero of=${dir}/big bs=1M count=2048 2>/dev/null`;
    const workspace = await run(write('/workspace'), { limits: { workspaceMb: 16 } });
    expect(workspace.outcome).toEqual({ state: 'failed', error: 'The agent reached the size of its workspace (16 MB).', cause: 'resource_limit' });
    const tmp = await run(write('/tmp'), { limits: { tmpMb: 16 } });
    expect(tmp.outcome).toEqual({ state: 'failed', error: 'The agent reached the size of its /tmp (16 MB).', cause: 'resource_limit' });
  });

  // Without a control group nothing limits memory (the README says so): the hog would take the machine's.
  (held ? it : it.skip)('stops a memory hog at its memory limit', async () => {
    // tail keeps a line without an end in memory, all of it.
    const { outcome } = await run('head -c 1073741824 /dev/zero | tail > /dev/null', { limits: { memoryMb: 64 } });
    expect(outcome).toEqual({ state: 'failed', error: 'The agent reached its memory limit (64 MB).', cause: 'resource_limit' });
  });

  it('stops a spinning agent at its CPU time', async () => {
    const started = Date.now();
    const { outcome } = await run('while :; do :; done', { limits: { cpuSeconds: 1 } });
    if (held) expect(outcome).toEqual({ state: 'failed', error: 'The agent reached its CPU time limit (1 seconds).', cause: 'resource_limit' });
    else expect(outcome).toMatchObject({ state: 'failed', cause: 'agent' });
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('output', () => {
  it('cuts a 200 MB line: the trace and the result keep 8,000 characters of it', async () => {
    const { outcome, lines } = await run("head -c 209715200 /dev/zero | tr '\\0' a; echo", { limits: { outputMb: 1024 } });
    expect(outcome.state).toBe('succeeded');
    const summary = (outcome as unknown as { result: { summary: string } }).result.summary;
    expect(summary).toBe(`${'a'.repeat(8000)}… [line cut]`);
    expect(lines).toEqual([summary]);
  });

  it('stops an agent whose output goes far beyond its limit', async () => {
    const { outcome, limits } = await run("head -c 629145600 /dev/zero | tr '\\0' a", { limits: { outputMb: 8 } });
    expect(outcome).toEqual({ state: 'failed', error: 'The agent reached its output limit (8 MB a stream).', cause: 'resource_limit' });
    expect(limits.map((hit) => hit.limit)).toEqual(['output']);
  });
});

describe('what the owner sees, and a server that keeps answering', () => {
  let listening: ListeningApp;
  let headers: Record<string, string>;
  let jobId: string;
  beforeAll(async () => {
    listening = await startListeningApp({ localAgent: { command: 'sh', timeoutSeconds: 60, limits: { ...DEFAULT_LIMITS, outputMb: 256 } }, rateLimits: { api: 0, apiAddress: 0 } });
    const owner = await createOwner(listening.app.database.db);
    headers = { authorization: `Bearer ${await accessToken(listening.app, owner)}`, 'content-type': 'application/json' };
    const job = await fetch(`${listening.url}/api/v1/jobs`, { method: 'POST', headers, body: JSON.stringify({ name: 'Hostile', promptTemplate: '{{ data.script }}', executionTargetId: 'local' }) });
    jobId = ((await job.json()) as { id: string }).id;
  });
  afterAll(() => listening.close());

  /** Runs `script` as the job's prompt, asking /healthz every 100 ms meanwhile; answers the run, its trace and the slowest /healthz. */
  async function runWatched(script: string) {
    const invoked = await fetch(`${listening.url}/api/v1/jobs/${jobId}/invocations`, { method: 'POST', headers, body: JSON.stringify({ data: { script } }) });
    const { runId } = (await invoked.json()) as { runId: string };
    let slowest = 0;
    let run: { state: string; error: string | null; result: unknown } & Record<string, unknown>;
    let size = 0;
    for (;;) {
      const asked = Date.now();
      expect((await fetch(`${listening.url}/healthz`, { signal: AbortSignal.timeout(5_000) })).status).toBe(200);
      slowest = Math.max(slowest, Date.now() - asked);
      const text = await (await fetch(`${listening.url}/api/v1/runs/${runId}`, { headers })).text();
      size = Math.max(size, text.length);
      run = JSON.parse(text);
      if (['succeeded', 'failed', 'timed_out', 'canceled'].includes(run.state)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const trace = (await (await fetch(`${listening.url}/api/v1/runs/${runId}/trace?limit=100`, { headers })).json()) as { type: string; data: Record<string, unknown> }[];
    return { run, trace, slowest, size };
  }

  it('a 600 MB line: the agent is stopped at its output limit, the server answers /healthz within 1 s throughout', async () => {
    const { run, trace, slowest, size } = await runWatched("head -c 629145600 /dev/zero | tr '\\0' a");
    expect([run.state, run.error]).toEqual(['failed', 'The agent reached its output limit (256 MB a stream).']);
    expect(trace.filter((event) => event.type === 'resource_limit').map((event) => event.data)).toEqual([{ limit: 'output', message: 'The agent reached its output limit (256 MB a stream).' }]);
    expect(slowest).toBeLessThan(1000);
    expect(size).toBeLessThan(50_000);
  });

  it('a 200 MB line: the run succeeds with a result cut like a trace line, and its answer stays small', async () => {
    const { run, slowest, size } = await runWatched("head -c 209715200 /dev/zero | tr '\\0' a; echo");
    expect(run.state).toBe('succeeded');
    expect(run.result).toEqual({ summary: `${'a'.repeat(8000)}… [line cut]` });
    expect(slowest).toBeLessThan(1000);
    expect(size).toBeLessThan(50_000);
  });

  it("a connection refused by the sandbox's proxy is in the run's trace", async () => {
    const { trace } = await runWatched("curl -s -m 5 -x \"$HTTP_PROXY\" http://169.254.169.254/latest/meta-data/iam/ >/dev/null; true");
    expect(trace.filter((event) => event.type === 'network_denied').map((event) => event.data)).toEqual([
      { host: '169.254.169.254', port: 80, reason: 'the cloud metadata address (169.254.169.254)' },
    ]);
  });
});

describe('a start after a crash', () => {
  it('sweeps the run folders a server that is gone left behind, and keeps a living one\'s', async () => {
    const gone = spawn('true');
    await new Promise((resolve) => gone.on('exit', resolve));
    const left = path.join(tmpdir(), `flows-run-${gone.pid}-crashed`);
    const living = path.join(tmpdir(), `flows-run-${process.pid}-living`);
    for (const dir of [left, living]) mkdirSync(path.join(dir, 'work'), { recursive: true });
    createLocalExecutor({ command: 'true', timeoutSeconds: 5 } satisfies LocalAgent);
    expect([existsSync(left), existsSync(living)]).toEqual([false, true]);
    execFileSync('rm', ['-rf', living]);
  });
});
