import type Stripe from 'stripe';
import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { createForwardingRequest } from '../helpers/forwarding';
import { accountOfKey, emitTestEvent } from '../helpers/events';
import {
  createAccount,
  createAppSecret,
  createCustomer,
  createPaymentIntent,
  createPaymentMethod,
  createPendingAuthentication,
  attachedCard,
  createFcSession,
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
  createWebhookEndpoints,
  linkFcAccounts,
  createSubscription,
} from '../helpers/fixtures';
import { requestsOf } from '../helpers/requests';
import { createRefunds } from '../helpers/payments';
import { describeListConformance, type CreatedObjects } from '../helpers/listConformance';
import { routes } from '../../src/resources';
import { CAPABILITIES } from '../../src/resources/connect/accounts/serializer';

// Every list operation, the same way: the shared list conformance (envelope, limits, order,
// cursors both ways, cursor errors, created filters, expand) and a walk through the official SDK's
// auto-pagination. A list operation without an entry here fails the coverage test.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

interface ListCase {
  readonly path: string;
  readonly objectName: string;
  readonly createdFilter: boolean;
  readonly maxObjects?: number;
  readonly timestampField?: string | null;
  readonly createObjects: (key: string, n: number) => Promise<string[] | CreatedObjects>;
  /** Every id the SDK's auto-pagination yields, in order, two per page. */
  readonly sdkIds: (stripe: Stripe, query: Record<string, string>) => Promise<string[]>;
}

const ids = (items: { id: string }[]): string[] => items.map((o) => o.id);
/** The last version with `GET /v1/invoices/upcoming` (removed at 2025-03-31.basil). */
const UPCOMING_VERSION = '2025-02-24.acacia';
const { post, get } = requestsOf(() => t);

// Capability ids are names, the same in every account: each call takes the next names in turn,
// so two accounts of one test never share one.
let nextCapability = 0;
const takeCapabilities = (n: number): string[] => Array.from({ length: n }, () => CAPABILITIES[nextCapability++ % CAPABILITIES.length]);
const SECRET_SCOPE = { type: 'user', user: 'usr_list' } as const;

/** Attempts are written by the delivery worker; here they are recorded directly, oldest first. */
async function recordAttempts(key: string, n: number): Promise<CreatedObjects> {
  const endpoint = (await createWebhookEndpoint(t, key)).id;
  const prisma = t.runtime.prisma;
  const ids: string[] = [];
  if (n > 0) {
    const event = await emitTestEvent(t.runtime, await accountOfKey(t.runtime, key), 'account.updated', undefined, { handOff: false });
    const delivery = await prisma.webhookDelivery.create({
      data: { id: `whdel_${event.slice(4)}`, eventId: event, endpointId: endpoint, status: 'failed', attempts: n, completedAt: new Date() },
    });
    for (let i = 1; i <= n; i++) {
      const id = `whatt_${event.slice(4)}${String(i).padStart(3, '0')}`;
      await prisma.webhookAttempt.create({
        data: { id, deliveryId: delivery.id, endpointId: endpoint, eventId: event, attempt: i, attemptedAt: new Date(), durationMs: 5, statusCode: 500, succeeded: false, outcome: 'failed' },
      });
      ids.push(id);
    }
  }
  return { ids, path: `/sandbox/v1/webhook_endpoints/${endpoint}/deliveries` };
}

/** A linked account whose first transaction refresh succeeded, with `n` transactions written directly, oldest first. */
async function fcTransactionRows(key: string, n: number): Promise<CreatedObjects> {
  const [account] = await linkFcAccounts(t, key, { accounts: ['checking'] });
  const prisma = t.runtime.prisma;
  const refresh = await prisma.financialConnectionsRefresh.create({
    data: { id: `fctxnref_${account.id.slice(4)}`, accountId: (await prisma.financialConnectionsAccount.findUniqueOrThrow({ where: { id: account.id } })).accountId, fcAccountId: account.id, feature: 'transactions', status: 'succeeded', requestedAt: 1 },
  });
  await prisma.financialConnectionsAccount.update({ where: { id: account.id }, data: { transactionRefreshes: 1 } });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = `fctxn_${account.id.slice(4, 20)}${String(i).padStart(4, '0')}`;
    await prisma.financialConnectionsTransaction.create({
      data: {
        id, accountId: refresh.accountId, fcAccountId: account.id, ordinal: i, amount: -100 - i, currency: 'usd', description: 'Coffee shop', status: 'posted',
        postedAt: 1_700_000_000 + i, transactedAt: 1_700_000_000 + i, transactionRefresh: refresh.id, refreshSeq: refresh.seq, updated: 1_700_000_000,
      },
    });
    ids.push(id);
  }
  return { ids, query: { account: account.id } };
}

