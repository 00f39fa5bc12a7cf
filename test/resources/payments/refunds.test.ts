import { newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { createAccount, createCustomer } from '../../helpers/fixtures';
import { pay, insertPendingRefund } from '../../helpers/payments';
import { expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../helpers/requests';
import { sdkTypeProblems } from '../../helpers/sdkTypes';
import { formatAmount } from '../../../src/resources/payments/refunds/service';

// Refunds end to end: full and partial refunds of a charge or its PaymentIntent, the public
// errors (too large, already refunded, uncaptured, failed, disagreeing ids), concurrent refunds
// of one charge never passing the captured amount, retrieve, update, list and cancel with their
// events, idempotent retries, and Connect isolation. The payments refunded are PaymentIntents
// confirmed through the API (test/helpers/payments.ts); only a pending refund is written directly.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ REFUND_FAILURE_DELAY_MS: '600000' });
});
afterAll(() => t.close());

const { post, get, eventsOf } = requestsOf(() => t);
const RE = '/v1/refunds';
const charge = (id: string) => t.runtime.prisma.charge.findUniqueOrThrow({ where: { id } });

describe('create', () => {
  test('a charge refunded whole by default: the refund, the charge updated, refund.created and charge.refunded', async () => {
    const key = newTestKey();
    const p = await pay(t, key, { amount: 2500 });
    const res = await post(key, RE, { charge: p.charge, reason: 'requested_by_customer', metadata: { order: '7' }, instructions_email: 'j@example.com' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      object: 'refund',
      amount: 2500,
      charge: p.charge,
      payment_intent: p.paymentIntent,
      payment_method: p.paymentMethod,
      currency: 'usd',
      status: 'succeeded',
      reason: 'requested_by_customer',
      metadata: { order: '7' },
      balance_transaction: null,
    });
    expect(res.body.id).toMatch(/^re_/);
    expect(res.body).not.toHaveProperty('failure_reason');
    expectMatchesResponseSchema('PostRefunds', res.status, res.body);
    expect(sdkTypeProblems(res.body)).toEqual([]);
    expect(await charge(p.charge)).toMatchObject({ amountRefunded: 2500 });

    const [created] = await eventsOf(key, 'refund.created');
    expect(created.data.object).toEqual(res.body);
    const [refunded] = await eventsOf(key, 'charge.refunded');
    expect(refunded.data.object).toMatchObject({ id: p.charge, object: 'charge', amount_refunded: 2500, refunded: true, captured: true });
    expect(sdkTypeProblems(refunded.data.object)).toEqual([]);
  });

  test('partial refunds through the PaymentIntent, up to what remains; then the charge is already refunded', async () => {
    const key = newTestKey();
    const p = await pay(t, key, { amount: 2000 });
    const first = await post(key, RE, { payment_intent: p.paymentIntent, amount: 500 });
    expect(first.body).toMatchObject({ amount: 500, charge: p.charge, payment_intent: p.paymentIntent });
    const [event] = await eventsOf(key, 'charge.refunded');
    expect(event.data.object).toMatchObject({ amount_refunded: 500, refunded: false });

    expectError(await post(key, RE, { charge: p.charge, amount: 1600 }), 400, {
      type: 'invalid_request_error',
      code: 'amount_too_large',
      param: 'amount',
      message: 'Refund amount ($16.00) is greater than unrefunded amount on charge ($15.00)',
    });
    const rest = await post(key, RE, { charge: p.charge, payment_intent: p.paymentIntent });
    expect(rest.body).toMatchObject({ amount: 1500 });
    expect(await charge(p.charge)).toMatchObject({ amountRefunded: 2000 });
    expectError(await post(key, RE, { payment_intent: p.paymentIntent }), 400, { code: 'charge_already_refunded', message: `Charge ${p.charge} has already been refunded.` });
    expect((await eventsOf(key, 'refund.created')).map((e: any) => e.data.object.amount)).toEqual([1500, 500]);
  });

  test('a partially captured payment refunds what was captured, the released rest counted as refunded', async () => {
    const key = newTestKey();
    const p = await pay(t, key, { amount: 2000, state: 'uncaptured' });
    const captured = await post(key, `/v1/payment_intents/${p.paymentIntent}/capture`, { amount_to_capture: 500 });
    expect(captured.status).toBe(200);
    expectError(await post(key, RE, { charge: p.charge, amount: 501 }), 400, {
      code: 'amount_too_large',
      message: 'Refund amount ($5.01) is greater than unrefunded amount on charge ($5.00)',
    });
    expect((await post(key, RE, { payment_intent: p.paymentIntent })).body.amount).toBe(500);
    const charged = (await get(key, `/v1/charges/${p.charge}`)).body;
    expect(charged).toMatchObject({ amount_captured: 500, amount_refunded: 2000, refunded: true });
    expectError(await post(key, RE, { charge: p.charge }), 400, { code: 'charge_already_refunded' });
  });

  test('amounts in errors are shown in the currency', () => {
    expect(formatAmount(2000, 'usd')).toBe('$20.00');
    expect(formatAmount(705, 'eur')).toBe('€7.05');
    expect(formatAmount(500, 'jpy')).toBe('¥500');
    expect(formatAmount(1234, 'cad')).toBe('12.34 CAD');
  });

  test('an uncaptured payment is canceled, not refunded; failed and canceled payments have no successful charge', async () => {
    const key = newTestKey();
    const held = await pay(t, key, { state: 'uncaptured' });
    for (const by of [{ charge: held.charge }, { payment_intent: held.paymentIntent }]) {
      const res = await post(key, RE, by);
      expectError(res, 400, { type: 'invalid_request_error', code: 'charge_not_refundable' });
      expect(res.body.error.message).toContain(`cancel the PaymentIntent (${held.paymentIntent}) instead`);
    }
    const failed = await pay(t, key, { state: 'failed' });
    const canceled = await pay(t, key, { state: 'canceled' });
    for (const p of [failed, canceled]) {
      for (const by of [{ charge: p.charge }, { payment_intent: p.paymentIntent }]) {
        expectError(await post(key, RE, by), 400, { message: `This PaymentIntent (${p.paymentIntent}) does not have a successful charge to refund.` });
      }
    }
    expect(await t.runtime.prisma.refund.count({ where: { chargeId: { in: [held.charge, failed.charge, canceled.charge] } } })).toBe(0);
  });

  test('what to refund: one of charge or payment_intent, the caller\'s own, agreeing; amount and reason checked', async () => {
    const key = newTestKey();
    const a = await pay(t, key);
    const b = await pay(t, key);
    expectError(await post(key, RE, {}), 400, { code: 'parameter_missing' });
    expectError(await post(key, RE, { charge: 'ch_nope' }), 400, { code: 'resource_missing', param: 'charge', message: "No such charge: 'ch_nope'" });
    expectError(await post(key, RE, { payment_intent: 'pi_nope' }), 400, { code: 'resource_missing', param: 'payment_intent' });
    expectError(await post(key, RE, { charge: a.charge, payment_intent: b.paymentIntent }), 400, { param: 'charge', message: `Charge ${a.charge} does not belong to PaymentIntent ${b.paymentIntent}.` });
    expectError(await post(key, RE, { charge: a.charge, amount: 0 }), 400, { param: 'amount' });
    expectError(await post(key, RE, { charge: a.charge, reason: 'bored' }), 400, { param: 'reason' });
    // Another platform's charge is no charge at all.
    expectError(await post(newTestKey(), RE, { charge: a.charge }), 400, { code: 'resource_missing' });
    expect(await charge(a.charge)).toMatchObject({ amountRefunded: 0 });
  });

  test('concurrent refunds of one charge: exactly the captured amount is refunded, the rest are refused', async () => {
    const key = newTestKey();
    const p = await pay(t, key, { amount: 2000 });
    const answers = await Promise.all(Array.from({ length: 12 }, () => post(key, RE, { charge: p.charge, amount: 300 })));
    const ok = answers.filter((r) => r.status === 200);
    expect(ok).toHaveLength(6);
    for (const r of answers.filter((r) => r.status !== 200)) {
      expectError(r, 400, { code: 'amount_too_large' });
      expect(r.body.error.message).toMatch(/^Refund amount \(\$3\.00\) is greater than unrefunded amount on charge \(\$2\.00\)$/);
    }
    expect(await charge(p.charge)).toMatchObject({ amountRefunded: 1800 });
    const all = await Promise.all(Array.from({ length: 5 }, () => post(key, RE, { charge: p.charge })));
    expect(all.filter((r) => r.status === 200).map((r) => r.body.amount)).toEqual([200]);
    expect(all.filter((r) => r.status === 400).every((r) => r.body.error.code === 'charge_already_refunded')).toBe(true);
    const sum = await t.runtime.prisma.refund.aggregate({ where: { chargeId: p.charge }, _sum: { amount: true } });
    expect(sum._sum.amount).toBe(2000);
    expect(await charge(p.charge)).toMatchObject({ amountRefunded: 2000 });
  });

  test('a retry with the same idempotency key answers the same refund and refunds once', async () => {
    const key = newTestKey();
    const p = await pay(t, key);
    const headers = { 'Idempotency-Key': `refund-${p.charge}` };
    const [a, b] = await Promise.all([post(key, RE, { charge: p.charge, amount: 100 }, headers), post(key, RE, { charge: p.charge, amount: 100 }, headers)]);
    const c = await post(key, RE, { charge: p.charge, amount: 100 }, headers);
    const done = [a, b, c].filter((r) => r.status === 200);
    expect(new Set(done.map((r) => r.body.id)).size).toBe(1);
    expect(await t.runtime.prisma.refund.count({ where: { chargeId: p.charge } })).toBe(1);
    expect(await charge(p.charge)).toMatchObject({ amountRefunded: 100 });
  });
});

