import Stripe from 'stripe';
import { pay, insertPendingRefund } from '../helpers/payments';
import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import {
  CLOSED_ORIGIN,
  COMPLETE_EXPRESS,
  createEvent,
  createPendingAuthentication,
  createVerificationReport,
  customerWithDiscount,
  fcTransactions,
  pausedSubscription,
  refreshFcAccount,
  subscriptionWithDiscount,
} from '../helpers/fixtures';
import { routes as registeredRoutes } from '../../src/resources';
import { createForwardingRequest, forwardingHarness } from '../helpers/forwarding';

// Every operation through the official SDK, once as it succeeds and once as it fails: the SDK
// must parse each answer into the object the route declares (or a deleted object), and each
// error into the error class its status calls for, both with a request id. Operations the SDK
// has no method for (the sandbox's) go through its raw request. A new operation without an
// entry here fails the coverage test.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

type Call = (stripe: Stripe, key: string) => Promise<unknown>;

interface OperationCase {
  /** A call that succeeds. */
  readonly ok: Call;
  /** A call that fails, and the SDK error class it must raise. */
  readonly fails: Call;
  readonly error: new (...args: any[]) => Stripe.errors.StripeError;
}

const InvalidRequest = Stripe.errors.StripeInvalidRequestError;
/** The last version with `GET /v1/invoices/upcoming` (removed at 2025-03-31.basil). */
const UPCOMING_VERSION = '2025-02-24.acacia';
const SCOPE = { type: 'account' as const };

const connectedAccount = async (stripe: Stripe) => (await stripe.accounts.create({ business_type: 'individual' })).id;
const endpoint = async (stripe: Stripe) => (await stripe.webhookEndpoints.create({ url: `${CLOSED_ORIGIN}/hooks`, enabled_events: ['charge.succeeded'] })).id;
const session = async (stripe: Stripe) => (await stripe.identity.verificationSessions.create({ type: 'document' })).id;
const customer = async (stripe: Stripe) => (await stripe.customers.create({ name: 'Jenny Rosen' })).id;
const customerWithCredit = async (stripe: Stripe) => {
  const id = await customer(stripe);
  await stripe.customers.createBalanceTransaction(id, { amount: -500, currency: 'usd' });
  return id;
};
const customerWithTaxId = async (stripe: Stripe) => (await stripe.customers.create({ tax_id_data: [{ type: 'eu_vat', value: 'DE123456789' }] })).id;
/** A refund of a payment made for the key's account (a PaymentIntent confirmed through the API: test/helpers/payments.ts). */
const refund = async (stripe: Stripe, key: string) => (await stripe.refunds.create({ charge: (await pay(t, key)).charge, amount: 100 })).id;
const attached = async (stripe: Stripe) => (await stripe.paymentMethods.attach('pm_card_visa', { customer: await customer(stripe) })).id;
/** A SetupIntent that takes cards only (confirmed without a return_url), with `pm_card_visa`. */
const setupIntent = async (stripe: Stripe) => (await stripe.setupIntents.create({ allowed_payment_method_types: ['card'], payment_method: 'pm_card_visa' })).id;
const cardIntent = (stripe: Stripe, params: Partial<Stripe.PaymentIntentCreateParams> = {}) =>
  stripe.paymentIntents.create({ amount: 2000, currency: 'usd', allowed_payment_method_types: ['card'], ...params });
const product = async (stripe: Stripe) => (await stripe.products.create({ name: 'Gold' })).id;
const price = (stripe: Stripe) => stripe.prices.create({ product_data: { name: 'Gold' }, currency: 'usd', unit_amount: 1000 });
const taxRate = async (stripe: Stripe) => (await stripe.taxRates.create({ display_name: 'VAT', percentage: 20, inclusive: false })).id;
const coupon = async (stripe: Stripe) => (await stripe.coupons.create({ percent_off: 20 })).id;
const promotionCode = async (stripe: Stripe) => (await stripe.promotionCodes.create({ promotion: { type: 'coupon', coupon: await coupon(stripe) } })).id;
const raw = (stripe: Stripe, path: string, params: Record<string, unknown>) => stripe.rawRequest('POST', path, params);
const fcSession = async (stripe: Stripe, params: Partial<Stripe.FinancialConnections.SessionCreateParams> = {}) =>
  (await stripe.financialConnections.sessions.create({ account_holder: { type: 'customer', customer: await customer(stripe) }, permissions: ['balances', 'ownership', 'transactions'], ...params })).id;
/** A linked checking account, through the SDK and the sandbox's completion. */
const fcAccount = async (stripe: Stripe, params: Partial<Stripe.FinancialConnections.SessionCreateParams> = {}) => {
  const session = await fcSession(stripe, params);
  const done = (await raw(stripe, `/sandbox/v1/financial_connections/sessions/${session}/complete`, { institution: 'test_institution', accounts: ['checking'] })) as unknown as Stripe.FinancialConnections.Session;
  return done.accounts.data[0].id;
};
/** A monthly subscription of a customer paying with `card`, with `items` prices. */
const subscription = async (stripe: Stripe, options: { card?: string; items?: number; behavior?: Stripe.SubscriptionCreateParams.PaymentBehavior } = {}) => {
  const pm = await stripe.paymentMethods.attach(options.card ?? 'pm_card_visa', { customer: await customer(stripe) });
  await stripe.customers.update(pm.customer as string, { invoice_settings: { default_payment_method: pm.id } });
  const items = [];
  for (let i = 0; i < (options.items ?? 1); i++) items.push({ price: (await stripe.prices.create({ product_data: { name: `Plan ${i}` }, currency: 'usd', unit_amount: 1000, recurring: { interval: 'month' } })).id });
  return stripe.subscriptions.create({ customer: pm.customer as string, items, payment_behavior: options.behavior });
};
/** A Custom account (its bank accounts can be updated) with a second, non-default bank account. */
/** A manual draft invoice with one pending item (12.50) on it. */
const manualDraft = async (stripe: Stripe, params: Partial<Stripe.InvoiceCreateParams> = {}) => {
  const id = await customer(stripe);
  await stripe.invoiceItems.create({ customer: id, amount: 1250, currency: 'usd' });
  return stripe.invoices.create({ customer: id, pending_invoice_items_behavior: 'include', ...params });
};
const manualOpen = async (stripe: Stripe, params: Partial<Stripe.InvoiceCreateParams> = {}) => stripe.invoices.finalizeInvoice((await manualDraft(stripe, params)).id!);
const externalAccount = async (stripe: Stripe) => {
  const account = (
    await stripe.accounts.create({ controller: { stripe_dashboard: { type: 'none' }, requirement_collection: 'application' }, capabilities: { transfers: { requested: true } } })
  ).id;
  await stripe.accounts.createExternalAccount(account, { external_account: 'btok_us_verified' });
  return { account, externalAccount: (await stripe.accounts.createExternalAccount(account, { external_account: 'btok_us' })).id };
};
/** A connected account and one of its persons. */
const person = async (stripe: Stripe, params: Stripe.AccountCreatePersonParams = { first_name: 'Jane', relationship: { owner: true } }) => {
  const account = await connectedAccount(stripe);
  return { account, person: (await stripe.accounts.createPerson(account, params)).id };
};

