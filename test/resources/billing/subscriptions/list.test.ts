import { newTestKey, startTestApp, type TestApp } from '../../../helpers/app';
import { createCoupon, createSubscription, createTaxRate } from '../../../helpers/fixtures';
import { requestsOf } from '../../../helpers/requests';

// The list and the search load a page's subscriptions together (loadViews): each must come out
// as its own retrieve renders it, with its own items, tax rates, discounts and newer columns,
// none of another row's, at today's version and at one that shows discounts whole.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { get, post } = requestsOf(() => t);

describe('a page of differing subscriptions', () => {
  const key = newTestKey();
  const ids: string[] = [];
  beforeAll(async () => {
    const vat = (await createTaxRate(t, key, { percentage: 20, inclusive: false })).id;
    const included = (await createTaxRate(t, key, { percentage: 25, inclusive: true })).id;
    const coupon = async (percent: number) => (await createCoupon(t, key, { percent_off: percent, duration: 'forever' })).id;
    const taxed = await createSubscription(t, key, 2, { default_tax_rates: [vat], discounts: [{ coupon: await coupon(20) }] });
    // Its first item gets its own rate and discount; the second keeps the defaults.
    const first = taxed.items.data[0].id;
    expect((await post(key, `/v1/subscription_items/${first}`, { tax_rates: [included], discounts: [{ coupon: await coupon(10) }] })).status).toBe(200);
    expect((await post(key, `/v1/subscriptions/${taxed.id}`, { pause_collection: { behavior: 'void' } })).status).toBe(200);
    const saving = await createSubscription(t, key, 1, { payment_settings: { save_default_payment_method: 'on_subscription' }, metadata: { order: '7' } });
    const plain = await createSubscription(t, key, 3);
    ids.push(plain.id, saving.id, taxed.id);
  });

  test.each([{}, { 'Stripe-Version': '2024-04-10' }] as Record<string, string>[])('listed and searched as retrieved (%o)', async (headers) => {
    const one = await Promise.all(ids.map(async (id) => (await get(key, `/v1/subscriptions/${id}`, headers)).body));
    const listed = await get(key, '/v1/subscriptions?limit=10', headers);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual(one);
    const searched = await get(key, `/v1/subscriptions/search?query=${encodeURIComponent('status:"active"')}&limit=10`, headers);
    expect(searched.body.data).toEqual(one);
    // The rows differ as made: the page mixes nothing between them.
    expect(one.map((s) => s.items.data.length)).toEqual([3, 1, 2]);
    expect(one[2].pause_collection).toMatchObject({ behavior: 'void' });
    expect(one[0].pause_collection).toBeNull();
    expect(one[1].payment_settings).toMatchObject({ save_default_payment_method: 'on_subscription' });
    expect(one[2].items.data[0].tax_rates.map((r: { percentage: number }) => r.percentage)).toEqual([25]);
    expect(one[2].default_tax_rates.map((r: { percentage: number }) => r.percentage)).toEqual([20]);
    expect(one[0].default_tax_rates).toEqual([]);
    expect(one[2].discounts).toHaveLength(1);
    expect(one[0].discounts).toEqual([]);
    expect(one[2].items.data.map((i: { discounts: string[] }) => i.discounts.length)).toEqual([1, 0]);
    // The older version shows the subscription's discount whole, with its own coupon.
    if (headers['Stripe-Version']) {
      expect(one[2].discount).toMatchObject({ subscription: ids[2], coupon: { percent_off: 20 } });
      expect(one[0].discount).toBeNull();
    }
  });
});
