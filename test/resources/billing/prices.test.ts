import Stripe from 'stripe';
import { newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { createAccount, createPrice, createProduct, form } from '../../helpers/fixtures';
import { expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../helpers/requests';
import { countPostgres } from '../../helpers/postgresCounts';

// Prices end to end: create (product or product_data; unit_amount xor unit_amount_decimal;
// recurring; tiers; transform_quantity; tax_behavior; lookup keys), retrieve, update (never the
// amounts), list filters, events, expand, the official SDK, and isolation.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get, eventsOf } = requestsOf(() => t);

const PC = '/v1/prices';
const NEW_PRODUCT = { product_data: { name: 'Plan' } };

describe('POST /v1/prices', () => {
  test('a one-time price of a product: the public object, and price.created', async () => {
    const key = newTestKey();
    const product = await createProduct(t, key);
    const res = await post(key, PC, { product: product.id, currency: 'USD', unit_amount: 1999, nickname: 'Std', metadata: { a: '1' }, tax_behavior: 'exclusive' });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostPrices', 200, res.body);
    expect(res.body).toMatchObject({
      object: 'price',
      active: true,
      billing_scheme: 'per_unit',
      currency: 'usd',
      custom_unit_amount: null,
      livemode: false,
      lookup_key: null,
      nickname: 'Std',
      product: product.id,
      recurring: null,
      tax_behavior: 'exclusive',
      tiers_mode: null,
      transform_quantity: null,
      type: 'one_time',
      unit_amount: 1999,
      unit_amount_decimal: '1999',
    });
    expect(res.body).not.toHaveProperty('tiers');
    const [event] = await eventsOf(key, 'price.created');
    expect(event.data.object).toEqual(res.body);
  });

  test('product_data makes a product in the same transaction (product.created too); recurring defaults', async () => {
    const key = newTestKey();
    const res = await post(key, PC, { ...NEW_PRODUCT, currency: 'eur', unit_amount: 500, recurring: { interval: 'month' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ type: 'recurring', recurring: { interval: 'month', interval_count: 1, usage_type: 'licensed', meter: null, trial_period_days: null } });
    const product = (await get(key, `/v1/products/${res.body.product}`)).body;
    expect(product).toMatchObject({ name: 'Plan', object: 'product' });
    expect((await eventsOf(key, 'product.created')).map((e: any) => e.data.object.id)).toEqual([product.id]);
    const expanded = await get(key, `${PC}/${res.body.id}?expand[]=product`);
    expect(expanded.body.product).toEqual(product);
    expectMatchesResponseSchema('GetPricesPrice', 200, expanded.body);
  });

  test('unit_amount_decimal: at most 12 decimal places; whole decimals fill unit_amount', async () => {
    const key = newTestKey();
    const fine = await post(key, PC, { ...NEW_PRODUCT, currency: 'usd', unit_amount_decimal: '0.123456789012' });
    expect(fine.body).toMatchObject({ unit_amount: null, unit_amount_decimal: '0.123456789012' });
    const whole = await post(key, PC, { ...NEW_PRODUCT, currency: 'usd', unit_amount_decimal: '150.00' });
    expect(whole.body).toMatchObject({ unit_amount: 150, unit_amount_decimal: '150' });
    expectError(await post(key, PC, { ...NEW_PRODUCT, currency: 'usd', unit_amount_decimal: '0.1234567890123' }), 400, { param: 'unit_amount_decimal' });
    expectError(await post(key, PC, { ...NEW_PRODUCT, currency: 'usd', unit_amount_decimal: '1e5' }), 400, { param: 'unit_amount_decimal' });
    expectError(await post(key, PC, { ...NEW_PRODUCT, currency: 'usd', unit_amount: 1, unit_amount_decimal: '1' }), 400, { code: 'parameters_exclusive', param: 'unit_amount' });
    expectError(await post(key, PC, { ...NEW_PRODUCT, currency: 'usd' }), 400, { code: 'parameter_missing', param: 'unit_amount' });
    expectError(await post(key, PC, { ...NEW_PRODUCT, currency: 'usd', unit_amount: -1 }), 400, { param: 'unit_amount' });
    // Amounts past 2^31 fit (a BIGINT column).
    expect((await post(key, PC, { ...NEW_PRODUCT, currency: 'usd', unit_amount: 99999999999 })).body.unit_amount).toBe(99999999999);
  });

  test('product xor product_data; an unknown product; an unsupported currency', async () => {
    const key = newTestKey();
    const product = await createProduct(t, key);
    expectError(await post(key, PC, { ...NEW_PRODUCT, product: product.id, currency: 'usd', unit_amount: 1 }), 400, { code: 'parameters_exclusive' });
    expectError(await post(key, PC, { currency: 'usd', unit_amount: 1 }), 400, { code: 'parameter_missing', param: 'product' });
    expectError(await post(key, PC, { product: 'prod_nope', currency: 'usd', unit_amount: 1 }), 400, { code: 'resource_missing', param: 'product', message: "No such product: 'prod_nope'" });
    expectError(await post(key, PC, { product: product.id, currency: 'xyz', unit_amount: 1 }), 400, { param: 'currency' });
    expectError(await post(key, PC, { product: product.id, unit_amount: 1 }), 400, { code: 'parameter_missing', param: 'currency' });
  });

  test('recurring: interval required and checked, interval_count up to three years, usage_type', async () => {
    const key = newTestKey();
    const base = { ...NEW_PRODUCT, currency: 'usd', unit_amount: 100 };
    expect((await post(key, PC, { ...base, recurring: { interval: 'week', interval_count: 156, usage_type: 'metered' } })).body.recurring).toMatchObject({ interval_count: 156, usage_type: 'metered' });
    expectError(await post(key, PC, { ...base, recurring: { interval: 'week', interval_count: 157 } }), 400, { param: 'recurring[interval_count]' });
    expectError(await post(key, PC, { ...base, recurring: { interval: 'year', interval_count: 4 } }), 400, { param: 'recurring[interval_count]' });
    expectError(await post(key, PC, { ...base, recurring: { interval: 'fortnight' } }), 400, { param: 'recurring[interval]' });
    expectError(await post(key, PC, { ...base, recurring: { interval_count: 1 } }), 400, { code: 'parameter_missing', param: 'recurring[interval]' });
  });

  test('tiered prices: tiers and tiers_mode required, up_to ascending ending in inf; tiers shown only when expanded', async () => {
    const key = newTestKey();
    const base = { ...NEW_PRODUCT, currency: 'usd', billing_scheme: 'tiered', recurring: { interval: 'month' } };
    const tiers = [
      { up_to: 5, unit_amount: 1000 },
      { up_to: 10, unit_amount_decimal: '900.5', flat_amount: 100 },
      { up_to: 'inf', flat_amount_decimal: '0.5' },
    ];
    const res = await post(key, PC, { ...base, tiers_mode: 'graduated', tiers, expand: ['tiers'] });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostPrices', 200, res.body);
    expect(res.body).toMatchObject({ billing_scheme: 'tiered', tiers_mode: 'graduated', unit_amount: null, unit_amount_decimal: null });
    expect(res.body.tiers).toEqual([
      { flat_amount: null, flat_amount_decimal: null, unit_amount: 1000, unit_amount_decimal: '1000', up_to: 5 },
      { flat_amount: 100, flat_amount_decimal: '100', unit_amount: null, unit_amount_decimal: '900.5', up_to: 10 },
      { flat_amount: null, flat_amount_decimal: '0.5', unit_amount: null, unit_amount_decimal: null, up_to: null },
    ]);
    expect((await get(key, `${PC}/${res.body.id}`)).body).not.toHaveProperty('tiers');
    expect((await get(key, `${PC}/${res.body.id}?expand[]=tiers`)).body.tiers).toEqual(res.body.tiers);
    expect((await post(key, PC, { ...base, tiers_mode: 'volume', tiers: [{ up_to: 'inf', unit_amount: 1 }] })).status).toBe(200);
    expectError(await post(key, PC, { ...base, tiers }), 400, { code: 'parameter_missing', param: 'tiers_mode' });
    expectError(await post(key, PC, { ...base, tiers_mode: 'volume' }), 400, { code: 'parameter_missing', param: 'tiers' });
    expectError(await post(key, PC, { ...base, tiers_mode: 'volume', tiers: [{ up_to: 5, unit_amount: 1 }] }), 400, { param: 'tiers[0][up_to]' });
    expectError(await post(key, PC, { ...base, tiers_mode: 'volume', tiers: [{ up_to: 'inf', unit_amount: 1 }, { up_to: 'inf', unit_amount: 1 }] }), 400, { param: 'tiers[0][up_to]' });
    expectError(await post(key, PC, { ...base, tiers_mode: 'volume', tiers: [{ up_to: 5, unit_amount: 1 }, { up_to: 5, unit_amount: 1 }, { up_to: 'inf', unit_amount: 1 }] }), 400, { param: 'tiers[1][up_to]' });
    expectError(await post(key, PC, { ...base, tiers_mode: 'volume', tiers: [{ up_to: 'inf' }] }), 400, { param: 'tiers[0][unit_amount]' });
    expectError(await post(key, PC, { ...base, tiers_mode: 'volume', tiers: [{ up_to: 'inf', unit_amount: 1, unit_amount_decimal: '1' }] }), 400, { code: 'parameters_exclusive' });
    expectError(await post(key, PC, { ...base, tiers_mode: 'volume', tiers: [{ up_to: 'inf', unit_amount: 1 }], unit_amount: 5 }), 400, { param: 'unit_amount' });
    expectError(await post(key, PC, { ...NEW_PRODUCT, currency: 'usd', unit_amount: 1, tiers_mode: 'volume' }), 400, { param: 'tiers_mode' });
    expectError(await post(key, PC, { ...base, tiers_mode: 'stacked', tiers }), 400, { param: 'tiers_mode' });
  });

  test('transform_quantity (per-unit only) and tax_behavior values', async () => {
    const key = newTestKey();
    const res = await post(key, PC, { ...NEW_PRODUCT, currency: 'usd', unit_amount: 100, transform_quantity: { divide_by: 10, round: 'up' } });
    expect(res.body.transform_quantity).toEqual({ divide_by: 10, round: 'up' });
    expectError(await post(key, PC, { ...NEW_PRODUCT, currency: 'usd', unit_amount: 100, transform_quantity: { divide_by: 0, round: 'up' } }), 400, { param: 'transform_quantity[divide_by]' });
    expectError(await post(key, PC, { ...NEW_PRODUCT, currency: 'usd', unit_amount: 100, transform_quantity: { divide_by: 2, round: 'sideways' } }), 400, { param: 'transform_quantity[round]' });
    expectError(
      await post(key, PC, { ...NEW_PRODUCT, currency: 'usd', billing_scheme: 'tiered', tiers_mode: 'volume', tiers: [{ up_to: 'inf', unit_amount: 1 }], transform_quantity: { divide_by: 2, round: 'up' } }),
      400,
      { param: 'transform_quantity' },
    );
    expectError(await post(key, PC, { ...NEW_PRODUCT, currency: 'usd', unit_amount: 1, tax_behavior: 'maybe' }), 400, { param: 'tax_behavior' });
  });

  test('lookup_key: unique per account unless transferred (the old price loses it, with price.updated)', async () => {
    const key = newTestKey();
    const first = await createPrice(t, key, { lookup_key: 'gold' });
    expectError(await post(key, PC, { ...NEW_PRODUCT, currency: 'usd', unit_amount: 1, lookup_key: 'gold' }), 400, { param: 'lookup_key' });
    const second = await post(key, PC, { ...NEW_PRODUCT, currency: 'usd', unit_amount: 1, lookup_key: 'gold', transfer_lookup_key: true });
    expect(second.body.lookup_key).toBe('gold');
    expect((await get(key, `${PC}/${first.id}`)).body.lookup_key).toBeNull();
    const [updated] = await eventsOf(key, 'price.updated');
    expect(updated.data).toMatchObject({ object: { id: first.id, lookup_key: null }, previous_attributes: { lookup_key: 'gold' } });
    // Another account may use the same key.
    expect((await createPrice(t, newTestKey(), { lookup_key: 'gold' })).lookup_key).toBe('gold');
  });
});

describe('POST /v1/prices/{price}', () => {
  test('updates active, metadata, nickname, lookup_key and tax_behavior, with price.updated; amounts never change', async () => {
    const key = newTestKey();
    const price = await createPrice(t, key, { nickname: 'Old', metadata: { a: '1' } });
    const res = await post(key, `${PC}/${price.id}`, { active: false, nickname: '', metadata: { b: '2' }, lookup_key: 'basic', tax_behavior: 'inclusive' });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostPricesPrice', 200, res.body);
    expect(res.body).toMatchObject({ active: false, nickname: null, metadata: { a: '1', b: '2' }, lookup_key: 'basic', tax_behavior: 'inclusive', unit_amount: 1000 });
    const [event] = await eventsOf(key, 'price.updated');
    expect(event.data.previous_attributes).toEqual({ active: true, nickname: 'Old', metadata: { b: null }, lookup_key: null, tax_behavior: null });
    expectError(await post(key, `${PC}/${price.id}`, { tax_behavior: 'exclusive' }), 400, { param: 'tax_behavior' });
    expectError(await post(key, `${PC}/${price.id}`, { unit_amount: 5 }), 400, { code: 'parameter_unknown', param: 'unit_amount' });
    expectError(await post(key, `${PC}/${price.id}`, { currency: 'eur' }), 400, { code: 'parameter_unknown', param: 'currency' });
    // No change, no event.
    expect((await post(key, `${PC}/${price.id}`, { active: false })).status).toBe(200);
    expect(await eventsOf(key, 'price.updated')).toHaveLength(1);
    expectError(await post(key, `${PC}/price_nope`, { active: true }), 404, { code: 'resource_missing', message: "No such price: 'price_nope'" });
  });

  test('an update without a lookup key is one commit in 4 round trips (BEGIN, the locked read, one statement, COMMIT)', async () => {
    const key = newTestKey();
    const price = await createPrice(t, key, { nickname: 'Old', metadata: { a: '1' } });
    const counted = await countPostgres(() => post(key, `${PC}/${price.id}`, { nickname: 'New', metadata: { a: '' }, tax_behavior: 'exclusive' }, { 'Idempotency-Key': `price-${price.id}` }));
    expect(counted.result.status).toBe(200);
    expect(counted.result.body).toMatchObject({ nickname: 'New', metadata: {}, tax_behavior: 'exclusive' });
    expect({ roundTrips: counted.roundTrips, commits: counted.commits, rollbacks: counted.rollbacks }).toEqual({ roundTrips: 4, commits: 1, rollbacks: 0 });
    const [event] = await eventsOf(key, 'price.updated');
    expect(event.data.object).toEqual(counted.result.body);
    expect(event.data.previous_attributes).toEqual({ nickname: 'Old', metadata: { a: '1' }, tax_behavior: null });
    expect((await get(key, `${PC}/${price.id}`)).body).toEqual(counted.result.body);
    expectError(await post(newTestKey(), `${PC}/${price.id}`, { nickname: 'x' }), 404, { code: 'resource_missing' });
  });

  test('a lookup key held by another price needs transfer_lookup_key', async () => {
    const key = newTestKey();
    const holder = await createPrice(t, key, { lookup_key: 'pro' });
    const price = await createPrice(t, key);
    expectError(await post(key, `${PC}/${price.id}`, { lookup_key: 'pro' }), 400, { param: 'lookup_key' });
    expect((await post(key, `${PC}/${price.id}`, { lookup_key: 'pro', transfer_lookup_key: true })).body.lookup_key).toBe('pro');
    expect((await get(key, `${PC}/${holder.id}`)).body.lookup_key).toBeNull();
  });
});

describe('GET /v1/prices', () => {
  test('filters: active, currency, product, type, recurring[interval], lookup_keys[]', async () => {
    const key = newTestKey();
    const product = await createProduct(t, key);
    const a = await createPrice(t, key, { product: product.id, lookup_key: 'a' });
    const b = await createPrice(t, key, { currency: 'eur', recurring: { interval: 'year' }, lookup_key: 'b' });
    const c = await createPrice(t, key, { product: product.id, active: false, recurring: { interval: 'month' } });
    const ids = async (query: string) => (await get(key, `${PC}?${query}`)).body.data.map((p: { id: string }) => p.id);
    expect(await ids('')).toEqual([c.id, b.id, a.id]);
    expect(await ids('active=true')).toEqual([b.id, a.id]);
    expect(await ids('currency=eur')).toEqual([b.id]);
    expect(await ids(`product=${product.id}`)).toEqual([c.id, a.id]);
    expect(await ids('type=one_time')).toEqual([a.id]);
    expect(await ids('type=recurring')).toEqual([c.id, b.id]);
    expect(await ids('recurring[interval]=year')).toEqual([b.id]);
    expect(await ids(form({ lookup_keys: ['a', 'b', 'z'] }))).toEqual([b.id, a.id]);
    expectError(await get(key, `${PC}?${form({ lookup_keys: Array.from({ length: 11 }, (_, i) => `k${i}`) })}`), 400, { param: 'lookup_keys' });
    const expanded = await get(key, `${PC}?expand[]=data.product&product=${product.id}`);
    expect(expanded.body.data[0].product).toMatchObject({ id: product.id, object: 'product' });
    expectMatchesResponseSchema('GetPrices', 200, expanded.body);
  });
});

test('through the official SDK: create, retrieve, update, list', async () => {
  const stripe = t.stripe(newTestKey());
  const price = await stripe.prices.create({ product_data: { name: 'Silver' }, currency: 'usd', unit_amount: 700, recurring: { interval: 'month' } });
  expect(price.recurring?.interval).toBe('month');
  const retrieved = await stripe.prices.retrieve(price.id, { expand: ['product'] });
  expect((retrieved.product as { name: string }).name).toBe('Silver');
  expect((await stripe.prices.update(price.id, { nickname: 'Monthly' })).nickname).toBe('Monthly');
  expect((await stripe.prices.list({ type: 'recurring' })).data.map((p) => p.id)).toEqual([price.id]);
  const decimal = await stripe.prices.create({ product: retrieved.product && (retrieved.product as { id: string }).id, currency: 'usd', unit_amount_decimal: Stripe.Decimal.from('12.5') });
  expect(String(decimal.unit_amount_decimal)).toBe('12.5');
});

test('custom_unit_amount: a one-time price whose customer chooses the amount', async () => {
  const key = newTestKey();
  const res = await post(key, PC, { ...NEW_PRODUCT, currency: 'usd', custom_unit_amount: { enabled: true, minimum: 500, maximum: 5000, preset: 1000 } });
  expect(res.status).toBe(200);
  expectMatchesResponseSchema('PostPrices', 200, res.body);
  expect(res.body).toMatchObject({ custom_unit_amount: { minimum: 500, maximum: 5000, preset: 1000 }, unit_amount: null, unit_amount_decimal: null, type: 'one_time' });
  expect((await get(key, `${PC}/${res.body.id}`)).body.custom_unit_amount).toEqual({ minimum: 500, maximum: 5000, preset: 1000 });
  const bare = await post(key, PC, { ...NEW_PRODUCT, currency: 'usd', custom_unit_amount: { enabled: true } });
  expect(bare.body.custom_unit_amount).toEqual({ minimum: null, maximum: null, preset: null });

  const refused = (custom: Record<string, unknown>, extra: Record<string, unknown> = {}) => post(key, PC, { ...NEW_PRODUCT, currency: 'usd', custom_unit_amount: custom, ...extra });
  expectError(await refused({ enabled: true }, { unit_amount: 100 }), 400, { param: 'custom_unit_amount' });
  expectError(await refused({ enabled: false }), 400, { param: 'custom_unit_amount[enabled]' });
  expectError(await refused({ enabled: true }, { recurring: { interval: 'month' } }), 400, { param: 'custom_unit_amount' });
  expectError(await refused({ enabled: true, minimum: 10, maximum: 5 }), 400, { param: 'custom_unit_amount[minimum]' });
  expectError(await refused({ enabled: true, minimum: 10, preset: 5 }), 400, { param: 'custom_unit_amount[preset]' });
  expectError(await refused({ enabled: true, bogus: 1 }), 400, { code: 'parameter_unknown', param: 'custom_unit_amount[bogus]' });
  expectError(await refused({ enabled: true }, { billing_scheme: 'tiered', tiers_mode: 'volume', tiers: [{ up_to: 'inf', unit_amount: 1 }] }), 400, { param: 'custom_unit_amount' });

  const sdk = await t.stripe(key).prices.create({ product: res.body.product, currency: 'usd', custom_unit_amount: { enabled: true, preset: 2500 } });
  expect(sdk.custom_unit_amount).toEqual({ minimum: null, maximum: null, preset: 2500 });
});

test('isolation: another key and a connected account see none of the prices, nor use the products', async () => {
  const key = newTestKey();
  const price = await createPrice(t, key);
  const other = newTestKey();
  expect((await get(other, `${PC}/${price.id}`)).status).toBe(404);
  expect((await post(other, `${PC}/${price.id}`, { active: false })).status).toBe(404);
  expectError(await post(other, PC, { product: price.product, currency: 'usd', unit_amount: 1 }), 400, { code: 'resource_missing', param: 'product' });
  const connected = { 'Stripe-Account': (await createAccount(t, key)).id };
  expect((await get(key, `${PC}/${price.id}`, connected)).status).toBe(404);
  expect((await get(key, PC, connected)).body.data).toEqual([]);
  expect((await post(key, PC, { product: price.product, currency: 'usd', unit_amount: 1 }, connected)).status).toBe(400);
});