const CASES: Record<string, OperationCase> = {
  GetAccount: {
    ok: (stripe) => stripe.accounts.retrieveCurrent(),
    fails: (stripe) => stripe.accounts.retrieveCurrent(undefined, { stripeAccount: 'acct_0000000000000000' }),
    error: Stripe.errors.StripePermissionError,
  },
  GetAccounts: { ok: (stripe) => stripe.accounts.list(), fails: (stripe) => stripe.accounts.list({ limit: 0 }), error: InvalidRequest },
  PostAccounts: {
    ok: (stripe) => stripe.accounts.create({ email: 'a@example.com' }),
    fails: (stripe) => stripe.accounts.create({ controller: { stripe_dashboard: { type: 'none' } } }),
    error: InvalidRequest,
  },
  GetAccountsAccount: { ok: async (stripe) => stripe.accounts.retrieve(await connectedAccount(stripe)), fails: (stripe) => stripe.accounts.retrieve('acct_nope'), error: InvalidRequest },
  PostAccountsAccount: {
    ok: async (stripe) => stripe.accounts.update(await connectedAccount(stripe), { metadata: { a: '1' } }),
    fails: (stripe) => stripe.accounts.update('acct_nope', { metadata: { a: '1' } }),
    error: InvalidRequest,
  },
  DeleteAccountsAccount: { ok: async (stripe) => stripe.accounts.del(await connectedAccount(stripe)), fails: (stripe) => stripe.accounts.del('acct_nope'), error: InvalidRequest },
  PostAccountsAccountLoginLinks: {
    ok: async (stripe) => stripe.accounts.createLoginLink((await stripe.accounts.create(COMPLETE_EXPRESS as Stripe.AccountCreateParams)).id),
    fails: async (stripe) => stripe.accounts.createLoginLink((await stripe.accounts.create({ type: 'express' })).id),
    error: InvalidRequest,
  },
  PostAccountsAccountReject: {
    // The SDK sends a 2026-09-30 (endive) version or later, whose reasons replace `fraud`.
    ok: async (stripe) => stripe.accounts.reject((await stripe.accounts.create({ type: 'express' })).id, { reason: 'fraud_other' }),
    fails: async (stripe) => stripe.accounts.reject((await stripe.accounts.create({ type: 'express' })).id, { reason: 'fraud' as 'other' }),
    error: InvalidRequest,
  },
  GetAccountsAccountCapabilities: {
    ok: async (stripe) => stripe.accounts.listCapabilities(await connectedAccount(stripe)),
    fails: (stripe) => stripe.accounts.listCapabilities('acct_nope'),
    error: InvalidRequest,
  },
  GetAccountsAccountCapabilitiesCapability: {
    ok: async (stripe) => stripe.accounts.retrieveCapability(await connectedAccount(stripe), 'card_payments'),
    fails: async (stripe) => stripe.accounts.retrieveCapability(await connectedAccount(stripe), 'bogus_payments'),
    error: InvalidRequest,
  },
  PostAccountsAccountCapabilitiesCapability: {
    ok: async (stripe) => stripe.accounts.updateCapability(await connectedAccount(stripe), 'link_payments', { requested: true }),
    fails: (stripe) => stripe.accounts.updateCapability('acct_nope', 'link_payments', { requested: true }),
    error: InvalidRequest,
  },
  GetAccountsAccountExternalAccounts: {
    ok: async (stripe) => stripe.accounts.listExternalAccounts((await externalAccount(stripe)).account, { object: 'bank_account' }),
    fails: (stripe) => stripe.accounts.listExternalAccounts('acct_nope'),
    error: InvalidRequest,
  },
  PostAccountsAccountExternalAccounts: {
    ok: async (stripe) => stripe.accounts.createExternalAccount(await connectedAccount(stripe), { external_account: 'btok_us_verified', metadata: { a: '1' } }),
    fails: async (stripe) => stripe.accounts.createExternalAccount(await connectedAccount(stripe), { external_account: 'btok_nope' }),
    error: InvalidRequest,
  },
  GetAccountsAccountExternalAccountsExternalAccount: {
    ok: async (stripe) => {
      const e = await externalAccount(stripe);
      return stripe.accounts.retrieveExternalAccount(e.account, e.externalAccount);
    },
    fails: async (stripe) => stripe.accounts.retrieveExternalAccount(await connectedAccount(stripe), 'ba_nope'),
    error: InvalidRequest,
  },
  PostAccountsAccountExternalAccountsExternalAccount: {
    ok: async (stripe) => {
      const e = await externalAccount(stripe);
      return stripe.accounts.updateExternalAccount(e.account, e.externalAccount, { default_for_currency: true, account_holder_name: 'Jenny Rosen' });
    },
    fails: async (stripe) => stripe.accounts.updateExternalAccount(await connectedAccount(stripe), 'ba_nope', { metadata: { a: '1' } }),
    error: InvalidRequest,
  },
  DeleteAccountsAccountExternalAccountsExternalAccount: {
    ok: async (stripe) => {
      const e = await externalAccount(stripe);
      return stripe.accounts.deleteExternalAccount(e.account, e.externalAccount);
    },
    // The default of its currency can't be deleted.
    fails: async (stripe) => {
      const account = await connectedAccount(stripe);
      const only = await stripe.accounts.createExternalAccount(account, { external_account: 'btok_us' });
      return stripe.accounts.deleteExternalAccount(account, only.id);
    },
    error: InvalidRequest,
  },
  GetAccountsAccountPersons: {
    ok: async (stripe) => stripe.accounts.listPersons((await person(stripe)).account, { relationship: { owner: true } }),
    fails: (stripe) => stripe.accounts.listPersons('acct_nope'),
    error: InvalidRequest,
  },
  PostAccountsAccountPersons: {
    ok: async (stripe) => stripe.accounts.createPerson(await connectedAccount(stripe), { first_name: 'Jane', relationship: { director: true } }),
    fails: async (stripe) => stripe.accounts.createPerson(await connectedAccount(stripe), { email: 'not an email' }),
    error: InvalidRequest,
  },
  GetAccountsAccountPersonsPerson: {
    ok: async (stripe) => {
      const p = await person(stripe);
      return stripe.accounts.retrievePerson(p.account, p.person);
    },
    fails: async (stripe) => stripe.accounts.retrievePerson(await connectedAccount(stripe), 'person_nope'),
    error: InvalidRequest,
  },
  PostAccountsAccountPersonsPerson: {
    ok: async (stripe) => {
      const p = await person(stripe);
      return stripe.accounts.updatePerson(p.account, p.person, { last_name: 'Doe', metadata: { a: '1' } });
    },
    fails: async (stripe) => stripe.accounts.updatePerson(await connectedAccount(stripe), 'person_nope', { last_name: 'Doe' }),
    error: InvalidRequest,
  },
  DeleteAccountsAccountPersonsPerson: {
    ok: async (stripe) => {
      const p = await person(stripe);
      return stripe.accounts.deletePerson(p.account, p.person);
    },
    // The representative can't be deleted.
    fails: async (stripe) => {
      const p = await person(stripe, { first_name: 'Rep', relationship: { representative: true } });
      return stripe.accounts.deletePerson(p.account, p.person);
    },
    error: InvalidRequest,
  },
  PostAccountLinks: {
    ok: async (stripe) => stripe.accountLinks.create({ account: await connectedAccount(stripe), type: 'account_onboarding' }),
    fails: (stripe) => stripe.accountLinks.create({ account: 'acct_nope', type: 'account_onboarding' }),
    error: InvalidRequest,
  },
  PostAccountSessions: {
    ok: async (stripe) => stripe.accountSessions.create({ account: await connectedAccount(stripe), components: { account_onboarding: { enabled: true } } }),
    fails: async (stripe) => stripe.accountSessions.create({ account: await connectedAccount(stripe), components: { bogus: { enabled: true } } as Stripe.AccountSessionCreateParams.Components }),
    error: InvalidRequest,
  },
  PostSandboxAccountSessionsClaim: {
    ok: async (stripe) => {
      const { client_secret } = await stripe.accountSessions.create({ account: await connectedAccount(stripe), components: { payments: { enabled: true } } });
      return raw(stripe, '/sandbox/v1/account_sessions/claim', { client_secret });
    },
    fails: (stripe) => raw(stripe, '/sandbox/v1/account_sessions/claim', { client_secret: 'accs_secret__nope' }),
    error: InvalidRequest,
  },
  GetAppsSecrets: { ok: (stripe) => stripe.apps.secrets.list({ scope: SCOPE }), fails: (stripe) => stripe.apps.secrets.list({ scope: { type: 'user' } }), error: InvalidRequest },
  PostAppsSecrets: {
    ok: (stripe) => stripe.apps.secrets.create({ name: 'a', payload: 'p', scope: SCOPE }),
    fails: (stripe) => stripe.apps.secrets.create({ name: 'a', payload: 'p', scope: SCOPE, expires_at: 1 }),
    error: InvalidRequest,
  },
  GetAppsSecretsFind: {
    ok: async (stripe) => {
      await stripe.apps.secrets.create({ name: 'f', payload: 'p', scope: SCOPE });
      return stripe.apps.secrets.find({ name: 'f', scope: SCOPE });
    },
    fails: (stripe) => stripe.apps.secrets.find({ name: 'missing', scope: SCOPE }),
    error: InvalidRequest,
  },
  PostAppsSecretsDelete: {
    ok: async (stripe) => {
      await stripe.apps.secrets.create({ name: 'd', payload: 'p', scope: SCOPE });
      return stripe.apps.secrets.deleteWhere({ name: 'd', scope: SCOPE });
    },
    fails: (stripe) => stripe.apps.secrets.deleteWhere({ name: 'missing', scope: SCOPE }),
    error: InvalidRequest,
  },
  GetEvents: { ok: (stripe) => stripe.events.list(), fails: (stripe) => stripe.events.list({ limit: 101 }), error: InvalidRequest },
  GetEventsId: { ok: async (stripe, key) => stripe.events.retrieve(await createEvent(t, key)), fails: (stripe) => stripe.events.retrieve('evt_nope'), error: InvalidRequest },
  PostSandboxEventsIdResend: {
    ok: async (stripe, key) => {
      const event = await createEvent(t, key);
      return raw(stripe, `/sandbox/v1/events/${event}/resend`, { webhook_endpoint: await endpoint(stripe) });
    },
    fails: async (stripe) => raw(stripe, '/sandbox/v1/events/evt_nope/resend', { webhook_endpoint: await endpoint(stripe) }),
    error: InvalidRequest,
  },
  GetSandboxPaymentAuthentications: {
    ok: async (stripe, key) => {
      await createPendingAuthentication(t, key);
      return stripe.rawRequest('GET', '/sandbox/v1/payment_authentications?status=pending');
    },
    fails: (stripe) => stripe.rawRequest('GET', '/sandbox/v1/payment_authentications?status=bogus'),
    error: InvalidRequest,
  },
  PostSandboxPaymentAuthenticationsPaymentAuthenticationComplete: {
    ok: async (stripe, key) => raw(stripe, `/sandbox/v1/payment_authentications/${(await createPendingAuthentication(t, key)).id}/complete`, {}),
    fails: (stripe) => raw(stripe, '/sandbox/v1/payment_authentications/payatt_nope/complete', {}),
    error: InvalidRequest,
  },
  PostSandboxPaymentAuthenticationsPaymentAuthenticationFail: {
    ok: async (stripe, key) => raw(stripe, `/sandbox/v1/payment_authentications/${(await createPendingAuthentication(t, key)).id}/fail`, {}),
    fails: (stripe) => raw(stripe, '/sandbox/v1/payment_authentications/payatt_nope/fail', {}),
    error: InvalidRequest,
  },
  GetSandboxWebhookEndpointsWebhookEndpointDeliveries: {
    ok: async (stripe) => stripe.rawRequest('GET', `/sandbox/v1/webhook_endpoints/${await endpoint(stripe)}/deliveries`),
    fails: (stripe) => stripe.rawRequest('GET', '/sandbox/v1/webhook_endpoints/we_nope/deliveries'),
    error: InvalidRequest,
  },
  GetWebhookEndpoints: { ok: (stripe) => stripe.webhookEndpoints.list(), fails: (stripe) => stripe.webhookEndpoints.list({ limit: -1 }), error: InvalidRequest },
  PostStripecliSessions: {
    ok: (stripe) => raw(stripe, '/v1/stripecli/sessions', { device_name: 'sdk', websocket_features: ['webhooks'] }),
    fails: (stripe) => raw(stripe, '/v1/stripecli/sessions', { device_name: 'sdk', websocket_features: ['telepathy'] }),
    error: InvalidRequest,
  },
  PostWebhookEndpoints: {
    ok: (stripe) => stripe.webhookEndpoints.create({ url: `${CLOSED_ORIGIN}/hooks`, enabled_events: ['*'] }),
    fails: (stripe) => stripe.webhookEndpoints.create({ url: 'not a url', enabled_events: ['*'] }),
    error: InvalidRequest,
  },
  GetWebhookEndpointsWebhookEndpoint: {
    ok: async (stripe) => stripe.webhookEndpoints.retrieve(await endpoint(stripe)),
    fails: (stripe) => stripe.webhookEndpoints.retrieve('we_nope'),
    error: InvalidRequest,
  },
  PostWebhookEndpointsWebhookEndpoint: {
    ok: async (stripe) => stripe.webhookEndpoints.update(await endpoint(stripe), { disabled: true }),
    fails: (stripe) => stripe.webhookEndpoints.update('we_nope', { disabled: true }),
    error: InvalidRequest,
  },
  DeleteWebhookEndpointsWebhookEndpoint: {
    ok: async (stripe) => stripe.webhookEndpoints.del(await endpoint(stripe)),
    fails: (stripe) => stripe.webhookEndpoints.del('we_nope'),
    error: InvalidRequest,
  },
  DeleteSandboxData: {
    ok: async (stripe) => {
      await endpoint(stripe);
      return stripe.rawRequest('DELETE', '/sandbox/v1/data');
    },
    fails: (stripe) => stripe.rawRequest('DELETE', '/sandbox/v1/data?bogus=1'),
    error: InvalidRequest,
  },
  GetIdentityVerificationSessions: {
    ok: (stripe) => stripe.identity.verificationSessions.list({ status: 'requires_input' }),
    fails: (stripe) => stripe.identity.verificationSessions.list({ status: 'bogus' as 'verified' }),
    error: InvalidRequest,
  },
  PostIdentityVerificationSessions: {
    ok: (stripe) => stripe.identity.verificationSessions.create({ type: 'id_number' }),
    fails: (stripe) => stripe.identity.verificationSessions.create({}),
    error: InvalidRequest,
  },
  GetIdentityVerificationSessionsSession: {
    ok: async (stripe) => stripe.identity.verificationSessions.retrieve(await session(stripe)),
    fails: (stripe) => stripe.identity.verificationSessions.retrieve('vs_nope'),
    error: InvalidRequest,
  },
  PostIdentityVerificationSessionsSession: {
    ok: async (stripe) => stripe.identity.verificationSessions.update(await session(stripe), { metadata: { a: '1' } }),
    fails: async (stripe) => {
      const id = await session(stripe);
      await stripe.identity.verificationSessions.cancel(id);
      return stripe.identity.verificationSessions.update(id, { metadata: { a: '1' } });
    },
    error: InvalidRequest,
  },
  PostIdentityVerificationSessionsSessionCancel: {
    ok: async (stripe) => stripe.identity.verificationSessions.cancel(await session(stripe)),
    fails: (stripe) => stripe.identity.verificationSessions.cancel('vs_nope'),
    error: InvalidRequest,
  },
  PostIdentityVerificationSessionsSessionRedact: {
    ok: async (stripe) => stripe.identity.verificationSessions.redact(await session(stripe)),
    fails: (stripe) => stripe.identity.verificationSessions.redact('vs_nope'),
    error: InvalidRequest,
  },
  PostSandboxIdentityVerificationSessionsSessionSubmit: {
    ok: async (stripe) => raw(stripe, `/sandbox/v1/identity/verification_sessions/${await session(stripe)}/submit`, { outcome: 'verified' }),
    fails: async (stripe) => raw(stripe, `/sandbox/v1/identity/verification_sessions/${await session(stripe)}/submit`, { outcome: 'bogus' }),
    error: InvalidRequest,
  },
  GetIdentityVerificationReports: {
    ok: (stripe) => stripe.identity.verificationReports.list({ type: 'document' }),
    fails: (stripe) => stripe.identity.verificationReports.list({ type: 'bogus' as 'document' }),
    error: InvalidRequest,
  },
  GetIdentityVerificationReportsReport: {
    ok: async (stripe, key) => stripe.identity.verificationReports.retrieve(await createVerificationReport(t, key)),
    fails: (stripe) => stripe.identity.verificationReports.retrieve('vr_nope'),
    error: InvalidRequest,
  },  GetProducts: { ok: (stripe) => stripe.products.list({ active: true }), fails: (stripe) => stripe.products.list({ limit: 0 }), error: InvalidRequest },
  PostProducts: { ok: (stripe) => stripe.products.create({ name: 'Gold' }), fails: (stripe) => stripe.products.create({} as Stripe.ProductCreateParams), error: InvalidRequest },
  GetProductsSearch: {
    ok: async (stripe) => {
      await product(stripe);
      return stripe.products.search({ query: 'active:"true"' });
    },
    fails: (stripe) => stripe.products.search({ query: 'created>0' }),
    error: InvalidRequest,
  },
  GetProductsProduct: { ok: async (stripe) => stripe.products.retrieve(await product(stripe)), fails: (stripe) => stripe.products.retrieve('prod_nope'), error: InvalidRequest },
  PostProductsProduct: {
    ok: async (stripe) => stripe.products.update(await product(stripe), { name: 'Silver' }),
    fails: (stripe) => stripe.products.update('prod_nope', { name: 'Silver' }),
    error: InvalidRequest,
  },
  DeleteProductsProduct: {
    ok: async (stripe) => stripe.products.del(await product(stripe)),
    // A product with a price can't be deleted.
    fails: async (stripe) => stripe.products.del((await price(stripe)).product as string),
    error: InvalidRequest,
  },
  GetPrices: { ok: (stripe) => stripe.prices.list({ type: 'recurring' }), fails: (stripe) => stripe.prices.list({ type: 'bogus' as 'recurring' }), error: InvalidRequest },
  PostPrices: {
    ok: (stripe) => stripe.prices.create({ product_data: { name: 'Gold' }, currency: 'usd', unit_amount: 1000, recurring: { interval: 'month' } }),
    fails: (stripe) => stripe.prices.create({ product: 'prod_nope', currency: 'usd', unit_amount: 1000 }),
    error: InvalidRequest,
  },
  GetPricesSearch: {
    ok: async (stripe) => {
      await price(stripe);
      return stripe.prices.search({ query: 'type:"one_time"' });
    },
    fails: (stripe) => stripe.prices.search({ query: 'lookup_key~"ab"' }),
    error: InvalidRequest,
  },
  GetPricesPrice: { ok: async (stripe) => stripe.prices.retrieve((await price(stripe)).id), fails: (stripe) => stripe.prices.retrieve('price_nope'), error: InvalidRequest },
  GetTaxRates: { ok: (stripe) => stripe.taxRates.list({ inclusive: false }), fails: (stripe) => stripe.taxRates.list({ limit: 101 }), error: InvalidRequest },
  PostTaxRates: {
    ok: (stripe) => stripe.taxRates.create({ display_name: 'VAT', percentage: 20, inclusive: false }),
    fails: (stripe) => stripe.taxRates.create({ display_name: 'VAT', percentage: 200, inclusive: false }),
    error: InvalidRequest,
  },
  GetTaxRatesTaxRate: { ok: async (stripe) => stripe.taxRates.retrieve(await taxRate(stripe)), fails: (stripe) => stripe.taxRates.retrieve('txr_nope'), error: InvalidRequest },
  PostTaxRatesTaxRate: {
    ok: async (stripe) => stripe.taxRates.update(await taxRate(stripe), { active: false }),
    fails: (stripe) => stripe.taxRates.update('txr_nope', { active: false }),
    error: InvalidRequest,
  },
  PostPricesPrice: {
    ok: async (stripe) => stripe.prices.update((await price(stripe)).id, { active: false }),
    fails: (stripe) => stripe.prices.update('price_nope', { active: false }),
    error: InvalidRequest,
  },
  GetCoupons: { ok: (stripe) => stripe.coupons.list({ limit: 3 }), fails: (stripe) => stripe.coupons.list({ limit: 0 }), error: InvalidRequest },
  PostCoupons: {
    ok: (stripe) => stripe.coupons.create({ amount_off: 500, currency: 'usd', duration: 'repeating', duration_in_months: 3 }),
    fails: (stripe) => stripe.coupons.create({ percent_off: 120 }),
    error: InvalidRequest,
  },
  GetCouponsCoupon: { ok: async (stripe) => stripe.coupons.retrieve(await coupon(stripe)), fails: (stripe) => stripe.coupons.retrieve('NOPE'), error: InvalidRequest },
  PostCouponsCoupon: {
    ok: async (stripe) => stripe.coupons.update(await coupon(stripe), { name: 'Twenty' }),
    fails: (stripe) => stripe.coupons.update('NOPE', { name: 'Twenty' }),
    error: InvalidRequest,
  },
  DeleteCouponsCoupon: { ok: async (stripe) => stripe.coupons.del(await coupon(stripe)), fails: (stripe) => stripe.coupons.del('NOPE'), error: InvalidRequest },
  GetPromotionCodes: { ok: (stripe) => stripe.promotionCodes.list({ active: true }), fails: (stripe) => stripe.promotionCodes.list({ limit: 101 }), error: InvalidRequest },
  PostPromotionCodes: {
    ok: async (stripe) => stripe.promotionCodes.create({ promotion: { type: 'coupon', coupon: await coupon(stripe) }, code: 'SDK-20' }),
    fails: (stripe) => stripe.promotionCodes.create({ promotion: { type: 'coupon', coupon: 'NOPE' } }),
    error: InvalidRequest,
  },
  GetPromotionCodesPromotionCode: {
    ok: async (stripe) => stripe.promotionCodes.retrieve(await promotionCode(stripe), { expand: ['promotion.coupon'] }),
    fails: (stripe) => stripe.promotionCodes.retrieve('promo_nope'),
    error: InvalidRequest,
  },
  PostPromotionCodesPromotionCode: {
    ok: async (stripe) => stripe.promotionCodes.update(await promotionCode(stripe), { active: false }),
    fails: (stripe) => stripe.promotionCodes.update('promo_nope', { active: false }),
    error: InvalidRequest,
  },
  GetCustomers: { ok: (stripe) => stripe.customers.list({ email: 'a@example.com' }), fails: (stripe) => stripe.customers.list({ limit: 0 }), error: InvalidRequest },
  PostCustomers: {
    ok: (stripe) => stripe.customers.create({ email: 'a@example.com', payment_method: 'pm_card_visa' }),
    fails: (stripe) => stripe.customers.create({ payment_method: 'pm_nope' }),
    error: InvalidRequest,
  },
  GetCustomersSearch: {
    ok: async (stripe) => {
      await customer(stripe);
      return stripe.customers.search({ query: 'name:"Jenny Rosen"' });
    },
    fails: (stripe) => stripe.customers.search({ query: 'foo:"bar"' }),
    error: InvalidRequest,
  },
  GetCustomersCustomer: { ok: async (stripe) => stripe.customers.retrieve(await customer(stripe)), fails: (stripe) => stripe.customers.retrieve('cus_nope'), error: InvalidRequest },
  PostCustomersCustomer: {
    ok: async (stripe) => stripe.customers.update(await customer(stripe), { name: 'Jenny Rosen' }),
    fails: (stripe) => stripe.customers.update('cus_nope', { name: 'Jenny Rosen' }),
    error: InvalidRequest,
  },
  DeleteCustomersCustomer: { ok: async (stripe) => stripe.customers.del(await customer(stripe)), fails: (stripe) => stripe.customers.del('cus_nope'), error: InvalidRequest },
  GetCustomersCustomerTaxIds: {
    ok: async (stripe) => stripe.customers.listTaxIds(await customerWithTaxId(stripe)),
    fails: (stripe) => stripe.customers.listTaxIds('cus_nope'),
    error: InvalidRequest,
  },
  PostCustomersCustomerTaxIds: {
    ok: async (stripe) => stripe.customers.createTaxId(await customer(stripe), { type: 'eu_vat', value: 'DE123456789' }),
    fails: async (stripe) => stripe.customers.createTaxId(await customer(stripe), { type: 'eu_vat', value: 'DE1' }),
    error: InvalidRequest,
  },
  GetCustomersCustomerTaxIdsId: {
    ok: async (stripe) => {
      const id = await customerWithTaxId(stripe);
      return stripe.customers.retrieveTaxId(id, (await stripe.customers.listTaxIds(id)).data[0].id);
    },
    fails: async (stripe) => stripe.customers.retrieveTaxId(await customer(stripe), 'txi_nope'),
    error: InvalidRequest,
  },
  DeleteCustomersCustomerTaxIdsId: {
    ok: async (stripe) => {
      const id = await customerWithTaxId(stripe);
      return stripe.customers.deleteTaxId(id, (await stripe.customers.listTaxIds(id)).data[0].id);
    },
    fails: async (stripe) => stripe.customers.deleteTaxId(await customer(stripe), 'txi_nope'),
    error: InvalidRequest,
  },
  GetCustomersCustomerBalanceTransactions: {
    ok: async (stripe) => stripe.customers.listBalanceTransactions(await customerWithCredit(stripe)),
    fails: (stripe) => stripe.customers.listBalanceTransactions('cus_nope'),
    error: InvalidRequest,
  },
  PostCustomersCustomerBalanceTransactions: {
    ok: async (stripe) => stripe.customers.createBalanceTransaction(await customer(stripe), { amount: -500, currency: 'usd', description: 'Credit' }),
    fails: async (stripe) => stripe.customers.createBalanceTransaction(await customer(stripe), { amount: -500, currency: 'zzz' }),
    error: InvalidRequest,
  },
  GetCustomersCustomerBalanceTransactionsTransaction: {
    ok: async (stripe) => {
      const id = await customerWithCredit(stripe);
      return stripe.customers.retrieveBalanceTransaction(id, (await stripe.customers.listBalanceTransactions(id)).data[0].id);
    },
    fails: async (stripe) => stripe.customers.retrieveBalanceTransaction(await customer(stripe), 'cbtxn_nope'),
    error: InvalidRequest,
  },
  PostCustomersCustomerBalanceTransactionsTransaction: {
    ok: async (stripe) => {
      const id = await customerWithCredit(stripe);
      return stripe.customers.updateBalanceTransaction(id, (await stripe.customers.listBalanceTransactions(id)).data[0].id, { metadata: { a: '1' } });
    },
    fails: async (stripe) => stripe.customers.updateBalanceTransaction(await customer(stripe), 'cbtxn_nope', { metadata: { a: '1' } }),
    error: InvalidRequest,
  },
  DeleteCustomersCustomerDiscount: {
    ok: async (stripe, key) => stripe.customers.deleteDiscount(await customerWithDiscount(t, key)),
    fails: async (stripe) => stripe.customers.deleteDiscount(await customer(stripe)),
    error: InvalidRequest,
  },
  GetRefunds: {
    ok: async (stripe, key) => stripe.refunds.list({ charge: (await stripe.refunds.retrieve(await refund(stripe, key))).charge as string }),
    fails: (stripe) => stripe.refunds.list({ charge: 'ch_nope' }),
    error: InvalidRequest,
  },
  PostRefunds: {
    ok: async (stripe, key) => stripe.refunds.create({ payment_intent: (await pay(t, key)).paymentIntent, reason: 'requested_by_customer', metadata: { a: '1' } }),
    fails: (stripe) => stripe.refunds.create({ charge: 'ch_nope' }),
    error: InvalidRequest,
  },
  GetRefundsRefund: { ok: async (stripe, key) => stripe.refunds.retrieve(await refund(stripe, key)), fails: (stripe) => stripe.refunds.retrieve('re_nope'), error: InvalidRequest },
  PostRefundsRefund: {
    ok: async (stripe, key) => stripe.refunds.update(await refund(stripe, key), { metadata: { a: '1' } }),
    fails: (stripe) => stripe.refunds.update('re_nope', { metadata: { a: '1' } }),
    error: InvalidRequest,
  },
  PostRefundsRefundCancel: {
    ok: async (stripe, key) => stripe.refunds.cancel(await insertPendingRefund(t, (await pay(t, key)).charge, 100)),
    fails: async (stripe, key) => stripe.refunds.cancel(await refund(stripe, key)),
    error: InvalidRequest,
  },
  GetCustomersCustomerPaymentMethods: {
    ok: async (stripe) => stripe.customers.listPaymentMethods((await stripe.paymentMethods.retrieve(await attached(stripe))).customer as string, { type: 'card' }),
    fails: (stripe) => stripe.customers.listPaymentMethods('cus_nope'),
    error: InvalidRequest,
  },
  GetCustomersCustomerPaymentMethodsPaymentMethod: {
    ok: async (stripe) => {
      const pm = await stripe.paymentMethods.retrieve(await attached(stripe));
      return stripe.customers.retrievePaymentMethod(pm.customer as string, pm.id);
    },
    fails: async (stripe) => stripe.customers.retrievePaymentMethod(await customer(stripe), await attached(stripe)),
    error: InvalidRequest,
  },
  PostTestHelpersRefundsRefundExpire: {
    ok: async (stripe, key) => stripe.testHelpers.refunds.expire(await insertPendingRefund(t, (await pay(t, key)).charge, 100, 'requires_action')),
    fails: async (stripe, key) => stripe.testHelpers.refunds.expire(await refund(stripe, key)),
    error: InvalidRequest,
  },
  PostPaymentIntentsIntentIncrementAuthorization: {
    ok: async (stripe) =>
      stripe.paymentIntents.incrementAuthorization(
        (await cardIntent(stripe, { payment_method: 'pm_card_visa', confirm: true, capture_method: 'manual', payment_method_options: { card: { request_incremental_authorization: 'if_available' } } })).id,
        { amount: 2500 },
      ),
    fails: async (stripe) => stripe.paymentIntents.incrementAuthorization((await cardIntent(stripe)).id, { amount: 2500 }),
    error: InvalidRequest,
  },
  GetPaymentMethods: { ok: (stripe) => stripe.paymentMethods.list({ type: 'card' }), fails: (stripe) => stripe.paymentMethods.list({ customer: 'cus_nope' }), error: InvalidRequest },
  PostPaymentMethods: {
    ok: (stripe) => stripe.paymentMethods.create({ type: 'card', card: { number: '4242424242424242', exp_month: 12, exp_year: 2040, cvc: '123' } }),
    fails: (stripe) => stripe.paymentMethods.create({ type: 'card', card: { number: '4000000000000000', exp_month: 12, exp_year: 2040 } }),
    error: Stripe.errors.StripeCardError,
  },
  GetPaymentMethodsPaymentMethod: { ok: (stripe) => stripe.paymentMethods.retrieve('pm_card_visa'), fails: (stripe) => stripe.paymentMethods.retrieve('pm_nope'), error: InvalidRequest },
  PostPaymentMethodsPaymentMethod: {
    ok: async (stripe) => stripe.paymentMethods.update(await attached(stripe), { metadata: { a: '1' } }),
    fails: (stripe) => stripe.paymentMethods.update('pm_nope', { metadata: { a: '1' } }),
    error: InvalidRequest,
  },
  PostPaymentMethodsPaymentMethodAttach: {
    ok: async (stripe) => stripe.paymentMethods.attach('pm_card_mastercard', { customer: await customer(stripe) }),
    fails: async (stripe) => stripe.paymentMethods.attach('pm_card_chargeDeclined', { customer: await customer(stripe) }),
    error: Stripe.errors.StripeCardError,
  },
  PostPaymentMethodsPaymentMethodDetach: {
    ok: async (stripe) => stripe.paymentMethods.detach(await attached(stripe)),
    fails: (stripe) => stripe.paymentMethods.detach('pm_card_visa'),
    error: InvalidRequest,
  },
  GetSetupIntents: { ok: (stripe) => stripe.setupIntents.list({ limit: 3 }), fails: (stripe) => stripe.setupIntents.list({ limit: 101 }), error: InvalidRequest },
  PostSetupIntents: {
    ok: async (stripe) => stripe.setupIntents.create({ customer: await customer(stripe), payment_method: 'pm_card_visa', allowed_payment_method_types: ['card'], confirm: true }),
    fails: (stripe) => stripe.setupIntents.create({ payment_method: 'pm_card_chargeDeclined', allowed_payment_method_types: ['card'], confirm: true }),
    error: Stripe.errors.StripeCardError,
  },
  GetSetupIntentsIntent: { ok: async (stripe) => stripe.setupIntents.retrieve(await setupIntent(stripe)), fails: (stripe) => stripe.setupIntents.retrieve('seti_nope'), error: InvalidRequest },
  PostSetupIntentsIntent: {
    ok: async (stripe) => stripe.setupIntents.update(await setupIntent(stripe), { metadata: { a: '1' } }),
    fails: (stripe) => stripe.setupIntents.update('seti_nope', { metadata: { a: '1' } }),
    error: InvalidRequest,
  },
  PostSetupIntentsIntentConfirm: {
    ok: async (stripe) => stripe.setupIntents.confirm(await setupIntent(stripe)),
    fails: async (stripe) => stripe.setupIntents.confirm((await stripe.setupIntents.create({ allowed_payment_method_types: ['card'] })).id),
    error: InvalidRequest,
  },
  PostSetupIntentsIntentCancel: {
    ok: async (stripe) => stripe.setupIntents.cancel(await setupIntent(stripe), { cancellation_reason: 'abandoned' }),
    fails: async (stripe) => stripe.setupIntents.cancel((await stripe.setupIntents.confirm(await setupIntent(stripe))).id),
    error: InvalidRequest,
  },
  GetPaymentIntentsSearch: {
    ok: async (stripe) => {
      await stripe.paymentIntents.create({ amount: 1000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true, return_url: 'http://127.0.0.1:9/back' });
      return stripe.paymentIntents.search({ query: 'status:"succeeded"' });
    },
    fails: (stripe) => stripe.paymentIntents.search({ query: 'foo:"bar"' }),
    error: InvalidRequest,
  },
  GetPaymentIntents: { ok: (stripe) => stripe.paymentIntents.list({ limit: 3 }), fails: (stripe) => stripe.paymentIntents.list({ limit: 101 }), error: InvalidRequest },
  PostPaymentIntents: {
    ok: (stripe) => cardIntent(stripe, { payment_method: 'pm_card_visa', confirm: true }),
    fails: (stripe) => cardIntent(stripe, { payment_method: 'pm_card_chargeDeclined', confirm: true }),
    error: Stripe.errors.StripeCardError,
  },
  GetPaymentIntentsIntent: { ok: async (stripe) => stripe.paymentIntents.retrieve((await cardIntent(stripe)).id), fails: (stripe) => stripe.paymentIntents.retrieve('pi_nope'), error: InvalidRequest },
  PostPaymentIntentsIntent: {
    ok: async (stripe) => stripe.paymentIntents.update((await cardIntent(stripe)).id, { amount: 3000, metadata: { a: '1' } }),
    fails: (stripe) => stripe.paymentIntents.update('pi_nope', { amount: 3000 }),
    error: InvalidRequest,
  },
  PostPaymentIntentsIntentConfirm: {
    ok: async (stripe) => stripe.paymentIntents.confirm((await cardIntent(stripe)).id, { payment_method: 'pm_card_visa' }),
    fails: async (stripe) => stripe.paymentIntents.confirm((await cardIntent(stripe)).id, { payment_method: 'pm_card_chargeDeclinedInsufficientFunds' }),
    error: Stripe.errors.StripeCardError,
  },
  PostPaymentIntentsIntentCapture: {
    ok: async (stripe) => stripe.paymentIntents.capture((await cardIntent(stripe, { payment_method: 'pm_card_visa', confirm: true, capture_method: 'manual' })).id),
    fails: async (stripe) => stripe.paymentIntents.capture((await cardIntent(stripe)).id),
    error: InvalidRequest,
  },
  PostPaymentIntentsIntentCancel: {
    ok: async (stripe) => stripe.paymentIntents.cancel((await cardIntent(stripe)).id, { cancellation_reason: 'duplicate' }),
    fails: async (stripe) => stripe.paymentIntents.cancel((await cardIntent(stripe, { payment_method: 'pm_card_visa', confirm: true })).id),
    error: InvalidRequest,
  },
  GetChargesSearch: {
    ok: async (stripe) => {
      await stripe.paymentIntents.create({ amount: 1000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true, return_url: 'http://127.0.0.1:9/back' });
      return stripe.charges.search({ query: 'refunded:"false"' });
    },
    fails: (stripe) => stripe.charges.search({ query: 'refunded~"fal"' }),
    error: InvalidRequest,
  },
  GetCharges: { ok: (stripe) => stripe.charges.list({ limit: 3 }), fails: (stripe) => stripe.charges.list({ starting_after: 'ch_nope' }), error: InvalidRequest },
  GetChargesCharge: {
    ok: async (stripe) => stripe.charges.retrieve((await cardIntent(stripe, { payment_method: 'pm_card_visa', confirm: true })).latest_charge as string),
    fails: (stripe) => stripe.charges.retrieve('ch_nope'),
    error: InvalidRequest,
  },
  PostChargesCharge: {
    ok: async (stripe) => stripe.charges.update((await cardIntent(stripe, { payment_method: 'pm_card_visa', confirm: true })).latest_charge as string, { description: 'd' }),
    fails: (stripe) => stripe.charges.update('ch_nope', { description: 'd' }),
    error: InvalidRequest,
  },
  GetForwardingRequests: { ok: (stripe) => stripe.forwarding.requests.list({ limit: 3 }), fails: (stripe) => stripe.forwarding.requests.list({ limit: 101 }), error: InvalidRequest },
  PostForwardingRequests: {
    ok: async (stripe) =>
      stripe.forwarding.requests.create({
        payment_method: 'pm_card_visa',
        url: `${(await forwardingHarness(t)).destination.origin}/sdk`,
        replacements: ['card_number', 'card_expiry'],
        request: { body: JSON.stringify({ card: { number: '', exp_month: 0, exp_year: 0 } }) },
      }),
    // A URL on no destination (only http://127.0.0.1: is configured); upstream failures are 5xx.
    fails: async (stripe) => {
      await forwardingHarness(t);
      return stripe.forwarding.requests.create({ payment_method: 'pm_card_visa', url: 'https://127.0.0.1:0/x', replacements: ['card_number'], request: { body: '{}' } });
    },
    error: InvalidRequest,
  },
  GetForwardingRequestsId: {
    ok: async (stripe, key) => stripe.forwarding.requests.retrieve((await createForwardingRequest(t, key)).id),
    fails: (stripe) => stripe.forwarding.requests.retrieve('fwdreq_nope'),
    error: InvalidRequest,
  },
  PostFinancialConnectionsSessions: {
    ok: (stripe) => fcSession(stripe).then((id) => stripe.financialConnections.sessions.retrieve(id)),
    fails: (stripe) => stripe.financialConnections.sessions.create({ account_holder: { type: 'customer', customer: 'cus_nope' }, permissions: ['balances'] }),
    error: InvalidRequest,
  },
  GetFinancialConnectionsSessionsSession: {
    ok: async (stripe) => stripe.financialConnections.sessions.retrieve(await fcSession(stripe)),
    fails: (stripe) => stripe.financialConnections.sessions.retrieve('fcsess_nope'),
    error: InvalidRequest,
  },
  GetSandboxFinancialConnectionsInstitutions: {
    ok: (stripe) => stripe.rawRequest('GET', '/sandbox/v1/financial_connections/institutions'),
    fails: (stripe) => stripe.rawRequest('GET', '/sandbox/v1/financial_connections/institutions?expand[]=data.nope'),
    error: InvalidRequest,
  },
  GetSandboxFinancialConnectionsSessions: {
    ok: async (stripe) => {
      await fcSession(stripe);
      return stripe.rawRequest('GET', '/sandbox/v1/financial_connections/sessions?status=pending');
    },
    fails: (stripe) => stripe.rawRequest('GET', '/sandbox/v1/financial_connections/sessions?status=bogus'),
    error: InvalidRequest,
  },
  PostSandboxFinancialConnectionsSessionsSessionComplete: {
    ok: async (stripe) => raw(stripe, `/sandbox/v1/financial_connections/sessions/${await fcSession(stripe)}/complete`, { institution: 'bank_oauth' }),
    fails: async (stripe) => raw(stripe, `/sandbox/v1/financial_connections/sessions/${await fcSession(stripe)}/complete`, { institution: 'nope' }),
    error: InvalidRequest,
  },
  GetFinancialConnectionsAccounts: {
    ok: async (stripe) => {
      await fcAccount(stripe);
      return stripe.financialConnections.accounts.list({ limit: 3 });
    },
    fails: (stripe) => stripe.financialConnections.accounts.list({ session: 'fcsess_nope' }),
    error: InvalidRequest,
  },
  GetFinancialConnectionsAccountsAccount: {
    ok: async (stripe) => stripe.financialConnections.accounts.retrieve(await fcAccount(stripe)),
    fails: (stripe) => stripe.financialConnections.accounts.retrieve('fca_nope'),
    error: InvalidRequest,
  },
  PostFinancialConnectionsAccountsAccountDisconnect: {
    ok: async (stripe) => stripe.financialConnections.accounts.disconnect(await fcAccount(stripe)),
    fails: (stripe) => stripe.financialConnections.accounts.disconnect('fca_nope'),
    error: InvalidRequest,
  },
  PostFinancialConnectionsAccountsAccountRefresh: {
    ok: async (stripe) => stripe.financialConnections.accounts.refresh(await fcAccount(stripe), { features: ['balance'] }),
    fails: async (stripe) => stripe.financialConnections.accounts.refresh(await fcAccount(stripe, { permissions: ['balances'] }), { features: ['transactions'] }),
    error: InvalidRequest,
  },
  PostFinancialConnectionsAccountsAccountSubscribe: {
    ok: async (stripe) => stripe.financialConnections.accounts.subscribe(await fcAccount(stripe), { features: ['transactions'] }),
    fails: async (stripe) => {
      const id = await fcAccount(stripe);
      await stripe.financialConnections.accounts.disconnect(id);
      return stripe.financialConnections.accounts.subscribe(id, { features: ['transactions'] });
    },
    error: InvalidRequest,
  },
  PostFinancialConnectionsAccountsAccountUnsubscribe: {
    ok: async (stripe) => stripe.financialConnections.accounts.unsubscribe(await fcAccount(stripe), { features: ['transactions'] }),
    fails: (stripe) => stripe.financialConnections.accounts.unsubscribe('fca_nope', { features: ['transactions'] }),
    error: InvalidRequest,
  },
  GetFinancialConnectionsAccountsAccountOwners: {
    ok: async (stripe, key) => {
      const id = await fcAccount(stripe);
      const { ownership } = await refreshFcAccount(t, key, id, 'ownership');
      return stripe.financialConnections.accounts.listOwners(id, { ownership });
    },
    fails: async (stripe) => stripe.financialConnections.accounts.listOwners(await fcAccount(stripe), { ownership: 'fcaowns_nope' }),
    error: InvalidRequest,
  },
  GetFinancialConnectionsTransactions: {
    ok: async (stripe, key) => {
      const id = await fcAccount(stripe);
      await refreshFcAccount(t, key, id, 'transactions');
      return stripe.financialConnections.transactions.list({ account: id, limit: 5 });
    },
    fails: async (stripe) => stripe.financialConnections.transactions.list({ account: await fcAccount(stripe) }),
    error: InvalidRequest,
  },
  GetFinancialConnectionsTransactionsTransaction: {
    ok: async (stripe, key) => stripe.financialConnections.transactions.retrieve((await fcTransactions(t, key))[0]),
    fails: (stripe) => stripe.financialConnections.transactions.retrieve('fctxn_nope'),
    error: InvalidRequest,
  },
  GetSubscriptions: { ok: (stripe) => stripe.subscriptions.list({ limit: 3 }), fails: (stripe) => stripe.subscriptions.list({ limit: 0 }), error: InvalidRequest },
  PostSubscriptions: {
    ok: (stripe) => subscription(stripe),
    fails: async (stripe) => subscription(stripe, { card: 'pm_card_chargeCustomerFail', behavior: 'error_if_incomplete' }),
    error: Stripe.errors.StripeCardError,
  },
  GetSubscriptionsSearch: {
    ok: async (stripe) => {
      await subscription(stripe);
      return stripe.subscriptions.search({ query: 'status:"active"' });
    },
    fails: (stripe) => stripe.subscriptions.search({ query: 'customer:"cus_1"' }),
    error: InvalidRequest,
  },
  GetSubscriptionsSubscriptionExposedId: {
    ok: async (stripe) => stripe.subscriptions.retrieve((await subscription(stripe)).id, { expand: ['latest_invoice', 'customer'] }),
    fails: (stripe) => stripe.subscriptions.retrieve('sub_nope'),
    error: InvalidRequest,
  },
  PostSubscriptionsSubscriptionExposedId: {
    ok: async (stripe) => stripe.subscriptions.update((await subscription(stripe)).id, { metadata: { a: '1' } }),
    fails: (stripe) => stripe.subscriptions.update('sub_nope', { metadata: { a: '1' } }),
    error: InvalidRequest,
  },
  PostSubscriptionsSubscriptionResume: {
    ok: async (stripe, key) => stripe.subscriptions.resume(await pausedSubscription(t, key), { billing_cycle_anchor: { type: 'now' } }),
    fails: async (stripe) => stripe.subscriptions.resume((await subscription(stripe)).id),
    error: InvalidRequest,
  },
  DeleteSubscriptionsSubscriptionExposedId: {
    ok: async (stripe) => stripe.subscriptions.cancel((await subscription(stripe)).id, { prorate: true }),
    fails: (stripe) => stripe.subscriptions.cancel('sub_nope'),
    error: InvalidRequest,
  },
  DeleteSubscriptionsSubscriptionExposedIdDiscount: {
    ok: async (stripe, key) => stripe.subscriptions.deleteDiscount(await subscriptionWithDiscount(t, key)),
    fails: async (stripe) => stripe.subscriptions.deleteDiscount((await subscription(stripe)).id),
    error: InvalidRequest,
  },
  GetSubscriptionItems: {
    ok: async (stripe) => stripe.subscriptionItems.list({ subscription: (await subscription(stripe)).id }),
    fails: (stripe) => stripe.subscriptionItems.list({ subscription: 'sub_nope' }),
    error: InvalidRequest,
  },
  PostSubscriptionItems: {
    ok: async (stripe) => {
      const sub = await subscription(stripe);
      const price = await stripe.prices.create({ product_data: { name: 'Extra' }, currency: 'usd', unit_amount: 500, recurring: { interval: 'month' } });
      return stripe.subscriptionItems.create({ subscription: sub.id, price: price.id, quantity: 2 });
    },
    fails: async (stripe) => stripe.subscriptionItems.create({ subscription: (await subscription(stripe)).id, price: (await price(stripe)).id }),
    error: InvalidRequest,
  },
  GetSubscriptionItemsItem: {
    ok: async (stripe) => stripe.subscriptionItems.retrieve((await subscription(stripe)).items.data[0].id),
    fails: (stripe) => stripe.subscriptionItems.retrieve('si_nope'),
    error: InvalidRequest,
  },
  PostSubscriptionItemsItem: {
    ok: async (stripe) => stripe.subscriptionItems.update((await subscription(stripe)).items.data[0].id, { quantity: 3, proration_behavior: 'always_invoice' }),
    fails: async (stripe) => stripe.subscriptionItems.update((await subscription(stripe)).items.data[0].id, { price: (await price(stripe)).id }),
    error: InvalidRequest,
  },
  DeleteSubscriptionItemsItem: {
    ok: async (stripe) => stripe.subscriptionItems.del((await subscription(stripe, { items: 2 })).items.data[0].id),
    fails: (stripe) => stripe.subscriptionItems.del('si_nope'),
    error: InvalidRequest,
  },
  GetInvoices: { ok: (stripe) => stripe.invoices.list({ limit: 3 }), fails: (stripe) => stripe.invoices.list({ limit: 0 }), error: InvalidRequest },
  GetInvoicesSearch: {
    ok: async (stripe) => {
      await subscription(stripe);
      return stripe.invoices.search({ query: 'status:"paid" AND total>0' });
    },
    fails: (stripe) => stripe.invoices.search({ query: 'status~"pai"' }),
    error: InvalidRequest,
  },
  GetInvoicesInvoice: {
    ok: async (stripe) => stripe.invoices.retrieve((await subscription(stripe)).latest_invoice as string),
    fails: (stripe) => stripe.invoices.retrieve('in_nope'),
    error: InvalidRequest,
  },
  GetInvoicesInvoiceLines: {
    ok: async (stripe) => stripe.invoices.listLineItems((await subscription(stripe)).latest_invoice as string),
    fails: (stripe) => stripe.invoices.listLineItems('in_nope'),
    error: InvalidRequest,
  },
  PostInvoicesCreatePreview: {
    ok: async (stripe) => {
      const sub = await subscription(stripe);
      return stripe.invoices.createPreview({ subscription: sub.id, subscription_details: { items: [{ id: sub.items.data[0].id, quantity: 2 }] } });
    },
    fails: (stripe) => stripe.invoices.createPreview({ subscription: 'sub_nope' }),
    error: InvalidRequest,
  },
  // Removed at 2025-03-31.basil, so not in this SDK: its raw request at a version before.
  GetInvoicesUpcoming: {
    ok: async (stripe) => stripe.rawRequest('GET', `/v1/invoices/upcoming?subscription=${(await subscription(stripe)).id}`, {}, { apiVersion: UPCOMING_VERSION }),
    fails: (stripe) => stripe.rawRequest('GET', '/v1/invoices/upcoming?subscription=sub_nope', {}, { apiVersion: UPCOMING_VERSION }),
    error: InvalidRequest,
  },
  GetInvoicesUpcomingLines: {
    ok: async (stripe) => stripe.rawRequest('GET', `/v1/invoices/upcoming/lines?subscription=${(await subscription(stripe, { items: 2 })).id}`, {}, { apiVersion: UPCOMING_VERSION }),
    fails: (stripe) => stripe.rawRequest('GET', '/v1/invoices/upcoming/lines?subscription=sub_nope', {}, { apiVersion: UPCOMING_VERSION }),
    error: InvalidRequest,
  },
  PostInvoicesInvoicePay: {
    ok: async (stripe) => stripe.invoices.pay((await subscription(stripe, { behavior: 'default_incomplete' })).latest_invoice as string),
    fails: async (stripe) => stripe.invoices.pay((await subscription(stripe, { card: 'pm_card_chargeCustomerFail' })).latest_invoice as string),
    error: Stripe.errors.StripeCardError,
  },
  PostInvoices: {
    ok: async (stripe) => stripe.invoices.create({ customer: await customer(stripe), description: 'SDK' }),
    fails: (stripe) => stripe.invoices.create({ customer: 'cus_nope' }),
    error: InvalidRequest,
  },
  PostInvoicesInvoice: {
    ok: async (stripe) => stripe.invoices.update((await manualDraft(stripe)).id!, { footer: 'SDK' }),
    fails: async (stripe) => stripe.invoices.update((await manualOpen(stripe)).id!, { collection_method: 'send_invoice' }),
    error: InvalidRequest,
  },
  DeleteInvoicesInvoice: {
    ok: async (stripe) => stripe.invoices.del((await manualDraft(stripe)).id!),
    fails: async (stripe) => stripe.invoices.del((await manualOpen(stripe)).id!),
    error: InvalidRequest,
  },
  PostInvoicesInvoiceFinalize: {
    ok: async (stripe) => stripe.invoices.finalizeInvoice((await manualDraft(stripe)).id!),
    fails: async (stripe) => stripe.invoices.finalizeInvoice((await manualOpen(stripe)).id!),
    error: InvalidRequest,
  },
  PostInvoicesInvoiceVoid: {
    ok: async (stripe) => stripe.invoices.voidInvoice((await manualOpen(stripe)).id!),
    fails: async (stripe) => stripe.invoices.voidInvoice((await manualDraft(stripe)).id!),
    error: InvalidRequest,
  },
  PostInvoicesInvoiceMarkUncollectible: {
    ok: async (stripe) => stripe.invoices.markUncollectible((await manualOpen(stripe)).id!),
    fails: async (stripe) => stripe.invoices.markUncollectible((await manualDraft(stripe)).id!),
    error: InvalidRequest,
  },
  PostInvoicesInvoiceSend: {
    ok: async (stripe) => stripe.invoices.sendInvoice((await manualOpen(stripe, { collection_method: 'send_invoice' })).id!),
    fails: async (stripe) => stripe.invoices.sendInvoice((await manualOpen(stripe)).id!),
    error: InvalidRequest,
  },
  GetInvoicePayments: { ok: (stripe) => stripe.invoicePayments.list({ limit: 3 }), fails: (stripe) => stripe.invoicePayments.list({ limit: 0 }), error: InvalidRequest },
  GetInvoicePaymentsInvoicePayment: {
    ok: async (stripe) => {
      const sub = await subscription(stripe);
      return stripe.invoicePayments.retrieve((await stripe.invoicePayments.list({ invoice: sub.latest_invoice as string })).data[0].id);
    },
    fails: (stripe) => stripe.invoicePayments.retrieve('inpay_nope'),
    error: InvalidRequest,
  },
  GetInvoiceitems: { ok: (stripe) => stripe.invoiceItems.list({ pending: true }), fails: (stripe) => stripe.invoiceItems.list({ limit: 0 }), error: InvalidRequest },
  PostInvoiceitems: {
    ok: async (stripe) => stripe.invoiceItems.create({ customer: await customer(stripe), amount: 500, currency: 'usd', discounts: [{ coupon: await coupon(stripe) }] }),
    fails: async (stripe) => stripe.invoiceItems.create({ customer: await customer(stripe), amount: 500 }),
    error: InvalidRequest,
  },
  PostInvoiceitemsInvoiceitem: {
    ok: async (stripe) =>
      stripe.invoiceItems.update((await stripe.invoiceItems.create({ customer: await customer(stripe), amount: 500, currency: 'usd' })).id, { amount: 700, discounts: [{ coupon: await coupon(stripe) }] }),
    fails: (stripe) => stripe.invoiceItems.update('ii_nope', { amount: 700 }),
    error: InvalidRequest,
  },
  DeleteInvoiceitemsInvoiceitem: {
    ok: async (stripe) => stripe.invoiceItems.del((await stripe.invoiceItems.create({ customer: await customer(stripe), amount: 500, currency: 'usd' })).id),
    fails: (stripe) => stripe.invoiceItems.del('ii_nope'),
    error: InvalidRequest,
  },
  GetInvoiceitemsInvoiceitem: {
    ok: async (stripe) => {
      const sub = await subscription(stripe);
      await stripe.subscriptionItems.update(sub.items.data[0].id, { quantity: 2 });
      return stripe.invoiceItems.retrieve((await stripe.invoiceItems.list({ pending: true })).data[0].id);
    },
    fails: (stripe) => stripe.invoiceItems.retrieve('ii_nope'),
    error: InvalidRequest,
  },
  GetTestHelpersTestClocks: { ok: (stripe) => stripe.testHelpers.testClocks.list(), fails: (stripe) => stripe.testHelpers.testClocks.list({ limit: 0 }), error: InvalidRequest },
  PostTestHelpersTestClocks: {
    ok: (stripe) => stripe.testHelpers.testClocks.create({ frozen_time: 1800000000, name: 'SDK' }),
    // 99 (1970) is a time the public API takes; a negative one is no Unix timestamp.
    fails: (stripe) => stripe.testHelpers.testClocks.create({ frozen_time: -1 }),
    error: InvalidRequest,
  },
  GetTestHelpersTestClocksTestClock: {
    ok: async (stripe) => stripe.testHelpers.testClocks.retrieve((await stripe.testHelpers.testClocks.create({ frozen_time: 1800000000 })).id),
    fails: (stripe) => stripe.testHelpers.testClocks.retrieve('clock_nope'),
    error: InvalidRequest,
  },
  DeleteTestHelpersTestClocksTestClock: {
    ok: async (stripe) => stripe.testHelpers.testClocks.del((await stripe.testHelpers.testClocks.create({ frozen_time: 1800000000 })).id),
    fails: (stripe) => stripe.testHelpers.testClocks.del('clock_nope'),
    error: InvalidRequest,
  },
  PostTestHelpersTestClocksTestClockAdvance: {
    ok: async (stripe) => stripe.testHelpers.testClocks.advance((await stripe.testHelpers.testClocks.create({ frozen_time: 1800000000 })).id, { frozen_time: 1800003600 }),
    fails: async (stripe) => stripe.testHelpers.testClocks.advance((await stripe.testHelpers.testClocks.create({ frozen_time: 1800000000 })).id, { frozen_time: 1700000000 }),
    error: InvalidRequest,
  },
};

