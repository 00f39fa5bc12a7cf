import { newTestKey, startTestApp, type TestApp } from '../../../helpers/app';
import { createAccount, createCustomer } from '../../../helpers/fixtures';
import { expectMatchesResponseSchema } from '../../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../../helpers/requests';

// GET /v1/customers/search end to end: every query construct against stored customers (through
// PostgreSQL), pages and their tokens, total_count, expand, the errors, the scope of a key and of
// Stripe-Account, and the official SDK's `customers.search` with its auto-pagination.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { get, post, del } = requestsOf(() => t);
const SEARCH = '/v1/customers/search';

const search = (key: string, query: string, extra = '', headers?: Record<string, string>) => get(key, `${SEARCH}?query=${encodeURIComponent(query)}${extra}`, headers);

/** The ids a query finds, newest first. */
async function found(key: string, query: string): Promise<string[]> {
  const res = await search(key, query, '&limit=100');
  expect(res.status).toBe(200);
  return res.body.data.map((c: { id: string }) => c.id);
}

/** Customers made one after another (so seq orders them), with what the tests search. */
async function population(key: string) {
  const c = async (params: Record<string, unknown>) => (await createCustomer(t, key, params)).id;
  const jenny = await c({ email: 'Jenny.Rosen@example.com', name: 'Jenny Rosen', phone: '+14155550100', metadata: { order: '6735', tier: 'Gold' } });
  const amy = await c({ email: 'amy@rocketrides.io', name: 'Amy 100%_off', metadata: { order: '42' } });
  const bare = await c({});
  const quoted = await c({ name: 'say "hi"', email: 'quote@example.com' });
  return { jenny, amy, bare, quoted };
}

describe('the query language against stored customers', () => {
  let key: string;
  let ids: Awaited<ReturnType<typeof population>>;
  beforeAll(async () => {
    key = newTestKey();
    ids = await population(key);
  });

  test('exact match on a string field is case-insensitive, whole values only', async () => {
    expect(await found(key, 'email:"jenny.rosen@example.com"')).toEqual([ids.jenny]);
    expect(await found(key, "name:'JENNY ROSEN'")).toEqual([ids.jenny]);
    expect(await found(key, 'name:"Jenny"')).toEqual([]);
    expect(await found(key, 'phone:"+14155550100"')).toEqual([ids.jenny]);
    // `%` and `_` are themselves, not wildcards.
    expect(await found(key, 'name:"amy 100%_off"')).toEqual([ids.amy]);
    expect(await found(key, 'name:"Amy 100__off"')).toEqual([]);
    expect(await found(key, 'name:"Amy%"')).toEqual([]);
  });

  test('`~` finds substrings, case-insensitive, with `%` and `_` as themselves', async () => {
    expect(await found(key, 'email~"ROCKET"')).toEqual([ids.amy]);
    expect(await found(key, 'email~"example.com"')).toEqual([ids.quoted, ids.jenny]);
    expect(await found(key, 'name~"0%_"')).toEqual([ids.amy]);
    expect(await found(key, 'name~"y_R"')).toEqual([]);
    expect(await found(key, 'name~"\\"hi\\""')).toEqual([ids.quoted]);
  });

  test('numeric comparisons on created, quoted or not', async () => {
    const { body: jenny } = await get(key, `/v1/customers/${ids.jenny}`);
    const all = [ids.quoted, ids.bare, ids.amy, ids.jenny];
    expect(await found(key, `created>=${jenny.created}`)).toEqual(all);
    expect(await found(key, `created>"${jenny.created - 1}"`)).toEqual(all);
    expect(await found(key, `created<${jenny.created}`)).toEqual([]);
    expect(await found(key, `created<=${jenny.created + 100000}`)).toEqual(all);
    expect(await found(key, `created:${jenny.created - 5}`)).toEqual([]);
  });

  test('metadata by key, case-sensitive; null finds what lacks a value', async () => {
    expect(await found(key, "metadata['order']:'6735'")).toEqual([ids.jenny]);
    expect(await found(key, 'metadata["tier"]:"Gold"')).toEqual([ids.jenny]);
    expect(await found(key, 'metadata["tier"]:"gold"')).toEqual([]);
    expect(await found(key, 'metadata["order"]:null')).toEqual([ids.quoted, ids.bare]);
    expect(await found(key, '-metadata["order"]:null')).toEqual([ids.amy, ids.jenny]);
    expect(await found(key, 'email:null')).toEqual([ids.bare]);
    expect(await found(key, 'phone:null')).toEqual([ids.quoted, ids.bare, ids.amy]);
  });

  test('negation keeps the customers without the field; AND and OR combine', async () => {
    expect(await found(key, '-email:"amy@rocketrides.io"')).toEqual([ids.quoted, ids.bare, ids.jenny]);
    expect(await found(key, 'email~"example" AND -name:"Jenny Rosen"')).toEqual([ids.quoted]);
    expect(await found(key, 'email~"example" -name:"Jenny Rosen"')).toEqual([ids.quoted]);
    expect(await found(key, 'metadata["order"]:"42" OR phone:"+14155550100" or email:null')).toEqual([ids.bare, ids.amy, ids.jenny]);
  });

  test('deleted customers are never found', async () => {
    const gone = (await createCustomer(t, key, { email: 'gone@example.com' })).id;
    expect(await found(key, 'email:"gone@example.com"')).toEqual([gone]);
    await del(key, `/v1/customers/${gone}`);
    expect(await found(key, 'email:"gone@example.com"')).toEqual([]);
  });

  test('the answer is the public search_result, matching the declared schema', async () => {
    const res = await search(key, 'email~"example"');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ object: 'search_result', data: expect.any(Array), has_more: false, next_page: null, url: SEARCH });
    expect(res.body.data[0]).toMatchObject({ object: 'customer', id: ids.quoted });
    expectMatchesResponseSchema('GetCustomersSearch', 200, res.body);
  });
});