describe('retrieve, update, list', () => {
  test('retrieve, expanded; unknown ids are 404', async () => {
    const key = newTestKey();
    const customer = (await createCustomer(t, key)).id;
    const p = await pay(t, key, { customer });
    const { body: refund } = await post(key, RE, { charge: p.charge, amount: 100 });
    const res = await get(key, `${RE}/${refund.id}`);
    expect(res.body).toEqual(refund);
    expect(res.body.customer).toBe(customer);
    expectMatchesResponseSchema('GetRefundsRefund', res.status, res.body);
    const expanded = await get(key, `${RE}/${refund.id}?expand[]=customer&expand[]=payment_method`);
    expect(expanded.body.customer).toMatchObject({ id: customer, object: 'customer' });
    expect(expanded.body.payment_method).toMatchObject({ id: p.paymentMethod, object: 'payment_method' });
    const both = await get(key, `${RE}/${refund.id}?expand[]=charge&expand[]=payment_intent`);
    expect(both.body.charge).toMatchObject({ id: p.charge, object: 'charge', amount_refunded: 100 });
    expect(both.body.payment_intent).toMatchObject({ id: p.paymentIntent, object: 'payment_intent', latest_charge: p.charge });
    expectMatchesResponseSchema('GetRefundsRefund', both.status, both.body);
    // A charge shows its refunds only when expanded.
    expect((await get(key, `/v1/charges/${p.charge}`)).body).not.toHaveProperty('refunds');
    const charged = await get(key, `/v1/charges/${p.charge}?expand[]=refunds`);
    expect(charged.body.refunds).toMatchObject({ object: 'list', has_more: false, url: `/v1/charges/${p.charge}/refunds` });
    expect(charged.body.refunds.data.map((r: any) => r.id)).toEqual([refund.id]);
    expect(charged.body.refunds.data[0]).toEqual((await get(key, `${RE}/${refund.id}`)).body);
    expectError(await get(key, `/v1/charges/${p.charge}?expand[]=refunds.data.customer`), 400, { param: 'expand' });
    expectMatchesResponseSchema('GetChargesCharge', charged.status, charged.body);
    expect(sdkTypeProblems(charged.body)).toEqual([]);
    expectError(await get(key, `${RE}/re_nope`), 404, { code: 'resource_missing', message: "No such refund: 're_nope'" });
    expectError(await get(newTestKey(), `${RE}/${refund.id}`), 404, { code: 'resource_missing' });
  });

  test('update sets metadata, with refund.updated and charge.refund.updated; no change, no event', async () => {
    const key = newTestKey();
    const p = await pay(t, key);
    const { body: refund } = await post(key, RE, { charge: p.charge, metadata: { a: '1' } });
    const res = await post(key, `${RE}/${refund.id}`, { metadata: { b: '2' } });
    expect(res.body).toEqual({ ...refund, metadata: { a: '1', b: '2' } });
    expectMatchesResponseSchema('PostRefundsRefund', res.status, res.body);
    for (const type of ['refund.updated', 'charge.refund.updated']) {
      const [event] = await eventsOf(key, type);
      expect(event.data.object).toEqual(res.body);
      expect(event.data.previous_attributes).toEqual({ metadata: { b: null } });
    }
    await post(key, `${RE}/${refund.id}`, { metadata: { b: '2' } });
    expect(await eventsOf(key, 'refund.updated')).toHaveLength(1);
    expectError(await post(key, `${RE}/re_nope`, { metadata: { a: '1' } }), 404, { code: 'resource_missing' });
    expectError(await post(key, `${RE}/${refund.id}`, { amount: 5 }), 400, { code: 'parameter_unknown' });
  });

  test('list newest first, by charge, by PaymentIntent and by created, paginated', async () => {
    const key = newTestKey();
    const a = await pay(t, key);
    const b = await pay(t, key);
    const ids: string[] = [];
    for (const p of [a, b, a]) ids.push((await post(key, RE, { charge: p.charge, amount: 100 })).body.id);
    const all = await get(key, RE);
    expect(all.body).toMatchObject({ object: 'list', url: '/v1/refunds', has_more: false });
    expect(all.body.data.map((r: any) => r.id)).toEqual([...ids].reverse());
    expectMatchesResponseSchema('GetRefunds', all.status, all.body);
    expect((await get(key, `${RE}?charge=${a.charge}`)).body.data.map((r: any) => r.id)).toEqual([ids[2], ids[0]]);
    expect((await get(key, `${RE}?payment_intent=${b.paymentIntent}`)).body.data.map((r: any) => r.id)).toEqual([ids[1]]);
    const page = await get(key, `${RE}?limit=2`);
    expect(page.body.has_more).toBe(true);
    expect((await get(key, `${RE}?starting_after=${page.body.data[1].id}`)).body.data.map((r: any) => r.id)).toEqual([ids[0]]);
    expect((await get(key, `${RE}?created[lt]=1`)).body.data).toEqual([]);
    expectError(await get(key, `${RE}?charge=ch_nope`), 400, { code: 'resource_missing', param: 'charge' });
    expectError(await get(key, `${RE}?payment_intent=${a.paymentIntent}x`), 400, { code: 'resource_missing', param: 'payment_intent' });
    expect((await get(newTestKey(), RE)).body.data).toEqual([]);
  });
});

