// The console's job and run pages in Chromium: the owner signs in, follows the navigation from the jobs list
// to a job and to its run, at a desktop and at a phone's width; the pages load nothing but this server and
// raise no error. Screenshots go to test-artefacts/console/.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { agentCommand } from '../support/agent';
import { launchBrowser, watchPage, type PageActivity, type TestBrowser } from '../support/browser';
import { AGENT_TOKEN, startFakeProviders, VMHOST_TOKEN, type FakeProviders } from '../support/fake-providers';
import { accessToken, createOwner, sessionCookie } from '../support/identity';
import { createJob, githubDelivery, runSettled } from '../support/kit';
import { startListeningApp, type ListeningApp } from '../support/server';
import { SESSION_COOKIE } from '../../src/auth/session-service';

const SHOTS = path.join(__dirname, '../../test-artefacts/console');

let server: ListeningApp;
let browser: TestBrowser;
let page: Page;
let activity: PageActivity;
let runId: string;
let bearer: Record<string, string>;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  server = await startListeningApp({ localAgent: { command: agentCommand(), timeoutSeconds: 60, sandbox: 'off' } });
  const owner = await createOwner(server.app.database.db, { tenantName: 'Acme' });
  bearer = { authorization: `Bearer ${await accessToken(server.app, owner)}` };
  const job = await createJob(server.app, bearer, { name: 'Fix labelled issues', promptTemplate: 'Say {{ data.word }}', executionTargetId: 'local', triggers: [{ type: 'invocation' }, { type: 'schedule', cron: '0 3 * * 1-5', timezone: 'Europe/Berlin' }] });
  const invoked = await fetch(`${server.url}/api/v1/jobs/${job.id}/invocations`, { method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: JSON.stringify({ data: { word: 'hello' } }) });
  runId = ((await invoked.json()) as { runId: string }).runId;
  await runSettled(server.app, bearer, runId);
  // Nine hours off UTC: the pages still read in UTC, as they say, whatever the browser's zone.
  browser = await launchBrowser({ baseURL: server.url, timezoneId: 'Asia/Tokyo', locale: 'en-GB' });
  const [name, value] = (await sessionCookie(server.app, owner)).split('=');
  await browser.context.addCookies([{ name, value, url: server.url, httpOnly: true, sameSite: 'Lax' }]);
  expect(name).toBe(SESSION_COOKIE);
  page = await browser.context.newPage();
  activity = watchPage(page);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

it('goes from the jobs list to a job and its run, and every page stays on this server without errors', async () => {
  await page.goto('/console/jobs');
  const changed = page.locator('time').first();
  const utc = (await changed.getAttribute('datetime'))!;
  expect([await changed.textContent(), await changed.getAttribute('title')]).toEqual([`${utc.replace('T', ' ').slice(0, 19)} UTC`, utc]);
  await page.screenshot({ path: path.join(SHOTS, 'jobs.png'), fullPage: true });
  await page.getByRole('link', { name: 'Fix labelled issues' }).click();
  await page.getByRole('heading', { name: 'Fix labelled issues' }).waitFor();
  await page.getByText('0 3 * * 1-5 (Europe/Berlin)').waitFor();
  await page.screenshot({ path: path.join(SHOTS, 'job.png'), fullPage: true });
  await page.getByRole('link', { name: 'Fix labelled issues' }).last().click(); // the run, named after the job
  await page.getByText('succeeded').first().waitFor();
  await page.getByText('Say hello').first().waitFor();
  await page.screenshot({ path: path.join(SHOTS, 'run.png'), fullPage: true });
  await page.getByRole('link', { name: 'Runs' }).click();
  await page.getByRole('button', { name: 'Filter' }).waitFor();
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: path.join(SHOTS, 'runs-phone.png'), fullPage: true });
  expect(activity.errors).toEqual([]);
  expect(activity.requests.every((url) => url.startsWith(server.url))).toBe(true);
});