describe('pages', () => {
  test('limit and next_page walk every match once, newest first; total_count only when expanded', async () => {
    const key = newTestKey();
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await createCustomer(t, key, { email: `p${i}@example.com` })).id);
    await createCustomer(t, key, { email: 'other@elsewhere.io' });
    const seen: string[] = [];
    let page: string | undefined;
    for (let i = 0; i < 3; i++) {
      const res = await search(key, 'email~"example"', `&limit=2&expand[]=total_count${page ? `&page=${encodeURIComponent(page)}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.total_count).toBe(5);
      expectMatchesResponseSchema('GetCustomersSearch', 200, res.body);
      seen.push(...res.body.data.map((c: { id: string }) => c.id));
      expect(res.body.has_more).toBe(i < 2);
      page = res.body.next_page ?? undefined;
    }
    expect(page).toBeUndefined();
    expect(seen).toEqual([...made].reverse());
    expect((await search(key, 'email~"example"', '&limit=2')).body).not.toHaveProperty('total_count');
  });

  test("a page token works only for its own query and key; a tampered one is a 400 on page", async () => {
    const [a, b] = [newTestKey(), newTestKey()];
    for (const key of [a, b]) for (let i = 0; i < 2; i++) await createCustomer(t, key, { name: `Named ${i}` });
    const { next_page } = (await search(a, 'name~"Named"', '&limit=1')).body;
    expect(next_page).toEqual(expect.any(String));
    expect((await search(a, 'name~"Named"', `&limit=1&page=${encodeURIComponent(next_page)}`)).status).toBe(200);
    const flipped = next_page.slice(0, 30) + (next_page[30] === 'A' ? 'B' : 'A') + next_page.slice(31);
    for (const [key, query, page] of [
      [b, 'name~"Named"', next_page],
      [a, 'name~"Name"', next_page],
      [a, 'name~"Named"', flipped],
      [a, 'name~"Named"', 'cus_123'],
    ]) {
      expectError(await search(key, query, `&page=${encodeURIComponent(page)}`), 400, {
        type: 'invalid_request_error',
        param: 'page',
        message: 'Invalid page: it must be the `next_page` of an earlier search with the same query.',
      });
    }
  });

  test('expand[]=data.… expands each customer; other paths are refused', async () => {
    const key = newTestKey();
    await createCustomer(t, key, { email: 'x@example.com', payment_method: 'pm_card_visa', invoice_settings: { default_payment_method: 'pm_card_visa' } });
    const res = await search(key, 'email:"x@example.com"', '&expand[]=data.invoice_settings.default_payment_method');
    expect(res.status).toBe(200);
    expect(res.body.data[0].invoice_settings.default_payment_method).toMatchObject({ object: 'payment_method' });
    expectError(await search(key, 'email:"x@example.com"', '&expand[]=invoice_settings'), 400, { param: 'expand' });
    expectError(await search(key, 'email:"x@example.com"', '&expand[]=data.total_count'), 400, { param: 'expand' });
  });
});

