import type Stripe from 'stripe';
import { newTestKey, startTestApp, type TestApp } from '../../../helpers/app';
import { createAccount, createPrice } from '../../../helpers/fixtures';
import { payingCustomer, recurringPrice } from '../../../helpers/billing';
import { expectError, requestsOf } from '../../../helpers/requests';
import { expectMatchesSdkTypes } from '../../../helpers/sdkTypes';

// Subscription items and the subscription's own operations: add, update, delete, list; updates
// with items by id and `deleted`; cancel with prorate and invoice_now; events with only what
// changed; isolation between keys and under Stripe-Account.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get, del, eventsOf } = requestsOf(() => t);

async function subscribed(key: string, headers: Record<string, string> = {}) {
  const customer = await payingCustomer(t, key);
  const price = await recurringPrice(t, key, 1000);
  const res = await post(key, '/v1/subscriptions', { customer: customer.id, items: [{ price: price.id, quantity: 2 }] }, headers);
  expect(res.status).toBe(200);
  return { customer, price, sub: res.body, item: res.body.items.data[0] };
}

describe('subscription items', () => {
  test('adding an item leaves the others as they were; a price change sets quantity 1; delete answers the stub', async () => {
    const key = newTestKey();
    const { sub, item } = await subscribed(key);
    const silver = await recurringPrice(t, key, 500, 'Silver');
    const added = await post(key, '/v1/subscription_items', { subscription: sub.id, price: silver.id, quantity: 3, metadata: { a: '1' } });
    expect(added.status).toBe(200);
    expect(added.body).toMatchObject({ object: 'subscription_item', subscription: sub.id, quantity: 3, metadata: { a: '1' }, current_period_end: item.current_period_end });
    expect((await get(key, `/v1/subscription_items/${item.id}`)).body).toEqual(item);
    const listed = await get(key, `/v1/subscription_items?subscription=${sub.id}`);
    expect(listed.body.data.map((i: any) => i.id)).toEqual([added.body.id, item.id]);

    const bronze = await recurringPrice(t, key, 700, 'Bronze');
    const changed = await post(key, `/v1/subscription_items/${item.id}`, { price: bronze.id });
    expect(changed.body).toMatchObject({ quantity: 1, price: { id: bronze.id } });
    const deleted = await del(key, `/v1/subscription_items/${added.body.id}`);
    expect(deleted.body).toEqual({ id: added.body.id, object: 'subscription_item', deleted: true });
    expectError(await get(key, `/v1/subscription_items/${added.body.id}`), 404, { code: 'resource_missing' });
    expect((await get(key, `/v1/subscriptions/${sub.id}`)).body.items.data.map((i: any) => i.id)).toEqual([item.id]);
  });

  test('the public refusals: a one-time price, a price already on the subscription, another currency, no subscription', async () => {
    const key = newTestKey();
    const { sub, price } = await subscribed(key);
    const oneTime = await createPrice(t, key);
    expectError(await post(key, '/v1/subscription_items', { subscription: sub.id, price: oneTime.id }), 400, {
      message: 'The price specified is set to `type=one_time` but this field only accepts prices with `type=recurring`.',
      param: 'price',
    });
    expectError(await post(key, '/v1/subscription_items', { subscription: sub.id, price: price.id }), 400, { message: `Cannot add multiple subscription items with the same price: ${price.id}` });
    const euro = await recurringPrice(t, key, 500, 'Euro', { currency: 'eur' });
    expectError(await post(key, '/v1/subscription_items', { subscription: sub.id, price: euro.id }), 400, { code: 'parameter_invalid' });
    expectError(await post(key, '/v1/subscription_items', { price: price.id }), 400, { code: 'parameter_missing', param: 'subscription' });
    expectError(await get(key, '/v1/subscription_items'), 400, { code: 'parameter_missing', param: 'subscription' });
  });

  test('through the official SDK', async () => {
    const key = newTestKey();
    const stripe: Stripe = t.stripe(key);
    const { sub, item } = await subscribed(key);
    const price = await stripe.prices.create({ product_data: { name: 'Extra' }, currency: 'usd', unit_amount: 300, recurring: { interval: 'month' } });
    const added = await stripe.subscriptionItems.create({ subscription: sub.id, price: price.id, proration_behavior: 'none' });
    expectMatchesSdkTypes(added);
    const updated = await stripe.subscriptionItems.update(item.id, { quantity: 5 });
    expect(updated.quantity).toBe(5);
    const all = await stripe.subscriptionItems.list({ subscription: sub.id }).autoPagingToArray({ limit: 10 });
    expect(all.map((i) => i.id).sort()).toEqual([added.id, item.id].sort());
    expect((await stripe.subscriptionItems.del(added.id)).deleted).toBe(true);
  });
});

