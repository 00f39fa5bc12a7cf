import type { Page } from 'playwright-core';
import { bearer, newTestKey } from '../helpers/app';
import { browserTest } from '../helpers/browser';
import { consoleBrowserSuite, shot, signInAs as consoleSignIn, watchedPage as watchedConsolePage } from '../helpers/consoleBrowser';
import { createCustomer } from '../helpers/fixtures';
import { until } from '../helpers/queues';
import { createReceivingEndpoint } from '../helpers/webhooks';

// Skipped without chromium (one loud line says so), failing instead under CI=true.
const test = browserTest();

// The events, webhook endpoints and requests pages in a real browser (Debian chromium via
// playwright-core), with the workers running: open an event and resend it to a local receiver,
// create an endpoint and see its secret once, and follow a request from the log. Each page is
// saved as a screenshot in test-artifacts/console/ (gitignored), to look at.

const suite = consoleBrowserSuite('console_events_browser');
const watchedPage = () => watchedConsolePage(suite.browser, /status of 4\d\d/);
const signInAs = (page: Page, key: string) => consoleSignIn(page, suite.origin, key);

test('open an event and resend it to a local receiver: the receiver gets it twice and the page shows the new attempt', async () => {
  const key = newTestKey();
  suite.e.receiver.reply('/browser/flaky', { status: 500, body: '{"error":"not now"}' });
  const flaky = await createReceivingEndpoint(suite.e.t, suite.e.receiver, key, '/browser/flaky');
  const receiving = await createReceivingEndpoint(suite.e.t, suite.e.receiver, key, '/browser/receiver');
  await createCustomer(suite.e.t, key, { name: 'Jenny Rosen', email: 'jenny@example.com' });
  const [event] = (await suite.e.t.http().get('/v1/events?type=customer.created').set(bearer(key))).body.data;
  const received = () => suite.e.receiver.on(receiving.path).filter((r) => JSON.parse(r.body).id === event.id);
  const attempts = async (endpoint: string) => (await suite.e.t.http().get(`/sandbox/v1/webhook_endpoints/${endpoint}/deliveries?event=${event.id}`).set(bearer(key))).body.data;
  await until(async () => (await attempts(receiving.id)).some((a: any) => a.succeeded) && (await attempts(flaky.id)).length > 0, 15000, 'the first deliveries');
  expect(received()).toHaveLength(1);

  const { page, problems } = await watchedPage();
  try {
    await signInAs(page, key);
    await Promise.all([page.waitForURL(`${suite.origin}/console/events`), page.click('nav >> text=Events')]);
    const shown = await page.locator('[data-test="object-row"]').count();
    expect(shown).toBeGreaterThanOrEqual(1);
    expect(await page.locator('[data-test="new-events"]').isVisible()).toBe(false);
    // A new event while the list is open: its script says so, and the link shows it.
    await createCustomer(suite.e.t, key, { name: 'Later' });
    await page.waitForSelector('[data-test="new-events"]', { state: 'visible', timeout: 12000 });
    expect(await page.textContent('[data-test="new-events"]')).toContain('1 new event');
    await shot(page, 'events');
    await Promise.all([page.waitForNavigation(), page.click('[data-test="new-events"] a')]);
    expect(await page.locator('[data-test="object-row"]').count()).toBe(shown + 1);
    await page.fill('[data-test="event-type"]', 'customer.*');
    await Promise.all([page.waitForURL(/type=customer/), page.click('button:has-text("Filter")')]);
    expect(await page.locator('[data-test="object-row"]').count()).toBe(2);
    await Promise.all([page.waitForURL(`${suite.origin}/console/events/${event.id}`), page.click(`a[href="/console/events/${event.id}"]`)]);
    expect(JSON.parse((await page.textContent('[data-test="object-json"]'))!).id).toBe(event.id);
    const deliveries = page.locator('[data-test="delivery"]');
    expect(await deliveries.count()).toBe(2);
    const row = page.locator(`[data-test="delivery"][data-endpoint="${receiving.id}"]`);
    expect(await row.locator('[data-test="attempt"]').count()).toBe(1);
    expect(await page.locator(`[data-test="delivery"][data-endpoint="${flaky.id}"]`).textContent()).toContain('not now');
    await shot(page, 'event');

    await Promise.all([page.waitForURL(/resent=/), row.locator('[data-test="resend"]').click()]);
    expect(await page.textContent('[data-test="resent"]')).toContain(receiving.id);
    await until(() => received().length === 2, 15000, 'the resent event');
    // The attempt is recorded as it ends; the page shows it once reloaded.
    await until(
      async () => {
        await page.reload();
        return (await row.locator('[data-test="attempt"]').count()) === 2;
      },
      15000,
      'the new attempt on the page',
    );
    expect(await row.locator('[data-test="attempt"]').first().textContent()).toContain('200');
    await shot(page, 'event-resent');
    expect(problems).toEqual([]);
  } finally {
    await page.close();
  }
});

test('create a webhook endpoint: its secret shows once; disable it; then follow a request from the log', async () => {
  const key = newTestKey();
  const { page, problems } = await watchedPage();
  try {
    await signInAs(page, key);
    await Promise.all([page.waitForURL(`${suite.origin}/console/webhooks`), page.click('nav >> text=Webhooks')]);
    await shot(page, 'webhooks-empty');
    await page.fill('[data-test="endpoint-url"]', suite.e.receiver.url('/browser/created'));
    await page.fill('[data-test="endpoint-events"]', 'customer.created, invoice.paid');
    await Promise.all([page.waitForNavigation(), page.click('[data-test="endpoint-create"]')]);
    const secret = (await page.textContent('[data-test="endpoint-secret"]'))!;
    expect(secret).toMatch(/^whsec_/);
    expect(page.url()).toBe(`${suite.origin}/console/webhooks`);
    await shot(page, 'webhook-created');
    await page.goto(`${suite.origin}/console/webhooks`);
    expect(await page.content()).not.toContain(secret);
    await Promise.all([page.waitForURL(`${suite.origin}/console/webhooks`), page.click('[data-test="endpoint-disable"]')]);
    expect(await page.locator('[data-test="endpoint-enable"]').count()).toBe(1);
    await shot(page, 'webhooks');

    await Promise.all([page.waitForURL(`${suite.origin}/console/requests`), page.click('nav >> text=Requests')]);
    const create = page.locator('[data-test="object-row"]', { hasText: 'POST /v1/webhook_endpoints' }).last();
    expect(await create.textContent()).toContain('console');
    await shot(page, 'requests');
    await Promise.all([page.waitForURL(/\/console\/requests\/req_/), create.locator('a').click()]);
    expect(await page.textContent('[data-test="request-status"]')).toContain('200');
    await shot(page, 'request');
    expect(problems).toEqual([]);
  } finally {
    await page.close();
  }
});
