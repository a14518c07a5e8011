// Two instances on one PostgreSQL, one killed with -9 during a burst of invocations and while runs are
// active: every answered invocation has its run, the dead instance's active runs fail as interrupted once
// its heartbeat lapses, the survivor's own runs go on untouched and it finishes the queue. SQLite serves one
// process (test/api/run-recovery.test.ts covers its restarts).
import { agentCommand } from '../support/agent';
import type { TestApp } from '../support/app';
import { postgresUrl } from '../support/databases';
import { databaseForServers, freePort, startServerProcess, type ServerProcess } from '../support/server-process';
import { until } from '../support/until';
import { INTERRUPTED } from '../../src/runs/engine/lifecycle';

const onPostgres = postgresUrl ? describe : describe.skip;

// `long` runs until stopped; anything else ends after a moment.
const AGENT = agentCommand(`prompt=$(cat)
case "$prompt" in
  long*) echo "started" ; sleep 60 ;;
  *) sleep 0.2 ; echo "done" ;;
esac
`);
const LAPSE_SECONDS = 3;

onPostgres('two instances, one killed with -9', () => {
  let app: TestApp;
  let headers: Record<string, string>;
  const servers: ServerProcess[] = [];

  const start = async () => {
    const server = await startServerProcess(app, {
      port: await freePort(),
      env: { FLOWS_LOCAL_AGENT_COMMAND: AGENT, FLOWS_LOCAL_AGENT_SANDBOX: 'off', FLOWS_INSTANCE_LAPSE_SECONDS: String(LAPSE_SECONDS) },
    });
    servers.push(server);
    return server;
  };
  const api = async (server: ServerProcess, method: string, route: string, body?: unknown) => {
    const res = await fetch(`${server.url}${route}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as any };
  };
  const runsOf = (jobId: string) => app.database.db.run.findMany({ where: { jobId }, select: { id: true, state: true, ownerId: true, error: true } });

  beforeAll(async () => {
    ({ app, headers } = await databaseForServers());
  });
  afterAll(async () => {
    for (const server of servers) server.child.kill('SIGKILL');
    await Promise.all(servers.map((server) => server.exited));
    await app.close();
  });

  it('the survivor ends the dead instance\'s runs, keeps its own and finishes the queue', async () => {
    const survivor = await start();
    const long = (await api(survivor, 'POST', '/api/v1/jobs', { name: 'Long', promptTemplate: 'long', executionTargetId: 'local', concurrencyLimit: 10 })).body;
    const quick = (await api(survivor, 'POST', '/api/v1/jobs', { name: 'Quick', promptTemplate: 'quick', executionTargetId: 'local', concurrencyLimit: 2 })).body;
    const invoke = (server: ServerProcess, jobId: string) => api(server, 'POST', `/api/v1/jobs/${jobId}/invocations`, {});

    // The survivor alone: its long runs are its own.
    for (let i = 0; i < 2; i++) expect((await invoke(survivor, long.id)).status).toBe(202);
    await until('the survivor\'s runs to run', async () => (await runsOf(long.id)).filter((run) => run.state === 'running').length === 2);

    // The victim takes the next ones (it is told of its own work first; the survivor polls).
    const victim = await start();
    const victimOwns = async () => (await runsOf(long.id)).filter((run) => run.ownerId === victim.instanceId && run.state === 'running').length;
    for (let i = 0; i < 6 && (await victimOwns()) < 2; i++) {
      expect((await invoke(victim, long.id)).status).toBe(202);
      await until('the run to start', async () => (await runsOf(long.id)).every((run) => run.state === 'running'));
    }
    expect(await victimOwns()).toBeGreaterThanOrEqual(2);

    // A burst of invocations through both, the victim killed in the middle of it.
    const answered: string[] = [];
    const burst = async (server: ServerProcess, count: number) => {
      for (let i = 0; i < count; i++) {
        const res = await invoke(server, quick.id).catch(() => null);
        if (res?.status === 202) answered.push(res.body.runId);
      }
    };
    const victimBurst = burst(victim, 40);
    await until('the burst to be under way', async () => answered.length >= 10);
    victim.child.kill('SIGKILL');
    await Promise.all([victimBurst, burst(survivor, 10), victim.exited]);

    // Every answered invocation has its run, and every run of the burst finishes.
    const quickRuns = await until(
      'the queue to be finished',
      async () => {
        const runs = await runsOf(quick.id);
        return runs.every((run) => ['succeeded', 'failed'].includes(run.state)) && runs;
      },
      { tries: 400, everyMs: 100 },
    );
    for (const runId of answered) expect(quickRuns.some((run) => run.id === runId)).toBe(true);
    // Only what the victim had under way when it died failed; the survivor ran the rest.
    const failed = quickRuns.filter((run) => run.state === 'failed');
    expect(failed.filter((run) => run.ownerId !== victim.instanceId || run.error !== INTERRUPTED)).toEqual([]);
    expect(quickRuns.filter((run) => run.state === 'succeeded').length).toBeGreaterThanOrEqual(quickRuns.length - 2);

    // The victim's long runs failed as interrupted; the survivor's run on.
    const longRuns = await until('the victim\'s runs to fail', async () => {
      const runs = await runsOf(long.id);
      return runs.filter((run) => run.ownerId === victim.instanceId).every((run) => run.state === 'failed') && runs;
    });
    for (const run of longRuns) {
      if (run.ownerId === victim.instanceId) expect(run).toMatchObject({ state: 'failed', error: INTERRUPTED });
      else expect(run).toMatchObject({ state: 'running', ownerId: survivor.instanceId });
    }

    // A stop through the survivor still reaches its own runs.
    const own = longRuns.find((run) => run.ownerId === survivor.instanceId)!;
    expect((await api(survivor, 'POST', `/api/v1/runs/${own.id}/stop`)).status).toBe(202);
    await until('the survivor\'s run to be canceled', async () => (await runsOf(long.id)).find((run) => run.id === own.id)!.state === 'canceled');
  }, 120_000);
});