/** A linked account's ownership with `n` owners written directly, oldest first. */
async function fcOwnerRows(key: string, n: number): Promise<CreatedObjects> {
  const [account] = await linkFcAccounts(t, key, { institution: 'ownership_accounts', accounts: ['no_owners'] });
  const prisma = t.runtime.prisma;
  const { accountId } = await prisma.financialConnectionsAccount.findUniqueOrThrow({ where: { id: account.id } });
  const ownership = await prisma.financialConnectionsOwnership.create({ data: { id: `fcaowns_${account.id.slice(4)}`, accountId, fcAccountId: account.id, created: 1 } });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = `fcaown_${account.id.slice(4, 20)}${String(i).padStart(4, '0')}`;
    await prisma.financialConnectionsOwner.create({ data: { id, accountId, ownershipId: ownership.id, name: `Owner ${i}`, refreshedAt: 1_700_000_000 + i } });
    ids.push(id);
  }
  return { ids, path: `/v1/financial_connections/accounts/${account.id}/owners`, query: { ownership: ownership.id } };
}

/** Every id of a sandbox list, walked with the SDK's raw request (a sandbox operation has no SDK method), two a page. */
async function sandboxListIds(stripe: Stripe, path: string): Promise<string[]> {
  const out: string[] = [];
  for (let cursor: string | undefined; ; ) {
    const page = (await stripe.rawRequest('GET', `${path}?limit=2${cursor ? `&starting_after=${cursor}` : ''}`)) as unknown as { data: { id: string }[]; has_more: boolean };
    out.push(...ids(page.data));
    if (!page.has_more) return out;
    cursor = page.data[page.data.length - 1].id;
  }
}

