import { LATEST_API_VERSION } from '../../src/kernel/versions';
import { newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { payingCustomer, recurringPrice } from '../helpers/billing';
import { expectError, requestsOf } from '../helpers/requests';
import { sdkModule } from './sdk_versions/majors';
import { hasSdkType, releaseSdkTypes, sdkExpandableFields } from '../helpers/sdkTypes';

// Expansions at every version: what an older version shows as an id expands at that version
// (an invoice's `payment_intent` before basil), through the object registry, as the guides of
// that time call it; what a version doesn't show stays the public 400.

jest.setTimeout(60_000);

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get } = requestsOf(() => t);
const at = (version: string) => ({ 'Stripe-Version': version });
const BASIL = '2025-03-31.basil';

/** A client of an older major as its users make it (8 and 11 given the version they pin). */
function client(pkg: 'stripe-v8' | 'stripe-v11' | 'stripe-v14' | 'stripe', key: string, apiVersion?: string): any {
  const S = sdkModule(pkg);
  return new S(key, { host: '127.0.0.1', port: t.port, protocol: 'http', maxNetworkRetries: 0, telemetry: false, ...(apiVersion ? { apiVersion } : {}) });
}

/** A customer whose card asks for nothing, and a monthly price, for a subscription. */
async function subscriptionSetup(key: string, card = 'pm_card_visa') {
  const customer = await payingCustomer(t, key, card);
  const price = await recurringPrice(t, key, 1500);
  return { customer: customer.id, price: price.id };
}

