import { newTestKey, startTestApp, type TestApp } from '../../../helpers/app';
import { createPrice, createProduct } from '../../../helpers/fixtures';
import { expectMatchesResponseSchema } from '../../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../../helpers/requests';

// GET /v1/prices/search end to end: its query fields (active, currency, lookup_key, metadata,
// product, type) against stored prices, pages and total_count, the answer rendered as the list
// renders it, the errors, the scope of a key, and the official SDK.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { get, post } = requestsOf(() => t);
/** Every price of the key: the public fields of prices have no `created`. */
const ALL = 'active:"true" OR active:"false"';
const SEARCH = '/v1/prices/search';
const search = (key: string, query: string, extra = '') => get(key, `${SEARCH}?query=${encodeURIComponent(query)}${extra}`);

async function found(key: string, query: string): Promise<string[]> {
  const res = await search(key, query, '&limit=100');
  expect(res.status).toBe(200);
  return res.body.data.map((p: { id: string }) => p.id);
}

describe('prices searched', () => {
  const key = newTestKey();
  let product: string;
  let once: Record<string, any>;
  let monthly: Record<string, any>;
  let euro: Record<string, any>;
  let archived: Record<string, any>;
  beforeAll(async () => {
    product = (await createProduct(t, key, { name: 'Gold' })).id;
    once = await createPrice(t, key, { product, lookup_key: 'gold_once', metadata: { tier: 'gold', order: '6735' } });
    monthly = await createPrice(t, key, { product, recurring: { interval: 'month' }, lookup_key: 'Gold_Monthly', metadata: { tier: 'gold' } });
    euro = await createPrice(t, key, { currency: 'eur', unit_amount: 900, recurring: { interval: 'year' }, metadata: { tier: 'silver' } });
    archived = await createPrice(t, key, {});
    expect((await post(key, `/v1/prices/${archived.id}`, { active: false })).body.active).toBe(false);
  });

  test('active, type, currency and product, exactly', async () => {
    expect(await found(key, 'active:"true"')).toEqual([euro.id, monthly.id, once.id]);
    expect(await found(key, "active:'false'")).toEqual([archived.id]);
    expect(await found(key, 'type:"recurring"')).toEqual([euro.id, monthly.id]);
    expect(await found(key, 'type:"one_time"')).toEqual([archived.id, once.id]);
    expect(await found(key, 'currency:"eur"')).toEqual([euro.id]);
    expect(await found(key, `product:"${product}"`)).toEqual([monthly.id, once.id]);
    expect(await found(key, 'type:"Recurring"')).toEqual([]);
  });

  test('lookup_key exactly without regard to case, and by substring', async () => {
    expect(await found(key, 'lookup_key:"gold_monthly"')).toEqual([monthly.id]);
    expect(await found(key, 'lookup_key~"GOLD"')).toEqual([monthly.id, once.id]);
    expect(await found(key, 'lookup_key~"_mon"')).toEqual([monthly.id]);
    // `_` is itself, not a wildcard.
    expect(await found(key, 'lookup_key~"d_o"')).toEqual([once.id]);
    expect(await found(key, 'lookup_key~"dxo"')).toEqual([]);
    expect(await found(key, 'lookup_key:null')).toEqual([archived.id, euro.id]);
  });

  test('metadata, negation, AND and OR', async () => {
    expect(await found(key, "metadata['tier']:'gold'")).toEqual([monthly.id, once.id]);
    expect(await found(key, "metadata['tier']:'gold' AND metadata['order']:'6735'")).toEqual([once.id]);
    expect(await found(key, "metadata['tier']:'silver' OR active:'false'")).toEqual([archived.id, euro.id]);
    expect(await found(key, "-metadata['tier']:'gold'")).toEqual([archived.id, euro.id]);
    expect(await found(key, '-type:"recurring" active:"true"')).toEqual([once.id]);
  });

  test('pages through next_page, newest first; total_count only when expanded', async () => {
    const seen: string[] = [];
    let page: string | undefined;
    for (let i = 0; i < 2; i++) {
      const res = await search(key, ALL, `&limit=2&expand[]=total_count${page ? `&page=${encodeURIComponent(page)}` : ''}`);
      expect(res.body).toMatchObject({ object: 'search_result', url: SEARCH, total_count: 4, has_more: i === 0 });
      expectMatchesResponseSchema('GetPricesSearch', 200, res.body);
      seen.push(...res.body.data.map((p: { id: string }) => p.id));
      page = res.body.next_page ?? undefined;
    }
    expect(page).toBeUndefined();
    expect(seen).toEqual([archived.id, euro.id, monthly.id, once.id]);
    expect((await search(key, ALL)).body).not.toHaveProperty('total_count');
  });

  test('each price is rendered as the list renders it, expansions included', async () => {
    const listed = await get(key, '/v1/prices?limit=100&expand[]=data.product');
    const searched = await search(key, ALL, '&limit=100&expand[]=data.product');
    expect(searched.body.data).toEqual(listed.body.data);
    expect(searched.body.data[0].product).toMatchObject({ object: 'product' });
  });

  test('fields prices do not have, and operators a field does not take, are the public 400', async () => {
    expectError(await search(key, 'unit_amount>100'), 400, {
      type: 'invalid_request_error',
      param: 'query',
      message: 'Field `unit_amount` is an unsupported search field for resource `prices`. See http://stripe.com/docs/search#query-fields-for-prices for a list of supported fields.',
    });
    expectError(await search(key, 'created>0'), 400, { param: 'query', message: expect.stringMatching(/^Field `created` is an unsupported search field for resource `prices`\./) });
    expectError(await search(key, 'currency~"eur"'), 400, { param: 'query' });
    expectError(await search(key, 'lookup_key~"go"'), 400, { param: 'query' });
  });

  test('another key finds none of them', async () => {
    expect(await found(newTestKey(), 'active:"true"')).toEqual([]);
    expect(await found(newTestKey(), `product:"${product}"`)).toEqual([]);
  });

  test('the official SDK pages through prices.search', async () => {
    const stripe = t.stripe(key);
    const all: string[] = [];
    for await (const price of stripe.prices.search({ query: 'active:"true"', limit: 2 })) all.push(price.id);
    expect(all).toEqual([euro.id, monthly.id, once.id]);
    expect((await stripe.prices.search({ query: 'type:"recurring"', expand: ['total_count'] })).total_count).toBe(2);
  });
});
