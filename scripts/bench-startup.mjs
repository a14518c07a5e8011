// `node scripts/bench-startup.mjs`: how long the built app takes to serve, and how much memory it holds idle.
// Runs dist/src/main.js as `npm start` does (build it first: `npm run build`) on a fresh embedded database in a temporary folder:
//   - first start: spawn to the first 200 from GET /readyz (this one applies the migrations);
//   - restart: SIGTERM, wait for the exit, spawn again on the same folder; the median of BENCH_RESTARTS (3) runs;
//   - idle memory: VmRSS of the last restarted process after 3 s without requests (Linux /proc).
// Also reports each process's CPU time at readiness, which other work on the machine barely moves.
// Prints a table, then one JSON line for other scripts. `measureStartup()` returns the same figures.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MAIN = path.join('dist', 'src', 'main.js');

const DEFAULTS = {
  restarts: 3,
  idleMs: 3000,
  pollMs: 20,
  /** Upper bound on one start, spawn to first 200. */
  readyTimeoutMs: 60_000,
  /** Upper bound on waiting for an exit after SIGTERM (the app allows itself 10 s), then SIGKILL. */
  stopTimeoutMs: 15_000,
};

const children = new Set();
const tempDirs = new Set();

/** Synchronous, so that it also serves from an 'exit' or signal handler. */
function cleanUp() {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  children.clear();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  tempDirs.clear();
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** One GET; resolves with the status code, or null when nothing answers yet. */
function probe(port, target, timeoutMs) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: target, agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode));
      res.once('error', () => resolve(null));
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(null));
  });
}

/**
 * The server as `npm start` runs it (without npm): the variables and node's flags its script sets, read from
 * package.json (`NAME=value … exec node <flags> dist/src/main.js`).
 */
function startCommand(root) {
  const words = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).scripts.start.split(/\s+/);
  const node = words.indexOf('node');
  const env = Object.fromEntries(words.slice(0, node).filter((word) => /^\w+=/.test(word)).map((word) => word.split('=')));
  return { env, args: [...words.slice(node + 1, -1), path.join(root, words.at(-1))] };
}

function start(root, env) {
  const startedAt = performance.now();
  const command = startCommand(root);
  const child = spawn(process.execPath, command.args, { cwd: root, env: { ...env, ...command.env }, stdio: ['ignore', 'ignore', 'pipe'] });
  children.add(child);
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
    child.once('error', (err) => {
      children.delete(child);
      resolve({ code: null, signal: null, error: err });
    });
  });
  return { child, startedAt, exited, stderr: () => stderr.trim() };
}

/**
 * CPU time the process (and the children it waited for, e.g. the migration CLI) has used, in ms, from
 * /proc/<pid>/stat; null elsewhere. Unlike wall time it barely moves when other work shares the machine.
 */
function cpuMsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[11..14] are utime, stime, cutime, cstime in clock ticks (USER_HZ, 100 on Linux).
    return fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) * 10;
  } catch {
    return null;
  }
}

/** Milliseconds from spawn to the first 200 from /readyz, and the CPU time used by then. */
async function timeToReady(proc, port, { pollMs, readyTimeoutMs }) {
  let exit = null;
  proc.exited.then((e) => (exit = e));
  const attempts = Math.ceil(readyTimeoutMs / pollMs);
  for (let i = 0; i < attempts; i++) {
    if (exit) throw new Error(`the server exited before it was ready (code ${exit.code}, signal ${exit.signal})${exit.error ? `: ${exit.error.message}` : ''}\n${proc.stderr()}`);
    const status = await probe(port, '/readyz', 2000);
    if (status === 200) return { ms: performance.now() - proc.startedAt, cpuMs: cpuMsOf(proc.child.pid) };
    if (performance.now() - proc.startedAt > readyTimeoutMs) break;
    await sleep(pollMs);
  }
  throw new Error(`no 200 from /readyz within ${readyTimeoutMs} ms\n${proc.stderr()}`);
}

async function stop(proc, { stopTimeoutMs }) {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return proc.exited;
  proc.child.kill('SIGTERM');
  const timeout = sleep(stopTimeoutMs).then(() => null);
  const exit = await Promise.race([proc.exited, timeout]);
  if (exit) return exit;
  proc.child.kill('SIGKILL');
  return Promise.race([proc.exited, sleep(5000).then(() => ({ code: null, signal: 'SIGKILL (no exit seen)' }))]);
}

/** Resident and peak resident set of a process in MB, from /proc (null elsewhere). */
function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
    const mb = (v) => (Number.isFinite(v) ? Math.round((v / 1024) * 10) / 10 : null);
    return { rssMb: mb(kb('VmRSS')), peakRssMb: mb(kb('VmHWM')) };
  } catch {
    return { rssMb: null, peakRssMb: null };
  }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const round = (ms) => Math.round(ms);

/**
 * Measures the built app's start-up. Resolves with
 * { firstStartMs, restartMs: number[], restartMedianMs, firstStartCpuMs, restartCpuMedianMs, idleRssMb, peakRssMb,
 *   firstStartPeakRssMb, idleMs, cleanExit, node, platform, cpus, loadAverage }. Times are wall ms from spawn to the
 * first 200 from /readyz; the CPU figures are the process's user+system time at that moment.
 * Throws when dist/src/main.js is missing or a start fails; child processes and the temporary folder are
 * removed whatever happens.
 */