describe("pre-basil subscription sign-up: expand[]=latest_invoice.payment_intent", () => {
  test.each([
    ['stripe-v8', '2020-08-27'],
    ['stripe-v11', '2022-11-15'],
    ['stripe-v14', undefined],
  ] as const)('%s: default_incomplete gives the invoice its PaymentIntent, with its client_secret', async (pkg, apiVersion) => {
    const key = newTestKey();
    const { price } = await subscriptionSetup(key);
    const customer = (await post(key, '/v1/customers', { email: 'new@example.com' })).body;
    const stripe = client(pkg, key, apiVersion);
    const sub = await stripe.subscriptions.create({
      customer: customer.id,
      items: [{ price }],
      payment_behavior: 'default_incomplete',
      expand: ['latest_invoice.payment_intent'],
    });
    expect(sub.status).toBe('incomplete');
    const intent = sub.latest_invoice.payment_intent;
    expect(intent).toMatchObject({ object: 'payment_intent', status: 'requires_payment_method', amount: 1500 });
    expect(intent.client_secret).toMatch(new RegExp(`^${intent.id}_secret_`));
    // The intent as that version shows it: its invoice (an id), `charges` before 2022-11-15.
    expect(intent.invoice).toBe(sub.latest_invoice.id);
    if (apiVersion === '2020-08-27') {
      expect(intent).not.toHaveProperty('latest_charge');
      expect(intent.charges).toMatchObject({ object: 'list', data: [] });
    } else {
      expect(intent.latest_charge).toBeNull();
    }
  });

  test('raw HTTP at 2024-04-10: invoice.payment_intent and invoice.charge, and deeper (payment_intent.payment_method)', async () => {
    const key = newTestKey();
    const { customer, price } = await subscriptionSetup(key);
    const res = await post(
      key,
      '/v1/subscriptions',
      { customer, items: [{ price }], expand: ['latest_invoice.payment_intent.payment_method', 'latest_invoice.charge.customer', 'latest_invoice.subscription'] },
      at('2024-04-10'),
    );
    expect(res.status).toBe(200);
    const invoice = res.body.latest_invoice;
    expect(invoice).toMatchObject({ object: 'invoice', paid: true, subscription: { object: 'subscription', id: res.body.id } });
    expect(invoice.payment_intent).toMatchObject({ object: 'payment_intent', status: 'succeeded', invoice: invoice.id, payment_method: { object: 'payment_method', type: 'card' } });
    expect(invoice.charge).toMatchObject({ object: 'charge', id: invoice.payment_intent.latest_charge, invoice: invoice.id, customer: { object: 'customer', id: customer } });
    // The expanded objects are rendered for the version too (a charge before basil has `invoice`; an invoice its `paid`).
    const retrieved = await get(key, `/v1/invoices/${invoice.id}?expand[]=payment_intent&expand[]=charge`, at('2024-04-10'));
    expect(retrieved.body.payment_intent.id).toBe(invoice.payment_intent.id);
    expect(retrieved.body.charge.id).toBe(invoice.charge.id);
  });

  test('an invoice without a payment yet: payment_intent and charge expand to null', async () => {
    const key = newTestKey();
    const { customer } = await subscriptionSetup(key);
    const draft = (await post(key, '/v1/invoices', { customer }, at('2024-04-10'))).body;
    const res = await get(key, `/v1/invoices/${draft.id}?expand[]=payment_intent&expand[]=charge&expand[]=subscription`, at('2024-04-10'));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ payment_intent: null, charge: null, subscription: null });
  });

  test('lists: data.payment_intent on the invoice list at an older version', async () => {
    const key = newTestKey();
    const { customer, price } = await subscriptionSetup(key);
    await post(key, '/v1/subscriptions', { customer, items: [{ price }] });
    const res = await get(key, `/v1/invoices?customer=${customer}&expand[]=data.payment_intent`, at('2023-10-16'));
    expect(res.status).toBe(200);
    expect(res.body.data[0].payment_intent).toMatchObject({ object: 'payment_intent', status: 'succeeded' });
    // Not data.-prefixed on a list: the public hint.
    const hinted = await get(key, `/v1/invoices?expand[]=payment_intent`, at('2023-10-16'));
    expectError(hinted, 400, { type: 'invalid_request_error', param: 'expand', message: "This property cannot be expanded (payment_intent). You may want to try expanding 'data.payment_intent' instead." });
  });

  test('at basil and after, the fields it removed are not expandable: the public 400', async () => {
    const key = newTestKey();
    const { customer, price } = await subscriptionSetup(key);
    for (const version of [BASIL, LATEST_API_VERSION]) {
      const res = await post(key, '/v1/subscriptions', { customer, items: [{ price }], expand: ['latest_invoice.payment_intent'] }, at(version));
      expectError(res, 400, { type: 'invalid_request_error', param: 'expand', message: 'This property cannot be expanded (payment_intent).' });
      for (const field of ['charge', 'subscription']) {
        expectError(await get(key, `/v1/invoices?expand[]=data.${field}`, at(version)), 400, { message: `This property cannot be expanded (${field}).` });
      }
    }
    // Through the newest SDK too: its error class, its message.
    const stripe = client('stripe', key);
    await expect(stripe.subscriptions.create({ customer, items: [{ price }], expand: ['latest_invoice.payment_intent'] })).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      statusCode: 400,
      param: 'expand',
      message: 'This property cannot be expanded (payment_intent).',
    });
    // The newest way: confirmation_secret; which did not exist before basil.
    const sub = await stripe.subscriptions.create({ customer, items: [{ price }], payment_behavior: 'default_incomplete', expand: ['latest_invoice.confirmation_secret'] });
    expect(sub.latest_invoice.confirmation_secret.client_secret).toMatch(/_secret_/);
    const old = await post(key, '/v1/subscriptions', { customer, items: [{ price }], expand: ['latest_invoice.confirmation_secret'] }, at('2025-02-24.acacia'));
    expectError(old, 400, { message: 'This property cannot be expanded (confirmation_secret).' });
  });
});

