import { newTestKey, startTestApp, type TestApp } from '../../../helpers/app';
import { createProduct } from '../../../helpers/fixtures';
import { expectMatchesResponseSchema } from '../../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../../helpers/requests';

// GET /v1/products/search end to end: its query fields (active, description, metadata, name,
// shippable, url) against stored products, deleted ones never, pages and total_count, the answer
// rendered as the list renders it, the errors, the scope of a key, and the official SDK.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { get, del } = requestsOf(() => t);
/** Every product of the key: the public fields of products have no `created`. */
const ALL = 'active:"true" OR active:"false"';
const SEARCH = '/v1/products/search';
const search = (key: string, query: string, extra = '') => get(key, `${SEARCH}?query=${encodeURIComponent(query)}${extra}`);

async function found(key: string, query: string): Promise<string[]> {
  const res = await search(key, query, '&limit=100');
  expect(res.status).toBe(200);
  return res.body.data.map((p: { id: string }) => p.id);
}

describe('products searched', () => {
  const key = newTestKey();
  let gold: string;
  let silver: string;
  let bronze: string;
  beforeAll(async () => {
    gold = (await createProduct(t, key, { name: 'Gold Plan', description: 'The 100% best', url: 'http://127.0.0.1:0/gold', shippable: true, metadata: { tier: 'gold', order: '6735' } })).id;
    silver = (await createProduct(t, key, { name: 'Silver Plan', active: false, shippable: false, metadata: { tier: 'silver' } })).id;
    bronze = (await createProduct(t, key, { name: 'Bronze' })).id;
  });

  test('name and description exactly without regard to case, and by substring', async () => {
    expect(await found(key, 'name:"gold plan"')).toEqual([gold]);
    expect(await found(key, 'name:"Gold"')).toEqual([]);
    expect(await found(key, 'name~"PLAN"')).toEqual([silver, gold]);
    expect(await found(key, 'description~"100%"')).toEqual([gold]);
    expect(await found(key, 'description~"00%_"')).toEqual([]);
    expect(await found(key, 'description:null')).toEqual([bronze, silver]);
  });

  test('active, shippable and url', async () => {
    expect(await found(key, 'active:"true"')).toEqual([bronze, gold]);
    expect(await found(key, 'active:"false"')).toEqual([silver]);
    expect(await found(key, 'shippable:"true"')).toEqual([gold]);
    expect(await found(key, 'shippable:"false"')).toEqual([silver]);
    expect(await found(key, 'shippable:null')).toEqual([bronze]);
    expect(await found(key, 'url:"http://127.0.0.1:0/gold"')).toEqual([gold]);
    expect(await found(key, 'url~"/gold"')).toEqual([gold]);
  });

  test('metadata, negation, AND and OR', async () => {
    expect(await found(key, "metadata['tier']:'gold'")).toEqual([gold]);
    expect(await found(key, "metadata['tier']:null")).toEqual([bronze]);
    expect(await found(key, '-shippable:"true"')).toEqual([bronze, silver]);
    expect(await found(key, "metadata['tier']:'silver' OR name:'bronze'")).toEqual([bronze, silver]);
    expect(await found(key, 'name~"plan" AND active:"true"')).toEqual([gold]);
  });

  test('pages through next_page, newest first; total_count only when expanded', async () => {
    const seen: string[] = [];
    let page: string | undefined;
    for (let i = 0; i < 2; i++) {
      const res = await search(key, ALL, `&limit=2&expand[]=total_count${page ? `&page=${encodeURIComponent(page)}` : ''}`);
      expect(res.body).toMatchObject({ object: 'search_result', url: SEARCH, total_count: 3, has_more: i === 0 });
      expectMatchesResponseSchema('GetProductsSearch', 200, res.body);
      seen.push(...res.body.data.map((p: { id: string }) => p.id));
      page = res.body.next_page ?? undefined;
    }
    expect(page).toBeUndefined();
    expect(seen).toEqual([bronze, silver, gold]);
    expect((await search(key, ALL)).body).not.toHaveProperty('total_count');
  });

  test('each product is rendered as the list renders it; deleted ones are never found', async () => {
    const listed = await get(key, '/v1/products?limit=100');
    expect((await search(key, ALL, '&limit=100')).body.data).toEqual(listed.body.data);
    const gone = (await createProduct(t, key, { name: 'Gone soon' })).id;
    expect(await found(key, 'name:"gone soon"')).toEqual([gone]);
    await del(key, `/v1/products/${gone}`);
    expect(await found(key, 'name:"gone soon"')).toEqual([]);
  });

  test('fields products do not have, and operators a field does not take, are the public 400', async () => {
    expectError(await search(key, 'type:"service"'), 400, {
      type: 'invalid_request_error',
      param: 'query',
      message: 'Field `type` is an unsupported search field for resource `products`. See http://stripe.com/docs/search#query-fields-for-products for a list of supported fields.',
    });
    expectError(await search(key, 'created>0'), 400, { param: 'query', message: expect.stringMatching(/^Field `created` is an unsupported search field for resource `products`\./) });
    expectError(await search(key, 'active~"tru"'), 400, { param: 'query' });
    expectError(await search(key, 'name>"a"'), 400, { param: 'query' });
  });

  test('another key finds none of them', async () => {
    expect(await found(newTestKey(), 'name~"plan"')).toEqual([]);
  });

  test('the official SDK pages through products.search', async () => {
    const stripe = t.stripe(key);
    const all: string[] = [];
    for await (const product of stripe.products.search({ query: ALL, limit: 1 })) all.push(product.id);
    expect(all).toEqual([bronze, silver, gold]);
    expect((await stripe.products.search({ query: 'name~"plan"', expand: ['total_count'] })).total_count).toBe(2);
  });
});