export async function measureStartup(options = {}) {
  const opts = { ...DEFAULTS, ...options };
  const root = opts.root ?? ROOT;
  if (!existsSync(path.join(root, MAIN))) throw new Error(`${path.join(root, MAIN)} does not exist: run \`npm run build\` first`);
  if (!(opts.restarts >= 1)) throw new Error('restarts must be at least 1');

  const dir = mkdtempSync(path.join(os.tmpdir(), 'flows-bench-startup-'));
  tempDirs.add(dir);
  const port = await freePort();
  const env = {
    ...process.env,
    DATABASE_URL: `file:${path.join(dir, 'flows.db')}`,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    FLOWS_SECRET_KEY: randomBytes(32).toString('hex'),
  };
  // Measure the defaults, whatever this shell has set.
  for (const name of ['BASE_URL', 'FLOWS_MIGRATE_ON_START', 'FLOWS_BOOTSTRAP_OWNER_EMAIL', 'FLOWS_BOOTSTRAP_OWNER_PASSWORD', 'TRUST_PROXY', 'FLOWS_SIGNUP']) delete env[name];

  let proc = null;
  try {
    proc = start(root, env);
    const first = await timeToReady(proc, port, opts);
    const firstStartMemory = memoryOf(proc.child.pid);
    await stop(proc, opts);

    const restarts = [];
    for (let i = 0; i < opts.restarts; i++) {
      proc = start(root, env);
      restarts.push(await timeToReady(proc, port, opts));
      if (i < opts.restarts - 1) await stop(proc, opts);
    }
    await sleep(opts.idleMs);
    const idle = memoryOf(proc.child.pid);
    const exit = await stop(proc, opts);
    proc = null;

    return {
      firstStartMs: round(first.ms),
      restartMs: restarts.map((r) => round(r.ms)),
      restartMedianMs: round(median(restarts.map((r) => r.ms))),
      firstStartCpuMs: first.cpuMs,
      restartCpuMedianMs: restarts.some((r) => r.cpuMs === null) ? null : round(median(restarts.map((r) => r.cpuMs))),
      idleRssMb: idle.rssMb,
      peakRssMb: idle.peakRssMb,
      firstStartPeakRssMb: firstStartMemory.peakRssMb,
      idleMs: opts.idleMs,
      cleanExit: exit?.code === 0,
      node: process.version,
      platform: `${os.platform()}-${os.arch()}`,
      cpus: os.cpus().length,
      loadAverage: Math.round(os.loadavg()[0] * 100) / 100,
    };
  } finally {
    if (proc) await stop(proc, opts).catch(() => {});
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    tempDirs.delete(dir);
  }
}

function printTable(r) {
  const row = (name, value) => `${name.padEnd(38)} ${value}`;
  console.log(`Start-up of ${MAIN}, embedded SQLite, ${r.node} on ${r.platform} (${r.cpus} CPUs)`);
  const cpu = (ms) => (ms === null ? '' : `   CPU ${ms} ms`);
  console.log(row('first start (fresh database, migrates)', `${r.firstStartMs} ms${cpu(r.firstStartCpuMs)}`));
  console.log(row(`restart, median of ${r.restartMs.length}`, `${r.restartMedianMs} ms${cpu(r.restartCpuMedianMs)}   (${r.restartMs.join(', ')} ms)`));
  console.log(row(`idle RSS after restart (${r.idleMs / 1000} s idle)`, r.idleRssMb === null ? 'n/a (no /proc)' : `${r.idleRssMb} MB`));
  console.log(row('peak RSS of that process', r.peakRssMb === null ? 'n/a' : `${r.peakRssMb} MB`));
  if (r.loadAverage > r.cpus * 0.5) console.log(row('note', `load average ${r.loadAverage} on ${r.cpus} CPUs: wall times include waiting for the CPU`));
  const met = (ok) => (ok ? 'met' : 'NOT met');
  console.log(row('targets', `first start ≤ 1500 ms: ${met(r.firstStartMs <= 1500)}; restart ≤ 1000 ms: ${met(r.restartMedianMs <= 1000)}; idle RSS ≤ 150 MB: ${met(r.idleRssMb !== null && r.idleRssMb <= 150)}`));
}

const invokedDirectly = (() => {
  try {
    return Boolean(process.argv[1]) && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
  } catch {
    return false;
  }
})();

if (invokedDirectly) {
  if (!existsSync(path.join(ROOT, MAIN))) {
    console.error(`${path.join(ROOT, MAIN)} does not exist: run \`npm run build\` first.`);
    process.exit(1);
  }
  const onSignal = (signal) => {
    cleanUp();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.once('exit', cleanUp);
  const restarts = Number(process.env.BENCH_RESTARTS ?? DEFAULTS.restarts);
  measureStartup({ restarts }).then(
    (result) => {
      printTable(result);
      console.log(JSON.stringify({ bench: 'startup', ...result }));
    },
    (err) => {
      console.error(err instanceof Error ? err.message : err);
      process.exitCode = 1;
    },
  );
}
