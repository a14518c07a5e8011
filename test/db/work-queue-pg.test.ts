// Two instances sharing their background work through one PostgreSQL (pg-boss): a message is handled once,
// by one of them, at once; messages of a key coalesce; delayed ones wait, each until it is due; a failing
// one fails alone; repeating work runs once per period among both; idle and stop wait for the work under
// way. Only on PostgreSQL: the SQLite default has the in-process queue.
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { createLogger } from '../../src/lib/logger';
import type { WorkQueue } from '../../src/lib/work-queue';
import { createPgBossQueue } from '../../src/lib/work-queue-pg';
import { createTestDatabase, postgresUrl, type TestDatabase } from '../support/databases';
import { until } from '../support/until';

const onPostgres = postgresUrl ? describe : describe.skip;

type Payload = Record<string, unknown>;
interface Call {
  kind: string;
  by: string;
  payload: Payload;
  at: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

onPostgres('the work queue on PostgreSQL', () => {
  let database: TestDatabase;
  let sql: Client;
  let a: WorkQueue;
  let b: WorkQueue;
  const lines: string[] = [];
  const logger = createLogger('warn', { write: (line: string) => void lines.push(line) });
  const calls: Call[] = [];
  const callsOf = (kind: string) => calls.filter((call) => call.kind === kind);
  let openGate = () => {};
  const gate = new Promise<void>((resolve) => (openGate = resolve));
  const finished: string[] = [];

  // What each kind's handler does, on either instance.
  const behaviour: Record<string, (payload: Payload) => Promise<void>> = {
    note: async () => {},
    coalesce: () => gate,
    later: async () => {},
    flaky: async (payload) => {
      if (payload.fail) throw new Error('boom');
    },
    slow: () => sleep(300).then(() => void finished.push('slow')),
    ping: async () => {},
    long: () => sleep(700).then(() => void finished.push('long')),
  };

  function instance(by: string) {
    const queue = createPgBossQueue({ connectionString: database.url, logger });
    for (const [kind, run] of Object.entries(behaviour)) {
      queue.handle(kind, (payload) => {
        calls.push({ kind, by, payload, at: performance.now() });
        return run(payload);
      });
    }
    return queue;
  }

  const jobsOf = async (name: string) =>
    (await sql.query<{ state: string; retry_count: number }>('SELECT state, retry_count FROM flows_work.job WHERE name = $1', [name])).rows;

  beforeAll(async () => {
    database = await createTestDatabase();
    sql = new Client({ connectionString: database.url });
    await sql.connect();
    a = instance('a');
    b = instance('b');
    a.enqueue({ kind: 'note', key: 'early', payload: { n: 0 } });
    await Promise.all([a.start(), b.start()]);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await sql?.end();
    await database?.drop();
  });

  it('handles a message once, on one of the instances, with its payload, and one enqueued before start too', async () => {
    a.enqueue({ kind: 'note', key: 'n1', payload: { tenantId: 'ten_1', n: 1 } });
    await until('both notes handled', async () => callsOf('note').length >= 2);
    await Promise.all([a.idle(), b.idle()]);
    expect(callsOf('note').map((call) => call.payload)).toEqual(expect.arrayContaining([{ n: 0 }, { tenantId: 'ten_1', n: 1 }]));
    expect(callsOf('note')).toHaveLength(2);
  });

  it('coalesces the messages of a key while one waits, and does not lose those sent while one runs', async () => {
    a.enqueue({ kind: 'coalesce', key: 'k', payload: { n: 1 } });
    await until('the first message running', async () => callsOf('coalesce').length === 1);
    for (let n = 2; n <= 6; n++) a.enqueue({ kind: 'coalesce', key: 'k', payload: { n } });
    const last = performance.now();
    await until('a message waiting behind the running one', async () => (await jobsOf('coalesce')).some((job) => job.state === 'created'));
    openGate();
    await Promise.all([a.idle(), b.idle()]);
    const handled = callsOf('coalesce');
    expect(handled.length).toBeGreaterThanOrEqual(2);
    expect(handled.length).toBeLessThan(6);
    expect(handled.some((call) => call.at >= last)).toBe(true);
  });

  it('handles a delayed message after its delay, and an immediate one of its key at once', async () => {
    const at = performance.now();
    a.enqueue({ kind: 'later', key: 'l', payload: { delayed: true }, delayMs: 1000 });
    a.enqueue({ kind: 'later', key: 'l', payload: { delayed: false } });
    await Promise.all([a.idle(), b.idle()]); // not waiting for the delayed one
    expect(performance.now() - at).toBeLessThan(1000);
    expect(callsOf('later').map((call) => call.payload)).toEqual([{ delayed: false }]);

    const delayed = await until('the delayed message handled', async () => callsOf('later').find((call) => call.payload.delayed), { tries: 120 });
    expect(delayed.at - at).toBeGreaterThanOrEqual(1000);
    expect(delayed.at - at).toBeLessThan(2000);
  });

  it('handles a delayed message due after a waiting one of its key at its own time, not swallowed by it', async () => {
    const at = performance.now();
    a.enqueue({ kind: 'later', key: 'pushed', payload: { due: 300 }, delayMs: 300 });
    a.enqueue({ kind: 'later', key: 'pushed', payload: { due: 1500 }, delayMs: 1500 });
    const last = await until('the later message handled', async () => callsOf('later').find((call) => call.payload.due === 1500), { tries: 120 });
    expect(last.at - at).toBeGreaterThanOrEqual(1500);
    expect(callsOf('later').find((call) => call.payload.due === 300)!.at - at).toBeLessThan(1500);
  });

  it('fails a message whose handler throws, after its retries, logged without its payload, the others handled', async () => {
    a.enqueue({ kind: 'flaky', key: 'bad', payload: { fail: true, note: 'payload-marker' } });
    for (let n = 0; n < 3; n++) a.enqueue({ kind: 'flaky', key: `good${n}`, payload: { n } });
    await until('the others handled', async () => callsOf('flaky').filter((call) => !call.payload.fail).length === 3);

    const failed = await until('the failing message failed for good', async () => (await jobsOf('flaky')).find((job) => job.state === 'failed'), { tries: 240 });
    expect(failed.retry_count).toBe(2);
    expect(callsOf('flaky').filter((call) => call.payload.fail)).toHaveLength(3); // the first try and two retries
    await until('the others completed', async () => (await jobsOf('flaky')).filter((job) => job.state === 'completed').length === 3);

    const logged = lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'background work failed');
    expect(logged).toHaveLength(3);
    expect(logged[0]).toMatchObject({ level: 50, kind: 'flaky', err: { name: 'Error', message: 'boom' } });
    expect(lines.join('\n')).not.toContain('payload-marker');
  });

  it('runs repeating work once per period among the instances, never twice at once', async () => {
    const turns: number[] = [];
    let running = 0;
    let most = 0;
    const sweep = async () => {
      most = Math.max(most, ++running);
      turns.push(performance.now());
      await sleep(100);
      running--;
    };
    const from = performance.now();
    a.every('sweep', 1000, sweep);
    b.every('sweep', 1000, sweep);
    await sleep(3500); // a window of time is what is measured
    const inWindow = turns.filter((at) => at - from < 3500).length;
    // Once in each 1 s slot the window touches: 4, or 3 or 5 at its edges; each instance on its own would give 8.
    expect(inWindow).toBeGreaterThanOrEqual(3);
    expect(inWindow).toBeLessThanOrEqual(5);
    expect(most).toBe(1);
  });

  it('is idle only once a message enqueued on the other instance was handled', async () => {
    b.enqueue({ kind: 'slow', key: 's', payload: {} });
    await until('the message queued', async () => (await jobsOf('slow')).length > 0);
    await a.idle();
    expect(finished).toContain('slow');
  });

  it('starts handling a message within milliseconds of its enqueueing, well before the next polling', async () => {
    const latencies: number[] = [];
    for (let i = 0; i < 10; i++) {
      const at = performance.now();
      a.enqueue({ kind: 'ping', key: `p${i}`, payload: { i } });
      const call = await until(`ping ${i} handled`, async () => callsOf('ping').find((c) => c.payload.i === i), { tries: 400, everyMs: 5 });
      latencies.push(call.at - at);
    }
    const median = [...latencies].sort((x, y) => x - y)[5];
    // Polling every 500 ms, two instances would find a message after ~150 ms at the median; a woken worker at once.
    expect(median).toBeLessThan(100);
  });

  it('stops after the handlers under way, leaving no connection open', async () => {
    a.enqueue({ kind: 'long', key: 'l', payload: {} });
    await until('the long handler running', async () => callsOf('long').length === 1);
    await Promise.all([a.stop(), b.stop()]);
    expect(finished).toContain('long');

    a.enqueue({ kind: 'note', key: 'after', payload: {} }); // a no-op once stopped
    const open = async () =>
      (await sql.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'flows-work'")).rows[0].n;
    // A closed connection's backend leaves the view a moment after the client went.
    await until('no connection of the queue left', async () => (await open()) === 0, { tries: 40 });
    expect(callsOf('note')).toHaveLength(2);
  });

  it('never logged a connection string', () => {
    expect(lines.join('\n')).not.toContain(database.url);
    expect(lines.join('\n')).not.toContain('postgresql://');
  });
});