it('creates a job from the form and invokes it from its page', async () => {
  await page.goto('/console/jobs');
  await page.getByRole('link', { name: 'New job' }).click();
  await page.getByLabel('Name').fill('Made in the browser');
  await page.getByLabel('Prompt template').fill('Say {{ dta.word }}');
  await page.getByLabel('Execution target').selectOption({ label: 'Local agent' });
  await page.getByRole('button', { name: 'Create' }).click();
  // The typo is refused beside the template, the values kept.
  await page.getByText('(did you mean `data`?)').waitFor();
  await page.screenshot({ path: path.join(SHOTS, 'new-job-refused.png'), fullPage: true });
  expect(activity.errors.splice(0)).toEqual([expect.stringContaining('status of 400')]);
  await page.getByLabel('Prompt template').fill('Say {{ data.word }}');
  await page.getByRole('button', { name: 'Create' }).click();
  await page.getByRole('heading', { name: 'Made in the browser' }).waitFor();
  await page.getByLabel('Data (JSON)').fill('{"word": "from the form"}');
  await page.getByRole('button', { name: 'Invoke' }).click();
  await page.locator('#run-state', { hasText: 'succeeded' }).waitFor({ timeout: 15_000 });
  await page.getByText('prompt=Say from the form', { exact: true }).waitFor();
  await page.screenshot({ path: path.join(SHOTS, 'invoked-phone.png'), fullPage: true });
  expect(activity.errors).toEqual([]);
});

it('shows a delivery\'s decisions, leaf by leaf, from the activity list', async () => {
  const source = (await (await fetch(`${server.url}/api/v1/webhook-sources`, { method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'GitHub', format: 'github' }) })).json()) as { id: string; signingSecret: string };
  await createJob(server.app, bearer, { name: 'Docs only', promptTemplate: 'x', triggers: [{ type: 'webhook', sourceId: source.id, events: ['issues.labeled'], conditions: { all: [{ path: 'payload.label.name', op: 'eq', value: 'docs' }] } }] });
  const { body, headers } = githubDelivery(source.signingSecret, { action: 'labeled', issue: { number: 7 }, label: { name: 'agent' } });
  expect((await fetch(`${server.url}/hooks/${source.id}`, { method: 'POST', headers, body })).status).toBe(202);
  await server.app.runner.idle();
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.goto('/console/jobs');
  await page.getByRole('link', { name: 'Webhook activity' }).click();
  await page.getByRole('link', { name: 'issues.labeled' }).first().click();
  await page.getByText('does not hold').waitFor();
  await page.screenshot({ path: path.join(SHOTS, 'delivery.png'), fullPage: true });

  // Would the job have run with `agent` instead of `docs`? A backtest of the draft answers, saving nothing.
  await page.getByRole('link', { name: 'Docs only' }).click();
  await page.getByRole('link', { name: 'Backtest its webhook triggers' }).click();
  const draft = page.getByLabel('Draft triggers (JSON)');
  await draft.fill((await draft.inputValue()).replace('"docs"', '"agent"'));
  await page.getByRole('button', { name: 'Backtest' }).click();
  await page.getByText('1 of 1 recorded deliveries of the last 7 days would have matched.').waitFor();
  await page.screenshot({ path: path.join(SHOTS, 'backtest.png'), fullPage: true });
  expect(activity.errors).toEqual([]);
});

it('creates a source and shows its secret once, with a button that copies it', async () => {
  await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.goto('/console/jobs');
  await page.getByRole('link', { name: 'Sources' }).click();
  await page.getByLabel('Name').fill('Widgets on GitHub');
  await page.getByRole('button', { name: 'Create' }).click();
  const secret = await page.getByRole('textbox', { name: 'Signing secret' }).inputValue();
  await page.getByRole('button', { name: 'Copy' }).first().click();
  await page.getByRole('button', { name: 'Copied' }).waitFor();
  expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
  await page.screenshot({ path: path.join(SHOTS, 'source-created.png'), fullPage: true });
  await page.goto('/console/sources');
  expect(await page.content()).not.toContain(secret);
  expect(activity.errors).toEqual([]);
});

