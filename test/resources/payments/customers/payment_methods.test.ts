import { newTestKey, startTestApp, type TestApp } from '../../../helpers/app';
import { createCustomer, createPaymentMethod } from '../../../helpers/fixtures';
import { expectMatchesResponseSchema } from '../../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../../helpers/requests';

// A customer's saved payment methods: GET /v1/customers/{id}/payment_methods (type,
// allow_redisplay, pagination) and GET …/payment_methods/{pm} (404 when it isn't the customer's).

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { get, post, del } = requestsOf(() => t);

async function saved(key: string, customer: string, params: Record<string, unknown> = {}): Promise<string> {
  const pm = (await createPaymentMethod(t, key, params)).id;
  expect((await post(key, `/v1/payment_methods/${pm}/attach`, { customer })).status).toBe(200);
  return pm;
}

test('lists the customer’s cards newest first, filtered by allow_redisplay and type, a page at a time', async () => {
  const key = newTestKey();
  const customer = (await createCustomer(t, key)).id;
  const other = (await createCustomer(t, key)).id;
  const a = await saved(key, customer, { allow_redisplay: 'always' });
  const b = await saved(key, customer);
  const c = await saved(key, customer, { allow_redisplay: 'always', card: { token: 'tok_mastercard' } });
  await saved(key, other);
  await createPaymentMethod(t, key);

  const all = await get(key, `/v1/customers/${customer}/payment_methods`);
  expect(all.status).toBe(200);
  expectMatchesResponseSchema('GetCustomersCustomerPaymentMethods', 200, all.body);
  expect(all.body).toMatchObject({ object: 'list', url: `/v1/customers/${customer}/payment_methods`, has_more: false });
  expect(all.body.data.map((p: any) => p.id)).toEqual([c, b, a]);
  expect(all.body.data[0]).toMatchObject({ customer, allow_redisplay: 'always', card: { brand: 'mastercard' } });

  const always = await get(key, `/v1/customers/${customer}/payment_methods?allow_redisplay=always&type=card`);
  expect(always.body.data.map((p: any) => p.id)).toEqual([c, a]);
  expect((await get(key, `/v1/customers/${customer}/payment_methods?allow_redisplay=limited`)).body.data).toEqual([]);

  const page = await get(key, `/v1/customers/${customer}/payment_methods?limit=2`);
  expect(page.body).toMatchObject({ has_more: true });
  const next = await get(key, `/v1/customers/${customer}/payment_methods?limit=2&starting_after=${page.body.data[1].id}`);
  expect(next.body.data.map((p: any) => p.id)).toEqual([a]);
  // A card of another customer is no cursor here.
  const foreign = (await get(key, `/v1/customers/${other}/payment_methods`)).body.data[0].id;
  expectError(await get(key, `/v1/customers/${customer}/payment_methods?starting_after=${foreign}`), 400, { code: 'resource_missing', param: 'starting_after' });

  const expanded = await get(key, `/v1/customers/${customer}/payment_methods?expand[]=data.customer&limit=1`);
  expect(expanded.body.data[0].customer).toMatchObject({ id: customer, object: 'customer' });
});

test('retrieves one of its cards; another customer’s, a detached one or an unknown one is 404', async () => {
  const key = newTestKey();
  const customer = (await createCustomer(t, key)).id;
  const other = (await createCustomer(t, key)).id;
  const pm = await saved(key, customer);
  const foreign = await saved(key, other);

  const got = await get(key, `/v1/customers/${customer}/payment_methods/${pm}`);
  expect(got.status).toBe(200);
  expectMatchesResponseSchema('GetCustomersCustomerPaymentMethodsPaymentMethod', 200, got.body);
  expect(got.body).toMatchObject({ id: pm, customer });

  for (const id of [foreign, 'pm_nope', 'x', 'pm_card_visa']) {
    expectError(await get(key, `/v1/customers/${customer}/payment_methods/${id}`), 404, { type: 'invalid_request_error', code: 'resource_missing', message: `No such PaymentMethod: '${id}'` });
  }
  await post(key, `/v1/payment_methods/${pm}/detach`, {});
  expectError(await get(key, `/v1/customers/${customer}/payment_methods/${pm}`), 404, { code: 'resource_missing' });
});

test('an unknown, deleted or other account’s customer is 404; bad filters are 400', async () => {
  const key = newTestKey();
  const customer = (await createCustomer(t, key)).id;
  const pm = await saved(key, customer);
  const stranger = newTestKey();
  expectError(await get(stranger, `/v1/customers/${customer}/payment_methods`), 404, { code: 'resource_missing', message: `No such customer: '${customer}'` });
  expectError(await get(stranger, `/v1/customers/${customer}/payment_methods/${pm}`), 404, { code: 'resource_missing' });
  expectError(await get(key, '/v1/customers/cus_nope/payment_methods'), 404, { code: 'resource_missing' });
  expectError(await get(key, `/v1/customers/${customer}/payment_methods?allow_redisplay=sometimes`), 400, { param: 'allow_redisplay' });
  expectError(await get(key, `/v1/customers/${customer}/payment_methods?type=sepa_debit`), 400, { param: 'type' });
  expectError(await get(key, `/v1/customers/${customer}/payment_methods?limit=0`), 400, { param: 'limit' });
  expect((await del(key, `/v1/customers/${customer}`)).status).toBe(200);
  expectError(await get(key, `/v1/customers/${customer}/payment_methods`), 404, { code: 'resource_missing' });
});

test('stripe-node: customers.listPaymentMethods and retrievePaymentMethod', async () => {
  const key = newTestKey();
  const stripe = t.stripe(key);
  const customer = await stripe.customers.create({ name: 'J' });
  const pm = await stripe.paymentMethods.attach('pm_card_visa', { customer: customer.id });
  const listed = await stripe.customers.listPaymentMethods(customer.id, { type: 'card', limit: 1 }).autoPagingToArray({ limit: 10 });
  expect(listed.map((p) => p.id)).toEqual([pm.id]);
  expect((await stripe.customers.retrievePaymentMethod(customer.id, pm.id)).id).toBe(pm.id);
  await expect(stripe.customers.retrievePaymentMethod(customer.id, 'pm_nope')).rejects.toMatchObject({ statusCode: 404, code: 'resource_missing' });
});