describe('PaymentIntents and charges at older versions', () => {
  test('2020-08-27 (stripe-v8): charges.data.balance_transaction is a path; latest_charge does not exist yet', async () => {
    const key = newTestKey();
    const stripe = client('stripe-v8', key, '2020-08-27');
    const intent = await stripe.paymentIntents.create({ amount: 2000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true, payment_method_types: ['card'], expand: ['charges.data.customer'] });
    expect(intent.charges.data).toHaveLength(1);
    expect(intent.charges.data[0]).toMatchObject({ object: 'charge', customer: null, invoice: null });
    const res = await get(key, `/v1/payment_intents/${intent.id}?expand[]=invoice&expand[]=charges.data.payment_intent`, at('2020-08-27'));
    expect(res.status).toBe(200);
    expect(res.body.invoice).toBeNull();
    expect(res.body.charges.data[0].payment_intent).toMatchObject({ object: 'payment_intent', id: intent.id, charges: { object: 'list' } });
    expectError(await get(key, `/v1/payment_intents/${intent.id}?expand[]=latest_charge`, at('2020-08-27')), 400, { message: 'This property cannot be expanded (latest_charge).' });
    expectError(await get(key, `/v1/payment_intents/${intent.id}?expand[]=charges.bogus`, at('2020-08-27')), 400, { message: 'This property cannot be expanded (bogus).' });
    // From 2022-11-15, `charges` is gone.
    expectError(await get(key, `/v1/payment_intents/${intent.id}?expand[]=charges.data.customer`, at('2022-11-15')), 400, { message: 'This property cannot be expanded (charges).' });
  });

  test('an invoice’s PaymentIntent and charge expand their `invoice` before basil (stripe-v14), not from it', async () => {
    const key = newTestKey();
    const { customer, price } = await subscriptionSetup(key);
    const sub = (await post(key, '/v1/subscriptions', { customer, items: [{ price }] })).body;
    const invoice = (await get(key, `/v1/invoices/${sub.latest_invoice}`, at('2024-04-10'))).body;
    const stripe = client('stripe-v14', key);
    const intent = await stripe.paymentIntents.retrieve(invoice.payment_intent, { expand: ['invoice.subscription'] });
    expect(intent.invoice).toMatchObject({ object: 'invoice', id: invoice.id, subscription: { object: 'subscription', id: sub.id } });
    const charge = await stripe.charges.retrieve(invoice.charge, { expand: ['invoice', 'payment_intent'] });
    expect(charge.invoice).toMatchObject({ object: 'invoice', id: invoice.id, paid: true });
    expect(charge.payment_intent).toMatchObject({ object: 'payment_intent', invoice: invoice.id });
    const newest = client('stripe', key);
    await expect(newest.charges.retrieve(invoice.charge, { expand: ['invoice'] })).rejects.toMatchObject({ statusCode: 400, message: 'This property cannot be expanded (invoice).' });
  });
});

