import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { bearer, newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { browserTest, launchBrowser } from '../../helpers/browser';
import { createCustomer, form } from '../../helpers/fixtures';

// Skipped without chromium (one loud line says so), failing instead under CI=true.
const test = browserTest();

// The hosted 3-D Secure challenge in a real browser (Debian chromium via playwright-core): a
// SetupIntent's redirect_to_url completed and failed, back at its return_url on a test server of
// this machine with the redirect parameters, and a used link saying so; then the Stripe.js
// stand-in (`/hosted/payments/sandbank-stripe.js`) on an integrator's page of another origin:
// confirmCardSetup through the challenge popup (completed, failed), a card needing nothing, a
// decline, and handleNextAction for an intent confirmed on the server.

let t: TestApp;
let browser: Browser;
let site: Server;
let siteOrigin: string;
/** Every request the integrator's site got (the return URL's arrivals). */
const arrivals: URL[] = [];

beforeAll(async () => {
  t = await startTestApp({}, { publicUrl: true });
  browser = await launchBrowser();
  // The integrator's site: a checkout page and the page customers come back to.
  site = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    arrivals.push(url);
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><head><title>${url.pathname === '/return' ? 'Returned' : 'Checkout'}</title></head><body><h1>${url.pathname}</h1></body></html>`);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => (site ? site.close(() => resolve()) : resolve()));
  await t?.close();
});

const SI = '/v1/setup_intents';
const post = (key: string, path: string, body: Record<string, unknown>) => t.http().post(path).set(bearer(key)).type('form').send(form(body));
const retrieve = async (key: string, id: string) => (await t.http().get(`${SI}/${id}`).set(bearer(key))).body;

/** A page that records script errors and CSP violations on the hosted pages. */
async function watchedPage(): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`${page.url()}: ${m.text()}`);
  });
  return { page, errors };
}

/** A SetupIntent of a new customer waiting on the challenge, with `return_url` on the test site. */
async function challenged(key: string, card = 'pm_card_authenticationRequired') {
  const customer = (await createCustomer(t, key)).id;
  const returnUrl = `${siteOrigin}/return?order=42`;
  const res = await post(key, SI, { customer, payment_method: card, confirm: true, return_url: returnUrl });
  expect(res.body).toMatchObject({ status: 'requires_action', next_action: { type: 'redirect_to_url' } });
  return { customer, intent: res.body, url: res.body.next_action.redirect_to_url.url as string };
}

test('redirect_to_url: "Complete authentication" sets the card up and lands on return_url with the redirect parameters; the link then says it was used', async () => {
  const key = newTestKey();
  const { customer, intent, url } = await challenged(key);
  const { page, errors } = await watchedPage();
  try {
    const shown = await page.goto(url);
    expect(shown?.status()).toBe(200);
    expect(await page.title()).toBe('3D Secure test authentication');
    expect(await page.textContent('#complete')).toBe('Complete authentication');
    expect(await page.textContent('#fail')).toBe('Fail authentication');
    await page.screenshot({ path: '/tmp/seti-3ds-page.png', fullPage: true });
    await Promise.all([page.waitForURL(`${siteOrigin}/return?**`), page.click('#complete')]);
    const back = new URL(page.url());
    expect(Object.fromEntries(back.searchParams)).toEqual({ order: '42', setup_intent: intent.id, setup_intent_client_secret: intent.client_secret, redirect_status: 'succeeded' });
    expect(await page.title()).toBe('Returned');
    expect(await retrieve(key, intent.id)).toMatchObject({ status: 'succeeded', customer, payment_method: intent.payment_method, next_action: null });
    expect(errors).toEqual([]);

    const again = await page.goto(url);
    expect(again?.status()).toBe(410);
    expect(await page.textContent('h1')).toBe('This authentication has already been answered');
    await page.screenshot({ path: '/tmp/seti-3ds-used.png', fullPage: true });
  } finally {
    await page.close();
  }
});

test('redirect_to_url: "Fail authentication" lands on return_url with redirect_status=failed; the intent wants another card', async () => {
  const key = newTestKey();
  const { intent, url } = await challenged(key, 'pm_card_authenticationRequiredOnSetup');
  const { page, errors } = await watchedPage();
  try {
    await page.goto(url);
    await Promise.all([page.waitForURL(`${siteOrigin}/return?**`), page.click('#fail')]);
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toMatchObject({ setup_intent: intent.id, redirect_status: 'failed' });
    expect(await retrieve(key, intent.id)).toMatchObject({
      status: 'requires_payment_method',
      payment_method: null,
      last_setup_error: { code: 'setup_intent_authentication_failure' },
    });
    expect(errors).toEqual([]);
  } finally {
    await page.close();
  }
});

describe('the Stripe.js stand-in', () => {
  /** The integrator's checkout page on the test site, with the stand-in loaded from the sandbox. */
  async function checkout(): Promise<{ page: Page; errors: string[] }> {
    const watched = await watchedPage();
    await watched.page.goto(`${siteOrigin}/checkout`);
    await watched.page.addScriptTag({ url: `${t.config.publicUrl}/hosted/payments/sandbank-stripe.js` });
    return watched;
  }

  /** Starts `call` (a stand-in call on `window.stripe`) and keeps its promise in `window.result`. */
  const start = (page: Page, key: string, call: string, args: unknown[]) =>
    page.evaluate(
      ({ key, call, args }) => {
        const w = globalThis as any;
        // The platform's publishable key, as a front end has it.
        w.stripe = w.Sandbank(`pk_test_${key.slice('sk_test_'.length)}`);
        w.result = w.stripe[call](...args);
      },
      { key, call, args },
    );
  const result = (page: Page) => page.evaluate(() => (globalThis as any).result);

  test('confirmCardSetup: the challenge opens in a popup; completed, it resolves {setupIntent} succeeded', async () => {
    const key = newTestKey();
    const customer = (await createCustomer(t, key)).id;
    const intent = (await post(key, SI, { customer })).body;
    const { page, errors } = await checkout();
    try {
      const [popup] = await Promise.all([
        page.waitForEvent('popup'),
        start(page, key, 'confirmCardSetup', [intent.client_secret, { payment_method: 'pm_card_authenticationRequiredOnSetup' }]),
      ]);
      await popup.waitForLoadState();
      expect(await popup.title()).toBe('3D Secure test authentication');
      await popup.screenshot({ path: '/tmp/seti-3ds-popup.png', fullPage: true });
      await popup.click('#complete');
      const done = await result(page);
      expect(done.error).toBeUndefined();
      expect(done.setupIntent).toMatchObject({ id: intent.id, object: 'setup_intent', status: 'succeeded', customer });
      expect(await retrieve(key, intent.id)).toMatchObject({ status: 'succeeded' });
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  test('confirmCardSetup: failed in the popup, it resolves {error} with setup_intent_authentication_failure and the intent', async () => {
    const key = newTestKey();
    const intent = (await post(key, SI, {})).body;
    const { page, errors } = await checkout();
    try {
      const [popup] = await Promise.all([page.waitForEvent('popup'), start(page, key, 'confirmCardSetup', [intent.client_secret, { payment_method: 'pm_card_authenticationRequired' }])]);
      await popup.waitForLoadState();
      await popup.click('#fail');
      const done = await result(page);
      expect(done.setupIntent).toBeUndefined();
      expect(done.error).toMatchObject({ code: 'setup_intent_authentication_failure', setup_intent: { id: intent.id, status: 'requires_payment_method' } });
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  test('confirmCardSetup without a challenge: a card needing none resolves at once; a declining card resolves {error} card_declined', async () => {
    const key = newTestKey();
    const { page, errors } = await checkout();
    try {
      const ok = (await post(key, SI, {})).body;
      await start(page, key, 'confirmCardSetup', [ok.client_secret, { payment_method: 'pm_card_visa' }]);
      expect((await result(page)).setupIntent).toMatchObject({ id: ok.id, status: 'succeeded' });
      const declined = (await post(key, SI, {})).body;
      await start(page, key, 'confirmCardSetup', [declined.client_secret, { payment_method: 'pm_card_chargeDeclined' }]);
      const failed = await result(page);
      expect(failed.error).toMatchObject({ type: 'card_error', code: 'card_declined', decline_code: 'generic_decline' });
      await start(page, key, 'retrieveSetupIntent', [declined.client_secret]);
      expect((await result(page)).setupIntent).toMatchObject({ id: declined.id, status: 'requires_payment_method' });
      // A malformed client secret is refused before any request.
      await start(page, key, 'confirmCardSetup', ['nope', {}]);
      expect((await result(page)).error).toMatchObject({ type: 'validation_error' });
      // The decline is logged by the browser as a failed request; nothing else went wrong.
      expect(errors.filter((e) => !e.includes('402'))).toEqual([]);
    } finally {
      await page.close();
    }
  });

  test('confirmCardSetup with a return_url: the whole page goes to the challenge (redirect_to_url) and comes back to it', async () => {
    const key = newTestKey();
    const intent = (await post(key, SI, {})).body;
    const { page, errors } = await checkout();
    try {
      const returnUrl = `${siteOrigin}/return?step=saved`;
      await Promise.all([
        page.waitForURL(`${t.config.publicUrl}/hosted/three_d_secure/**`),
        start(page, key, 'confirmCardSetup', [intent.client_secret, { payment_method: 'pm_card_authenticationRequired', return_url: returnUrl }]),
      ]);
      await Promise.all([page.waitForURL(`${siteOrigin}/return?**`), page.click('#complete')]);
      expect(Object.fromEntries(new URL(page.url()).searchParams)).toMatchObject({ step: 'saved', setup_intent: intent.id, redirect_status: 'succeeded' });
      expect((await retrieve(key, intent.id)).status).toBe('succeeded');
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  test('a challenge popup closed unanswered resolves {error}; the intent still waits on it', async () => {
    const key = newTestKey();
    const intent = (await post(key, SI, {})).body;
    const { page } = await checkout();
    try {
      const [popup] = await Promise.all([page.waitForEvent('popup'), start(page, key, 'confirmCardSetup', [intent.client_secret, { payment_method: 'pm_card_authenticationRequired' }])]);
      await popup.waitForLoadState();
      await popup.close();
      const done = await result(page);
      expect(done.error).toMatchObject({ code: 'setup_intent_authentication_failure', setup_intent: { id: intent.id, status: 'requires_action' } });
      expect((await retrieve(key, intent.id)).status).toBe('requires_action');
    } finally {
      await page.close();
    }
  });

  test('handleNextAction: an intent confirmed on the server (use_stripe_sdk) is authenticated in the popup', async () => {
    const key = newTestKey();
    const intent = (await post(key, SI, { payment_method: 'pm_card_threeDSecure2Required', confirm: true, allowed_payment_method_types: ['card'] })).body;
    expect(intent.next_action).toMatchObject({ type: 'use_stripe_sdk' });
    const { page, errors } = await checkout();
    try {
      const [popup] = await Promise.all([page.waitForEvent('popup'), start(page, key, 'handleNextAction', [{ clientSecret: intent.client_secret }])]);
      await popup.waitForLoadState();
      await popup.click('#complete');
      expect((await result(page)).setupIntent).toMatchObject({ id: intent.id, status: 'succeeded' });
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

describe('the Stripe.js stand-in with PaymentIntents', () => {
  const PI = '/v1/payment_intents';
  /** A card PaymentIntent of 20.00 USD (cards only), not confirmed. */
  const intentOf = async (key: string, params: Record<string, unknown> = {}) =>
    (await post(key, PI, { amount: 2000, currency: 'usd', allowed_payment_method_types: ['card'], ...params })).body;
  const retrieveIntent = async (key: string, id: string) => (await t.http().get(`${PI}/${id}`).set(bearer(key))).body;

  async function checkout(): Promise<{ page: Page; errors: string[] }> {
    const watched = await watchedPage();
    await watched.page.goto(`${siteOrigin}/checkout`);
    await watched.page.addScriptTag({ url: `${t.config.publicUrl}/hosted/payments/sandbank-stripe.js` });
    return watched;
  }
  const start = (page: Page, key: string, call: string, args: unknown[]) =>
    page.evaluate(
      ({ key, call, args }) => {
        const w = globalThis as any;
        w.stripe = w.Sandbank(`pk_test_${key.slice('sk_test_'.length)}`);
        w.result = w.stripe[call](...args);
      },
      { key, call, args },
    );
  const result = (page: Page) => page.evaluate(() => (globalThis as any).result);

  test('confirmCardPayment: completed in the popup, {paymentIntent} succeeded with its charge', async () => {
    const key = newTestKey();
    const intent = await intentOf(key);
    const { page, errors } = await checkout();
    try {
      const [popup] = await Promise.all([page.waitForEvent('popup'), start(page, key, 'confirmCardPayment', [intent.client_secret, { payment_method: 'pm_card_authenticationRequired' }])]);
      await popup.waitForLoadState();
      expect(await popup.textContent('#intent')).toBe(intent.id);
      await popup.click('#complete');
      const done = await result(page);
      expect(done.error).toBeUndefined();
      expect(done.paymentIntent).toMatchObject({ id: intent.id, object: 'payment_intent', status: 'succeeded', amount_received: 2000 });
      expect((await retrieveIntent(key, intent.id)).latest_charge).toMatch(/^ch_/);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  test('confirmCardPayment: failed in the popup, {error} payment_intent_authentication_failure; a decline, {error} card_declined', async () => {
    const key = newTestKey();
    const intent = await intentOf(key);
    const { page, errors } = await checkout();
    try {
      const [popup] = await Promise.all([page.waitForEvent('popup'), start(page, key, 'confirmCardPayment', [intent.client_secret, { payment_method: 'pm_card_threeDSecure2Required' }])]);
      await popup.waitForLoadState();
      await popup.click('#fail');
      const failed = await result(page);
      expect(failed.error).toMatchObject({ code: 'payment_intent_authentication_failure', payment_intent: { id: intent.id, status: 'requires_payment_method' } });
      await start(page, key, 'confirmCardPayment', [intent.client_secret, { payment_method: 'pm_card_chargeDeclinedInsufficientFunds' }]);
      expect((await result(page)).error).toMatchObject({ type: 'card_error', code: 'card_declined', decline_code: 'insufficient_funds' });
      await start(page, key, 'confirmCardPayment', [intent.client_secret, { payment_method: 'pm_card_visa' }]);
      expect((await result(page)).paymentIntent).toMatchObject({ id: intent.id, status: 'succeeded' });
      await start(page, key, 'retrievePaymentIntent', [intent.client_secret]);
      expect((await result(page)).paymentIntent).toMatchObject({ id: intent.id, status: 'succeeded' });
      expect(errors.filter((e) => !e.includes('402'))).toEqual([]);
    } finally {
      await page.close();
    }
  });

  test('handleNextAction of a PaymentIntent confirmed on the server; redirect_to_url returns with payment_intent parameters', async () => {
    const key = newTestKey();
    const sdk = await intentOf(key, { payment_method: 'pm_card_authenticationRequired', confirm: true });
    expect(sdk.next_action).toMatchObject({ type: 'use_stripe_sdk' });
    const { page, errors } = await checkout();
    try {
      const [popup] = await Promise.all([page.waitForEvent('popup'), start(page, key, 'handleNextAction', [{ clientSecret: sdk.client_secret }])]);
      await popup.waitForLoadState();
      await popup.click('#complete');
      expect((await result(page)).paymentIntent).toMatchObject({ id: sdk.id, status: 'succeeded' });

      const redirected = await intentOf(key, { payment_method: 'pm_card_authenticationRequired', confirm: true, return_url: `${siteOrigin}/return?cart=7` });
      await page.goto(redirected.next_action.redirect_to_url.url);
      await Promise.all([page.waitForURL(`${siteOrigin}/return?**`), page.click('#complete')]);
      expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual({
        cart: '7',
        payment_intent: redirected.id,
        payment_intent_client_secret: redirected.client_secret,
        redirect_status: 'succeeded',
      });
      expect((await retrieveIntent(key, redirected.id)).status).toBe('succeeded');
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
