import Stripe from 'stripe';
import { newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { createAccount, createPrice, createProduct, form } from '../../helpers/fixtures';
import { expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../helpers/requests';
import { countPostgres } from '../../helpers/postgresCounts';

// Products end to end: the five operations through supertest and the official SDK, validation,
// the delete refused while prices exist, events in the change's transaction, and isolation
// between keys and under Stripe-Account.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get, del, eventsOf } = requestsOf(() => t);

const PR = '/v1/products';

describe('products', () => {
  test('create answers the public object with every field, and emits product.created', async () => {
    const key = newTestKey();
    const res = await post(key, PR, {
      name: 'T-shirt',
      description: 'Cotton',
      images: ['https://example.com/a.png'],
      marketing_features: [{ name: 'Soft' }],
      metadata: { sku: '1' },
      package_dimensions: { height: 1.5, length: 2, weight: 3, width: 4 },
      shippable: true,
      statement_descriptor: 'SHIRT',
      unit_label: 'shirt',
      url: 'https://example.com/shirt',
    });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostProducts', 200, res.body);
    expect(res.body).toMatchObject({
      object: 'product',
      active: true,
      default_price: null,
      description: 'Cotton',
      images: ['https://example.com/a.png'],
      livemode: false,
      marketing_features: [{ name: 'Soft' }],
      metadata: { sku: '1' },
      package_dimensions: { height: 1.5, length: 2, weight: 3, width: 4 },
      shippable: true,
      type: 'service',
      updated: res.body.created,
    });
    expect(res.body.id).toMatch(/^prod_/);
    const [event] = await eventsOf(key, 'product.created');
    expect(event.data.object).toEqual(res.body);
    expect((await get(key, `${PR}/${res.body.id}`)).body).toEqual(res.body);
  });

  test('name is required; unknown parameters and bad values are refused', async () => {
    const key = newTestKey();
    expectError(await post(key, PR, {}), 400, { code: 'parameter_missing', param: 'name' });
    expectError(await post(key, PR, { name: 'a', bogus: 1 }), 400, { code: 'parameter_unknown', param: 'bogus' });
    expectError(await post(key, PR, { name: 'a', statement_descriptor: 'x'.repeat(23) }), 400, { code: 'invalid_string_too_long', param: 'statement_descriptor' });
    expectError(await post(key, PR, { name: 'a', images: Array.from({ length: 9 }, (_, i) => `https://e.com/${i}`) }), 400, { param: 'images' });
    expectError(await post(key, PR, { name: 'a', package_dimensions: { height: 1 } }), 400, { code: 'parameter_missing' });
  });

  test('an update without a default price is one commit in 4 round trips (BEGIN, the locked read, one statement, COMMIT)', async () => {
    const key = newTestKey();
    const product = await createProduct(t, key, { description: 'old', metadata: { a: '1' } });
    const counted = await countPostgres(() => post(key, `${PR}/${product.id}`, 'name=New&description=&images[0]=http%3A%2F%2F127.0.0.1%3A0%2Fi.png&package_dimensions[height]=1&package_dimensions[length]=2&package_dimensions[weight]=3&package_dimensions[width]=4', { 'Idempotency-Key': `product-${product.id}` }));
    expect(counted.result.status).toBe(200);
    expect(counted.result.body).toMatchObject({ name: 'New', description: null, images: ['http://127.0.0.1:0/i.png'], package_dimensions: { height: 1, length: 2, weight: 3, width: 4 }, metadata: { a: '1' } });
    expect({ roundTrips: counted.roundTrips, commits: counted.commits, rollbacks: counted.rollbacks }).toEqual({ roundTrips: 4, commits: 1, rollbacks: 0 });
    const [event] = await eventsOf(key, 'product.updated');
    expect(event.data.object).toEqual(counted.result.body);
    expect((await get(key, `${PR}/${product.id}`)).body).toEqual(counted.result.body);
    const cleared = await post(key, `${PR}/${product.id}`, 'package_dimensions=&images=');
    expect(cleared.body).toMatchObject({ package_dimensions: null, images: [] });
    expectError(await post(newTestKey(), `${PR}/${product.id}`, { name: 'x' }), 404, { code: 'resource_missing' });
  });

  test('update changes fields, unsets with empty values, emits product.updated with previous_attributes; no change, no event', async () => {
    const key = newTestKey();
    const product = await createProduct(t, key, { description: 'old', metadata: { a: '1', b: '2' }, url: 'http://127.0.0.1:0/shop' });
    const res = await post(key, `${PR}/${product.id}`, 'name=New&description=&url=&metadata[a]=&metadata[c]=3&active=false');
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostProductsProduct', 200, res.body);
    expect(res.body).toMatchObject({ name: 'New', description: null, url: null, metadata: { b: '2', c: '3' }, active: false });
    const [event] = await eventsOf(key, 'product.updated');
    expect(event.data.object).toEqual(res.body);
    expect(event.data.previous_attributes).toMatchObject({ name: 'T-shirt', description: 'old', url: 'http://127.0.0.1:0/shop', metadata: { a: '1' }, active: true });
    const again = await post(key, `${PR}/${product.id}`, { name: 'New' });
    expect(again.body).toEqual(res.body);
    expect(await eventsOf(key, 'product.updated')).toHaveLength(1);
    expectError(await post(key, `${PR}/prod_nope`, { name: 'x' }), 404, { code: 'resource_missing', param: 'id', message: "No such product: 'prod_nope'" });
  });

  test('default_price must be an active price of the product, and expands', async () => {
    const key = newTestKey();
    const product = await createProduct(t, key);
    const price = await createPrice(t, key, { product: product.id });
    const other = await createPrice(t, key);
    expectError(await post(key, `${PR}/${product.id}`, { default_price: other.id }), 400, { param: 'default_price' });
    expectError(await post(key, `${PR}/${product.id}`, { default_price: 'price_nope' }), 400, { code: 'resource_missing', param: 'default_price' });
    const res = await post(key, `${PR}/${product.id}`, { default_price: price.id, expand: ['default_price'] });
    expect(res.status).toBe(200);
    expect(res.body.default_price).toMatchObject({ id: price.id, object: 'price' });
    expectMatchesResponseSchema('PostProductsProduct', 200, res.body);
  });

  test('default_price_data makes the first price with the product, in one transaction, with both events', async () => {
    const key = newTestKey();
    const res = await post(key, PR, {
      name: 'Pro',
      default_price_data: { currency: 'EUR', unit_amount: 1500, recurring: { interval: 'month', interval_count: 3 }, tax_behavior: 'exclusive', metadata: { plan: 'pro' } },
      expand: ['default_price'],
    });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostProducts', 200, res.body);
    const price = res.body.default_price;
    expect(price).toMatchObject({
      object: 'price',
      product: res.body.id,
      currency: 'eur',
      unit_amount: 1500,
      type: 'recurring',
      recurring: { interval: 'month', interval_count: 3 },
      tax_behavior: 'exclusive',
      metadata: { plan: 'pro' },
      active: true,
    });
    const [created] = await eventsOf(key, 'product.created');
    expect(created.data.object).toMatchObject({ id: res.body.id, default_price: price.id });
    const [priceCreated] = await eventsOf(key, 'price.created');
    expect(priceCreated.data.object).toMatchObject({ id: price.id, product: res.body.id });
    // The product now has a price, so it can't be deleted.
    expectError(await del(key, `${PR}/${res.body.id}`), 400, { message: 'This product cannot be deleted because it has one or more user-created prices.' });
  });

  test('default_price_data is checked like a price, with its parameters named inside it; a refused one makes nothing', async () => {
    const key = newTestKey();
    expectError(await post(key, PR, { name: 'X', default_price_data: { currency: 'usd' } }), 400, { code: 'parameter_missing', param: 'default_price_data[unit_amount]' });
    expectError(await post(key, PR, { name: 'X', default_price_data: { currency: 'usd', unit_amount: 1, unit_amount_decimal: '1' } }), 400, {
      param: 'default_price_data[unit_amount]',
    });
    expectError(await post(key, PR, { name: 'X', default_price_data: { currency: 'usd', unit_amount_decimal: '1.0000000000001' } }), 400, {
      param: 'default_price_data[unit_amount_decimal]',
    });
    expectError(await post(key, PR, { name: 'X', default_price_data: { currency: 'usd', unit_amount: 1, recurring: { interval: 'year', interval_count: 4 } } }), 400, {
      param: 'default_price_data[recurring][interval_count]',
    });
    expectError(await post(key, PR, { name: 'X', default_price_data: { currency: 'zzz', unit_amount: 1 } }), 400, { param: 'default_price_data[currency]' });
    expectError(await post(key, PR, { name: 'X', default_price_data: { currency: 'usd', unit_amount: 1, tiers_mode: 'volume' } }), 400, {
      code: 'parameter_unknown',
      param: 'default_price_data[tiers_mode]',
    });
    expect((await get(key, PR)).body.data).toEqual([]);
    expect(await eventsOf(key, 'product.created')).toEqual([]);
  });

  test('default_price_data through the official SDK', async () => {
    const stripe = t.stripe(newTestKey());
    const product = await stripe.products.create({ name: 'Basic', default_price_data: { currency: 'usd', unit_amount_decimal: Stripe.Decimal.from('999.5') }, expand: ['default_price'] });
    const price = product.default_price as Stripe.Price;
    expect(price.unit_amount).toBeNull();
    expect(String(price.unit_amount_decimal)).toBe('999.5');
    expect((await stripe.prices.retrieve(price.id)).product).toBe(product.id);
  });

  test('delete: refused while prices exist (as the public API), then answers the deleted object and emits product.deleted', async () => {
    const key = newTestKey();
    const withPrice = await createProduct(t, key);
    await createPrice(t, key, { product: withPrice.id });
    expectError(await del(key, `${PR}/${withPrice.id}`), 400, { type: 'invalid_request_error', message: 'This product cannot be deleted because it has one or more user-created prices.' });
    expect((await get(key, `${PR}/${withPrice.id}`)).status).toBe(200);
    const product = await createProduct(t, key);
    const res = await del(key, `${PR}/${product.id}`);
    expect(res.body).toEqual({ id: product.id, object: 'product', deleted: true });
    expect((await get(key, `${PR}/${product.id}`)).status).toBe(404);
    const [event] = await eventsOf(key, 'product.deleted');
    expect(event.data.object).toMatchObject({ id: product.id, object: 'product' });
    expectError(await del(key, `${PR}/${product.id}`), 404, { code: 'resource_missing' });
  });

  test('list filters: active, ids[], created, shippable, url', async () => {
    const key = newTestKey();
    const a = await createProduct(t, key, { shippable: true, url: 'https://a.example' });
    const b = await createProduct(t, key, { active: false });
    const c = await createProduct(t, key);
    const ids = async (query: string) => (await get(key, `${PR}?${query}`)).body.data.map((p: { id: string }) => p.id);
    expect(await ids('')).toEqual([c.id, b.id, a.id]);
    expect(await ids('active=false')).toEqual([b.id]);
    expect(await ids('active=true')).toEqual([c.id, a.id]);
    expect(await ids(form({ ids: [a.id, c.id, 'prod_nope'] }))).toEqual([c.id, a.id]);
    expect(await ids('shippable=true')).toEqual([a.id]);
    expect(await ids('url=https://a.example')).toEqual([a.id]);
    expect(await ids(`created[gte]=${a.created}`)).toHaveLength(3);
    expect(await ids(`created[lt]=${a.created}`)).toEqual([]);
  });

  test('through the official SDK: create, retrieve, update, list, del', async () => {
    const stripe = t.stripe(newTestKey());
    const product = await stripe.products.create({ name: 'Gold', metadata: { tier: 'gold' } });
    expect(product.object).toBe('product');
    expect((await stripe.products.retrieve(product.id)).name).toBe('Gold');
    expect((await stripe.products.update(product.id, { active: false })).active).toBe(false);
    expect((await stripe.products.list({ active: false })).data.map((p) => p.id)).toEqual([product.id]);
    expect(await stripe.products.del(product.id)).toMatchObject({ id: product.id, deleted: true });
    await expect(stripe.products.retrieve(product.id)).rejects.toMatchObject({ type: 'StripeInvalidRequestError', statusCode: 404 });
  });

  test('isolation: another key and a connected account see none of the products', async () => {
    const key = newTestKey();
    const product = await createProduct(t, key);
    const other = newTestKey();
    expect((await get(other, `${PR}/${product.id}`)).status).toBe(404);
    expect((await post(other, `${PR}/${product.id}`, { name: 'x' })).status).toBe(404);
    expect((await del(other, `${PR}/${product.id}`)).status).toBe(404);
    expect((await get(other, PR)).body.data).toEqual([]);
    const connected = (await createAccount(t, key)).id;
    const asConnected = { 'Stripe-Account': connected };
    expect((await get(key, `${PR}/${product.id}`, asConnected)).status).toBe(404);
    const own = await post(key, PR, { name: 'Connected' }, asConnected);
    expect(own.status).toBe(200);
    expect((await get(key, PR, asConnected)).body.data.map((p: { id: string }) => p.id)).toEqual([own.body.id]);
    expect((await get(key, PR)).body.data.map((p: { id: string }) => p.id)).toEqual([product.id]);
  });
});
