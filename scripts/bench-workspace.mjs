// The `workspace` row of `npm run bench`: what cloning a run's repository costs, with the repository cache
// off and on. A GitHub on loopback (test/support/fake-github-server.ts) serves a small repository; the
// baseline is a plain `git clone --depth 1` of it from the same server, in the same run. Each run's clone is
// the `durationMs` of its `cloned` trace event (the remote's heads, the fetch, the checkout, the agent's copy
// of the git folder); the agent changes nothing, so nothing is pushed.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';

const percentile = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil((p / 100) * values.length) - 1)];

/** The fake GitHub in a process of its own, with bench/small made; resolves to its JSON line and the child. */
function startGithub(root, files, bytes) {
  const child = spawn(process.execPath, ['-r', path.join(root, 'test/support/register-ts.js'), path.join(root, 'test/support/fake-github-server.ts'), String(files), String(bytes)], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve({ ...JSON.parse(line), child });
    });
    child.once('exit', (code) => reject(new Error(`the fake GitHub exited with ${code}`)));
  });
}

/** Milliseconds of a plain shallow clone of the repository, as git alone does it. */
function plainClone(github, dir) {
  const target = path.join(dir, `plain-${Math.random().toString(36).slice(2)}`);
  const header = `Authorization: Basic ${Buffer.from(`x-access-token:${github.token}`).toString('base64')}`;
  const began = process.hrtime.bigint();
  execFileSync('git', ['-c', `http.extraHeader=${header}`, 'clone', '-q', '--depth', '1', '--no-tags', `${github.url}/bench/small.git`, target], { stdio: 'ignore', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } });
  const ms = Number(process.hrtime.bigint() - began) / 1e6;
  rmSync(target, { recursive: true, force: true });
  return ms;
}

async function api(base, bearer, method, route, body) {
  const res = await fetch(`${base}${route}`, { method, headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${route} answered ${res.status}: ${text}`);
  return text ? JSON.parse(text) : null;
}

/** The clone times of `runs` runs, one after another, on a server started by `startServer` with `env`. */
async function cloneTimes({ startServer, stop, github, dir, env, runs }) {
  const server = await startServer('app-agent', dir, { env: { BENCH_AGENT_COMMAND: 'cat >/dev/null', BENCH_ENV: JSON.stringify({ FLOWS_ALLOW_PRIVATE_NETWORK: 'true', ...env }) } });
  try {
    const base = `http://127.0.0.1:${server.port}`;
    const app = await api(base, server.bearer, 'POST', '/api/v1/github-apps', { name: 'Bench', appId: github.appId, privateKey: github.privateKey, apiBaseUrl: github.apiBaseUrl });
    const job = await api(base, server.bearer, 'POST', '/api/v1/jobs', { name: 'Clone', promptTemplate: 'nothing', executionTargetId: 'local', workspace: { repository: 'bench/small', githubAppId: app.id, changes: 'patch-only' } });
    const times = [];
    for (let i = 0; i < runs; i++) {
      const { runId } = await api(base, server.bearer, 'POST', `/api/v1/jobs/${job.id}/invocations`, {});
      let run;
      for (let tries = 0; tries < 600; tries++) {
        run = await api(base, server.bearer, 'GET', `/api/v1/runs/${runId}`);
        if (['succeeded', 'failed', 'timed_out', 'canceled'].includes(run.state)) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      if (run.state !== 'succeeded') throw new Error(`run ${runId} ended ${run.state}: ${run.error}`);
      const trace = await api(base, server.bearer, 'GET', `/api/v1/runs/${runId}/trace?limit=100`);
      const cloned = trace.find((event) => event.type === 'workspace' && event.data.step === 'cloned');
      times.push(cloned.data.durationMs);
    }
    // The first run fills the cache: it is shown apart, and left out of the figures of the cache on.
    return times;
  } finally {
    await stop(server.child);
  }
}

export async function measureWorkspace({ root, dir, startServer, stop, runs = Number(process.env.BENCH_WORKSPACE_RUNS ?? 20), files = Number(process.env.BENCH_WORKSPACE_FILES ?? 200), bytes = 2000 }) {
  const github = await startGithub(root, files, bytes);
  const work = mkdtempSync(path.join(dir, 'workspace-'));
  try {
    const plain = Array.from({ length: Math.max(5, Math.round(runs / 2)) }, () => plainClone(github, work));
    const off = await cloneTimes({ startServer, stop, github, dir: mkdtempSync(path.join(dir, 'ws-off-')), env: { FLOWS_REPOSITORY_CACHE_MB: '0' }, runs });
    const cacheDir = mkdtempSync(path.join(dir, 'ws-cache-'));
    const on = await cloneTimes({ startServer, stop, github, dir: mkdtempSync(path.join(dir, 'ws-on-')), env: { FLOWS_REPOSITORY_CACHE_MB: '256', FLOWS_REPOSITORY_CACHE_DIR: cacheDir }, runs: runs + 1 });
    const baseline = percentile(plain, 50);
    const figures = (times) => ({ median: percentile(times, 50), p90: percentile(times, 90) });
    return { files, kb: Math.round((files * bytes) / 1024), runs, baseline, off: figures(off), on: { ...figures(on.slice(1)), first: on[0] } };
  } finally {
    github.child.kill('SIGTERM');
    rmSync(work, { recursive: true, force: true });
  }
}