describe('subscriptions', () => {
  test('update by items[][id] with deleted, and customer.subscription.updated holding only what changed', async () => {
    const key = newTestKey();
    const { sub, item } = await subscribed(key);
    const silver = await recurringPrice(t, key, 500, 'Silver');
    const res = await post(key, `/v1/subscriptions/${sub.id}`, { items: [{ id: item.id, deleted: true }, { price: silver.id }], proration_behavior: 'none' });
    expect(res.status).toBe(200);
    expect(res.body.items.data.map((i: any) => i.price.id)).toEqual([silver.id]);
    await post(key, `/v1/subscriptions/${sub.id}`, { metadata: { tier: 'silver' }, description: 'Silver plan' });
    const [latest] = await eventsOf(key, 'customer.subscription.updated');
    expect(latest.data.previous_attributes).toEqual({ metadata: { tier: null }, description: null });
    // Nothing changed, no event.
    await post(key, `/v1/subscriptions/${sub.id}`, { metadata: { tier: 'silver' } });
    expect((await eventsOf(key, 'customer.subscription.updated'))[0].id).toBe(latest.id);
  });

  test('cancel_at_period_end shows cancel_at; DELETE with prorate and invoice_now credits the unused time in a final invoice', async () => {
    const key = newTestKey();
    const { sub } = await subscribed(key);
    const res = await post(key, `/v1/subscriptions/${sub.id}`, { cancel_at_period_end: true });
    expect(res.body).toMatchObject({ cancel_at_period_end: true, cancel_at: sub.items.data[0].current_period_end });
    expect((await post(key, `/v1/subscriptions/${sub.id}`, { cancellation_details: { comment: 'Too pricey', feedback: 'too_expensive' } })).body.cancellation_details).toEqual({
      comment: 'Too pricey',
      feedback: 'too_expensive',
      feedback_option: null,
      reason: null,
    });
    const canceled = await del(key, `/v1/subscriptions/${sub.id}?prorate=true&invoice_now=true`);
    expect(canceled.body).toMatchObject({ status: 'canceled', cancellation_details: { reason: 'cancellation_requested' } });
    expect(canceled.body.ended_at).not.toBeNull();
    const invoice = (await get(key, `/v1/invoices/${canceled.body.latest_invoice}`)).body;
    expect(invoice.lines.data).toHaveLength(1);
    expect(invoice.lines.data[0].amount).toBeLessThan(0);
    expect(invoice.lines.data[0].amount).toBeGreaterThanOrEqual(-2000);
    expect(invoice).toMatchObject({ amount_due: 0, status: 'paid' });
    expect((await eventsOf(key, 'customer.subscription.deleted')).length).toBe(1);
    expect((await get(key, '/v1/subscriptions')).body.data).toEqual([]);
    expect((await get(key, '/v1/subscriptions?status=canceled')).body.data.map((s: any) => s.id)).toEqual([sub.id]);
    expectError(await post(key, `/v1/subscriptions/${sub.id}`, { items: [{ id: sub.items.data[0].id, quantity: 3 }] }), 400, {});
    expectError(await del(key, `/v1/subscriptions/${sub.id}`), 400, {});
  });

  test('lists filter by customer, price and status', async () => {
    const key = newTestKey();
    const a = await subscribed(key);
    const b = await subscribed(key);
    expect((await get(key, `/v1/subscriptions?customer=${a.customer.id}`)).body.data.map((s: any) => s.id)).toEqual([a.sub.id]);
    expect((await get(key, `/v1/subscriptions?price=${b.price.id}`)).body.data.map((s: any) => s.id)).toEqual([b.sub.id]);
    expect((await get(key, '/v1/subscriptions?status=active')).body.data).toHaveLength(2);
    expect((await get(key, '/v1/subscriptions?status=past_due')).body.data).toHaveLength(0);
    expect((await get(key, `/v1/invoices?subscription=${a.sub.id}`)).body.data.map((i: any) => i.id)).toEqual([a.sub.latest_invoice]);
  });
});

describe('isolation', () => {
  test("one key never sees another's subscriptions, items, invoices or invoice items; Stripe-Account acts as the connected account, both ways", async () => {
    const [a, b] = [newTestKey(), newTestKey()];
    const { sub, item } = await subscribed(a);
    await post(a, `/v1/subscription_items/${item.id}`, { quantity: 3 });
    const ii = (await get(a, '/v1/invoiceitems')).body.data[0].id;
    for (const path of [`/v1/subscriptions/${sub.id}`, `/v1/subscription_items/${item.id}`, `/v1/invoices/${sub.latest_invoice}`, `/v1/invoices/${sub.latest_invoice}/lines`, `/v1/invoiceitems/${ii}`]) {
      expect((await get(b, path)).status).toBe(404);
    }
    expect((await post(b, `/v1/subscriptions/${sub.id}`, { metadata: { x: '1' } })).status).toBe(404);
    expect((await post(b, `/v1/subscription_items/${item.id}`, { quantity: 1 })).status).toBe(404);
    expect((await post(b, `/v1/invoices/${sub.latest_invoice}/pay`)).status).toBe(404);
    expect((await del(b, `/v1/subscriptions/${sub.id}`)).status).toBe(404);
    expect((await get(b, `/v1/subscription_items?subscription=${sub.id}`)).status).toBe(400);
    for (const list of ['/v1/subscriptions', '/v1/invoices', '/v1/invoiceitems']) expect((await get(b, list)).body.data).toEqual([]);

    const connected = (await createAccount(t, a)).id;
    const acting = { 'Stripe-Account': connected };
    expect((await get(a, `/v1/subscriptions/${sub.id}`, acting)).status).toBe(404);
    expect((await get(a, '/v1/subscriptions', acting)).body.data).toEqual([]);
    // The connected account's customer and price are its own: the platform can't use them.
    const customer = (await post(a, '/v1/customers', { payment_method: 'pm_card_visa' }, acting)).body;
    const price = (await post(a, '/v1/prices', { product_data: { name: 'C' }, currency: 'usd', unit_amount: 100, recurring: { interval: 'month' } }, acting)).body;
    expect((await post(a, '/v1/subscriptions', { customer: customer.id, items: [{ price: price.id }] })).status).toBe(400);
    const own = await post(a, '/v1/subscriptions', { customer: customer.id, items: [{ price: price.id }], collection_method: 'send_invoice', days_until_due: 3 }, acting);
    expect(own.status).toBe(200);
    expect((await get(a, `/v1/subscriptions/${own.body.id}`)).status).toBe(404);
    expect((await get(a, `/v1/subscriptions/${own.body.id}`, acting)).status).toBe(200);
  });
});
