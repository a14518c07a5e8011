// `node scripts/bench-queries.mjs [--list]`: the SQL statements one invocation costs, as the `invoke` row of
// `npm run bench` sends it (bearer token, new idempotency key), counted from Prisma's query log: those
// made while the request is answered, and those of the background dispatch it starts (here, with no
// execution target, the run fails at once). The first invocation warms caches; the second is counted.
// --list prints the statements too. Needs a build (`npm run build`, or any `npm run bench`).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildWithBearer, createBenchJob, dist, openApp } from './bench-app.mjs';

/** The app's SQLite client, with every statement it sends reported to `onQuery`. */
async function loggingDb(url, onQuery) {
  const { PrismaClient } = dist('generated/prisma/sqlite/client.js');
  const { PrismaBetterSQLite3 } = await import('@prisma/adapter-better-sqlite3');
  const db = new PrismaClient({ adapter: new PrismaBetterSQLite3({ url, timeout: 5000 }), log: [{ emit: 'event', level: 'query' }] });
  db.$on('query', (event) => onQuery(event.query));
  // As src/db/client.ts sets them up.
  await db.$queryRawUnsafe('PRAGMA journal_mode = WAL');
  await db.$queryRawUnsafe('PRAGMA foreign_keys = ON');
  return db;
}

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'flows-queries-'));
  let log = null;
  try {
    const opened = await openApp(dir, { createDb: (url) => loggingDb(url, (query) => log?.push(query)) });
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
      const background = (log = []);
      for (const args of held.splice(0)) dispatch(...args);
      await built.runner.idle();
      log = null;
      return { inRequest, background };
    };
    await invoke('warm-up');
    const { inRequest, background } = await invoke('counted');
    const state = (await (await fetch(`${baseUrl}/api/v1/runs?jobId=${job.id}&limit=1`, { headers: { authorization: `Bearer ${bearer}` } })).json()).items?.[0]?.state;
    console.log(`one invocation: ${inRequest.length} statements while the request is answered, ${background.length} in the background dispatch (run ended ${state ?? '?'})`);
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
