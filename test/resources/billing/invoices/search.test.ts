import { newTestKey, startTestApp, type TestApp } from '../../../helpers/app';
import { createSubscription } from '../../../helpers/fixtures';
import { expectMatchesResponseSchema } from '../../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../../helpers/requests';

// GET /v1/invoices/search end to end: its query fields (created, currency, customer, metadata,
// number, status, subscription, total) against the invoices subscriptions make, pages and
// total_count, the answer rendered as the list renders it (today and at an older version), the
// errors, the scope of a key, and the official SDK.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { get } = requestsOf(() => t);
const SEARCH = '/v1/invoices/search';
const search = (key: string, query: string, extra = '', headers?: Record<string, string>) => get(key, `${SEARCH}?query=${encodeURIComponent(query)}${extra}`, headers);

async function found(key: string, query: string): Promise<string[]> {
  const res = await search(key, query, '&limit=100');
  expect(res.status).toBe(200);
  return res.body.data.map((i: { id: string }) => i.id);
}

describe('invoices searched', () => {
  const key = newTestKey();
  // Each subscription's first invoice: paid 25.00, paid 0 (a trial), open 10.00, paid 7.00 in euros.
  let gold: Record<string, any>;
  let trial: Record<string, any>;
  let open: Record<string, any>;
  let euro: Record<string, any>;
  let trialSubscription: string;
  beforeAll(async () => {
    const invoiceOf = async (sub: Record<string, any>) => (await get(key, `/v1/invoices/${sub.latest_invoice}`)).body;
    gold = await invoiceOf(await createSubscription(t, key, 1, {}, { unit_amount: 2500 }));
    const trialing = await createSubscription(t, key, 1, { trial_period_days: 3 });
    trialSubscription = trialing.id;
    trial = await invoiceOf(trialing);
    open = await invoiceOf(await createSubscription(t, key, 1, { payment_behavior: 'default_incomplete' }));
    euro = await invoiceOf(await createSubscription(t, key, 1, {}, { currency: 'eur', unit_amount: 700 }));
    expect([gold, trial, open, euro].map((i) => [i.status, i.total, i.currency])).toEqual([
      ['paid', 2500, 'usd'],
      ['paid', 0, 'usd'],
      ['open', 1000, 'usd'],
      ['paid', 700, 'eur'],
    ]);
    // No operation here sets an invoice's metadata yet; the search reads the column all the same.
    await t.runtime.prisma.invoice.update({ where: { id: gold.id }, data: { metadata: { order: '6735' } } });
  });

  test('status, currency, customer and subscription, exactly', async () => {
    expect(await found(key, 'status:"paid"')).toEqual([euro.id, trial.id, gold.id]);
    expect(await found(key, 'status:"open"')).toEqual([open.id]);
    expect(await found(key, 'currency:"eur"')).toEqual([euro.id]);
    expect(await found(key, `customer:"${gold.customer}"`)).toEqual([gold.id]);
    expect(await found(key, `subscription:"${trialSubscription}"`)).toEqual([trial.id]);
    expect(await found(key, 'status:"Paid"')).toEqual([]);
  });

  test('total and created as numbers', async () => {
    expect(await found(key, 'total>=1000')).toEqual([open.id, gold.id]);
    expect(await found(key, 'total:0')).toEqual([trial.id]);
    expect(await found(key, 'total>0 AND total<1000')).toEqual([euro.id]);
    expect(await found(key, `created>=${gold.created}`)).toEqual([euro.id, open.id, trial.id, gold.id]);
    expect(await found(key, `created<${gold.created}`)).toEqual([]);
  });

  test('number exactly without regard to case, and by substring', async () => {
    expect(gold.number).toMatch(/^[A-Z0-9]{8}-0001$/);
    expect(await found(key, `number:"${gold.number.toLowerCase()}"`)).toEqual([gold.id]);
    expect(await found(key, `number~"${gold.number.slice(2, 9).toLowerCase()}"`)).toEqual([gold.id]);
    expect(await found(key, 'number~"-0001"')).toEqual([euro.id, open.id, trial.id, gold.id]);
    expect(await found(key, `number:"${gold.number.slice(0, 8)}"`)).toEqual([]);
    expect(await found(key, 'number:null')).toEqual([]);
  });

  test('metadata, negation, AND and OR', async () => {
    expect(await found(key, "metadata['order']:'6735'")).toEqual([gold.id]);
    expect(await found(key, "metadata['order']:null")).toEqual([euro.id, open.id, trial.id]);
    expect(await found(key, '-status:"paid"')).toEqual([open.id]);
    expect(await found(key, '-currency:"usd" OR status:"open"')).toEqual([euro.id, open.id]);
    expect(await found(key, "status:'paid' AND -metadata['order']:'6735' AND total>0")).toEqual([euro.id]);
  });

  test('pages through next_page, newest first; total_count only when expanded', async () => {
    const seen: string[] = [];
    let page: string | undefined;
    for (let i = 0; i < 2; i++) {
      const res = await search(key, 'created>0', `&limit=3&expand[]=total_count${page ? `&page=${encodeURIComponent(page)}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object: 'search_result', url: SEARCH, total_count: 4, has_more: i === 0 });
      expectMatchesResponseSchema('GetInvoicesSearch', 200, res.body);
      seen.push(...res.body.data.map((s: { id: string }) => s.id));
      page = res.body.next_page ?? undefined;
    }
    expect(page).toBeUndefined();
    expect(seen).toEqual([euro.id, open.id, trial.id, gold.id]);
    expect((await search(key, 'created>0')).body).not.toHaveProperty('total_count');
  });

  test('each invoice is rendered as the list renders it, today and at an older version', async () => {
    for (const headers of [{}, { 'Stripe-Version': '2024-04-10' }] as Record<string, string>[]) {
      const listed = await get(key, '/v1/invoices?limit=100&expand[]=data.customer', headers);
      const searched = await search(key, 'created>0', '&limit=100&expand[]=data.customer', headers);
      expect(searched.status).toBe(200);
      expect(searched.body.data).toEqual(listed.body.data);
      expect(searched.body.data[0].customer).toMatchObject({ object: 'customer' });
    }
    // Before basil an invoice names its subscription at the top level.
    const old = await search(key, 'status:"open"', '', { 'Stripe-Version': '2024-04-10' });
    expect(old.body.data[0].subscription).toMatch(/^sub_/);
  });

  test('fields invoices do not have, and operators a field does not take, are the public 400', async () => {
    expectError(await search(key, 'amount_due>0'), 400, {
      type: 'invalid_request_error',
      param: 'query',
      message: 'Field `amount_due` is an unsupported search field for resource `invoices`. See http://stripe.com/docs/search#query-fields-for-invoices for a list of supported fields.',
    });
    expectError(await search(key, 'status~"pai"'), 400, { param: 'query', message: 'Field `status` does not support the `~` operator in a search for resource `invoices`.' });
    expectError(await search(key, 'total>"lots"'), 400, { param: 'query' });
    expectError(await search(key, 'number>"A"'), 400, { param: 'query' });
  });

  test('another key finds none of them', async () => {
    expect(await found(newTestKey(), 'created>0')).toEqual([]);
    expect(await found(newTestKey(), `customer:"${gold.customer}"`)).toEqual([]);
  });

  test('the official SDK pages through invoices.search', async () => {
    const stripe = t.stripe(key);
    const all: string[] = [];
    for await (const invoice of stripe.invoices.search({ query: 'currency:"usd"', limit: 2 })) all.push(invoice.id!);
    expect(all).toEqual([open.id, trial.id, gold.id]);
    const counted = await stripe.invoices.search({ query: 'total>=700', expand: ['total_count'] });
    expect(counted.total_count).toBe(3);
  });
});
