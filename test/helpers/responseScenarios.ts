import { bearer, type TestApp } from './app';
import { randomBase62 } from '../../src/lib/ids';
import { LATEST_API_VERSION } from '../../src/kernel/versions';
import { accountOfKey, createConnectedAccount, emitTestEvent } from './events';
import {
  CLOSED_ORIGIN,
  COMPLETE_EXPRESS,
  createAccount,
  createAccountSession,
  createAppSecret,
  createPrice,
  createProduct,
  createTaxRate,
  createCoupon,
  createPromotionCode,
  createExternalAccount,
  createPerson,
  createVerificationReport,
  createVerificationSession,
  createWebhookEndpoint,
  form,
  WEBHOOK_URL,
  createCustomer,
  createPaymentMethod,
  createPaymentIntent,
  attachedCard,
  createFcSession,
  linkFcAccounts,
  refreshFcAccount,
  createSubscription,
  pausedSubscription,
  customerWithDiscount,
  subscriptionWithDiscount,
  createPendingAuthentication,
} from './fixtures';
import { pay, insertPendingRefund } from './payments';
import { createForwardingRequest, forwardingHarness } from './forwarding';

// Requests that succeed and requests that fail, for every documented operation: the responses
// conformance test checks their answers against openapi/ and the stripe package's types, and
// the versions test against each older major's types at the version it pins. An area that adds
// operations adds a scenario for each of them here.

let app: TestApp;
/** The version every request is made at (`Stripe-Version`); none: the account's default. */
let pinned: string | undefined;

const VERBS = new Set(['get', 'post', 'delete', 'put', 'patch', 'head']);

/** `app`, whose supertest requests carry `Stripe-Version: pinned` (a request may set another). */
const t = new Proxy({} as TestApp, {
  get(_target, name) {
    if (name !== 'http') return (app as any)[name];
    return () => {
      const http = app.http();
      return new Proxy(http, {
        get: (o: any, verb) => (typeof verb === 'string' && VERBS.has(verb) ? (...args: unknown[]) => (pinned ? o[verb](...args).set('Stripe-Version', pinned) : o[verb](...args)) : o[verb]),
      });
    };
  },
});

/** The app the scenarios run against, and the version they run at (none: the account's default, DEFAULT_API_VERSION). */
export function useApp(testApp: TestApp, version?: string): TestApp {
  app = testApp;
  pinned = version;
  return t;
}

export function pinVersion(version: string | undefined): void {
  pinned = version;
}

export interface Answer {
  readonly label: string;
  readonly status: number;
  readonly body: unknown;
}

export type Scenario = (key: string) => Promise<Answer[]>;

const answer = (label: string, res: { status: number; body: unknown }): Answer => ({ label, status: res.status, body: res.body });

export const post = (key: string, path: string, body: string | Record<string, unknown>) =>
  t
    .http()
    .post(path)
    .set(bearer(key))
    .type('form')
    .send(typeof body === 'string' ? body : form(body));
const CU = '/v1/customers';
const PMS = '/v1/payment_methods';
const SETI = '/v1/setup_intents';
/** A SetupIntent of cards only (confirmed without a return_url). */
const cardSetup = { allowed_payment_method_types: ['card'] };
const RE = '/v1/refunds';
/** A refund of part of a new payment (a PaymentIntent confirmed through the API: test/helpers/payments.ts). */
const refundOf = async (key: string): Promise<string> => (await post(key, RE, { charge: (await pay(t, key)).charge, amount: 100 })).body.id;
const PI = '/v1/payment_intents';
const CH = '/v1/charges';
const PA = '/sandbox/v1/payment_authentications';
/** A PaymentIntent paid with `pm` (its charge declined, approved, or waiting on 3-D Secure). */
const paid = (key: string, pm: string, params: Record<string, unknown> = {}) => createPaymentIntentOrDecline(key, { payment_method: pm, confirm: true, ...params });
async function createPaymentIntentOrDecline(key: string, params: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await post(key, PI, { amount: 2000, currency: 'usd', allowed_payment_method_types: ['card'], ...params });
  return res.status === 200 ? res.body : res.body.error.payment_intent;
}
export const get = (key: string, path: string) => t.http().get(path).set(bearer(key));
const del = (key: string, path: string) => t.http().delete(path).set(bearer(key));

export const WE = '/v1/webhook_endpoints';
export const AC = '/v1/accounts';
const SE = '/v1/apps/secrets';
const PR = '/v1/products';
const PC = '/v1/prices';
const TX = '/v1/tax_rates';
const CO = '/v1/coupons';
const PRC = '/v1/promotion_codes';
const FR = '/v1/forwarding/requests';
const SU = '/v1/subscriptions';
const SI = '/v1/subscription_items';
const IN = '/v1/invoices';
/** Operations the public API removed, and the version that did: no major pinned there or after can call them. */
export const REMOVED_AT: Readonly<Record<string, string>> = { GetInvoicesUpcoming: '2025-03-31', GetInvoicesUpcomingLines: '2025-03-31' };
/** An intent's charge to expand: `latest_charge`, or before 2022-11-15 (which had `charges` instead) a path through `charges`. */
const intentCharge = (prefix = '') => (pinned !== undefined && pinned < '2022-11-15' ? `${prefix}charges.data.customer` : `${prefix}latest_charge`);

/** The version `GET /v1/invoices/upcoming` is asked at: the pinned one while it had it (before 2025-03-31.basil), else the last that did. */
const upcomingVersion = () => (pinned !== undefined && pinned < '2025-03-31' ? pinned : '2025-02-24.acacia');
const II = '/v1/invoiceitems';
const IP = '/v1/invoice_payments';
const TC = '/v1/test_helpers/test_clocks';
/** A subscription with a pending proration, on a customer paying with `pm_card_visa`. */
async function changedSubscription(key: string): Promise<Record<string, any>> {
  const sub = await createSubscription(t, key);
  await post(key, `${SI}/${sub.items.data[0].id}`, { quantity: 2 });
  return sub;
}
/** A manual draft invoice with one pending item (12.50) on it; its id. */
async function manualDraft(key: string, params: Record<string, unknown> = {}): Promise<string> {
  const customer = (await createCustomer(t, key)).id;
  await post(key, II, { customer, amount: 1250, currency: 'usd' });
  return (await post(key, IN, { customer, pending_invoice_items_behavior: 'include', ...params })).body.id;
}

/** The same, finalized (open). */
async function manualOpen(key: string, params: Record<string, unknown> = {}): Promise<string> {
  const id = await manualDraft(key, params);
  await post(key, `${IN}/${id}/finalize`, {});
  return id;
}

export const CUSTOM_INDIVIDUAL = {
  controller: { stripe_dashboard: { type: 'none' }, requirement_collection: 'application' },
  capabilities: { card_payments: { requested: true }, transfers: { requested: true } },
  business_type: 'individual',
  individual: { first_name: 'Jenny', metadata: { a: '1' } },
};

const FULL_PERSON = {
  first_name: 'Jenny',
  last_name: 'Rosen',
  first_name_kana: 'ジェニー',
  email: 'jenny@example.com',
  phone: '+15555550100',
  dob: { day: 1, month: 1, year: 1990 },
  address: { line1: '1 Main St', city: 'San Francisco', state: 'CA', postal_code: '94111', country: 'US' },
  address_kana: { city: 'シブヤ', town: 'ジングウマエ' },
  registered_address: { line1: '2 Main St' },
  ssn_last_4: '0000',
  id_number: '000000000',
  full_name_aliases: ['Jen'],
  gender: 'female',
  nationality: 'US',
  political_exposure: 'none',
  metadata: { a: '1' },
  relationship: { executive: true, title: 'CFO' },
  additional_tos_acceptances: { account: { date: 1700000000, ip: '203.0.113.1' } },
  verification: { document: { front: 'file_front' } },
};

