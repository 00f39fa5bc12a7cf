import type Stripe from 'stripe';
import { LATEST_API_VERSION } from '../../../src/kernel/versions';
import { unixSeconds } from '../../../src/lib/clock';
import { aheadClock, newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { createAccount, createCoupon, createCustomer, createPromotionCode } from '../../helpers/fixtures';
import { expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../helpers/requests';
import { expectMatchesSdkTypes } from '../../helpers/sdkTypes';

// Promotion codes end to end: the four operations through supertest and the official SDK, every
// validation case, codes unique among an account's active codes, `active` following the coupon
// and the clock, the coupon under `promotion` (newest versions) or whole as `coupon` (before
// 2025-09-30.clover), events in the change's transaction, and isolation.

// The clock the app reads, moved forward to see codes expire.
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

const PC = '/v1/promotion_codes';
const now = () => unixSeconds(clock);
const promotion = (coupon: string) => ({ type: 'coupon', coupon });
const OLD = { 'Stripe-Version': '2025-08-27.basil' };

describe('create', () => {
  test('with every field: the public object, promotion.coupon as the id, and promotion_code.created', async () => {
    const key = newTestKey();
    const coupon = await createCoupon(t, key, { redeem_by: now() + 7200, max_redemptions: 10 });
    const customer = await createCustomer(t, key);
    const expiresAt = now() + 3600;
    const res = await post(key, PC, {
      promotion: promotion(coupon.id),
      code: 'Summer-24',
      customer: customer.id,
      expires_at: expiresAt,
      max_redemptions: 5,
      restrictions: { first_time_transaction: true, minimum_amount: 2000, minimum_amount_currency: 'USD', currency_options: { eur: { minimum_amount: 1800 } } },
      metadata: { channel: 'mail' },
    });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostPromotionCodes', 200, res.body);
    expectMatchesSdkTypes(res.body);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^promo_[A-Za-z0-9]{24}$/),
      object: 'promotion_code',
      active: true,
      code: 'Summer-24',
      created: expect.any(Number),
      customer: customer.id,
      customer_account: null,
      expires_at: expiresAt,
      livemode: false,
      max_redemptions: 5,
      metadata: { channel: 'mail' },
      promotion: { coupon: coupon.id, type: 'coupon' },
      restrictions: { first_time_transaction: true, minimum_amount: 2000, minimum_amount_currency: 'usd' },
      times_redeemed: 0,
    });
    const [event] = await eventsOf(key, 'promotion_code.created');
    expect(event.data.object).toEqual(res.body);
    expect((await get(key, `${PC}/${res.body.id}`)).body).toEqual(res.body);

    const expanded = await get(key, `${PC}/${res.body.id}?expand[]=promotion.coupon&expand[]=customer&expand[]=restrictions.currency_options`);
    expect(expanded.body.promotion.coupon).toEqual(coupon);
    expect(expanded.body.customer).toMatchObject({ id: customer.id, object: 'customer' });
    expect(expanded.body.restrictions.currency_options).toEqual({ eur: { minimum_amount: 1800 } });
    expectMatchesResponseSchema('GetPromotionCodesPromotionCode', 200, expanded.body);
    expectMatchesSdkTypes(expanded.body);
    // The coupon's own expandable fields can be reached through it.
    const deeper = await get(key, `${PC}/${res.body.id}?expand[]=promotion.coupon.applies_to`);
    expect(deeper.status).toBe(200);
    expectError(await get(key, `${PC}/${res.body.id}?expand[]=promotion`), 400, { param: 'expand', message: 'This property cannot be expanded (promotion).' });
    expectError(await get(key, `${PC}/${res.body.id}?expand[]=coupon`), 400, { param: 'expand' });
  });

  test('a code is generated when absent (8 upper-case letters and digits); restrictions default to none', async () => {
    const key = newTestKey();
    const code = await createPromotionCode(t, key);
    expect(code.code).toMatch(/^[A-Z0-9]{8}$/);
    expect(code.restrictions).toEqual({ first_time_transaction: false, minimum_amount: null, minimum_amount_currency: null });
    const expanded = await get(key, `${PC}/${code.id}?expand[]=restrictions.currency_options`);
    expect(expanded.body.restrictions).not.toHaveProperty('currency_options');
    expectMatchesSdkTypes(expanded.body);
  });

  test('validation: the coupon, code, customer, expiry, redemptions and restrictions', async () => {
    const key = newTestKey();
    const coupon = await createCoupon(t, key, { redeem_by: now() + 600, max_redemptions: 3 });
    const ok = promotion(coupon.id);
    expectError(await post(key, PC, {}), 400, { code: 'parameter_missing', param: 'promotion' });
    expectError(await post(key, PC, { promotion: { type: 'coupon' } }), 400, { code: 'parameter_missing', param: 'promotion[coupon]' });
    expectError(await post(key, PC, { promotion: { coupon: coupon.id } }), 400, { code: 'parameter_missing', param: 'promotion[type]' });
    expectError(await post(key, PC, { promotion: { type: 'gift', coupon: coupon.id } }), 400, { param: 'promotion[type]', message: 'Invalid promotion[type]: must be one of coupon' });
    // `coupon` is what versions before 2025-09-30.clover take; later ones don't know it.
    expectError(await post(key, PC, { coupon: coupon.id }), 400, { code: 'parameter_unknown', param: 'coupon' });
    expectError(await post(key, PC, { promotion: promotion('NOPE') }), 400, { code: 'resource_missing', param: 'promotion[coupon]', message: "No such coupon: 'NOPE'" });
    expectError(await post(key, PC, { promotion: ok, code: 'has space' }), 400, { code: 'parameter_invalid', param: 'code' });
    expectError(await post(key, PC, { promotion: ok, code: 'x'.repeat(501) }), 400, { code: 'invalid_string_too_long', param: 'code' });
    expectError(await post(key, PC, { promotion: ok, customer: 'cus_nope' }), 400, { code: 'resource_missing', param: 'customer' });
    const gone = await createCustomer(t, key);
    await del(key, `/v1/customers/${gone.id}`);
    expectError(await post(key, PC, { promotion: ok, customer: gone.id }), 400, { code: 'resource_missing', param: 'customer' });
    expectError(await post(key, PC, { promotion: ok, expires_at: now() - 1 }), 400, { code: 'parameter_invalid', param: 'expires_at' });
    expectError(await post(key, PC, { promotion: ok, expires_at: now() + 601 }), 400, { code: 'parameter_invalid', param: 'expires_at' });
    expectError(await post(key, PC, { promotion: promotion((await createCoupon(t, key)).id), expires_at: 99999999999 }), 400, { code: 'parameter_invalid', param: 'expires_at' });
    expectError(await post(key, PC, { promotion: ok, max_redemptions: 4 }), 400, { code: 'parameter_invalid', param: 'max_redemptions' });
    expectError(await post(key, PC, { promotion: ok, max_redemptions: 0 }), 400, { param: 'max_redemptions' });
    expectError(await post(key, PC, { promotion: ok, restrictions: { minimum_amount: 100 } }), 400, { code: 'parameter_missing', param: 'restrictions[minimum_amount_currency]' });
    expectError(await post(key, PC, { promotion: ok, restrictions: { minimum_amount_currency: 'usd' } }), 400, { code: 'parameter_missing', param: 'restrictions[minimum_amount]' });
    expectError(await post(key, PC, { promotion: ok, restrictions: { currency_options: { eur: { minimum_amount: 1 } } } }), 400, { code: 'parameter_missing', param: 'restrictions[minimum_amount]' });
    expectError(await post(key, PC, { promotion: ok, restrictions: { minimum_amount: 100, minimum_amount_currency: 'xyz' } }), 400, { param: 'restrictions[minimum_amount_currency]' });
    const base = { minimum_amount: 100, minimum_amount_currency: 'usd' };
    expectError(await post(key, PC, { promotion: ok, restrictions: { ...base, currency_options: { USD: { minimum_amount: 1 } } } }), 400, { param: 'restrictions[currency_options][USD]' });
    expectError(await post(key, PC, { promotion: ok, restrictions: { ...base, bogus: 1 } }), 400, { code: 'parameter_unknown', param: 'restrictions[bogus]' });
    expectError(await post(key, PC, { promotion: ok, restrictions: { first_time_transaction: 'maybe' } }), 400, { param: 'restrictions[first_time_transaction]', message: 'Invalid boolean: maybe' });
    expectError(await post(key, PC, { promotion: ok, bogus: 1 }), 400, { code: 'parameter_unknown', param: 'bogus' });
    // Nothing was made by the refused requests.
    expect((await get(key, PC)).body.data).toEqual([]);

    // A coupon that is no longer valid takes no new codes; a deleted one is no coupon.
    clock.aheadMs = 700_000;
    expectError(await post(key, PC, { promotion: ok }), 400, { code: 'coupon_expired', param: 'promotion[coupon]' });
    clock.aheadMs = 0;
    await del(key, `/v1/coupons/${coupon.id}`);
    expectError(await post(key, PC, { promotion: ok }), 400, { code: 'resource_missing', param: 'promotion[coupon]' });
  });

  test('active codes of an account differ in any letter case; inactive ones may share a code; racing creates make one', async () => {
    const key = newTestKey();
    const coupon = (await createCoupon(t, key)).id;
    const first = await createPromotionCode(t, key, { coupon, code: 'WELCOME' });
    expectError(await post(key, PC, { promotion: promotion(coupon), code: 'welcome' }), 400, { code: 'resource_already_exists', param: 'code' });
    const other = (await createCoupon(t, key)).id;
    expectError(await post(key, PC, { promotion: promotion(other), code: 'Welcome' }), 400, { code: 'resource_already_exists' });
    const dormant = await post(key, PC, { promotion: promotion(coupon), code: 'welcome', active: false });
    expect(dormant.body).toMatchObject({ active: false, code: 'welcome' });
    // Once the first is off, the code is free; the dormant one can't come back while another holds it.
    await post(key, `${PC}/${first.id}`, { active: false });
    const second = await createPromotionCode(t, key, { coupon, code: 'WeLcOmE' });
    expectError(await post(key, `${PC}/${dormant.body.id}`, { active: true }), 400, { code: 'resource_already_exists', param: 'active' });
    expectError(await post(key, `${PC}/${first.id}`, { active: true }), 400, { code: 'resource_already_exists', param: 'active' });
    await post(key, `${PC}/${second.id}`, { active: false });
    expect((await post(key, `${PC}/${dormant.body.id}`, { active: true })).body.active).toBe(true);

    const racers = await Promise.all(Array.from({ length: 6 }, () => post(key, PC, { promotion: promotion(coupon), code: 'RACE' })));
    expect(racers.map((r) => r.status).sort()).toEqual([200, 400, 400, 400, 400, 400]);
    // Another account has codes of its own.
    expect((await createPromotionCode(t, newTestKey(), { code: 'WELCOME' })).code).toBe('WELCOME');
  });
});

