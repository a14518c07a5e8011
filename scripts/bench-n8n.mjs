// `node scripts/bench-n8n.mjs`: the peer baseline for intake, n8n's webhook executions a second measured
// on this machine, to set beside the `intake` row of `npm run bench` in the same sitting. n8n is not a
// dependency of the project: BENCH_N8N_VERSION (1.123.81, the newest 1.x that runs on Node 20) is
// installed once into BENCH_N8N_DIR (~/.cache/flows-bench/n8n). It runs as one main process ("regular"
// mode) on loopback with a fresh user folder, its default SQLite database and every successful execution
// saved (Flows records every delivery and run, so saving is what is compared), and one active workflow:
// a Webhook node answering at once, an IF on the body's `label.name == "agent"`, a no-op. After a warm-up,
// autocannon POSTs distinct GitHub `issues.labeled` bodies of about 5 KB for BENCH_DURATION (20) seconds
// on BENCH_CONNECTIONS (32); the bench then waits until the executions are saved and reads n8n's database.
// Executions a second = executions saved ÷ the time from the first request to the last execution's end.
// BENCH_N8N_SQLITE_POOL_SIZE sets n8n's DB_SQLITE_POOL_SIZE: n8n 1.x's default, 0, is one connection in
// rollback-journal mode (deprecated by n8n); above 0, a writer and that many readers in WAL mode.
// Prints one line, then one JSON line.
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3');

const VERSION = process.env.BENCH_N8N_VERSION ?? '1.123.81';
const DIR = path.resolve(process.env.BENCH_N8N_DIR ?? path.join(os.homedir(), '.cache/flows-bench/n8n'));
const DURATION = Number(process.env.BENCH_DURATION ?? 20);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const POOL_SIZE = process.env.BENCH_N8N_SQLITE_POOL_SIZE;
/** Seconds before autocannon gives up on an answer: long, so that a slow answer is measured, not dropped. */
const TIMEOUT = 30;
const WARM_UP_REQUESTS = 200;
const WEBHOOK_PATH = 'flows-bench-intake';
const WORKFLOW_ID = 'flowsBenchIntake1';
/** Statuses of an execution that has not ended. */
const OPEN = `('new', 'running', 'waiting', 'unknown')`;

const n8nBin = path.join(DIR, 'node_modules/n8n/bin/n8n');
const sqliteBinding = path.join(DIR, 'node_modules/sqlite3/build/Release/node_sqlite3.node');
const children = new Set();
/** Temporary user folders, removed on every way out. */
const folders = new Set();

/** npm's own variables, set when this runs under `npm run`, would point the nested npm at the project. */
const cleanEnv = () => Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.toLowerCase().startsWith('npm_')));

function run(command, args, options) {
  const result = spawnSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'], env: cleanEnv(), ...options });
  if (result.error) throw result.error;
  return result.status;
}

function installedVersion() {
  try {
    return existsSync(sqliteBinding) ? JSON.parse(readFileSync(path.join(DIR, 'node_modules/n8n/package.json'), 'utf8')).version : undefined;
  } catch {
    return undefined;
  }
}

