// Swagger UI at /docs in Chromium: every operation of the contract renders, and the page needs nothing
// but this server (no CDN, no validator badge) and raises no error.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { load as parse } from 'js-yaml';
import { launchBrowser, watchPage, type PageActivity, type TestBrowser } from '../support/browser';
import { startListeningApp, type ListeningApp } from '../support/server';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

interface Operation {
  operationId: string;
  tags?: string[];
}

/** Swagger UI's id for an operation's block under each of its tags (`default` when it has none). */
function expectedBlockIds(): string[] {
  const contract = parse(readFileSync(path.join(__dirname, '../../openapi/openapi.yaml'), 'utf8')) as { paths: unknown; webhooks?: unknown };
  const operationsOf = (items: unknown) =>
    Object.values((items ?? {}) as Record<string, Record<string, Operation>>).flatMap((item) => METHODS.flatMap((method) => (item[method] ? [item[method]] : [])));
  return [
    ...operationsOf(contract.paths).flatMap(({ operationId, tags = ['default'] }) => tags.map((tag) => `operations-${tag.replace(/\s/g, '_')}-${operationId}`)),
    // The outbound events of the `webhooks` section have a section of their own.
    ...operationsOf(contract.webhooks).map(({ operationId }) => `operations-webhooks-${operationId}`),
  ];
}

let server: ListeningApp;
let browser: TestBrowser;
let page: Page;
let activity: PageActivity;

beforeAll(async () => {
  server = await startListeningApp();
  browser = await launchBrowser({ baseURL: server.url });
  page = await browser.context.newPage();
  activity = watchPage(page);
  await page.goto('/docs', { waitUntil: 'networkidle' });
  await page.locator('.swagger-ui .opblock').first().waitFor();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

test('renders a block for every operation of the contract, and no other', async () => {
  const expected = expectedBlockIds();
  expect(expected.length).toBeGreaterThan(0);
  const rendered = await page.locator('.swagger-ui .opblock').evaluateAll((blocks) => blocks.map((block) => block.id));
  expect(rendered.sort()).toEqual(expected.sort());
});

test('loads nothing from another origin', () => {
  expect(activity.requests).toContain(`${server.url}/openapi.json`);
  const foreign = activity.requests.filter((url) => new URL(url).origin !== server.url);
  expect(foreign).toEqual([]);
});

test('logs no console error', () => {
  expect(activity.errors).toEqual([]);
});