describe('a customer’s subscriptions, sources, tax_ids and default_source', () => {
  test.each([
    ['stripe-v8', '2020-08-27'],
    ['stripe-v11', '2022-11-15'],
    ['stripe', undefined],
  ] as const)('%s: shown only when expanded: lists (empty where nothing exists), null default_source', async (pkg, apiVersion) => {
    const key = newTestKey();
    const { customer, price } = await subscriptionSetup(key);
    const stripe = client(pkg, key, apiVersion);
    const plain = await stripe.customers.retrieve(customer);
    for (const field of ['subscriptions', 'sources', 'tax_ids']) expect(plain).not.toHaveProperty(field);
    expect(plain.default_source).toBeNull();
    const sub = await stripe.subscriptions.create({ customer, items: [{ price }] });
    const canceled = await stripe.subscriptions.create({ customer, items: [{ price }] });
    await stripe.subscriptions.del?.(canceled.id) ?? (await stripe.subscriptions.cancel(canceled.id));
    const expanded = await stripe.customers.retrieve(customer, { expand: ['subscriptions', 'sources', 'tax_ids', 'default_source', 'test_clock'] });
    expect(expanded.subscriptions).toMatchObject({ object: 'list', has_more: false, url: `/v1/customers/${customer}/subscriptions` });
    // Its current subscriptions: not the canceled one.
    expect(expanded.subscriptions.data.map((s: any) => s.id)).toEqual([sub.id]);
    expect(expanded.sources).toEqual({ object: 'list', data: [], has_more: false, total_count: 0, url: `/v1/customers/${customer}/sources` });
    expect(expanded.tax_ids).toEqual({ object: 'list', data: [], has_more: false, total_count: 0, url: `/v1/customers/${customer}/tax_ids` });
    expect(expanded).toMatchObject({ default_source: null, test_clock: null });
    // The subscriptions inside are rendered for the version (before basil, their period on the subscription).
    if (apiVersion !== undefined) expect(typeof expanded.subscriptions.data[0].current_period_end).toBe('number');
  });

  test('raw HTTP: deeper paths through the list (subscriptions.data.latest_invoice), on the list of customers, and the refused ones', async () => {
    const key = newTestKey();
    const { customer, price } = await subscriptionSetup(key);
    const sub = (await post(key, '/v1/subscriptions', { customer, items: [{ price }] })).body;
    const res = await get(key, `/v1/customers/${customer}?expand[]=subscriptions.data.latest_invoice.payment_intent`, at('2024-04-10'));
    expect(res.status).toBe(200);
    expect(res.body.subscriptions.data[0]).toMatchObject({ id: sub.id, latest_invoice: { object: 'invoice', id: sub.latest_invoice, payment_intent: { object: 'payment_intent' } } });
    const list = await get(key, `/v1/customers?expand[]=data.subscriptions&expand[]=data.tax_ids`);
    expect(list.status).toBe(200);
    expect(list.body.data.find((c: any) => c.id === customer).subscriptions.data).toHaveLength(1);
    for (const [path, segment] of [
      ['subscriptions.data', 'data'],
      ['subscriptions.latest_invoice', 'latest_invoice'],
      ['sources.data.owner', 'owner'],
      ['default_source.customer', 'customer'],
      ['balance', 'balance'],
    ]) {
      expectError(await get(key, `/v1/customers/${customer}?expand[]=${path}`), 400, { param: 'expand', message: `This property cannot be expanded (${segment}).` });
    }
  });
});

// ── Every expandable field the oldest and newest pinned majors' types declare ──
//
// The types mark a field expandable as `string | Stripe.X` (an id or its object, an array of
// them too) or as a list the object has only when asked (an optional `ApiList`), at any depth of
// its sub-objects (`sdkExpandableFields`). Each is expanded on a served object at the major's
// version; what can't be is justified below.

/** Object types Sandbank doesn't serve: a field that expands only to them can't be expanded here. */
const NOT_SERVED: Readonly<Record<string, string>> = {
  application: 'Connect applications (OAuth platforms) are not served; `application` is null.',
  application_fee: 'application fees are not served.',
  balance_transaction: 'Sandbank keeps a charge’s balance transaction id, not balance transactions (no /v1/balance_transactions).',
  dispute: 'disputes are not served (an older charge’s `dispute` is null).',
  review: 'Radar reviews are not served.',
  transfer: 'transfers are not served.',
  transfer_reversal: 'transfer reversals are not served.',
  mandate: 'mandates are not served (card payments need none).',
  setup_attempt: 'SetupAttempts are not served.',
  file: 'files (branding icons, identity documents) are not served.',
  quote: 'quotes are not served (`quote` is null).',
  shipping_rate: 'shipping rates are not served.',
  subscription_schedule: 'subscription schedules are not served.',
  tax_code: 'tax codes are not served.',
  payment_record: 'payment records are not served.',
  order: 'the Orders API was removed (stripe-node 9).',
  tax_id: 'an account’s tax ids (`account_tax_ids`) are not served.',
};

