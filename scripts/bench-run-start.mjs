// `node scripts/bench-run-start.mjs`: how long a run takes from being handed to its executor to the agent's
// first line of output, per target kind: the local agent unsandboxed (the baseline), sandboxed with
// bubblewrap without a network and with its egress proxy (the default: the proxy's socket, the bridge in the
// sandbox, the control group), and in a Docker container (a cold start: a container is created, started and attached for
// every run). The executors are built from dist/ (run `npm run build` first) and driven in process, the
// kinds alternating run by run, BENCH_RUN_STARTS (40) runs each. The agent is `echo ready`. Docker is
// measured when a daemon answers and has BENCH_DOCKER_IMAGE (flows-test/busybox:1, which the Docker tests
// make). Prints one line per kind (p50, p90, the sandbox's cost over the baseline), then one JSON line.
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { dist } from './bench-app.mjs';

const RUNS = Number(process.env.BENCH_RUN_STARTS ?? 40);
const IMAGE = process.env.BENCH_DOCKER_IMAGE ?? 'flows-test/busybox:1';
const { createLocalExecutor } = dist('src/integrations/local-executor.js');
const { createDockerExecutor } = dist('src/integrations/docker-executor.js');
const { dockerClient } = dist('src/integrations/docker-client.js');

const agent = { command: 'echo ready', timeoutSeconds: 60 };
const kinds = {
  'local, unsandboxed': createLocalExecutor({ ...agent, sandbox: 'off' }),
  'local, sandboxed, no network': createLocalExecutor({ ...agent, sandbox: 'bubblewrap', network: 'none' }),
  'local, sandboxed with its egress proxy (the default)': createLocalExecutor({ ...agent, sandbox: 'bubblewrap' }),
};
const dockerUsable = (() => {
  try {
    execFileSync('docker', ['image', 'inspect', IMAGE], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
if (dockerUsable) {
  const settings = { image: IMAGE, command: 'echo ready', cpus: 1, memoryMb: 256, pids: 64, network: 'none' };
  kinds['docker (cold container)'] = createDockerExecutor({ docker: dockerClient('unix:///var/run/docker.sock'), instanceId: 'inst_bench', allowedImages: [IMAGE], settingsOf: async () => settings });
}

/** Milliseconds from `start` to the first output line; the run is then waited for (the container removed). */
async function firstOutput(executor, n) {
  let first;
  const seen = new Promise((resolve) => (first = resolve));
  const started = performance.now();
  const spec = { tenantId: 't', targetId: 'x', runId: `run_bench${n}`, jobSlug: 'bench', prompt: '', model: null, effort: null, timeoutSeconds: 60, env: {} };
  const execution = await executor.start(spec, { output: () => first(performance.now() - started), provisioning: () => {}, sandbox: () => {} });
  const ms = await Promise.race([seen, execution.done.then((outcome) => Promise.reject(new Error(`no output: ${JSON.stringify(outcome)}`)))]);
  const outcome = await execution.done;
  if (outcome.state !== 'succeeded') throw new Error(`the run ${outcome.state}: ${outcome.error}`);
  return ms;
}

const quantile = (values, q) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))];
const times = Object.fromEntries(Object.keys(kinds).map((kind) => [kind, []]));
for (const [kind, executor] of Object.entries(kinds)) await firstOutput(executor, -1); // warm-up: the sandbox probe, the image
for (let i = 0; i < RUNS; i++) for (const [kind, executor] of Object.entries(kinds)) times[kind].push(await firstOutput(executor, i));

const baseline = quantile(times['local, unsandboxed'], 0.5);
const rows = Object.entries(times).map(([kind, ms]) => ({ kind, p50: quantile(ms, 0.5), p90: quantile(ms, 0.9) }));
for (const { kind, p50, p90 } of rows) {
  console.log(`run start to first output, ${kind}: p50 ${p50.toFixed(1)} ms, p90 ${p90.toFixed(1)} ms (${(p50 / baseline).toFixed(2)} × unsandboxed, +${(p50 - baseline).toFixed(1)} ms)`);
}
if (!dockerUsable) console.log(`docker: not measured (no daemon, or no image ${IMAGE}; the Docker tests make it)`);
console.log(JSON.stringify({ runs: RUNS, rows }));