/** For each operationId: requests that succeed, in the variety of shapes the operation can answer. */
export const scenarios: Record<string, Scenario> = {
  PostAccountSessions: async (key) => {
    const { id } = await createAccount(t, key);
    return [
      answer('one component', await post(key, '/v1/account_sessions', { account: id, components: { account_onboarding: { enabled: true } } })),
      answer(
        'features in both spellings',
        await post(key, '/v1/account_sessions', {
          account: id,
          components: {
            payouts: { enabled: true, features: { disable_service_user_authentication: true, instant_payouts: true } },
            account_management: { enabled: false, features: { disable_stripe_user_authentication: true } },
            documents: { enabled: true },
          },
        }),
      ),
    ];
  },
  PostAccountLinks: async (key) => {
    const { id } = await createAccount(t, key);
    const custom = await createAccount(t, key, CUSTOM_INDIVIDUAL);
    return [
      answer('onboarding', await post(key, '/v1/account_links', { account: id, type: 'account_onboarding', refresh_url: 'https://example.com/r', return_url: 'https://example.com/ok' })),
      answer('update', await post(key, '/v1/account_links', { account: custom.id, type: 'account_update', collection_options: { fields: 'eventually_due' } })),
    ];
  },
  PostSandboxAccountSessionsClaim: async (key) => {
    const { client_secret } = await createAccountSession(t, key);
    return [answer('claimed', await post(key, '/sandbox/v1/account_sessions/claim', { client_secret }))];
  },
  GetAccount: async (key) => {
    const platform = await get(key, '/v1/account');
    const connected = await createAccount(t, key, { business_type: 'individual', external_account: 'tok_visa_debit' });
    return [answer('platform', platform), answer('connected account', await get(key, '/v1/account').set('Stripe-Account', connected.id))];
  },
  GetAccounts: async (key) => {
    const out = [answer('empty list', await get(key, AC))];
    for (let i = 0; i < 3; i++) await createAccount(t, key, { metadata: { i: String(i) } });
    out.push(answer('full list', await get(key, AC)));
    const first = await get(key, `${AC}?limit=2`);
    out.push(answer('first page', first));
    out.push(answer('next page', await get(key, `${AC}?limit=2&starting_after=${first.body.data[1].id}`)));
    out.push(answer('created filter', await get(key, `${AC}?created[gte]=0`)));
    return out;
  },
  PostAccounts: async (key) => [
    answer('minimal', await post(key, AC, '')),
    answer('custom individual', await post(key, AC, { ...CUSTOM_INDIVIDUAL })),
    answer('company, spec spelling', await post(key, AC, {
      business_type: 'company',
      controller: { service_dashboard: { type: 'express' }, losses: { payments: 'service' }, requirement_collection: 'service' },
      company: { name: 'Co', structure: 'llc', address: { city: 'Austin' } },
      bank_account: { account_number: '000123456789', country: 'US', routing_number: '110000000' },
      settings: { payouts: { schedule: { interval: 'weekly', weekly_anchor: 'friday' } } },
      groups: { payments_pricing: 'default' },
    })),
    answer('external_account as a dictionary', await post(key, AC, {
      type: 'express',
      external_account: { object: 'bank_account', country: 'US', currency: 'usd', routing_number: '110000000', account_number: '000123456789' },
    })),
  ],
  GetAccountsAccount: async (key) => {
    const plain = await createAccount(t, key);
    const full = await createAccount(t, key, { ...CUSTOM_INDIVIDUAL });
    return [answer('defaults', await get(key, `${AC}/${plain.id}`)), answer('individual', await get(key, `${AC}/${full.id}`))];
  },
  PostAccountsAccount: async (key) => {
    const { id } = await createAccount(t, key, { ...CUSTOM_INDIVIDUAL });
    return [
      answer('no change', await post(key, `${AC}/${id}`, '')),
      answer('everything given', await post(key, `${AC}/${id}`, {
        business_profile: { mcc: '5734', url: 'http://127.0.0.1:0/shop' },
        individual: {
          first_name: 'J', last_name: 'R', dob: { day: 1, month: 1, year: 1990 }, email: 'j@example.com', phone: '+15555550100',
          address: { line1: '1 Main St', city: 'SF', state: 'CA', postal_code: '94111' }, ssn_last_4: '0000',
        },
        external_account: 'btok_us_verified',
        tos_acceptance: { date: 1700000000, ip: '203.0.113.1' },
      })),
      answer('metadata unset', await post(key, `${AC}/${id}`, 'metadata=')),
    ];
  },
  DeleteAccountsAccount: async (key) => {
    const { id } = await createAccount(t, key);
    return [answer('deleted', await del(key, `${AC}/${id}`))];
  },
  PostAccountsAccountLoginLinks: async (key) => {
    const { id } = await createAccount(t, key, COMPLETE_EXPRESS);
    return [answer('login link', await post(key, `${AC}/${id}/login_links`, ''))];
  },
  PostAccountsAccountReject: async (key) => {
    const express = await createAccount(t, key, { type: 'express' });
    const custom = await createAccount(t, key, { type: 'custom', capabilities: { transfers: { requested: true } } });
    return [
      answer('express, fraud', await post(key, `${AC}/${express.id}/reject`, { reason: 'fraud' }).set('Stripe-Version', '2026-08-26.dahlia')),
      answer('custom, endive reason', await post(key, `${AC}/${custom.id}/reject`, { reason: 'credit' }).set('Stripe-Version', '2026-10-28.endive')),
    ];
  },
  GetAccountsAccountCapabilities: async (key) => {
    const none = await createAccount(t, key, { capabilities: { card_payments: { requested: false } } });
    const individual = await createAccount(t, key, { ...CUSTOM_INDIVIDUAL });
    return [
      answer('empty list', await get(key, `${AC}/${none.id}/capabilities`)),
      answer('inactive', await get(key, `${AC}/${individual.id}/capabilities`)),
      answer('a page', await get(key, `${AC}/${individual.id}/capabilities?limit=1`)),
      answer('the platform', await get(key, `${AC}/${await accountOfKey(t.runtime, key)}/capabilities`)),
    ];
  },
  GetAccountsAccountCapabilitiesCapability: async (key) => {
    const individual = await createAccount(t, key, { ...CUSTOM_INDIVIDUAL });
    return [
      answer('requested', await get(key, `${AC}/${individual.id}/capabilities/card_payments`)),
      answer('unrequested', await get(key, `${AC}/${individual.id}/capabilities/link_payments`)),
    ];
  },
  PostAccountsAccountCapabilitiesCapability: async (key) => {
    const individual = await createAccount(t, key, { ...CUSTOM_INDIVIDUAL });
    const path = `${AC}/${individual.id}/capabilities/link_payments`;
    return [
      answer('requested', await post(key, path, 'requested=true')),
      answer('no change', await post(key, path, '')),
      answer('removed', await post(key, path, 'requested=false')),
    ];
  },
  GetAccountsAccountExternalAccounts: async (key) => {
    const { id } = await createAccount(t, key);
    const out = [answer('empty list', await get(key, `${AC}/${id}/external_accounts`))];
    await createExternalAccount(t, key, id);
    await createExternalAccount(t, key, id, { external_account: 'tok_visa_debit' });
    await createExternalAccount(t, key, id, { external_account: { object: 'bank_account', account_number: '000123456789', country: 'DE', currency: 'eur', account_holder_name: 'J' } });
    out.push(answer('bank accounts and a card', await get(key, `${AC}/${id}/external_accounts`)));
    out.push(answer('cards', await get(key, `${AC}/${id}/external_accounts?object=card`)));
    out.push(answer('a page', await get(key, `${AC}/${id}/external_accounts?limit=1`)));
    return out;
  },
  PostAccountsAccountExternalAccounts: async (key) => {
    const { id } = await createAccount(t, key);
    const path = `${AC}/${id}/external_accounts`;
    return [
      answer('token', await post(key, path, { external_account: 'btok_us_verified' })),
      answer('second, default', await post(key, path, { external_account: 'btok_us', default_for_currency: true, metadata: { a: '1' } })),
      answer('card token', await post(key, path, { external_account: 'tok_mastercard_debit' })),
      answer('card details', await post(key, path, { external_account: { object: 'card', number: '4000056655665556', exp_month: 12, exp_year: 2040, name: 'J', address_zip: '94111' } })),
      answer('card token object', await post(key, path, { external_account: { object: 'card', token: 'tok_visa_debit' } })),
      answer('bank details', await post(key, path, { external_account: { object: 'bank_account', account_number: '000123456789', routing_number: '110000000', country: 'US', account_holder_type: 'company' } })),
    ];
  },
  GetAccountsAccountExternalAccountsExternalAccount: async (key) => {
    const { id } = await createAccount(t, key);
    const bank = await createExternalAccount(t, key, id);
    const card = await createExternalAccount(t, key, id, { external_account: 'tok_visa_debit' });
    return [
      answer('bank account', await get(key, `${AC}/${id}/external_accounts/${bank.id}`)),
      answer('card', await get(key, `${AC}/${id}/external_accounts/${card.id}`)),
    ];
  },
  PostAccountsAccountExternalAccountsExternalAccount: async (key) => {
    const { id } = await createAccount(t, key, { ...CUSTOM_INDIVIDUAL });
    await createExternalAccount(t, key, id);
    const bank = await createExternalAccount(t, key, id);
    const card = await createExternalAccount(t, key, id, { external_account: 'tok_visa_debit' });
    return [
      answer('holder', await post(key, `${AC}/${id}/external_accounts/${bank.id}`, { account_holder_name: 'Jenny', account_holder_type: 'individual', account_type: 'savings' })),
      answer('default', await post(key, `${AC}/${id}/external_accounts/${bank.id}`, { default_for_currency: true, metadata: { a: '1' } })),
      answer('unset', await post(key, `${AC}/${id}/external_accounts/${bank.id}`, 'account_holder_type=&metadata=')),
      answer('card', await post(key, `${AC}/${id}/external_accounts/${card.id}`, { exp_month: '6', exp_year: '2041', name: 'J R', address_city: 'SF' })),
    ];
  },
  DeleteAccountsAccountExternalAccountsExternalAccount: async (key) => {
    const { id } = await createAccount(t, key);
    await createExternalAccount(t, key, id);
    const bank = await createExternalAccount(t, key, id);
    await createExternalAccount(t, key, id, { external_account: 'tok_visa_debit' });
    const card = await createExternalAccount(t, key, id, { external_account: 'tok_mastercard_debit' });
    return [
      answer('bank account', await del(key, `${AC}/${id}/external_accounts/${bank.id}`)),
      answer('card', await del(key, `${AC}/${id}/external_accounts/${card.id}`)),
    ];
  },
  GetAccountsAccountPersons: async (key) => {
    const { id } = await createAccount(t, key, { business_type: 'company' });
    const out = [answer('empty list', await get(key, `${AC}/${id}/persons`))];
    await createPerson(t, key, id, { first_name: 'A', relationship: { representative: true, title: 'CEO' } });
    await createPerson(t, key, id, { ...FULL_PERSON, relationship: { owner: true, percent_ownership: 40 } });
    out.push(answer('full list', await get(key, `${AC}/${id}/persons`)));
    out.push(answer('filtered', await get(key, `${AC}/${id}/persons?relationship[owner]=true&limit=1`)));
    const individual = await createAccount(t, key, { ...CUSTOM_INDIVIDUAL });
    out.push(answer('the individual', await get(key, `${AC}/${individual.id}/persons`)));
    return out;
  },
  PostAccountsAccountPersons: async (key) => {
    const { id } = await createAccount(t, key, { business_type: 'company', country: 'FR' });
    return [
      answer('minimal', await post(key, `${AC}/${id}/persons`, '')),
      answer('everything', await post(key, `${AC}/${id}/persons`, FULL_PERSON)),
      answer('a director', await post(key, `${AC}/${id}/persons`, { first_name: 'D', relationship: { director: true } })),
    ];
  },
  GetAccountsAccountPersonsPerson: async (key) => {
    const { id } = await createAccount(t, key, { business_type: 'company' });
    const person = await createPerson(t, key, id, FULL_PERSON);
    const individual = await createAccount(t, key, { ...CUSTOM_INDIVIDUAL });
    return [
      answer('a person', await get(key, `${AC}/${id}/persons/${person.id}`)),
      answer('the individual', await get(key, `${AC}/${individual.id}/persons/${individual.individual.id}`)),
    ];
  },
  PostAccountsAccountPersonsPerson: async (key) => {
    const { id } = await createAccount(t, key, { business_type: 'company' });
    const person = await createPerson(t, key, id, { first_name: 'A', metadata: { a: '1' } });
    const individual = await createAccount(t, key, { ...CUSTOM_INDIVIDUAL });
    return [
      answer('no change', await post(key, `${AC}/${id}/persons/${person.id}`, '')),
      answer('representative', await post(key, `${AC}/${id}/persons/${person.id}`, { relationship: { representative: true }, dob: { day: 1, month: 1, year: 1980 } })),
      answer('unset', await post(key, `${AC}/${id}/persons/${person.id}`, 'metadata=&dob=&relationship[percent_ownership]=')),
      answer('the individual', await post(key, `${AC}/${individual.id}/persons/${individual.individual.id}`, { last_name: 'Rosen' })),
    ];
  },
  DeleteAccountsAccountPersonsPerson: async (key) => {
    const { id } = await createAccount(t, key, { business_type: 'company' });
    const person = await createPerson(t, key, id);
    return [answer('deleted', await del(key, `${AC}/${id}/persons/${person.id}`))];
  },
  GetWebhookEndpoints: async (key) => {
    const out = [answer('empty list', await get(key, WE))];
    for (let i = 0; i < 4; i++) await createWebhookEndpoint(t, key, { url: `${WEBHOOK_URL}/${i}`, metadata: { i: String(i) } });
    out.push(answer('full list', await get(key, WE)));
    const first = await get(key, `${WE}?limit=2`);
    out.push(answer('first page', first));
    out.push(answer('next page', await get(key, `${WE}?limit=2&starting_after=${first.body.data[1].id}`)));
    out.push(answer('previous page', await get(key, `${WE}?limit=1&ending_before=${first.body.data[1].id}`)));
    return out;
  },
  PostStripecliSessions: async (key) => [
    answer('stripe listen', await post(key, '/v1/stripecli/sessions', 'device_name=laptop&websocket_features[]=webhooks')),
    answer('stripe logs tail', await post(key, '/v1/stripecli/sessions', { device_name: 'laptop', websocket_features: ['request_logs'], filters: '{"filter_http_method":["POST"]}' })),
  ],
  PostWebhookEndpoints: async (key) => [
    answer('minimal', await post(key, WE, { url: WEBHOOK_URL, enabled_events: ['charge.succeeded'] })),
    answer('all events', await post(key, WE, `url=${CLOSED_ORIGIN}/all&enabled_events[]=*`)),
    answer(
      'every parameter',
      await post(key, WE, {
        url: WEBHOOK_URL,
        enabled_events: ['account.updated', 'capability.updated'],
        api_version: '2026-08-26.dahlia',
        connect: true,
        description: 'All of it',
        metadata: { a: '1' },
      }),
    ),
  ],
  GetWebhookEndpointsWebhookEndpoint: async (key) => {
    const plain = await createWebhookEndpoint(t, key);
    const full = await createWebhookEndpoint(t, key, { api_version: '2024-06-20', description: 'd', metadata: { a: '1' }, enabled_events: ['*'] });
    return [answer('defaults', await get(key, `${WE}/${plain.id}`)), answer('every field set', await get(key, `${WE}/${full.id}`))];
  },
  PostWebhookEndpointsWebhookEndpoint: async (key) => {
    const { id } = await createWebhookEndpoint(t, key, { description: 'd', metadata: { a: '1' } });
    const path = `${WE}/${id}`;
    return [
      answer('no change', await post(key, path, '')),
      answer('disabled', await post(key, path, 'disabled=true')),
      answer('url and events', await post(key, path, { url: `${CLOSED_ORIGIN}/x`, enabled_events: ['*'] })),
      answer('description unset', await post(key, path, 'description=')),
      answer('metadata unset', await post(key, path, 'metadata=')),
      answer('enabled again', await post(key, path, 'disabled=false')),
    ];
  },
  DeleteWebhookEndpointsWebhookEndpoint: async (key) => {
    const { id } = await createWebhookEndpoint(t, key);
    return [answer('deleted', await del(key, `${WE}/${id}`))];
  },
  DeleteSandboxData: async (key) => {
    const empty = answer('nothing to delete', await del(key, '/sandbox/v1/data'));
    await createWebhookEndpoint(t, key);
    await createAccount(t, key);
    return [empty, answer('an endpoint and a connected account', await del(key, '/sandbox/v1/data'))];
  },
  GetEvents: async (key) => {
    const out = [answer('empty list', await get(key, EV))];
    const { connected } = await eventsOf(key);
    out.push(answer('full list', await get(key, EV)));
    out.push(answer('filtered by type', await get(key, `${EV}?type=account.*&limit=2`)));
    out.push(answer('filtered by types', await get(key, `${EV}?types[]=capability.updated&delivery_success=true`)));
    const first = await get(key, `${EV}?limit=1`);
    out.push(answer('next page', await get(key, `${EV}?limit=1&starting_after=${first.body.data[0].id}`)));
    out.push(answer('connected account', await get(key, EV).set('Stripe-Account', connected)));
    return out;
  },
  GetEventsId: async (key) => {
    const { plain, updated, ofConnected, connected } = await eventsOf(key);
    return [
      answer('plain', await get(key, `${EV}/${plain}`)),
      answer('with previous_attributes', await get(key, `${EV}/${updated}`)),
      answer('of a connected account', await get(key, `${EV}/${ofConnected}`).set('Stripe-Account', connected)),
    ];
  },
  PostSandboxEventsIdResend: async (key) => {
    const { plain } = await eventsOf(key);
    const { id } = await createWebhookEndpoint(t, key);
    return [answer('resent', await post(key, `/sandbox/v1/events/${plain}/resend`, { webhook_endpoint: id }))];
  },
  GetSandboxPaymentAuthentications: async (key) => {
    const out = [answer('empty list', await get(key, PA))];
    const { id } = await createPendingAuthentication(t, key);
    await post(key, `${PA}/${id}/fail`, {});
    await createPendingAuthentication(t, key);
    out.push(answer('pending and failed', await get(key, PA)));
    out.push(answer('pending only', await get(key, `${PA}?status=pending`)));
    return out;
  },
  PostSandboxPaymentAuthenticationsPaymentAuthenticationComplete: async (key) => [
    answer('completed', await post(key, `${PA}/${(await createPendingAuthentication(t, key)).id}/complete`, {})),
  ],
  PostSandboxPaymentAuthenticationsPaymentAuthenticationFail: async (key) => [
    answer('failed', await post(key, `${PA}/${(await createPendingAuthentication(t, key)).id}/fail`, {})),
  ],
  GetSandboxWebhookEndpointsWebhookEndpointDeliveries: async (key) => {
    const { id } = await createWebhookEndpoint(t, key);
    const path = `/sandbox/v1/webhook_endpoints/${id}/deliveries`;
    const out = [answer('empty list', await get(key, path))];
    await recordAttempts(key, id);
    out.push(answer('attempts', await get(key, path)));
    out.push(answer('a page', await get(key, `${path}?limit=1`)));
    out.push(answer('of one event', await get(key, `${path}?event=${(await eventsOf(key)).plain}`)));
    return out;
  },
  PostAppsSecrets: async (key) => [
    answer('account scope', await post(key, SE, { name: 'a', payload: 'p', scope: { type: 'account' } })),
    answer('user scope, expiring', await post(key, SE, { name: 'a', payload: 'p', scope: { type: 'user', user: 'usr_1' }, expires_at: 2000000000 })),
    answer('replaced', await post(key, SE, { name: 'a', payload: 'q', scope: { type: 'account' } })),
  ],
  GetAppsSecretsFind: async (key) => {
    await createAppSecret(t, key, { name: 'a' });
    await createAppSecret(t, key, { name: 'b', scope: { type: 'user', user: 'usr_1' }, expires_at: 2000000000 });
    return [
      answer('account scope', await get(key, `${SE}/find?name=a&scope[type]=account`)),
      answer('user scope, expiring', await get(key, `${SE}/find?name=b&scope[type]=user&scope[user]=usr_1`)),
    ];
  },
  GetAppsSecrets: async (key) => {
    const out = [answer('empty list', await get(key, `${SE}?scope[type]=account`))];
    for (let i = 0; i < 3; i++) await createAppSecret(t, key, { name: `n${i}`, ...(i === 1 ? { expires_at: 2000000000 } : {}) });
    await createAppSecret(t, key, { name: 'u', scope: { type: 'user', user: 'usr_1' } });
    out.push(answer('full list', await get(key, `${SE}?scope[type]=account`)));
    const first = await get(key, `${SE}?scope[type]=account&limit=2`);
    out.push(answer('next page', await get(key, `${SE}?scope[type]=account&limit=2&starting_after=${first.body.data[1].id}`)));
    out.push(answer('user scope', await get(key, `${SE}?scope[type]=user&scope[user]=usr_1`)));
    return out;
  },
  PostAppsSecretsDelete: async (key) => {
    await createAppSecret(t, key, { name: 'a' });
    await createAppSecret(t, key, { name: 'b', scope: { type: 'user', user: 'usr_1' }, expires_at: 2000000000 });
    return [
      answer('account scope', await post(key, `${SE}/delete`, { name: 'a', scope: { type: 'account' } })),
      answer('user scope, expiring', await post(key, `${SE}/delete`, { name: 'b', scope: { type: 'user', user: 'usr_1' } })),
    ];
  },
  GetCustomers: async (key) => {
    await createCustomer(t, key, { email: 'a@example.com', address: { line1: 'x', country: 'US' } });
    await createCustomer(t, key, { payment_method: 'pm_card_visa', invoice_settings: { default_payment_method: 'pm_card_visa' } });
    return [answer('list', await get(key, CU)), answer('expanded', await get(key, `${CU}?expand[]=data.invoice_settings.default_payment_method`))];
  },
  GetCustomersSearch: async (key) => {
    await createCustomer(t, key, { email: 'a@example.com', name: 'Jenny Rosen', metadata: { order: '6735' } });
    await createCustomer(t, key, { email: 'b@example.com', payment_method: 'pm_card_visa', invoice_settings: { default_payment_method: 'pm_card_visa' } });
    const search = (query: string, extra = '') => get(key, `${CU}/search?query=${encodeURIComponent(query)}${extra}`);
    return [
      answer('found', await search('email~"example"')),
      answer('none', await search('name:"nobody"')),
      answer('a page with total_count', await search('email~"example"', '&limit=1&expand[]=total_count')),
      answer('expanded', await search("metadata['order']:'6735' OR email:\"b@example.com\"", '&expand[]=data.invoice_settings.default_payment_method')),
    ];
  },
  PostCustomers: async (key) => [
    answer('empty', await post(key, CU, {})),
    answer('every field', await post(key, CU, { email: 'a@example.com', name: 'A', phone: '1', description: 'd', address: { line1: 'x' }, shipping: { name: 'n', address: { line1: 'y' } }, metadata: { a: '1' }, preferred_locales: ['en'], tax_exempt: 'exempt', payment_method: 'pm_card_visa', invoice_settings: { default_payment_method: 'pm_card_visa' } })),
  ],
  GetCustomersCustomer: async (key) => {
    const { id } = await createCustomer(t, key, { payment_method: 'pm_card_visa', invoice_settings: { default_payment_method: 'pm_card_visa' } });
    const gone = (await createCustomer(t, key)).id;
    await del(key, `${CU}/${gone}`);
    return [answer('customer', await get(key, `${CU}/${id}`)), answer('expanded', await get(key, `${CU}/${id}?expand[]=invoice_settings.default_payment_method`)), answer('deleted', await get(key, `${CU}/${gone}`))];
  },
  PostCustomersCustomer: async (key) => {
    const { id } = await createCustomer(t, key, { email: 'a@example.com', address: { line1: 'x' } });
    return [answer('cleared', await post(key, `${CU}/${id}`, { address: '', description: '', shipping: { name: 'n', address: { line1: 'y' } } }))];
  },
  DeleteCustomersCustomer: async (key) => [answer('deleted', await del(key, `${CU}/${(await createCustomer(t, key)).id}`))],
  DeleteCustomersCustomerDiscount: async (key) => [answer('deleted', await del(key, `${CU}/${await customerWithDiscount(t, key)}/discount`))],
  GetCustomersCustomerBalanceTransactions: async (key) => {
    const { id } = await createCustomer(t, key, { payment_method: 'pm_card_visa', invoice_settings: { default_payment_method: 'pm_card_visa' } });
    await post(key, `${CU}/${id}/balance_transactions`, { amount: -500, currency: 'usd', metadata: { a: '1' } });
    const draft = (await post(key, '/v1/invoices', { customer: id })).body.id;
    await post(key, '/v1/invoiceitems', { customer: id, amount: 300, currency: 'usd', invoice: draft });
    await post(key, `/v1/invoices/${draft}/finalize`, {});
    return [
      answer('an adjustment and an invoice it applied to', await get(key, `${CU}/${id}/balance_transactions`)),
      answer('expanded', await get(key, `${CU}/${id}/balance_transactions?expand[]=data.invoice&expand[]=data.customer`)),
    ];
  },
  PostCustomersCustomerBalanceTransactions: async (key) => {
    const { id } = await createCustomer(t, key);
    return [answer('credit', await post(key, `${CU}/${id}/balance_transactions`, { amount: -500, currency: 'usd', description: 'Goodwill', metadata: { a: '1' } })), answer('owed', await post(key, `${CU}/${id}/balance_transactions`, { amount: 900, currency: 'usd' }))];
  },
  GetCustomersCustomerBalanceTransactionsTransaction: async (key) => {
    const { id } = await createCustomer(t, key);
    const txn = (await post(key, `${CU}/${id}/balance_transactions`, { amount: -500, currency: 'usd' })).body.id;
    return [answer('adjustment', await get(key, `${CU}/${id}/balance_transactions/${txn}`)), answer('expanded', await get(key, `${CU}/${id}/balance_transactions/${txn}?expand[]=customer`))];
  },
  PostCustomersCustomerBalanceTransactionsTransaction: async (key) => {
    const { id } = await createCustomer(t, key);
    const txn = (await post(key, `${CU}/${id}/balance_transactions`, { amount: -500, currency: 'usd', description: 'x' })).body.id;
    return [answer('changed', await post(key, `${CU}/${id}/balance_transactions/${txn}`, { description: '', metadata: { a: '1' } }))];
  },
  GetCustomersCustomerTaxIds: async (key) => {
    const { id } = await createCustomer(t, key, { tax_id_data: [{ type: 'eu_vat', value: 'DE000000000' }, { type: 'us_ein', value: '12-3456789' }] });
    return [answer('list', await get(key, `${CU}/${id}/tax_ids`)), answer('expanded', await get(key, `${CU}/${id}/tax_ids?expand[]=data.customer`))];
  },
  PostCustomersCustomerTaxIds: async (key) => {
    const { id } = await createCustomer(t, key);
    return [answer('checked', await post(key, `${CU}/${id}/tax_ids`, { type: 'eu_vat', value: 'DE123456789' })), answer('unchecked', await post(key, `${CU}/${id}/tax_ids`, { type: 'br_cpf', value: '123.456.789-87' }))];
  },
  GetCustomersCustomerTaxIdsId: async (key) => {
    const { id } = await createCustomer(t, key);
    const tax = (await post(key, `${CU}/${id}/tax_ids`, { type: 'gb_vat', value: 'GB111111111' })).body.id;
    return [answer('unverified', await get(key, `${CU}/${id}/tax_ids/${tax}`)), answer('expanded', await get(key, `${CU}/${id}/tax_ids/${tax}?expand[]=customer`))];
  },
  DeleteCustomersCustomerTaxIdsId: async (key) => {
    const { id } = await createCustomer(t, key);
    const tax = (await post(key, `${CU}/${id}/tax_ids`, { type: 'au_abn', value: '12345678912' })).body.id;
    return [answer('deleted', await del(key, `${CU}/${id}/tax_ids/${tax}`))];
  },
  GetPaymentMethods: async (key) => {
    const pm = await attachedCard(t, key);
    await createPaymentMethod(t, key, { billing_details: { name: 'J', address: { country: 'US' } } });
    const customer = (await get(key, `${PMS}/${pm}`)).body.customer;
    return [answer('all', await get(key, PMS)), answer('of a customer, expanded', await get(key, `${PMS}?customer=${customer}&expand[]=data.customer`))];
  },
  PostPaymentMethods: async (key) => [
    answer('number', await post(key, PMS, { type: 'card', card: { number: '378282246310005', exp_month: 1, exp_year: 2040, cvc: '1234' }, billing_details: { email: 'a@example.com', address: { city: 'c' } } })),
    answer('token', await post(key, PMS, { type: 'card', card: { token: 'tok_unionpay' } })),
  ],
  GetPaymentMethodsPaymentMethod: async (key) => [answer('test id', await get(key, `${PMS}/pm_card_jcb`)), answer('expanded', await get(key, `${PMS}/${await attachedCard(t, key)}?expand[]=customer`))],
  PostPaymentMethodsPaymentMethod: async (key) => [answer('updated', await post(key, `${PMS}/${await attachedCard(t, key)}`, { metadata: { a: '1' }, card: { exp_month: 3 } }))],
  PostPaymentMethodsPaymentMethodAttach: async (key) => [answer('attached', await post(key, `${PMS}/pm_card_visa/attach`, { customer: (await createCustomer(t, key)).id }))],
  PostPaymentMethodsPaymentMethodDetach: async (key) => [answer('detached', await post(key, `${PMS}/${await attachedCard(t, key)}/detach`, {}))],
  GetCustomersCustomerPaymentMethods: async (key) => {
    const customer = (await createCustomer(t, key)).id;
    await attachedCard(t, key, customer);
    await post(key, `${PMS}/${(await createPaymentMethod(t, key, { allow_redisplay: 'always' })).id}/attach`, { customer });
    return [
      answer('all', await get(key, `${CU}/${customer}/payment_methods`)),
      answer('always, expanded', await get(key, `${CU}/${customer}/payment_methods?allow_redisplay=always&type=card&expand[]=data.customer`)),
      answer('none', await get(key, `${CU}/${(await createCustomer(t, key)).id}/payment_methods`)),
    ];
  },
  GetCustomersCustomerPaymentMethodsPaymentMethod: async (key) => {
    const customer = (await createCustomer(t, key)).id;
    return [answer('saved', await get(key, `${CU}/${customer}/payment_methods/${await attachedCard(t, key, customer)}?expand[]=customer`))];
  },
  GetSetupIntents: async (key) => {
    const customer = (await createCustomer(t, key)).id;
    await post(key, SETI, { customer, payment_method: 'pm_card_visa', confirm: true, ...cardSetup });
    await post(key, SETI, { payment_method: 'pm_card_chargeDeclined', confirm: true, ...cardSetup });
    return [answer('all', await get(key, SETI)), answer('of a customer, expanded', await get(key, `${SETI}?customer=${customer}&expand[]=data.customer&expand[]=data.payment_method`))];
  },
  PostSetupIntents: async (key) => [
    answer('empty', await post(key, SETI, {})),
    answer('succeeded', await post(key, SETI, { customer: (await createCustomer(t, key)).id, payment_method: 'pm_card_visa', confirm: true, usage: 'on_session', metadata: { a: '1' }, description: 'd', ...cardSetup })),
    answer('redirect_to_url', await post(key, SETI, { payment_method: 'pm_card_authenticationRequired', confirm: true, return_url: 'http://127.0.0.1:0/back' })),
    answer('use_stripe_sdk', await post(key, SETI, { payment_method: 'pm_card_authenticationRequiredOnSetup', confirm: true, ...cardSetup })),
    answer('payment_method_data', await post(key, SETI, { payment_method_data: { type: 'card', card: { token: 'tok_visa' }, allow_redisplay: 'always' }, confirm: true, ...cardSetup })),
  ],
  GetSetupIntentsIntent: async (key) => {
    const { id } = (await post(key, SETI, { customer: (await createCustomer(t, key)).id, payment_method: 'pm_card_visa', confirm: true, ...cardSetup })).body;
    const failed = (await post(key, SETI, { payment_method: 'pm_card_chargeDeclined', confirm: true, ...cardSetup })).body.error.setup_intent.id;
    return [
      answer('succeeded, expanded', await get(key, `${SETI}/${id}?expand[]=customer&expand[]=payment_method`)),
      answer('failed', await get(key, `${SETI}/${failed}`)),
    ];
  },
  PostSetupIntentsIntent: async (key) => {
    const { id } = (await post(key, SETI, cardSetup)).body;
    return [answer('updated', await post(key, `${SETI}/${id}`, { metadata: { a: '1' }, payment_method: 'pm_card_visa', customer: (await createCustomer(t, key)).id }))];
  },
  PostSetupIntentsIntentConfirm: async (key) => {
    const { id } = (await post(key, SETI, cardSetup)).body;
    return [answer('confirmed', await post(key, `${SETI}/${id}/confirm`, { payment_method: 'pm_card_visa' }))];
  },
  PostSetupIntentsIntentCancel: async (key) => [answer('canceled', await post(key, `${SETI}/${(await post(key, SETI, {})).body.id}/cancel`, { cancellation_reason: 'duplicate' }))],
  GetRefunds: async (key) => {
    const customer = (await createCustomer(t, key)).id;
    const p = await pay(t, key, { customer });
    await post(key, RE, { charge: p.charge, amount: 100 });
    await post(key, RE, { charge: (await pay(t, key)).charge });
    return [answer('all', await get(key, RE)), answer('of a charge, expanded', await get(key, `${RE}?charge=${p.charge}&expand[]=data.customer&expand[]=data.payment_method`))];
  },
  PostRefunds: async (key) => {
    const p = await pay(t, key);
    return [
      answer('part of a charge', await post(key, RE, { charge: p.charge, amount: 500, reason: 'duplicate', metadata: { a: '1' } })),
      answer('the rest, by PaymentIntent', await post(key, RE, { payment_intent: p.paymentIntent, instructions_email: 'a@example.com' })),
    ];
  },
  GetRefundsRefund: async (key) => [answer('refund', await get(key, `${RE}/${await refundOf(key)}?expand[]=payment_method`))],
  PostRefundsRefund: async (key) => [answer('updated', await post(key, `${RE}/${await refundOf(key)}`, { metadata: { a: '1' } }))],
  PostRefundsRefundCancel: async (key) => [answer('canceled', await post(key, `${RE}/${await insertPendingRefund(t, (await pay(t, key)).charge, 100)}/cancel`, {}))],
  PostTestHelpersRefundsRefundExpire: async (key) => [
    answer('expired', await post(key, `/v1/test_helpers/refunds/${await insertPendingRefund(t, (await pay(t, key)).charge, 100, 'requires_action')}/expire`, {})),
  ],
  GetPaymentIntents: async (key) => {
    const customer = (await createCustomer(t, key)).id;
    await paid(key, 'pm_card_chargeDeclined', { customer });
    await paid(key, 'pm_card_authenticationRequired', { return_url: 'http://127.0.0.1:9/back' });
    await paid(key, 'pm_card_visa', { customer, capture_method: 'manual', shipping: { name: 'J', address: { line1: 'l' } } });
    return [answer('all', await get(key, PI)), answer('expanded', await get(key, `${PI}?customer=${customer}&expand[]=${intentCharge('data.')}&expand[]=data.customer`))];
  },
  PostPaymentIntents: async (key) => {
    const connected = (await createAccount(t, key, { type: 'express' })).id;
    return [
      answer('open', await post(key, PI, { amount: 1000, currency: 'eur', description: 'd', metadata: { a: '1' }, receipt_email: 'r@example.com' })),
      answer('paid', await post(key, PI, { amount: 1000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true, return_url: 'http://127.0.0.1:9/back', statement_descriptor_suffix: 'Order 1' })),
      answer('3-D Secure', await post(key, PI, { amount: 1000, currency: 'usd', payment_method: 'pm_card_authenticationRequired', confirm: true, return_url: 'http://127.0.0.1:9/back' })),
      answer('use_stripe_sdk', await post(key, PI, { amount: 1000, currency: 'usd', allowed_payment_method_types: ['card'], payment_method: 'pm_card_threeDSecure2Required', confirm: true })),
      answer('destination', await post(key, PI, { amount: 1000, currency: 'usd', allowed_payment_method_types: ['card'], transfer_data: { destination: connected, amount: 800 }, on_behalf_of: connected, application_fee_amount: 10 })),
      answer('payment_method_data', await post(key, PI, { amount: 1000, currency: 'usd', allowed_payment_method_types: ['card'], confirm: true, payment_method_data: { type: 'card', card: { number: '4242424242424242', exp_month: 12, exp_year: 2040, cvc: '123' }, billing_details: { name: 'J' } } })),
    ];
  },
  GetPaymentIntentsSearch: async (key) => {
    const customer = (await createCustomer(t, key)).id;
    await paid(key, 'pm_card_chargeDeclined', { customer, metadata: { order: '6735' } });
    await paid(key, 'pm_card_visa', { customer, amount: 2500 });
    const search = (query: string, extra = '') => get(key, `${PI}/search?query=${encodeURIComponent(query)}${extra}`);
    return [
      answer('found', await search(`customer:"${customer}"`)),
      answer('none', await search('status:"canceled"')),
      answer('a page with total_count', await search('amount>=1000', '&limit=1&expand[]=total_count')),
      answer('expanded', await search("metadata['order']:'6735' OR status:\"succeeded\"", `&expand[]=${intentCharge('data.')}`)),
    ];
  },
  GetPaymentIntentsIntent: async (key) => {
    const declined = await paid(key, 'pm_card_chargeDeclined');
    const waiting = await paid(key, 'pm_card_authenticationRequired');
    return [
      answer('declined', await get(key, `${PI}/${declined.id}`)),
      answer('requires_action', await get(key, `${PI}/${waiting.id}`)),
      answer('expanded', await get(key, `${PI}/${(await paid(key, 'pm_card_visa')).id}?expand[]=${intentCharge()}&expand[]=payment_method`)),
    ];
  },
  PostPaymentIntentsIntent: async (key) => [answer('updated', await post(key, `${PI}/${(await createPaymentIntent(t, key)).id}`, { amount: 3000, payment_method: 'pm_card_visa', shipping: '', metadata: { a: '1' } }))],
  PostPaymentIntentsIntentConfirm: async (key) => [
    answer('manual capture', await post(key, `${PI}/${(await createPaymentIntent(t, key, { capture_method: 'manual' })).id}/confirm`, { payment_method: 'pm_card_amex' })),
    answer('set up', await post(key, `${PI}/${(await createPaymentIntent(t, key, { customer: (await createCustomer(t, key)).id, setup_future_usage: 'off_session' })).id}/confirm`, { payment_method: 'pm_card_visa' })),
  ],
  PostPaymentIntentsIntentIncrementAuthorization: async (key) => [
    answer('incremented', await post(key, `${PI}/${(await paid(key, 'pm_card_visa', { capture_method: 'manual', payment_method_options: { card: { request_incremental_authorization: 'if_available' } } })).id}/increment_authorization`, { amount: 2500, metadata: { a: '1' } })),
  ],
  PostPaymentIntentsIntentCapture: async (key) => [
    answer('partial', await post(key, `${PI}/${(await paid(key, 'pm_card_visa', { capture_method: 'manual' })).id}/capture`, { amount_to_capture: 1500 })),
  ],
  PostPaymentIntentsIntentCancel: async (key) => [
    answer('open', await post(key, `${PI}/${(await createPaymentIntent(t, key)).id}/cancel`, { cancellation_reason: 'abandoned' })),
    answer('authorized', await post(key, `${PI}/${(await paid(key, 'pm_card_visa', { capture_method: 'manual' })).id}/cancel`, {})),
  ],
  GetCharges: async (key) => {
    const customer = (await createCustomer(t, key)).id;
    await paid(key, 'pm_card_chargeDeclinedFraudulent', { customer });
    await paid(key, 'pm_card_visa', { customer });
    return [answer('all', await get(key, CH)), answer('expanded', await get(key, `${CH}?customer=${customer}&expand[]=data.customer&expand[]=data.payment_intent`))];
  },
  GetChargesSearch: async (key) => {
    const customer = (await createCustomer(t, key)).id;
    await paid(key, 'pm_card_chargeDeclined', { customer });
    await paid(key, 'pm_card_visa', { customer, metadata: { order: '6735' } });
    const search = (query: string, extra = '') => get(key, `${CH}/search?query=${encodeURIComponent(query)}${extra}`);
    return [
      answer('found', await search(`customer:"${customer}" AND payment_method_details.card.last4:"4242"`)),
      answer('failed', await search('status:"failed" AND refunded:"false"')),
      answer('a page with total_count', await search('amount>0', '&limit=1&expand[]=total_count')),
      answer('expanded', await search("metadata['order']:'6735'", '&expand[]=data.payment_intent')),
    ];
  },
  GetChargesCharge: async (key) => [
    answer('declined', await get(key, `${CH}/${(await paid(key, 'pm_card_chargeDeclinedInsufficientFunds')).latest_charge}`)),
    answer('authenticated', await get(key, `${CH}/${(await paid(key, 'pm_card_visa', { capture_method: 'manual' })).latest_charge}?expand[]=payment_intent`)),
  ],
  PostChargesCharge: async (key) => [
    answer('updated', await post(key, `${CH}/${(await paid(key, 'pm_card_visa')).latest_charge}`, { description: 'd', metadata: { a: '1' }, fraud_details: { user_report: 'fraudulent' }, shipping: { name: 'J', address: { line1: 'l' } } })),
  ],
  GetIdentityVerificationSessions: async (key) => {
    await createVerificationSession(t, key, { type: 'id_number', client_reference_id: 'c' });
    await createVerificationReport(t, key, 'verified', { type: 'document', options: { document: { require_matching_selfie: true } } });
    return [
      answer('list', await get(key, VS)),
      answer('expanded', await get(key, `${VS}?expand[]=data.verified_outputs&expand[]=data.provided_details&expand[]=data.last_verification_report`)),
    ];
  },
  PostIdentityVerificationSessions: async (key) => {
    const { id } = await createAccount(t, key);
    return [
      answer('document', await post(key, VS, { type: 'document', expand: ['provided_details'] })),
      answer('everything', await post(key, VS, {
        type: 'document',
        client_reference_id: 'r',
        metadata: { a: '1' },
        options: { document: { allowed_types: ['passport'], require_id_number: true, require_live_capture: true, require_matching_selfie: true } },
        provided_details: { email: 'a@example.com', phone: '+14155550123' },
        related_customer: 'cus_1',
        related_customer_account: id,
        return_url: 'https://example.com/back',
        expand: ['provided_details', 'verified_outputs'],
      })),
      answer('flow', await post(key, VS, { verification_flow: 'vf_1' })),
    ];
  },
  GetIdentityVerificationSessionsSession: async (key) => {
    const open = await createVerificationSession(t, key);
    const report = await createVerificationReport(t, key, 'verified', { type: 'id_number' });
    const { verification_session } = (await get(key, `/v1/identity/verification_reports/${report}`)).body;
    return [
      answer('requires_input', await get(key, `${VS}/${open.id}`)),
      answer('verified, expanded', await get(key, `${VS}/${verification_session}?expand[]=verified_outputs&expand[]=last_verification_report&expand[]=provided_details`)),
      answer(
        'sensitive fields expanded',
        await get(key, `${VS}/${verification_session}?expand[]=verified_outputs.dob&expand[]=verified_outputs.id_number&expand[]=last_verification_report.id_number.id_number`),
      ),
    ];
  },
  PostIdentityVerificationSessionsSession: async (key) => {
    const { id } = await createVerificationSession(t, key);
    return [answer('updated', await post(key, `${VS}/${id}`, { type: 'id_number', metadata: { a: '1' } }))];
  },
  PostIdentityVerificationSessionsSessionCancel: async (key) => {
    const { id } = await createVerificationSession(t, key);
    return [answer('canceled', await post(key, `${VS}/${id}/cancel`, {}))];
  },
  PostIdentityVerificationSessionsSessionRedact: async (key) => {
    const { id } = await createVerificationSession(t, key);
    return [answer('redacting', await post(key, `${VS}/${id}/redact`, {}))];
  },
  PostSandboxIdentityVerificationSessionsSessionSubmit: async (key) => {
    const a = await createVerificationSession(t, key);
    const b = await createVerificationSession(t, key);
    return [
      answer('processing', await post(key, `/sandbox${VS}/${a.id}/submit`, { outcome: 'verified' })),
      answer('abandoned', await post(key, `/sandbox${VS}/${b.id}/submit`, { outcome: 'abandoned' })),
    ];
  },
  GetIdentityVerificationReports: async (key) => {
    await createVerificationReport(t, key, 'document_expired');
    await createVerificationReport(t, key, 'id_number_mismatch', { type: 'id_number' });
    return [answer('list', await get(key, VR))];
  },
  GetIdentityVerificationReportsReport: async (key) => {
    const report = await createVerificationReport(t, key, 'selfie_face_mismatch', { type: 'document', options: { document: { require_matching_selfie: true, require_id_number: true } } });
    const sensitive = ['document.number', 'document.dob', 'document.expiration_date', 'id_number.dob', 'id_number.id_number'];
    return [
      answer('report', await get(key, `${VR}/${report}`)),
      answer('sensitive fields expanded', await get(key, `${VR}/${report}?${sensitive.map((p) => `expand[]=${p}`).join('&')}`)),
    ];
  },
  PostFinancialConnectionsSessions: async (key) => {
    const customer = (await createCustomer(t, key)).id;
    return [
      answer('minimal', await post(key, `${FC}/sessions`, { account_holder: { type: 'customer', customer }, permissions: ['balances'] })),
      answer('everything', await post(key, `${FC}/sessions`, {
        account_holder: { type: 'customer', customer },
        permissions: ['balances', 'ownership', 'payment_method', 'transactions'],
        filters: { country: 'US', account_subcategories: ['checking'] },
        limits: { accounts: 3 },
        manual_entry: { mode: 'automatic' },
        prefetch: ['balances', 'transactions'],
        return_url: 'http://127.0.0.1:0/back',
      })),
      answer('hosted', await post(key, `${FC}/sessions`, { account_holder: { type: 'customer', customer }, permissions: ['balances'], ui_mode: 'hosted', hosted: { return_url: 'http://127.0.0.1:0/back' } })),
    ];
  },
  GetFinancialConnectionsSessionsSession: async (key) => {
    const pending = await createFcSession(t, key);
    const done = await createFcSession(t, key, { prefetch: ['balances'] });
    await post(key, `/sandbox${FC}/sessions/${done.id}/complete`, { institution: 'test_institution' });
    return [answer('pending', await get(key, `${FC}/sessions/${pending.id}`)), answer('succeeded', await get(key, `${FC}/sessions/${done.id}`))];
  },
  GetSandboxFinancialConnectionsInstitutions: async (key) => [answer('catalogue', await get(key, '/sandbox/v1/financial_connections/institutions'))],
  GetSandboxFinancialConnectionsSessions: async (key) => {
    const out = [answer('empty list', await get(key, `/sandbox${FC}/sessions`))];
    const done = await createFcSession(t, key);
    await post(key, `/sandbox${FC}/sessions/${done.id}/complete`, { institution: 'test_institution' });
    await createFcSession(t, key);
    out.push(answer('pending and succeeded', await get(key, `/sandbox${FC}/sessions`)));
    out.push(answer('pending only', await get(key, `/sandbox${FC}/sessions?status=pending`)));
    return out;
  },
  PostSandboxFinancialConnectionsSessionsSessionComplete: async (key) => {
    const a = await createFcSession(t, key, { prefetch: ['balances', 'ownership'] });
    const b = await createFcSession(t, key);
    const c = await createFcSession(t, key);
    return [
      answer('linked', await post(key, `/sandbox${FC}/sessions/${a.id}/complete`, { institution: 'tokenized_account_numbers' })),
      answer('cancelled', await post(key, `/sandbox${FC}/sessions/${b.id}/complete`, { outcome: 'cancelled' })),
      answer('down', await post(key, `/sandbox${FC}/sessions/${c.id}/complete`, { institution: 'down_error' })),
    ];
  },
  GetFinancialConnectionsAccounts: async (key) => {
    await refreshedFcAccount(key);
    await linkFcAccounts(t, key, { institution: 'invalid_payment_accounts' });
    return [answer('list', await get(key, `${FC}/accounts`)), answer('expanded', await get(key, `${FC}/accounts?expand[]=data.ownership`))];
  },
  GetFinancialConnectionsAccountsAccount: async (key) => {
    const account = await refreshedFcAccount(key);
    const [inactive] = await linkFcAccounts(t, key, { institution: 'inactive_accounts', accounts: ['checking'] });
    const [card] = await linkFcAccounts(t, key, { accounts: ['credit_card'] });
    await refreshFcAccount(t, key, card.id, 'balance');
    return [
      answer('refreshed', await get(key, `${FC}/accounts/${account.id}`)),
      answer('ownership expanded', await get(key, `${FC}/accounts/${account.id}?expand[]=ownership`)),
      answer('going inactive', await get(key, `${FC}/accounts/${inactive.id}`)),
      answer('credit', await get(key, `${FC}/accounts/${card.id}`)),
    ];
  },
  PostFinancialConnectionsAccountsAccountDisconnect: async (key) => [answer('disconnected', await post(key, `${FC}/accounts/${(await refreshedFcAccount(key)).id}/disconnect`, {}))],
  PostFinancialConnectionsAccountsAccountRefresh: async (key) => {
    const [account] = await linkFcAccounts(t, key, { accounts: ['checking'] });
    return [answer('pending', await post(key, `${FC}/accounts/${account.id}/refresh`, { features: ['balance', 'ownership', 'transactions'] }))];
  },
  PostFinancialConnectionsAccountsAccountSubscribe: async (key) => {
    const [account] = await linkFcAccounts(t, key, { accounts: ['checking'] });
    return [answer('subscribed', await post(key, `${FC}/accounts/${account.id}/subscribe`, { features: ['transactions'] }))];
  },
  PostFinancialConnectionsAccountsAccountUnsubscribe: async (key) => {
    const [account] = await linkFcAccounts(t, key, { accounts: ['checking'] });
    await post(key, `${FC}/accounts/${account.id}/subscribe`, { features: ['transactions'] });
    return [answer('unsubscribed', await post(key, `${FC}/accounts/${account.id}/unsubscribe`, { features: ['transactions'] }))];
  },
  GetFinancialConnectionsAccountsAccountOwners: async (key) => {
    const [joint] = await linkFcAccounts(t, key, { institution: 'ownership_accounts', accounts: ['joint'] });
    const [partial] = await linkFcAccounts(t, key, { institution: 'ownership_accounts', accounts: ['partial'] });
    const a = await refreshFcAccount(t, key, joint.id, 'ownership');
    const b = await refreshFcAccount(t, key, partial.id, 'ownership');
    return [answer('joint', await get(key, `${FC}/accounts/${a.id}/owners?ownership=${a.ownership}`)), answer('partial', await get(key, `${FC}/accounts/${b.id}/owners?ownership=${b.ownership}`))];
  },
  GetFinancialConnectionsTransactions: async (key) => {
    const account = await refreshedFcAccount(key);
    return [answer('list', await get(key, `${FC}/transactions?account=${account.id}&limit=100`))];
  },
  GetFinancialConnectionsTransactionsTransaction: async (key) => {
    const account = await refreshedFcAccount(key);
    const [first] = (await get(key, `${FC}/transactions?account=${account.id}`)).body.data;
    return [answer('transaction', await get(key, `${FC}/transactions/${first.id}`))];
  },
  GetProducts: async (key) => {
    const out = [answer('empty list', await get(key, PR))];
    const product = await createProduct(t, key, { package_dimensions: { height: 1, length: 2, weight: 3, width: 4 } });
    const price = await createPrice(t, key, { product: product.id });
    await post(key, `${PR}/${product.id}`, { default_price: price.id });
    out.push(answer('list', await get(key, PR)), answer('expanded default price', await get(key, `${PR}?expand[]=data.default_price`)));
    return out;
  },
  GetProductsSearch: async (key) => {
    await createProduct(t, key, { name: 'Gold Plan', description: 'd', shippable: true, metadata: { order: '6735' } });
    const price = await createPrice(t, key, { product_data: { name: 'Silver Plan' } });
    await post(key, `${PR}/${price.product}`, { default_price: price.id });
    const search = (query: string, extra = '') => get(key, `${PR}/search?query=${encodeURIComponent(query)}${extra}`);
    return [
      answer('found', await search('name~"plan"')),
      answer('none', await search('name:"nobody"')),
      answer('a page with total_count', await search('active:"true"', '&limit=1&expand[]=total_count')),
      answer('expanded', await search("metadata['order']:'6735' OR name:'Silver Plan'", '&expand[]=data.default_price')),
    ];
  },
  PostProducts: async (key) => [
    answer('minimal', await post(key, PR, { name: 'a' })),
    answer('everything', await post(key, PR, {
      name: 'b', active: false, description: 'd', images: ['https://example.com/i.png'], marketing_features: [{ name: 'f' }], metadata: { a: '1' },
      package_dimensions: { height: 1.5, length: 2, weight: 3, width: 4 }, shippable: true, statement_descriptor: 'S', tax_code: 'txcd_99999999', unit_label: 'u', url: 'http://127.0.0.1:0/shop',
    })),
    answer('its own id, a good', await post(key, PR, { name: 'c', id: `own_${randomBase62(12)}`, type: 'good' })),
  ],
  GetProductsProduct: async (key) => [answer('product', await get(key, `${PR}/${(await createProduct(t, key)).id}`))],
  PostProductsProduct: async (key) => {
    const product = await createProduct(t, key, { description: 'd', package_dimensions: { height: 1, length: 2, weight: 3, width: 4 } });
    return [
      answer('no change', await post(key, `${PR}/${product.id}`, '')),
      answer('unset', await post(key, `${PR}/${product.id}`, 'description=&package_dimensions=&images=&marketing_features=&url=')),
    ];
  },
  DeleteProductsProduct: async (key) => [answer('deleted', await del(key, `${PR}/${(await createProduct(t, key)).id}`))],
  GetPrices: async (key) => {
    const out = [answer('empty list', await get(key, PC))];
    await createPrice(t, key, { recurring: { interval: 'month' }, transform_quantity: { divide_by: 2, round: 'down' }, tax_behavior: 'inclusive', lookup_key: 'l' });
    await createPrice(t, key, { billing_scheme: 'tiered', tiers_mode: 'volume', tiers: [{ up_to: 'inf', unit_amount: 1 }], unit_amount: undefined });
    out.push(answer('list', await get(key, PC)), answer('expanded', await get(key, `${PC}?expand[]=data.product&expand[]=data.tiers`)));
    return out;
  },
  GetPricesSearch: async (key) => {
    await createPrice(t, key, { recurring: { interval: 'month' }, lookup_key: 'gold_monthly', metadata: { order: '6735' } });
    await createPrice(t, key, { currency: 'eur', tiers_mode: 'volume', billing_scheme: 'tiered', tiers: [{ up_to: 'inf', unit_amount: 1 }], unit_amount: undefined });
    const search = (query: string, extra = '') => get(key, `${PC}/search?query=${encodeURIComponent(query)}${extra}`);
    return [
      answer('found', await search('type:"recurring" AND lookup_key~"gold"')),
      answer('none', await search('currency:"jpy"')),
      answer('a page with total_count', await search('active:"true"', '&limit=1&expand[]=total_count')),
      answer('expanded', await search("metadata['order']:'6735' OR currency:'eur'", '&expand[]=data.product&expand[]=data.tiers')),
    ];
  },
  PostPrices: async (key) => [
    answer('one time', await post(key, PC, { product_data: { name: 'p' }, currency: 'usd', unit_amount: 5 })),
    answer('decimal, recurring, expanded', await post(key, PC, { product_data: { name: 'p' }, currency: 'usd', unit_amount_decimal: '0.5', recurring: { interval: 'day', usage_type: 'metered' }, expand: ['product'] })),
    answer('tiered', await post(key, PC, {
      product_data: { name: 'p' }, currency: 'usd', billing_scheme: 'tiered', tiers_mode: 'graduated', expand: ['tiers'],
      tiers: [{ up_to: 3, flat_amount: 1 }, { up_to: 'inf', unit_amount_decimal: '1.5' }],
    })),
  ],
  GetPricesPrice: async (key) => [answer('price', await get(key, `${PC}/${(await createPrice(t, key)).id}?expand[]=product.default_price`))],
  PostPricesPrice: async (key) => {
    const { id } = await createPrice(t, key);
    return [answer('no change', await post(key, `${PC}/${id}`, '')), answer('changes', await post(key, `${PC}/${id}`, { active: false, nickname: 'n', lookup_key: 'k' }))];
  },
  GetTaxRates: async (key) => {
    const out = [answer('empty list', await get(key, TX))];
    await createTaxRate(t, key, { tax_type: 'vat', country: 'FR', state: 'X', jurisdiction: 'FR', description: 'd' });
    out.push(answer('list', await get(key, TX)));
    return out;
  },
  PostTaxRates: async (key) => [
    answer('minimal', await post(key, TX, { display_name: 'VAT', inclusive: true, percentage: 0 })),
    answer('everything', await post(key, TX, { display_name: 'VAT', inclusive: false, percentage: 12.5, tax_type: 'gst', country: 'AU', state: 'NSW', jurisdiction: 'AU', description: 'd', metadata: { a: '1' }, active: false })),
  ],
  GetTaxRatesTaxRate: async (key) => [answer('tax rate', await get(key, `${TX}/${(await createTaxRate(t, key)).id}`))],
  PostTaxRatesTaxRate: async (key) => [answer('changes', await post(key, `${TX}/${(await createTaxRate(t, key)).id}`, { active: false, tax_type: 'vat' }))],
  GetCoupons: async (key) => {
    const out = [answer('empty list', await get(key, CO))];
    const product = await createProduct(t, key);
    await createCoupon(t, key, { amount_off: 5, currency: 'usd', currency_options: { eur: { amount_off: 4 } }, applies_to: { products: [product.id] } });
    await createCoupon(t, key, { duration: 'repeating', duration_in_months: 2, max_redemptions: 1, redeem_by: Math.floor(Date.now() / 1000) + 60, name: 'n' });
    out.push(answer('list', await get(key, CO)), answer('expanded', await get(key, `${CO}?expand[]=data.applies_to&expand[]=data.currency_options`)));
    return out;
  },
  PostCoupons: async (key) => [
    answer('minimal', await post(key, CO, { percent_off: 5 })),
    answer('everything', await post(key, CO, {
      id: 'EVERYTHING', name: 'n', amount_off: 5, currency: 'usd', currency_options: { eur: { amount_off: 4 } }, duration: 'repeating', duration_in_months: 2,
      max_redemptions: 3, redeem_by: Math.floor(Date.now() / 1000) + 60, applies_to: { products: [(await createProduct(t, key)).id] }, metadata: { a: '1' },
      expand: ['applies_to', 'currency_options'],
    })),
  ],
  GetCouponsCoupon: async (key) => {
    const { id } = await createCoupon(t, key, { amount_off: 5, currency: 'usd' });
    return [answer('coupon', await get(key, `${CO}/${id}`)), answer('expanded', await get(key, `${CO}/${id}?expand[]=currency_options&expand[]=applies_to`))];
  },
  PostCouponsCoupon: async (key) => {
    const { id } = await createCoupon(t, key, { amount_off: 5, currency: 'usd' });
    return [answer('no change', await post(key, `${CO}/${id}`, '')), answer('changes', await post(key, `${CO}/${id}`, { name: 'n', metadata: { a: '1' }, currency_options: { eur: { amount_off: 4 } } }))];
  },
  DeleteCouponsCoupon: async (key) => [answer('deleted', await del(key, `${CO}/${(await createCoupon(t, key)).id}`))],
  GetPromotionCodes: async (key) => {
    const out = [answer('empty list', await get(key, PRC))];
    const customer = (await createCustomer(t, key)).id;
    await createPromotionCode(t, key, { customer, restrictions: { minimum_amount: 5, minimum_amount_currency: 'usd', currency_options: { eur: { minimum_amount: 4 } } } });
    await createPromotionCode(t, key, { active: false, expires_at: Math.floor(Date.now() / 1000) + 60, max_redemptions: 2 });
    const expand = ['data.promotion.coupon', 'data.customer', 'data.restrictions.currency_options'];
    out.push(answer('list', await get(key, PRC)), answer('expanded', await get(key, `${PRC}?${expand.map((p) => `expand[]=${p}`).join('&')}`)));
    return out;
  },
  PostPromotionCodes: async (key) => {
    const coupon = (await createCoupon(t, key, { redeem_by: Math.floor(Date.now() / 1000) + 600 })).id;
    return [
      answer('minimal', await post(key, PRC, { promotion: { type: 'coupon', coupon } })),
      answer('everything', await post(key, PRC, {
        promotion: { type: 'coupon', coupon }, code: 'EVERY-thing', customer: (await createCustomer(t, key)).id, expires_at: Math.floor(Date.now() / 1000) + 60,
        max_redemptions: 2, metadata: { a: '1' }, active: false, expand: ['promotion.coupon', 'customer', 'restrictions.currency_options'],
        restrictions: { first_time_transaction: true, minimum_amount: 5, minimum_amount_currency: 'usd', currency_options: { eur: { minimum_amount: 4 } } },
      })),
    ];
  },
  GetSubscriptions: async (key) => {
    const out = [answer('empty list', await get(key, SU))];
    await changedSubscription(key);
    out.push(answer('list', await get(key, `${SU}?expand[]=data.customer&expand[]=data.latest_invoice&expand[]=data.default_payment_method`)));
    return out;
  },
  GetSubscriptionsSearch: async (key) => {
    await changedSubscription(key);
    await createSubscription(t, key, 1, { metadata: { order: '6735' }, trial_period_days: 3 });
    const search = (query: string, extra = '') => get(key, `${SU}/search?query=${encodeURIComponent(query)}${extra}`);
    return [
      answer('found', await search('status:"active" OR status:"trialing"')),
      answer('none', await search('status:"canceled"')),
      answer('a page with total_count', await search('created>0', '&limit=1&expand[]=total_count')),
      answer('expanded', await search("metadata['order']:'6735'", '&expand[]=data.customer&expand[]=data.latest_invoice')),
    ];
  },
  PostSubscriptions: async (key) => {
    const sub = await createSubscription(t, key);
    const taxRate = (await createTaxRate(t, key)).id;
    const coupon = (await createCoupon(t, key, { duration: 'forever' })).id;
    const price = (await createPrice(t, key, { recurring: { interval: 'month' } })).id;
    return [
      answer('minimal', { status: 200, body: sub }),
      answer('everything', await post(key, SU, {
        customer: sub.customer, items: [{ price, quantity: 2, tax_rates: [taxRate], metadata: { a: '1' } }], default_tax_rates: [taxRate], discounts: [{ coupon }],
        metadata: { a: '1' }, description: 'd', cancel_at_period_end: true, expand: ['latest_invoice', 'customer'],
      })),
      answer('trial, send_invoice', await post(key, SU, { customer: sub.customer, items: [{ price }], trial_period_days: 3, collection_method: 'send_invoice', days_until_due: 5 })),
    ];
  },
  GetSubscriptionsSubscriptionExposedId: async (key) => [answer('subscription', await get(key, `${SU}/${(await changedSubscription(key)).id}?expand[]=customer&expand[]=latest_invoice`))],
  PostSubscriptionsSubscriptionExposedId: async (key) => {
    const sub = await createSubscription(t, key);
    const price = (await createPrice(t, key, { recurring: { interval: 'month' }, unit_amount: 2000 })).id;
    return [
      answer('no change', await post(key, `${SU}/${sub.id}`, '')),
      answer('items', await post(key, `${SU}/${sub.id}`, { items: [{ id: sub.items.data[0].id, price }], proration_behavior: 'always_invoice', metadata: { a: '1' } })),
      answer('pending update', await post(key, `${SU}/${(await createSubscription(t, key, 1, {})).id}`, { items: [{ price }], payment_behavior: 'pending_if_incomplete', proration_behavior: 'always_invoice' })),
    ];
  },
  DeleteSubscriptionsSubscriptionExposedId: async (key) => [answer('canceled', await del(key, `${SU}/${(await createSubscription(t, key)).id}?prorate=true&invoice_now=true`))],
  DeleteSubscriptionsSubscriptionExposedIdDiscount: async (key) => [answer('deleted', await del(key, `${SU}/${await subscriptionWithDiscount(t, key)}/discount`))],
  PostSubscriptionsSubscriptionResume: async (key) => [
    answer('resumed now', await post(key, `${SU}/${await pausedSubscription(t, key)}/resume`, { expand: ['latest_invoice'] })),
    answer('unchanged, invoiced', await post(key, `${SU}/${await pausedSubscription(t, key)}/resume`, { billing_cycle_anchor: 'unchanged', proration_behavior: 'always_invoice' })),
  ],
  GetSubscriptionItems: async (key) => [answer('list', await get(key, `${SI}?subscription=${(await createSubscription(t, key, 2)).id}`))],
  PostSubscriptionItems: async (key) => {
    const sub = await createSubscription(t, key);
    const price = (await createPrice(t, key, { recurring: { interval: 'month' } })).id;
    return [answer('added', await post(key, SI, { subscription: sub.id, price, quantity: 3, metadata: { a: '1' }, expand: ['price.product'] }))];
  },
  GetSubscriptionItemsItem: async (key) => [answer('item', await get(key, `${SI}/${(await createSubscription(t, key)).items.data[0].id}`))],
  PostSubscriptionItemsItem: async (key) => {
    const sub = await createSubscription(t, key);
    const id = sub.items.data[0].id;
    return [answer('no change', await post(key, `${SI}/${id}`, '')), answer('quantity', await post(key, `${SI}/${id}`, { quantity: 4, billing_thresholds: { usage_gte: 10 } }))];
  },
  DeleteSubscriptionItemsItem: async (key) => [answer('deleted', await del(key, `${SI}/${(await createSubscription(t, key, 2)).items.data[0].id}`))],
  GetInvoices: async (key) => {
    const out = [answer('empty list', await get(key, IN))];
    await changedSubscription(key);
    out.push(answer('list', await get(key, `${IN}?expand[]=data.customer`)));
    return out;
  },
  GetInvoicesSearch: async (key) => {
    await changedSubscription(key);
    await createSubscription(t, key, 1, { payment_behavior: 'default_incomplete' });
    const search = (query: string, extra = '') => get(key, `${IN}/search?query=${encodeURIComponent(query)}${extra}`);
    return [
      answer('found', await search('status:"paid" OR status:"open"')),
      answer('none', await search('currency:"jpy"')),
      answer('a page with total_count', await search('total>0', '&limit=1&expand[]=total_count')),
      answer('expanded', await search('status:"open"', '&expand[]=data.customer&expand[]=data.default_payment_method')),
    ];
  },
  GetInvoicesInvoice: async (key) => [answer('invoice', await get(key, `${IN}/${(await createSubscription(t, key, 2)).latest_invoice}?expand[]=default_payment_method`))],
  GetInvoicesInvoiceLines: async (key) => [answer('lines', await get(key, `${IN}/${(await createSubscription(t, key, 2)).latest_invoice}/lines`))],
  PostInvoicesCreatePreview: async (key) => {
    const sub = await changedSubscription(key);
    const item = sub.items.data[0].id;
    return [
      answer('renewal', await post(key, `${IN}/create_preview`, { subscription: sub.id })),
      answer('change', await post(key, `${IN}/create_preview`, { customer: sub.customer, subscription: sub.id, subscription_details: { items: [{ id: item, quantity: 3 }], proration_behavior: 'always_invoice' } })),
    ];
  },
  // Only before 2025-03-31.basil, which removed them.
  GetInvoicesUpcoming: async (key) => [answer('upcoming', await get(key, `${IN}/upcoming?subscription=${(await changedSubscription(key)).id}`).set('Stripe-Version', upcomingVersion()))],
  GetInvoicesUpcomingLines: async (key) => [answer('lines', await get(key, `${IN}/upcoming/lines?subscription=${(await changedSubscription(key)).id}`).set('Stripe-Version', upcomingVersion()))],
  PostInvoicesInvoicePay: async (key) => [answer('paid', await post(key, `${IN}/${(await createSubscription(t, key, 1, { payment_behavior: 'default_incomplete' })).latest_invoice}/pay`, {}))],
  PostInvoices: async (key) => {
    const customer = (await createCustomer(t, key)).id;
    await post(key, II, { customer, amount: 1250, currency: 'usd' });
    return [
      answer('empty draft', await post(key, IN, { customer, description: 'd', footer: 'f', metadata: { a: '1' } })),
      answer('rendering', await post(key, IN, { customer, rendering: { amount_tax_display: 'exclude_tax', pdf: { page_size: 'letter' } } })),
      answer('with pending items', await post(key, IN, { customer, pending_invoice_items_behavior: 'include', collection_method: 'send_invoice', days_until_due: 5, expand: ['customer'] })),
    ];
  },
  PostInvoicesInvoice: async (key) => {
    const draft = await manualDraft(key);
    return [answer('no change', await post(key, `${IN}/${draft}`, '')), answer('changed', await post(key, `${IN}/${draft}`, { description: 'x', auto_advance: true }))];
  },
  DeleteInvoicesInvoice: async (key) => [answer('deleted', await del(key, `${IN}/${await manualDraft(key)}`))],
  PostInvoicesInvoiceFinalize: async (key) => [answer('finalized', await post(key, `${IN}/${await manualDraft(key)}/finalize`, {}))],
  PostInvoicesInvoiceVoid: async (key) => [answer('voided', await post(key, `${IN}/${await manualOpen(key)}/void`, {}))],
  PostInvoicesInvoiceMarkUncollectible: async (key) => [answer('uncollectible', await post(key, `${IN}/${await manualOpen(key)}/mark_uncollectible`, {}))],
  PostInvoicesInvoiceSend: async (key) => [answer('sent', await post(key, `${IN}/${await manualOpen(key, { collection_method: 'send_invoice' })}/send`, {}))],
  GetInvoiceitems: async (key) => {
    const out = [answer('empty list', await get(key, II))];
    await changedSubscription(key);
    out.push(answer('list', await get(key, `${II}?pending=true`)));
    return out;
  },
  GetInvoicePayments: async (key) => {
    const out = [answer('empty list', await get(key, IP))];
    const sub = await createSubscription(t, key);
    out.push(answer('list', await get(key, IP)), answer('of an invoice', await get(key, `${IP}?invoice=${sub.latest_invoice}&status=paid&expand[]=data.payment.payment_intent`)));
    return out;
  },
  GetInvoicePaymentsInvoicePayment: async (key) => {
    const sub = await createSubscription(t, key, 1, { payment_behavior: 'default_incomplete' });
    const [open] = (await get(key, `${IP}?invoice=${sub.latest_invoice}`)).body.data;
    return [answer('open', await get(key, `${IP}/${open.id}`)), answer('expanded', await get(key, `${IP}/${open.id}?expand[]=invoice&expand[]=payment.payment_intent`))];
  },
  GetInvoiceitemsInvoiceitem: async (key) => {
    await changedSubscription(key);
    return [answer('item', await get(key, `${II}/${(await get(key, II)).body.data[0].id}`))];
  },
  PostInvoiceitems: async (key) => {
    const customer = (await createCustomer(t, key)).id;
    const price = (await createPrice(t, key)).id;
    return [
      answer('amount', await post(key, II, { customer, amount: 1250, currency: 'usd', description: 'Setup', metadata: { a: '1' } })),
      answer('price × quantity', await post(key, II, { customer, pricing: { price }, quantity: 3, expand: ['customer'] })),
      answer('discounts', await post(key, II, { customer, amount: 900, currency: 'usd', discounts: [{ coupon: (await createCoupon(t, key)).id }] })),
    ];
  },
  PostInvoiceitemsInvoiceitem: async (key) => {
    const made = await post(key, II, { customer: (await createCustomer(t, key)).id, amount: 100, currency: 'usd' });
    return [
      answer('no change', await post(key, `${II}/${made.body.id}`, '')),
      answer('amount', await post(key, `${II}/${made.body.id}`, { amount: 250, description: 'x' })),
      answer('discounts', await post(key, `${II}/${made.body.id}`, { discounts: [{ coupon: (await createCoupon(t, key)).id }] })),
      answer('discounts cleared', await post(key, `${II}/${made.body.id}`, { discounts: '' })),
    ];
  },
  DeleteInvoiceitemsInvoiceitem: async (key) => {
    const made = await post(key, II, { customer: (await createCustomer(t, key)).id, amount: 100, currency: 'usd' });
    return [answer('deleted', await del(key, `${II}/${made.body.id}`))];
  },
  GetTestHelpersTestClocks: async (key) => {
    const out = [answer('empty list', await get(key, TC))];
    await post(key, TC, { frozen_time: 1800000000, name: 'n' });
    out.push(answer('list', await get(key, TC)));
    return out;
  },
  PostTestHelpersTestClocks: async (key) => [answer('minimal', await post(key, TC, { frozen_time: 1800000000 })), answer('named', await post(key, TC, { frozen_time: 1800000000, name: 'Monthly' }))],
  GetTestHelpersTestClocksTestClock: async (key) => [answer('clock', await get(key, `${TC}/${(await post(key, TC, { frozen_time: 1800000000 })).body.id}`))],
  DeleteTestHelpersTestClocksTestClock: async (key) => [answer('deleted', await del(key, `${TC}/${(await post(key, TC, { frozen_time: 1800000000 })).body.id}`))],
  PostTestHelpersTestClocksTestClockAdvance: async (key) => [answer('advancing', await post(key, `${TC}/${(await post(key, TC, { frozen_time: 1800000000 })).body.id}/advance`, { frozen_time: 1800086400 }))],
  GetPromotionCodesPromotionCode: async (key) => {
    const { id } = await createPromotionCode(t, key);
    return [answer('code', await get(key, `${PRC}/${id}`)), answer('coupon expanded', await get(key, `${PRC}/${id}?expand[]=promotion.coupon.applies_to`))];
  },
  PostPromotionCodesPromotionCode: async (key) => {
    const { id } = await createPromotionCode(t, key, { restrictions: { minimum_amount: 5, minimum_amount_currency: 'usd' } });
    return [
      answer('no change', await post(key, `${PRC}/${id}`, '')),
      answer('changes', await post(key, `${PRC}/${id}`, { active: false, metadata: { a: '1' }, restrictions: { currency_options: { eur: { minimum_amount: 4 } } } })),
    ];
  },
  GetForwardingRequests: async (key) => {
    const out = [answer('empty list', await get(key, FR))];
    await createForwardingRequest(t, key);
    out.push(answer('list', await get(key, FR)));
    return out;
  },
  PostForwardingRequests: async (key) => {
    const { destination } = await forwardingHarness(t);
    const pm = (await createPaymentMethod(t, key, { card: { number: '4242424242424242', exp_month: 12, exp_year: 2040, cvc: '123' }, billing_details: { name: 'J R' } })).id;
    return [
      answer('every replacement', await post(key, FR, {
        payment_method: pm, url: `${destination.origin}/status/402`, replacements: ['card_number', 'card_expiry', 'card_cvc', 'cardholder_name'], metadata: { a: '1' },
        request: { body: JSON.stringify({ card: { number: '', exp_month: 0, exp_year: 0, name: '', cvc: '' } }), headers: [{ name: 'Authorization', value: 'Bearer x' }] },
      })),
      answer('redirect', await post(key, FR, { payment_method: 'pm_card_visa', url: `${destination.origin}/redirect`, replacements: ['card_number'], request: { body: '{}' } })),
    ];
  },
  GetForwardingRequestsId: async (key) => [answer('request', await get(key, `${FR}/${(await createForwardingRequest(t, key)).id}`))],
};

