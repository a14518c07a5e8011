// Debian's Chromium driven by playwright-core: one browser and a fresh context per test file.
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface TestBrowser {
  browser: Browser;
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchBrowser(options: BrowserContextOptions = {}): Promise<TestBrowser> {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ARGS,
  });
  try {
    const context = await browser.newContext(options);
    return {
      browser,
      context,
      async close() {
        await context.close();
        await browser.close();
      },
    };
  } catch (error) {
    await browser.close();
    throw error;
  }
}

export interface PageActivity {
  /** Every URL the page requested, in order. */
  requests: string[];
  /** Console errors and uncaught exceptions, as text. */
  errors: string[];
}

/** Records what a page does, so a test can assert it stayed on its origin and raised no error. */
export function watchPage(page: Page): PageActivity {
  const activity: PageActivity = { requests: [], errors: [] };
  page.on('request', (request) => activity.requests.push(request.url()));
  page.on('console', (message) => {
    // A failed load's text names only the status; the location names the resource.
    if (message.type() === 'error') activity.errors.push(`${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => activity.errors.push(String(error)));
  return activity;
}
