// `node scripts/bench-queries.mjs [--list]`: the SQL statements one invocation costs, as the `invoke` row of
// `npm run bench` sends it (bearer token, new idempotency key), counted where the driver adapter runs them
// on the SQLite connection (BEGIN included): those run while the request is answered, and those of the
// background dispatch it starts (with no execution target, the run fails at once). The first invocation
// warms caches; the second is counted. --list prints the statements. Needs a build (`npm run build`).
import { mkdtempSync, rmSync } from 'node:fs';
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

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'flows-queries-'));
  let log = null;
  try {
    const opened = await openApp(dir, { createDb: (url) => countingDb(url, (query) => log?.push(query)) });
    const { built, bearer } = await buildWithBearer(opened);
    // Dispatch is held until the answer is in, so that its statements are not counted as the request's.
    const held = [];
    const dispatch = built.runner.dispatch;
    built.runner.dispatch = (...args) => held.push(args);
    const server = built.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const baseUrl = `http://127.0.0.1:${server.address().port}`;
    const job = await createBenchJob(baseUrl, bearer);

    const invoke = async (key) => {
      const inRequest = (log = []);
      const res = await fetch(`${baseUrl}/api/v1/jobs/${job.id}/invocations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
        body: JSON.stringify({ idempotencyKey: key, data: { n: 1 } }),
      });
      if (res.status !== 202) throw new Error(`invoke answered ${res.status}: ${await res.text()}`);
      const { runId } = await res.json();
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
    server.close();
    await opened.db.$disconnect();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