/** Fields that expand to a served type yet can't be expanded here, each with why. */
const NOT_EXPANDABLE: readonly { readonly field: RegExp; readonly why: string }[] = [
  {
    field: /^charge\.payment_method_details\.(bancontact|ideal|sofort)\.generated_sepa_debit$/,
    why: 'Sandbank’s payments are card payments: no Bancontact, iDEAL or Sofort details.',
  },
  { field: /^payment_method\.sepa_debit\.generated_from\.charge$/, why: 'Sandbank’s PaymentMethods are cards: no SEPA Debit details.' },
  {
    field: /^(invoice|subscription)\.(automatic_tax\.liability|issuer|invoice_settings\.issuer)\.account$/,
    why: 'no automatic tax, and invoices are issued by the account itself (`issuer: {type: self}`): there is no account there.',
  },
  { field: /^(invoice|subscription)\.transfer_data\.destination$/, why: 'subscriptions and invoices take no `transfer_data` here (it is null).' },
  { field: /^payment_intent\.source$/, why: 'no sources (cards are PaymentMethods): `source` is null.' },
  { field: /^subscription\.cancellation_details\.feedback_option$/, why: 'an enum the newest types union with an object by mistake, no id.' },
  {
    field: /^(line_item|invoiceitem|subscription_item)\.discounts$|^subscription\.pending_update\.discounts$/,
    why: 'not built: the discounts of lines, invoice items and items are ids here; those of invoices and subscriptions expand.',
  },
  { field: /^payment_intent\.amount_details\.line_items$/, why: 'a PaymentIntent’s line items are not served.' },
];

/** Fields the newest types say expand to another type than they do (`account_holder.account` of Financial Connections names its own Account). */
const TYPE_ALIASES: Readonly<Record<string, string>> = { 'financial_connections.account': 'account' };

interface Served {
  /** The GET that answers the object (a list: its items are the objects). */
  readonly path: string;
  readonly list?: boolean;
}

/** One of each served object type that has expandable fields, made over HTTP at the newest version. */
async function servedObjects(key: string): Promise<Record<string, Served>> {
  const newest = at(LATEST_API_VERSION);
  const { customer, price } = await subscriptionSetup(key);
  const coupon = (await post(key, '/v1/coupons', { percent_off: 10, duration: 'forever' }, newest)).body;
  const sub = (await post(key, '/v1/subscriptions', { customer, items: [{ price }], discounts: [{ coupon: coupon.id }] }, newest)).body;
  const invoice = (await get(key, `/v1/invoices/${sub.latest_invoice}`, newest)).body;
  const intent = (await get(key, `/v1/invoice_payments?invoice=${invoice.id}`, newest)).body.data[0].payment.payment_intent;
  const charge = (await get(key, `/v1/payment_intents/${intent}`, newest)).body.latest_charge;
  const refund = (await post(key, '/v1/refunds', { charge, amount: 100 }, newest)).body;
  const item = (await post(key, '/v1/invoiceitems', { customer, amount: 300, currency: 'usd' }, newest)).body;
  const setup = (await post(key, '/v1/setup_intents', { customer }, newest)).body;
  const promotion = (await post(key, '/v1/promotion_codes', { promotion: { type: 'coupon', coupon: coupon.id } }, newest)).body;
  const pm = (await get(key, `/v1/customers/${customer}`, newest)).body.invoice_settings.default_payment_method;
  const account = (await post(key, '/v1/accounts', { type: 'custom', country: 'US', capabilities: { card_payments: { requested: true }, transfers: { requested: true } } }, newest)).body;
  const person = (await post(key, `/v1/accounts/${account.id}/persons`, { first_name: 'Jane' }, newest)).body;
  expect((await post(key, `/v1/accounts/${account.id}/external_accounts`, { external_account: 'btok_us' }, newest)).status).toBe(200);
  const verification = (await post(key, '/v1/identity/verification_sessions', { type: 'document' }, newest)).body;
  const fcSession = (await post(key, '/v1/financial_connections/sessions', { account_holder: { type: 'customer', customer }, permissions: ['balances', 'ownership'] }, newest)).body;
  const completed = await t.http().post(`/sandbox/v1/financial_connections/sessions/${fcSession.id}/complete`).set('Authorization', `Bearer ${key}`).type('form').send('institution=test_institution');
  expect(completed.status).toBe(200);
  return {
    customer: { path: `/v1/customers/${customer}` },
    subscription: { path: `/v1/subscriptions/${sub.id}` },
    subscription_item: { path: `/v1/subscription_items/${sub.items.data[0].id}` },
    invoice: { path: `/v1/invoices/${invoice.id}` },
    line_item: { path: `/v1/invoices/${invoice.id}/lines`, list: true },
    invoice_payment: { path: `/v1/invoice_payments?invoice=${invoice.id}`, list: true },
    invoiceitem: { path: `/v1/invoiceitems/${item.id}` },
    payment_intent: { path: `/v1/payment_intents/${intent}` },
    charge: { path: `/v1/charges/${charge}` },
    refund: { path: `/v1/refunds/${refund.id}` },
    setup_intent: { path: `/v1/setup_intents/${setup.id}` },
    payment_method: { path: `/v1/payment_methods/${pm}` },
    price: { path: `/v1/prices/${price}` },
    product: { path: `/v1/products/${(await get(key, `/v1/prices/${price}`, newest)).body.product}` },
    promotion_code: { path: `/v1/promotion_codes/${promotion.id}` },
    account: { path: `/v1/accounts/${account.id}` },
    person: { path: `/v1/accounts/${account.id}/persons/${person.id}` },
    capability: { path: `/v1/accounts/${account.id}/capabilities/card_payments` },
    bank_account: { path: `/v1/accounts/${account.id}/external_accounts`, list: true },
    'identity.verification_session': { path: `/v1/identity/verification_sessions/${verification.id}` },
    'financial_connections.session': { path: `/v1/financial_connections/sessions/${fcSession.id}` },
    'financial_connections.account': { path: `/v1/financial_connections/accounts?session=${fcSession.id}`, list: true },
  };
}