describe('active', () => {
  test('follows the coupon (deleted, past redeem_by) and expires_at, in objects and the list filter; a code can only come back while redeemable', async () => {
    const key = newTestKey();
    const expiring = await createPromotionCode(t, key, { expires_at: now() + 60 });
    const couponEnds = await createCoupon(t, key, { redeem_by: now() + 600 });
    const ofEnding = await createPromotionCode(t, key, { coupon: couponEnds.id });
    const ofDeleted = await createPromotionCode(t, key);
    const steady = await createPromotionCode(t, key);
    const off = await post(key, `${PC}/${(await createPromotionCode(t, key)).id}`, { active: false });
    const activeIds = async (value: boolean) => (await get(key, `${PC}?active=${value}&limit=100`)).body.data.map((c: { id: string }) => c.id).sort();

    const deleted = await del(key, `/v1/coupons/${ofDeleted.promotion.coupon}`);
    expect(deleted.status).toBe(200);
    const after = await get(key, `${PC}/${ofDeleted.id}?expand[]=promotion.coupon`);
    expect(after.body.active).toBe(false);
    // The coupon it was made for, as it is now.
    expect(after.body.promotion.coupon).toMatchObject({ id: ofDeleted.promotion.coupon, valid: false });
    expect(await activeIds(true)).toEqual([expiring.id, ofEnding.id, steady.id].sort());
    expect(await activeIds(false)).toEqual([ofDeleted.id, off.body.id].sort());

    clock.aheadMs = 120_000;
    expect((await get(key, `${PC}/${expiring.id}`)).body.active).toBe(false);
    expect(await activeIds(true)).toEqual([ofEnding.id, steady.id].sort());
    clock.aheadMs = 700_000;
    expect(await activeIds(true)).toEqual([steady.id]);
    expect(await activeIds(false)).toEqual([expiring.id, ofEnding.id, ofDeleted.id, off.body.id].sort());

    for (const code of [expiring, ofEnding, ofDeleted]) {
      await post(key, `${PC}/${code.id}`, { active: false });
      expectError(await post(key, `${PC}/${code.id}`, { active: true }), 400, { param: 'active', message: expect.stringMatching(/can only be reactivated/) });
    }
    // An expired code no longer holds its code.
    expect((await createPromotionCode(t, key, { coupon: (await createCoupon(t, key)).id, code: expiring.code })).active).toBe(true);
  });
});