/** Installs n8n into DIR unless that version is there already; answers how long it took (0 when it was there). */
function install() {
  if (installedVersion() === VERSION) return 0;
  const started = Date.now();
  mkdirSync(DIR, { recursive: true });
  // n8n-nodes-base names xlsx by a tarball address off the npm registry, unreachable here: the registry's
  // last xlsx serves the same node (Spreadsheet File, unused by the bench).
  const manifest = { name: 'flows-bench-n8n', private: true, dependencies: { n8n: VERSION }, overrides: { xlsx: '0.18.5' } };
  writeFileSync(path.join(DIR, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  console.error(`installing n8n@${VERSION} into ${DIR} (a few minutes, once)`);
  // No install scripts: isolated-vm 6 (n8n's `vm` expression engine) does not build on Node 20, and the
  // others are optional natives, prebuilt downloads, or a telemetry ping.
  const npmArgs = ['--prefix', DIR, '--no-audit', '--no-fund', '--loglevel=error'];
  if (run('npm', ['install', '--ignore-scripts', ...npmArgs], { cwd: DIR }) !== 0) {
    throw new Error(`could not install n8n@${VERSION} into ${DIR}: npm install failed (above); it needs the npm registry`);
  }
  // sqlite3's prebuilt binary comes from outside the registry; it falls back to building from source.
  if (run('npm', ['rebuild', 'sqlite3', ...npmArgs], { cwd: DIR }) !== 0 || !existsSync(sqliteBinding)) {
    throw new Error(`could not build sqlite3 for n8n in ${DIR} (above): building it from source needs python3, make and g++ (apt-get install -y python3 make g++)`);
  }
  return Date.now() - started;
}

/** n8n's settings: loopback, nothing sent home, executions kept (none pruned), the expression engine that runs on Node 20. */
function n8nEnv(userFolder, port) {
  return {
    ...cleanEnv(),
    N8N_USER_FOLDER: userFolder,
    N8N_LISTEN_ADDRESS: '127.0.0.1',
    N8N_HOST: '127.0.0.1',
    N8N_PORT: String(port),
    DB_TYPE: 'sqlite',
    ...(POOL_SIZE !== undefined ? { DB_SQLITE_POOL_SIZE: POOL_SIZE } : {}),
    EXECUTIONS_MODE: 'regular',
    EXECUTIONS_DATA_SAVE_ON_SUCCESS: 'all',
    EXECUTIONS_DATA_SAVE_ON_ERROR: 'all',
    EXECUTIONS_DATA_PRUNE: 'false',
    // The `vm` engine, the default since 1.123.66, needs isolated-vm 6, which needs Node 22; `legacy` was the
    // only engine before and is the cheaper one, so n8n's figure is if anything flattered.
    N8N_EXPRESSION_ENGINE: 'legacy',
    N8N_DIAGNOSTICS_ENABLED: 'false',
    N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
    N8N_VERSION_NOTIFICATIONS_WHATS_NEW_ENABLED: 'false',
    N8N_PERSONALIZATION_ENABLED: 'false',
    N8N_TEMPLATES_ENABLED: 'false',
    N8N_DYNAMIC_BANNERS_ENABLED: 'false',
    N8N_HIRING_BANNER_ENABLED: 'false',
    N8N_LICENSE_AUTO_RENEW_ENABLED: 'false',
    N8N_AI_ENABLED: 'false',
    N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'true',
    N8N_BLOCK_ENV_ACCESS_IN_NODE: 'true',
    N8N_GIT_NODE_DISABLE_BARE_REPOS: 'true',
    N8N_LOG_LEVEL: 'warn',
  };
}

const workflow = {
  id: WORKFLOW_ID,
  name: 'Flows bench intake',
  active: false,
  settings: { executionOrder: 'v1' },
  nodes: [
    {
      id: 'webhook',
      name: 'Webhook',
      type: 'n8n-nodes-base.webhook',
      typeVersion: 2,
      position: [0, 0],
      webhookId: '6f1c0f47-8a77-4a53-9f53-7d0e4b3c1a01',
      parameters: { httpMethod: 'POST', path: WEBHOOK_PATH, responseMode: 'onReceived', options: {} },
    },
    {
      id: 'if',
      name: 'Label is agent',
      type: 'n8n-nodes-base.if',
      typeVersion: 2.2,
      position: [220, 0],
      parameters: {
        conditions: {
          options: { caseSensitive: true, leftValue: '', typeValidation: 'strict', version: 2 },
          conditions: [{ id: 'label', leftValue: '={{ $json.body.label.name }}', rightValue: 'agent', operator: { type: 'string', operation: 'equals' } }],
          combinator: 'and',
        },
        options: {},
      },
    },
    { id: 'matched', name: 'Matched', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [440, -80], parameters: {} },
  ],
  connections: {
    Webhook: { main: [[{ node: 'Label is agent', type: 'main', index: 0 }]] },
    'Label is agent': { main: [[{ node: 'Matched', type: 'main', index: 0 }], []] },
  },
};

/** Output kept from a child, for the error when it fails; `output.locked` counts SQLite's lock errors in it. */
function captured(child) {
  let tail = '';
  const output = () => tail;
  output.locked = 0;
  const keep = (chunk) => {
    output.locked += String(chunk).match(/SQLITE_BUSY|database is locked/g)?.length ?? 0;
    tail = (tail + chunk).slice(-4000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  return output;
}

/** Runs one n8n CLI command to its end. */
function n8nCommand(args, env) {
  const child = spawn(process.execPath, [n8nBin, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const output = captured(child);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      children.delete(child);
      // update:workflow logs its failures and still exits 0: its effect is checked in the database.
      if (code === 0) resolve(output());
      else reject(new Error(`n8n ${args[0]} exited with ${code}:\n${output()}`));
    });
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let sent = 0;
const label = (id, name, color) => ({ id, node_id: `LA_${id}`, url: `https://api.github.example/repos/acme/widgets/labels/${name}`, name, color, default: false, description: null });
const user = (login, id) => ({
  login,
  id,
  node_id: `MDQ6VXNlcj${id}`,
  avatar_url: `https://avatars.github.example/u/${id}?v=4`,
  url: `https://api.github.example/users/${login}`,
  html_url: `https://github.example/${login}`,
  repos_url: `https://api.github.example/users/${login}/repos`,
  events_url: `https://api.github.example/users/${login}/events{/privacy}`,
  type: 'User',
  site_admin: false,
});

/** A GitHub `issues.labeled` delivery of about 5 KB, its own issue number and delivery id each time. */
function delivery() {
  const n = ++sent;
  const issueUrl = `https://api.github.example/repos/acme/widgets/issues/${n}`;
  const body = {
    action: 'labeled',
    issue: {
      url: issueUrl,
      repository_url: 'https://api.github.example/repos/acme/widgets',
      labels_url: `${issueUrl}/labels{/name}`,
      comments_url: `${issueUrl}/comments`,
      events_url: `${issueUrl}/events`,
      html_url: `https://github.example/acme/widgets/issues/${n}`,
      id: 2_000_000_000 + n,
      node_id: `I_kwDOBench${n}`,
      number: n,
      title: 'Saving a draft twice crashes the editor',
      user: user('octocat', 583231),
      labels: [label(1001, 'bug', 'd73a4a'), label(1002, 'agent', 'ededed')],
      state: 'open',
      locked: false,
      assignee: null,
      assignees: [],
      milestone: null,
      comments: 0,
      created_at: '2026-11-23T08:20:11Z',
      updated_at: '2026-11-23T08:21:53Z',
      closed_at: null,
      author_association: 'MEMBER',
      body: 'Steps to reproduce: open a draft, press save twice in a row, and the editor stops answering. '.repeat(18),
    },
    label: label(1002, 'agent', 'ededed'),
    repository: {
      id: 1296269,
      node_id: 'MDEwOlJlcG9zaXRvcnkxMjk2MjY5',
      name: 'widgets',
      full_name: 'acme/widgets',
      private: true,
      owner: user('acme', 9919),
      html_url: 'https://github.example/acme/widgets',
      url: 'https://api.github.example/repos/acme/widgets',
      default_branch: 'main',
      visibility: 'private',
      open_issues_count: 42,
    },
    organization: { login: 'acme', id: 9919, url: 'https://api.github.example/orgs/acme' },
    sender: user('octocat', 583231),
  };
  return {
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', 'x-github-event': 'issues', 'x-github-delivery': randomUUID(), 'user-agent': 'GitHub-Hookshot/bench' },
  };
}

/** autocannon options that send a new delivery on every request. */
const load = (port) => ({
  url: `http://127.0.0.1:${port}/webhook/${WEBHOOK_PATH}`,
  method: 'POST',
  requests: [
    {
      setupRequest: (req) => {
        const own = delivery();
        return { ...req, headers: { ...req.headers, ...own.headers }, body: own.body };
      },
    },
  ],
  connections: CONNECTIONS,
  timeout: TIMEOUT,
});

/** Resolves once the webhook answers 200 (the workflow is active; that one is an execution), or fails when n8n exits or takes 90 s. */
async function webhookReady(port, child, output) {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`n8n exited (${child.exitCode ?? child.signalCode}) before its webhook answered:\n${output()}`);
    try {
      const { body, headers } = delivery();
      const res = await fetch(`http://127.0.0.1:${port}/webhook/${WEBHOOK_PATH}`, { method: 'POST', headers, body });
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  throw new Error(`n8n's webhook did not answer 200 within 90 s:\n${output()}`);
}

/** SQLite's `YYYY-MM-DD HH:MM:SS.mmm`, which n8n writes in UTC, as epoch milliseconds. */
const utc = (text) => (text ? Date.parse(`${text.replace(' ', 'T')}Z`) : NaN);

/**
 * Resolves once the executions after id `after` have ended, with `expected` of them saved (the answer
 * comes before the row) or their count still for 5 s; answers their count, the failed ones and when the
 * last one ended.
 */
async function executionsSettled(dbFile, after, expected, { timeoutMs = 300_000 } = {}) {
  const db = new Database(dbFile, { readonly: true, fileMustExist: true, timeout: 5_000 });
  try {
    const query = db.prepare(
      `SELECT count(*) AS saved, count(CASE WHEN status IN ${OPEN} THEN 1 END) AS open, ` +
        `count(CASE WHEN status NOT IN ${OPEN} AND status != 'success' THEN 1 END) AS failed, max(stoppedAt) AS lastStopped ` +
        'FROM execution_entity WHERE id > ?',
    );
    const deadline = Date.now() + timeoutMs;
    let still = { saved: -1, since: Date.now() };
    for (;;) {
      const now = query.get(after);
      if (now.open === 0 && now.saved >= expected) return now;
      if (now.saved !== still.saved || now.open !== 0) still = { saved: now.saved, since: Date.now() };
      else if (Date.now() - still.since > 5_000) return now;
      if (Date.now() > deadline) throw new Error(`n8n did not end its executions within ${timeoutMs / 1000} s (${now.saved} saved, ${now.open} open)`);
      // Rare polls: the default SQLite driver has one connection, and every read holds the file a moment.
      await sleep(250);
    }
  } finally {
    db.close();
  }
}

const lastId = (dbFile) => {
  const db = new Database(dbFile, { readonly: true, fileMustExist: true, timeout: 5_000 });
  try {
    return db.prepare('SELECT coalesce(max(id), 0) AS id FROM execution_entity').get().id;
  } finally {
    db.close();
  }
};

/** A process's peak resident memory in MB, from Linux's /proc (undefined elsewhere). */
function peakRss(pid) {
  try {
    const kb = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
    return Math.round(kb / 1024);
  } catch {
    return undefined;
  }
}

/** Stops a child and waits for its exit, killing it if it takes more than 15 s. */
function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

async function measure(installMs) {
  const userFolder = mkdtempSync(path.join(os.tmpdir(), 'flows-bench-n8n-'));
  folders.add(userFolder);
  try {
    const port = await freePort();
    const env = n8nEnv(userFolder, port);
    const workflowFile = path.join(userFolder, 'workflow.json');
    writeFileSync(workflowFile, JSON.stringify(workflow));
    await n8nCommand(['import:workflow', `--input=${workflowFile}`], env);
    await n8nCommand(['update:workflow', `--id=${WORKFLOW_ID}`, '--active=true'], env);
    const dbFile = path.join(userFolder, '.n8n/database.sqlite');
    if (!existsSync(dbFile)) throw new Error(`n8n import:workflow made no database at ${dbFile}`);
    {
      const db = new Database(dbFile, { readonly: true, fileMustExist: true });
      const row = db.prepare('SELECT active FROM workflow_entity WHERE id = ?').get(WORKFLOW_ID);
      db.close();
      if (!row?.active) throw new Error('n8n did not import and activate the workflow');
    }

    const loadBefore = os.loadavg()[0];
    const startedAt = Date.now();
    const child = spawn(process.execPath, [n8nBin, 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    const output = captured(child);
    child.once('exit', () => children.delete(child));
    await webhookReady(port, child, output);
    const startMs = Date.now() - startedAt;

    // Warm-up: routes, node types and the IF's expression compiled, JIT settled; then an idle n8n.
    const warmUp = await autocannon({ ...load(port), amount: WARM_UP_REQUESTS });
    await executionsSettled(dbFile, 0, 1 + warmUp['2xx']);
    const before = lastId(dbFile);

    const result = await autocannon({ ...load(port), duration: DURATION });
    const accepted = result['2xx'];
    const settled = await executionsSettled(dbFile, before, accepted);
    const peakRssMb = peakRss(child.pid);
    await stop(child);

    const first = result.start.getTime();
    const burstEnd = result.finish.getTime();
    const lastEnd = utc(settled.lastStopped);
    if (!(lastEnd > first - 1_000)) throw new Error(`n8n's last execution ended at ${settled.lastStopped}, before the load began: clocks or time zone disagree`);
    const db = new Database(dbFile, { readonly: true, fileMustExist: true });
    const duringBurst = db.prepare('SELECT stoppedAt FROM execution_entity WHERE id > ?').all(before).filter((r) => utc(r.stoppedAt) <= burstEnd).length;
    const journalMode = db.pragma('journal_mode', { simple: true });
    db.close();
    const spanMs = Math.max(lastEnd, burstEnd) - first;
    return {
      bench: 'n8n',
      n8n: VERSION,
      node: process.version,
      cpus: os.cpus().length,
      // The machine's load before n8n started: other work on a shared machine moves the figures.
      loadBefore: Number(loadBefore.toFixed(2)),
      mode: 'regular, main process only',
      sqlitePoolSize: POOL_SIZE === undefined ? 'default (0)' : Number(POOL_SIZE),
      journalMode,
      expressionEngine: 'legacy',
      connections: CONNECTIONS,
      durationS: DURATION,
      bodyBytes: Buffer.byteLength(delivery().body),
      installMs,
      startMs,
      requests: result.requests.total,
      accepted,
      acceptedPerSecond: Math.round(result.requests.average),
      p99Ms: result.latency.p99,
      rejected: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      executions: settled.saved,
      failedExecutions: settled.failed,
      lockErrors: output.locked,
      missingExecutions: Math.max(0, accepted - settled.saved),
      executionsPerSecond: Math.round((settled.saved / spanMs) * 1000),
      duringBurstPerSecond: Math.round((duringBurst / (burstEnd - first)) * 1000),
      drainMs: Math.max(0, lastEnd - burstEnd),
      spanMs,
      peakRssMb,
    };
  } finally {
    await Promise.all([...children].map(stop));
    rmSync(userFolder, { recursive: true, force: true });
  }
}

function describe(r) {
  const problems = [r.rejected && `${r.rejected} non-2xx`, r.errors && `${r.errors} errors`, r.failedExecutions && `${r.failedExecutions} failed executions`, r.missingExecutions && `${r.missingExecutions} accepted but not saved`, r.lockErrors && `${r.lockErrors} SQLite lock errors in n8n's log`].filter(Boolean);
  return (
    `n8n ${r.n8n} (${r.mode}, SQLite pool ${r.sqlitePoolSize}, ${r.journalMode} journal), ${r.connections} connections, ${r.durationS} s of ${r.bodyBytes}-byte deliveries, load ${r.loadBefore} before: ` +
    `accepted ${r.acceptedPerSecond} req/s (p99 ${r.p99Ms} ms, ${r.accepted} answers 200); ` +
    `saved ${r.executions} executions, ${r.executionsPerSecond}/s from the first request to the last execution's end ` +
    `(${r.duringBurstPerSecond}/s during the burst, drain ${(r.drainMs / 1000).toFixed(1)} s); peak RSS ${r.peakRssMb} MB` +
    (problems.length ? `; ${problems.join(', ')}` : '')
  );
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    for (const child of children) child.kill('SIGKILL');
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
    process.exit(130);
  });
}

try {
  if (POOL_SIZE !== undefined && !/^\d+$/.test(POOL_SIZE)) throw new Error(`BENCH_N8N_SQLITE_POOL_SIZE must be a whole number, not ${POOL_SIZE}`);
  const installMs = install();
  const result = await measure(installMs);
  console.log(describe(result));
  console.log(JSON.stringify(result));
} catch (err) {
  for (const child of children) child.kill('SIGKILL');
  console.error(`bench-n8n: ${err.message}`);
  process.exitCode = 1;
}