describe('cancel', () => {
  test('a succeeded refund can\'t be canceled', async () => {
    const key = newTestKey();
    const p = await pay(t, key);
    const { body: refund } = await post(key, RE, { charge: p.charge, amount: 100 });
    expectError(await post(key, `${RE}/${refund.id}/cancel`), 400, {
      type: 'invalid_request_error',
      message: `You can't cancel refund ${refund.id} because it has a status of succeeded. Only a refund with a status of pending or requires_action can be canceled.`,
    });
    expect((await get(key, `${RE}/${refund.id}`)).body.status).toBe('succeeded');
    expectError(await post(key, `${RE}/re_nope/cancel`), 404, { code: 'resource_missing' });
  });

  test('a pending refund is canceled: its amount goes back onto the charge, with the update events', async () => {
    const key = newTestKey();
    const p = await pay(t, key, { amount: 1000 });
    const id = await insertPendingRefund(t, p.charge, 400);
    expectError(await post(key, RE, { charge: p.charge, amount: 700 }), 400, { code: 'amount_too_large' });
    const res = await post(key, `${RE}/${id}/cancel`);
    expect(res.body).toMatchObject({ id, status: 'canceled', failure_reason: 'merchant_request', amount: 400 });
    expectMatchesResponseSchema('PostRefundsRefundCancel', res.status, res.body);
    expect(sdkTypeProblems(res.body)).toEqual([]);
    expect(await charge(p.charge)).toMatchObject({ amountRefunded: 0 });
    const [event] = await eventsOf(key, 'refund.updated');
    expect(event.data.previous_attributes).toEqual({ status: 'pending', failure_reason: null });
    expect((await eventsOf(key, 'charge.refund.updated')).map((e: any) => e.data.object.status)).toEqual(['canceled']);
    expect(await eventsOf(key, 'refund.failed')).toEqual([]);
    expectError(await post(key, `${RE}/${id}/cancel`), 400, { message: expect.stringContaining('status of canceled') });
    // The whole charge can be refunded again.
    expect((await post(key, RE, { charge: p.charge })).body.amount).toBe(1000);
  });
});

describe('Connect', () => {
  test('a connected account refunds its own charges; the platform and others never see them', async () => {
    const key = newTestKey();
    const connected = (await createAccount(t, key)).id;
    const as = { 'Stripe-Account': connected };
    const p = await pay(t, key, { stripeAccount: connected });
    expectError(await post(key, RE, { charge: p.charge }), 400, { code: 'resource_missing' });
    const res = await post(key, RE, { charge: p.charge }, as);
    expect(res.status).toBe(200);
    expect(await t.runtime.prisma.refund.findUniqueOrThrow({ where: { id: res.body.id } })).toMatchObject({ accountId: connected });
    expect((await get(key, `${RE}/${res.body.id}`, as)).body.id).toBe(res.body.id);
    expectError(await get(key, `${RE}/${res.body.id}`), 404, { code: 'resource_missing' });
    expect((await get(key, RE)).body.data).toEqual([]);
    expect((await get(key, RE, as)).body.data.map((r: any) => r.id)).toEqual([res.body.id]);
    // Another platform can't act as that account.
    expect((await get(newTestKey(), `${RE}/${res.body.id}`, as)).status).toBeGreaterThanOrEqual(400);
  });
});