const VS = '/v1/identity/verification_sessions';
const VR = '/v1/identity/verification_reports';
const FC = '/v1/financial_connections';

/** A linked checking account with balance, ownership and transactions refreshed. */
async function refreshedFcAccount(key: string): Promise<Record<string, any>> {
  const [account] = await linkFcAccounts(t, key, { accounts: ['checking'] });
  await refreshFcAccount(t, key, account.id, 'balance');
  await refreshFcAccount(t, key, account.id, 'ownership');
  return refreshFcAccount(t, key, account.id, 'transactions');
}

export const EV = '/v1/events';

/** Everything a US individual's Custom account needs: its capabilities become active. */
const COMPLETE_INDIVIDUAL = {
  business_profile: { mcc: '5734', url: 'http://127.0.0.1:0/shop' },
  individual: {
    first_name: 'J', last_name: 'R', dob: { day: 1, month: 1, year: 1990 }, email: 'j@example.com', phone: '+15555550100',
    address: { line1: '1 Main St', city: 'SF', state: 'CA', postal_code: '94111' }, ssn_last_4: '0000',
  },
  external_account: 'btok_us_verified',
  tos_acceptance: { date: 1700000000, ip: '203.0.113.1' },
};

/**
 * Events of the key's account (one with previous_attributes) and of a connected account, their
 * objects as the API serves them: the connected account's come from a real update (account.updated
 * and capability.updated), the platform's are emitted with the platform account and that capability.
 */