describe('errors', () => {
  const PARSE =
    'We were unable to parse your search query. Try using the format `metadata["key"]:"value"` to query for metadata or key:"value" to query for other fields.';

  test.each([
    ['asdf', PARSE],
    ['email:"a" AND name:"b" OR phone:"c"', "We were unable to parse your search query. You can't combine AND and OR in the same query."],
    [Array.from({ length: 11 }, (_, i) => `created>${i}`).join(' OR '), 'We were unable to parse your search query. You can combine up to 10 query clauses in a search.'],
    ['foo:"bar"', 'Field `foo` is an unsupported search field for resource `customers`. See http://stripe.com/docs/search#query-fields-for-customers for a list of supported fields.'],
    ['description:"x"', 'Field `description` is an unsupported search field for resource `customers`. See http://stripe.com/docs/search#query-fields-for-customers for a list of supported fields.'],
    ['email~"ab"', 'We were unable to parse your search query. Substring matching (`~`) on `email` needs a value of at least 3 characters.'],
    ['email>"a"', 'Field `email` does not support the `>` operator in a search for resource `customers`.'],
    ['created>soon', 'We were unable to parse your search query. `created` is a numeric field: its value must be a number, not "soon".'],
  ])('%j is the 400 on query', async (query, message) => {
    const key = newTestKey();
    const res = await search(key, query);
    expectError(res, 400, { type: 'invalid_request_error', param: 'query', message });
    expectMatchesResponseSchema('GetCustomersSearch', 400, res.body);
  });

  test('query is required; limit is 1 to 100', async () => {
    const key = newTestKey();
    expectError(await get(key, SEARCH), 400, { type: 'invalid_request_error', param: 'query', message: 'Missing required param: query.' });
    expectError(await search(key, 'email:"a"', '&limit=0'), 400, { param: 'limit' });
    expectError(await search(key, 'email:"a"', '&limit=101'), 400, { param: 'limit' });
  });

  test('search is its own operation: never read as a customer id, by any method', async () => {
    const key = newTestKey();
    expect((await search(key, 'email:"a"')).body.object).toBe('search_result');
    const update = await post(key, SEARCH, { name: 'x' });
    expect(update.status).toBe(404);
    expect(update.body.error.message).not.toMatch(/No such customer/);
    expect((await del(key, SEARCH)).body.error.message).not.toMatch(/No such customer/);
  });
});

describe('scope', () => {
  test("one key never finds another's customers", async () => {
    const [a, b] = [newTestKey(), newTestKey()];
    const mine = (await createCustomer(t, a, { email: 'shared@example.com' })).id;
    const theirs = (await createCustomer(t, b, { email: 'shared@example.com' })).id;
    expect(await found(a, 'email:"shared@example.com"')).toEqual([mine]);
    expect(await found(b, 'email:"shared@example.com"')).toEqual([theirs]);
  });

  test('Stripe-Account searches the connected account’s customers only', async () => {
    const key = newTestKey();
    const connected = (await createAccount(t, key)).id;
    const as = { 'Stripe-Account': connected };
    const platform = (await createCustomer(t, key, { email: 'who@example.com' })).id;
    const res = await post(key, '/v1/customers', { email: 'who@example.com' }, as);
    expect(res.status).toBe(200);
    expect((await search(key, 'email:"who@example.com"', '', as)).body.data.map((c: { id: string }) => c.id)).toEqual([res.body.id]);
    expect(await found(key, 'email:"who@example.com"')).toEqual([platform]);
  });
});

describe('the official SDK', () => {
  test('customers.search answers the search result; auto-pagination yields every match once, newest first', async () => {
    const key = newTestKey();
    const stripe = t.stripe(key);
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await stripe.customers.create({ name: `SDK ${i}`, metadata: { batch: 'b1' } })).id);
    await stripe.customers.create({ name: 'Other', metadata: { batch: 'b2' } });
    const first = await stripe.customers.search({ query: "metadata['batch']:'b1'", limit: 2 });
    expect(first).toMatchObject({ object: 'search_result', has_more: true, url: SEARCH });
    expect(first.next_page).toEqual(expect.any(String));
    expect(first.data.map((c) => c.id)).toEqual([made[4], made[3]]);
    const all: string[] = [];
    for await (const customer of stripe.customers.search({ query: "metadata['batch']:'b1'", limit: 2 })) all.push(customer.id);
    expect(all).toEqual([...made].reverse());
    expect((await stripe.customers.search({ query: 'name~"SDK"', expand: ['total_count'] })).total_count).toBe(5);
  });

  test('a bad query raises StripeInvalidRequestError with the message and param', async () => {
    const stripe = t.stripe(newTestKey());
    await expect(stripe.customers.search({ query: 'foo:"bar"' })).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      statusCode: 400,
      param: 'query',
      message: expect.stringMatching(/^Field `foo` is an unsupported search field for resource `customers`\./),
    });
  });
});