describe('update', () => {
  test('active, metadata and restrictions[currency_options] change with promotion_code.updated and previous_attributes; no change, no event', async () => {
    const key = newTestKey();
    const code = await createPromotionCode(t, key, { metadata: { a: '1' }, restrictions: { minimum_amount: 1000, minimum_amount_currency: 'usd' } });
    const res = await post(key, `${PC}/${code.id}`, { active: false, metadata: { a: '', b: '2' } });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostPromotionCodesPromotionCode', 200, res.body);
    expect(res.body).toEqual({ ...code, active: false, metadata: { b: '2' } });
    const [event] = await eventsOf(key, 'promotion_code.updated');
    expect(event.data.object).toEqual(res.body);
    expect(event.data.previous_attributes).toEqual({ active: true, metadata: { a: '1', b: null } });
    expect((await post(key, `${PC}/${code.id}`, { active: false })).body).toEqual(res.body);
    expect(await eventsOf(key, 'promotion_code.updated')).toHaveLength(1);

    const options = await post(key, `${PC}/${code.id}`, { restrictions: { currency_options: { eur: { minimum_amount: 900 } } }, expand: ['restrictions.currency_options'] });
    expect(options.body.restrictions.currency_options).toEqual({ eur: { minimum_amount: 900 } });
    const [latest] = await eventsOf(key, 'promotion_code.updated');
    expect(latest.data.previous_attributes).toEqual({ restrictions: { currency_options: { eur: null } } });
    expect(latest.data.object.restrictions).not.toHaveProperty('currency_options');
    expectError(await post(key, `${PC}/${code.id}`, { restrictions: { currency_options: { usd: { minimum_amount: 1 } } } }), 400, { param: 'restrictions[currency_options][usd]' });
    const plain = await createPromotionCode(t, key);
    expectError(await post(key, `${PC}/${plain.id}`, { restrictions: { currency_options: { eur: { minimum_amount: 1 } } } }), 400, { code: 'parameter_missing', param: 'restrictions[minimum_amount]' });

    for (const [param, value] of Object.entries({ code: 'NEW', customer: 'cus_x', expires_at: now() + 60, max_redemptions: 1, promotion: promotion('X'), coupon: 'X' })) {
      expectError(await post(key, `${PC}/${code.id}`, { [param]: value }), 400, { code: 'parameter_unknown' });
    }
    expectError(await post(key, `${PC}/${code.id}`, { restrictions: { minimum_amount: 5 } }), 400, { code: 'parameter_unknown', param: 'restrictions[minimum_amount]' });
    expectError(await post(key, `${PC}/promo_nope`, { active: false }), 404, { code: 'resource_missing', param: 'id', message: "No such promotion code: 'promo_nope'" });
    expectError(await get(key, `${PC}/nope`), 404, { code: 'resource_missing' });
  });
});