export async function eventsOf(key: string) {
  await createWebhookEndpoint(t, key);
  const account = await accountOfKey(t.runtime, key);
  // The newest shape, as events store their objects; they are written at the pinned version.
  const platform = (await get(key, '/v1/account').set('Stripe-Version', LATEST_API_VERSION)).body;
  const { id: connected } = await createAccount(t, key, CUSTOM_INDIVIDUAL);
  await post(key, `${AC}/${connected}`, COMPLETE_INDIVIDUAL);
  const real = await t.runtime.prisma.event.findMany({ where: { accountId: connected }, orderBy: { seq: 'asc' } });
  const ofConnected = real.find((ev) => ev.type === 'account.updated')!.id;
  const capability = (real.find((ev) => ev.type === 'capability.updated')!.data as any).object;
  const quiet = { handOff: false, apiVersion: pinned };
  const plain = await emitTestEvent(t.runtime, account, 'account.updated', platform, quiet);
  await emitTestEvent(t.runtime, account, 'capability.updated', capability, quiet);
  const updated = await emitTestEvent(t.runtime, account, 'account.updated', { ...platform, email: 'new@example.com' }, {
    ...quiet,
    previousAttributes: { email: null },
  });
  return { account, connected, plain, updated, ofConnected };
}

/** The attempts a worker would record: one that succeeded, one that failed with a network error. */
async function recordAttempts(key: string, endpointId: string): Promise<void> {
  const { plain } = await eventsOf(key);
  const prisma = t.runtime.prisma;
  const delivery = await prisma.webhookDelivery.create({
    data: { id: `whdel_${plain.slice(4)}`, eventId: plain, endpointId, status: 'succeeded', attempts: 2, completedAt: new Date() },
  });
  const base = { deliveryId: delivery.id, endpointId, eventId: plain, attemptedAt: new Date() };
  await prisma.webhookAttempt.create({
    data: { ...base, id: `whatt_${plain.slice(4)}1`, attempt: 1, durationMs: 300, statusCode: null, error: 'ECONNREFUSED: connect ECONNREFUSED', succeeded: false, outcome: 'failed' },
  });
  await prisma.webhookAttempt.create({
    data: { ...base, id: `whatt_${plain.slice(4)}2`, attempt: 2, durationMs: 12, statusCode: 200, responseExcerpt: '{"received":true}', succeeded: true, outcome: 'succeeded' },
  });
}

