// The `flows` command as a person uses it, run as a child process against a listening server: login with
// the device flow approved in Chromium, jobs from a file, invoke --wait and runs watch with their exit codes,
// --json that parses, an ended login and a server that is down in plain words, the credentials file kept
// private, a login to a server reached by another name than its own (through a recording proxy, which also
// shows that the device code is not polled again once the token came), and no token in anything it prints.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { launchBrowser, type TestBrowser } from '../support/browser';
import { startRecordingProxy } from '../support/recording-proxy';
import { startListeningApp, type ListeningApp } from '../support/server';

const ROOT = path.join(__dirname, '../..');
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const EMAIL = 'cli@acme.example';
const PASSWORD = 'correct horse battery';

let server: ListeningApp;
let browser: TestBrowser;
const config = mkdtempSync(path.join(tmpdir(), 'flows-cli-config-'));
const printed: string[] = [];
/** Every token the CLI held at some point. */
const held = new Set<string>();

beforeAll(async () => {
  server = await startListeningApp({ localAgent: { command: 'prompt=$(cat); echo "working on: $prompt"; case "$prompt" in fail*) exit 4;; esac', timeoutSeconds: 30 } });
  await server.app.owners.createOwner({ email: EMAIL, password: PASSWORD, tenantName: 'Acme' });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `flows …` from the sources, with its own config folder; `onStderr` sees what it prints as it comes. */
function flows(args: string[], onStderr?: (text: string) => void): Promise<Outcome> {
  const child = spawn(process.execPath, ['-r', './test/support/register-ts.js', 'clients/cli/src/main.ts', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: config, XDG_CONFIG_HOME: config, FLOWS_URL: server.url },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
    onStderr?.(stderr);
  });
  return new Promise((resolve) =>
    child.on('close', (code) => {
      printed.push(stdout, stderr);
      try {
        for (const saved of Object.values<any>(JSON.parse(readFileSync(credentialsFile, 'utf8')).servers)) for (const token of [saved.accessToken, saved.refreshToken]) if (token?.length > 20) held.add(token);
      } catch {
        // no login yet
      }
      resolve({ code, stdout, stderr });
    }),
  );
}

const credentialsFile = path.join(config, 'flows', 'credentials.json');
const credentials = () => JSON.parse(readFileSync(credentialsFile, 'utf8')).servers[server.url];

/** Runs `flows login …` while the owner signs in to the page it prints, in Chromium, and presses Approve. */
async function loginApproved(args: string[]): Promise<Outcome> {
  let approving: Promise<void> | undefined;
  const login = await flows(['login', '--no-browser', ...args], (stderr) => {
    const url = /Open (\S+) and check/.exec(stderr)?.[1];
    approving ??= url
      ? (async () => {
          const page = await browser.context.newPage();
          await page.goto(url);
          await page.getByLabel('Email').fill(EMAIL);
          await page.getByLabel('Password').fill(PASSWORD);
          await page.getByRole('button', { name: 'Sign in' }).click();
          await page.getByRole('button', { name: 'Approve' }).click();
          await page.getByRole('heading', { name: 'Device approved' }).waitFor();
          await page.close();
        })()
      : undefined;
  });
  await approving;
  return login;
}

it('signs in with the device flow, approved in the browser, and keeps the login private', async () => {
  const login = await loginApproved([]);
  expect(login.code).toBe(0);
  expect(login.stdout).toContain(`Signed in to ${server.url}`);
  expect(statSync(credentialsFile).mode & 0o777).toBe(0o600);
  expect(statSync(path.dirname(credentialsFile)).mode & 0o777).toBe(0o700);
  const whoami = await flows(['whoami', '--json']);
  expect(JSON.parse(whoami.stdout)).toMatchObject({ owner: { email: EMAIL } });
}, 60_000);

it('creates a job from a file, invokes it with --wait, and watches runs to their end with the documented exit codes', async () => {
  const file = path.join(config, 'job.json');
  writeFileSync(file, JSON.stringify({ name: 'Say hello', promptTemplate: '{{ data.what }}', executionTargetId: 'local', concurrencyLimit: 3, flowControl: { concurrency: { key: 'data.what', limit: 1 } } }));
  const created = await flows(['jobs', 'create', '-f', file, '--json']);
  expect(created.code).toBe(0);
  expect(JSON.parse(created.stdout)).toMatchObject({ slug: 'say-hello', enabled: true, flowControl: { concurrency: { key: 'data.what', limit: 1 } } });
  expect((await flows(['jobs', 'get', 'say-hello'])).stdout).toContain('per key: 1 at once of data.what, a new run waits its turn');
  expect((await flows(['jobs', 'list'])).stdout).toMatch(/say-hello\s+Say hello\s+true/);

  const ok = await flows(['invoke', 'say-hello', '--data', '{"what":"hello"}', '--wait']);
  expect(ok.code).toBe(0);
  expect(ok.stdout).toContain('working on: hello');
  expect(ok.stdout).toMatch(/Run run_\S+ succeeded\./);
  const failed = await flows(['invoke', 'say-hello', '--data', '{"what":"fail now"}', '--wait']);
  expect(failed.code).toBe(3);
  expect(failed.stdout).toMatch(/failed: The agent exited with code 4/);

  const started = JSON.parse((await flows(['invoke', 'say-hello', '--data', '{"what":"again"}', '--json'])).stdout);
  const watched = await flows(['runs', 'watch', started.runId, '--json']);
  expect(watched.code).toBe(0);
  const events = watched.stdout.trim().split('\n').map((line) => JSON.parse(line));
  expect(events.map((event: { seq: number }) => event.seq)).toEqual(events.map((_: unknown, i: number) => i + 1));
  const listed = JSON.parse((await flows(['runs', 'list', '--job', 'say-hello', '--json'])).stdout);
  expect(listed).toHaveLength(3);

  // The key a flow control gives a delivery's run.
  const [webhook, flowControl] = [path.join(config, 'webhook.json'), path.join(config, 'flow.json')];
  writeFileSync(webhook, JSON.stringify({ event: 'pull_request', action: 'synchronize', payload: { pull_request: { number: 42 } } }));
  writeFileSync(flowControl, JSON.stringify({ concurrency: { key: 'payload.pull_request.number', limit: 1, onConflict: 'cancel-running' }, rateLimit: { limit: 5, period: '1h' } }));
  const keyed = await flows(['conditions', 'test', '--webhook', webhook, '--flow-control', flowControl]);
  expect([keyed.code, keyed.stdout]).toEqual([0, expect.stringMatching(/match\n.*concurrency key: 42\n.*rateLimit key: .*none: the whole job is one key/s)]);
});

it('says what went wrong in plain words, with the documented exit codes', async () => {
  const missing = await flows(['jobs', 'get', 'no-such-job']);
  expect([missing.code, missing.stderr.trim()]).toEqual([1, expect.stringMatching(/^flows: not_found: No such job\./)]);
  const usage = await flows(['invoke']);
  expect(usage.code).toBe(2);
  const never = await flows(['jobs', 'list', '--url', 'http://127.0.0.1:9']);
  expect([never.code, never.stderr]).toEqual([1, expect.stringContaining('Not signed in to http://127.0.0.1:9: run `flows login')]);
  const unreachable = await flows(['login', '--url', 'http://127.0.0.1:9', '--no-browser']);
  expect([unreachable.code, unreachable.stderr]).toEqual([1, expect.stringContaining('Cannot reach http://127.0.0.1:9')]);
  // Signed in to a server that is down.
  const store = JSON.parse(readFileSync(credentialsFile, 'utf8'));
  store.servers['http://127.0.0.1:9'] = store.servers[server.url];
  writeFileSync(credentialsFile, JSON.stringify(store));
  const down = await flows(['jobs', 'list', '--url', 'http://127.0.0.1:9']);
  expect([down.code, down.stderr]).toEqual([1, expect.stringContaining('http://127.0.0.1:9')]);
  expect(down.stderr).not.toMatch(/\n\s+at /);

  // A login whose access token expired and whose refresh token is gone.
  const saved = JSON.parse(readFileSync(credentialsFile, 'utf8'));
  saved.servers[server.url] = { ...saved.servers[server.url], accessToken: 'expired-token', refreshToken: undefined, expiresAt: Date.now() - 1000 };
  writeFileSync(credentialsFile, JSON.stringify(saved));
  const ended = await flows(['jobs', 'list']);
  expect([ended.code, ended.stderr]).toEqual([1, expect.stringContaining('run `flows login')]);
});

it('signs out: the tokens are revoked and forgotten', async () => {
  expect((await flows(['logout'])).code).toBe(0);
  expect(credentials().accessToken).toBeUndefined();
  const whoami = await flows(['whoami']);
  expect([whoami.code, whoami.stderr]).toEqual([1, expect.stringContaining('Not signed in')]);
});

it('signs in to a server reached by another name than its own, and polls no more once the token came', async () => {
  // The server calls itself http://localhost:<port> (its BASE_URL); the CLI is given http://127.0.0.1:<port>.
  // Every request, the browser's too, passes a proxy on that port, which records them.
  const proxy = await startRecordingProxy();
  const named = await startListeningApp({}, {}, { calledAs: `http://localhost:${proxy.port}` });
  proxy.target = named.url;
  try {
    await named.app.owners.createOwner({ email: EMAIL, password: PASSWORD, tenantName: 'Elsewhere' });
    const given = `http://127.0.0.1:${proxy.port}`;
    const login = await loginApproved(['--url', given]);
    expect([login.code, login.stderr]).toEqual([0, expect.stringContaining(`${given} calls itself http://localhost:${proxy.port}`)]);
    expect(login.stdout).toContain(`Signed in to ${given}`);

    const asked = proxy.exchanges.find((exchange) => exchange.path === '/oauth/device_authorization')!;
    expect(asked.form.get('resource')).toBe(`http://localhost:${proxy.port}/api/v1`);
    // A device code gives its tokens once; a poll after that would revoke them.
    const polls = proxy.exchanges.filter((exchange) => exchange.path === '/oauth/token' && exchange.form.get('grant_type') === DEVICE_GRANT);
    expect(polls.length).toBeGreaterThan(0);
    expect(polls.map((poll) => 'access_token' in JSON.parse(poll.body))).toEqual([...Array(polls.length - 1).fill(false), true]);

    const whoami = await flows(['whoami', '--json', '--url', given]);
    expect([whoami.code, JSON.parse(whoami.stdout)]).toEqual([0, expect.objectContaining({ tenant: expect.objectContaining({ name: 'Elsewhere' }) })]);
  } finally {
    await named.close();
    await proxy.close();
  }
}, 60_000);

it('never printed a token it held', () => {
  expect(held.size).toBeGreaterThan(0);
  for (const token of held) expect(printed.join('\n')).not.toContain(token);
});
