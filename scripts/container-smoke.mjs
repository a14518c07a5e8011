// Drives a running Flows from outside, as a first user would: signs in as an owner, creates a job (on the
// local target unless `--no-target`), invokes it and waits for its run, then reads the run back through a second address when
// given (another instance). CI runs it against the container image and the compose file.
//   node scripts/container-smoke.mjs --url URL [--via URL] [--read-url URL] --email EMAIL --password PASSWORD [--expect STATE] [--run ID] [--no-target]
// `--url` is the server's BASE_URL (its same-origin checks compare against it); `--via` another address of
// it; `--run` reads a run made before instead of making one (data kept over a restart). The run's id is
// the last line printed.
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { url: { type: 'string' }, 'read-url': { type: 'string' }, email: { type: 'string' }, password: { type: 'string' }, expect: { type: 'string', default: 'succeeded' }, via: { type: 'string' }, run: { type: 'string' }, 'no-target': { type: 'boolean' } },
});
const { url, email, password } = values;
if (!url || !email || !password) {
  console.error('usage: node scripts/container-smoke.mjs --url URL [--via URL] [--read-url URL] --email EMAIL --password PASSWORD [--expect STATE] [--run ID] [--no-target]');
  process.exit(2);
}
const origin = new URL(url).origin;
/** Where requests go: the BASE_URL, or another address of the same server (`--via`). */
const via = values.via ?? origin;
const fail = (message) => {
  console.error(`container smoke: ${message}`);
  process.exit(1);
};

const login = await fetch(`${via}/login`, {
  method: 'POST',
  redirect: 'manual',
  headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
  body: new URLSearchParams({ email, password }),
});
const cookie = (login.headers.getSetCookie?.() ?? []).map((line) => line.split(';')[0]).join('; ');
if (login.status !== 303 || !cookie) fail(`signing in answered ${login.status}`);

async function api(base, method, path, body) {
  const res = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: { cookie, origin, ...(body && { 'content-type': 'application/json' }) },
    body: body && JSON.stringify(body),
  });
  const answer = await res.json().catch(() => null);
  if (!res.ok) fail(`${method} ${path} answered ${res.status}: ${JSON.stringify(answer)}`);
  return answer;
}

let runId = values.run;
if (!runId) {
  const job = await api(via, 'POST', '/jobs', { name: `Smoke ${Date.now()}`, promptTemplate: 'Say {{ data.word }}', ...(!values['no-target'] && { executionTargetId: 'local' }), triggers: [{ type: 'invocation' }] });
  ({ runId } = await api(via, 'POST', `/jobs/${job.id}/invocations`, { data: { word: 'hello' } }));
}
let run;
for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 250))) {
  run = await api(values['read-url'] ?? via, 'GET', `/runs/${runId}`);
  if (['succeeded', 'failed', 'timed_out', 'canceled', 'expired'].includes(run.state)) break;
}
if (run?.state !== values.expect) fail(`run ${runId} ended ${run?.state}: ${run?.error ?? ''}`);
console.log(`container smoke: run ${runId} ${run.state}${values['read-url'] ? `, read through ${values['read-url']}` : ''}: ${JSON.stringify(run.result)}`);
console.log(runId);
