// A server killed (SIGKILL) under a stream of invocations, while writes are on their way (on SQLite, the
// group commit of a turn's batches): every invocation it answered has its run, the server started again
// finishes every run, and no run's agent is started twice.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { agentCommand } from '../support/agent';
import type { TestApp } from '../support/app';
import { databaseForServers, freePort, startServerProcess, type ServerProcess } from '../support/server-process';
import { until } from '../support/until';

let app: TestApp;
let headers: Record<string, string>;
let port: number;
let dir: string;
let started: string;

beforeAll(async () => {
  ({ app, headers } = await databaseForServers());
  port = await freePort();
  dir = mkdtempSync(path.join(os.tmpdir(), 'flows-crash-'));
  started = path.join(dir, 'started');
});
afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

// Each start of an agent leaves its run's id in a file of the host (the sandbox is off for that).
const startServer = () =>
  startServerProcess(app, {
    port,
    env: {
      FLOWS_LOCAL_AGENT_COMMAND: agentCommand(`cat > /dev/null; echo "$FLOWS_RUN_ID" >> ${started}; sleep 0.2; echo done\n`),
      FLOWS_LOCAL_AGENT_SANDBOX: 'off',
      FLOWS_RATE_LIMIT_API: '0',
      FLOWS_RATE_LIMIT_API_ADDRESS: '0',
      // On PostgreSQL the restarted server waits for its killed predecessor's heartbeat to lapse.
      FLOWS_INSTANCE_LAPSE_SECONDS: '3',
    },
  });

it('loses no answered run and starts none twice when killed between writes', async () => {
  let server: ServerProcess = await startServer();
  const post = (route: string, body: unknown) => fetch(`${server.url}${route}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const job = (await (await post('/api/v1/jobs', { name: 'Steady', promptTemplate: 'go', executionTargetId: 'local', concurrencyLimit: 4 })).json()) as { id: string };

  const answered: string[] = [];
  let sending = true;
  const senders = Array.from({ length: 8 }, async () => {
    while (sending) {
      const res = await post(`/api/v1/jobs/${job.id}/invocations`, {}).catch(() => null);
      if (!res) sending = false; // the server is gone
      else if (res.status === 202) answered.push(((await res.json()) as { runId: string }).runId);
    }
  });
  await until('invocations answered', async () => answered.length >= 60, { tries: 600, everyMs: 20 });
  server.child.kill('SIGKILL');
  await server.exited;
  sending = false;
  await Promise.all(senders);

  server = await startServer();
  const runs = await until(
    'every run to end',
    async () => {
      const rows = await app.database.db.run.findMany({ where: { jobId: job.id }, select: { id: true, state: true } });
      return rows.every((run) => ['succeeded', 'failed'].includes(run.state)) && rows;
    },
    { tries: 600, everyMs: 100 },
  );
  server.child.kill('SIGKILL');
  await server.exited;

  const ids = new Set(runs.map((run) => run.id));
  expect(answered.filter((runId) => !ids.has(runId))).toEqual([]);
  const starts = readFileSync(started, 'utf8').trim().split('\n');
  expect(starts.filter((runId, i) => starts.indexOf(runId) !== i)).toEqual([]);
  // Those under way at the kill failed as interrupted; the rest ran, after the restart if not before.
  expect(runs.filter((run) => run.state === 'succeeded').length).toBeGreaterThan(runs.length / 2);
}, 120_000);
