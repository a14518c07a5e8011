// A coding agent's run in Chromium: its trace grows on the page as the agent's events arrive, each row as the
// server renders it, at a desktop's width and at a phone's (390 px) with nothing wider than the screen, and a
// command's output opens on a click. Screenshots go to test-artefacts/console/.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { launchBrowser, watchPage, type PageActivity, type TestBrowser } from '../support/browser';
import { accessToken, createOwner, sessionCookie, type TestOwner } from '../support/identity';
import { createJob } from '../support/kit';
import { startListeningApp, type ListeningApp } from '../support/server';
import { AGENT_TRACE, appendTrace, insertTracedRun } from '../support/traced-runs';

const SHOTS = path.join(__dirname, '../../test-artefacts/console');
const PHONE = { width: 390, height: 844 };

let server: ListeningApp;
let browser: TestBrowser;
let owner: TestOwner;
let jobId: string;

/** A tab signed in as the owner, at `viewport`, and what it does. */
async function signedInTab(viewport: { width: number; height: number }, phone = false): Promise<{ tab: Page; activity: PageActivity }> {
  const context = await browser.browser.newContext({ baseURL: server.url, viewport, isMobile: phone, hasTouch: phone });
  const [name, value] = (await sessionCookie(server.app, owner)).split('=');
  await context.addCookies([{ name, value, url: server.url, httpOnly: true, sameSite: 'Lax' }]);
  const tab = await context.newPage();
  return { tab, activity: watchPage(tab) };
}

/** A running run of the job, its trace the first `shown` events of the agent's; the runner's instance owns it, so no sweep ends it. */
const runningRun = (shown: number) =>
  insertTracedRun(server.app.database.db, {
    tenantId: owner.tenantId,
    jobId,
    state: 'running',
    events: AGENT_TRACE.slice(0, shown),
    usage: { inputTokens: 48210, outputTokens: 3120, cachedTokens: 12000, turns: 7, costUsd: 0.4213, costSource: 'reported' },
    ownerId: server.app.sweeps.instanceId,
  });

const pageWidth = (tab: Page) => tab.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth);

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  server = await startListeningApp();
  owner = await createOwner(server.app.database.db, { tenantName: 'Acme' });
  const bearer = { authorization: `Bearer ${await accessToken(server.app, owner)}` };
  jobId = (await createJob(server.app, bearer, { name: 'Fix the editor', promptTemplate: 'Fix it', agent: { kind: 'claude-code', maxTurns: 30 } })).id;
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

it('grows the trace as the agent\'s events arrive, each row as the server renders it, then shows the run ended', async () => {
  const { tab, activity } = await signedInTab({ width: 1280, height: 900 });
  const runId = await runningRun(2);
  let loads = 0;
  tab.on('load', () => loads++);
  await tab.goto(`/console/runs/${runId}`);
  await tab.getByText('A second paragraph.').waitFor();
  await tab.getByText('48,210 tokens in, 3,120 out, 12,000 cached · 7 turns · $0.4213 (reported by the agent)').waitFor(); // the run's usage, in its summary
  expect(await tab.getByText('WebFetch').count()).toBe(0);

  await appendTrace(server.app.database.db, owner.tenantId, runId, AGENT_TRACE.slice(2));
  await tab.getByText('Budget crossed', { exact: false }).waitFor({ timeout: 15_000 });
  const added = await tab.locator('#trace').evaluate((body) => body.innerHTML);
  // The same trace read afresh, rendered by the server alone.
  const { tab: fresh } = await signedInTab({ width: 1280, height: 900 });
  await fresh.goto(`/console/runs/${runId}`);
  expect(added).toBe(await fresh.locator('#trace').evaluate((body) => body.innerHTML));
  await fresh.context().close();

  // A failed command's output is folded until asked for; the code that failed is marked.
  const failed = tab.getByRole('row').filter({ hasText: '$ echo "<b>bold</b>"' });
  await expect(failed.locator('pre').nth(1).isVisible()).resolves.toBe(false);
  await failed.getByText('exit 1').click();
  await failed.getByText('<i>2 failed</i>').waitFor();
  expect(await failed.locator('strong.error').textContent()).toBe('exit 1');
  await tab.screenshot({ path: path.join(SHOTS, 'run-timeline.png'), fullPage: true });
  expect(await pageWidth(tab)).toBeLessThanOrEqual(1280);

  await server.app.database.db.run.update({ where: { id: runId }, data: { state: 'succeeded', finishedAt: new Date() } });
  await tab.locator('#run-state', { hasText: 'succeeded' }).waitFor({ timeout: 15_000 });
  await tab.getByRole('button', { name: 'Replay' }).waitFor();
  expect(loads).toBe(1);
  expect(activity.errors).toEqual([]);
  await tab.context().close();
});

it('fits a phone: long commands and paths wrap, and a command\'s output opens on a tap', async () => {
  const { tab, activity } = await signedInTab(PHONE, true);
  const runId = await runningRun(AGENT_TRACE.length);
  await tab.goto(`/console/runs/${runId}`);
  await tab.getByText('Budget crossed', { exact: false }).waitFor();
  const failed = tab.getByRole('row').filter({ hasText: '$ echo "<b>bold</b>"' });
  const output = failed.getByText('<i>2 failed</i>');
  expect(await output.isVisible()).toBe(false);
  await failed.getByText('exit 1').tap();
  await output.waitFor();
  expect(await pageWidth(tab)).toBeLessThanOrEqual(PHONE.width);
  // The long command and path are within the screen, on several lines.
  for (const long of [failed.locator('pre.command'), tab.locator('.event code', { hasText: 'editor.ts' })]) {
    const box = (await long.boundingBox())!;
    expect([box.x >= 0, box.x + box.width <= PHONE.width, box.height > 40]).toEqual([true, true, true]);
  }
  await tab.screenshot({ path: path.join(SHOTS, 'run-timeline-phone.png'), fullPage: true });
  expect(activity.errors).toEqual([]);
  await tab.context().close();
});
