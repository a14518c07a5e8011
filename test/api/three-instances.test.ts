// Three instances on one PostgreSQL. Asked through all three at once, a rate limit creates exactly `limit`
// runs. Under a stream of invocations through all three, with one killed with -9 in the middle, a job's
// concurrency limit holds at every moment (each agent notes its start and end on the host), every answered
// invocation has its run, no agent starts twice, and the survivors finish the queue. SQLite serves one
// process (test/api/crash-under-load.test.ts covers its kills).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { agentCommand } from '../support/agent';
import type { TestApp } from '../support/app';
import { postgresUrl } from '../support/databases';
import { databaseForServers, freePort, startServerProcess, type ServerProcess } from '../support/server-process';
import { until } from '../support/until';

const onPostgres = postgresUrl ? describe : describe.skip;
const LIMIT = 2;
const AGENT_MS = 50;

onPostgres('three instances, one killed with -9', () => {
  let app: TestApp;
  let headers: Record<string, string>;
  let dir: string;
  let log: string;
  const servers: ServerProcess[] = [];

  const api = async (server: ServerProcess, method: string, route: string, body?: unknown) => {
    const res = await fetch(`${server.url}${route}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as any };
  };

  beforeAll(async () => {
    ({ app, headers } = await databaseForServers());
    dir = mkdtempSync(path.join(os.tmpdir(), 'flows-three-'));
    log = path.join(dir, 'agents');
    // The sandbox is off so that each agent can note its start and end in a file of the host.
    const agent = agentCommand(`cat > /dev/null
echo "start $FLOWS_RUN_ID $(date +%s%N)" >> ${log}
sleep ${AGENT_MS / 1000}
echo "end $FLOWS_RUN_ID $(date +%s%N)" >> ${log}
echo done
`);
    for (let i = 0; i < 3; i++) {
      servers.push(
        await startServerProcess(app, {
          port: await freePort(),
          env: { FLOWS_LOCAL_AGENT_COMMAND: agent, FLOWS_LOCAL_AGENT_SANDBOX: 'off', FLOWS_RATE_LIMIT_API: '0', FLOWS_RATE_LIMIT_API_ADDRESS: '0', FLOWS_INSTANCE_LAPSE_SECONDS: '3' },
        }),
      );
    }
  });
  afterAll(async () => {
    for (const server of servers) server.child.kill('SIGKILL');
    await Promise.all(servers.map((server) => server.exited));
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a rate limit asked through all three at once creates exactly `limit` runs', async () => {
    const job = (await api(servers[0], 'POST', '/api/v1/jobs', { name: 'Rated on three', promptTemplate: 'x', concurrencyLimit: 20, flowControl: { rateLimit: { limit: 7, period: '1h' } } })).body;
    const answers = await Promise.all(Array.from({ length: 45 }, (_, i) => api(servers[i % 3], 'POST', `/api/v1/jobs/${job.id}/invocations`, {})));
    expect(answers.filter((res) => res.status === 202)).toHaveLength(7);
    expect(answers.filter((res) => res.status === 429)).toHaveLength(38);
    expect(await app.database.db.run.count({ where: { jobId: job.id } })).toBe(7);
  });

  it('keeps the concurrency limit at every moment while one of them is killed', async () => {
    const job = (await api(servers[0], 'POST', '/api/v1/jobs', { name: 'Limited on three', promptTemplate: 'go', executionTargetId: 'local', concurrencyLimit: LIMIT })).body;
    const victim = servers[2];
    // The victim takes the first run: with an empty queue, an instance claims what it was asked for.
    const first = (await api(victim, 'POST', `/api/v1/jobs/${job.id}/invocations`, {})).body;
    await until('the victim to run it', async () => (await app.database.db.run.findUniqueOrThrow({ where: { id: first.runId } })).ownerId === victim.instanceId);
    const answered: string[] = [first.runId];
    // One sender per instance, an invocation every 25 ms for 4 s: every instance keeps claiming (each
    // dispatches after its own invocations) while runs end on the others. The victim dies 1.5 s in.
    const streamEnds = Date.now() + 4000;
    const senders = servers.map(async (server) => {
      while (Date.now() < streamEnds) {
        const res = await api(server, 'POST', `/api/v1/jobs/${job.id}/invocations`, {}).catch(() => null);
        if (!res) return; // the instance is gone
        if (res.status === 202) answered.push(res.body.runId);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    victim.child.kill('SIGKILL');
    await victim.exited;
    await Promise.all(senders);

    const runs = await until(
      'the survivors to finish the queue',
      async () => {
        const rows = await app.database.db.run.findMany({ where: { jobId: job.id }, select: { id: true, state: true, ownerId: true } });
        return rows.every((run) => ['succeeded', 'failed'].includes(run.state)) && rows;
      },
      { tries: 900, everyMs: 100 },
    );
    const ids = new Set(runs.map((run) => run.id));
    expect(answered.filter((runId) => !ids.has(runId))).toEqual([]);
    // Only what the victim had under way failed.
    expect(runs.filter((run) => run.state === 'failed' && run.ownerId !== victim.instanceId)).toEqual([]);

    // Each agent's start and end, from the host's file (this job's runs only: the rate-limited ones ran too);
    // an agent killed with its instance ended within its sleep.
    const lines = readFileSync(log, 'utf8').trim().split('\n').map((line) => line.split(' ')).filter(([, runId]) => ids.has(runId));
    const starts = lines.filter(([what]) => what === 'start').map(([, runId, ns]) => ({ runId, at: Number(BigInt(ns) / 1_000_000n) }));
    expect(starts.filter((start, i) => starts.findIndex((other) => other.runId === start.runId) !== i)).toEqual([]);
    const ends = new Map(lines.filter(([what]) => what === 'end').map(([, runId, ns]) => [runId, Number(BigInt(ns) / 1_000_000n)]));
    const moments = starts.flatMap(({ runId, at }) => [
      { at, change: 1 },
      { at: ends.get(runId) ?? at + AGENT_MS + 100, change: -1 },
    ]);
    // At equal times an end counts before a start: the next run may begin in the millisecond the last ended.
    moments.sort((a, b) => a.at - b.at || a.change - b.change);
    let running = 0;
    let most = 0;
    for (const { change } of moments) most = Math.max(most, (running += change));
    expect(most).toBe(LIMIT);
  }, 180_000);
});
