import { bearer, newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { accountOfKey, emitTestEvent } from '../../helpers/events';
import { createAccount, createAccountSession, createAppSecret, createVerificationReport, createWebhookEndpoint, form, linkFcAccounts, refreshFcAccount } from '../../helpers/fixtures';
import { RESET_TABLES } from '../../../src/resources/sandbox/data/service';
import { forwardingHarness } from '../../helpers/forwarding';

// DELETE /sandbox/v1/data: a key's platform and its connected accounts start over empty, the key
// keeps working, and nobody else's data moves.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const CUSTOM = {
  controller: { stripe_dashboard: { type: 'none' }, requirement_collection: 'application' },
  capabilities: { transfers: { requested: true } },
  business_type: 'individual',
};

/** Something of every kind, on the platform and on a connected account; returns the connected account. */
async function fill(key: string): Promise<string> {
  await createWebhookEndpoint(t, key);
  const connected = (await createAccount(t, key, CUSTOM)).id;
  await createAccountSession(t, key, { account: connected, components: { account_onboarding: { enabled: true } } });
  const link = await t.http().post('/v1/account_links').set(bearer(key)).type('form').send(form({
    account: connected,
    type: 'account_onboarding',
    refresh_url: 'https://example.com/r',
    return_url: 'https://example.com/x',
  }));
  expect(link.status).toBe(200);
  await createAppSecret(t, key);
  await createVerificationReport(t, key);
  // A linked account with its owners and transactions.
  const [fc] = await linkFcAccounts(t, key, { institution: 'ownership_accounts', accounts: ['joint'] }, { account_holder: { type: 'account', account: connected } });
  await refreshFcAccount(t, key, fc.id, 'ownership');
  await refreshFcAccount(t, key, fc.id, 'transactions');
  // The connected account's own data, made acting as it.
  const secret = await t.http().post('/v1/apps/secrets').set(bearer(key)).set('Stripe-Account', connected).type('form').send(form({ name: 'n', payload: 'p', scope: { type: 'account' } }));
  expect(secret.status).toBe(200);
  await emitTestEvent(t.runtime, connected, 'account.updated', undefined, { handOff: false });
  // The catalog, customers and their cards, on the platform and on the connected account.
  for (const acting of [{}, { 'Stripe-Account': connected }]) {
    const post = async (path: string, params: Record<string, unknown>) => {
      const res = await t.http().post(path).set(bearer(key)).set(acting).type('form').send(form(params));
      expect(res.status).toBe(200);
      return res.body;
    };
    const customer = await post('/v1/customers', { email: 'a@example.test', payment_method: 'pm_card_visa' });
    const product = await post('/v1/products', { name: 'P', default_price_data: { currency: 'usd', unit_amount: 100 } });
    await post('/v1/tax_rates', { display_name: 'VAT', percentage: 20, inclusive: false });
    const coupon = await post('/v1/coupons', { percent_off: 10, duration: 'once' });
    await post('/v1/promotion_codes', { promotion: { type: 'coupon', coupon: coupon.id }, customer: customer.id });
    const { destination } = await forwardingHarness(t);
    await post('/v1/forwarding/requests', { payment_method: 'pm_card_visa', url: `${destination.origin}/reset`, replacements: ['card_number'], request: { body: '{}' } });
    expect(product.default_price).toMatch(/^price_/);
    // A subscription (its first invoice) and a change's prorations (two invoice items).
    const monthly = await post('/v1/prices', { product: product.id, currency: 'usd', unit_amount: 100, recurring: { interval: 'month' } });
    const sub = await post('/v1/subscriptions', { customer: customer.id, items: [{ price: monthly.id }] });
    await post(`/v1/subscription_items/${sub.items.data[0].id}`, { quantity: 2 });
    // A paid PaymentIntent (its charge), partly refunded.
    const paid = await post('/v1/payment_intents', { amount: 2000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true, return_url: 'http://127.0.0.1:9/back' });
    await post('/v1/refunds', { payment_intent: paid.id, amount: 500 });
    // A SetupIntent waiting on its 3-D Secure challenge.
    await post('/v1/setup_intents', { customer: customer.id, payment_method: 'pm_card_authenticationRequired', confirm: true, allowed_payment_method_types: ['card'] });
  }
  const idem = await t.http().post('/v1/webhook_endpoints').set(bearer(key)).set('Idempotency-Key', 'k1').type('form').send(form({ url: 'http://127.0.0.1:0/h', enabled_events: ['*'] }));
  expect(idem.status).toBe(200);
  return connected;
}

async function counts(platform: string) {
  const p = t.runtime.prisma;
  const accounts = [platform, ...(await p.account.findMany({ where: { parentAccountId: platform }, select: { id: true } })).map((a) => a.id)];
  const where = { accountId: { in: accounts } };
  return {
    accounts: accounts.length - 1,
    webhookEndpoints: await p.webhookEndpoint.count({ where }),
    events: await p.event.count({ where }),
    accountSessions: await p.accountSession.count({ where }),
    accountLinks: await p.accountLink.count({ where }),
    appSecrets: await p.appSecret.count({ where }),
    identitySessions: await p.identityVerificationSession.count({ where }),
    identityReports: await p.identityVerificationReport.count({ where }),
    idempotencyRecords: await p.idempotencyRecord.count({ where }),
    customers: await p.customer.count({ where }),
    paymentMethods: await p.paymentMethod.count({ where }),
    products: await p.product.count({ where }),
    prices: await p.price.count({ where }),
    taxRates: await p.taxRate.count({ where }),
    coupons: await p.coupon.count({ where }),
    promotionCodes: await p.promotionCode.count({ where }),
    forwardingRequests: await p.forwardingRequest.count({ where }),
    fcSessions: await p.financialConnectionsSession.count({ where }),
    fcAccounts: await p.financialConnectionsAccount.count({ where }),
    fcRefreshes: await p.financialConnectionsRefresh.count({ where }),
    fcTransactions: await p.financialConnectionsTransaction.count({ where }),
    fcOwnerships: await p.financialConnectionsOwnership.count({ where }),
    fcOwners: await p.financialConnectionsOwner.count({ where }),
    subscriptions: await p.subscription.count({ where }),
    subscriptionItems: await p.subscriptionItem.count({ where }),
    invoices: await p.invoice.count({ where }),
    invoiceItems: await p.invoiceItem.count({ where }),
    paymentIntents: await p.paymentIntent.count({ where }),
    charges: await p.charge.count({ where }),
    refunds: await p.refund.count({ where }),
    setupIntents: await p.setupIntent.count({ where }),
    paymentAuthentications: await p.paymentAuthentication.count({ where }),
  };
}

