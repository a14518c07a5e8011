// `node scripts/bench-queries.mjs [--list] [--pg]`: the SQL statements one invocation costs, as the `invoke`
// row of `npm run bench` sends it (bearer token, new idempotency key): those run while the request is
// answered, and those of the background dispatch it starts (with no execution target, the run fails at
// once). On SQLite they are counted where the driver adapter runs them (BEGIN included; not the hot
// statements sql.ts runs beside it, sqlite-direct.ts); with --pg, on a fresh PostgreSQL database
// (BENCH_PG_URL's server, dropped after), every statement any connection sends (the client's, sql.ts's,
// the work queue's, BEGIN and COMMIT included). The first invocation warms caches; the second is counted.
// --list prints the statements. With --pg, BENCH_QUERIES_CPU invocations (300) then run one after another,
// each with its dispatch, and the CPU that PostgreSQL's backends of the database spent on them is printed
// per invocation: what a statement costs the database (no agent runs: the job has no execution target).
// Needs a build (`npm run build`).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { buildWithBearer, createBenchJob, dist, openApp } from './bench-app.mjs';

/** Has `adapter` (and its transactions) report every statement it runs on the SQLite connection. */
function counted(adapter, onQuery) {
  for (const method of ['queryRaw', 'executeRaw']) {
    const run = adapter[method].bind(adapter);
    adapter[method] = (query) => (onQuery(query.sql), run(query));
  }
  if (adapter.startTransaction) {
    const start = adapter.startTransaction.bind(adapter);
    // The adapter runs BEGIN itself, out of sight of Prisma's query log.
    adapter.startTransaction = async (...args) => (onQuery('BEGIN'), counted(await start(...args), onQuery));
  }
  return adapter;
}

/** The app's SQLite client, with every statement its driver adapter runs reported to `onQuery`. */
async function countingDb(url, onQuery) {
  const { PrismaClient } = dist('generated/prisma/sqlite/client.js');
  const { PrismaBetterSQLite3 } = await import('@prisma/adapter-better-sqlite3');
  const adapter = new PrismaBetterSQLite3({ url, timeout: 5000 });
  const connect = adapter.connect.bind(adapter);
  adapter.connect = async () => counted(await connect(), onQuery);
  const db = new PrismaClient({ adapter });
  // As src/db/client.ts sets it up.
  await db.$queryRawUnsafe('PRAGMA journal_mode = WAL');
  await db.$queryRawUnsafe('PRAGMA foreign_keys = ON');
  return db;
}

const require = createRequire(import.meta.url);
const onPg = process.argv.includes('--pg');
const PG_URL = process.env.BENCH_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const CPU_ROUNDS = Number(process.env.BENCH_QUERIES_CPU ?? 300);

async function pgAdmin(sql, params) {
  const { Client } = require('pg');
  const client = new Client({ connectionString: PG_URL });
  await client.connect();
  return (await client.query(sql, params).finally(() => client.end())).rows;
}

/** CPU time (ms) each backend of `database` has used so far, by pid, read from /proc (PostgreSQL on this machine). */
async function backendsCpu(database) {
  const rows = await pgAdmin('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]);
  const tick = 1000 / 100; // USER_HZ
  const cpu = new Map();
  for (const { pid } of rows) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      cpu.set(pid, (Number(fields[11]) + Number(fields[12])) * tick);
    } catch {
      // ended meanwhile
    }
  }
  return cpu;
}

/** Has every statement sent on a PostgreSQL connection reported to `onQuery`. */
function countingPg(onQuery) {
  const { Client } = require('pg');
  const query = Client.prototype.query;
  Client.prototype.query = function (config, ...rest) {
    onQuery(typeof config === 'string' ? config : config.text);
    return query.call(this, config, ...rest);
  };
}

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'flows-queries-'));
  const database = onPg && `flows_queries_${randomBytes(6).toString('hex')}`;
  let log = null;
  try {
    if (database) {
      await pgAdmin(`CREATE DATABASE ${database}`);
      countingPg((query) => log?.push(query));
    }
    const opened = database
      ? await openApp(dir, { env: { DATABASE_URL: Object.assign(new URL(PG_URL), { pathname: `/${database}` }).href } })
      : await openApp(dir, { createDb: (url) => countingDb(url, (query) => log?.push(query)) });
    const { built, bearer } = await buildWithBearer(opened);
    // On PostgreSQL the work queue is the database's: it runs once the background is started, as main.ts does.
    const instance = database && dist('src/instance.js');
    if (instance) await instance.startBackground(opened, built);
    // Dispatch is held until the answer is in, so that its statements are not counted as the request's.
    const held = [];
    const dispatch = built.runner.dispatch;
    built.runner.dispatch = (...args) => held.push(args);
    const server = built.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const baseUrl = `http://127.0.0.1:${server.address().port}`;
    const job = await createBenchJob(baseUrl, bearer);

    const request = async (key) => {
      const res = await fetch(`${baseUrl}/api/v1/jobs/${job.id}/invocations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
        body: JSON.stringify({ idempotencyKey: key, data: { n: 1 } }),
      });
      if (res.status !== 202) throw new Error(`invoke answered ${res.status}: ${await res.text()}`);
      return (await res.json()).runId;
    };
    const invoke = async (key) => {
      const inRequest = (log = []);
      const runId = await request(key);
      const background = (log = []);
      for (const args of held.splice(0)) dispatch(...args);
      await built.runner.idle();
      log = null;
      const run = await (await fetch(`${baseUrl}/api/v1/runs/${runId}`, { headers: { authorization: `Bearer ${bearer}` } })).json();
      return { inRequest, background, run };
    };
    await invoke('warm-up');
    const { inRequest, background, run } = await invoke('counted');
    console.log(`one invocation: ${inRequest.length} SQL statements while the request is answered, ${background.length} in the background dispatch (the run ended ${run.state}: "${run.error?.split(':')[0]}")`);
    if (process.argv.includes('--list')) {
      console.log('\nwhile answering:');
      for (const query of inRequest) console.log(`  ${query}`);
      console.log('\nbackground:');
      for (const query of background) console.log(`  ${query}`);
    }
    if (database && CPU_ROUNDS > 0) {
      // Each dispatch starts as the server starts it, when its invocation is answered; waiting for the work
      // queue to be idle (which polls it) comes once, at the end.
      built.runner.dispatch = dispatch;
      const before = await backendsCpu(database);
      const own = process.cpuUsage();
      for (let i = 0; i < CPU_ROUNDS; i++) await request(`cpu-${i}`);
      await built.runner.idle();
      const ownMs = (({ user, system }) => (user + system) / 1000)(process.cpuUsage(own));
      const after = await backendsCpu(database);
      const spent = [...after].reduce((sum, [pid, ms]) => sum + ms - (before.get(pid) ?? 0), 0);
      console.log(`${CPU_ROUNDS} invocations one after another: PostgreSQL ${(spent / CPU_ROUNDS).toFixed(2)} ms of CPU each, this process ${(ownMs / CPU_ROUNDS).toFixed(2)} ms`);
    }
    server.close();
    if (instance) await instance.stopBackground(built);
    await opened.db.$disconnect();
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (database) await pgAdmin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
