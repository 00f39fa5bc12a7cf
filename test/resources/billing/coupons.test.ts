import type Stripe from 'stripe';
import { unixSeconds } from '../../../src/lib/clock';
import { aheadClock, newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { createAccount, createCoupon, createProduct } from '../../helpers/fixtures';
import { expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../helpers/requests';
import { expectMatchesSdkTypes } from '../../helpers/sdkTypes';

// Coupons end to end: the five operations through supertest and the official SDK, every
// validation case, ids chosen or generated (one live coupon per id; a deleted coupon's id is free
// again), `valid` as time passes, events in the change's transaction, and isolation between keys
// and under Stripe-Account.

// The clock the app reads, moved forward to see coupons expire.
const clock = aheadClock();
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({}, { clock });
});
afterAll(() => t.close());
afterEach(() => {
  clock.aheadMs = 0;
});

const { post, get, del, eventsOf } = requestsOf(() => t);

const CP = '/v1/coupons';
const now = () => unixSeconds(clock);

describe('create', () => {
  test('an amount coupon with every field answers the public object and emits coupon.created', async () => {
    const key = newTestKey();
    const product = await createProduct(t, key);
    const redeemBy = now() + 3600;
    const res = await post(key, CP, {
      id: 'SUMMER-10',
      name: 'Summer',
      amount_off: 500,
      currency: 'USD',
      currency_options: { eur: { amount_off: 450 } },
      duration: 'repeating',
      duration_in_months: 3,
      max_redemptions: 100,
      redeem_by: redeemBy,
      applies_to: { products: [product.id] },
      metadata: { campaign: 'summer' },
    });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostCoupons', 200, res.body);
    expectMatchesSdkTypes(res.body);
    expect(res.body).toEqual({
      id: 'SUMMER-10',
      object: 'coupon',
      amount_off: 500,
      created: expect.any(Number),
      currency: 'usd',
      duration: 'repeating',
      duration_in_months: 3,
      livemode: false,
      max_redemptions: 100,
      metadata: { campaign: 'summer' },
      name: 'Summer',
      percent_off: null,
      redeem_by: redeemBy,
      times_redeemed: 0,
      valid: true,
    });
    const [event] = await eventsOf(key, 'coupon.created');
    expect(event.data.object).toEqual(res.body);
    expect((await get(key, `${CP}/SUMMER-10`)).body).toEqual(res.body);

    // applies_to and currency_options are shown only when expanded, as in the public API.
    const expanded = await get(key, `${CP}/SUMMER-10?expand[]=applies_to&expand[]=currency_options`);
    expect(expanded.body).toMatchObject({ applies_to: { products: [product.id] }, currency_options: { usd: { amount_off: 500 }, eur: { amount_off: 450 } } });
    expectMatchesResponseSchema('GetCouponsCoupon', 200, expanded.body);
    expectMatchesSdkTypes(expanded.body);
  });

  test('a percent coupon: an 8-character id is generated, duration is once, and nothing optional is shown when expanded', async () => {
    const key = newTestKey();
    const res = await post(key, CP, { percent_off: 12.5 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ percent_off: 12.5, amount_off: null, currency: null, duration: 'once', duration_in_months: null, name: null, valid: true });
    expect(res.body.id).toMatch(/^[A-Za-z0-9]{8}$/);
    // An empty id is no id.
    expect((await post(key, CP, { percent_off: 1, id: '' })).body.id).toMatch(/^[A-Za-z0-9]{8}$/);
    const expanded = await get(key, `${CP}/${res.body.id}?expand[]=applies_to&expand[]=currency_options`);
    expect(expanded.body).not.toHaveProperty('applies_to');
    expect(expanded.body).not.toHaveProperty('currency_options');
    expectMatchesSdkTypes(expanded.body);
    expect((await post(key, CP, { percent_off: 100, duration: 'forever' })).body).toMatchObject({ percent_off: 100, duration: 'forever' });
    expect((await post(key, CP, { percent_off: 0.01 })).body.percent_off).toBe(0.01);
  });

  test('the discount: percent_off xor amount_off with currency, percent_off above 0, at most 100, two decimals', async () => {
    const key = newTestKey();
    expectError(await post(key, CP, {}), 400, { code: 'parameter_missing', param: 'percent_off' });
    expectError(await post(key, CP, { percent_off: 10, amount_off: 100, currency: 'usd' }), 400, { code: 'parameters_exclusive' });
    expectError(await post(key, CP, { percent_off: 0 }), 400, { code: 'parameter_invalid', param: 'percent_off' });
    expectError(await post(key, CP, { percent_off: -5 }), 400, { code: 'parameter_invalid', param: 'percent_off' });
    expectError(await post(key, CP, { percent_off: 100.01 }), 400, { code: 'parameter_invalid', param: 'percent_off' });
    expectError(await post(key, CP, { percent_off: 12.345 }), 400, { code: 'parameter_invalid', param: 'percent_off' });
    expectError(await post(key, CP, { percent_off: 'lots' }), 400, { param: 'percent_off' });
    expectError(await post(key, CP, { percent_off: 10, currency: 'usd' }), 400, { code: 'parameter_invalid', param: 'currency' });
    expectError(await post(key, CP, { percent_off: 10, currency_options: { eur: { amount_off: 1 } } }), 400, { param: 'currency_options' });
    expectError(await post(key, CP, { amount_off: 100 }), 400, { code: 'parameter_missing', param: 'currency' });
    expectError(await post(key, CP, { amount_off: 100, currency: 'zzz' }), 400, { param: 'currency' });
    expectError(await post(key, CP, { amount_off: 0, currency: 'usd' }), 400, { code: 'parameter_invalid', param: 'amount_off' });
    expectError(await post(key, CP, { amount_off: 1.5, currency: 'usd' }), 400, { code: 'parameter_invalid_integer', param: 'amount_off' });
    expectError(await post(key, CP, { amount_off: 100, currency: 'usd', currency_options: { usd: { amount_off: 90 } } }), 400, { param: 'currency_options[usd]' });
    expectError(await post(key, CP, { amount_off: 100, currency: 'usd', currency_options: { xxx: { amount_off: 90 } } }), 400, { param: 'currency_options[xxx]' });
    expectError(await post(key, CP, { amount_off: 100, currency: 'usd', currency_options: { eur: { amount_off: -1 } } }), 400, { param: 'currency_options[eur][amount_off]' });
    expectError(await post(key, CP, 'amount_off=100&currency=usd&currency_options[eur][bogus]=1'), 400, { param: 'currency_options[eur][bogus]' });
  });

  test('duration, duration_in_months, max_redemptions, redeem_by, name, applies_to and unknown parameters', async () => {
    const key = newTestKey();
    expectError(await post(key, CP, { percent_off: 5, duration: 'repeating' }), 400, { code: 'parameter_missing', param: 'duration_in_months' });
    expectError(await post(key, CP, { percent_off: 5, duration: 'once', duration_in_months: 2 }), 400, { code: 'parameter_invalid', param: 'duration_in_months' });
    expectError(await post(key, CP, { percent_off: 5, duration: 'sometimes' }), 400, { param: 'duration', message: 'Invalid duration: must be one of forever, once, or repeating' });
    expectError(await post(key, CP, { percent_off: 5, duration: 'repeating', duration_in_months: 0 }), 400, { param: 'duration_in_months' });
    expectError(await post(key, CP, { percent_off: 5, max_redemptions: 0 }), 400, { param: 'max_redemptions' });
    expectError(await post(key, CP, { percent_off: 5, redeem_by: now() - 10 }), 400, { code: 'parameter_invalid', param: 'redeem_by' });
    expectError(await post(key, CP, { percent_off: 5, redeem_by: now() + 6 * 366 * 86400 }), 400, { code: 'parameter_invalid', param: 'redeem_by' });
    expectError(await post(key, CP, { percent_off: 5, name: 'x'.repeat(41) }), 400, { code: 'invalid_string_too_long', param: 'name' });
    expectError(await post(key, CP, { percent_off: 5, name: '' }), 400, { code: 'parameter_invalid_empty', param: 'name' });
    expectError(await post(key, CP, { percent_off: 5, bogus: 1 }), 400, { code: 'parameter_unknown', param: 'bogus' });
    expectError(await post(key, CP, { percent_off: 5, applies_to: { bogus: 1 } }), 400, { code: 'parameter_unknown', param: 'applies_to[bogus]' });
    const product = await createProduct(t, key);
    const others = await createProduct(t, newTestKey());
    expectError(await post(key, CP, { percent_off: 5, applies_to: { products: [product.id, others.id] } }), 400, {
      code: 'resource_missing',
      param: 'applies_to[products][1]',
      message: `No such product: '${others.id}'`,
    });
    expectError(await post(key, CP, { percent_off: 5, applies_to: { products: ['nope'] } }), 400, { code: 'resource_missing', param: 'applies_to[products][0]' });
    // Nothing was made by the refused requests.
    expect((await get(key, CP)).body.data).toEqual([]);
    // A product named twice is kept once.
    const made = await post(key, CP, { percent_off: 5, applies_to: { products: [product.id, product.id] }, expand: ['applies_to'] });
    expect(made.body.applies_to).toEqual({ products: [product.id] });
  });

  test('an id names one live coupon of the account: a second is resource_already_exists, also when both race', async () => {
    const key = newTestKey();
    await createCoupon(t, key, { id: 'TAKEN' });
    expectError(await post(key, CP, { id: 'TAKEN', percent_off: 10 }), 400, { code: 'resource_already_exists', param: 'id', message: 'Coupon already exists.' });
    // Ids are case-sensitive, and any string.
    expect((await post(key, CP, { id: 'taken', percent_off: 10 })).status).toBe(200);
    expect((await post(key, CP, { id: 'with space/and slash', percent_off: 10 })).status).toBe(200);
    expect((await get(key, `${CP}/${encodeURIComponent('with space/and slash')}`)).body.id).toBe('with space/and slash');

    const racers = await Promise.all(Array.from({ length: 6 }, () => post(key, CP, { id: 'RACE', percent_off: 10 })));
    expect(racers.map((r) => r.status).sort()).toEqual([200, 400, 400, 400, 400, 400]);
    expect((await get(key, CP)).body.data.filter((c: { id: string }) => c.id === 'RACE')).toHaveLength(1);
  });
});