test("deletes every row of the key's platform and its connected accounts in one go, keeps the key working, and leaves another key's data alone", async () => {
  const [a, b] = [newTestKey(), newTestKey()];
  const connectedA = await fill(a);
  await fill(b);
  const platformA = await accountOfKey(t.runtime, a);
  const platformB = await accountOfKey(t.runtime, b);
  const before = await counts(platformB);
  for (const n of Object.values(await counts(platformA))) expect(n).toBeGreaterThan(0);

  const res = await t.http().delete('/sandbox/v1/data').set(bearer(a));
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    object: 'sandbox.data_reset',
    account: platformA,
    livemode: false,
    deleted: {
      accounts: expect.any(Number),
      webhook_endpoints: 2,
      events: expect.any(Number),
      account_sessions: 1,
      account_links: 1,
      login_links: 0,
      apps_secrets: 2,
      identity_verification_sessions: 1,
      identity_verification_reports: 1,
      customers: 2,
      customer_tax_ids: 0,
      customer_balance_transactions: 0,
      // A card per customer, the one each forward of pm_card_visa made, each PaymentIntent's and each SetupIntent's.
      payment_methods: 8,
      // The platform's and its connected account's own PaymentIntents, and their subscriptions' first invoices' (no card: no charge).
      payment_intents: 4,
      charges: 2,
      refunds: 2,
      setup_intents: 2,
      payment_authentications: 2,
      forwarding_requests: 2,
      products: 2,
      prices: 4,
      tax_rates: 2,
      coupons: 2,
      promotion_codes: 2,
      subscriptions: 2,
      subscription_items: 2,
      invoices: 2,
      invoice_items: 4,
      // The subscriptions' customers have no card: their first invoices' payments failed and wait for a retry.
      invoice_payment_retries: 2,
      invoice_payments: 2,
      invoice_links: 2,
      invoice_overdue_notices: 0,
      invoice_details: 0,
      test_clocks: 0,
      idempotency_records: 1,
      financial_connections_sessions: 1,
      financial_connections_accounts: 1,
      financial_connections_refreshes: 2,
      financial_connections_transactions: expect.any(Number),
      financial_connections_ownerships: 1,
      financial_connections_owners: 2,
      // Seed records: test/seed/seed.test.ts.
      seed_runs: 0,
    },
  });
  expect(Object.values(await counts(platformA)).every((n) => n === 0)).toBe(true);
  expect(await counts(platformB)).toEqual(before);

  // The key keeps its platform account and works; the endpoint limit counts from zero again.
  expect((await t.http().get('/v1/account').set(bearer(a))).body.id).toBe(platformA);
  expect((await t.http().get('/v1/webhook_endpoints').set(bearer(a))).body.data).toEqual([]);
  expect((await t.runtime.prisma.account.findUnique({ where: { id: platformA } }))?.webhookEndpointCount).toBe(0);
  // The deleted connected account is gone for Stripe-Account too.
  expect((await t.http().get('/v1/account').set(bearer(a)).set('Stripe-Account', connectedA)).status).toBe(403);
  // An Idempotency-Key used before the reset runs afresh after it.
  const again = await t.http().post('/v1/webhook_endpoints').set(bearer(a)).set('Idempotency-Key', 'k1').type('form').send(form({ url: 'http://127.0.0.1:0/h', enabled_events: ['*'] }));
  expect(again.status).toBe(200);
  expect(again.headers['idempotent-replayed']).toBeUndefined();
});

test('a second reset finds nothing left', async () => {
  const key = newTestKey();
  await createWebhookEndpoint(t, key);
  const first = await t.http().delete('/sandbox/v1/data').set(bearer(key));
  expect(first.body.deleted.webhook_endpoints).toBe(1);
  const second = await t.http().delete('/sandbox/v1/data').set(bearer(key));
  expect(second.status).toBe(200);
  expect(Object.values(second.body.deleted).every((n) => n === 0)).toBe(true);
});

test('every table that holds an account\'s rows is reset (a new resource must join RESET_TABLES)', async () => {
  const tables = await t.runtime.prisma.$queryRaw<{ table_name: string }[]>`
    SELECT table_name FROM information_schema.columns WHERE column_name = 'account_id' AND table_schema = current_schema()`;
  const reset = new Set<string>(RESET_TABLES.map(([, table]) => table));
  // The key's own rows stay, so it keeps working, and so do its console sessions (a reset from the
  // console leaves its user signed in), and its Stripe CLI sessions (a running `stripe listen` goes on).
  const kept = new Set(['api_keys', 'console_sessions', 'stripecli_sessions']);
  expect(tables.map((r) => r.table_name).filter((name) => !reset.has(name) && !kept.has(name)).sort()).toEqual([]);
});
