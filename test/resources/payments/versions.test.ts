import { LATEST_API_VERSION, VersionRenderer } from '../../../src/kernel/versions';
import { versionChanges } from '../../../src/resources/payments/versions';
import { newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { createAccount } from '../../helpers/fixtures';
import { requestsOf } from '../../helpers/requests';
import { sdkVersionProblems } from '../../helpers/sdkTypes';

// PaymentIntents and charges at older API versions: what each change of
// src/resources/payments/versions.ts undoes, in answers and in events, checked against the
// stripe package major of that time.

// Each major's SDK types are compiled on first use: slow on a busy machine.
jest.setTimeout(120_000);

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get, eventsOf } = requestsOf(() => t);
const at = (version: string) => ({ 'Stripe-Version': version });
const renderer = new VersionRenderer(versionChanges);

const PI = '/v1/payment_intents';
const card = (extra: Record<string, unknown> = {}) => ({ amount: 2000, currency: 'usd', allowed_payment_method_types: ['card'], ...extra });

/** Pins the key's account to `version` (its first request that names one), as an SDK of that time does. */
async function pinnedAt(version: string): Promise<string> {
  const key = newTestKey();
  expect((await get(key, '/v1/account', at(version))).status).toBe(200);
  return key;
}

describe('PaymentIntents before 2022-11-15: `charges` instead of `latest_charge`', () => {
  test('create and confirm, retrieve and list at 2020-08-27 show every attempt, newest first, each with its refunds', async () => {
    const key = await pinnedAt('2020-08-27');
    const intent = (await post(key, PI, card(), at(LATEST_API_VERSION))).body;
    const declined = await post(key, `${PI}/${intent.id}/confirm`, { payment_method: 'pm_card_chargeDeclined' }, at(LATEST_API_VERSION));
    expect(declined.status).toBe(402);
    const paid = await post(key, `${PI}/${intent.id}/confirm`, { payment_method: 'pm_card_visa' }, at('2020-08-27'));
    expect(paid.status).toBe(200);
    const newest = (await get(key, `${PI}/${intent.id}`, at(LATEST_API_VERSION))).body;
    const failedCharge = declined.body.error.charge;

    for (const old of [paid.body, (await get(key, `${PI}/${intent.id}`, at('2020-08-27'))).body, (await get(key, PI, at('2020-08-27'))).body.data[0]]) {
      expect(old).not.toHaveProperty('latest_charge');
      expect(old.charges).toMatchObject({ object: 'list', has_more: false, total_count: 2, url: `/v1/charges?payment_intent=${intent.id}` });
      expect(old.charges.data.map((c: any) => c.id)).toEqual([newest.latest_charge, failedCharge]);
      expect(old.charges.data[0]).toMatchObject({
        object: 'charge',
        status: 'succeeded',
        payment_intent: intent.id,
        refunds: { object: 'list', data: [], has_more: false, total_count: 0, url: `/v1/charges/${newest.latest_charge}/refunds` },
        dispute: null,
        destination: null,
        invoice: null,
      });
      expect(old.charges.data[1]).toMatchObject({ status: 'failed', failure_code: 'card_declined', refunds: { data: [] } });
      expect(old.invoice).toBeNull();
      expect(sdkVersionProblems(old, 'stripe-v8')).toEqual([]);
    }
    // The newest shape shows none of it.
    expect(newest).not.toHaveProperty('charges');
    expect(newest).not.toHaveProperty('invoice');
    // At 2022-11-15 the intent names its latest charge.
    const v11 = (await get(key, `${PI}/${intent.id}`, at('2022-11-15'))).body;
    expect(v11.latest_charge).toBe(newest.latest_charge);
    expect(v11).not.toHaveProperty('charges');
    expect(sdkVersionProblems(v11, 'stripe-v11')).toEqual([]);
  });

  test('an intent never attempted has an empty list; an expanded charge is rendered at the version too', async () => {
    const key = newTestKey();
    const open = (await post(key, PI, card(), at('2020-08-27'))).body;
    expect(open.charges).toEqual({ object: 'list', data: [], has_more: false, total_count: 0, url: `/v1/charges?payment_intent=${open.id}` });
    const paid = (await post(key, PI, card({ payment_method: 'pm_card_visa', confirm: true }), at(LATEST_API_VERSION))).body;
    const charge = (await get(key, `/v1/charges/${paid.latest_charge}?expand[]=payment_intent`, at('2020-08-27'))).body;
    expect(charge.payment_intent).toMatchObject({ id: paid.id, charges: { total_count: 1, data: [{ id: paid.latest_charge }] } });
    expect(charge.payment_intent).not.toHaveProperty('latest_charge');
  });
});

