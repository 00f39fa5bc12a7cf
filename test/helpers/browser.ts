import { chromium, type Browser } from 'playwright-core';

// Debian's chromium driven by playwright-core, for the hosted pages. CI installs the package
// (.ci/run); CHROMIUM_PATH points elsewhere when it lives somewhere else.

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--no-first-run'],
  });
}
