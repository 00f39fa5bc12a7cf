import type { Page } from 'playwright-core';
import { bearer, newTestKey } from '../helpers/app';
import { browserTest } from '../helpers/browser';
import { consoleBrowserSuite, shot, signInAs as consoleSignIn, watchedPage as watchedConsolePage } from '../helpers/consoleBrowser';
import { createCustomer, createFcSession, createPendingAuthentication, createPrice, createVerificationSession, form } from '../helpers/fixtures';
import { createForwardingRequest } from '../helpers/forwarding';
import { until } from '../helpers/queues';

// The console's test clocks, test outcomes and data pages in a real browser (Debian chromium via
// playwright-core), with the workers running: advancing a test clock from its page until it shows
// ready with what the advance did, completing a 3-D Secure payment from the outcomes page, and a
// data reset with its typed confirmation. Screenshots go to test-artifacts/console/ (gitignored).

const test = browserTest();

const suite = consoleBrowserSuite('console_tools_browser');

// A refused form (400) is logged by the browser as a failed load: expected here.
const watchedPage = () => watchedConsolePage(suite.browser, /status of 40\d/);
const signInAs = (page: Page, key: string) => consoleSignIn(page, suite.origin, key);

const api = (key: string) => ({
  get: (p: string) => suite.e.t.http().get(p).set(bearer(key)),
  post: (p: string, body: Record<string, unknown>) => suite.e.t.http().post(p).set(bearer(key)).type('form').send(form(body)),
});

/** The text of a selector, or undefined while the page is between loads (its refresh). */
const textOf = (page: Page, selector: string) => page.textContent(selector).catch(() => undefined);

test('advance a test clock: fill advance-to, click advance; the page shows the clock ready at the new time and the advance’s events', async () => {
  const key = newTestKey();
  const { get, post } = api(key);
  const clock = (await post('/v1/test_helpers/test_clocks', { frozen_time: 1704067200, name: 'Monthly renewals' })).body;
  const customer = await createCustomer(suite.e.t, key, { test_clock: clock.id, email: 'clocked@example.com', payment_method: 'pm_card_visa' });
  const pm = (await get(`/v1/payment_methods?customer=${customer.id}`)).body.data[0].id;
  await post(`/v1/customers/${customer.id}`, { invoice_settings: { default_payment_method: pm } });
  const price = await createPrice(suite.e.t, key, { unit_amount: 1500, currency: 'usd', recurring: { interval: 'month' }, product_data: { name: 'Gold' } });
  const sub = (await post('/v1/subscriptions', { customer: customer.id, items: [{ price: price.id }] })).body;

  const { page, problems } = await watchedPage();
  try {
    await signInAs(page, key);
    await Promise.all([page.waitForURL(`${suite.origin}/console/clocks`), page.click('nav >> text=Test clocks')]);
    expect(await page.locator('[data-test="object-row"]').count()).toBe(1);
    await shot(page, 'clocks');
    await Promise.all([page.waitForURL(`${suite.origin}/console/clocks/${clock.id}`), page.click(`a[href="/console/clocks/${clock.id}"]`)]);
    expect(await page.textContent('[data-test="clock-customers"]')).toContain(customer.id);
    expect(await page.textContent('[data-test="clock-subscriptions"]')).toContain(sub.id);
    await shot(page, 'clock');

    await page.fill('[data-test="advance-to"]', '2024-02-01T00:00');
    await Promise.all([page.waitForURL(`${suite.origin}/console/clocks/${clock.id}`), page.click('[data-test="advance"]')]);
    // The page refreshes itself while the clock advances, until it is ready.
    await until(async () => (await textOf(page, '[data-test="clock-status"]')) === 'ready', 30000, 'the page showing the clock ready');
    expect(await page.textContent('td[data-test="clock-frozen-time"]')).toBe('2024-02-01 00:00:00Z');
    const last = (await page.textContent('[data-test="clock-last-advance"]'))!;
    expect(last).toContain('test_helpers.test_clock.advancing');
    expect(last).toContain('test_helpers.test_clock.ready');
    expect(last).toContain('invoice.created');
    expect(last).toContain('invoice.paid');
    expect((await get(`/v1/test_helpers/test_clocks/${clock.id}`)).body).toMatchObject({ status: 'ready', frozen_time: 1706745600 });
    expect((await get(`/v1/invoices?subscription=${sub.id}`)).body.data).toHaveLength(2);
    await shot(page, 'clock-advanced');

    // A new clock from the list's form.
    await page.goto(`${suite.origin}/console/clocks`);
    await page.fill('[data-test="clock-name"]', 'From the console');
    await page.fill('[data-test="clock-frozen-time"]', '2025-06-01T12:30');
    await Promise.all([page.waitForURL(/\/console\/clocks\/clock_/), page.click('[data-test="clock-create"]')]);
    expect(await page.textContent('td[data-test="clock-frozen-time"]')).toBe('2025-06-01 12:30:00Z');
    expect(problems).toEqual([]);
  } finally {
    await page.close();
  }
});

