// The `intake` row of `npm run bench` and scripts/bench-intake-eval.mjs share this set-up: a tenant with
// 1,000 enabled webhook triggers across 20 GitHub-format sources, made through the API, and signed
// `issues.labeled` deliveries to the first source, on which exactly 5 of its 50 triggers match.
import { createHmac, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

const SOURCES = 20;
const JOBS = 20;
/** The most a job may have; 20 × 50 = 1,000 triggers, 50 on each source. */
const TRIGGERS_PER_JOB = 50;
export const PER_SOURCE = (JOBS * TRIGGERS_PER_JOB) / SOURCES;
export const MATCHING = 5;
const LABEL = 'agent';

async function post(baseUrl, bearer, target, body) {
  const res = await fetch(`${baseUrl}${target}`, { method: 'POST', headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status !== 201) throw new Error(`POST ${target} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

/**
 * Trigger k of job j listens to source (j + k) mod 20, which gives each source 50 triggers from all 20
 * jobs. On source 0, the deliveries' source, the first trigger of jobs 0 to 4 wants the delivery's label
 * (5 matches, 5 runs of 5 different jobs); every other trigger wants a label of its own.
 */
function triggersOf(job, sources) {
  return Array.from({ length: TRIGGERS_PER_JOB }, (_, k) => {
    const source = (job + k) % SOURCES;
    const label = source === 0 && job < MATCHING && k === (SOURCES - job) % SOURCES ? LABEL : `label-${job}-${k}`;
    return { type: 'webhook', sourceId: sources[source].id, events: ['issues.labeled'], conditions: { all: [{ path: 'payload.label.name', op: 'eq', value: label }] } };
  });
}

/** Creates the sources and jobs; answers the source the deliveries go to, with its signing secret. */
export async function setUpIntake(baseUrl, bearer) {
  const sources = [];
  for (let i = 0; i < SOURCES; i++) sources.push(await post(baseUrl, bearer, '/api/v1/webhook-sources', { name: `s${i}`, format: 'github' }));
  for (let j = 0; j < JOBS; j++) {
    // No execution target: the matched runs fail at dispatch, in the background.
    await post(baseUrl, bearer, '/api/v1/jobs', { name: `Intake ${j}`, promptTemplate: 'Issue {{ payload.issue.number }}', concurrencyLimit: 50, triggers: triggersOf(j, sources) });
  }
  return { id: sources[0].id, signingSecret: sources[0].signingSecret };
}

let sent = 0;

/** A new signed delivery for `source`: its own body (a sequence number), delivery id and signature. */
export function signedDelivery(source) {
  const body = JSON.stringify({ action: 'labeled', label: { name: LABEL }, issue: { number: 42, title: 'x' }, repository: { full_name: 'acme/widgets' }, sequence: ++sent });
  const signature = createHmac('sha256', source.signingSecret).update(body).digest('hex');
  return {
    body,
    headers: { 'content-type': 'application/json', 'x-github-event': 'issues', 'x-github-delivery': randomUUID(), 'x-hub-signature-256': `sha256=${signature}` },
  };
}

const UNFINISHED_RUNS = `SELECT count(*) AS n FROM "Run" WHERE state IN ('queued', 'starting', 'running', 'canceling')`;

/**
 * Resolves once the app has finished with the deliveries it was sent (every one evaluated, every run it
 * started ended, nothing new recorded for a poll), reading its SQLite file.
 */
export async function intakeSettled(file, { pollMs = 250, timeoutMs = 120_000 } = {}) {
  const Database = require('better-sqlite3');
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const deadline = Date.now() + timeoutMs;
    let last = -1;
    for (;;) {
      const { recorded, evaluated } = intakeActivity(file);
      if (recorded === last && evaluated === recorded && db.prepare(UNFINISHED_RUNS).get().n === 0) return;
      if (Date.now() > deadline) throw new Error(`intake: the app did not finish its deliveries within ${timeoutMs / 1000} s`);
      last = recorded;
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  } finally {
    db.close();
  }
}

/**
 * How far the background evaluation got, read from the app's SQLite file (the app keeps running): the
 * deliveries recorded, those evaluated, and any evaluated one whose decisions are not 5 matches and 45
 * misses (the set-up is wrong then).
 */
export function intakeActivity(file) {
  const Database = require('better-sqlite3');
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT decisions FROM "WebhookActivity"').all();
    let evaluated = 0;
    let wrong = 0;
    for (const { decisions } of rows) {
      const list = JSON.parse(decisions);
      if (list.length === 0) continue;
      evaluated++;
      const matches = list.filter((d) => d.decision === 'match').length;
      if (matches !== MATCHING || list.length !== PER_SOURCE || list.some((d) => d.decision === 'error')) wrong++;
    }
    return { recorded: rows.length, evaluated, wrong };
  } finally {
    db.close();
  }
}
