// `npm run bench`: throughput of the built app, driven by autocannon from this process against servers
// running in processes of their own on loopback, each figure a ratio to two baselines measured in the
// same run (these machines are noisy; the same absolute figure moves by 2x between runs):
//   (a) bare Express 5 + better-sqlite3, one prepared INSERT of a run-like row per request
//   (b) Express 5 + one Prisma `create` of a run per request
// The `intake` row has an app of its own (scripts/bench-intake.mjs sets it up); then the cost of deciding a
// delivery, measured in process (scripts/bench-intake-eval.mjs), what reading an agent's event stream costs
// (scripts/bench-agent-stream.mjs), how long a run takes to its first output
// per target kind (scripts/bench-run-start.mjs), what starting a sandbox costs this process and the
// machine (scripts/bench-spawn.mjs), and start-up time and idle memory
// (scripts/bench-startup.mjs). BENCH_DURATION (seconds per row, 8) and BENCH_CONNECTIONS (32) tune it;
// BENCH_CPU_PROF=<dir> has the apps' servers write V8 CPU profiles there; BENCH_E2E_DURATION and BENCH_E2E_RATE
// set the end-to-end rows' burst (scripts/bench-e2e.mjs). Arguments pick parts:
// `npm run bench -- intake` measures the baselines and the intake row only (also: api, evaluation, agents, runs, spawn, startup).
// `npm run bench -- pg` (not part of the default run: it needs PostgreSQL at BENCH_PG_URL, by default
// postgresql://postgres@127.0.0.1:5432/postgres) measures the invoke and end-to-end intake rows on a fresh
// PostgreSQL database, on one instance, then on the same instance behind a round-robin proxy
// (scripts/bench-proxy.mjs), then on two behind it, with the CPU each process used during each row. Two
// instances are compared with one behind the same proxy: the proxy's share of the machine is in both.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { createBenchJob } from './bench-app.mjs';
import { measureE2e, pgProgress, setUpE2e } from './bench-e2e.mjs';
import { oldRuns, seedFinishedRuns } from './bench-retention.mjs';
import { intakeActivity, intakeSettled, setUpIntake, signedDelivery } from './bench-intake.mjs';
import { measureStartup } from './bench-startup.mjs';
import { measureWorkspace } from './bench-workspace.mjs';

const DURATION = Number(process.env.BENCH_DURATION ?? 8);
const CPU_PROF = process.env.BENCH_CPU_PROF;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
/** Seconds before autocannon gives up on an answer: long, so that a slow answer is measured, not dropped. */
const TIMEOUT = 30;
const PARTS = ['api', 'intake', 'e2e', 'evaluation', 'agents', 'runs', 'spawn', 'startup', 'workspace', 'pg', 'flow', 'retention'];
/** Parts run only when picked. */
const OPT_IN = ['pg', 'flow', 'retention'];
const picked = process.argv.slice(2);
const unknown = picked.filter((part) => !PARTS.includes(part));
if (unknown.length) throw new Error(`unknown part ${unknown.join(', ')}: pick from ${PARTS.join(', ')}`);
const wanted = (part) => (picked.length === 0 ? !OPT_IN.includes(part) : picked.includes(part));
const root = path.resolve(import.meta.dirname, '..');
const dir = mkdtempSync(path.join(os.tmpdir(), 'flows-bench-'));
const children = [];

/**
 * Resolves to the server's JSON line, with `child`; its database files go in `serverDir`. With `env`, the
 * server gets those variables too; with `logs`, its stderr is kept there (one entry a line) instead of shown.
 * `script` runs another server than scripts/bench-server.mjs (the proxy), with `args`.
 */
function startServer(kind, serverDir = dir, { env, logs, script = 'scripts/bench-server.mjs', args = [kind, serverDir] } = {}) {
  const profile = CPU_PROF && kind.startsWith('app') ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(CPU_PROF)}`] : [];
  const child = spawn(process.execPath, [...profile, path.join(root, script), ...args], { stdio: ['ignore', 'pipe', logs ? 'pipe' : 'inherit'], env: { ...process.env, ...env } });
  children.push(child);
  if (logs) {
    let rest = '';
    child.stderr.on('data', (chunk) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop();
      logs.push(...lines.filter(Boolean));
    });
  }
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${kind} did not start within 60 s`)), 60_000);
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const line = out.split('\n').find((l) => l.startsWith('{"port"'));
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