it('tells why a GitHub delivery was refused, on the source\'s page', async () => {
  const created = await fetch(`${server.url}/api/v1/webhook-sources`, { method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Gadgets on GitHub', format: 'github' }) });
  const source = (await created.json()) as { id: string; signingSecret: string };
  // The GitHub webhook was saved without a secret: it signs nothing.
  const { body, headers } = githubDelivery(source.signingSecret, { action: 'opened', issue: { number: 3 } });
  const { 'x-hub-signature-256': _, ...unsigned } = headers;
  const refused = await fetch(`${server.url}/hooks/${source.id}`, { method: 'POST', headers: unsigned, body });
  expect([refused.status, ((await refused.json()) as { error: { code: string } }).error.code]).toEqual([401, 'signature_missing']);

  await page.goto('/console/sources');
  await page.getByRole('link', { name: 'Gadgets on GitHub' }).click();
  await page.getByRole('heading', { name: 'Refused deliveries' }).waitFor();
  const row = page.getByRole('row', { name: /signature_missing/ });
  await row.getByText('GitHub sent no X-Hub-Signature-256 header: set a secret on the GitHub webhook').waitFor();
  await row.getByText('x-github-event').waitFor();
  await row.getByText(`${Buffer.byteLength(body)} bytes`).waitFor();
  await page.screenshot({ path: path.join(SHOTS, 'source-refusals.png'), fullPage: true });
  expect(activity.errors).toEqual([]);
});

it('offers every event type to a new subscription, labelled, two checked', async () => {
  await page.goto('/console/subscriptions');
  await page.getByRole('heading', { name: 'Event subscriptions' }).waitFor();
  expect(await page.getByRole('checkbox').count()).toBe(8);
  expect(await page.getByRole('checkbox', { name: 'run.failed' }).isChecked()).toBe(true);
  await page.getByLabel('Endpoint URL').fill('not a url');
  await page.getByRole('button', { name: 'Create' }).click();
  await page.getByRole('alert').waitFor();
  await page.screenshot({ path: path.join(SHOTS, 'subscriptions-refused.png'), fullPage: true });
  expect(activity.errors.splice(0)).toEqual([expect.stringContaining('status of 400')]);
});

it('edits a job from its page, the settings as JSON', async () => {
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.goto('/console/jobs');
  await page.getByRole('link', { name: 'Made in the browser' }).click();
  await page.getByRole('link', { name: 'Edit this job' }).click();
  const settings = page.getByLabel('The changes as JSON');
  await settings.fill((await settings.inputValue()).replace('"Made in the browser"', '"Renamed in the browser"'));
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('heading', { name: 'Renamed in the browser' }).waitFor();
  expect(activity.errors).toEqual([]);
});

it('stops a long run from its page', async () => {
  const job = await createJob(server.app, bearer, { name: 'Long', promptTemplate: 'sleep', executionTargetId: 'local' });
  const invoked = await fetch(`${server.url}/api/v1/jobs/${job.id}/invocations`, { method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: '{}' });
  const { runId: id } = (await invoked.json()) as { runId: string };
  await runSettled(server.app, bearer, id, ['running']);
  await page.goto(`/console/runs/${id}`);
  await page.getByText('started', { exact: true }).waitFor();
  await page.getByRole('button', { name: 'Stop' }).click();
  await page.locator('#run-state', { hasText: 'canceled' }).waitFor({ timeout: 15_000 });
  await page.getByRole('button', { name: 'Replay' }).waitFor();
  await page.screenshot({ path: path.join(SHOTS, 'run-stopped.png'), fullPage: true });
  expect(activity.errors).toEqual([]);
});

describe('a VM host', () => {
  let providers: FakeProviders;
  beforeAll(async () => {
    providers = await startFakeProviders();
  });
  afterAll(() => providers?.close());

  it('is connected, given a target and diagnosed from the console, step by step', async () => {
    await page.setViewportSize({ width: 1280, height: 720 });
    await page.goto('/console/jobs');
    await page.getByRole('link', { name: 'VM hosts and agent' }).click();
    const connection = page.locator('form[action="/console/connections"]');
    await connection.getByLabel('Name').fill('Fake host');
    await connection.getByLabel('API base URL').fill(providers.url);
    await connection.getByLabel('API token').fill(VMHOST_TOKEN);
    await connection.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'Fake host' }).waitFor();

    await page.getByRole('link', { name: 'Targets' }).click();
    await page.getByLabel('Name').fill('Fake VM');
    await page.getByLabel('Image').fill('agent-runner');
    await page.getByLabel('VM-host connection (vmhost)').selectOption({ label: 'Fake host' });
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'Fake VM' }).waitFor();
    await page.screenshot({ path: path.join(SHOTS, 'target.png'), fullPage: true });
    await page.getByRole('link', { name: 'run its diagnostics' }).click();

    // Without the agent integration, the VM boots but its agent reaches no model: the step says so.
    await page.getByRole('button', { name: 'Run diagnostics' }).click();
    await page.getByRole('heading', { name: 'Diagnostics: a step failed' }).waitFor();
    await page.getByRole('cell', { name: 'no agent integration is saved' }).waitFor();

    await page.getByRole('link', { name: 'VM hosts and agent' }).click();
    await page.getByLabel('Project').fill('acme');
    await page.getByLabel('Agent provider API base URL').fill(providers.url);
    await page.getByLabel('Access token').fill(AGENT_TOKEN);
    await page.getByLabel('VM-host connection').selectOption({ label: 'Fake host' });
    await page.getByRole('button', { name: 'Save the integration' }).click();
    await page.getByRole('button', { name: 'Remove the integration' }).waitFor();
    await page.screenshot({ path: path.join(SHOTS, 'connections.png'), fullPage: true });
    await page.getByRole('link', { name: 'Fake host' }).click();
    await page.getByRole('button', { name: 'Run diagnostics' }).click();
    await page.getByRole('heading', { name: 'Diagnostics: every step passed' }).waitFor();
    expect(await page.getByRole('cell', { name: 'passed', exact: true }).count()).toBe(4);
    await page.screenshot({ path: path.join(SHOTS, 'diagnostics.png'), fullPage: true });
    expect(await page.content()).not.toContain(VMHOST_TOKEN);
    expect(await page.content()).not.toContain(AGENT_TOKEN);
    expect(activity.errors).toEqual([]);
  });
});