describe('charges', () => {
  test('before 2022-11-15 every charge shows its refunds; from it only when expanded', async () => {
    const key = newTestKey();
    const paid = (await post(key, PI, card({ payment_method: 'pm_card_visa', confirm: true }), at(LATEST_API_VERSION))).body;
    const url = `/v1/charges/${paid.latest_charge}`;
    const old = (await get(key, url, at('2020-08-27'))).body;
    expect(old.refunds).toEqual({ object: 'list', data: [], has_more: false, total_count: 0, url: `${url}/refunds` });
    expect(sdkVersionProblems(old, 'stripe-v8')).toEqual([]);
    const listed = (await get(key, `/v1/charges?payment_intent=${paid.id}`, at('2022-08-01'))).body.data[0];
    expect(listed.refunds.total_count).toBe(0);
    const updated = (await post(key, url, { description: 'd' }, at('2020-08-27'))).body;
    expect(updated).toMatchObject({ description: 'd', refunds: { object: 'list', data: [] } });
    expect((await get(key, url, at('2022-11-15'))).body).not.toHaveProperty('refunds');
  });

  test("a refunded charge's refunds, newest first, in the charge, its intent's charges and the refund's events at 2020-08-27", async () => {
    const key = await pinnedAt('2020-08-27');
    const paid = (await post(key, PI, card({ payment_method: 'pm_card_visa', confirm: true }), at(LATEST_API_VERSION))).body;
    const first = (await post(key, '/v1/refunds', { payment_intent: paid.id, amount: 500 }, at(LATEST_API_VERSION))).body;
    const second = (await post(key, '/v1/refunds', { charge: paid.latest_charge, amount: 300, metadata: { n: '2' } }, at(LATEST_API_VERSION))).body;
    expect([first.status, second.status]).toEqual(['succeeded', 'succeeded']);
    const expected = {
      object: 'list',
      data: [{ id: second.id, object: 'refund', amount: 300, charge: paid.latest_charge, metadata: { n: '2' } }, { id: first.id, amount: 500 }],
      has_more: false,
      total_count: 2,
      url: `/v1/charges/${paid.latest_charge}/refunds`,
    };
    const charge = (await get(key, `/v1/charges/${paid.latest_charge}`, at('2020-08-27'))).body;
    expect(charge).toMatchObject({ amount_refunded: 800, refunds: expected });
    expect(sdkVersionProblems(charge, 'stripe-v8')).toEqual([]);
    expect((await get(key, `${PI}/${paid.id}`, at('2020-08-27'))).body.charges.data[0].refunds).toMatchObject(expected);
    expect((await get(key, `/v1/charges?payment_intent=${paid.id}`, at('2020-08-27'))).body.data[0].refunds).toMatchObject(expected);
    // charge.refunded, written at the account's version: the refunds as they were then.
    const [latest, earlier] = await eventsOf(key, 'charge.refunded');
    expect(latest.data.object.refunds).toMatchObject(expected);
    expect(earlier.data.object.refunds).toMatchObject({ data: [{ id: first.id }], total_count: 1 });
    expect(sdkVersionProblems(latest, 'stripe-v8')).toEqual([]);
  });

  test('before 2023-08-16: `dispute` (null) and `destination`, the account of transfer_data', async () => {
    const key = newTestKey();
    const connected = (await createAccount(t, key, { type: 'express' })).id;
    const paid = (await post(key, PI, card({ payment_method: 'pm_card_visa', confirm: true, transfer_data: { destination: connected } }), at(LATEST_API_VERSION))).body;
    const url = `/v1/charges/${paid.latest_charge}`;
    const v14 = (await get(key, url, at('2023-08-16'))).body;
    expect(v14).not.toHaveProperty('dispute');
    expect(v14).not.toHaveProperty('destination');
    const v11 = (await get(key, url, at('2022-11-15'))).body;
    expect(v11).toMatchObject({ dispute: null, destination: connected, transfer_data: { amount: null, destination: connected } });
    expect(sdkVersionProblems(v11, 'stripe-v11')).toEqual([]);
    const plain = (await post(key, PI, card({ payment_method: 'pm_card_visa', confirm: true }), at(LATEST_API_VERSION))).body;
    expect((await get(key, `/v1/charges/${plain.latest_charge}`, at('2022-11-15'))).body.destination).toBeNull();
  });

  test('before 2025-03-31.basil a charge and its PaymentIntent name the invoice they pay (null for a plain payment)', async () => {
    const key = newTestKey();
    const paid = (await post(key, PI, card({ payment_method: 'pm_card_visa', confirm: true }), at(LATEST_API_VERSION))).body;
    await t.runtime.prisma.paymentIntent.update({ where: { id: paid.id }, data: { invoiceId: 'in_paid_by_it' } });
    await t.runtime.prisma.charge.update({ where: { id: paid.latest_charge }, data: { invoiceId: 'in_paid_by_it' } });
    const intent = (await get(key, `${PI}/${paid.id}?expand[]=latest_charge`, at('2025-02-24.acacia'))).body;
    expect(intent.invoice).toBe('in_paid_by_it');
    expect(intent.latest_charge.invoice).toBe('in_paid_by_it');
    expect(sdkVersionProblems(intent, 'stripe-v17')).toEqual([]);
    // The older intent's charges list carries it too.
    expect((await get(key, `${PI}/${paid.id}`, at('2020-08-27'))).body.charges.data[0].invoice).toBe('in_paid_by_it');
    const basil = (await get(key, `${PI}/${paid.id}?expand[]=latest_charge`, at('2025-03-31.basil'))).body;
    expect(basil).not.toHaveProperty('invoice');
    expect(basil.latest_charge).not.toHaveProperty('invoice');
  });
});

