import { newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { pay, insertPendingRefund } from '../../helpers/payments';
import { expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../helpers/requests';

// POST /v1/test_helpers/refunds/{refund}/expire: a refund waiting on its customer
// (`requires_action`, as a customer_balance refund waits for bank details) is canceled, as the
// public API does after 45 days; any other status is refused. Card refunds never wait, so the
// waiting refund is written directly (test/helpers/payments.ts).

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get, eventsOf } = requestsOf(() => t);
const RE = '/v1/refunds';
const EXPIRE = (id: string) => `/v1/test_helpers/refunds/${id}/expire`;

test('a requires_action refund expires: canceled, its amount back on the charge, with the update events', async () => {
  const key = newTestKey();
  const p = await pay(t, key, { amount: 1000 });
  const id = await insertPendingRefund(t, p.charge, 400, 'requires_action');
  const res = await post(key, EXPIRE(id));
  expect(res.status).toBe(200);
  expectMatchesResponseSchema('PostTestHelpersRefundsRefundExpire', 200, res.body);
  expect(res.body).toMatchObject({ id, object: 'refund', status: 'canceled', failure_reason: 'unknown', amount: 400 });
  expect((await t.runtime.prisma.charge.findUniqueOrThrow({ where: { id: p.charge } })).amountRefunded).toBe(0);
  const [event] = await eventsOf(key, 'refund.updated');
  expect(event.data.previous_attributes).toMatchObject({ status: 'requires_action' });
  expect((await eventsOf(key, 'charge.refund.updated')).map((e: any) => e.data.object.status)).toEqual(['canceled']);
  // Once expired, it can't expire again; the whole charge can be refunded.
  expectError(await post(key, EXPIRE(id)), 400, { message: expect.stringContaining('status of canceled') });
  expect((await post(key, RE, { charge: p.charge })).body.amount).toBe(1000);
});

test('a succeeded or pending refund is refused with the public wording; unknown and other accounts’ refunds are 404', async () => {
  const key = newTestKey();
  const p = await pay(t, key, { amount: 1000 });
  const { body: refund } = await post(key, RE, { charge: p.charge, amount: 100 });
  expectError(await post(key, EXPIRE(refund.id)), 400, {
    type: 'invalid_request_error',
    message: `You can't expire refund ${refund.id} because it has a status of succeeded. Only a refund with a status of requires_action can be expired.`,
  });
  const pending = await insertPendingRefund(t, p.charge, 100);
  expectError(await post(key, EXPIRE(pending)), 400, { message: expect.stringContaining('status of pending') });
  expect((await get(key, `${RE}/${pending}`)).body.status).toBe('pending');
  expectError(await post(key, EXPIRE('re_nope')), 404, { code: 'resource_missing' });
  const waiting = await insertPendingRefund(t, p.charge, 100, 'requires_action');
  expectError(await post(newTestKey(), EXPIRE(waiting)), 404, { code: 'resource_missing' });
  expectError(await post(key, EXPIRE(waiting), { nope: '1' }), 400, { code: 'parameter_unknown' });
  expect((await get(key, `${RE}/${waiting}`)).body.status).toBe('requires_action');
});

test('stripe-node: testHelpers.refunds.expire', async () => {
  const key = newTestKey();
  const p = await pay(t, key, { amount: 1000 });
  const id = await insertPendingRefund(t, p.charge, 300, 'requires_action');
  const stripe = t.stripe(key);
  expect(await stripe.testHelpers.refunds.expire(id)).toMatchObject({ id, status: 'canceled' });
  await expect(stripe.testHelpers.refunds.expire(id)).rejects.toMatchObject({ statusCode: 400, type: 'StripeInvalidRequestError' });
});
