// `npm run bench`: throughput of the built app, driven by autocannon from this process against servers
// running in processes of their own on loopback, each figure a ratio to two baselines measured in the
// same run (these machines are noisy; the same absolute figure moves by 2x between runs):
//   (a) bare Express 5 + better-sqlite3, one prepared INSERT of a run-like row per request
//   (b) Express 5 + one Prisma `create` of a run per request
// The `intake` row has an app of its own (scripts/bench-intake.mjs sets it up); then the cost of deciding a
// delivery, measured in process (scripts/bench-intake-eval.mjs), how long a run takes to its first output
// per target kind (scripts/bench-run-start.mjs), and start-up time and idle memory
// (scripts/bench-startup.mjs). BENCH_DURATION (seconds per row, 8) and BENCH_CONNECTIONS (32) tune it;
// BENCH_CPU_PROF=<dir> has the apps' servers write V8 CPU profiles there. Arguments pick parts:
// `npm run bench -- intake` measures the baselines and the intake row only (also: api, evaluation, runs, startup).
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { createBenchJob } from './bench-app.mjs';
import { measureE2e, setUpE2e } from './bench-e2e.mjs';
import { intakeActivity, intakeSettled, setUpIntake, signedDelivery } from './bench-intake.mjs';
import { measureStartup } from './bench-startup.mjs';

const DURATION = Number(process.env.BENCH_DURATION ?? 8);
const CPU_PROF = process.env.BENCH_CPU_PROF;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
/** Seconds before autocannon gives up on an answer: long, so that a slow answer is measured, not dropped. */
const TIMEOUT = 30;
const PARTS = ['api', 'intake', 'e2e', 'evaluation', 'runs', 'startup'];
const picked = process.argv.slice(2);
const unknown = picked.filter((part) => !PARTS.includes(part));
if (unknown.length) throw new Error(`unknown part ${unknown.join(', ')}: pick from ${PARTS.join(', ')}`);
const wanted = (part) => picked.length === 0 || picked.includes(part);
const root = path.resolve(import.meta.dirname, '..');
const dir = mkdtempSync(path.join(os.tmpdir(), 'flows-bench-'));
const children = [];

/** Resolves to the server's JSON line, with `child`; its database files go in `serverDir`. */
function startServer(kind, serverDir = dir) {
  const profile = CPU_PROF && kind.startsWith('app') ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(CPU_PROF)}`] : [];
  const child = spawn(process.execPath, [...profile, path.join(root, 'scripts/bench-server.mjs'), kind, serverDir], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${kind} did not start within 60 s`)), 60_000);
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) {
        clearTimeout(timer);
        resolve({ ...JSON.parse(line), child });
      }
    });
    child.once('exit', (code) => reject(new Error(`${kind} exited with ${code}`)));
  });
}

/** Stops a server and waits for its exit (its CPU profile written, BENCH_CPU_PROF). */
const stop = (child) => new Promise((resolve) => ((child.exitCode ?? child.signalCode) !== null ? resolve() : child.once('exit', resolve).kill('SIGTERM')));

/** A GitHub-style `issues.labeled` delivery of about 20 KB, as intake prepares it. */
function githubContext() {
  const urls = (base) => Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`url_${i}`, `https://api.github.example/repos/acme/widgets/${base}/${i}{/other}`]));
  const user = (login) => ({ login, id: 583231, type: 'User', site_admin: false, ...urls(`users/${login}`) });
  return {
    source: { id: 'src_bench', format: 'github' },
    event: 'issues',
    action: 'labeled',
    headers: { 'x-github-event': 'issues', 'content-type': 'application/json' },
    delivery: { id: '72d3162e-cc78-11e3-81ab-4c9367dc0958', receivedAt: '2026-11-23T08:21:53Z' },
    payload: {
      action: 'labeled',
      issue: { number: 42, title: 'Saving a draft twice crashes the editor', state: 'open', locked: false, body: 'Steps to reproduce. '.repeat(100), user: user('octocat'), labels: [{ name: 'bug' }, { name: 'agent' }], ...urls('issues/42') },
      label: { name: 'agent' },
      repository: { full_name: 'acme/widgets', default_branch: 'main', private: true, owner: user('acme'), ...urls('repo') },
      sender: user('octocat'),
    },
  };
}

