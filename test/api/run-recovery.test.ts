// A run in flight when the server dies: a sandboxed agent dies with it, an unsandboxed one outlives a
// SIGKILL of the server; either way the next start fails the run as interrupted, ends whatever of the
// agent is left and starts what was queued. A SIGTERM ends active runs the same way before the process exits.
import { INTERRUPTED } from '../../src/runs/engine/lifecycle';
import Dockerode from 'dockerode';
import { LABELS } from '../../src/integrations/docker-fns';
import { agentCommand, processesOf } from '../support/agent';
import { ensureDockerd, ensureTestImage, TEST_IMAGE } from '../support/docker';
import type { TestApp } from '../support/app';
import { databaseForServers, freePort, startServerProcess } from '../support/server-process';
import { until as waitUntil } from '../support/until';

let app: TestApp;
let port: number;
let headers: Record<string, string>;
const command = agentCommand();
const docker = new Dockerode({ socketPath: '/var/run/docker.sock' });

beforeAll(async () => {
  // The database and credentials are made here; the server under test is a separate process on that database.
  ({ app, headers } = await databaseForServers());
  port = await freePort();
});
afterAll(() => app.close());

const startServer = (sandbox: string, env: Record<string, string> = {}) =>
  startServerProcess(app, {
    port,
    // On PostgreSQL a restarted server waits for its killed predecessor's heartbeat to lapse.
    env: { FLOWS_LOCAL_AGENT_COMMAND: command, FLOWS_LOCAL_AGENT_SANDBOX: sandbox, FLOWS_INSTANCE_LAPSE_SECONDS: '3', ...env },
  });

async function api(method: string, route: string, body?: unknown) {
  const res = await fetch(`http://127.0.0.1:${port}${route}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}

const until = <T>(what: string, probe: () => Promise<T | undefined | false>) => waitUntil(what, probe, { tries: 300, everyMs: 50 });

const stateOf = async (runId: string) => (await app.database.db.run.findUniqueOrThrow({ where: { id: runId } })).state;

it.each(['bubblewrap', 'off'])('sandbox %s: fails the interrupted run, ends its agent and starts the queued one after a crash; SIGTERM ends active runs', async (sandbox) => {
  let server = await startServer(sandbox);
  const job = (await api('POST', '/api/v1/jobs', { name: 'Slow', promptTemplate: 'sleep', executionTargetId: 'local' })).body;
  const active = (await api('POST', `/api/v1/jobs/${job.id}/invocations`, {})).body.runId;
  const queued = (await api('POST', `/api/v1/jobs/${job.id}/invocations`, {})).body.runId;
  await until('the first run to run', async () => (await stateOf(active)) === 'running' && processesOf(active).length > 0);
  expect(await stateOf(queued)).toBe('queued');

  server.child.kill('SIGKILL');
  await server.exited;
  if (sandbox === 'off') {
    // Nothing ended the agent: it runs on without its server.
    expect(processesOf(active).length).toBeGreaterThan(0);
  } else {
    // The sandbox dies with its server, and takes the agent with it.
    await until('the sandboxed agent to end with its server', async () => processesOf(active).length === 0);
  }

  server = await startServer(sandbox);
  const interrupted = await until('the interrupted run to fail', async () => {
    const run = (await api('GET', `/api/v1/runs/${active}`)).body;
    return run.state === 'failed' && run;
  });
  expect(interrupted.error).toBe(INTERRUPTED);
  expect(processesOf(active)).toEqual([]);
  await until('the queued run to start', async () => (await stateOf(queued)) === 'running' && processesOf(queued).length > 0);

  server.child.kill('SIGTERM');
  expect(await server.exited).toBe(0);
  expect(await stateOf(queued)).toBe('failed');
  expect((await app.database.db.run.findUniqueOrThrow({ where: { id: queued } })).error).toBe(INTERRUPTED);
  expect(processesOf(queued)).toEqual([]);
}, 60_000);

it('docker: a container left by a server killed with -9 is removed at the next start, and its run fails as interrupted', async () => {
  await ensureDockerd();
  await ensureTestImage();
  const dockerEnv = { FLOWS_DOCKER_HOST: 'unix:///var/run/docker.sock', FLOWS_DOCKER_IMAGES: TEST_IMAGE };
  let server = await startServer('bubblewrap', dockerEnv);
  const target = (await api('POST', '/api/v1/execution-targets', { kind: 'docker', name: 'Busybox', image: TEST_IMAGE, command: 'sh' })).body;
  const job = (await api('POST', '/api/v1/jobs', { name: 'Slow in a container', promptTemplate: 'sleep 30', executionTargetId: target.id })).body;
  const active = (await api('POST', `/api/v1/jobs/${job.id}/invocations`, {})).body.runId;
  const containersOf = async (runId: string) => (await docker.listContainers({ all: true, filters: { label: [`${LABELS.run}=${runId}`] } })).length;
  await until('the run to run in its container', async () => (await stateOf(active)) === 'running' && (await containersOf(active)) > 0);

  server.child.kill('SIGKILL');
  await server.exited;
  expect(await containersOf(active)).toBe(1);

  server = await startServer('bubblewrap', dockerEnv);
  const interrupted = await until('the interrupted run to fail', async () => {
    const run = (await api('GET', `/api/v1/runs/${active}`)).body;
    return run.state === 'failed' && run;
  });
  expect(interrupted.error).toBe(INTERRUPTED);
  expect(await containersOf(active)).toBe(0);
  server.child.kill('SIGTERM');
  expect(await server.exited).toBe(0);
}, 60_000);