const LISTS: Record<string, ListCase> = {
  GetAccounts: {
    path: '/v1/accounts',
    objectName: 'account',
    createdFilter: true,
    createObjects: async (key, n) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push((await createAccount(t, key)).id);
      return out;
    },
    sdkIds: async (stripe) => ids(await stripe.accounts.list({ limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetAccountsAccountCapabilities: {
    path: '/v1/accounts/{account}/capabilities',
    objectName: 'capability',
    createdFilter: false,
    timestampField: 'requested_at',
    createObjects: async (key, n) => {
      // An account that asks for nothing, then one capability at a time.
      const account = (await createAccount(t, key, { capabilities: { card_payments: { requested: false } } })).id;
      const names = takeCapabilities(n);
      for (const name of names) await t.stripe(key).accounts.updateCapability(account, name, { requested: true });
      return { ids: names, path: `/v1/accounts/${account}/capabilities` };
    },
    sdkIds: async (stripe, query) => ids(await stripe.accounts.listCapabilities(query.path.split('/')[3], { limit: 2 } as object).autoPagingToArray({ limit: 1000 })),
  },
  GetAccountsAccountExternalAccounts: {
    path: '/v1/accounts/{account}/external_accounts',
    objectName: 'bank_account',
    createdFilter: false,
    timestampField: null,
    createObjects: async (key, n) => {
      const account = (await createAccount(t, key)).id;
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push((await createExternalAccount(t, key, account)).id);
      return { ids: out, path: `/v1/accounts/${account}/external_accounts` };
    },
    sdkIds: async (stripe, query) => ids(await stripe.accounts.listExternalAccounts(query.path.split('/')[3], { limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetAccountsAccountPersons: {
    // Each account's list is under its own path.
    path: '/v1/accounts/{account}/persons',
    objectName: 'person',
    createdFilter: false,
    createObjects: async (key, n) => {
      const account = (await createAccount(t, key)).id;
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push((await createPerson(t, key, account, { first_name: `P${i}`, relationship: { owner: i % 2 === 0 } })).id);
      return { ids: out, path: `/v1/accounts/${account}/persons` };
    },
    sdkIds: async (stripe, query) => {
      const account = query.path.split('/')[3];
      return ids(await stripe.accounts.listPersons(account, { limit: 2 }).autoPagingToArray({ limit: 1000 }));
    },
  },
  GetWebhookEndpoints: {
    path: '/v1/webhook_endpoints',
    objectName: 'webhook_endpoint',
    createdFilter: false,
    maxObjects: 16,
    createObjects: (key, n) => createWebhookEndpoints(t, key, n),
    sdkIds: async (stripe) => ids(await stripe.webhookEndpoints.list({ limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetEvents: {
    path: '/v1/events',
    objectName: 'event',
    createdFilter: true,
    createObjects: async (key, n) => {
      // The key's account exists once it has made a request.
      await t.stripe(key).events.list();
      const account = await accountOfKey(t.runtime, key);
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push(await emitTestEvent(t.runtime, account, 'account.updated', undefined, { handOff: false }));
      return out;
    },
    sdkIds: async (stripe) => ids(await stripe.events.list({ limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetAppsSecrets: {
    path: '/v1/apps/secrets',
    objectName: 'apps.secret',
    createdFilter: false,
    createObjects: async (key, n) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push((await createAppSecret(t, key, { name: `secret-${i}`, scope: SECRET_SCOPE })).id);
      return { ids: out, query: { 'scope[type]': SECRET_SCOPE.type, 'scope[user]': SECRET_SCOPE.user } };
    },
    sdkIds: async (stripe) => ids(await stripe.apps.secrets.list({ scope: SECRET_SCOPE, limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetCustomers: {
    path: '/v1/customers',
    objectName: 'customer',
    createdFilter: true,
    createObjects: async (key, n) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push((await createCustomer(t, key, { email: `c${i}@example.com` })).id);
      return out;
    },
    sdkIds: async (stripe) => ids(await stripe.customers.list({ limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetCustomersCustomerTaxIds: {
    // Each customer's list is under its own path.
    path: '/v1/customers/{customer}/tax_ids',
    objectName: 'tax_id',
    createdFilter: false,
    createObjects: async (key, n) => {
      const customer = (await createCustomer(t, key)).id;
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push((await post(key, `/v1/customers/${customer}/tax_ids`, { type: 'ca_bn', value: String(100000000 + i) })).body.id);
      return { ids: out, path: `/v1/customers/${customer}/tax_ids` };
    },
    sdkIds: async (stripe, query) => ids(await stripe.customers.listTaxIds(query.path.split('/')[3], { limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetCustomersCustomerBalanceTransactions: {
    // Each customer's list is under its own path.
    path: '/v1/customers/{customer}/balance_transactions',
    objectName: 'customer_balance_transaction',
    createdFilter: true,
    createObjects: async (key, n) => {
      const customer = (await createCustomer(t, key)).id;
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push((await post(key, `/v1/customers/${customer}/balance_transactions`, { amount: -(i + 1), currency: 'usd' })).body.id);
      return { ids: out, path: `/v1/customers/${customer}/balance_transactions` };
    },
    sdkIds: async (stripe, query) => ids(await stripe.customers.listBalanceTransactions(query.path.split('/')[3], { limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetPaymentMethods: {
    path: '/v1/payment_methods',
    objectName: 'payment_method',
    createdFilter: false,
    createObjects: async (key, n) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push((await createPaymentMethod(t, key)).id);
      return out;
    },
    sdkIds: async (stripe) => ids(await stripe.paymentMethods.list({ limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetCustomersCustomerPaymentMethods: {
    // Each customer's list is under its own path.
    path: '/v1/customers/{customer}/payment_methods',
    objectName: 'payment_method',
    createdFilter: false,
    createObjects: async (key, n) => {
      const customer = (await createCustomer(t, key)).id;
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push(await attachedCard(t, key, customer));
      return { ids: out, path: `/v1/customers/${customer}/payment_methods` };
    },
    sdkIds: async (stripe, query) => ids(await stripe.customers.listPaymentMethods(query.path.split('/')[3], { limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetSetupIntents: {
    path: '/v1/setup_intents',
    objectName: 'setup_intent',
    createdFilter: true,
    createObjects: async (key, n) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push((await post(key, '/v1/setup_intents', { metadata: { n: String(i) } })).body.id);
      return out;
    },
    sdkIds: async (stripe) => ids(await stripe.setupIntents.list({ limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetRefunds: {
    path: '/v1/refunds',
    objectName: 'refund',
    createdFilter: true,
    createObjects: (key, n) => createRefunds(t, key, n),
    sdkIds: async (stripe) => ids(await stripe.refunds.list({ limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetPaymentIntents: {
    path: '/v1/payment_intents',
    objectName: 'payment_intent',
    createdFilter: true,
    createObjects: async (key, n) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push((await createPaymentIntent(t, key)).id);
      return out;
    },
    sdkIds: async (stripe) => ids(await stripe.paymentIntents.list({ limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetCharges: {
    path: '/v1/charges',
    objectName: 'charge',
    createdFilter: true,
    createObjects: async (key, n) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push((await createPaymentIntent(t, key, { payment_method: 'pm_card_visa', confirm: true })).latest_charge);
      return out;
    },
    sdkIds: async (stripe) => ids(await stripe.charges.list({ limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetIdentityVerificationSessions: {
    path: '/v1/identity/verification_sessions',
    objectName: 'identity.verification_session',
    createdFilter: true,
    createObjects: async (key, n) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push((await createVerificationSession(t, key)).id);
      return out;
    },
    sdkIds: async (stripe) => ids(await stripe.identity.verificationSessions.list({ limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetIdentityVerificationReports: {
    path: '/v1/identity/verification_reports',
    objectName: 'identity.verification_report',
    createdFilter: true,
    createObjects: async (key, n) => {
      await t.stripe(key).identity.verificationReports.list();
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push(await createVerificationReport(t, key, i % 2 === 0 ? 'verified' : 'document_expired'));
      return out;
    },
    sdkIds: async (stripe) => ids(await stripe.identity.verificationReports.list({ limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetProducts: {
    path: '/v1/products',
    objectName: 'product',
    createdFilter: true,
    createObjects: async (key, n) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push((await createProduct(t, key, { name: `p${i}` })).id);
      return out;
    },
    sdkIds: async (stripe) => ids(await stripe.products.list({ limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetPrices: {
    path: '/v1/prices',
    objectName: 'price',
    createdFilter: true,
    createObjects: async (key, n) => {
      const product = (await createProduct(t, key)).id;
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push((await createPrice(t, key, { product, unit_amount: i + 1 })).id);
      return out;
    },
    sdkIds: async (stripe) => ids(await stripe.prices.list({ limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetTaxRates: {
    path: '/v1/tax_rates',
    objectName: 'tax_rate',
    createdFilter: true,
    createObjects: async (key, n) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push((await createTaxRate(t, key, { percentage: i })).id);
      return out;
    },
    sdkIds: async (stripe) => ids(await stripe.taxRates.list({ limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetCoupons: {
    path: '/v1/coupons',
    objectName: 'coupon',
    createdFilter: true,
    createObjects: async (key, n) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push((await createCoupon(t, key, { percent_off: i + 1 })).id);
      return out;
    },
    sdkIds: async (stripe) => ids(await stripe.coupons.list({ limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetPromotionCodes: {
    path: '/v1/promotion_codes',
    objectName: 'promotion_code',
    createdFilter: true,
    createObjects: async (key, n) => {
      const coupon = (await createCoupon(t, key)).id;
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push((await createPromotionCode(t, key, { coupon })).id);
      return out;
    },
    sdkIds: async (stripe) => ids(await stripe.promotionCodes.list({ limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetForwardingRequests: {
    path: '/v1/forwarding/requests',
    objectName: 'forwarding.request',
    createdFilter: true,
    createObjects: async (key, n) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push((await createForwardingRequest(t, key)).id);
      return out;
    },
    sdkIds: async (stripe) => ids(await stripe.forwarding.requests.list({ limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetFinancialConnectionsAccounts: {
    path: '/v1/financial_connections/accounts',
    objectName: 'financial_connections.account',
    createdFilter: false,
    createObjects: async (key, n) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push((await linkFcAccounts(t, key, { accounts: ['checking'] }))[0].id);
      return out;
    },
    sdkIds: async (stripe) => ids(await stripe.financialConnections.accounts.list({ limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetFinancialConnectionsAccountsAccountOwners: {
    // Each account's owners are under its own path.
    path: '/v1/financial_connections/accounts/{fc_account}/owners',
    objectName: 'financial_connections.account_owner',
    createdFilter: false,
    timestampField: 'refreshed_at',
    createObjects: fcOwnerRows,
    sdkIds: async (stripe, query) =>
      ids(await stripe.financialConnections.accounts.listOwners(query.path.split('/')[4], { ownership: query.ownership, limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetFinancialConnectionsTransactions: {
    path: '/v1/financial_connections/transactions',
    objectName: 'financial_connections.transaction',
    createdFilter: false,
    timestampField: 'transacted_at',
    createObjects: fcTransactionRows,
    sdkIds: async (stripe, query) => ids(await stripe.financialConnections.transactions.list({ account: query.account, limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetSubscriptions: {
    path: '/v1/subscriptions',
    objectName: 'subscription',
    createdFilter: true,
    maxObjects: 12,
    createObjects: async (key, n) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push((await createSubscription(t, key)).id);
      return out;
    },
    sdkIds: async (stripe) => ids(await stripe.subscriptions.list({ limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetSubscriptionItems: {
    path: '/v1/subscription_items',
    objectName: 'subscription_item',
    createdFilter: false,
    maxObjects: 12,
    createObjects: async (key, n) => {
      // The first item comes with the subscription; the others are added one at a time.
      const sub = await createSubscription(t, key);
      const out: string[] = [sub.items.data[0].id];
      for (let i = 1; i < n; i++) {
        const price = (await createPrice(t, key, { recurring: { interval: 'month' } })).id;
        out.push((await post(key, '/v1/subscription_items', { subscription: sub.id, price })).body.id);
      }
      // A subscription always has an item: for an empty list, its row goes.
      if (n === 0) await t.runtime.prisma.subscriptionItem.deleteMany({ where: { subscriptionId: sub.id } });
      return { ids: out.slice(0, n), query: { subscription: sub.id } };
    },
    sdkIds: async (stripe, query) => {
      const subscription = (await stripe.subscriptions.list({ limit: 1 })).data[0].id;
      void query;
      return ids(await stripe.subscriptionItems.list({ subscription, limit: 2 }).autoPagingToArray({ limit: 1000 }));
    },
  },
  GetInvoices: {
    path: '/v1/invoices',
    objectName: 'invoice',
    createdFilter: true,
    maxObjects: 12,
    createObjects: async (key, n) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push((await createSubscription(t, key)).latest_invoice);
      return out;
    },
    sdkIds: async (stripe) => ids(await stripe.invoices.list({ limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetInvoicesUpcomingLines: {
    // Before 2025-03-31.basil only: the key's account is pinned there by its first request. The
    // preview's lines are its subscription's items in order (ids `il_tmp_…`, the same for the same
    // preview), answered last line first, as the list's "newest first".
    path: '/v1/invoices/upcoming/lines',
    objectName: 'line_item',
    createdFilter: false,
    timestampField: null,
    maxObjects: 12,
    createObjects: async (key, n) => {
      await t.http().get('/v1/customers?limit=1').set(bearer(key)).set('Stripe-Version', UPCOMING_VERSION);
      const sub = await createSubscription(t, key, Math.max(n, 1));
      // No item, no line: the fresh account's empty list.
      if (n === 0) await t.runtime.prisma.subscriptionItem.deleteMany({ where: { subscriptionId: sub.id } });
      const ids = Array.from({ length: n }, (_, i) => `il_tmp_${sub.id.slice(4)}${String(i).padStart(3, '0')}`);
      return { ids: ids.reverse(), query: { subscription: sub.id } };
    },
    // Not in the current SDK (removed at 2025-03-31.basil): its raw request at the version before, page by page.
    sdkIds: async (stripe, query) => {
      const out: string[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 50; i++) {
        const path = `/v1/invoices/upcoming/lines?subscription=${query.subscription}&limit=2${cursor ? `&starting_after=${cursor}` : ''}`;
        const page = (await stripe.rawRequest('GET', path, {}, { apiVersion: UPCOMING_VERSION })) as unknown as { data: { id: string }[]; has_more: boolean };
        out.push(...ids(page.data));
        if (!page.has_more) break;
        cursor = page.data[page.data.length - 1].id;
      }
      return out;
    },
  },
  GetInvoicesInvoiceLines: {
    // Lines are listed in invoice order: the ids are answered last line first, as the list's "newest first".
    path: '/v1/invoices/{invoice}/lines',
    objectName: 'line_item',
    createdFilter: false,
    timestampField: null,
    maxObjects: 12,
    createObjects: async (key, n) => {
      const invoice = (await createSubscription(t, key, Math.max(n, 1))).latest_invoice;
      const lines = await t.runtime.prisma.invoiceLine.findMany({ where: { invoiceId: invoice }, orderBy: { seq: 'asc' } });
      if (n === 0) await t.runtime.prisma.invoiceLine.deleteMany({ where: { invoiceId: invoice } });
      return { ids: n === 0 ? [] : lines.map((l) => l.id).reverse(), path: `/v1/invoices/${invoice}/lines` };
    },
    sdkIds: async (stripe, query) => ids(await stripe.invoices.listLineItems(query.path.split('/')[3], { limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetInvoiceitems: {
    path: '/v1/invoiceitems',
    objectName: 'invoiceitem',
    createdFilter: true,
    timestampField: 'date',
    maxObjects: 12,
    createObjects: async (key, n) => {
      // Each quantity change makes two prorations (a credit and a charge).
      const sub = await createSubscription(t, key);
      const item = sub.items.data[0].id;
      for (let i = 0; i < Math.ceil(n / 2); i++) await post(key, `/v1/subscription_items/${item}`, { quantity: i + 2 });
      const made = await t.runtime.prisma.invoiceItem.findMany({ where: { subscriptionId: sub.id }, orderBy: { seq: 'asc' } });
      if (made.length > n) await t.runtime.prisma.invoiceItem.delete({ where: { id: made[made.length - 1].id } });
      return made.slice(0, n).map((i) => i.id);
    },
    sdkIds: async (stripe) => ids(await stripe.invoiceItems.list({ limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetInvoicePayments: {
    path: '/v1/invoice_payments',
    objectName: 'invoice_payment',
    createdFilter: true,
    maxObjects: 12,
    createObjects: async (key, n) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) {
        const invoice = (await createSubscription(t, key)).latest_invoice;
        out.push((await get(key, `/v1/invoice_payments?invoice=${invoice}`)).body.data[0].id);
      }
      return out;
    },
    sdkIds: async (stripe) => ids(await stripe.invoicePayments.list({ limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetSandboxFinancialConnectionsSessions: {
    path: '/sandbox/v1/financial_connections/sessions',
    objectName: 'financial_connections.session',
    createdFilter: false,
    // A session has no `created` (nor has the public object).
    timestampField: null,
    createObjects: async (key, n) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push((await createFcSession(t, key)).id);
      return out;
    },
    sdkIds: async (stripe) => sandboxListIds(stripe, '/sandbox/v1/financial_connections/sessions'),
  },
  GetSandboxPaymentAuthentications: {
    path: '/sandbox/v1/payment_authentications',
    objectName: 'sandbox.payment_authentication',
    createdFilter: false,
    createObjects: async (key, n) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push((await createPendingAuthentication(t, key)).id);
      return out;
    },
    sdkIds: async (stripe) => sandboxListIds(stripe, '/sandbox/v1/payment_authentications'),
  },
  GetTestHelpersTestClocks: {
    path: '/v1/test_helpers/test_clocks',
    objectName: 'test_helpers.test_clock',
    createdFilter: false,
    createObjects: async (key, n) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push((await post(key, '/v1/test_helpers/test_clocks', { frozen_time: 1800000000 + i })).body.id);
      return out;
    },
    sdkIds: async (stripe) => ids(await stripe.testHelpers.testClocks.list({ limit: 2 }).autoPagingToArray({ limit: 1000 })),
  },
  GetSandboxWebhookEndpointsWebhookEndpointDeliveries: {
    // Each account's list is under its own endpoint; the path comes with the created objects.
    path: '/sandbox/v1/webhook_endpoints/{webhook_endpoint}/deliveries',
    objectName: 'webhook_delivery_attempt',
    createdFilter: false,
    createObjects: recordAttempts,
    // A sandbox operation has no SDK method; the SDK's raw request reaches it with the same client.
    sdkIds: async (stripe, query) => {
      const out: string[] = [];
      for (let cursor: string | undefined; ; ) {
        const page = (await stripe.rawRequest('GET', `${query.path}?limit=2${cursor ? `&starting_after=${cursor}` : ''}`)) as unknown as {
          data: { id: string }[];
          has_more: boolean;
        };
        out.push(...ids(page.data));
        if (!page.has_more) return out;
        cursor = page.data[page.data.length - 1].id;
      }
    },
  },
};

test('every list operation has a conformance entry', () => {
  const listOperations = routes.filter((r) => r.returns.list).map((r) => r.operationId);
  expect(Object.keys(LISTS).sort()).toEqual([...listOperations].sort());
});

for (const [operationId, list] of Object.entries(LISTS)) {
  describeListConformance({
    name: `GET ${list.path}`,
    path: list.path,
    getApp: () => t,
    objectName: list.objectName,
    operationId,
    createdFilter: list.createdFilter,
    maxObjects: list.maxObjects,
    timestampField: list.timestampField,
    createObjects: list.createObjects,
  });

  test(`GET ${list.path} through the official SDK: auto-pagination yields every object once, newest first`, async () => {
    const key = newTestKey();
    const made = await list.createObjects(key, 5);
    const created = Array.isArray(made) ? { ids: made } : made;
    expect(await list.sdkIds(t.stripe(key), { ...created.query, path: created.path ?? list.path })).toEqual([...created.ids].reverse());
  });
}

// Every search operation (`GET /v1/<resource>/search`), the same way: pages of `limit` through
// `next_page` newest first, `total_count` only when expanded, the limits, a page token of another
// query refused, and the official SDK's auto-pagination. A search without an entry here fails the
// coverage test.

interface SearchCase {
  readonly path: string;
  /** A query that matches what `createObjects` makes and nothing else of the key's. */
  readonly query: string;
  /** `n` matching objects, oldest first (and one that doesn't match). */
  readonly createObjects: (key: string, n: number) => Promise<string[]>;
  readonly sdkIds: (stripe: Stripe, query: string) => Promise<string[]>;
}

const SEARCHES: Record<string, SearchCase> = {
  GetCustomersSearch: {
    path: '/v1/customers/search',
    query: "metadata['batch']:'search' AND email~\"example\"",
    createObjects: async (key, n) => {
      const made: string[] = [];
      for (let i = 0; i < n; i++) made.push((await createCustomer(t, key, { email: `s${i}@example.com`, metadata: { batch: 'search' } })).id);
      await createCustomer(t, key, { email: 'other@example.com', metadata: { batch: 'other' } });
      return made;
    },
    sdkIds: async (stripe, query) => {
      const out: string[] = [];
      for await (const customer of stripe.customers.search({ query, limit: 2 })) out.push(customer.id);
      return out;
    },
  },
  GetPaymentIntentsSearch: {
    path: '/v1/payment_intents/search',
    query: "metadata['batch']:'search' AND amount>=1000",
    createObjects: async (key, n) => {
      const made: string[] = [];
      for (let i = 0; i < n; i++) made.push((await createPaymentIntent(t, key, { amount: 1000 + i, metadata: { batch: 'search' } })).id);
      await createPaymentIntent(t, key, { amount: 1000, metadata: { batch: 'other' } });
      return made;
    },
    sdkIds: async (stripe, query) => {
      const out: string[] = [];
      for await (const intent of stripe.paymentIntents.search({ query, limit: 2 })) out.push(intent.id);
      return out;
    },
  },
  GetChargesSearch: {
    path: '/v1/charges/search',
    query: "metadata['batch']:'search' AND status:\"succeeded\"",
    createObjects: async (key, n) => {
      const made: string[] = [];
      const pay = (metadata: Record<string, string>) => createPaymentIntent(t, key, { payment_method: 'pm_card_visa', confirm: true, metadata });
      for (let i = 0; i < n; i++) made.push((await pay({ batch: 'search' })).latest_charge);
      await pay({ batch: 'other' });
      return made;
    },
    sdkIds: async (stripe, query) => {
      const out: string[] = [];
      for await (const charge of stripe.charges.search({ query, limit: 2 })) out.push(charge.id);
      return out;
    },
  },
  GetSubscriptionsSearch: {
    path: '/v1/subscriptions/search',
    query: "metadata['batch']:'search' AND status:\"active\"",
    createObjects: async (key, n) => {
      const made: string[] = [];
      for (let i = 0; i < n; i++) made.push((await createSubscription(t, key, 1, { metadata: { batch: 'search' } })).id);
      await createSubscription(t, key, 1, { metadata: { batch: 'other' } });
      return made;
    },
    sdkIds: async (stripe, query) => {
      const out: string[] = [];
      for await (const sub of stripe.subscriptions.search({ query, limit: 2 })) out.push(sub.id);
      return out;
    },
  },
  GetInvoicesSearch: {
    path: '/v1/invoices/search',
    // No operation sets an invoice's metadata: open invoices (of incomplete subscriptions) are the batch.
    query: 'status:"open" AND total>=1000',
    createObjects: async (key, n) => {
      const made: string[] = [];
      for (let i = 0; i < n; i++) made.push((await createSubscription(t, key, 1, { payment_behavior: 'default_incomplete' })).latest_invoice);
      await createSubscription(t, key);
      return made;
    },
    sdkIds: async (stripe, query) => {
      const out: string[] = [];
      for await (const invoice of stripe.invoices.search({ query, limit: 2 })) out.push(invoice.id!);
      return out;
    },
  },
  GetPricesSearch: {
    path: '/v1/prices/search',
    query: "metadata['batch']:'search' AND active:\"true\"",
    createObjects: async (key, n) => {
      const made: string[] = [];
      for (let i = 0; i < n; i++) made.push((await createPrice(t, key, { metadata: { batch: 'search' } })).id);
      await createPrice(t, key, { metadata: { batch: 'other' } });
      return made;
    },
    sdkIds: async (stripe, query) => {
      const out: string[] = [];
      for await (const price of stripe.prices.search({ query, limit: 2 })) out.push(price.id);
      return out;
    },
  },
  GetProductsSearch: {
    path: '/v1/products/search',
    query: "metadata['batch']:'search' AND name~\"plan\"",
    createObjects: async (key, n) => {
      const made: string[] = [];
      for (let i = 0; i < n; i++) made.push((await createProduct(t, key, { name: `Plan ${i}`, metadata: { batch: 'search' } })).id);
      await createProduct(t, key, { name: 'Plan other', metadata: { batch: 'other' } });
      return made;
    },
    sdkIds: async (stripe, query) => {
      const out: string[] = [];
      for await (const product of stripe.products.search({ query, limit: 2 })) out.push(product.id);
      return out;
    },
  },
};

test('every search operation has a conformance entry', () => {
  const searches = routes.filter((r) => r.returns.search).map((r) => r.operationId);
  expect(Object.keys(SEARCHES).sort()).toEqual([...searches].sort());
});

describe.each(Object.entries(SEARCHES))('%s', (_operationId, search) => {
  const url = (query: string, extra = '') => `${search.path}?query=${encodeURIComponent(query)}${extra}`;

  test('pages of limit through next_page, newest first, each object once; total_count only when expanded', async () => {
    const key = newTestKey();
    const made = await search.createObjects(key, 5);
    const { get } = requestsOf(() => t);
    const seen: string[] = [];
    let page: string | null = null;
    let pages = 0;
    do {
      const res = await get(key, url(search.query, `&limit=2&expand[]=total_count${page ? `&page=${encodeURIComponent(page)}` : ''}`));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object: 'search_result', url: search.path, total_count: 5 });
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      expect(res.body.has_more).toBe(res.body.next_page !== null);
      seen.push(...ids(res.body.data));
      page = res.body.next_page;
      pages++;
    } while (page !== null && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual([...made].reverse());
    const plain = await get(key, url(search.query));
    expect(plain.body).not.toHaveProperty('total_count');
    expect(ids(plain.body.data)).toEqual([...made].reverse());
  });

  test('limit is 1 to 100; a page token of another query is a 400 on page', async () => {
    const key = newTestKey();
    await search.createObjects(key, 2);
    const { get } = requestsOf(() => t);
    expect((await get(key, url(search.query, '&limit=0'))).body.error).toMatchObject({ param: 'limit' });
    expect((await get(key, url(search.query, '&limit=101'))).body.error).toMatchObject({ param: 'limit' });
    const { next_page } = (await get(key, url(search.query, '&limit=1'))).body;
    // Another query of the same objects (every searchable resource has metadata; not all have `created`).
    const other = await get(key, url(`${search.query} AND metadata['other']:null`, `&page=${encodeURIComponent(next_page)}`));
    expect({ status: other.status, param: other.body.error?.param }).toEqual({ status: 400, param: 'page' });
  });

  test('through the official SDK: auto-pagination yields every match once, newest first', async () => {
    const key = newTestKey();
    const made = await search.createObjects(key, 5);
    expect(await search.sdkIds(t.stripe(key), search.query)).toEqual([...made].reverse());
  });
});