describe('list', () => {
  test('filters: code (any letter case), coupon, customer, created; expand on items', async () => {
    const key = newTestKey();
    const couponA = (await createCoupon(t, key)).id;
    const couponB = (await createCoupon(t, key)).id;
    const customer = (await createCustomer(t, key)).id;
    const a = await createPromotionCode(t, key, { coupon: couponA, code: 'ALPHA' });
    const b = await createPromotionCode(t, key, { coupon: couponB, customer });
    const c = await createPromotionCode(t, key, { coupon: couponB });
    const ids = async (query: string) => (await get(key, `${PC}?${query}`)).body.data.map((x: { id: string }) => x.id);
    expect(await ids('')).toEqual([c.id, b.id, a.id]);
    expect(await ids('code=alpha')).toEqual([a.id]);
    expect(await ids('code=alp')).toEqual([]);
    // The code is compared whole: no pattern characters.
    expect(await ids('code=%25')).toEqual([]);
    expect(await ids('code=AL_HA')).toEqual([]);
    expect(await ids(`coupon=${couponB}`)).toEqual([c.id, b.id]);
    expect(await ids(`customer=${customer}`)).toEqual([b.id]);
    expect(await ids(`created[gte]=${a.created}`)).toHaveLength(3);
    expect(await ids(`created[lt]=${a.created}`)).toEqual([]);
    const expanded = await get(key, `${PC}?expand[]=data.promotion.coupon&expand[]=data.customer`);
    expectMatchesResponseSchema('GetPromotionCodes', 200, expanded.body);
    expect(expanded.body.data.map((x: any) => x.promotion.coupon.id)).toEqual([couponB, couponB, couponA]);
    expect(expanded.body.data[1].customer).toMatchObject({ id: customer });
    expectError(await get(key, `${PC}?expand[]=promotion.coupon`), 400, { param: 'expand' });
  });
});

