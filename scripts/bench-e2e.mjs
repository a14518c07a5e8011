// The `e2e` part of `npm run bench`: webhook intake end to end, from the signed delivery to its run's end.
// One `github` source; 20 jobs of 50 webhook triggers, all 1,000 on that source and on `issues.labeled`,
// each with 3 leaves and every fifth with a CEL `if`; exactly one trigger matches the deliveries' label
// (or fewer triggers, `triggers`: with 1, the matching one alone).
// The local target's agent is `true` (sandboxed, as by default). A burst of signed deliveries (each its
// own body, id and signature) for BENCH_E2E_DURATION seconds, then the drain: what counts is deliveries
// whose run has finished, per second, from the first request to the last run's end. BENCH_E2E_RATE paces
// the burst at that many deliveries a second in all (autocannon's overallRate) instead of as fast as the
// connections go: a burst at a rate the runs could keep up with, whose drain then says whether they do.
// The deliveries are about 50 issues in turn; with `flowControl` (the `flow` part of `npm run bench`) the
// matching job keys its runs by issue, and a delivery counts as finished once the run it started, or
// folded into, has ended.
import { createHmac, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import autocannon from 'autocannon';

const require = createRequire(import.meta.url);

const JOBS = 20;
const TRIGGERS_PER_JOB = 50;
const LABEL = 'agent';
/** The deliveries take turns among this many issues: the keys of the `flow` part. */
const ISSUES = 50;
const UNFINISHED = `FROM "Run" WHERE state IN ('queued', 'starting', 'running', 'canceling')`;

async function post(baseUrl, bearer, target, body) {
  const res = await fetch(`${baseUrl}${target}`, { method: 'POST', headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status !== 201) throw new Error(`POST ${target} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

/** Trigger k of job j: three leaves, the label one wanting `agent` only for job 0's first trigger. */
function trigger(sourceId, job, k) {
  const label = job === 0 && k === 0 ? LABEL : `label-${job}-${k}`;
  return {
    type: 'webhook',
    sourceId,
    events: ['issues.labeled'],
    conditions: {
      all: [
        { path: 'payload.label.name', op: 'eq', value: label },
        { path: 'payload.repository.full_name', op: 'eq', value: 'acme/widgets' },
      ],
      none: [{ path: 'payload.sender.login', op: 'endsWith', value: '[bot]' }],
      ...(k % 5 === 4 ? { if: "payload.issue.state == 'open'" } : {}),
    },
  };
}

/**
 * Creates the source and the jobs (on the local target) with `triggers` triggers in all, 50 a job, the
 * matching one with `flowControl` if given; answers the source with its signing secret.
 */
export async function setUpE2e(baseUrl, bearer, { flowControl, triggers: count = JOBS * TRIGGERS_PER_JOB } = {}) {
  const source = await post(baseUrl, bearer, '/api/v1/webhook-sources', { name: 'e2e', format: 'github' });
  for (let j = 0; j * TRIGGERS_PER_JOB < count; j++) {
    const triggers = Array.from({ length: Math.min(TRIGGERS_PER_JOB, count - j * TRIGGERS_PER_JOB) }, (_, k) => trigger(source.id, j, k));
    await post(baseUrl, bearer, '/api/v1/jobs', { name: `E2E ${j}`, promptTemplate: 'Issue {{ payload.issue.number }}', executionTargetId: 'local', concurrencyLimit: 50, triggers, ...(j === 0 && flowControl && { flowControl }) });
  }
  return source;
}

let sent = 0;

function signedDelivery(source) {
  const body = JSON.stringify({
    action: 'labeled',
    label: { name: LABEL },
    issue: { number: 1 + (sent % ISSUES), title: 'Saving a draft twice crashes the editor', state: 'open', body: 'Steps to reproduce. '.repeat(40) },
    repository: { full_name: 'acme/widgets' },
    sender: { login: 'octocat' },
    sequence: ++sent,
  });
  const signature = createHmac('sha256', source.signingSecret).update(body).digest('hex');
  return { body, headers: { 'content-type': 'application/json', 'x-github-event': 'issues', 'x-github-delivery': randomUUID(), 'x-hub-signature-256': `sha256=${signature}` } };
}

/** A run `cancel-running` stopped for a newer one of its key. */
const SUPERSEDED = `state = 'canceled' AND error LIKE 'Superseded by run %'`;
// Only the matching job's runs count (the `retention` part adds runs of another job, and prunes them), read
// through the job's index, not by walking every finished run.
const MATCHING = `"tenantId" = (SELECT "tenantId" FROM "Job" WHERE name = 'E2E 0') AND "jobId" = (SELECT id FROM "Job" WHERE name = 'E2E 0')`;
/**
 * Every figure in one statement, so that they are of one moment: read one after the other, a run could end
 * between the count of finished runs and the count of unfinished ones, and be in neither.
 */
const PROGRESS = `SELECT
  (SELECT count(*) FROM "WebhookActivity") AS recorded,
  (SELECT count("evaluatedAt") FROM "WebhookActivity") AS evaluated,
  (SELECT count(*) FROM "Run" WHERE ${MATCHING} AND state IN ('succeeded', 'failed', 'timed_out', 'canceled')) AS finished,
  (SELECT count(*) FROM "Run" WHERE ${MATCHING} AND ${SUPERSEDED}) AS superseded,
  (SELECT count(*) FROM "Run" WHERE ${MATCHING} AND state IN ('failed', 'timed_out', 'canceled') AND NOT (${SUPERSEDED})) AS failed,
  (SELECT count(*) ${UNFINISHED}) AS unfinished`;
/**
 * Whether a delivery waits for its evaluation or a run has not yet finished: what the drain polls, every 100
 * ms. Both read an index and stop at the first row, where the counts of PROGRESS walk every delivery and run
 * (on PostgreSQL, 30–90 ms a poll once a burst's rows are in).
 */
const BUSY = `SELECT EXISTS (SELECT 1 ${UNFINISHED}) OR EXISTS (SELECT 1 FROM "WebhookActivity" WHERE "evaluatedAt" IS NULL) AS busy`;
/** The evaluated deliveries that have no run (a few, with their decisions and run ids), to say why a row failed. */
const RUNLESS = `SELECT a.id, a.decisions, a."runIds" FROM "WebhookActivity" a WHERE a."evaluatedAt" IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM "Run" r WHERE r."triggerType" = 'webhook' AND r."startKey" LIKE '%:' || a.id) LIMIT 3`;
const numbers = (row) => Object.fromEntries(Object.entries(row).map(([name, value]) => [name, Number(value)]));

/** Deliveries recorded, deliveries evaluated, runs finished and runs not yet finished, from the app's SQLite file (read, not written). */
function sqliteProgress(file) {
  const Database = require('better-sqlite3');
  const db = new Database(file, { readonly: true, fileMustExist: true });
  return {
    progress: () => numbers(db.prepare(PROGRESS).get()),
    busy: () => Boolean(db.prepare(BUSY).get().busy),
    runless: () => db.prepare(RUNLESS).all().map((row) => `${row.id}: runIds ${row.runIds}, decisions ${row.decisions}`),
    close: async () => db.close(),
  };
}

/** The same from a PostgreSQL database (the instances of the `pg` part share it). */
export async function pgProgress(url) {
  const { Client } = require('pg');
  const client = new Client({ connectionString: url });
  await client.connect();
  return {
    progress: async () => numbers((await client.query(PROGRESS)).rows[0]),
    busy: async () => (await client.query(BUSY)).rows[0].busy,
    runless: async () => (await client.query(RUNLESS)).rows.map((row) => `${row.id}: runIds ${JSON.stringify(row.runIds)}, decisions ${JSON.stringify(row.decisions)}`),
    close: () => client.end(),
  };
}

/**
 * The burst and its drain. `database` is the app's SQLite file, or what `pgProgress` answers; `onBurst`
 * is called with 'start' and 'end' around the burst. `flow` is what the matching job's flow control does
 * with the runs: 'none' (one run per delivery), 'supersede' (one run per delivery, the older ones of an
 * issue canceled) or 'fold' (deliveries fold into fewer runs).
 * `rate` (BENCH_E2E_RATE; 0: unpaced) paces the burst at that many deliveries a second.
 * Answers accepted/s during the burst, finished deliveries/s over burst plus drain, and the drain time.
 */
export async function measureE2e(port, source, database, { duration = 20, connections = 32, rate = Number(process.env.BENCH_E2E_RATE ?? 0), drainLimitS = 600, onBurst, flow = 'none' } = {}) {
  const reader = typeof database === 'string' ? sqliteProgress(database) : database;
  const progress = () => reader.progress();
  try {
    const options = {
      url: `http://127.0.0.1:${port}/hooks/${source.id}`,
      method: 'POST',
      connections,
      timeout: 30,
      // The body and the headers of one delivery are made together.
      requests: [
        {
          setupRequest: (req) => {
            const own = signedDelivery(source);
            return { ...req, headers: { ...req.headers, ...own.headers }, body: own.body };
          },
        },
      ],
    };
    await autocannon({ ...options, amount: 200 }); // warm-up: validators compiled, triggers loaded, JIT settled
    while (await reader.busy()) await new Promise((r) => setTimeout(r, 200));
    const before = await progress();
    onBurst?.('start');
    const started = Date.now();
    const burst = await autocannon({ ...options, duration, ...(rate > 0 && { overallRate: rate }) });
    const burstEnded = Date.now();
    onBurst?.('end');
    const atBurstEnd = await progress();
    while (await reader.busy()) {
      if (Date.now() - burstEnded > drainLimitS * 1000) throw new Error(`e2e: not drained ${drainLimitS} s after the burst: ${JSON.stringify(await progress())}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const drained = Date.now();
    const last = await progress();
    const accepted = burst.statusCodeStats['202']?.count ?? 0;
    const deliveries = last.recorded - before.recorded;
    const runs = last.finished - before.finished;
    if (burst.non2xx || burst.errors) throw new Error(`e2e: ${burst.non2xx} non-2xx answers, ${burst.errors} errors`);
    // Answers still on their way when the burst stopped are recorded but not counted by autocannon.
    const superseded = last.superseded - before.superseded;
    // Worked out only for a row that failed: finding the deliveries without a run reads every run.
    const state = async () => `(before the burst ${JSON.stringify(before)}, after the drain ${JSON.stringify(last)}; deliveries without a run decided ${(await reader.runless()).join(', ')})`;
    if (deliveries < accepted || deliveries > accepted + connections) throw new Error(`e2e: ${accepted} accepted, ${deliveries} recorded ${await state()}`);
    if (flow === 'fold' ? runs > deliveries || runs < ISSUES : runs !== deliveries) throw new Error(`e2e: ${deliveries} deliveries, ${runs} runs finished: not what flow control '${flow}' makes ${await state()}`);
    if (flow === 'supersede' ? !superseded || runs - superseded < ISSUES : superseded) throw new Error(`e2e: ${superseded} of ${runs} runs superseded under flow control '${flow}' ${await state()}`);
    if (last.failed - before.failed) throw new Error(`e2e: ${last.failed - before.failed} runs did not succeed`);
    return {
      accepted: deliveries,
      acceptedPerSecond: burst.requests.average,
      p99: burst.latency.p99,
      runs,
      superseded,
      finishedPerSecond: deliveries / ((drained - started) / 1000),
      finishedDuringBurst: atBurstEnd.finished - before.finished,
      drainSeconds: (drained - burstEnded) / 1000,
    };
  } finally {
    await reader.close();
  }
}