describe('a run under way', () => {
  let live: ListeningApp;
  beforeAll(async () => {
    live = await startListeningApp({ localAgent: { command: agentCommand('echo "step 1"; sleep 2; echo "step 2"; sleep 2; echo "step 3"\n'), timeoutSeconds: 60, sandbox: 'off' } });
  });
  afterAll(() => live?.close());

  it('grows its trace and turns succeeded on the page, with no reload', async () => {
    const owner = await createOwner(live.app.database.db);
    const bearer = { authorization: `Bearer ${await accessToken(live.app, owner)}` };
    const job = await createJob(live.app, bearer, { name: 'Three steps', promptTemplate: 'go', executionTargetId: 'local' });
    const context = await browser.browser.newContext({ baseURL: live.url });
    const [name, value] = (await sessionCookie(live.app, owner)).split('=');
    await context.addCookies([{ name, value, url: live.url, httpOnly: true, sameSite: 'Lax' }]);
    const tab = await context.newPage();
    const watched = watchPage(tab);
    const invoked = await fetch(`${live.url}/api/v1/jobs/${job.id}/invocations`, { method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: '{}' });
    const { runId: id } = (await invoked.json()) as { runId: string };
    let loads = 0;
    tab.on('load', () => loads++);
    await tab.goto(`/console/runs/${id}`);
    // The agent takes four seconds: the page shows the run unfinished, then its lines as they come.
    expect(await tab.locator('#run-state').textContent()).not.toBe('succeeded');
    expect(await tab.getByText('step 3', { exact: true }).count()).toBe(0);
    await tab.getByText('step 2', { exact: true }).waitFor({ timeout: 15_000 });
    expect([await tab.locator('#run-state').textContent(), await tab.getByText('step 3', { exact: true }).count()]).toEqual(['running', 0]);
    // A row the page added reads as the server's do: its time in UTC, each cell named by its column.
    const added = tab.getByRole('row').filter({ hasText: 'step 2' });
    expect(await added.locator('time').textContent()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    expect(await added.getByRole('cell').evaluateAll((cells) => cells.map((cell) => cell.getAttribute('data-label')))).toEqual(['#', 'Time', 'Event', 'Data']);
    await tab.screenshot({ path: path.join(SHOTS, 'run-running.png'), fullPage: true });
    await tab.getByText('step 3', { exact: true }).waitFor({ timeout: 15_000 });
    await tab.locator('#run-state', { hasText: 'succeeded' }).waitFor({ timeout: 15_000 });
    await tab.getByRole('button', { name: 'Replay' }).waitFor();
    await tab.screenshot({ path: path.join(SHOTS, 'run-live.png'), fullPage: true });
    expect(loads).toBe(1);
    expect(watched.errors).toEqual([]);
    await context.close();
  });

});