describe('before 2025-09-30.clover', () => {
  test('create takes `coupon`, and a code shows its coupon whole as `coupon`, without `promotion`', async () => {
    const key = newTestKey();
    const coupon = await createCoupon(t, key, { name: 'Old style' });
    const res = await post(key, PC, { coupon: coupon.id, code: 'OLDSTYLE' }, OLD);
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty('promotion');
    expect(res.body.coupon).toEqual(coupon);
    expect((await get(key, `${PC}/${res.body.id}`, OLD)).body.coupon).toEqual(coupon);
    expect((await get(key, `${PC}?coupon=${coupon.id}`, OLD)).body.data[0].coupon).toEqual(coupon);
    // The request pinned the account to that version; the newest shows `promotion`.
    expect((await get(key, `${PC}/${res.body.id}`, { 'Stripe-Version': LATEST_API_VERSION })).body.promotion).toEqual({ coupon: coupon.id, type: 'coupon' });
    // `promotion` works there too (a parameter added later); both at once is refused.
    expect((await post(key, PC, { promotion: promotion(coupon.id) }, OLD)).body.coupon).toEqual(coupon);
    expectError(await post(key, PC, { coupon: coupon.id, promotion: promotion(coupon.id) }, OLD), 400, { code: 'parameters_exclusive' });
    expectError(await post(key, PC, {}, OLD), 400, { code: 'parameter_missing', param: 'coupon' });
    expectError(await post(key, PC, { coupon: 'NOPE' }, OLD), 400, { code: 'resource_missing', param: 'coupon' });
  });

  test("an account pinned to an older version gets its events' codes with the coupon whole, as it was then", async () => {
    const key = newTestKey();
    await get(key, '/v1/account', OLD);
    const coupon = await createCoupon(t, key, { name: 'Then' });
    const code = await createPromotionCode(t, key, { coupon: coupon.id });
    expect(code.coupon).toEqual(coupon);
    await post(key, `/v1/coupons/${coupon.id}`, { name: 'Now' });
    await post(key, `${PC}/${code.id}`, { active: false });
    const [updated] = await eventsOf(key, 'promotion_code.updated');
    expect(updated.api_version).toBe('2025-08-27.basil');
    expect(updated.data.object).not.toHaveProperty('promotion');
    expect(updated.data.object.coupon).toEqual({ ...coupon, name: 'Now' });
    expect(updated.data.previous_attributes).toEqual({ active: true });
    const [created] = await eventsOf(key, 'promotion_code.created');
    expect(created.data.object.coupon).toEqual(coupon);
  });
});

