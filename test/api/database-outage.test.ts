// PostgreSQL lost under load and back: while the database is out of reach Flows answers 503 in the error
// shape (never a 500, never a hang), and when it is back Flows goes on without a restart: invocations are
// answered, every answered one has its run, and every run finishes, its outcome kept through the outage.
import { agentCommand } from '../support/agent';
import type { TestApp } from '../support/app';
import { postgresUrl } from '../support/databases';
import { databaseForServers, freePort, startServerProcess, type ServerProcess } from '../support/server-process';
import { startTcpCut, type TcpCut } from '../support/tcp-cut';
import { until } from '../support/until';

const onPostgres = postgresUrl ? describe : describe.skip;

// Long enough for some runs to be under way when the database goes.
const AGENT = agentCommand('cat > /dev/null; sleep 0.5; echo done\n');

onPostgres('the database lost under load and back', () => {
  let app: TestApp;
  let cut: TcpCut;
  let server: ServerProcess;
  let headers: Record<string, string>;

  beforeAll(async () => {
    ({ app, headers } = await databaseForServers());
    const database = new URL(app.database.url);
    cut = await startTcpCut({ host: database.hostname, port: Number(database.port || 5432) });
    database.port = String(cut.port);
    server = await startServerProcess(app, {
      port: await freePort(),
      env: { DATABASE_URL: database.href, FLOWS_LOCAL_AGENT_COMMAND: AGENT, FLOWS_LOCAL_AGENT_SANDBOX: 'off', FLOWS_INSTANCE_LAPSE_SECONDS: '3' },
    });
  });
  afterAll(async () => {
    server?.child.kill('SIGKILL');
    await server?.exited;
    await cut?.close();
    await app.close();
  });

  const send = async (method: string, route: string, body?: unknown) => {
    const res = await fetch(`${server.url}${route}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(15_000) });
    return { status: res.status, body: (await res.json()) as any, retryAfter: res.headers.get('retry-after') };
  };

  it('answers 503 while it is out of reach and carries on, nothing lost, once it is back', async () => {
    const job = (await send('POST', '/api/v1/jobs', { name: 'Steady', promptTemplate: 'go', executionTargetId: 'local', concurrencyLimit: 4 })).body;
    const invoke = () => send('POST', `/api/v1/jobs/${job.id}/invocations`, {});
    const answered: string[] = [];
    const statuses: number[] = [];
    let phase = 'before' as 'before' | 'down' | 'back';
    const duringOutage: { status: number; body: any; retryAfter: string | null }[] = [];
    let load = true;
    const loader = (async () => {
      while (load) {
        const res = await invoke();
        statuses.push(res.status);
        if (res.status === 202) answered.push(res.body.runId);
        if (phase === 'down') duringOutage.push(res);
        if (res.status !== 202) await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();

    await until('runs under way', async () => answered.length >= 8, { tries: 400, everyMs: 25 });
    cut.cut();
    // Answers to requests already past the database may still come; then every one is a 503.
    await new Promise((resolve) => setTimeout(resolve, 300));
    phase = 'down';
    await until('answers while the database is out of reach', async () => duringOutage.length >= 5, { tries: 400, everyMs: 25 });
    expect((await send('GET', '/readyz')).status).toBe(503);
    for (const res of duringOutage) {
      expect(res.status).toBe(503);
      expect(Object.keys(res.body)).toEqual(['error']);
      expect(res.body.error).toMatchObject({ code: 'service_unavailable', message: expect.any(String) });
      expect(res.retryAfter).toBe('5');
    }

    cut.restore();
    phase = 'back';
    const before = answered.length;
    await until('invocations answered again', async () => answered.length >= before + 5, { tries: 600, everyMs: 50 });
    load = false;
    await loader;
    expect(statuses.filter((status) => status >= 500 && status !== 503)).toEqual([]);

    // Every answered invocation has its run, and every run finishes: those under way when the database
    // went kept their outcome until they could write it.
    const runs = await until(
      'every run to finish',
      async () => {
        const rows = await app.database.db.run.findMany({ where: { jobId: job.id }, select: { id: true, state: true, error: true } });
        return rows.every((run) => !['queued', 'starting', 'running', 'canceling'].includes(run.state)) && rows;
      },
      { tries: 600, everyMs: 100 },
    );
    for (const runId of answered) expect(runs.some((run) => run.id === runId)).toBe(true);
    expect(runs.filter((run) => run.state !== 'succeeded')).toEqual([]);
  }, 120_000);
});