/** For each operationId: requests that fail, to check the error body against `default`. */
export const errorScenarios: Record<string, Scenario> = {
  PostAccountSessions: async (key) => [
    answer('unknown component', await post(key, '/v1/account_sessions', 'account=acct_nope&components[bogus][enabled]=true')),
    answer('unknown account', await post(key, '/v1/account_sessions', 'account=acct_nope&components[payments][enabled]=true')),
  ],
  PostAccountLinks: async (key) => {
    const { id } = await createAccount(t, key);
    return [
      answer('unknown account', await post(key, '/v1/account_links', 'account=acct_nope&type=account_onboarding')),
      answer('update of a dashboard account', await post(key, '/v1/account_links', { account: id, type: 'account_update' })),
      answer('collect and collection_options', await post(key, '/v1/account_links', { account: id, type: 'account_onboarding', collect: 'currently_due', collection_options: { fields: 'eventually_due' } })),
      answer('bad return_url', await post(key, '/v1/account_links', { account: id, type: 'account_onboarding', return_url: 'ftp://example.com' })),
    ];
  },
  PostSandboxAccountSessionsClaim: async (key) => {
    const { client_secret } = await createAccountSession(t, key);
    await post(key, '/sandbox/v1/account_sessions/claim', { client_secret });
    return [
      answer('unknown secret', await post(key, '/sandbox/v1/account_sessions/claim', { client_secret: 'accs_secret__nope' })),
      answer('claimed before', await post(key, '/sandbox/v1/account_sessions/claim', { client_secret })),
    ];
  },
  GetAccount: async (key) => [answer('unknown parameter', await get(key, '/v1/account?bogus=1'))],
  GetAccounts: async (key) => [answer('bad limit', await get(key, `${AC}?limit=0`))],
  PostAccounts: async (key) => [
    answer('unknown nested parameter', await post(key, AC, 'company[bogus]=1')),
    answer('dashboard none without capabilities', await post(key, AC, 'controller[stripe_dashboard][type]=none')),
  ],
  GetAccountsAccount: async (key) => [answer('unknown id', await get(key, `${AC}/acct_nope`))],
  PostAccountsAccount: async (key) => [answer('unknown id', await post(key, `${AC}/acct_nope`, 'email=a@example.com'))],
  DeleteAccountsAccount: async (key) => [answer('unknown id', await del(key, `${AC}/acct_nope`))],
  PostAccountsAccountLoginLinks: async (key) => {
    const standard = await createAccount(t, key);
    const express = await createAccount(t, key, { type: 'express' });
    return [
      answer('not express', await post(key, `${AC}/${standard.id}/login_links`, '')),
      answer('not onboarded', await post(key, `${AC}/${express.id}/login_links`, '')),
      answer('unknown account', await post(key, `${AC}/acct_nope/login_links`, '')),
    ];
  },
  PostAccountsAccountReject: async (key) => {
    const standard = await createAccount(t, key);
    return [
      answer('standard account', await post(key, `${AC}/${standard.id}/reject`, { reason: 'other' })),
      answer('missing reason', await post(key, `${AC}/${standard.id}/reject`, {})),
      answer('reason of another version', await post(key, `${AC}/${standard.id}/reject`, { reason: 'credit' }).set('Stripe-Version', '2026-08-26.dahlia')),
    ];
  },
  GetAccountsAccountCapabilities: async (key) => [answer('unknown account', await get(key, `${AC}/acct_nope/capabilities`))],
  GetAccountsAccountCapabilitiesCapability: async (key) => {
    const { id } = await createAccount(t, key);
    return [answer('unknown capability', await get(key, `${AC}/${id}/capabilities/bogus`))];
  },
  PostAccountsAccountCapabilitiesCapability: async (key) => {
    const { id } = await createAccount(t, key);
    return [
      answer('unknown capability', await post(key, `${AC}/${id}/capabilities/bogus`, 'requested=true')),
      answer('bad requested', await post(key, `${AC}/${id}/capabilities/card_payments`, 'requested=maybe')),
    ];
  },
  GetAccountsAccountExternalAccounts: async (key) => [answer('bad object', await get(key, `${AC}/acct_nope/external_accounts?object=check`))],
  PostAccountsAccountExternalAccounts: async (key) => {
    const { id } = await createAccount(t, key);
    const path = `${AC}/${id}/external_accounts`;
    return [
      answer('unknown token', await post(key, path, { external_account: 'btok_nope' })),
      answer('credit card', await post(key, path, { external_account: 'tok_visa' })),
      answer('live card', await post(key, path, { external_account: { object: 'card', number: '4111111111111112', exp_month: 1, exp_year: 2040 } })),
      answer('missing', await post(key, path, {})),
    ];
  },
  GetAccountsAccountExternalAccountsExternalAccount: async (key) => {
    const { id } = await createAccount(t, key);
    return [answer('unknown', await get(key, `${AC}/${id}/external_accounts/ba_nope`))];
  },
  PostAccountsAccountExternalAccountsExternalAccount: async (key) => {
    const { id } = await createAccount(t, key, { ...CUSTOM_INDIVIDUAL });
    const bank = await createExternalAccount(t, key, id);
    return [
      answer('card member on a bank account', await post(key, `${AC}/${id}/external_accounts/${bank.id}`, { exp_month: 1 })),
      answer('unset the default', await post(key, `${AC}/${id}/external_accounts/${bank.id}`, { default_for_currency: false })),
    ];
  },
  DeleteAccountsAccountExternalAccountsExternalAccount: async (key) => {
    const { id } = await createAccount(t, key);
    const bank = await createExternalAccount(t, key, id);
    return [answer('the default', await del(key, `${AC}/${id}/external_accounts/${bank.id}`))];
  },
  GetAccountsAccountPersons: async (key) => [
    answer('unknown account', await get(key, `${AC}/acct_nope/persons`)),
    answer('bad filter', await get(key, `${AC}/acct_nope/persons?relationship[bogus]=true`)),
  ],
  PostAccountsAccountPersons: async (key) => {
    const { id } = await createAccount(t, key);
    return [
      answer('bad email', await post(key, `${AC}/${id}/persons`, { email: 'nope' })),
      answer('person token', await post(key, `${AC}/${id}/persons`, { person_token: 'cpt_1' })),
    ];
  },
  GetAccountsAccountPersonsPerson: async (key) => {
    const { id } = await createAccount(t, key);
    return [answer('unknown person', await get(key, `${AC}/${id}/persons/person_nope`))];
  },
  PostAccountsAccountPersonsPerson: async (key) => {
    const { id } = await createAccount(t, key);
    return [answer('unknown person', await post(key, `${AC}/${id}/persons/person_nope`, { first_name: 'x' }))];
  },
  DeleteAccountsAccountPersonsPerson: async (key) => {
    const { id } = await createAccount(t, key);
    const representative = await createPerson(t, key, id, { relationship: { representative: true } });
    return [
      answer('representative', await del(key, `${AC}/${id}/persons/${representative.id}`)),
      answer('unknown person', await del(key, `${AC}/${id}/persons/person_nope`)),
    ];
  },
  GetWebhookEndpoints: async (key) => [answer('bad limit', await get(key, `${WE}?limit=0`))],
  PostStripecliSessions: async (key) => [answer('unknown feature', await post(key, '/v1/stripecli/sessions', 'device_name=x&websocket_features[]=telepathy'))],
  PostWebhookEndpoints: async (key) => [answer('missing url', await post(key, WE, 'enabled_events[]=*'))],
  GetWebhookEndpointsWebhookEndpoint: async (key) => [answer('unknown id', await get(key, `${WE}/we_nope`))],
  PostWebhookEndpointsWebhookEndpoint: async (key) => [answer('unknown id', await post(key, `${WE}/we_nope`, 'disabled=true'))],
  DeleteWebhookEndpointsWebhookEndpoint: async (key) => [answer('unknown id', await del(key, `${WE}/we_nope`))],
  DeleteSandboxData: async (key) => [answer('unknown parameter', await del(key, '/sandbox/v1/data?bogus=1'))],
  GetEvents: async (key) => [
    answer('type and types', await get(key, `${EV}?type=account.updated&types[]=account.updated`)),
    answer('21 types', await get(key, `${EV}?${Array.from({ length: 21 }, () => 'types[]=account.updated').join('&')}`)),
  ],
  GetEventsId: async (key) => [answer('unknown id', await get(key, `${EV}/evt_nope`))],
  PostSandboxEventsIdResend: async (key) => {
    const { plain } = await eventsOf(key);
    const { id } = await createWebhookEndpoint(t, key);
    return [
      answer('unknown endpoint', await post(key, `/sandbox/v1/events/${plain}/resend`, { webhook_endpoint: 'we_nope' })),
      answer('unknown event', await post(key, '/sandbox/v1/events/evt_nope/resend', { webhook_endpoint: id })),
    ];
  },
  GetSandboxPaymentAuthentications: async (key) => [answer('bad status', await get(key, `${PA}?status=bogus`))],
  PostSandboxPaymentAuthenticationsPaymentAuthenticationComplete: async (key) => {
    const { id } = await createPendingAuthentication(t, key);
    await post(key, `${PA}/${id}/complete`, {});
    return [answer('unknown id', await post(key, `${PA}/payatt_nope/complete`, {})), answer('already answered', await post(key, `${PA}/${id}/complete`, {}))];
  },
  PostSandboxPaymentAuthenticationsPaymentAuthenticationFail: async (key) => [answer('unknown id', await post(key, `${PA}/payatt_nope/fail`, {}))],
  GetSandboxWebhookEndpointsWebhookEndpointDeliveries: async (key) => [
    answer('unknown endpoint', await get(key, '/sandbox/v1/webhook_endpoints/we_nope/deliveries')),
  ],
  PostAppsSecrets: async (key) => [
    answer('user scope without user', await post(key, SE, { name: 'a', payload: 'p', scope: { type: 'user' } })),
    answer('expires_at in the past', await post(key, SE, { name: 'a', payload: 'p', scope: { type: 'account' }, expires_at: 1 })),
  ],
  GetAppsSecretsFind: async (key) => [answer('no such secret', await get(key, `${SE}/find?name=nope&scope[type]=account`))],
  GetAppsSecrets: async (key) => [answer('missing scope', await get(key, SE))],
  PostAppsSecretsDelete: async (key) => [answer('no such secret', await post(key, `${SE}/delete`, { name: 'nope', scope: { type: 'account' } }))],
  GetIdentityVerificationSessions: async (key) => [answer('bad status', await get(key, `${VS}?status=bogus`))],
  PostIdentityVerificationSessions: async (key) => [
    answer('no type', await post(key, VS, {})),
    answer('bad email', await post(key, VS, { type: 'document', provided_details: { email: 'x' } })),
  ],
  GetIdentityVerificationSessionsSession: async (key) => [answer('unknown id', await get(key, `${VS}/vs_nope`))],
  PostIdentityVerificationSessionsSession: async (key) => {
    const { id } = await createVerificationSession(t, key);
    await post(key, `${VS}/${id}/cancel`, {});
    return [answer('canceled', await post(key, `${VS}/${id}`, { metadata: { a: '1' } }))];
  },
  PostIdentityVerificationSessionsSessionCancel: async (key) => [answer('unknown id', await post(key, `${VS}/vs_nope/cancel`, {}))],
  PostIdentityVerificationSessionsSessionRedact: async (key) => [answer('unknown id', await post(key, `${VS}/vs_nope/redact`, {}))],
  PostSandboxIdentityVerificationSessionsSessionSubmit: async (key) => {
    const { id } = await createVerificationSession(t, key);
    return [answer('outcome of a check not run', await post(key, `/sandbox${VS}/${id}/submit`, { outcome: 'selfie_manipulated' }))];
  },
  GetIdentityVerificationReports: async (key) => [answer('bad type', await get(key, `${VR}?type=selfie`))],
  GetIdentityVerificationReportsReport: async (key) => [answer('unknown id', await get(key, `${VR}/vr_nope`))],
  GetCustomers: async (key) => [answer('bad limit', await get(key, `${CU}?limit=0`))],
  GetCustomersSearch: async (key) => [
    answer('unparseable', await get(key, `${CU}/search?query=asdf`)),
    answer('unknown field', await get(key, `${CU}/search?query=${encodeURIComponent('foo:"bar"')}`)),
    answer('bad page', await get(key, `${CU}/search?query=${encodeURIComponent('name:"x"')}&page=nope`)),
  ],
  PostCustomers: async (key) => [answer('bad tax_exempt', await post(key, CU, { tax_exempt: 'x' })), answer('declined', await post(key, CU, { payment_method: 'pm_card_chargeDeclined' }))],
  GetCustomersCustomer: async (key) => [answer('unknown id', await get(key, `${CU}/cus_nope`))],
  PostCustomersCustomer: async (key) => [answer('unknown id', await post(key, `${CU}/cus_nope`, { name: 'x' }))],
  DeleteCustomersCustomer: async (key) => [answer('unknown id', await del(key, `${CU}/cus_nope`))],
  DeleteCustomersCustomerDiscount: async (key) => [
    answer('unknown id', await del(key, `${CU}/cus_nope/discount`)),
    answer('no discount', await del(key, `${CU}/${(await createCustomer(t, key)).id}/discount`)),
  ],
  GetCustomersCustomerBalanceTransactions: async (key) => [answer('unknown customer', await get(key, `${CU}/cus_nope/balance_transactions`))],
  PostCustomersCustomerBalanceTransactions: async (key) => {
    const { id } = await createCustomer(t, key);
    await post(key, `${CU}/${id}/balance_transactions`, { amount: -500, currency: 'usd' });
    return [answer('missing amount', await post(key, `${CU}/${id}/balance_transactions`, { currency: 'usd' })), answer('another currency', await post(key, `${CU}/${id}/balance_transactions`, { amount: 1, currency: 'eur' }))];
  },
  GetCustomersCustomerBalanceTransactionsTransaction: async (key) => [answer('unknown id', await get(key, `${CU}/${(await createCustomer(t, key)).id}/balance_transactions/cbtxn_nope`))],
  PostCustomersCustomerBalanceTransactionsTransaction: async (key) => [answer('unknown id', await post(key, `${CU}/${(await createCustomer(t, key)).id}/balance_transactions/cbtxn_nope`, { description: 'x' }))],
  GetCustomersCustomerTaxIds: async (key) => [answer('unknown customer', await get(key, `${CU}/cus_nope/tax_ids`))],
  PostCustomersCustomerTaxIds: async (key) => {
    const { id } = await createCustomer(t, key);
    return [answer('bad value', await post(key, `${CU}/${id}/tax_ids`, { type: 'eu_vat', value: 'DE1' })), answer('bad type', await post(key, `${CU}/${id}/tax_ids`, { type: 'zz', value: '1' }))];
  },
  GetCustomersCustomerTaxIdsId: async (key) => [answer('unknown id', await get(key, `${CU}/${(await createCustomer(t, key)).id}/tax_ids/txi_nope`))],
  DeleteCustomersCustomerTaxIdsId: async (key) => [answer('unknown id', await del(key, `${CU}/${(await createCustomer(t, key)).id}/tax_ids/txi_nope`))],
  GetPaymentMethods: async (key) => [answer('unknown customer', await get(key, `${PMS}?customer=cus_nope`))],
  PostPaymentMethods: async (key) => [
    answer('live card', await post(key, PMS, { type: 'card', card: { number: '4111111111111111', exp_month: 1, exp_year: 2040 } })),
    answer('bad number', await post(key, PMS, { type: 'card', card: { number: '4242424242424241', exp_month: 1, exp_year: 2040 } })),
  ],
  GetPaymentMethodsPaymentMethod: async (key) => [answer('unknown id', await get(key, `${PMS}/pm_nope`))],
  PostPaymentMethodsPaymentMethod: async (key) => [answer('not saved', await post(key, `${PMS}/${(await createPaymentMethod(t, key)).id}`, { metadata: { a: '1' } }))],
  PostPaymentMethodsPaymentMethodAttach: async (key) => [answer('unknown customer', await post(key, `${PMS}/pm_card_visa/attach`, { customer: 'cus_nope' }))],
  PostPaymentMethodsPaymentMethodDetach: async (key) => [answer('not attached', await post(key, `${PMS}/pm_card_visa/detach`, {}))],
  GetCustomersCustomerPaymentMethods: async (key) => [
    answer('unknown customer', await get(key, `${CU}/cus_nope/payment_methods`)),
    answer('bad allow_redisplay', await get(key, `${CU}/${(await createCustomer(t, key)).id}/payment_methods?allow_redisplay=sometimes`)),
  ],
  GetCustomersCustomerPaymentMethodsPaymentMethod: async (key) => [
    answer('another customer\'s', await get(key, `${CU}/${(await createCustomer(t, key)).id}/payment_methods/${await attachedCard(t, key)}`)),
  ],
  GetSetupIntents: async (key) => [answer('bad limit', await get(key, `${SETI}?limit=0`))],
  PostSetupIntents: async (key) => [
    answer('declined', await post(key, SETI, { payment_method: 'pm_card_chargeDeclined', confirm: true, ...cardSetup })),
    answer('unknown customer', await post(key, SETI, { customer: 'cus_nope' })),
  ],
  GetSetupIntentsIntent: async (key) => [answer('unknown id', await get(key, `${SETI}/seti_nope`))],
  PostSetupIntentsIntent: async (key) => [answer('unknown id', await post(key, `${SETI}/seti_nope`, { metadata: { a: '1' } }))],
  PostSetupIntentsIntentConfirm: async (key) => [answer('no payment method', await post(key, `${SETI}/${(await post(key, SETI, cardSetup)).body.id}/confirm`, {}))],
  PostSetupIntentsIntentCancel: async (key) => [answer('bad reason', await post(key, `${SETI}/${(await post(key, SETI, {})).body.id}/cancel`, { cancellation_reason: 'bored' }))],
  GetPaymentIntentsSearch: async (key) => [
    answer('unknown field', await get(key, `${PI}/search?query=${encodeURIComponent('email:"a"')}`)),
    answer('substring on a token', await get(key, `${PI}/search?query=${encodeURIComponent('status~"succ"')}`)),
  ],
  GetRefunds: async (key) => [answer('unknown charge', await get(key, `${RE}?charge=ch_nope`))],
  PostRefunds: async (key) => {
    const p = await pay(t, key, { amount: 1000 });
    return [
      answer('unknown charge', await post(key, RE, { charge: 'ch_nope' })),
      answer('too large', await post(key, RE, { charge: p.charge, amount: 1001 })),
      answer('uncaptured', await post(key, RE, { payment_intent: (await pay(t, key, { state: 'uncaptured' })).paymentIntent })),
    ];
  },
  GetRefundsRefund: async (key) => [answer('unknown id', await get(key, `${RE}/re_nope`))],
  PostRefundsRefund: async (key) => [answer('unknown id', await post(key, `${RE}/re_nope`, { metadata: { a: '1' } }))],
  PostRefundsRefundCancel: async (key) => [answer('succeeded', await post(key, `${RE}/${await refundOf(key)}/cancel`, {}))],
  PostTestHelpersRefundsRefundExpire: async (key) => [answer('succeeded', await post(key, `/v1/test_helpers/refunds/${await refundOf(key)}/expire`, {}))],
  GetPaymentIntents: async (key) => [answer('bad cursor', await get(key, `${PI}?starting_after=pi_nope`))],
  PostPaymentIntents: async (key) => [
    answer('declined', await post(key, PI, { amount: 1000, currency: 'usd', allowed_payment_method_types: ['card'], payment_method: 'pm_card_chargeDeclined', confirm: true })),
    answer('payment_method_data of another type', await post(key, PI, { amount: 1000, currency: 'usd', payment_method_data: { type: 'sepa_debit' } })),
    answer('no return_url', await post(key, PI, { amount: 1000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true })),
    answer('descriptor', await post(key, PI, { amount: 1000, currency: 'usd', statement_descriptor: 'ACME' })),
  ],
  GetPaymentIntentsIntent: async (key) => [answer('unknown id', await get(key, `${PI}/pi_nope`))],
  PostPaymentIntentsIntent: async (key) => [answer('succeeded', await post(key, `${PI}/${(await paid(key, 'pm_card_visa')).id}`, { amount: 10 }))],
  PostPaymentIntentsIntentConfirm: async (key) => [
    answer('off-session authentication', await post(key, `${PI}/${(await createPaymentIntent(t, key)).id}/confirm`, { payment_method: 'pm_card_authenticationRequired', off_session: true })),
    answer('succeeded', await post(key, `${PI}/${(await paid(key, 'pm_card_visa')).id}/confirm`, {})),
  ],
  PostPaymentIntentsIntentIncrementAuthorization: async (key) => [
    answer('not requested', await post(key, `${PI}/${(await paid(key, 'pm_card_visa', { capture_method: 'manual' })).id}/increment_authorization`, { amount: 2500 })),
    answer('not authorized', await post(key, `${PI}/${(await createPaymentIntent(t, key)).id}/increment_authorization`, { amount: 2500 })),
  ],
  PostPaymentIntentsIntentCapture: async (key) => [answer('not capturable', await post(key, `${PI}/${(await createPaymentIntent(t, key)).id}/capture`, {}))],
  PostPaymentIntentsIntentCancel: async (key) => [answer('succeeded', await post(key, `${PI}/${(await paid(key, 'pm_card_visa')).id}/cancel`, {}))],
  GetChargesSearch: async (key) => [
    answer('unparseable', await get(key, `${CH}/search?query=asdf`)),
    answer('not a number', await get(key, `${CH}/search?query=${encodeURIComponent('amount>"lots"')}`)),
  ],
  GetCharges: async (key) => [answer('bad cursor', await get(key, `${CH}?starting_after=ch_nope`))],
  GetChargesCharge: async (key) => [answer('unknown id', await get(key, `${CH}/ch_nope`))],
  PostChargesCharge: async (key) => [answer('unknown id', await post(key, `${CH}/ch_nope`, { description: 'x' }))],
  PostFinancialConnectionsSessions: async (key) => [
    answer('no permissions', await post(key, `${FC}/sessions`, { account_holder: { type: 'customer', customer: 'cus_nope' } })),
    answer('unknown customer', await post(key, `${FC}/sessions`, { account_holder: { type: 'customer', customer: 'cus_nope' }, permissions: ['balances'] })),
  ],
  GetFinancialConnectionsSessionsSession: async (key) => [answer('unknown id', await get(key, `${FC}/sessions/fcsess_nope`))],
  GetSandboxFinancialConnectionsInstitutions: async (key) => [answer('bad expand', await get(key, '/sandbox/v1/financial_connections/institutions?expand[]=data.x'))],
  GetSandboxFinancialConnectionsSessions: async (key) => [answer('bad status', await get(key, `/sandbox${FC}/sessions?status=bogus`))],
  PostSandboxFinancialConnectionsSessionsSessionComplete: async (key) => {
    const { id } = await createFcSession(t, key);
    return [answer('unknown institution', await post(key, `/sandbox${FC}/sessions/${id}/complete`, { institution: 'nope' })), answer('unknown id', await post(key, `/sandbox${FC}/sessions/fcsess_nope/complete`, { outcome: 'failed' }))];
  },
  GetFinancialConnectionsAccounts: async (key) => [answer('both holders', await get(key, `${FC}/accounts?account_holder[customer]=cus_1&account_holder[account]=acct_1`))],
  GetFinancialConnectionsAccountsAccount: async (key) => [answer('unknown id', await get(key, `${FC}/accounts/fca_nope`))],
  PostFinancialConnectionsAccountsAccountDisconnect: async (key) => [answer('unknown id', await post(key, `${FC}/accounts/fca_nope/disconnect`, {}))],
  PostFinancialConnectionsAccountsAccountRefresh: async (key) => {
    const [account] = await linkFcAccounts(t, key, { accounts: ['checking'] }, { permissions: ['balances'] });
    return [answer('no permission', await post(key, `${FC}/accounts/${account.id}/refresh`, { features: ['ownership'] }))];
  },
  PostFinancialConnectionsAccountsAccountSubscribe: async (key) => [answer('bad feature', await post(key, `${FC}/accounts/fca_nope/subscribe`, { features: ['balance'] }))],
  PostFinancialConnectionsAccountsAccountUnsubscribe: async (key) => [answer('unknown id', await post(key, `${FC}/accounts/fca_nope/unsubscribe`, { features: ['transactions'] }))],
  GetFinancialConnectionsAccountsAccountOwners: async (key) => {
    const [account] = await linkFcAccounts(t, key, { accounts: ['checking'] });
    return [answer('unknown ownership', await get(key, `${FC}/accounts/${account.id}/owners?ownership=fcaowns_nope`))];
  },
  GetFinancialConnectionsTransactions: async (key) => {
    const [account] = await linkFcAccounts(t, key, { accounts: ['checking'] });
    return [answer('not refreshed', await get(key, `${FC}/transactions?account=${account.id}`))];
  },
  GetFinancialConnectionsTransactionsTransaction: async (key) => [answer('unknown id', await get(key, `${FC}/transactions/fctxn_nope`))],
  GetProductsSearch: async (key) => [
    answer('unknown field', await get(key, `${PR}/search?query=${encodeURIComponent('created>0')}`)),
    answer('substring on a token', await get(key, `${PR}/search?query=${encodeURIComponent('active~"tru"')}`)),
  ],
  GetProducts: async (key) => [answer('bad active', await get(key, `${PR}?active=maybe`))],
  PostProducts: async (key) => [answer('missing name', await post(key, PR, ''))],
  GetProductsProduct: async (key) => [answer('unknown id', await get(key, `${PR}/prod_nope`))],
  PostProductsProduct: async (key) => [answer('unknown id', await post(key, `${PR}/prod_nope`, 'name=a'))],
  DeleteProductsProduct: async (key) => {
    const { product } = await createPrice(t, key);
    return [answer('unknown id', await del(key, `${PR}/prod_nope`)), answer('has prices', await del(key, `${PR}/${product}`))];
  },
  GetPricesSearch: async (key) => [
    answer('unparseable', await get(key, `${PC}/search?query=asdf`)),
    answer('unknown field', await get(key, `${PC}/search?query=${encodeURIComponent('unit_amount>1')}`)),
  ],
  GetPrices: async (key) => [answer('bad type', await get(key, `${PC}?type=bogus`))],
  PostPrices: async (key) => [
    answer('missing product', await post(key, PC, { currency: 'usd', unit_amount: 1 })),
    answer('too many decimals', await post(key, PC, { product_data: { name: 'p' }, currency: 'usd', unit_amount_decimal: '1.0000000000001' })),
  ],
  GetPricesPrice: async (key) => [answer('unknown id', await get(key, `${PC}/price_nope`))],
  GetTaxRates: async (key) => [answer('bad inclusive', await get(key, `${TX}?inclusive=maybe`))],
  PostTaxRates: async (key) => [answer('missing percentage', await post(key, TX, { display_name: 'VAT', inclusive: true }))],
  GetTaxRatesTaxRate: async (key) => [answer('unknown id', await get(key, `${TX}/txr_nope`))],
  PostTaxRatesTaxRate: async (key) => [answer('percentage is fixed', await post(key, `${TX}/${(await createTaxRate(t, key)).id}`, { percentage: 1 }))],
  PostPricesPrice: async (key) => [answer('amounts are fixed', await post(key, `${PC}/${(await createPrice(t, key)).id}`, { unit_amount: 1 }))],
  GetCoupons: async (key) => [answer('bad created', await get(key, `${CO}?created[gt]=soon`))],
  PostCoupons: async (key) => {
    await createCoupon(t, key, { id: 'TAKEN' });
    return [answer('no discount', await post(key, CO, '')), answer('id taken', await post(key, CO, { id: 'TAKEN', percent_off: 5 }))];
  },
  GetCouponsCoupon: async (key) => [answer('unknown id', await get(key, `${CO}/NOPE`))],
  PostCouponsCoupon: async (key) => [answer('the discount is fixed', await post(key, `${CO}/${(await createCoupon(t, key)).id}`, { percent_off: 1 }))],
  DeleteCouponsCoupon: async (key) => [answer('unknown id', await del(key, `${CO}/NOPE`))],
  GetPromotionCodes: async (key) => [answer('bad active', await get(key, `${PRC}?active=maybe`))],
  PostPromotionCodes: async (key) => [
    answer('no promotion', await post(key, PRC, '')),
    answer('unknown coupon', await post(key, PRC, { promotion: { type: 'coupon', coupon: 'NOPE' } })),
  ],
  GetSubscriptionsSearch: async (key) => [
    answer('unknown field', await get(key, `${SU}/search?query=${encodeURIComponent('customer:"cus_1"')}`)),
    answer('bad page', await get(key, `${SU}/search?query=${encodeURIComponent('status:"active"')}&page=nope`)),
  ],
  GetSubscriptions: async (key) => [answer('bad status', await get(key, `${SU}?status=bogus`))],
  PostSubscriptions: async (key) => [answer('no customer', await post(key, SU, { items: [{ price: 'price_nope' }] })), answer('one-time price', await post(key, SU, { customer: (await createCustomer(t, key)).id, items: [{ price: (await createPrice(t, key)).id }] }))],
  GetSubscriptionsSubscriptionExposedId: async (key) => [answer('unknown id', await get(key, `${SU}/sub_nope`))],
  PostSubscriptionsSubscriptionExposedId: async (key) => [answer('unknown id', await post(key, `${SU}/sub_nope`, { metadata: { a: '1' } }))],
  DeleteSubscriptionsSubscriptionExposedId: async (key) => [answer('unknown id', await del(key, `${SU}/sub_nope`))],
  DeleteSubscriptionsSubscriptionExposedIdDiscount: async (key) => [
    answer('unknown id', await del(key, `${SU}/sub_nope/discount`)),
    answer('no discount', await del(key, `${SU}/${(await createSubscription(t, key)).id}/discount`)),
  ],
  PostSubscriptionsSubscriptionResume: async (key) => [
    answer('unknown id', await post(key, `${SU}/sub_nope/resume`, '')),
    answer('not paused', await post(key, `${SU}/${(await createSubscription(t, key)).id}/resume`, '')),
  ],
  GetSubscriptionItems: async (key) => [answer('no subscription', await get(key, SI)), answer('unknown subscription', await get(key, `${SI}?subscription=sub_nope`))],
  PostSubscriptionItems: async (key) => [answer('unknown subscription', await post(key, SI, { subscription: 'sub_nope', price: 'price_nope' }))],
  GetSubscriptionItemsItem: async (key) => [answer('unknown id', await get(key, `${SI}/si_nope`))],
  PostSubscriptionItemsItem: async (key) => [answer('unknown id', await post(key, `${SI}/si_nope`, { quantity: 1 }))],
  DeleteSubscriptionItemsItem: async (key) => [answer('unknown id', await del(key, `${SI}/si_nope`))],
  GetInvoicesSearch: async (key) => [
    answer('unknown field', await get(key, `${IN}/search?query=${encodeURIComponent('amount_due>0')}`)),
    answer('not a number', await get(key, `${IN}/search?query=${encodeURIComponent('total>"lots"')}`)),
  ],
  GetInvoices: async (key) => [answer('bad status', await get(key, `${IN}?status=bogus`))],
  GetInvoicesInvoice: async (key) => [answer('unknown id', await get(key, `${IN}/in_nope`))],
  GetInvoicesInvoiceLines: async (key) => [answer('unknown id', await get(key, `${IN}/in_nope/lines`))],
  PostInvoicesCreatePreview: async (key) => [answer('nothing to preview', await post(key, `${IN}/create_preview`, {})), answer('unknown subscription', await post(key, `${IN}/create_preview`, { subscription: 'sub_nope' }))],
  GetInvoicesUpcoming: async (key) => [
    answer('unknown subscription', await get(key, `${IN}/upcoming?subscription=sub_nope`).set('Stripe-Version', upcomingVersion())),
    answer('removed', await get(key, `${IN}/upcoming?subscription=sub_nope`).set('Stripe-Version', LATEST_API_VERSION)),
  ],
  GetInvoicesUpcomingLines: async (key) => [answer('removed', await get(key, `${IN}/upcoming/lines`).set('Stripe-Version', LATEST_API_VERSION))],
  PostInvoicesInvoicePay: async (key) => [
    answer('declined', await post(key, `${IN}/${(await createSubscription(t, key, 1, { payment_behavior: 'default_incomplete' })).latest_invoice}/pay`, { payment_method: 'pm_card_chargeDeclined' })),
    answer('already paid', await post(key, `${IN}/${(await createSubscription(t, key)).latest_invoice}/pay`, {})),
  ],
  PostInvoices: async (key) => [answer('no customer', await post(key, IN, {})), answer('days without send_invoice', await post(key, IN, { customer: (await createCustomer(t, key)).id, days_until_due: 3 }))],
  PostInvoicesInvoice: async (key) => [answer('terms of a finalized invoice', await post(key, `${IN}/${await manualOpen(key)}`, { collection_method: 'send_invoice' }))],
  DeleteInvoicesInvoice: async (key) => [answer('not a draft', await del(key, `${IN}/${await manualOpen(key)}`))],
  PostInvoicesInvoiceFinalize: async (key) => [answer('already finalized', await post(key, `${IN}/${await manualOpen(key)}/finalize`, {}))],
  PostInvoicesInvoiceVoid: async (key) => [answer('a draft', await post(key, `${IN}/${await manualDraft(key)}/void`, {}))],
  PostInvoicesInvoiceMarkUncollectible: async (key) => [answer('a draft', await post(key, `${IN}/${await manualDraft(key)}/mark_uncollectible`, {}))],
  PostInvoicesInvoiceSend: async (key) => [answer('charged automatically', await post(key, `${IN}/${await manualOpen(key)}/send`, {}))],
  GetInvoiceitems: async (key) => [answer('bad pending', await get(key, `${II}?pending=maybe`))],
  GetInvoiceitemsInvoiceitem: async (key) => [answer('unknown id', await get(key, `${II}/ii_nope`))],
  PostInvoiceitems: async (key) => [
    answer('no customer', await post(key, II, { amount: 1, currency: 'usd' })),
    answer('no currency', await post(key, II, { customer: (await createCustomer(t, key)).id, amount: 1 })),
    answer('unknown coupon', await post(key, II, { customer: (await createCustomer(t, key)).id, amount: 1, currency: 'usd', discounts: [{ coupon: 'nope' }] })),
  ],
  PostInvoiceitemsInvoiceitem: async (key) => [answer('unknown id', await post(key, `${II}/ii_nope`, { description: 'x' }))],
  DeleteInvoiceitemsInvoiceitem: async (key) => [answer('unknown id', await del(key, `${II}/ii_nope`))],
  GetInvoicePayments: async (key) => [answer('bad status', await get(key, `${IP}?status=later`)), answer('payment without type', await get(key, `${IP}?payment[payment_intent]=pi_x`))],
  GetInvoicePaymentsInvoicePayment: async (key) => [answer('unknown id', await get(key, `${IP}/inpay_nope`))],
  GetTestHelpersTestClocks: async (key) => [answer('bad limit', await get(key, `${TC}?limit=0`))],
  PostTestHelpersTestClocks: async (key) => [answer('no frozen_time', await post(key, TC, '')), answer('negative', await post(key, TC, { frozen_time: -1 })), answer('too late', await post(key, TC, { frozen_time: 2147483647 }))],
  GetTestHelpersTestClocksTestClock: async (key) => [answer('unknown id', await get(key, `${TC}/clock_nope`))],
  DeleteTestHelpersTestClocksTestClock: async (key) => [answer('unknown id', await del(key, `${TC}/clock_nope`))],
  PostTestHelpersTestClocksTestClockAdvance: async (key) => [
    answer('backwards', await post(key, `${TC}/${(await post(key, TC, { frozen_time: 1800000000 })).body.id}/advance`, { frozen_time: 1700000000 })),
    answer('past two years', await post(key, `${TC}/${(await post(key, TC, { frozen_time: 1800000000 })).body.id}/advance`, { frozen_time: 1900000000 })),
  ],
  GetPromotionCodesPromotionCode: async (key) => [answer('unknown id', await get(key, `${PRC}/promo_nope`))],
  PostPromotionCodesPromotionCode: async (key) => [answer('the code is fixed', await post(key, `${PRC}/${(await createPromotionCode(t, key)).id}`, { code: 'X' }))],
  GetForwardingRequests: async (key) => [answer('bad created', await get(key, `${FR}?created[gt]=soon`))],
  PostForwardingRequests: async (key) => [
    answer('no destination', await post(key, FR, { payment_method: 'pm_card_visa', url: 'http://127.0.0.2/', replacements: ['card_number'], request: { body: '{}' } })),
    answer('not JSON', await post(key, FR, { payment_method: 'pm_card_visa', url: `${CLOSED_ORIGIN}/x`, replacements: ['card_number'], request: { body: 'x' } })),
    answer('bad replacement', await post(key, FR, { payment_method: 'pm_card_visa', url: `${CLOSED_ORIGIN}/x`, replacements: ['card_pin'], request: { body: '{}' } })),
  ],
  GetForwardingRequestsId: async (key) => [answer('unknown id', await get(key, `${FR}/fwdreq_nope`))],
};