describe('through the official SDK', () => {
  test('create, retrieve with expand, update, list', async () => {
    const stripe = t.stripe(newTestKey());
    const coupon = await stripe.coupons.create({ percent_off: 20 });
    const code = await stripe.promotionCodes.create({ promotion: { type: 'coupon', coupon: coupon.id }, code: 'SDK20', restrictions: { minimum_amount: 500, minimum_amount_currency: 'usd' } });
    expect(code).toMatchObject({ object: 'promotion_code', code: 'SDK20', promotion: { type: 'coupon', coupon: coupon.id } });
    const expanded = await stripe.promotionCodes.retrieve(code.id, { expand: ['promotion.coupon'] });
    expect((expanded.promotion.coupon as Stripe.Coupon).percent_off).toBe(20);
    expect((await stripe.promotionCodes.update(code.id, { active: false, metadata: { a: '1' } })).active).toBe(false);
    await stripe.promotionCodes.create({ promotion: { type: 'coupon', coupon: coupon.id } });
    const all = await stripe.promotionCodes.list({ limit: 1, coupon: coupon.id }).autoPagingToArray({ limit: 10 });
    expect(all).toHaveLength(2);
    expect((await stripe.promotionCodes.list({ code: 'sdk20' })).data.map((c) => c.id)).toEqual([code.id]);
    const missing = await stripe.promotionCodes.create({ promotion: { type: 'coupon', coupon: 'NOPE' } }).catch((err: Stripe.errors.StripeError) => err);
    expect(missing).toMatchObject({ type: 'StripeInvalidRequestError', code: 'resource_missing', param: 'promotion[coupon]' });
  });

  test('an SDK pinned to an older version creates with `coupon` and reads it whole', async () => {
    const stripe = t.stripe(newTestKey(), { apiVersion: '2025-08-27.basil' as Stripe.LatestApiVersion });
    const coupon = await stripe.coupons.create({ amount_off: 300, currency: 'eur' });
    const code = (await stripe.promotionCodes.create({ coupon: coupon.id } as unknown as Stripe.PromotionCodeCreateParams)) as unknown as { id: string; coupon: Stripe.Coupon };
    expect(code.coupon).toMatchObject({ id: coupon.id, amount_off: 300, currency: 'eur' });
    expect(((await stripe.promotionCodes.retrieve(code.id)) as unknown as { coupon: Stripe.Coupon }).coupon.id).toBe(coupon.id);
  });
});

describe('isolation', () => {
  test("another key sees none of the codes; a connected account can't use its platform's coupons or customers", async () => {
    const key = newTestKey();
    const code = await createPromotionCode(t, key);
    const other = newTestKey();
    expect((await get(other, `${PC}/${code.id}`)).status).toBe(404);
    expect((await post(other, `${PC}/${code.id}`, { active: false })).status).toBe(404);
    expect((await get(other, PC)).body.data).toEqual([]);
    expectError(await post(other, PC, { promotion: promotion(code.promotion.coupon) }), 400, { code: 'resource_missing' });

    const connected = (await createAccount(t, key)).id;
    const asConnected = { 'Stripe-Account': connected };
    expect((await get(key, `${PC}/${code.id}`, asConnected)).status).toBe(404);
    expectError(await post(key, PC, { promotion: promotion(code.promotion.coupon) }, asConnected), 400, { code: 'resource_missing', param: 'promotion[coupon]' });
    const customer = await createCustomer(t, key);
    const own = await post(key, '/v1/coupons', { percent_off: 5 }, asConnected);
    expectError(await post(key, PC, { promotion: promotion(own.body.id), customer: customer.id }, asConnected), 400, { code: 'resource_missing', param: 'customer' });
    const made = await post(key, PC, { promotion: promotion(own.body.id) }, asConnected);
    expect(made.status).toBe(200);
    expect((await get(key, PC, asConnected)).body.data.map((c: { id: string }) => c.id)).toEqual([made.body.id]);
    expect((await get(key, PC)).body.data.map((c: { id: string }) => c.id)).toEqual([code.id]);
  });
});
