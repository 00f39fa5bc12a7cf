import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from './browser';
import { startEventsTestApp, type EventsTestApp } from './eventsApp';

// The console's browser tests share these: a page that records what would be a problem (a script
// error, a CSP violation, a dialog: an alert would be an XSS), screenshots saved to
// test-artifacts/console/ (gitignored) to look at, and signing in through the form.

export const CONSOLE_ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts', 'console');

/**
 * A new page and the problems it records. `expectedStatus`: failed loads the browser logs that the
 * test expects (a 404 page for another key's id, a refused form's 400).
 */
export async function watchedPage(browser: Browser, expectedStatus = /status of 404/): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.setDefaultTimeout(8000);
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !expectedStatus.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  page.on('dialog', (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  return { page, problems };
}

/** The whole page as test-artifacts/console/<name>.png. */
export const shot = (page: Page, name: string) => page.screenshot({ path: path.join(CONSOLE_ARTIFACTS, `${name}.png`), fullPage: true });

/** Signs in with `key` through the sign-in form (the console's own redirect to it first). */
export async function signInAs(page: Page, origin: string, key: string): Promise<void> {
  await page.goto(`${origin}/console`);
  expect(new URL(page.url()).pathname).toBe('/console/sign-in');
  await page.fill('[data-test="console-key"]', key);
  await Promise.all([page.waitForURL(`${origin}/console`), page.click('[data-test="console-signin"]')]);
}

/** What a console browser suite runs against: the app with its workers, the browser, the app's origin. */
export interface ConsoleBrowserSuite {
  readonly e: EventsTestApp;
  readonly browser: Browser;
  readonly origin: string;
}

/** Starts the app (`name`: its database and queues) and chromium before the suite's tests, and stops both after. */
export function consoleBrowserSuite(name: string): ConsoleBrowserSuite {
  const suite = {} as { e: EventsTestApp; browser: Browser; origin: string };
  beforeAll(async () => {
    mkdirSync(CONSOLE_ARTIFACTS, { recursive: true });
    suite.e = await startEventsTestApp(name);
    suite.browser = await launchBrowser();
    suite.origin = `http://127.0.0.1:${suite.e.t.port}`;
  });
  afterAll(async () => {
    await suite.browser?.close();
    await suite.e?.close();
  });
  return suite;
}
