// The console and the API reference at a phone's width (390 px) in Chromium: no page is wider than the
// screen, and every action on it (links, buttons, the Revoke column, forms' submit buttons) can be scrolled
// to and pressed without scrolling sideways. Screenshots go to test-artefacts/console/.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { agentCommand } from '../support/agent';
import { launchBrowser, watchPage, type PageActivity, type TestBrowser } from '../support/browser';
import { accessToken, createOwner, sessionCookie } from '../support/identity';
import { createJob, githubDelivery, runSettled } from '../support/kit';
import { startListeningApp, type ListeningApp } from '../support/server';

const SHOTS = path.join(__dirname, '../../test-artefacts/console');
const PHONE = { width: 390, height: 844 };

let server: ListeningApp;
let browser: TestBrowser;
let page: Page;
let activity: PageActivity;
let bearer: Record<string, string>;
let job: { id: string };
let runId: string;
let sourceId: string;
let activityId: string;

/** The little of the page's DOM the reach check reads (this project's types have no DOM library). */
type Box = { left: number; right: number; top: number; bottom: number; width: number; height: number };
interface PageElement {
  tagName: string;
  textContent: string | null;
  getAttribute(name: string): string | null;
  checkVisibility(): boolean;
  getClientRects(): ArrayLike<Box>;
  contains(other: PageElement): boolean;
}
interface PageWindow {
  document: { querySelectorAll(selector: string): Iterable<PageElement>; elementFromPoint(x: number, y: number): PageElement | null };
  innerWidth: number;
  innerHeight: number;
  scrollY: number;
  scrollTo(x: number, y: number): void;
}

/**
 * What keeps an action in `scope` from being pressed at this width, each with why: out of the screen's width
 * once scrolled to (only vertically: what a sideways scroll of the page or of a table would reveal does not
 * count), or covered. An action drawn only on hover (Swagger UI's copy-path button) has no size at rest.
 */
async function unreachableActions(on: Page, scope: string): Promise<string[]> {
  return on.evaluate((selector) => {
    const page = globalThis as unknown as PageWindow;
    const problems: string[] = [];
    for (const action of page.document.querySelectorAll(`${selector} :is(a[href], button, input[type=submit], summary)`)) {
      const name = `${action.tagName.toLowerCase()} "${(action.getAttribute('aria-label') || action.textContent || '').trim().slice(0, 40)}"`;
      if (!action.checkVisibility() || !action.getClientRects().length) continue;
      page.scrollTo(0, action.getClientRects()[0].top + page.scrollY - page.innerHeight / 2);
      // A link that wraps is several boxes: each within the screen, the first one pressed.
      const boxes = Array.from(action.getClientRects()).filter((box) => box.width && box.height);
      if (!boxes.length) continue;
      const outside = boxes.find((box) => box.left < 0 || box.right > page.innerWidth + 0.5);
      if (outside) problems.push(`${name} is at ${Math.round(outside.left)}–${Math.round(outside.right)} px`);
      else if (boxes[0].top < 0 || boxes[0].bottom > page.innerHeight) problems.push(`${name} is not in view once scrolled to`);
      else {
        const hit = page.document.elementFromPoint(boxes[0].left + boxes[0].width / 2, boxes[0].top + boxes[0].height / 2);
        if (!hit || !(action === hit || action.contains(hit))) problems.push(`${name} is covered by ${hit?.tagName.toLowerCase()}`);
      }
    }
    page.scrollTo(0, 0);
    return problems;
  }, scope);
}