describe('valid', () => {
  test('turns false once redeem_by has passed', async () => {
    const key = newTestKey();
    const coupon = await createCoupon(t, key, { redeem_by: now() + 60 });
    expect(coupon.valid).toBe(true);
    clock.aheadMs = 120_000;
    expect((await get(key, `${CP}/${coupon.id}`)).body.valid).toBe(false);
    expect((await get(key, CP)).body.data[0].valid).toBe(false);
  });
});

describe('update', () => {
  test('name and metadata change with coupon.updated and previous_attributes; no change, no event', async () => {
    const key = newTestKey();
    const coupon = await createCoupon(t, key, { name: 'Old', metadata: { a: '1', b: '2' } });
    const res = await post(key, `${CP}/${coupon.id}`, 'name=New&metadata[a]=&metadata[c]=3');
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostCouponsCoupon', 200, res.body);
    expect(res.body).toEqual({ ...coupon, name: 'New', metadata: { b: '2', c: '3' } });
    const [event] = await eventsOf(key, 'coupon.updated');
    expect(event.data.object).toEqual(res.body);
    expect(event.data.previous_attributes).toEqual({ name: 'Old', metadata: { a: '1', c: null } });
    expect((await post(key, `${CP}/${coupon.id}`, { name: 'New' })).body).toEqual(res.body);
    expect(await eventsOf(key, 'coupon.updated')).toHaveLength(1);
    expect((await post(key, `${CP}/${coupon.id}`, 'metadata=')).body.metadata).toEqual({});
  });

  test('currency_options of an amount coupon are added and changed; other fields are not parameters of update', async () => {
    const key = newTestKey();
    const coupon = await createCoupon(t, key, { amount_off: 1000, currency: 'usd', currency_options: { eur: { amount_off: 900 } } });
    const res = await post(key, `${CP}/${coupon.id}`, { currency_options: { eur: { amount_off: 950 }, GBP: { amount_off: 800 } }, expand: ['currency_options'] });
    expect(res.status).toBe(200);
    expect(res.body.currency_options).toEqual({ usd: { amount_off: 1000 }, eur: { amount_off: 950 }, gbp: { amount_off: 800 } });
    const [event] = await eventsOf(key, 'coupon.updated');
    expect(event.data.object).not.toHaveProperty('currency_options');
    expect(event.data.previous_attributes).toEqual({ currency_options: { eur: { amount_off: 900 }, gbp: null } });

    expectError(await post(key, `${CP}/${coupon.id}`, { currency_options: { usd: { amount_off: 1 } } }), 400, { param: 'currency_options[usd]' });
    const percent = await createCoupon(t, key);
    expectError(await post(key, `${CP}/${percent.id}`, { currency_options: { eur: { amount_off: 1 } } }), 400, { param: 'currency_options' });
    for (const [param, value] of Object.entries({ percent_off: 50, amount_off: 5, currency: 'eur', duration: 'forever', max_redemptions: 3, redeem_by: now() + 60, id: 'x' })) {
      expectError(await post(key, `${CP}/${coupon.id}`, { [param]: value }), 400, { code: 'parameter_unknown', param });
    }
    expectError(await post(key, `${CP}/${coupon.id}`, { name: '' }), 400, { code: 'parameter_invalid_empty', param: 'name' });
    expectError(await post(key, `${CP}/NOPE`, { name: 'x' }), 404, { code: 'resource_missing', param: 'id', message: "No such coupon: 'NOPE'" });
  });
});