/**
 * The end-to-end intake row (scripts/bench-e2e.mjs), on a fresh app of its own with a local agent (`true`,
 * or `agent`) and `triggers` triggers (1,000); with `flowControl` on the matching job, which does `flow`
 * with its runs (see measureE2e).
 */
async function measureEndToEnd({ name = 'e2e', duration = Number(process.env.BENCH_E2E_DURATION ?? 20), flowControl, flow, agent, triggers } = {}) {
  const e2eDir = path.join(dir, name);
  mkdirSync(e2eDir);
  const app = await startServer('app-agent', e2eDir, agent && { env: { BENCH_AGENT_COMMAND: agent } });
  const source = await setUpE2e(`http://127.0.0.1:${app.port}`, app.bearer, { flowControl, triggers });
  const result = await measureE2e(app.port, source, path.join(e2eDir, 'app.db'), { duration, connections: CONNECTIONS, flow });
  await stop(app.child);
  return result;
}

/**
 * The `flow` part: the end-to-end row with the matching job keyed by issue under `cancel-running` and
 * under `debounce`, between two plain rows, each on a fresh app; the ratios are to the plain rows' mean.
 * The agent takes BENCH_FLOW_AGENT_SECONDS (1) to finish, so that a run of an issue is still going when
 * the issue's next delivery comes and cancel-running has runs to supersede.
 */
async function measureFlowControl() {
  const duration = Number(process.env.BENCH_E2E_DURATION ?? 5);
  const agent = `sleep ${Number(process.env.BENCH_FLOW_AGENT_SECONDS ?? 1)}`;
  const key = 'payload.issue.number';
  const variants = [
    ['plain', {}],
    ['cancel-running', { flowControl: { concurrency: { key, limit: 1, onConflict: 'cancel-running' } }, flow: 'supersede' }],
    ['debounce', { flowControl: { debounce: { key, period: '1s', maxWait: '5s' } }, flow: 'fold' }],
    ['plain, again', {}],
  ];
  const rows = [];
  for (const [label, options] of variants) rows.push([label, await measureEndToEnd({ name: `flow-${rows.length}`, duration, agent, ...options })]);
  return { agent, rows };
}

/**
 * The `retention` part: the end-to-end row on one app whose database holds BENCH_PRUNE_RUNS (1,000,000)
 * finished runs of 40 days ago (30 are kept) with their traces, alternately without pruning and while the
 * app prunes them, its retention turns back to back (scripts/bench-server.mjs), from before the row's
 * warm-up to the end of its drain.
 */
async function measureRetention() {
  const duration = Number(process.env.BENCH_E2E_DURATION ?? 5);
  const count = Number(process.env.BENCH_PRUNE_RUNS ?? 1_000_000);
  const retentionDir = path.join(dir, 'retention');
  mkdirSync(retentionDir);
  // A job may keep more runs than the rows make, so that only the old runs go.
  const app = await startServer('app-agent', retentionDir, { env: { FLOWS_RETENTION_DAYS: '30', FLOWS_RETENTION_MAX_RUNS_PER_JOB: '100000' } });
  const file = path.join(retentionDir, 'app.db');
  const source = await setUpE2e(`http://127.0.0.1:${app.port}`, app.bearer);
  const seeding = Date.now();
  seedFinishedRuns(file, { count, ageDays: 40 });
  const seedSeconds = (Date.now() - seeding) / 1000;
  const turns = [];
  app.child.stdout.on('data', (chunk) => turns.push(...String(chunk).split('\n').filter((line) => line.startsWith('{"pruned"')).map((line) => JSON.parse(line))));
  const rows = [];
  for (const pruning of [false, true, false, true]) {
    const left = oldRuns(file, 30);
    if (pruning) app.child.kill('SIGUSR2');
    const row = await measureE2e(app.port, source, file, { duration, connections: CONNECTIONS });
    if (pruning) {
      app.child.kill('SIGUSR2');
      while (turns.length < rows.filter((r) => r.pruning).length + 1) await sleep(50);
    }
    rows.push({ pruning, left, ...row, ...(pruning && turns[turns.length - 1]) });
  }
  await stop(app.child);
  return { count, seedSeconds, rows, left: oldRuns(file, 30) };
}