describe('events', () => {
  test("an account pinned to 2020-08-27 gets its PaymentIntents' and charges' events as then", async () => {
    const key = await pinnedAt('2020-08-27');
    const paid = (await post(key, PI, card({ payment_method: 'pm_card_visa', confirm: true }), at(LATEST_API_VERSION))).body;
    const [created] = await eventsOf(key, 'payment_intent.created');
    expect(created.api_version).toBe('2020-08-27');
    expect(created.data.object.charges).toMatchObject({ data: [], total_count: 0 });
    const [succeeded] = await eventsOf(key, 'payment_intent.succeeded');
    expect(succeeded.data.object).not.toHaveProperty('latest_charge');
    expect(succeeded.data.object.charges).toMatchObject({ total_count: 1, data: [{ id: paid.latest_charge, refunds: { data: [] }, dispute: null, destination: null }] });
    expect(sdkVersionProblems(succeeded, 'stripe-v8')).toEqual([]);
    const [charged] = await eventsOf(key, 'charge.succeeded');
    expect(charged.data.object).toMatchObject({ id: paid.latest_charge, refunds: { object: 'list', data: [], total_count: 0 }, dispute: null, invoice: null });
    expect(sdkVersionProblems(charged, 'stripe-v8')).toEqual([]);
    await post(key, `/v1/charges/${paid.latest_charge}`, { metadata: { a: '1' } });
    const [updated] = await eventsOf(key, 'charge.updated');
    expect(updated.data.object.refunds.total_count).toBe(0);
    expect(updated.data.previous_attributes).toEqual({ metadata: { a: null } });
  });

  test('an account at the newest version writes its events without the older history (nothing read for it)', async () => {
    const key = await pinnedAt(LATEST_API_VERSION);
    await post(key, PI, card({ payment_method: 'pm_card_visa', confirm: true }));
    const rows = await t.runtime.prisma.event.findMany({ where: { type: { in: ['payment_intent.succeeded', 'charge.succeeded'] }, accountId: (await get(key, '/v1/account')).body.id } });
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row.data).not.toHaveProperty('embedded');
  });

  test('previous_attributes and objects rendered without their history (an endpoint pinned older than its account)', () => {
    expect(renderer.render({ latest_charge: 'ch_1', metadata: {} }, '2020-08-27', 'payment_intent')).toEqual({ metadata: {} });
    expect(renderer.render({ metadata: {} }, '2020-08-27', 'charge')).toEqual({ metadata: {} });
    expect(renderer.render({ transfer_data: null }, '2022-11-15', 'charge')).toEqual({ transfer_data: null, destination: null });
    // Not read for this rendering: what is left is behind the list's url.
    const intent = renderer.render({ id: 'pi_1', object: 'payment_intent', latest_charge: 'ch_1' }, '2020-08-27');
    expect(intent).toEqual({ id: 'pi_1', object: 'payment_intent', invoice: null, charges: { object: 'list', data: [], has_more: true, url: '/v1/charges?payment_intent=pi_1' } });
    const charge = renderer.render({ id: 'ch_1', object: 'charge', amount_refunded: 0, transfer_data: null }, '2020-08-27');
    expect(charge).toMatchObject({ refunds: { object: 'list', data: [], has_more: false, url: '/v1/charges/ch_1/refunds' }, dispute: null, destination: null, invoice: null });
  });
});

