import { newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { createCustomer } from '../../helpers/fixtures';
import { expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../helpers/requests';
import { expectMatchesSdkTypes } from '../../helpers/sdkTypes';

// A customer's tax ids: made (its value checked against its type), listed, read and deleted,
// with customer.tax_id.* events; another key never sees them.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get, del, eventsOf } = requestsOf(() => t);
const ids = (customer: string) => `/v1/customers/${customer}/tax_ids`;

test('create: the public object, pending while its check runs, then customer.tax_id.updated with what it found', async () => {
  const key = newTestKey();
  const customer = (await createCustomer(t, key)).id;
  const res = await post(key, ids(customer), { type: 'eu_vat', value: 'DE000000000' });
  expect(res.status).toBe(200);
  expectMatchesResponseSchema('PostCustomersCustomerTaxIds', 200, res.body);
  expectMatchesSdkTypes(res.body);
  expect(res.body).toEqual({
    id: expect.stringMatching(/^txi_/),
    object: 'tax_id',
    country: 'DE',
    created: expect.any(Number),
    customer,
    customer_account: null,
    livemode: false,
    owner: { customer, customer_account: null, type: 'customer' },
    type: 'eu_vat',
    value: 'DE000000000',
    verification: { status: 'pending', verified_address: null, verified_name: null },
  });
  const [created] = await eventsOf(key, 'customer.tax_id.created');
  expect(created.data.object).toEqual(res.body);
  const [updated] = await eventsOf(key, 'customer.tax_id.updated');
  expect(updated.data.object.verification.status).toBe('verified');
  expect(updated.data.previous_attributes).toEqual({ verification: { status: 'pending' } });
  const read = await get(key, `${ids(customer)}/${res.body.id}`);
  expectMatchesResponseSchema('GetCustomersCustomerTaxIdsId', 200, read.body);
  expect(read.body).toEqual({ ...res.body, verification: { status: 'verified', verified_address: null, verified_name: null } });
  expect((await post(key, ids(customer), { type: 'eu_vat', value: 'FR111111111' })).body.country).toBe('FR');
  expect((await post(key, ids(customer), { type: 'eu_vat', value: 'EL123456789' })).body).toMatchObject({ country: 'GR', verification: { status: 'pending' } });
  expect((await post(key, ids(customer), { type: 'us_ein', value: '12-3456789' })).body).toMatchObject({ country: 'US', verification: { status: 'unavailable' } });
  const unverified = (await get(key, ids(customer))).body.data.find((x: any) => x.value === 'FR111111111');
  expect(unverified.verification.status).toBe('unverified');
});

test('a value that does not fit its type: 400 tax_id_invalid "Invalid value for <type>."; an unknown type is refused; nothing is made', async () => {
  const key = newTestKey();
  const customer = (await createCustomer(t, key)).id;
  expectError(await post(key, ids(customer), { type: 'eu_vat', value: 'DE1' }), 400, { code: 'tax_id_invalid', param: 'value', message: 'Invalid value for eu_vat.' });
  expectError(await post(key, ids(customer), { type: 'us_ein', value: 'abc' }), 400, { code: 'tax_id_invalid', message: 'Invalid value for us_ein.' });
  expectError(await post(key, ids(customer), { type: 'xx_nope', value: '123456' }), 400, { param: 'type' });
  expectError(await post(key, ids(customer), { type: 'eu_vat' }), 400, { code: 'parameter_missing', param: 'value' });
  expect((await get(key, ids(customer))).body.data).toEqual([]);
  expect(await eventsOf(key, 'customer.tax_id.created')).toEqual([]);
});

test('list (newest first, pages), delete (customer.tax_id.deleted, gone after), and unknown ids', async () => {
  const key = newTestKey();
  const customer = (await createCustomer(t, key)).id;
  const made: string[] = [];
  for (const value of ['123456789', '223456789', '323456789']) made.push((await post(key, ids(customer), { type: 'ca_bn', value })).body.id);
  const page = await get(key, `${ids(customer)}?limit=2`);
  expectMatchesResponseSchema('GetCustomersCustomerTaxIds', 200, page.body);
  expect(page.body).toMatchObject({ object: 'list', has_more: true, url: ids(customer) });
  expect(page.body.data.map((x: any) => x.id)).toEqual([made[2], made[1]]);
  expect((await get(key, `${ids(customer)}?starting_after=${made[1]}`)).body.data.map((x: any) => x.id)).toEqual([made[0]]);
  const gone = await del(key, `${ids(customer)}/${made[1]}`);
  expect(gone.status).toBe(200);
  expectMatchesResponseSchema('DeleteCustomersCustomerTaxIdsId', 200, gone.body);
  expect(gone.body).toEqual({ id: made[1], object: 'tax_id', deleted: true });
  const [event] = await eventsOf(key, 'customer.tax_id.deleted');
  expect(event.data.object).toMatchObject({ id: made[1], object: 'tax_id', value: '223456789' });
  expectError(await get(key, `${ids(customer)}/${made[1]}`), 404, { code: 'resource_missing' });
  expectError(await del(key, `${ids(customer)}/${made[1]}`), 404, { code: 'resource_missing' });
  expectError(await get(key, `${ids(customer)}/txi_nope`), 404, { code: 'resource_missing' });
  expectError(await get(key, ids('cus_nope')), 404, { code: 'resource_missing', param: 'customer' });
  expectError(await post(key, ids('cus_nope'), { type: 'ca_bn', value: '123456789' }), 404, { code: 'resource_missing' });
  // Another customer's id is not this customer's.
  const other = (await createCustomer(t, key)).id;
  expectError(await get(key, `${ids(other)}/${made[0]}`), 404, { code: 'resource_missing' });
  // A deleted customer's tax ids are gone with it.
  await del(key, `/v1/customers/${customer}`);
  expectError(await get(key, ids(customer)), 404, { code: 'resource_missing' });
});

test('another key never sees a customer\'s tax ids, nor adds or deletes one', async () => {
  const key = newTestKey();
  const customer = (await createCustomer(t, key)).id;
  const id = (await post(key, ids(customer), { type: 'gb_vat', value: 'GB123456789' })).body.id;
  const other = newTestKey();
  expectError(await get(other, ids(customer)), 404, { code: 'resource_missing' });
  expectError(await get(other, `${ids(customer)}/${id}`), 404, { code: 'resource_missing' });
  expectError(await del(other, `${ids(customer)}/${id}`), 404, { code: 'resource_missing' });
  expectError(await post(other, ids(customer), { type: 'gb_vat', value: 'GB123456789' }), 404, { code: 'resource_missing' });
  expect((await get(key, ids(customer))).body.data.map((x: any) => x.id)).toEqual([id]);
});

test('tax_id_data on customer create: each made with it, customer.tax_id.created after customer.created; a bad one makes nothing', async () => {
  const key = newTestKey();
  const res = await post(key, '/v1/customers', { email: 'a@example.com', tax_id_data: [{ type: 'eu_vat', value: 'DE123456789' }, { type: 'au_abn', value: '12345678912' }] });
  expect(res.status).toBe(200);
  const list = (await get(key, ids(res.body.id))).body.data;
  expect(list.map((x: any) => [x.type, x.value])).toEqual([['au_abn', '12345678912'], ['eu_vat', 'DE123456789']]);
  const events = ((await get(key, '/v1/events')).body.data as any[]).map((e) => e.type).reverse();
  expect(events).toEqual(['customer.created', 'customer.tax_id.created', 'customer.tax_id.created']);
  const bad = await post(key, '/v1/customers', { email: 'b@example.com', tax_id_data: [{ type: 'au_abn', value: '1' }] });
  expectError(bad, 400, { code: 'tax_id_invalid', param: 'tax_id_data[0][value]', message: 'Invalid value for au_abn.' });
  expect((await get(key, '/v1/customers?email=b@example.com')).body.data).toEqual([]);
});

test('through the SDK: createTaxId, listTaxIds, retrieveTaxId, deleteTaxId', async () => {
  const key = newTestKey();
  const stripe = t.stripe(key);
  const customer = await stripe.customers.create({ tax_id_data: [{ type: 'eu_vat', value: 'IE1234567AB' }] });
  const made = await stripe.customers.createTaxId(customer.id, { type: 'no_vat', value: '123456789MVA' });
  expectMatchesSdkTypes(made);
  expect(made).toMatchObject({ country: 'NO', type: 'no_vat' });
  const all = await stripe.customers.listTaxIds(customer.id).autoPagingToArray({ limit: 10 });
  expect(all.map((x) => x.value)).toEqual(['123456789MVA', 'IE1234567AB']);
  expect((await stripe.customers.retrieveTaxId(customer.id, made.id)).id).toBe(made.id);
  expect(await stripe.customers.deleteTaxId(customer.id, made.id)).toMatchObject({ id: made.id, deleted: true });
  await expect(stripe.customers.createTaxId(customer.id, { type: 'eu_vat', value: 'nope' })).rejects.toMatchObject({ type: 'StripeInvalidRequestError', code: 'tax_id_invalid' });
});

test('a customer expanded with tax_ids shows its tax ids, newest first; another customer shows none', async () => {
  const key = newTestKey();
  const customer = (await createCustomer(t, key)).id;
  const other = (await createCustomer(t, key)).id;
  const first = (await post(key, ids(customer), { type: 'eu_vat', value: 'DE123456789' })).body;
  const second = (await post(key, ids(customer), { type: 'gb_vat', value: 'GB123456789' })).body;
  const res = await get(key, `/v1/customers/${customer}?expand[]=tax_ids`);
  expect(res.status).toBe(200);
  expect(res.body.tax_ids).toMatchObject({ object: 'list', has_more: false, url: `/v1/customers/${customer}/tax_ids` });
  expect(res.body.tax_ids.data.map((x: { id: string }) => x.id)).toEqual([second.id, first.id]);
  expect((await get(key, `/v1/customers/${other}?expand[]=tax_ids`)).body.tax_ids.data).toEqual([]);
  expect((await get(key, `/v1/customers/${customer}`)).body.tax_ids).toBeUndefined();
});