const conditions = {
  all: [
    { path: 'event', op: 'eq', value: 'issues' },
    { path: 'payload.issue.labels[*].name', op: 'eq', value: 'agent' },
    { path: 'payload.issue.state', op: 'in', value: ['open', 'reopened'] },
  ],
  none: [
    { path: 'payload.issue.user.login', op: 'endsWith', value: '[bot]' },
    { path: 'payload.issue.title', op: 'matches', value: '(?i)^wip\\b' },
  ],
  if: 'payload.repository.full_name == "acme/widgets" && !payload.issue.locked && payload.issue.number > 0.0',
};

/**
 * One row: a warm-up, then the measured run, which must have no errors, no non-2xx answer and, when
 * `status` is given, only that status. `body` may be a function called for every request (a new body each);
 * `prepare`, called for every request instead, answers its `{ headers, body }` (a body already serialized);
 * `settle`, awaited between the warm-up and the run, lets the server finish what the warm-up left it;
 * `warmUpRequests` bounds the warm-up to that many requests (2 s otherwise).
 */
async function measure(port, { method = 'GET', path: target, headers = {}, body, prepare, settle, status, warmUpRequests }) {
  const json = (value) => JSON.stringify(typeof value === 'function' ? value() : value);
  const setupRequest = prepare
    ? (req) => {
        const own = prepare();
        return { ...req, headers: { ...req.headers, ...own.headers }, body: own.body };
      }
    : typeof body === 'function' && ((req) => ({ ...req, body: json(body) }));
  const options = {
    url: `http://127.0.0.1:${port}${target}`,
    method,
    headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body && json(body),
    ...(setupRequest ? { requests: [{ setupRequest }] } : {}),
    connections: CONNECTIONS,
    timeout: TIMEOUT,
  };
  await autocannon({ ...options, ...(warmUpRequests ? { amount: warmUpRequests } : { duration: 2 }) }); // warm-up: validators compiled, JIT settled
  await settle?.();
  const result = await autocannon({ ...options, duration: DURATION });
  const answers = Object.values(result.statusCodeStats).reduce((sum, { count }) => sum + count, 0);
  const expected = status ? (result.statusCodeStats[status]?.count ?? 0) : answers - result.non2xx;
  if (!answers || result.non2xx || result.errors || expected !== answers) {
    throw new Error(`${method} ${target}: ${answers} answers in ${DURATION} s, ${result.non2xx} non-2xx, ${result.errors} errors, statuses ${JSON.stringify(result.statusCodeStats)}`);
  }
  return { rps: result.requests.average, p99: result.latency.p99, answers, statuses: Object.keys(result.statusCodeStats).join(', ') };
}

/** The API rows, on one app. */
async function measureApi() {
  const app = await startServer('app');
  const bearer = { authorization: `Bearer ${app.bearer}` };
  const job = await createBenchJob(`http://127.0.0.1:${app.port}`, app.bearer);
  let invocations = 0;
  const invocation = () => ({ idempotencyKey: `bench-${++invocations}`, data: { n: 1 } });
  const rows = [
    ['conditions: 5 leaves + CEL, 20 KB payload', await measure(app.port, { method: 'POST', path: '/api/v1/job-conditions/test', headers: bearer, body: { webhook: githubContext(), conditions } })],
    ['GET /api/v1/me, bearer', await measure(app.port, { path: '/api/v1/me', headers: bearer })],
    // Last: the runs it creates fail at dispatch in the background (no execution target), beside the load.
    ['invoke: new idempotency key per request', await measure(app.port, { method: 'POST', path: `/api/v1/jobs/${job.id}/invocations`, headers: bearer, body: invocation, status: 202 })],
  ];
  await stop(app.child);
  return rows;
}

/** Resolves after `ms`. */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** How long the evaluation is watched catching up after the intake row. */
const CATCH_UP_MS = 5_000;

/**
 * The intake row, on a fresh app of its own: each delivery makes 5 runs in the background. Also answers
 * the deliveries evaluated during the row and, watched for a few seconds after it, how fast evaluation
 * catches up once deliveries stop coming.
 */
async function measureIntake() {
  const intakeDir = path.join(dir, 'intake');
  mkdirSync(intakeDir);
  const hooks = await startServer('app', intakeDir);
  const source = await setUpIntake(`http://127.0.0.1:${hooks.port}`, hooks.bearer);
  const hooksDb = path.join(intakeDir, 'app.db');
  let before;
  // Settled after the warm-up, so that the row starts on an idle app: each delivery costs 5 runs, which
  // the app makes at a few dozen a second once deliveries stop coming, hence a warm-up of a few hundred.
  const settle = async () => {
    await intakeSettled(hooksDb);
    before = intakeActivity(hooksDb);
  };
  const row = await measure(hooks.port, { method: 'POST', path: `/hooks/${source.id}`, prepare: () => signedDelivery(source), settle, status: 202, warmUpRequests: 300 });
  const after = intakeActivity(hooksDb);
  await sleep(CATCH_UP_MS);
  const later = intakeActivity(hooksDb);
  if (later.wrong) throw new Error(`intake: ${later.wrong} evaluated deliveries did not decide 5 matches and 45 misses`);
  return {
    row,
    duringRow: { recorded: after.recorded - before.recorded, evaluated: after.evaluated - before.evaluated },
    catchUpPerSecond: (later.evaluated - after.evaluated) / (CATCH_UP_MS / 1000),
  };
}

