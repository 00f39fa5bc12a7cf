import { newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { createAccount, createTaxRate } from '../../helpers/fixtures';
import { expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../helpers/requests';

// Tax rates end to end: create, retrieve, update (never percentage or inclusive), list filters,
// events, the official SDK, and isolation.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get, eventsOf } = requestsOf(() => t);

const TR = '/v1/tax_rates';

test('create answers the public object and emits tax_rate.created', async () => {
  const key = newTestKey();
  const res = await post(key, TR, {
    display_name: 'Sales tax', percentage: 7.25, inclusive: false, country: 'us', state: 'CA', jurisdiction: 'US - CA', tax_type: 'sales_tax', description: 'd', metadata: { a: '1' },
  });
  expect(res.status).toBe(200);
  expectMatchesResponseSchema('PostTaxRates', 200, res.body);
  expect(res.body).toMatchObject({
    object: 'tax_rate', active: true, country: 'US', state: 'CA', jurisdiction: 'US - CA', tax_type: 'sales_tax', display_name: 'Sales tax',
    percentage: 7.25, effective_percentage: 7.25, inclusive: false, rate_type: 'percentage', flat_amount: null, livemode: false,
  });
  expect(res.body.id).toMatch(/^txr_/);
  const [event] = await eventsOf(key, 'tax_rate.created');
  expect(event.data.object).toEqual(res.body);
  expect((await get(key, `${TR}/${res.body.id}`)).body).toEqual(res.body);
});

test('validation: required display_name, inclusive and percentage; percentage 0–100; tax_type values', async () => {
  const key = newTestKey();
  expectError(await post(key, TR, { inclusive: false, percentage: 1 }), 400, { code: 'parameter_missing', param: 'display_name' });
  expectError(await post(key, TR, { display_name: 'a', percentage: 1 }), 400, { code: 'parameter_missing', param: 'inclusive' });
  expectError(await post(key, TR, { display_name: 'a', inclusive: true }), 400, { code: 'parameter_missing', param: 'percentage' });
  expectError(await post(key, TR, { display_name: 'a', inclusive: true, percentage: 101 }), 400, { param: 'percentage' });
  expectError(await post(key, TR, { display_name: 'a', inclusive: true, percentage: -1 }), 400, { param: 'percentage' });
  expectError(await post(key, TR, { display_name: 'a', inclusive: true, percentage: 'ten' }), 400, { param: 'percentage' });
  expectError(await post(key, TR, { display_name: 'a', inclusive: true, percentage: 1, tax_type: 'poll_tax' }), 400, { param: 'tax_type' });
  expectError(await post(key, TR, { display_name: 'x'.repeat(51), inclusive: true, percentage: 1 }), 400, { param: 'display_name' });
});

test('update: fields change with tax_rate.updated and previous_attributes; percentage and inclusive are fixed', async () => {
  const key = newTestKey();
  const rate = await createTaxRate(t, key, { metadata: { a: '1' } });
  const res = await post(key, `${TR}/${rate.id}`, { active: false, display_name: 'GST', country: 'au', metadata: { b: '2' } });
  expect(res.status).toBe(200);
  expectMatchesResponseSchema('PostTaxRatesTaxRate', 200, res.body);
  expect(res.body).toMatchObject({ active: false, display_name: 'GST', country: 'AU', metadata: { a: '1', b: '2' }, percentage: 20 });
  const [event] = await eventsOf(key, 'tax_rate.updated');
  expect(event.data.previous_attributes).toEqual({ active: true, display_name: 'VAT', country: null, metadata: { b: null } });
  expect((await post(key, `${TR}/${rate.id}`, { active: false })).status).toBe(200);
  expect(await eventsOf(key, 'tax_rate.updated')).toHaveLength(1);
  expectError(await post(key, `${TR}/${rate.id}`, { percentage: 5 }), 400, { code: 'parameter_unknown', param: 'percentage' });
  expectError(await post(key, `${TR}/${rate.id}`, { inclusive: true }), 400, { code: 'parameter_unknown', param: 'inclusive' });
  expectError(await post(key, `${TR}/txr_nope`, { active: true }), 404, { code: 'resource_missing', message: "No such tax rate: 'txr_nope'" });
});

test('list filters: active, inclusive, created', async () => {
  const key = newTestKey();
  const a = await createTaxRate(t, key, { inclusive: true });
  const b = await createTaxRate(t, key, { active: false });
  const ids = async (query: string) => (await get(key, `${TR}?${query}`)).body.data.map((r: { id: string }) => r.id);
  expect(await ids('')).toEqual([b.id, a.id]);
  expect(await ids('active=true')).toEqual([a.id]);
  expect(await ids('inclusive=false')).toEqual([b.id]);
  expect(await ids(`created[gte]=${a.created}`)).toEqual([b.id, a.id]);
});

test('through the official SDK, and isolation between keys and under Stripe-Account', async () => {
  const key = newTestKey();
  const stripe = t.stripe(key);
  const rate = await stripe.taxRates.create({ display_name: 'VAT', percentage: 19, inclusive: true, country: 'DE' });
  expect((await stripe.taxRates.retrieve(rate.id)).percentage).toBe(19);
  expect((await stripe.taxRates.update(rate.id, { active: false })).active).toBe(false);
  expect((await stripe.taxRates.list({ inclusive: true })).data.map((r) => r.id)).toEqual([rate.id]);
  const other = newTestKey();
  expect((await get(other, `${TR}/${rate.id}`)).status).toBe(404);
  expect((await post(other, `${TR}/${rate.id}`, { active: true })).status).toBe(404);
  const connected = { 'Stripe-Account': (await createAccount(t, key)).id };
  expect((await get(key, `${TR}/${rate.id}`, connected)).status).toBe(404);
  expect((await get(key, TR, connected)).body.data).toEqual([]);
});
