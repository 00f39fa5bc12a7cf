import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

// Debian's chromium driven by playwright-core, for the hosted pages. CI installs the package
// (.ci/run); CHROMIUM_PATH points elsewhere when it lives somewhere else. Without it the browser
// tests are skipped, with one loud line from globalSetup, except under CI=true, where they fail:
// CI must never pass by skipping them.

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** What the browser tests do here: run, be skipped (no chromium), or fail (no chromium, CI). */
export function browserTestMode(env: NodeJS.ProcessEnv, chromiumFound: boolean): 'run' | 'skip' | 'fail' {
  if (chromiumFound) return 'run';
  const ci = env.CI !== undefined && env.CI !== '' && env.CI !== 'false' && env.CI !== '0';
  return ci ? 'fail' : 'skip';
}

export const BROWSER_TEST_MODE = browserTestMode(process.env, existsSync(CHROMIUM_PATH));

export const MISSING_CHROMIUM = `no chromium at ${CHROMIUM_PATH}: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH`;

/** `test` for the browser tests: skipped where there is no chromium and this isn't CI. */
export const browserTest = (): jest.It => (BROWSER_TEST_MODE === 'skip' ? test.skip : test);

export function launchBrowser(): Promise<Browser> {
  if (BROWSER_TEST_MODE === 'fail') throw new Error(`${MISSING_CHROMIUM} (CI=true: the browser tests fail rather than being skipped)`);
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--no-first-run'],
  });
}
