import qs from 'qs';
import { bearer, type TestApp } from './app';
import { LATEST_API_VERSION } from '../../src/kernel/versions';
import { accountOfKey, emitTestEvent } from './events';
import { createRefunds } from './payments';
import { finishProcessing } from '../../src/resources/identity/verification/pipeline';
import { finishRefresh } from '../../src/resources/financial_connections/accounts/pipeline';
import { runTestClockJob } from '../../src/resources/billing/test_clocks/service';

// Objects the conformance tests need, per area. When an area adds an operation with a path
// parameter, add a factory for that parameter here; when its create operation has required
// parameters, add a valid body to `validParams` so malformed inputs are tried one at a time.

/** Form encoding as the official SDKs send it: bracketed keys, indexed arrays. */
export const form = (params: Record<string, unknown>): string => qs.stringify(params, { arrayFormat: 'indices' });

/**
 * Where test webhook endpoints point when their deliveries don't matter: this machine, port 0.
 * Nothing can listen on port 0, so an attempt there fails at once and arrives nowhere (and the
 * suite runs with WEBHOOK_LOOPBACK_ONLY=true, so a URL naming another machine is refused).
 */
export const CLOSED_ORIGIN = 'http://127.0.0.1:0';

export const WEBHOOK_URL = `${CLOSED_ORIGIN}/hooks`;