describe('capture_method: `automatic` before 2024-04-10, `automatic_async` from it', () => {
  const Stripe14 = require('stripe-v14');
  test('stripe-node 14 (2023-10-16) gets an `automatic` capture whose charge has its balance transaction at once', async () => {
    const key = newTestKey();
    const stripe = new Stripe14(key, { host: '127.0.0.1', port: t.port, protocol: 'http' });
    const intent = await stripe.paymentIntents.create({ amount: 1500, currency: 'usd', payment_method: 'pm_card_visa', confirm: true, payment_method_types: ['card'] });
    expect(intent).toMatchObject({ status: 'succeeded', capture_method: 'automatic' });
    const charge = await stripe.charges.retrieve(intent.latest_charge as string);
    expect(charge.balance_transaction).toMatch(/^txn_[A-Za-z0-9]{24}$/);
    // Named explicitly, the newer default is still there.
    const later = await stripe.paymentIntents.create({ amount: 1500, currency: 'usd', payment_method: 'pm_card_visa', confirm: true, capture_method: 'automatic_async', payment_method_types: ['card'] });
    expect(later.capture_method).toBe('automatic_async');
    expect((await stripe.charges.retrieve(later.latest_charge as string)).balance_transaction).toBeNull();
    const bad = await stripe.paymentIntents.create({ amount: 1500, currency: 'usd', capture_method: 'sometimes' }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ statusCode: 400, type: 'StripeInvalidRequestError', param: 'capture_method' });
  });

  test.each([
    ['2023-10-16', 'automatic'],
    ['2024-04-10', 'automatic_async'],
    [LATEST_API_VERSION, 'automatic_async'],
  ])('raw HTTP at %s: %s', async (version, expected) => {
    const res = await post(newTestKey(), PI, card({ payment_method: 'pm_card_visa', confirm: true }), at(version));
    expect(res.status).toBe(200);
    expect(res.body.capture_method).toBe(expected);
    // One that is sent is kept at every version.
    expect((await post(newTestKey(), PI, card({ capture_method: 'manual' }), at(version))).body.capture_method).toBe('manual');
  });
});
