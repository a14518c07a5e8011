// The `retention` part of `npm run bench`: the app's SQLite file is given many finished runs of long ago
// (written directly, as an app that has run for a while would hold them), then the end-to-end intake row
// (scripts/bench-e2e.mjs) is measured with and without the app pruning them meanwhile.
import { createRequire } from 'node:module';
import { dist } from './bench-app.mjs';

const require = createRequire(import.meta.url);

/** What a finished run's trace holds: created, started, running, one line of output, succeeded. */
const TRACE = [
  ['state_changed', { from: null, to: 'queued' }],
  ['prompt_rendered', { name: 'Issue 42', promptLength: 15 }],
  ['state_changed', { from: 'queued', to: 'starting' }],
  ['state_changed', { from: 'starting', to: 'running' }],
  ['output', { stream: 'stdout', line: 'Looked at issue 42; nothing to change.' }],
  ['state_changed', { from: 'running', to: 'succeeded' }],
];

/**
 * Writes `count` succeeded runs of one of the tenant's jobs, each with its trace, finished `ageDays` ago
 * (a second apart, oldest first), into the app's SQLite `file`, in transactions of 10,000 runs.
 * Answers the job's id.
 */
export function seedFinishedRuns(file, { count, ageDays }) {
  const Database = require('better-sqlite3');
  const { newId } = dist('src/lib/ids.js');
  const db = new Database(file);
  db.pragma('busy_timeout = 10000');
  try {
    const job = db.prepare(`SELECT "tenantId", id FROM "Job" WHERE name = 'E2E 1'`).get();
    const run = db.prepare(
      `INSERT INTO "Run" (id, "tenantId", "jobId", name, state, "triggerType", prompt, inputs, result, "createdAt", "updatedAt", "startedAt", "finishedAt", "traceLength") VALUES (?, ?, ?, 'Issue 42', 'succeeded', 'invocation', 'Issue 42 again', '{"data":{}}', '{"summary":"done"}', ?, ?, ?, ?, ?)`,
    );
    const event = db.prepare(`INSERT INTO "RunEvent" (id, "tenantId", "runId", seq, at, type, data) VALUES (?, ?, ?, ?, ?, ?, ?)`);
    const data = TRACE.map(([, value]) => JSON.stringify(value));
    const firstAt = Date.now() - ageDays * 86_400_000 - count * 1000;
    const write = db.transaction((from, to) => {
      for (let i = from; i < to; i++) {
        const at = firstAt + i * 1000;
        const when = new Date(at).toISOString().replace('Z', '+00:00');
        const id = newId('run', at);
        run.run(id, job.tenantId, job.id, when, when, when, when, TRACE.length);
        TRACE.forEach(([type], i) => event.run(`${id}:${i + 1}.0`, job.tenantId, id, i + 1, when, type, data[i]));
      }
    });
    for (let from = 0; from < count; from += 10_000) write(from, Math.min(count, from + 10_000));
    return job.id;
  } finally {
    db.close();
  }
}

/** How many runs the app's SQLite `file` holds that finished more than `days` ago. */
export function oldRuns(file, days) {
  const Database = require('better-sqlite3');
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const before = new Date(Date.now() - days * 86_400_000).toISOString().replace('Z', '+00:00');
    return db.prepare(`SELECT count(*) AS n FROM "Run" WHERE "finishedAt" < ?`).get(before).n;
  } finally {
    db.close();
  }
}