/** Creates a webhook endpoint over HTTP and returns the response body; fails on a non-200. */
export async function createWebhookEndpoint(app: TestApp, key: string, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const res = await app
    .http()
    .post('/v1/webhook_endpoints')
    .set(bearer(key))
    .type('form')
    .send(form({ url: WEBHOOK_URL, enabled_events: ['charge.succeeded'], ...params }));
  if (res.status !== 200) throw new Error(`creating a webhook endpoint failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Creates `n` webhook endpoints one after another; ids oldest first. */
export async function createWebhookEndpoints(app: TestApp, key: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await createWebhookEndpoint(app, key, { url: `${WEBHOOK_URL}/${i}` })).id);
  return ids;
}

/** Creates a connected account of the key's platform over HTTP and returns the response body. */
export async function createAccount(app: TestApp, key: string, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const res = await app.http().post('/v1/accounts').set(bearer(key)).type('form').send(form(params));
  if (res.status !== 200) throw new Error(`creating an account failed: ${res.status} ${JSON.stringify(res.body)}${serverErrors(app, res)}`);
  return res.body;
}

/** What the app logged as an error for a request, so a fixture's unexpected 500 says why. */
function serverErrors(app: TestApp, res: { headers: Record<string, string> }): string {
  const logged = app.logs.filter((l) => l.request_id === res.headers['request-id'] && Number(l.level) >= 50);
  return logged.length === 0 ? '' : `\nlogged: ${JSON.stringify(logged)}`;
}

/** `parents`: the fixtures of the path parameters before this one (a sub-resource's account). */
export type FixtureFactory = (app: TestApp, key: string, parents: Readonly<Record<string, string>>) => Promise<string>;

/** An existing object for each path parameter name used in openapi/ (`{webhook_endpoint}` …). */
export const pathFixtures: Record<string, FixtureFactory> = {
  webhook_endpoint: async (app, key) => (await createWebhookEndpoint(app, key)).id,
  /** A connected account of the key's platform (`/v1/accounts/{account}`). */
  account: async (app, key) => (await createAccount(app, key)).id,
  /** A capability every new account has (`/v1/accounts/{account}/capabilities/{capability}`). */
  capability: async () => 'card_payments',
  /** A bank account of that account (`/v1/accounts/{account}/external_accounts/{external_account}`). */
  external_account: async (app, key, { account }) => (await createExternalAccount(app, key, account)).id,
  /** A person of that account (`/v1/accounts/{account}/persons/{person}`). */
  person: async (app, key, { account }) => (await createPerson(app, key, account)).id,
  /** An event of the key's account (`/v1/events/{id}`, `/sandbox/v1/events/{id}/resend`). */
  id: (app, key) => createEvent(app, key),
  /** A verification session in requires_input (`/v1/identity/verification_sessions/{session}` …). */
  session: async (app, key) => (await createVerificationSession(app, key)).id,
  /** A verification report (`/v1/identity/verification_reports/{report}`). */
  report: (app, key) => createVerificationReport(app, key),
  customer: async (app, key) => (await createCustomer(app, key)).id,
  /** A balance transaction of that customer (`/v1/customers/{customer}/balance_transactions/{transaction}`). */
  transaction: async (app, key, { customer }) => (await expectOk(app, key, `/v1/customers/${customer}/balance_transactions`, { amount: -500, currency: 'usd' })).id,
  /** A tax id of that customer (`/v1/customers/{customer}/tax_ids/{tax_id}`). */
  tax_id: async (app, key, { customer }) => (await expectOk(app, key, `/v1/customers/${customer}/tax_ids`, { type: 'eu_vat', value: 'DE123456789' })).id,
  /** A pending 3-D Secure challenge of a PaymentIntent (`/sandbox/v1/payment_authentications/{payment_authentication}/complete` …). */
  payment_authentication: async (app, key) => (await createPendingAuthentication(app, key)).id,
  /** A card attached to a customer (the path's own, `/v1/customers/{customer}/payment_methods/{payment_method}`), so every operation on it (update, detach) can succeed. */
  payment_method: (app, key, { customer }) => attachedCard(app, key, customer),
  /** A SetupIntent with a card that takes it (cards only: confirmed without a return_url), not confirmed yet. */
  setup_intent: async (app, key) => (await createSetupIntent(app, key, { payment_method: 'pm_card_visa', allowed_payment_method_types: ['card'] })).id,
  /** A refund of part of a payment (a PaymentIntent confirmed through the API: test/helpers/payments.ts). */
  refund: async (app, key) => (await createRefunds(app, key, 1))[0],
  product: async (app, key) => (await createProduct(app, key)).id,
  price: async (app, key) => (await createPrice(app, key)).id,
  tax_rate: async (app, key) => (await createTaxRate(app, key)).id,
  coupon: async (app, key) => (await createCoupon(app, key)).id,
  promotion_code: async (app, key) => (await createPromotionCode(app, key)).id,
  /** A pending Financial Connections session (`/v1/financial_connections/sessions/{fc_session}` …). */
  fc_session: async (app, key) => (await createFcSession(app, key)).id,
  /** A linked account with every permission (`/v1/financial_connections/accounts/{fc_account}` …). */
  fc_account: async (app, key) => (await linkFcAccounts(app, key, { accounts: ['checking'] }))[0].id,
  /** A transaction of a linked account (`/v1/financial_connections/transactions/{fc_transaction}`). */
  fc_transaction: async (app, key) => (await fcTransactions(app, key))[0],
  subscription_exposed_id: async (app, key) => (await createSubscription(app, key)).id,
  /** A subscription paused at its trial's end (`/v1/subscriptions/{subscription}/resume`). */
  subscription: (app, key) => pausedSubscription(app, key),
  test_clock: async (app, key) => (await expectOk(app, key, '/v1/test_helpers/test_clocks', { frozen_time: Math.floor(Date.now() / 1000) })).id,
  /** A metered subscription item (`clear_usage` applies) with a sibling, so it can be deleted. */
  item: async (app, key) => {
    const sub = await createSubscription(app, key, 2, {}, { recurring: { interval: 'month', usage_type: 'metered' } });
    return sub.items.data[0].id;
  },
  /** A PaymentIntent with a card, waiting for its confirmation (manual capture, so a confirm leaves it capturable). */
  intent: async (app, key) => (await createPaymentIntent(app, key, { payment_method: 'pm_card_visa', capture_method: 'manual' })).id,
  /** The charge of a confirmed PaymentIntent. */
  charge: async (app, key) => (await createPaymentIntent(app, key, { payment_method: 'pm_card_visa', confirm: true })).latest_charge,
  /** An open invoice (its card declined), so it can be paid with another card. */
  invoice: async (app, key) => (await createSubscription(app, key, 1, { payment_behavior: 'default_incomplete' })).latest_invoice,
  /** The open payment of an invoice left for its customer to confirm. */
  invoice_payment: async (app, key) => {
    const invoice = (await createSubscription(app, key, 1, { payment_behavior: 'default_incomplete' })).latest_invoice;
    return (await app.http().get(`/v1/invoice_payments?invoice=${invoice}`).set(bearer(key))).body.data[0].id;
  },
  /** A pending proration. */
  invoiceitem: async (app, key) => {
    const sub = await createSubscription(app, key);
    await expectOk(app, key, `/v1/subscription_items/${sub.items.data[0].id}`, { quantity: 2 });
    const res = await app.http().get(`/v1/invoiceitems?pending=true&customer=${sub.customer}`).set(bearer(key));
    return res.body.data[0].id;
  },
};

async function expectOk(app: TestApp, key: string, path: string, params: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await app.http().post(path).set(bearer(key)).type('form').send(form(params));
  if (res.status !== 200) throw new Error(`POST ${path} failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/**
 * Creates a monthly subscription of `items` new prices (10.00 each) for a new customer paying with
 * `pm_card_visa`; returns the response body.
 */
export async function createSubscription(
  app: TestApp,
  key: string,
  items = 1,
  params: Record<string, unknown> = {},
  /** The first price's parameters (a metered one, say). */
  firstPrice: Record<string, unknown> = {},
): Promise<Record<string, any>> {
  const customer = await createCustomer(app, key, { payment_method: 'pm_card_visa' });
  const pm = (await app.http().get(`/v1/payment_methods?customer=${customer.id}`).set(bearer(key))).body.data[0].id;
  await expectOk(app, key, `/v1/customers/${customer.id}`, { invoice_settings: { default_payment_method: pm } });
  const prices: string[] = [];
  for (let i = 0; i < items; i++) prices.push((await createPrice(app, key, { recurring: { interval: 'month' }, product_data: { name: `Plan ${i}` }, ...(i === 0 ? firstPrice : {}) })).id);
  return expectOk(app, key, '/v1/subscriptions', { customer: customer.id, items: prices.map((price) => ({ price })), ...params });
}

/**
 * A subscription paused at its trial's end (`trial_settings[end_behavior][missing_payment_method]=pause`,
 * the customer without a card then), on a test clock advanced past it: the advance runs here,
 * as the billing worker runs it, so apps without workers have one too. Its customer then gets
 * `pm_card_visa` as default, so resuming it is paid. Answers its id.
 */
export async function pausedSubscription(app: TestApp, key: string): Promise<string> {
  const start = Math.floor(Date.now() / 1000);
  const clock = await expectOk(app, key, '/v1/test_helpers/test_clocks', { frozen_time: start });
  const customer = await createCustomer(app, key, { test_clock: clock.id });
  const price = await createPrice(app, key, { recurring: { interval: 'month' } });
  const sub = await expectOk(app, key, '/v1/subscriptions', {
    customer: customer.id,
    items: [{ price: price.id }],
    trial_period_days: 1,
    trial_settings: { end_behavior: { missing_payment_method: 'pause' } },
  });
  await expectOk(app, key, `/v1/test_helpers/test_clocks/${clock.id}/advance`, { frozen_time: start + 86_400 + 60 });
  await runTestClockJob(app.runtime, clock.id);
  const pm = (await expectOk(app, key, '/v1/payment_methods/pm_card_visa/attach', { customer: customer.id })).id;
  await expectOk(app, key, `/v1/customers/${customer.id}`, { invoice_settings: { default_payment_method: pm } });
  return sub.id;
}

/** Creates a customer over HTTP and returns the response body. */
export async function createCustomer(app: TestApp, key: string, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const res = await app.http().post('/v1/customers').set(bearer(key)).type('form').send(form(params));
  if (res.status !== 200) throw new Error(`creating a customer failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Creates a card payment method over HTTP and returns the response body. */
export async function createPaymentMethod(app: TestApp, key: string, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const res = await app
    .http()
    .post('/v1/payment_methods')
    .set(bearer(key))
    .type('form')
    .send(form({ type: 'card', card: { token: 'tok_visa' }, ...params }));
  if (res.status !== 200) throw new Error(`creating a payment method failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Creates a SetupIntent over HTTP and returns the response body. */
export async function createSetupIntent(app: TestApp, key: string, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const res = await app.http().post('/v1/setup_intents').set(bearer(key)).type('form').send(form(params));
  if (res.status !== 200) throw new Error(`creating a SetupIntent failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Creates a card PaymentIntent (of 20.00 USD, cards only unless told) over HTTP and returns the response body. */
export async function createPaymentIntent(app: TestApp, key: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<Record<string, any>> {
  const res = await app
    .http()
    .post('/v1/payment_intents')
    .set(bearer(key))
    .set(headers)
    .type('form')
    .send(form({ amount: 2000, currency: 'usd', allowed_payment_method_types: ['card'], ...params }));
  if (res.status !== 200) throw new Error(`creating a payment intent failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A PaymentIntent waiting on its 3-D Secure challenge; answers the challenge's id (`/sandbox/v1/payment_authentications/{payment_authentication}/…`) and the intent's. */
export async function createPendingAuthentication(app: TestApp, key: string): Promise<{ id: string; paymentIntent: string }> {
  const intent = await createPaymentIntent(app, key, { payment_method: 'pm_card_authenticationRequired', confirm: true });
  if (intent.status !== 'requires_action') throw new Error(`the payment intent is ${intent.status}, not requires_action`);
  const list = await app.http().get('/sandbox/v1/payment_authentications?status=pending&limit=100').set(bearer(key));
  const found = (list.body.data as { id: string; payment_intent: string | null }[]).find((a) => a.payment_intent === intent.id);
  if (!found) throw new Error(`no pending authentication of ${intent.id}: ${JSON.stringify(list.body)}`);
  return { id: found.id, paymentIntent: intent.id };
}

/** A new card attached to a new customer; returns its id. */
export async function attachedCard(app: TestApp, key: string, to?: string): Promise<string> {
  const customer = to ?? (await createCustomer(app, key)).id;
  const pm = (await createPaymentMethod(app, key)).id;
  const res = await app.http().post(`/v1/payment_methods/${pm}/attach`).set(bearer(key)).type('form').send(form({ customer }));
  if (res.status !== 200) throw new Error(`attaching a payment method failed: ${res.status} ${JSON.stringify(res.body)}`);
  return pm;
}

/** An event of the key's account, emitted as services do (not handed to workers). */
export async function createEvent(app: TestApp, key: string): Promise<string> {
  // Creating an endpoint is a request, so the key has an account by then.
  await createWebhookEndpoint(app, key);
  return emitTestEvent(app.runtime, await accountOfKey(app.runtime, key), 'account.updated', undefined, { handOff: false });
}

/** A body or query that passes validation, for operations with required parameters. */
export const validParams: Record<string, Record<string, unknown>> = {
  // Well-formed; no subscription has this id, so an accepted body is a 400 resource_missing.
  PostInvoicesCreatePreview: { subscription: 'sub_000000000000000000000000' },
  PostWebhookEndpoints: { url: WEBHOOK_URL, enabled_events: ['charge.succeeded'] },
  // Well-formed; no endpoint has this id, so an accepted resend is a 400 rather than a delivery.
  PostSandboxEventsIdResend: { webhook_endpoint: 'we_000000000000000000000000' },
  // Well-formed; no connected account has this id, so an accepted body is a 400 resource_missing.
  PostAccountSessions: { account: 'acct_0000000000000000', components: { payments: { enabled: true, features: { refund_management: true } } } },
  // Well-formed; no connected account has this id, so an accepted body is a 400 resource_missing.
  PostAccountLinks: { account: 'acct_0000000000000000', type: 'account_onboarding' },
  // Well-formed; no session has this secret.
  PostSandboxAccountSessionsClaim: { client_secret: 'accs_secret__000000000000000000000000000000000000000000000000' },
  PostAccountsAccountExternalAccounts: { external_account: 'btok_us_verified' },
  PostAccountsAccountReject: { reason: 'other' },
  PostAppsSecrets: { name: 'api-key', payload: 'not-really-secret', scope: { type: 'account' } },
  PostAppsSecretsDelete: { name: 'api-key', scope: { type: 'account' } },
  GetAppsSecretsFind: { name: 'api-key', scope: { type: 'account' } },
  GetAppsSecrets: { scope: { type: 'user', user: 'usr_1' } },
  PostIdentityVerificationSessions: { type: 'document' },
  PostSandboxIdentityVerificationSessionsSessionSubmit: { outcome: 'verified' },
  PostPaymentMethods: { type: 'card', card: { token: 'tok_visa' } },
  PostPaymentIntents: { amount: 1000, currency: 'usd' },
  // The fixture intent isn't confirmed: a well-formed increment is a 400 payment_intent_unexpected_state.
  PostPaymentIntentsIntentIncrementAuthorization: { amount: 5000 },
  GetPaymentIntentsSearch: { query: 'status:"succeeded"' },
  GetChargesSearch: { query: 'status:"succeeded"' },
  GetCustomersSearch: { query: 'email:"jenny@example.com"' },
  GetSubscriptionsSearch: { query: 'status:"active"' },
  GetInvoicesSearch: { query: 'status:"paid"' },
  GetPricesSearch: { query: 'active:"true"' },
  GetProductsSearch: { query: 'name:"T-shirt"' },
  // Well-formed; no customer has this id, so an accepted body is a 400 resource_missing.
  PostPaymentMethodsPaymentMethodAttach: { customer: 'cus_00000000000000' },
  PostProducts: { name: 'T-shirt' },
  // Well-formed; no product has this id, so an accepted body is a 400 resource_missing.
  PostPrices: { currency: 'usd', unit_amount: 1000, product: 'prod_000000000000000000000000' },
  PostTaxRates: { display_name: 'VAT', inclusive: false, percentage: 20 },
  PostCustomersCustomerTaxIds: { type: 'eu_vat', value: 'DE123456789' },
  PostCustomersCustomerBalanceTransactions: { amount: -500, currency: 'usd' },
  PostCoupons: { percent_off: 25 },
  // Well-formed; no customer has this id, so an accepted body is a 400 resource_missing.
  PostFinancialConnectionsSessions: { account_holder: { type: 'customer', customer: 'cus_00000000000000' }, permissions: ['balances'] },
  PostFinancialConnectionsAccountsAccountRefresh: { features: ['balance'] },
  PostFinancialConnectionsAccountsAccountSubscribe: { features: ['transactions'] },
  PostFinancialConnectionsAccountsAccountUnsubscribe: { features: ['transactions'] },
  GetFinancialConnectionsAccountsAccountOwners: { ownership: 'fcaowns_000000000000000000000000' },
  // Well-formed; no linked account has this id, so an accepted query is a 400 resource_missing.
  GetFinancialConnectionsTransactions: { account: 'fca_000000000000000000000000' },
  PostSandboxFinancialConnectionsSessionsSessionComplete: { institution: 'test_institution' },
  // Well-formed; no coupon has this id, so an accepted body is a 400 resource_missing.
  PostPromotionCodes: { promotion: { type: 'coupon', coupon: 'NoSuchCoupon' } },
  // Well-formed; no payment method has this id, so an accepted body is a 400 resource_missing (nothing is sent).
  PostForwardingRequests: { payment_method: 'pm_000000000000000000000000', url: `${CLOSED_ORIGIN}/vault`, replacements: ['card_number'], request: { body: '{}' } },
  // Well-formed; no customer, subscription or price has these ids, so an accepted body is a 400 resource_missing.
  PostSubscriptions: { customer: 'cus_00000000000000', items: [{ price: 'price_000000000000000000000000' }] },
  // Well-formed; no customer has this id, so an accepted body is a 400 resource_missing.
  PostInvoiceitems: { customer: 'cus_00000000000000', amount: 100, currency: 'usd' },
  // Well-formed; no customer has this id, so an accepted body is a 400 resource_missing.
  PostInvoices: { customer: 'cus_00000000000000' },
  PostSubscriptionItems: { subscription: 'sub_000000000000000000000000', price: 'price_000000000000000000000000' },
  GetSubscriptionItems: { subscription: 'sub_000000000000000000000000' },
  PostTestHelpersTestClocks: { frozen_time: 1800000000 },
  // An hour after the fixture's frozen time (now).
  PostTestHelpersTestClocksTestClockAdvance: { frozen_time: Math.floor(Date.now() / 1000) + 3600 },
};

/** Creates a product over HTTP and returns the response body. */
export async function createProduct(app: TestApp, key: string, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const res = await app.http().post('/v1/products').set(bearer(key)).type('form').send(form({ name: 'T-shirt', ...params }));
  if (res.status !== 200) throw new Error(`creating a product failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Creates a price (of a new product unless `product` is given) over HTTP and returns the response body. */
export async function createPrice(app: TestApp, key: string, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const product = (params.product ?? params.product_data) ? {} : { product_data: { name: 'T-shirt' } };
  const res = await app.http().post('/v1/prices').set(bearer(key)).type('form').send(form({ currency: 'usd', unit_amount: 1000, ...product, ...params }));
  if (res.status !== 200) throw new Error(`creating a price failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** What a US individual's account needs for nothing to be due (the public test mode's accepted values). */
export const COMPLETE_INDIVIDUAL = {
  business_profile: { mcc: '5734', url: 'http://127.0.0.1:0/shop' },
  individual: {
    first_name: 'Jenny',
    last_name: 'Rosen',
    dob: { day: 1, month: 1, year: 1990 },
    email: 'jenny@example.com',
    phone: '+15555550100',
    address: { line1: '1 Main St', city: 'San Francisco', state: 'CA', postal_code: '94111' },
    ssn_last_4: '0000',
  },
  external_account: 'btok_us_verified',
  tos_acceptance: { date: 1700000000, ip: '203.0.113.1' },
};

/** What a US person (a company's representative or owner) gives for nothing of theirs to be due. */
export const US_PERSON = {
  first_name: 'Jenny',
  last_name: 'Rosen',
  email: 'jenny@example.com',
  phone: '+15555550100',
  dob: { day: 1, month: 1, year: 1980 },
  address: { line1: '1 Main St', city: 'Austin', state: 'TX', postal_code: '73301' },
  ssn_last_4: '0000',
};

/** What makes an Express account complete, so it can have login links. */
export const COMPLETE_EXPRESS = { type: 'express', business_type: 'individual', ...COMPLETE_INDIVIDUAL };

/** Adds an external account (a test bank account unless `params` say otherwise) over HTTP and returns the response body. */
export async function createExternalAccount(app: TestApp, key: string, account: string, params: Record<string, unknown> = { external_account: 'btok_us' }): Promise<Record<string, any>> {
  const res = await app.http().post(`/v1/accounts/${account}/external_accounts`).set(bearer(key)).type('form').send(form(params));
  if (res.status !== 200) throw new Error(`creating an external account failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Creates a person of a connected account over HTTP and returns the response body. */
export async function createPerson(app: TestApp, key: string, account: string, params: Record<string, unknown> = { first_name: 'Jane' }): Promise<Record<string, any>> {
  const res = await app.http().post(`/v1/accounts/${account}/persons`).set(bearer(key)).type('form').send(form(params));
  if (res.status !== 200) throw new Error(`creating a person failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Creates an account session for a new connected account of the key's platform; returns the response body. */
export async function createAccountSession(app: TestApp, key: string, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const account = (await createAccount(app, key)).id;
  const res = await app
    .http()
    .post('/v1/account_sessions')
    .set(bearer(key))
    .type('form')
    .send(form({ account, components: { account_onboarding: { enabled: true } }, ...params }));
  if (res.status !== 200) throw new Error(`creating an account session failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Creates (or replaces) an app secret over HTTP and returns the response body (no payload). */
export async function createAppSecret(app: TestApp, key: string, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const res = await app
    .http()
    .post('/v1/apps/secrets')
    .set(bearer(key))
    .type('form')
    .send(form({ name: 'api-key', payload: 'secret-value', scope: { type: 'account' }, ...params }));
  if (res.status !== 200) throw new Error(`creating an app secret failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}
/** Creates a verification session over HTTP and returns the response body. */
export async function createVerificationSession(app: TestApp, key: string, params: Record<string, unknown> = { type: 'document' }): Promise<Record<string, any>> {
  const res = await app.http().post('/v1/identity/verification_sessions').set(bearer(key)).type('form').send(form(params));
  if (res.status !== 200) throw new Error(`creating a verification session failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/**
 * Submits a new session with `outcome` and runs its processing step as the worker would (no
 * waiting for the delay); returns the report id.
 */
export async function createVerificationReport(app: TestApp, key: string, outcome = 'verified', params?: Record<string, unknown>): Promise<string> {
  const { id } = await createVerificationSession(app, key, params);
  const res = await app.http().post(`/sandbox/v1/identity/verification_sessions/${id}/submit`).set(bearer(key)).type('form').send(form({ outcome }));
  if (res.status !== 200) throw new Error(`submitting a verification session failed: ${res.status} ${JSON.stringify(res.body)}`);
  await finishProcessing(app.runtime, id);
  const row = await app.runtime.prisma.identityVerificationSession.findUniqueOrThrow({ where: { id } });
  if (!row.lastVerificationReport) throw new Error('the processing step made no report');
  return row.lastVerificationReport;
}

/** Creates a tax rate over HTTP and returns the response body. */
export async function createTaxRate(app: TestApp, key: string, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const res = await app.http().post('/v1/tax_rates').set(bearer(key)).type('form').send(form({ display_name: 'VAT', inclusive: false, percentage: 20, ...params }));
  if (res.status !== 200) throw new Error(`creating a tax rate failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Creates a coupon (25% off once unless `params` say otherwise) over HTTP and returns the response body. */
export async function createCoupon(app: TestApp, key: string, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const discount = params.amount_off === undefined ? { percent_off: 25 } : {};
  const res = await app.http().post('/v1/coupons').set(bearer(key)).type('form').send(form({ ...discount, ...params }));
  if (res.status !== 200) throw new Error(`creating a coupon failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/**
 * A new customer with a discount (a new 25 % coupon, set through `coupon` at 2024-04-10: newer
 * versions give customers none); answers its id. The key's account keeps the version it has.
 */
export async function customerWithDiscount(app: TestApp, key: string): Promise<string> {
  const made = app.http().post('/v1/coupons').set(bearer(key));
  // An account's first request that names a version pins it: an unpinned one gets the version
  // it has anyway (the default, the newest), so the older request below doesn't pin it.
  if ((made as unknown as { header: Record<string, string> }).header['Stripe-Version'] === undefined) made.set('Stripe-Version', LATEST_API_VERSION);
  const couponRes = await made.type('form').send(form({ percent_off: 25, duration: 'forever' }));
  if (couponRes.status !== 200) throw new Error(`creating a coupon failed: ${couponRes.status} ${JSON.stringify(couponRes.body)}`);
  const coupon = couponRes.body.id;
  const res = await app.http().post('/v1/customers').set(bearer(key)).set('Stripe-Version', '2024-04-10').type('form').send(form({ coupon }));
  if (res.status !== 200) throw new Error(`creating a customer with a discount failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

/** A subscription (see `createSubscription`) with a discount of its own (a new 25 % coupon); answers its id. */
export async function subscriptionWithDiscount(app: TestApp, key: string): Promise<string> {
  const coupon = (await createCoupon(app, key, { duration: 'forever' })).id;
  return (await createSubscription(app, key, 1, { discounts: [{ coupon }] })).id;
}

/** Creates a promotion code (for a new coupon unless `coupon` is given) over HTTP and returns the response body. */
export async function createPromotionCode(app: TestApp, key: string, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const { coupon, ...rest } = params;
  const promotion = { type: 'coupon', coupon: coupon ?? (await createCoupon(app, key)).id };
  const res = await app.http().post('/v1/promotion_codes').set(bearer(key)).type('form').send(form({ promotion, ...rest }));
  if (res.status !== 200) throw new Error(`creating a promotion code failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Every permission but payment_method, which leaves out accounts that can't back a bank payment method. */
export const FC_PERMISSIONS = ['balances', 'ownership', 'transactions'];

/** Creates a Financial Connections session for a new customer over HTTP and returns the response body. */
export async function createFcSession(app: TestApp, key: string, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const holder = params.account_holder ?? { type: 'customer', customer: (await createCustomer(app, key)).id };
  const res = await app.http().post('/v1/financial_connections/sessions').set(bearer(key)).type('form').send(form({ permissions: FC_PERMISSIONS, ...params, account_holder: holder }));
  if (res.status !== 200) throw new Error(`creating a financial connections session failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Links accounts of a test institution (Test (Non-OAuth) unless said) in a new session; answers the linked accounts. */
export async function linkFcAccounts(
  app: TestApp,
  key: string,
  complete: Record<string, unknown> = {},
  session: Record<string, unknown> = {},
): Promise<Record<string, any>[]> {
  const { id } = await createFcSession(app, key, session);
  const res = await app.http().post(`/sandbox/v1/financial_connections/sessions/${id}/complete`).set(bearer(key)).type('form').send(form({ institution: 'test_institution', ...complete }));
  if (res.status !== 200) throw new Error(`completing a financial connections session failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.accounts.data;
}

/**
 * Starts a refresh of a linked account over HTTP and finishes it as the worker would (no waiting
 * for the delay); answers the account as it then is.
 */
export async function refreshFcAccount(app: TestApp, key: string, account: string, feature = 'transactions'): Promise<Record<string, any>> {
  const res = await app.http().post(`/v1/financial_connections/accounts/${account}/refresh`).set(bearer(key)).type('form').send(form({ features: [feature] }));
  if (res.status !== 200) throw new Error(`refreshing failed: ${res.status} ${JSON.stringify(res.body)}`);
  const pending = await app.runtime.prisma.financialConnectionsRefresh.findMany({ where: { fcAccountId: account, status: 'pending' } });
  for (const r of pending) await finishRefresh(app.runtime, r.id);
  return (await app.http().get(`/v1/financial_connections/accounts/${account}`).set(bearer(key))).body;
}

/** The transaction ids (newest first) of a new linked checking account after its first transaction refresh. */
export async function fcTransactions(app: TestApp, key: string): Promise<string[]> {
  const [account] = await linkFcAccounts(app, key, { accounts: ['checking'] });
  await refreshFcAccount(app, key, account.id);
  const rows = await app.runtime.prisma.financialConnectionsTransaction.findMany({ where: { fcAccountId: account.id }, orderBy: { seq: 'desc' }, select: { id: true } });
  return rows.map((r) => r.id);
}