const PG_ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

/** Whether something listens at PostgreSQL's address (2 s to answer). */
function pgReachable() {
  const { hostname, port } = new URL(PG_ADMIN_URL);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port || 5432), timeout: 2_000 });
    socket.once('connect', () => resolve(socket.end() && true));
    socket.once('timeout', () => resolve(socket.destroy() && false));
    socket.once('error', () => resolve(false));
  });
}

/** Runs `sql` on the database at `connectionString`: PostgreSQL's maintenance database unless told. */
async function pgAdmin(sql, connectionString = PG_ADMIN_URL) {
  const { Client } = createRequire(import.meta.url)('pg');
  const client = new Client({ connectionString });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

const CLOCK_TICKS = 100;
/** CPU seconds a process used so far (with its waited-for children: the local agents), from /proc. */
function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    // utime, stime, cutime, cstime: fields 14 to 17, counted from the state (field 3).
    return fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}
/** The PostgreSQL backends serving `database` (their titles name it; the server's shared processes are not counted). */
const postgresPids = (database) =>
  readdirSync('/proc').filter((entry) => {
    if (!/^\d+$/.test(entry)) return false;
    try {
      return readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres' && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(` ${database} `);
    } catch {
      return false;
    }
  });
/** Busy and total CPU seconds of the machine, from /proc/stat. */
function machineSeconds() {
  const [user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const busy = user + nice + system + irq + softirq + steal;
  return { busy: busy / CLOCK_TICKS, total: (busy + idle + iowait) / CLOCK_TICKS };
}

/**
 * Samples the CPU of `processes` ({ name: pid }), the PostgreSQL backends of `database` together and the
 * machine: `start()`, then `end()` answers each as a percentage of one core over the wall time between, and
 * (`served`, seconds) what the machine spent on everything but the load generator and the proxy.
 */
function cpuSampler(processes, database) {
  let at;
  const sample = () => ({
    wall: performance.now() / 1000,
    own: Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, cpuSeconds(pid)])),
    postgres: Object.fromEntries(postgresPids(database).map((pid) => [pid, cpuSeconds(pid)])),
    machine: machineSeconds(),
  });
  return {
    start: () => void (at = sample()),
    end() {
      const now = sample();
      const wall = now.wall - at.wall;
      const pct = (seconds) => Math.round((100 * seconds) / wall);
      const postgres = Object.entries(now.postgres).reduce((sum, [pid, s]) => sum + s - (at.postgres[pid] ?? 0), 0);
      const busy = now.machine.busy - at.machine.busy;
      const own = Object.entries(now.own).map(([name, s]) => [name, s - at.own[name]]);
      const ours = own.reduce((sum, [, s]) => sum + s, postgres);
      const shares = {
        ...Object.fromEntries(own.map(([name, s]) => [name, pct(s)])),
        postgres: pct(postgres),
        // Other processes on the machine (other work sharing its CPUs, the kernel).
        others: pct(Math.max(0, busy - ours)),
        machine: `${Math.round((100 * busy) / (now.machine.total - at.machine.total))}% busy of ${os.cpus().length} CPUs`,
      };
      const driving = own.filter(([name]) => name === 'bench' || name === 'proxy').reduce((sum, [, s]) => sum + s, 0);
      return { shares, served: busy - driving };
    },
  };
}

/** Warnings and errors in an instance's log lines (pino JSON on stderr): count, and each message with its count. */
function logSummary(lines) {
  const messages = {};
  let count = 0;
  for (const line of lines) {
    let entry;
    try {
      entry = JSON.parse(line);
    } catch {
      entry = { level: 50, msg: line.slice(0, 160) };
    }
    if (entry.level < 40) continue;
    count++;
    const key = `${entry.level >= 50 ? 'error' : 'warn'}: ${entry.msg}${entry.err?.message ? ` (${entry.err.message.split('\n')[0].slice(0, 160)})` : ''}`;
    messages[key] = (messages[key] ?? 0) + 1;
  }
  return { count, messages };
}