test('complete a 3DS payment from the outcomes page: the PaymentIntent is succeeded', async () => {
  const key = newTestKey();
  const pending = await createPendingAuthentication(suite.e.t, key);
  await createVerificationSession(suite.e.t, key, { type: 'document' });
  const forwarded = await createForwardingRequest(suite.e.t, key);
  const fc = await createFcSession(suite.e.t, key);
  const { page, problems } = await watchedPage();
  try {
    await signInAs(page, key);
    await Promise.all([page.waitForURL(`${suite.origin}/console/outcomes`), page.click('nav >> text=Test outcomes')]);
    const row = page.locator('[data-test="authentications"] [data-test="object-row"]');
    expect(await row.count()).toBe(1);
    expect(await row.textContent()).toContain(pending.paymentIntent);
    expect(await page.textContent('[data-test="forwards"] [data-test="object-row"]')).toContain(forwarded.id);
    expect(await page.textContent('[data-test="financial-connections"] [data-test="object-row"]')).toContain(fc.id);
    await shot(page, 'outcomes');
    await Promise.all([page.waitForURL(/done=authentication/), row.locator('[data-test="authentication-complete"]').click()]);
    expect(await page.textContent('[data-test="outcome-done"]')).toContain('succeeded');
    expect(await page.locator('[data-test="authentications"] [data-test="object-row"]').count()).toBe(0);
    expect((await api(key).get(`/v1/payment_intents/${pending.paymentIntent}`)).body.status).toBe('succeeded');
    await shot(page, 'outcomes-completed');
    expect(problems).toEqual([]);
  } finally {
    await page.close();
  }
});

test('reset the data: a wrong confirmation is refused, the account id resets it, and the session goes on', async () => {
  const key = newTestKey();
  await createCustomer(suite.e.t, key, { name: 'Going away' });
  const account = (await api(key).get('/v1/account')).body.id;
  const { page, problems } = await watchedPage();
  try {
    await signInAs(page, key);
    await Promise.all([page.waitForURL(`${suite.origin}/console/data`), page.click('nav >> text=Data')]);
    await shot(page, 'data');
    await page.fill('[data-test="reset-confirm"]', 'reset');
    await Promise.all([page.waitForURL(`${suite.origin}/console/data/reset`), page.click('[data-test="reset"]')]);
    expect(await page.textContent('[data-test="reset-refused"]')).toContain('Nothing was deleted');
    expect((await api(key).get('/v1/customers')).body.data).toHaveLength(1);
    await shot(page, 'data-refused');
    await page.fill('[data-test="reset-confirm"]', account);
    await Promise.all([page.waitForURL(/\/console\/data\?deleted=\d+/), page.click('[data-test="reset"]')]);
    expect(await page.textContent('[data-test="reset-done"]')).toContain('objects deleted');
    expect((await api(key).get('/v1/customers')).body.data).toEqual([]);
    await shot(page, 'data-reset');
    // Still signed in.
    await Promise.all([page.waitForURL(`${suite.origin}/console`), page.click('nav >> text=Home')]);
    expect(await page.title()).toBe('Home · Sandbank console');
    expect(problems).toEqual([]);
  } finally {
    await page.close();
  }
});