/** The end-to-end intake row (scripts/bench-e2e.mjs), on a fresh app of its own with a local agent. */
async function measureEndToEnd() {
  const e2eDir = path.join(dir, 'e2e');
  mkdirSync(e2eDir);
  const app = await startServer('app-agent', e2eDir);
  const source = await setUpE2e(`http://127.0.0.1:${app.port}`, app.bearer);
  return measureE2e(app.port, source, path.join(e2eDir, 'app.db'), { duration: Number(process.env.BENCH_E2E_DURATION ?? 20), connections: CONNECTIONS });
}

async function main() {
  const a = await measure((await startServer('sqlite-insert')).port, { method: 'POST', path: '/runs', body: {} });
  const b = await measure((await startServer('prisma-create')).port, { method: 'POST', path: '/runs', body: {} });
  const rows = [
    ['(a) Express + better-sqlite3 INSERT', a],
    ['(b) Express + Prisma create', b],
  ];
  if (wanted('api')) rows.push(...(await measureApi()));
  let intake;
  if (wanted('intake')) {
    intake = await measureIntake();
    rows.push(['intake: signed, 1,000 triggers, 5 match', intake.row]);
  }
  const e2e = wanted('e2e') && (await measureEndToEnd());
  // Gone before anything else is measured, with their CPU profiles written (BENCH_CPU_PROF).
  await Promise.all(children.map(stop));

  console.log(`autocannon, ${CONNECTIONS} connections, ${DURATION} s per row, embedded SQLite, loopback, Node ${process.version}, ${os.cpus().length} CPUs`);
  console.log(`${'row'.padEnd(44)} ${'req/s'.padStart(7)} ${'p99 ms'.padStart(7)}  ${'× (a)'.padStart(6)} ${'× (b)'.padStart(6)}  answers`);
  for (const [name, { rps, p99, answers, statuses }] of rows) {
    console.log(`${name.padEnd(44)} ${rps.toFixed(0).padStart(7)} ${String(p99).padStart(7)}  ${(rps / a.rps).toFixed(2).padStart(6)} ${(rps / b.rps).toFixed(2).padStart(6)}  ${answers} × ${statuses}`);
  }
  if (intake) {
    const { recorded, evaluated } = intake.duringRow;
    console.log(`intake: during the row ${recorded} deliveries recorded and ${evaluated} evaluated (5 runs each); after it, evaluation caught up at ${intake.catchUpPerSecond.toFixed(0)} deliveries/s`);
  }
  if (e2e) {
    console.log(
      `e2e intake (1,000 triggers, one match, local agent \`true\`): accepted ${e2e.acceptedPerSecond.toFixed(0)}/s (${(e2e.acceptedPerSecond / a.rps).toFixed(2)} × (a), p99 ${e2e.p99} ms); ` +
        `finished ${e2e.finishedPerSecond.toFixed(1)} deliveries/s over burst and drain (${e2e.accepted} deliveries, ${e2e.finishedDuringBurst} finished during the burst, drain ${e2e.drainSeconds.toFixed(1)} s)`,
    );
    console.log(JSON.stringify({ e2e, baselineA: a.rps }));
  }
  if (wanted('evaluation')) {
    const evaluation = execFileSync(process.execPath, [path.join(root, 'scripts/bench-intake-eval.mjs')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    console.log(evaluation.split('\n').filter((line) => line && !line.startsWith('{')).join('\n'));
  }
  if (wanted('runs')) {
    const runs = execFileSync(process.execPath, [path.join(root, 'scripts/bench-run-start.mjs')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    console.log(runs.split('\n').filter((line) => line && !line.startsWith('{')).join('\n'));
  }
  if (wanted('startup')) {
    const startup = await measureStartup();
    console.log(`start-up: restart ${startup.restartMedianMs} ms (first start ${startup.firstStartMs} ms), idle RSS ${startup.idleRssMb} MB`);
  }
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => {
    for (const child of children) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
