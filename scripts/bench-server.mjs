// One server for `npm run bench`, in a process of its own so that the load generator does not share its
// CPU time: `node scripts/bench-server.mjs <kind> <dir>`. Prints one JSON line `{ port, ... }` once it
// listens, then serves until killed.
//   sqlite-insert   baseline (a): bare Express 5 + better-sqlite3, one prepared INSERT of a run-like row
//   prisma-create   baseline (b): Express 5 + one Prisma `create` of a run, on the app's own schema
//   app             the built app on a fresh embedded database, with a bearer token for every scope
//   app-agent       the same with a local target whose agent is `true` (sandboxed, as by default), or
//                   BENCH_AGENT_COMMAND
//   app-pg          app-agent on the PostgreSQL database BENCH_DATABASE_URL (migrated on start if it lacks
//                   migrations), with FLOWS_SECRET_KEY=BENCH_SECRET_KEY and BASE_URL=BENCH_BASE_URL shared by
//                   the instances on it, and what main.ts starts beside the app (heartbeat, recovery,
//                   repeating work); with BENCH_OWNER=1 it creates the owner and prints a bearer token,
//                   which the other instances accept (same database, secret key and base URL)
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { createRequire } from 'node:module';
import { buildWithBearer, dist, openApp } from './bench-app.mjs';

const require = createRequire(import.meta.url);
const express = require('express');
const [kind, dir] = process.argv.slice(2);

const row = () => ({ id: `run_${randomUUID()}`, name: 'Issue #42', state: 'queued', triggerType: 'invocation', prompt: 'Fix issue #42 in acme/widgets.', inputs: { data: { issueNumber: 42 } } });

async function sqliteInsert() {
  const Database = require('better-sqlite3');
  const db = new Database(path.join(dir, 'baseline.db'));
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE run (id TEXT PRIMARY KEY, tenantId TEXT, jobId TEXT, name TEXT, state TEXT, triggerType TEXT, prompt TEXT, inputs TEXT, createdAt TEXT)');
  const insert = db.prepare('INSERT INTO run VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)');
  return express()
    .use(express.json())
    .post('/runs', (_req, res) => {
      const r = row();
      insert.run(r.id, 'ten_bench', 'job_bench', r.name, r.state, r.triggerType, r.prompt, JSON.stringify(r.inputs), new Date().toISOString());
      res.status(201).json({ id: r.id });
    });
}

async function prismaCreate() {
  const { db } = await openApp(dir, { name: 'prisma-create.db' });
  await db.tenant.create({ data: { id: 'ten_bench', name: 'Bench' } });
  await db.job.create({ data: { id: 'job_bench', tenantId: 'ten_bench', name: 'Bench', slug: 'bench', promptTemplate: 'x' } });
  return express()
    .use(express.json())
    .post('/runs', async (_req, res) => {
      const created = await db.run.create({ data: { ...row(), tenantId: 'ten_bench', jobId: 'job_bench' }, select: { id: true } });
      res.status(201).json(created);
    });
}

/** The app, and an access token for every scope issued by its own authorization server. */
async function app(env) {
  const { built, bearer } = await buildWithBearer(await openApp(dir, { env }));
  pruneOnSignal(built.retention);
  return Object.assign(built.app, { extra: { bearer } });
}

/**
 * SIGUSR2 starts the retention's turns back to back (each as the repeating job runs it, the next at once)
 * until nothing is left to prune; SIGUSR2 again stops them and prints `{ pruned, ms, allGoneMs }`.
 */
function pruneOnSignal(retention) {
  let pruning = null;
  process.on('SIGUSR2', () => {
    if (pruning) return void (pruning.stop = true);
    const mine = (pruning = { stop: false });
    const started = Date.now();
    (async () => {
      let pruned = 0;
      let allGoneMs = null;
      while (!mine.stop) {
        if (allGoneMs !== null) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          continue;
        }
        const { runs } = await retention.prune();
        pruned += runs;
        if (!runs) allGoneMs = Date.now() - started;
      }
      console.log(JSON.stringify({ pruned, ms: Date.now() - started, allGoneMs }));
      pruning = null;
    })();
  });
}

/**
 * The end-to-end rows count every run of their job across rows (more than retention's default 10,000 per
 * job): runs are kept unless the `retention` part says otherwise.
 */
const KEEP_RUNS = { FLOWS_RETENTION_MAX_RUNS_PER_JOB: '0' };

/** One of several instances on one PostgreSQL database, its background started and stopped as main.ts does (src/instance.ts). */
async function appPg() {
  const { BENCH_DATABASE_URL, BENCH_SECRET_KEY, BENCH_BASE_URL, BENCH_OWNER } = process.env;
  const opened = await openApp(dir, { env: { DATABASE_URL: BENCH_DATABASE_URL, FLOWS_SECRET_KEY: BENCH_SECRET_KEY, BASE_URL: BENCH_BASE_URL, FLOWS_LOCAL_AGENT_COMMAND: 'true', ...KEEP_RUNS, ...passedOn } });
  // Warnings and errors go to stderr, where the bench counts them (stdout carries the JSON line).
  opened.logger = dist('src/lib/logger.js').createLogger('warn', require('pino').destination(2));
  const { built, bearer } = BENCH_OWNER === '1' ? await buildWithBearer(opened) : { built: await dist('src/app.js').buildApp(opened) };
  const { startBackground, stopBackground } = dist('src/instance.js');
  await startBackground(opened, built);
  stopping = async () => {
    await stopBackground(built);
    await opened.db.$disconnect();
  };
  return Object.assign(built.app, { extra: { ...(bearer ? { bearer } : {}), instance: built.sweeps.instanceId } });
}

/** What a kind does at SIGTERM before exiting. */
let stopping = async () => {};
// `--cpu-prof` writes its profile only on a normal exit.
process.on('SIGTERM', () => {
  setTimeout(() => process.exit(1), 5_000).unref();
  stopping().then(
    () => process.exit(0),
    (err) => {
      console.error(`${kind}: stopping failed:`, err);
      process.exit(1);
    },
  );
});

// The retention settings (the `retention` part of the bench sets them) and the local agent's
// (FLOWS_LOCAL_AGENT_SANDBOX=off, say) pass through.
const passedOn = Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('FLOWS_RETENTION_') || name.startsWith('FLOWS_LOCAL_AGENT_')));
// BENCH_ENV: more settings, as JSON (the workspace row's private network and repository cache).
const appAgent = () => app({ FLOWS_LOCAL_AGENT_COMMAND: process.env.BENCH_AGENT_COMMAND ?? 'true', ...KEEP_RUNS, ...passedOn, ...JSON.parse(process.env.BENCH_ENV ?? '{}') });
const server = await { 'sqlite-insert': sqliteInsert, 'prisma-create': prismaCreate, app, 'app-agent': appAgent, 'app-pg': appPg }[kind]();
const listening = server.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ port: listening.address().port, ...(server.extra ?? {}) }));
});
