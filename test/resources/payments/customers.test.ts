import { newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { createAccount, createCustomer, createPaymentMethod } from '../../helpers/fixtures';
import { expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../helpers/requests';
import { countPostgres } from '../../helpers/postgresCounts';

// Customers end to end: create (with `payment_method` attaching a test card and a default
// payment method), retrieve, update (every field, clearing, previous_attributes), delete (the
// stub, detached cards), list filters, expand through invoice_settings, isolation between keys
// and under Stripe-Account, and the events each change writes in its transaction.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get, del } = requestsOf(() => t);

async function eventsOf(key: string, type: string): Promise<any[]> {
  const res = await get(key, `/v1/events?type=${type}&limit=100`);
  expect(res.status).toBe(200);
  return res.body.data;
}

const ADDRESS = { line1: '510 Townsend St', city: 'San Francisco', state: 'CA', postal_code: '94103', country: 'US' };

describe('create and retrieve', () => {
  test('every field is stored and answered as the public object', async () => {
    const key = newTestKey();
    const res = await post(key, '/v1/customers', {
      email: 'jenny@example.com',
      name: 'Jenny Rosen',
      phone: '+14155550100',
      description: 'first',
      address: ADDRESS,
      shipping: { name: 'Jenny', address: ADDRESS },
      metadata: { order: '6735' },
      preferred_locales: ['en', 'fr'],
      tax_exempt: 'exempt',
    });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostCustomers', 200, res.body);
    expect(res.body).toMatchObject({
      object: 'customer',
      email: 'jenny@example.com',
      name: 'Jenny Rosen',
      phone: '+14155550100',
      description: 'first',
      address: { ...ADDRESS, line2: null },
      shipping: { name: 'Jenny', phone: null, address: { ...ADDRESS, line2: null } },
      metadata: { order: '6735' },
      preferred_locales: ['en', 'fr'],
      tax_exempt: 'exempt',
      livemode: false,
      invoice_settings: { default_payment_method: null },
    });
    expect(res.body.id).toMatch(/^cus_/);
    const again = await get(key, `/v1/customers/${res.body.id}`);
    expect(again.body).toEqual(res.body);
    const [event] = await eventsOf(key, 'customer.created');
    expect(event.data.object).toEqual(res.body);
  });

  test('payment_method attaches a test card; invoice_settings[default_payment_method] must be attached', async () => {
    const key = newTestKey();
    const res = await post(key, '/v1/customers', { payment_method: 'pm_card_visa', invoice_settings: { default_payment_method: 'pm_card_visa' } });
    expect(res.status).toBe(200);
    const pm = res.body.invoice_settings.default_payment_method;
    expect(pm).toMatch(/^pm_/);
    expect(pm).not.toBe('pm_card_visa');
    const card = await get(key, `/v1/payment_methods/${pm}`);
    expect(card.body).toMatchObject({ customer: res.body.id, card: { brand: 'visa', last4: '4242' } });
    expect((await eventsOf(key, 'payment_method.attached')).map((e) => e.data.object.id)).toEqual([pm]);

    const loose = await createPaymentMethod(t, key);
    expectError(await post(key, '/v1/customers', { invoice_settings: { default_payment_method: loose.id } }), 400, {
      code: 'resource_missing',
      param: 'invoice_settings[default_payment_method]',
    });
    expectError(await post(key, '/v1/customers', { payment_method: 'pm_nope' }), 400, { code: 'resource_missing', param: 'payment_method' });
    // A declining test card fails at attach, and the customer isn't created.
    expectError(await post(key, '/v1/customers', { payment_method: 'pm_card_chargeDeclined', email: 'declined@example.com' }), 402, {
      type: 'card_error',
      code: 'card_declined',
      decline_code: 'generic_decline',
    });
    expect((await get(key, '/v1/customers?email=declined@example.com')).body.data).toEqual([]);
  });

  test('expand reaches invoice_settings.default_payment_method', async () => {
    const key = newTestKey();
    const { id } = await createCustomer(t, key, { payment_method: 'pm_card_amex', invoice_settings: { default_payment_method: 'pm_card_amex' } });
    const res = await get(key, `/v1/customers/${id}?expand[]=invoice_settings.default_payment_method`);
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('GetCustomersCustomer', 200, res.body);
    expect(res.body.invoice_settings.default_payment_method).toMatchObject({ object: 'payment_method', card: { brand: 'amex', last4: '0005' } });
    const customer = await t.stripe(key).customers.retrieve(id, { expand: ['invoice_settings.default_payment_method'] });
    expect((customer as any).invoice_settings.default_payment_method.object).toBe('payment_method');
    expectError(await get(key, `/v1/customers/${id}?expand[]=invoice_settings.bogus`), 400, { param: 'expand' });
  });

  test('validation: enums, unknown parameters, unknown ids', async () => {
    const key = newTestKey();
    expectError(await post(key, '/v1/customers', { tax_exempt: 'sometimes' }), 400, { param: 'tax_exempt' });
    expectError(await post(key, '/v1/customers', { bogus: '1' }), 400, { code: 'parameter_unknown', param: 'bogus' });
    expectError(await post(key, '/v1/customers', { shipping: { address: ADDRESS } }), 400, { code: 'parameter_missing', param: 'shipping[name]' });
    expectError(await get(key, '/v1/customers/cus_nope'), 404, { code: 'resource_missing', message: "No such customer: 'cus_nope'" });
  });
});

describe('update', () => {
  test('fields change and clear; customer.updated carries the old values', async () => {
    const key = newTestKey();
    const { id } = await createCustomer(t, key, { email: 'a@example.com', name: 'A', metadata: { a: '1', b: '2' }, address: ADDRESS });
    const res = await post(key, `/v1/customers/${id}`, { name: 'B', description: '', metadata: { a: '' }, address: '' , tax_exempt: 'reverse' });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostCustomersCustomer', 200, res.body);
    expect(res.body).toMatchObject({ email: 'a@example.com', name: 'B', description: null, metadata: { b: '2' }, address: null, tax_exempt: 'reverse' });
    const [event] = await eventsOf(key, 'customer.updated');
    expect(event.data.object).toEqual(res.body);
    // Only what changed: the removed metadata key, not the whole old metadata.
    expect(event.data.previous_attributes).toEqual({ name: 'A', metadata: { a: '1' }, address: { ...ADDRESS, line2: null }, tax_exempt: 'none' });
    // Nothing changed, nothing emitted.
    await post(key, `/v1/customers/${id}`, { name: 'B' });
    expect(await eventsOf(key, 'customer.updated')).toHaveLength(1);
  });

  test('an update is one commit in at most 4 round trips: BEGIN, the locked read, one statement, COMMIT', async () => {
    const key = newTestKey();
    const { id } = await createCustomer(t, key, { name: 'A', metadata: { a: '1' } });
    const counted = await countPostgres(() => post(key, `/v1/customers/${id}`, { name: 'B', metadata: { b: '2' } }, { 'Idempotency-Key': `update-${id}` }));
    expect(counted.result.status).toBe(200);
    expect(counted.result.body).toMatchObject({ id, name: 'B', metadata: { a: '1', b: '2' } });
    expect({ roundTrips: counted.roundTrips, commits: counted.commits, rollbacks: counted.rollbacks }).toEqual({ roundTrips: 4, commits: 1, rollbacks: 0 });
    const [event] = await eventsOf(key, 'customer.updated');
    expect(event.data.object).toEqual(counted.result.body);
    expect(event.data.previous_attributes).toEqual({ name: 'A', metadata: { b: null } });
    // The stored answer replays.
    const replay = await post(key, `/v1/customers/${id}`, { name: 'B', metadata: { b: '2' } }, { 'Idempotency-Key': `update-${id}` });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(counted.result.text);
    // A customer gone, or another's: 404, and nothing written.
    expectError(await post(key, '/v1/customers/cus_nope1234567890', { name: 'C' }), 404, { code: 'resource_missing' });
    expectError(await post(newTestKey(), `/v1/customers/${id}`, { name: 'C' }), 404, { code: 'resource_missing' });
    expect((await get(key, `/v1/customers/${id}`)).body.name).toBe('B');
  });

  test('invoice_settings[default_payment_method]: an attached card, or empty to clear', async () => {
    const key = newTestKey();
    const { id } = await createCustomer(t, key);
    const other = await createCustomer(t, key, { payment_method: 'pm_card_visa' });
    const othersCard = (await get(key, `/v1/payment_methods?customer=${other.id}`)).body.data[0].id;
    expectError(await post(key, `/v1/customers/${id}`, { invoice_settings: { default_payment_method: othersCard } }), 400, {
      code: 'resource_missing',
      param: 'invoice_settings[default_payment_method]',
    });
    const pm = (await post(key, '/v1/payment_methods/pm_card_mastercard/attach', { customer: id })).body.id;
    const set = await post(key, `/v1/customers/${id}`, { invoice_settings: { default_payment_method: pm } });
    expect(set.body.invoice_settings.default_payment_method).toBe(pm);
    const [event] = await eventsOf(key, 'customer.updated');
    expect(event.data.previous_attributes.invoice_settings.default_payment_method).toBeNull();
    // Detaching the default clears it.
    await post(key, `/v1/payment_methods/${pm}/detach`);
    expect((await get(key, `/v1/customers/${id}`)).body.invoice_settings.default_payment_method).toBeNull();
    await post(key, `/v1/payment_methods/${(await post(key, '/v1/payment_methods/pm_card_visa/attach', { customer: id })).body.id}/detach`);
    const cleared = await post(key, `/v1/customers/${id}`, { invoice_settings: { default_payment_method: '' } });
    expect(cleared.body.invoice_settings.default_payment_method).toBeNull();
  });
});

describe('delete and list', () => {
  test('delete answers the stub, retrieve too, and its cards are detached; a second delete is 404', async () => {
    const key = newTestKey();
    const { id } = await createCustomer(t, key, { payment_method: 'pm_card_visa' });
    const res = await del(key, `/v1/customers/${id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id, object: 'customer', deleted: true });
    expect((await get(key, `/v1/customers/${id}`)).body).toEqual({ id, object: 'customer', deleted: true });
    expect((await t.stripe(key).customers.retrieve(id)).deleted).toBe(true);
    expectError(await del(key, `/v1/customers/${id}`), 404, { code: 'resource_missing' });
    expectError(await post(key, `/v1/customers/${id}`, { name: 'x' }), 404, { code: 'resource_missing' });
    const [event] = await eventsOf(key, 'customer.deleted');
    expect(event.data.object.id).toBe(id);
    expect((await get(key, `/v1/payment_methods?customer=${id}`)).body.data).toEqual([]);
    expect((await get(key, '/v1/customers')).body.data).toEqual([]);
  });

  test('list filters by email and created', async () => {
    const key = newTestKey();
    const a = await createCustomer(t, key, { email: 'a@example.com' });
    await createCustomer(t, key, { email: 'b@example.com' });
    const res = await get(key, '/v1/customers?email=a@example.com');
    expect(res.body.data.map((c: any) => c.id)).toEqual([a.id]);
    expectMatchesResponseSchema('GetCustomers', 200, res.body);
    expect((await get(key, `/v1/customers?created[gt]=${a.created + 1000}`)).body.data).toEqual([]);
  });

  test('list filters by test_clock: the customers living on that clock, none of another key’s', async () => {
    const key = newTestKey();
    const clock = (await post(key, '/v1/test_helpers/test_clocks', { frozen_time: 1577836800 })).body;
    const other = (await post(key, '/v1/test_helpers/test_clocks', { frozen_time: 1577836800 })).body;
    const on = await createCustomer(t, key, { test_clock: clock.id });
    await createCustomer(t, key, { test_clock: other.id });
    await createCustomer(t, key);
    const res = await get(key, `/v1/customers?test_clock=${clock.id}`);
    expect(res.body.data.map((c: any) => c.id)).toEqual([on.id]);
    expectMatchesResponseSchema('GetCustomers', 200, res.body);
    expect((await get(newTestKey(), `/v1/customers?test_clock=${clock.id}`)).body.data).toEqual([]);
  });
});

describe('isolation', () => {
  test("another key can't see, update, delete or use a customer", async () => {
    const [a, b] = [newTestKey(), newTestKey()];
    const { id } = await createCustomer(t, a);
    expectError(await get(b, `/v1/customers/${id}`), 404, { code: 'resource_missing' });
    expectError(await post(b, `/v1/customers/${id}`, { name: 'x' }), 404, { code: 'resource_missing' });
    expectError(await del(b, `/v1/customers/${id}`), 404, { code: 'resource_missing' });
    expectError(await post(b, '/v1/payment_methods/pm_card_visa/attach', { customer: id }), 400, { code: 'resource_missing', param: 'customer' });
    expect((await get(b, '/v1/customers')).body.data).toEqual([]);
  });

  test('Stripe-Account: a connected account has customers of its own', async () => {
    const key = newTestKey();
    const connected = (await createAccount(t, key)).id;
    const as = { 'Stripe-Account': connected };
    const res = await post(key, '/v1/customers', { email: 'c@example.com' }, as);
    expect(res.status).toBe(200);
    expect((await get(key, `/v1/customers/${res.body.id}`, as)).status).toBe(200);
    expectError(await get(key, `/v1/customers/${res.body.id}`), 404, { code: 'resource_missing' });
    expect((await get(key, '/v1/customers')).body.data).toEqual([]);
    const [event] = (await get(key, '/v1/events?type=customer.created', as)).body.data;
    expect(event.account).toBe(connected);
  });
});