describe('delete', () => {
  test('answers the deleted stub and emits coupon.deleted; the coupon leaves retrieve and lists, and its id is free again', async () => {
    const key = newTestKey();
    const coupon = await createCoupon(t, key, { id: 'GONE', name: 'First' });
    const res = await del(key, `${CP}/GONE`);
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('DeleteCouponsCoupon', 200, res.body);
    expectMatchesSdkTypes(res.body);
    expect(res.body).toEqual({ id: 'GONE', object: 'coupon', deleted: true });
    const [event] = await eventsOf(key, 'coupon.deleted');
    expect(event.data.object).toEqual({ ...coupon, valid: false });
    expectError(await get(key, `${CP}/GONE`), 404, { code: 'resource_missing' });
    expectError(await post(key, `${CP}/GONE`, { name: 'x' }), 404, { code: 'resource_missing' });
    expectError(await del(key, `${CP}/GONE`), 404, { code: 'resource_missing' });
    expect((await get(key, CP)).body.data).toEqual([]);

    const again = await createCoupon(t, key, { id: 'GONE', amount_off: 5, currency: 'eur' });
    expect((await get(key, `${CP}/GONE`)).body).toEqual(again);
    expect((await get(key, CP)).body.data.map((c: { id: string }) => c.id)).toEqual(['GONE']);
  });
});