const routes = registeredRoutes;

test('every operation has an SDK case', () => {
  expect(Object.keys(CASES).sort()).toEqual(routes.map((r) => r.operationId).sort());
});

/** The raw request answers the parsed body without the typed wrapper. */
const objectOf = (result: unknown): Record<string, any> => result as Record<string, any>;

for (const r of routes) {
  const c = CASES[r.operationId];
  if (!c) continue;

  test(`${r.operationId}: the SDK parses the answer into a ${r.returns.list ? 'list of ' : r.returns.search ? 'search result of ' : ''}${r.returns.object}`, async () => {
    const key = newTestKey();
    const result = objectOf(await c.ok(t.stripe(key), key));
    if (r.returns.list || r.returns.search) {
      expect(result.object).toBe(r.returns.search ? 'search_result' : 'list');
      // A search's case makes what it finds: an empty answer would check no item.
      if (r.returns.search) expect(result.data.length).toBeGreaterThan(0);
      for (const item of result.data) expect(item.object).toBe(r.returns.object);
    } else {
      expect(result.object).toBe(r.returns.object);
    }
    expect(result.lastResponse?.requestId ?? result.lastResponse?.headers?.['request-id']).toMatch(/^req_/);
  });

  test(`${r.operationId}: the SDK raises ${c.error.name} for a failing call`, async () => {
    const key = newTestKey();
    // The key's account exists before the failing call, as it would for a real client.
    await t.http().get('/v1/account').set(bearer(key));
    const failure = await c.fails(t.stripe(key), key).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(c.error);
    const err = failure as Stripe.errors.StripeError;
    expect(err.statusCode).toBeGreaterThanOrEqual(400);
    expect(err.statusCode).toBeLessThan(500);
    expect(err.requestId).toMatch(/^req_/);
    expect(err.message.length).toBeGreaterThan(0);
  });
}