/** The value at a dotted path (through arrays: each element's). */
function valuesAt(node: unknown, path: string[]): unknown[] {
  if (path.length === 0) return [node];
  if (Array.isArray(node)) return node.flatMap((n) => valuesAt(n, path));
  if (typeof node !== 'object' || node === null) return [];
  return valuesAt((node as Record<string, unknown>)[path[0]], path.slice(1));
}

/** The justifications the walks below called on (each must still be needed). */
const justified = new Set<string>();

describe.each([
  ['stripe-v8', '2020-08-27'],
  ['stripe', LATEST_API_VERSION],
] as const)('every expandable field %s’s types declare, at %s', (pkg, version) => {
  afterAll(() => releaseSdkTypes(pkg));

  test('expands on the served object to what the types say (or null), or is justified', async () => {
    const key = newTestKey();
    const served = await servedObjects(key);
    const problems: string[] = [];
    let expanded = 0;
    for (const [objectName, { path, list }] of Object.entries(served)) {
      if (!hasSdkType(objectName, pkg)) continue;
      for (const { path: field, to } of sdkExpandableFields(objectName, pkg)) {
        const name = `${objectName}.${field}`;
        const served = to.filter((type) => !NOT_SERVED[type]);
        const rule = NOT_EXPANDABLE.find((r) => r.field.test(name));
        if (served.length === 0 || rule) {
          justified.add(rule ? rule.field.source : to.join('|'));
          continue;
        }
        const expand = list ? `data.${field}` : field;
        const res = await get(key, `${path}${path.includes('?') ? '&' : '?'}expand[]=${expand}`, at(version));
        if (res.status !== 200) {
          problems.push(`${name}: ${res.status} ${res.body?.error?.message}`);
          continue;
        }
        expanded += 1;
        const values = valuesAt(list ? res.body.data : res.body, field.split('.'));
        for (const value of values.flatMap((v) => (Array.isArray(v) ? v : [v]))) {
          if (value === null || value === undefined) continue;
          const object = (value as { object?: unknown }).object;
          const expected = to.map((type) => TYPE_ALIASES[type] ?? type);
          if (typeof value !== 'object' || !expected.includes(String(object))) problems.push(`${name}: expanded to ${JSON.stringify(value).slice(0, 80)}, not ${to.join(' | ')}`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(expanded).toBeGreaterThan(20);
  });
});

test('every justification above is still called for by the oldest or the newest types', () => {
  const unused = [...NOT_EXPANDABLE.map((r) => r.field.source), ...Object.keys(NOT_SERVED)].filter((j) => ![...justified].some((u) => u === j || u.split('|').includes(j)));
  expect(unused).toEqual([]);
});