describe('list', () => {
  test('newest first, created filters, deleted coupons left out, a deleted coupon is no cursor', async () => {
    const key = newTestKey();
    const a = await createCoupon(t, key);
    const b = await createCoupon(t, key);
    const c = await createCoupon(t, key);
    const ids = async (query: string) => (await get(key, `${CP}?${query}`)).body.data.map((x: { id: string }) => x.id);
    expect(await ids('')).toEqual([c.id, b.id, a.id]);
    expect(await ids(`starting_after=${c.id}&limit=1`)).toEqual([b.id]);
    expect(await ids(`created[gte]=${a.created}`)).toHaveLength(3);
    expect(await ids(`created[lt]=${a.created}`)).toEqual([]);
    await del(key, `${CP}/${b.id}`);
    expect(await ids('')).toEqual([c.id, a.id]);
    expectError(await get(key, `${CP}?starting_after=${b.id}`), 400, { code: 'resource_missing', param: 'starting_after' });
    expectMatchesResponseSchema('GetCoupons', 200, (await get(key, `${CP}?expand[]=data.applies_to`)).body);
  });
});

describe('odd ids in the path', () => {
  test('are a 404, never a database error', async () => {
    const key = newTestKey();
    for (const id of ['%00', 'a%00b', 'x'.repeat(5001), '%E2%98%83']) {
      expectError(await get(key, `${CP}/${id}`), 404, { code: 'resource_missing' });
      expectError(await del(key, `${CP}/${id}`), 404, { code: 'resource_missing' });
    }
  });
});