/**
 * The `pg` part, on a fresh PostgreSQL database dropped at the end: the invoke and end-to-end intake rows
 * on one instance, on it behind the round-robin proxy, then on two instances behind the proxy, each row with
 * the CPU of every process.
 */
async function measurePg() {
  const name = `flows_bench_${randomBytes(6).toString('hex')}`;
  const url = Object.assign(new URL(PG_ADMIN_URL), { pathname: `/${name}` }).href;
  await pgAdmin(`CREATE DATABASE ${name}`);
  const started = [];
  try {
    // Shared by the instances: a token issued by one is accepted by the other.
    const env = { BENCH_DATABASE_URL: url, BENCH_SECRET_KEY: randomBytes(32).toString('hex'), BENCH_BASE_URL: 'http://127.0.0.1:8080' };
    const instance = async (label, owner) => {
      const serverDir = path.join(dir, `pg-${label}`);
      mkdirSync(serverDir);
      const logs = [];
      const server = await startServer('app-pg', serverDir, { env: { ...env, BENCH_OWNER: owner ? '1' : '0' }, logs });
      started.push(server.child);
      return { ...server, logs };
    };
    // The first instance migrates the new database as the app does on start (FLOWS_MIGRATE_ON_START).
    const one = await instance('1', true);
    const bearer = { authorization: `Bearer ${one.bearer}` };
    const job = await createBenchJob(`http://127.0.0.1:${one.port}`, one.bearer);
    let invocations = 0;
    // Each row starts on tables vacuumed and analyzed: otherwise the first row runs before autovacuum has
    // analyzed anything (its plans made without statistics), and each later one among the row versions the
    // rows before it left, so that the order of the rows, not the instances, decides their ratios.
    const clean = () => pgAdmin('VACUUM ANALYZE', url);
    const invoke = async (port, cpu) => {
      await clean();
      return measure(port, { method: 'POST', path: `/api/v1/jobs/${job.id}/invocations`, headers: bearer, body: () => ({ idempotencyKey: `bench-${++invocations}`, data: { n: 1 } }), status: 202, settle: cpu.start });
    };
    // The burst lasts as long as a row unless BENCH_E2E_DURATION says: the drain on PostgreSQL takes minutes.
    const e2eDuration = Number(process.env.BENCH_E2E_DURATION ?? DURATION);
    // A failed check is reported beside the other figures, not thrown: the instances' logs say more about it.
    const e2e = async (port, source, cpu) => {
      await clean();
      const progress = await pgProgress(url);
      let cpuFigures;
      try {
        const result = await measureE2e(port, source, progress, { duration: e2eDuration, connections: CONNECTIONS, onBurst: (at) => (at === 'start' ? cpu.start() : (cpuFigures = cpu.end())) });
        return { ...result, cpu: cpuFigures };
      } catch (err) {
        return { error: err.message, cpu: cpuFigures };
      }
    };

    const rows = {};
    let cpu = cpuSampler({ bench: process.pid, 'instance 1': one.child.pid }, name);
    rows.invoke1 = await invoke(one.port, cpu);
    rows.invoke1.cpu = cpu.end();
    const source = await setUpE2e(`http://127.0.0.1:${one.port}`, one.bearer);
    rows.e2e1 = await e2e(one.port, source, cpu);

    // The rows `label` behind a proxy to `instances`; answers what the proxy forwarded where.
    const proxied = async (instances, label) => {
      const proxy = await startServer('proxy', dir, { script: 'scripts/bench-proxy.mjs', args: instances.map((each) => each.port) });
      let out = '';
      proxy.child.stdout.on('data', (chunk) => (out += chunk));
      cpu = cpuSampler({ bench: process.pid, proxy: proxy.child.pid, ...Object.fromEntries(instances.map((each, i) => [`instance ${i + 1}`, each.child.pid])) }, name);
      rows[`invoke${label}`] = await invoke(proxy.port, cpu);
      rows[`invoke${label}`].cpu = cpu.end();
      rows[`e2e${label}`] = await e2e(proxy.port, source, cpu);
      await stop(proxy.child);
      return out.split('\n').filter((line) => line.startsWith('{"backends"')).map((line) => JSON.parse(line).backends)[0];
    };
    const forwarded = { '1 instance': await proxied([one], '1p') };
    const two = await instance('2', false);
    forwarded['2 instances'] = await proxied([one, two], '2');
    await Promise.all(started.map(stop));
    const [{ autovacuum }] = (await pgAdmin('SHOW autovacuum')).rows;
    return { rows, forwarded, autovacuum, logs: { 'instance 1': logSummary(one.logs), 'instance 2': logSummary(two.logs) } };
  } finally {
    await Promise.all(started.map((child) => stop(child)));
    await pgAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

async function main() {
  let pg = wanted('pg');
  if (pg && !(await pgReachable())) {
    console.log(`pg: skipped, PostgreSQL is not reachable at ${new URL(PG_ADMIN_URL).host} (BENCH_PG_URL)`);
    pg = false;
    if (picked.every((part) => part === 'pg')) return;
  }
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
  // With one trigger, then with 1,000: what deciding among many costs end to end.
  const e2e = wanted('e2e') && { one: await measureEndToEnd({ name: 'e2e-1', triggers: 1 }), thousand: await measureEndToEnd() };
  const workspace = wanted('workspace') && (await measureWorkspace({ root, dir, startServer, stop }));
  const flow = wanted('flow') && (await measureFlowControl());
  const retention = wanted('retention') && (await measureRetention());
  const onPg = pg && (await measurePg());
  if (onPg) {
    rows.push(['pg invoke: 1 instance', onPg.rows.invoke1]);
    rows.push(['pg invoke: 1 instance, proxy', onPg.rows.invoke1p]);
    rows.push(['pg invoke: 2 instances, round-robin proxy', onPg.rows.invoke2]);
  }
  // Gone before anything else is measured, with their CPU profiles written (BENCH_CPU_PROF).
  await Promise.all(children.map(stop));

  console.log(`autocannon, ${CONNECTIONS} connections, ${DURATION} s per row, embedded SQLite${onPg ? ' (pg rows: PostgreSQL)' : ''}, loopback, Node ${process.version}, ${os.cpus().length} CPUs`);
  console.log(`${'row'.padEnd(44)} ${'req/s'.padStart(7)} ${'p99 ms'.padStart(7)}  ${'× (a)'.padStart(6)} ${'× (b)'.padStart(6)}  answers`);
  for (const [name, { rps, p99, answers, statuses }] of rows) {
    console.log(`${name.padEnd(44)} ${rps.toFixed(0).padStart(7)} ${String(p99).padStart(7)}  ${(rps / a.rps).toFixed(2).padStart(6)} ${(rps / b.rps).toFixed(2).padStart(6)}  ${answers} × ${statuses}`);
  }
  if (intake) {
    const { recorded, evaluated } = intake.duringRow;
    console.log(`intake: during the row ${recorded} deliveries recorded and ${evaluated} evaluated (5 runs each); after it, evaluation caught up at ${intake.catchUpPerSecond.toFixed(0)} deliveries/s`);
  }
  if (e2e) {
    for (const [name, row] of [['1 trigger', e2e.one], ['1,000 triggers, one match', e2e.thousand]]) {
      console.log(
        `e2e intake (${name}, local agent \`true\`): accepted ${row.acceptedPerSecond.toFixed(0)}/s (${(row.acceptedPerSecond / a.rps).toFixed(2)} × (a), p99 ${row.p99} ms); ` +
          `finished ${row.finishedPerSecond.toFixed(1)} deliveries/s over burst and drain (${row.accepted} deliveries, ${row.finishedDuringBurst} finished during the burst, drain ${row.drainSeconds.toFixed(1)} s)`,
      );
    }
    console.log(`e2e 1,000 triggers / 1 trigger: accepted ${(e2e.thousand.acceptedPerSecond / e2e.one.acceptedPerSecond).toFixed(2)} ×, finished ${(e2e.thousand.finishedPerSecond / e2e.one.finishedPerSecond).toFixed(2)} ×`);
    console.log(JSON.stringify({ e2e, baselineA: a.rps }));
  }
  if (workspace) {
    const { baseline, off, on } = workspace;
    const times = ({ median, p90 }) => `median ${median} ms (${(median / baseline).toFixed(2)} ×), p90 ${p90} ms (${(p90 / baseline).toFixed(2)} ×)`;
    console.log(
      `workspace clone (a repository of ${workspace.files} files, ${workspace.kb} KB; ${workspace.runs} runs each; × plain: to \`git clone --depth 1\` of it, median ${Math.round(baseline)} ms): ` +
        `cache off ${times(off)}; cache on ${times(on)}, the run that filled it ${on.first} ms`,
    );
    console.log(JSON.stringify({ workspace }));
  }
  if (flow) {
    const plain = flow.rows.filter(([label]) => label.startsWith('plain')).map(([, row]) => row);
    const mean = (pick) => plain.reduce((sum, row) => sum + pick(row), 0) / plain.length;
    const [accepted, finished] = [mean((row) => row.acceptedPerSecond), mean((row) => row.finishedPerSecond)];
    console.log(`flow control, end to end (1,000 triggers, one match, the deliveries about 50 issues in turn, the matching job keyed by issue, agent \`${flow.agent}\`); × plain: to the mean of the plain rows`);
    for (const [label, row] of flow.rows) {
      console.log(
        `  ${label.padEnd(16)} accepted ${row.acceptedPerSecond.toFixed(0).padStart(5)}/s (${(row.acceptedPerSecond / accepted).toFixed(2)} × plain, ${(row.acceptedPerSecond / a.rps).toFixed(2)} × (a), p99 ${row.p99} ms); ` +
          `finished ${row.finishedPerSecond.toFixed(1)} deliveries/s (${(row.finishedPerSecond / finished).toFixed(2)} × plain); ${row.accepted} deliveries, ${row.runs} runs, ${row.superseded} superseded, drain ${row.drainSeconds.toFixed(1)} s`,
      );
    }
    console.log(JSON.stringify({ flow, baselineA: a.rps }));
  }
  if (retention) {
    const mean = (pruning, pick) => { const rows = retention.rows.filter((row) => row.pruning === pruning); return rows.reduce((sum, row) => sum + pick(row), 0) / rows.length; };
    const ratio = (pick) => (mean(true, pick) / mean(false, pick)).toFixed(2);
    console.log(`retention: ${retention.count.toLocaleString('en')} finished runs of 40 days ago with 6 trace events each, written in ${retention.seedSeconds.toFixed(0)} s; the end-to-end row without and while the app prunes; ${retention.left} of them left at the end`);
    for (const row of retention.rows) {
      console.log(
        `  ${(row.pruning ? 'pruning' : 'not pruning').padEnd(12)} ${row.left} old runs before; accepted ${row.acceptedPerSecond.toFixed(0)}/s (p99 ${row.p99} ms); finished ${row.finishedPerSecond.toFixed(1)} deliveries/s, drain ${row.drainSeconds.toFixed(1)} s` +
          (row.pruning ? `; pruned ${row.pruned} runs in ${(row.ms / 1000).toFixed(1)} s (${(row.pruned / (row.ms / 1000)).toFixed(0)}/s)${row.allGoneMs !== null ? `, all gone after ${(row.allGoneMs / 1000).toFixed(1)} s` : ''}` : ''),
      );
    }
    console.log(`retention: while pruning / without: accepted ${ratio((row) => row.acceptedPerSecond)} ×, finished ${ratio((row) => row.finishedPerSecond)} × (target ≥ 0.8)`);
    console.log(JSON.stringify({ retention, baselineA: a.rps }));
  }
  if (onPg) {
    const { invoke1, invoke1p, invoke2, e2e1, e2e1p, e2e2 } = onPg.rows;
    const cpu = ({ shares }) => Object.entries(shares).map(([name, value]) => `${name} ${typeof value === 'number' ? `${value}%` : value}`).join(', ');
    console.log(`pg: PostgreSQL ${new URL(PG_ADMIN_URL).host}, a fresh database per run, autovacuum ${onPg.autovacuum}; 2 instances / 1 instance on invoke, both behind the proxy: ${(invoke2.rps / invoke1p.rps).toFixed(2)} × (to 1 instance without it: ${(invoke2.rps / invoke1.rps).toFixed(2)} ×)`);
    if (onPg.autovacuum === 'off') console.log('pg: WARNING: autovacuum is off on this server: the runs\' tables are never analyzed nor cleaned, and these rows fall as they grow (docs/performance.md)');
    // Whether instances add up where the machine has no core to spare: what an invocation costs the machine.
    const perInvocation = (row) => `${((1000 * row.cpu.served) / row.answers).toFixed(1)} ms`;
    console.log(`pg CPU per invocation (the machine, but the load generator and the proxy): 1 instance ${perInvocation(invoke1)}, behind the proxy ${perInvocation(invoke1p)}, 2 instances ${perInvocation(invoke2)}`);
    for (const [name, e] of [['1 instance', e2e1], ['1 instance, proxy', e2e1p], ['2 instances, proxy', e2e2]]) {
      if (e.error) console.log(`pg e2e intake, ${name}: FAILED: ${e.error}`);
      else console.log(
        `pg e2e intake, ${name}: accepted ${e.acceptedPerSecond.toFixed(0)}/s (${(e.acceptedPerSecond / a.rps).toFixed(2)} × (a), p99 ${e.p99} ms); ` +
          `finished ${e.finishedPerSecond.toFixed(1)} deliveries/s over burst and drain (${e.accepted} deliveries, ${e.finishedDuringBurst} finished during the burst, drain ${e.drainSeconds.toFixed(1)} s)`,
      );
    }
    const ratios = (two, one) => `accepted ${(two.acceptedPerSecond / one.acceptedPerSecond).toFixed(2)} ×, finished ${(two.finishedPerSecond / one.finishedPerSecond).toFixed(2)} ×`;
    if (!e2e1p.error && !e2e2.error) console.log(`pg e2e 2 instances / 1 instance, both behind the proxy: ${ratios(e2e2, e2e1p)}${e2e1.error ? '' : ` (to 1 instance without it: ${ratios(e2e2, e2e1)})`}`);
    console.log('pg CPU during each row, % of one core (bench: the load generator; postgres: the backends of the bench database; others: the rest of the machine, other work on it included):');
    for (const [name, row] of [['invoke, 1 instance', invoke1], ['invoke, 1 behind proxy', invoke1p], ['invoke, 2 instances', invoke2], ['e2e burst, 1 instance', e2e1], ['e2e burst, 1 behind proxy', e2e1p], ['e2e burst, 2 instances', e2e2]]) if (row.cpu) console.log(`  ${name.padEnd(24)} ${cpu(row.cpu)}`);
    for (const [name, backends] of Object.entries(onPg.forwarded)) {
      if (backends) console.log(`pg proxy, ${name}: forwarded ${backends.map(({ port, forwarded, retried, failed, errors }) => `${forwarded} to :${port}${retried ? ` (${retried} sent again after a reset)` : ''}${failed ? ` (${failed} failed: ${errors.join('; ')})` : ''}`).join(', ')}`);
    }
    for (const [name, { count, messages }] of Object.entries(onPg.logs)) {
      console.log(`pg ${name}: ${count} warnings or errors logged${count ? ':' : ''}`);
      for (const [message, n] of Object.entries(messages)) console.log(`  ${n} × ${message}`);
    }
  }
  if (wanted('evaluation')) {
    const evaluation = execFileSync(process.execPath, [path.join(root, 'scripts/bench-intake-eval.mjs')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    console.log(evaluation.split('\n').filter((line) => line && !line.startsWith('{')).join('\n'));
  }
  if (wanted('agents')) {
    const agents = execFileSync(process.execPath, [path.join(root, 'scripts/bench-agent-stream.mjs')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    console.log(agents.split('\n').filter((line) => line && !line.startsWith('{')).join('\n'));
  }
  if (wanted('runs')) {
    const runs = execFileSync(process.execPath, [path.join(root, 'scripts/bench-run-start.mjs')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    console.log(runs.split('\n').filter((line) => line && !line.startsWith('{')).join('\n'));
  }
  if (wanted('spawn')) {
    const spawning = execFileSync(process.execPath, [path.join(root, 'scripts/bench-spawn.mjs')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    console.log(spawning.split('\n').filter((line) => line && !line.startsWith('{')).join('\n'));
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