/** The page at `url` fits a phone: nothing wider than the screen, every action in `scope` reachable. */
async function expectFitsPhone(url: string, shot: string, { scope = 'body', ready }: { scope?: string; ready?: (on: Page) => Promise<unknown> } = {}): Promise<void> {
  await page.goto(url);
  await ready?.(page);
  const width = await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth);
  await page.screenshot({ path: path.join(SHOTS, `${shot}-phone.png`), fullPage: true });
  expect({ url, width, unreachable: await unreachableActions(page, scope) }).toEqual({ url, width: expect.any(Number), unreachable: [] });
  expect(width).toBeLessThanOrEqual(PHONE.width);
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  server = await startListeningApp({ localAgent: { command: agentCommand(), timeoutSeconds: 60, sandbox: 'off' } });
  const owner = await createOwner(server.app.database.db, { email: 'someone.with.a.long.address@example.com', tenantName: 'Acme' });
  bearer = { authorization: `Bearer ${await accessToken(server.app, owner)}` };
  const post = async (route: string, body: unknown) => (await fetch(`${server.url}${route}`, { method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<Record<string, any>>;
  const source = (await post('/api/v1/webhook-sources', { name: 'GitHub', format: 'github' })) as { id: string; signingSecret: string };
  sourceId = source.id;
  job = await createJob(server.app, bearer, {
    name: 'Upgrade the dependencies of the monorepo',
    promptTemplate: 'Say {{ data.word }}',
    executionTargetId: 'local',
    triggers: [
      { type: 'invocation', inputSchema: { type: 'object', properties: { word: { type: 'string' } } } },
      { type: 'schedule', cron: '0 3 * * 1-5', timezone: 'Europe/Berlin' },
      { type: 'webhook', sourceId, events: ['issues.labeled', 'pull_request.opened'], conditions: { all: [{ path: 'payload.label.name', op: 'eq', value: 'agent' }] } },
    ],
  });
  // A long word the agent echoes into the trace, and an idempotency key shown as the run's cause.
  const invoked = await post(`/api/v1/jobs/${job.id}/invocations`, { data: { word: 'supercalifragilisticexpialidocious-'.repeat(4) }, idempotencyKey: 'nightly-upgrade-2026-11-26' });
  runId = invoked.runId;
  await runSettled(server.app, bearer, runId);
  // A delivery the triggers decided on, and a refused one for the source's page: GitHub signed nothing.
  const signed = githubDelivery(source.signingSecret, { action: 'labeled', issue: { number: 3 }, label: { name: 'agent' } }, { event: 'issues' });
  activityId = ((await (await fetch(`${server.url}/hooks/${sourceId}`, { method: 'POST', headers: signed.headers, body: signed.body })).json()) as { activityId: string }).activityId;
  await server.app.runner.idle();
  const { body, headers } = githubDelivery(source.signingSecret, { action: 'opened', issue: { number: 3 } });
  const { 'x-hub-signature-256': _, ...unsigned } = headers;
  expect((await fetch(`${server.url}/hooks/${sourceId}`, { method: 'POST', headers: unsigned, body })).status).toBe(401);

  // A phone: the page's viewport meta decides its layout width (980 px without one).
  browser = await launchBrowser({ baseURL: server.url, viewport: PHONE, isMobile: true, hasTouch: true });
  const [name, value] = (await sessionCookie(server.app, owner)).split('=');
  await browser.context.addCookies([{ name, value, url: server.url, httpOnly: true, sameSite: 'Lax' }]);
  page = await browser.context.newPage();
  activity = watchPage(page);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});
afterEach(() => expect(activity.errors.splice(0)).toEqual([]));

it('shows a run, its long ids and its trace, within the screen', async () => {
  await expectFitsPhone(`/console/runs/${runId}`, 'run', { ready: (on) => on.getByText('agent_output').first().waitFor() });
  // The trace's rows stack as cards, each value under its column's name.
  const event = page.getByRole('row').filter({ hasText: 'agent_output' }).first();
  expect(await event.getByRole('cell').evaluateAll((cells) => cells.map((cell) => cell.getAttribute('data-label')))).toEqual(['#', 'Time', 'Event', 'Data']);
});

it('shows the tokens and applications, each Revoke button in reach', async () => {
  await expectFitsPhone('/console', 'tokens', { ready: (on) => on.getByRole('heading', { name: 'Access tokens' }).waitFor() });
  expect(await page.getByRole('button', { name: /^Revoke/ }).count()).toBeGreaterThanOrEqual(2); // an application and its token
});

it('keeps the navigation to two lines above the content', async () => {
  await page.goto('/console/jobs');
  const middles = await page.getByRole('navigation', { name: 'Console' }).locator(':scope > *').evaluateAll((items) =>
    items.map((item) => {
      const box = item.getBoundingClientRect();
      return Math.round(box.top + box.height / 2);
    }),
  );
  expect(new Set(middles).size).toBeLessThanOrEqual(2);
  // Every section is there, and the tenant.
  expect(await page.getByRole('navigation', { name: 'Console' }).getByRole('link').count()).toBe(8);
  await page.getByRole('navigation', { name: 'Console' }).getByText('Acme').waitFor();
});

it('shows a job with its triggers and its Invoke form', async () => {
  await expectFitsPhone(`/console/jobs/${job.id}`, 'job', { ready: (on) => on.getByText('0 3 * * 1-5 (Europe/Berlin)').waitFor() });
  await page.getByRole('button', { name: 'Invoke' }).waitFor();
});

it('lists jobs and runs in tables that fit', async () => {
  await expectFitsPhone('/console/jobs', 'jobs', { ready: (on) => on.getByRole('link', { name: 'New job' }).waitFor() });
  await expectFitsPhone('/console/runs', 'runs', { ready: (on) => on.getByRole('button', { name: 'Filter' }).waitFor() });
});

it('shows a source\'s refused deliveries within the screen', async () => {
  await expectFitsPhone(`/console/sources/${sourceId}`, 'source', { ready: (on) => on.getByText('signature_missing').waitFor() });
});

it.each([
  ['activity', () => '/console/activity'],
  ['delivery', () => `/console/activity/${activityId}`],
  ['sources', () => '/console/sources'],
  ['subscriptions', () => '/console/subscriptions'],
  ['targets', () => '/console/targets'],
  ['connections', () => '/console/connections'],
  ['new-job', () => '/console/jobs/new'],
  ['edit-job', () => `/console/jobs/${job.id}/edit`],
  ['backtest', () => `/console/jobs/${job.id}/backtest`],
])('fits the %s page to the screen too', async (shot, url) => {
  await expectFitsPhone(url(), shot, { ready: (on) => on.getByRole('heading', { level: 1 }).waitFor() });
});

it('serves the API reference at a phone\'s width, an operation open too', async () => {
  await expectFitsPhone('/docs', 'docs', { scope: '#swagger-ui', ready: (on) => on.locator('.opblock').first().waitFor() });
  expect(await page.locator('meta[name=viewport]').getAttribute('content')).toBe('width=device-width, initial-scale=1');
  await expectFitsPhone('/docs', 'docs-operation', {
    scope: '#swagger-ui',
    ready: async (on) => {
      await on.locator('#operations-Jobs-invokeJob .opblock-summary-control').click();
      await on.getByRole('button', { name: 'Try it out' }).waitFor();
    },
  });
});