describe('through the official SDK', () => {
  test('create, retrieve, update, list, del', async () => {
    const stripe = t.stripe(newTestKey());
    const coupon = await stripe.coupons.create({ percent_off: 25, duration: 'repeating', duration_in_months: 3, name: 'Quarter' });
    expect(coupon).toMatchObject({ object: 'coupon', percent_off: 25, duration_in_months: 3 });
    const amount = await stripe.coupons.create({ id: 'FIVE', amount_off: 500, currency: 'usd', currency_options: { eur: { amount_off: 450 } } });
    expect((await stripe.coupons.retrieve('FIVE', { expand: ['currency_options'] })).currency_options?.eur).toEqual({ amount_off: 450 });
    expect((await stripe.coupons.update(coupon.id, { name: 'Renamed', metadata: { a: '1' } })).name).toBe('Renamed');
    const listed = await stripe.coupons.list({ limit: 1 }).autoPagingToArray({ limit: 10 });
    expect(listed.map((c) => c.id)).toEqual([amount.id, coupon.id]);
    expect(await stripe.coupons.del(coupon.id)).toEqual(expect.objectContaining({ id: coupon.id, deleted: true }));
    await expect(stripe.coupons.retrieve(coupon.id)).rejects.toMatchObject({ type: 'StripeInvalidRequestError', statusCode: 404 });
    const exists = await stripe.coupons.create({ id: 'FIVE', percent_off: 5 }).catch((err: Stripe.errors.StripeError) => err);
    expect(exists).toMatchObject({ type: 'StripeInvalidRequestError', code: 'resource_already_exists' });
  });
});

describe('isolation', () => {
  test('another key and a connected account see none of the coupons, and may use the same ids', async () => {
    const key = newTestKey();
    const coupon = await createCoupon(t, key, { id: 'SHARED' });
    const other = newTestKey();
    expect((await get(other, `${CP}/SHARED`)).status).toBe(404);
    expect((await post(other, `${CP}/SHARED`, { name: 'x' })).status).toBe(404);
    expect((await del(other, `${CP}/SHARED`)).status).toBe(404);
    expect((await get(other, CP)).body.data).toEqual([]);
    expect((await post(other, CP, { id: 'SHARED', percent_off: 1 })).status).toBe(200);

    const connected = (await createAccount(t, key)).id;
    const asConnected = { 'Stripe-Account': connected };
    expect((await get(key, `${CP}/SHARED`, asConnected)).status).toBe(404);
    const own = await post(key, CP, { id: 'SHARED', percent_off: 2 }, asConnected);
    expect(own.status).toBe(200);
    expect((await get(key, CP, asConnected)).body.data.map((c: { percent_off: number }) => c.percent_off)).toEqual([2]);
    expect((await get(key, `${CP}/SHARED`)).body).toEqual(coupon);
    // A product of another account can't be a coupon's.
    const foreign = await createProduct(t, key);
    expectError(await post(key, CP, { percent_off: 5, applies_to: { products: [foreign.id] } }, asConnected), 400, { code: 'resource_missing' });
  });
});
