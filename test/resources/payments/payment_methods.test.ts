import { bearer, newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { expectNowhereAtRest } from '../../helpers/atRest';
import { createAccount, createCustomer, createPaymentMethod, form } from '../../helpers/fixtures';
import { privateDatabase, type PrivateDatabase } from '../../helpers/isolation';
import { expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { Encryption } from '../../../src/lib/encryption';
import { purgeExpiredCvcs } from '../../../src/resources/payments/payment_methods/service';
import { TEST_CARD_NAMES, paymentResult, testCardOf, type CardOutcome } from '../../../src/resources/payments/payment_methods/testCards';
import { expectError, requestsOf } from '../../helpers/requests';
import { countPostgres } from '../../helpers/postgresCounts';

// Card payment methods end to end: create from numbers and test tokens, the card checks
// (incorrect_number, test_mode_live_card, expiry, CVC), every public test PaymentMethod id and
// token, retrieve, update, list, attach and detach with their events, isolation, and the number
// and CVC sealed at rest (every table, a pg_dump and the logs) with the CVC purged after its TTL.
// The file has a database of its own, so its at-rest search sees only its own rows.

let nowMs = Date.UTC(2026, 11, 10, 12, 0, 0);
const clock = { nowMs: () => nowMs };

let db: PrivateDatabase;
let t: TestApp;
beforeAll(async () => {
  db = await privateDatabase('payment_methods');
  t = await startTestApp({ DATABASE_URL: db.url, CARD_CVC_TTL_SECONDS: '60' }, { clock });
});
afterAll(async () => {
  await t.close();
  await db.drop();
});

const { post, get } = requestsOf(() => t);

const PM = '/v1/payment_methods';
const card = (number: string, extra: Record<string, unknown> = {}) => ({ type: 'card', card: { number, exp_month: 12, exp_year: 2030, ...extra } });

describe('create', () => {
  test('from a test card number: brand, funding, country, last4, fingerprint; never the number', async () => {
    const key = newTestKey();
    const res = await post(key, PM, { ...card('4000056655665556', { cvc: '123' }), billing_details: { name: 'Jenny Rosen', email: 'j@example.com' }, metadata: { a: '1' } });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostPaymentMethods', 200, res.body);
    expect(res.body).toMatchObject({
      object: 'payment_method',
      type: 'card',
      customer: null,
      metadata: { a: '1' },
      billing_details: { name: 'Jenny Rosen', email: 'j@example.com', phone: null, address: null },
      card: { brand: 'visa', funding: 'debit', country: 'US', last4: '5556', exp_month: 12, exp_year: 2030, checks: { cvc_check: 'unchecked' } },
    });
    expect(JSON.stringify(res.body)).not.toContain('4000056655665556');
    const again = await post(key, PM, card('4000056655665556'));
    expect(again.body.card.fingerprint).toBe(res.body.card.fingerprint);
    expect(again.body.card.checks.cvc_check).toBeNull();
    expect((await post(key, PM, card('4242424242424242'))).body.card.fingerprint).not.toBe(res.body.card.fingerprint);
  });

  test('the card checks answer as the public API does', async () => {
    const key = newTestKey();
    expectError(await post(key, PM, card('4242424242424241')), 402, { type: 'card_error', code: 'incorrect_number', param: 'card[number]' });
    expectError(await post(key, PM, card('42424242')), 402, { type: 'card_error', code: 'incorrect_number' });
    // A real-looking number (valid Luhn) that is no test card.
    const live = await post(key, PM, card('4111111111111111'));
    expectError(live, 402, { type: 'card_error', code: 'card_declined', decline_code: 'test_mode_live_card' });
    expect(JSON.stringify(live.body)).not.toContain('4111111111111111');
    expectError(await post(key, PM, card('4242424242424242', { exp_year: 2020 })), 402, { code: 'invalid_expiry_year', param: 'card[exp_year]' });
    expectError(await post(key, PM, card('4242424242424242', { exp_month: 13 })), 402, { code: 'invalid_expiry_month', param: 'card[exp_month]' });
    expectError(await post(key, PM, card('4242424242424242', { exp_year: 2026, exp_month: 11 })), 402, { code: 'invalid_expiry_month' });
    expectError(await post(key, PM, card('4242424242424242', { cvc: '12' })), 402, { code: 'invalid_cvc', param: 'card[cvc]' });
    expectError(await post(key, PM, card('378282246310005', { cvc: '123' })), 402, { code: 'invalid_cvc' });
    expect((await post(key, PM, card('378282246310005', { cvc: '1234' }))).status).toBe(200);
    expectError(await post(key, PM, { type: 'card', card: { number: '4242424242424242' } }), 400, { code: 'parameter_missing', param: 'card[exp_month]' });
    expectError(await post(key, PM, { type: 'card', card: { token: 'tok_bogus' } }), 400, { code: 'resource_missing', param: 'card[token]' });
    expectError(await post(key, PM, { type: 'card', card: { token: 'tok_visa', number: '4242424242424242' } }), 400, { code: 'parameters_exclusive' });
    // A number of the wrong type is refused without repeating it.
    const typed = await t.http().post(PM).set(bearer(key)).type('form').send('type=card&card[number][x]=4242424242424242');
    expect(typed.status).toBe(400);
    expect(JSON.stringify(typed.body)).not.toContain('4242424242424242');
  });

  test('every public test PaymentMethod id and token resolves to its card, with its outcome on the row', async () => {
    const key = newTestKey();
    for (const [name, number] of Object.entries(TEST_CARD_NAMES)) {
      const expected = testCardOf(number)!;
      for (const res of [await get(key, `${PM}/pm_card_${name}`), await post(key, PM, { type: 'card', card: { token: `tok_${name}` } })]) {
        expect({ name, status: res.status }).toEqual({ name, status: 200 });
        expect(res.body.id).toMatch(/^pm_(?!card_)/);
        expect(res.body.card).toMatchObject({ brand: expected.brand, funding: expected.funding, country: expected.country, last4: number.slice(-4), exp_year: 2027 });
        const row = await t.runtime.prisma.paymentMethod.findUniqueOrThrow({ where: { id: res.body.id } });
        expect({ name, outcome: row.outcome }).toEqual({ name, outcome: expected.outcome });
      }
    }
    // Each use makes a fresh payment method.
    expect((await get(key, `${PM}/pm_card_visa`)).body.id).not.toBe((await get(key, `${PM}/pm_card_visa`)).body.id);
    expectError(await get(key, `${PM}/pm_card_bogus`), 404, { code: 'resource_missing' });
  });

  test('outcomes: what a payment with each test card does', () => {
    const result = (name: string) => paymentResult(testCardOf(TEST_CARD_NAMES[name])!.outcome as CardOutcome);
    expect(result('visa')).toEqual({ status: 'succeeded' });
    expect(result('bypassPending')).toEqual({ status: 'succeeded' });
    expect(result('authenticationRequired')).toEqual({ status: 'requires_action' });
    const declined = (name: string) => {
      const r = result(name);
      if (r.status !== 'declined') throw new Error(`${name} doesn't decline`);
      return r.error.toBody().error;
    };
    expect(declined('chargeDeclined')).toMatchObject({ type: 'card_error', code: 'card_declined', decline_code: 'generic_decline' });
    expect(declined('chargeDeclinedInsufficientFunds')).toMatchObject({ code: 'card_declined', decline_code: 'insufficient_funds' });
    expect(declined('chargeDeclinedExpiredCard')).toMatchObject({ code: 'expired_card' });
    expect(declined('chargeDeclinedIncorrectCvc')).toMatchObject({ code: 'incorrect_cvc' });
    expect(declined('cvcCheckFail')).toMatchObject({ code: 'incorrect_cvc' });
    expect(declined('chargeCustomerFail')).toMatchObject({ decline_code: 'generic_decline' });
  });
});

describe('attach, detach, update, list', () => {
  test('attach and detach emit their events; declining cards fail at attach but chargeCustomerFail attaches', async () => {
    const key = newTestKey();
    const customer = (await createCustomer(t, key)).id;
    const pm = await createPaymentMethod(t, key);
    const attached = await post(key, `${PM}/${pm.id}/attach`, { customer });
    expect(attached.status).toBe(200);
    expectMatchesResponseSchema('PostPaymentMethodsPaymentMethodAttach', 200, attached.body);
    expect(attached.body.customer).toBe(customer);
    // Again to the same customer: unchanged.
    expect((await post(key, `${PM}/${pm.id}/attach`, { customer })).status).toBe(200);
    const other = (await createCustomer(t, key)).id;
    expectError(await post(key, `${PM}/${pm.id}/attach`, { customer: other }), 400, { type: 'invalid_request_error' });
    expectError(await post(key, `${PM}/pm_card_chargeDeclinedInsufficientFunds/attach`, { customer }), 402, { decline_code: 'insufficient_funds' });
    expect((await post(key, `${PM}/pm_card_chargeCustomerFail/attach`, { customer })).status).toBe(200);
    expectError(await post(key, `${PM}/${pm.id}/attach`, { customer: 'cus_nope' }), 400, { code: 'resource_missing', param: 'customer' });

    const listed = await get(key, `${PM}?customer=${customer}&type=card`);
    expectMatchesResponseSchema('GetPaymentMethods', 200, listed.body);
    expect(listed.body.data).toHaveLength(2);
    const expanded = await get(key, `${PM}/${pm.id}?expand[]=customer`);
    expect(expanded.body.customer).toMatchObject({ object: 'customer', id: customer });

    const detached = await post(key, `${PM}/${pm.id}/detach`);
    expect(detached.body.customer).toBeNull();
    expectError(await post(key, `${PM}/${pm.id}/detach`), 400, { type: 'invalid_request_error' });
    const events = (await get(key, '/v1/events?limit=100')).body.data;
    expect(events.filter((e: any) => e.type === 'payment_method.attached').map((e: any) => e.data.object.customer)).toEqual([customer, customer]);
    const [detachedEvent] = events.filter((e: any) => e.type === 'payment_method.detached');
    expect(detachedEvent.data).toMatchObject({ object: { id: pm.id, customer: null }, previous_attributes: { customer } });
  });

  test('update: billing details, metadata and expiry of a saved card, with previous_attributes', async () => {
    const key = newTestKey();
    const pm = await createPaymentMethod(t, key);
    expectError(await post(key, `${PM}/${pm.id}`, { metadata: { a: '1' } }), 400, { type: 'invalid_request_error' });
    const customer = (await createCustomer(t, key)).id;
    await post(key, `${PM}/${pm.id}/attach`, { customer });
    const res = await post(key, `${PM}/${pm.id}`, { metadata: { a: '1' }, billing_details: { name: 'J', address: { country: 'US' } }, card: { exp_month: 1, exp_year: 2031 } });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostPaymentMethodsPaymentMethod', 200, res.body);
    expect(res.body).toMatchObject({ metadata: { a: '1' }, billing_details: { name: 'J', address: { country: 'US', city: null } }, card: { exp_month: 1, exp_year: 2031 } });
    const [event] = (await get(key, '/v1/events?type=payment_method.updated')).body.data;
    expect(event.data.previous_attributes).toMatchObject({ metadata: {}, card: { exp_month: 12 } });
    expectError(await post(key, `${PM}/${pm.id}`, { card: { exp_year: 2001 } }), 402, { code: 'invalid_expiry_year' });
  });

  test('an update is one commit in 4 round trips (BEGIN, the locked read, one statement, COMMIT), its event beside it', async () => {
    const key = newTestKey();
    const pm = await createPaymentMethod(t, key);
    const customer = (await createCustomer(t, key)).id;
    await post(key, `${PM}/${pm.id}/attach`, { customer });
    const params = { metadata: { a: '1' }, billing_details: { email: 'j@example.com' }, allow_redisplay: 'always' };
    const counted = await countPostgres(() => post(key, `${PM}/${pm.id}`, params, { 'Idempotency-Key': `pm-update-${pm.id}` }));
    expect(counted.result.status).toBe(200);
    expect(counted.result.body).toMatchObject({ metadata: { a: '1' }, billing_details: { email: 'j@example.com' }, allow_redisplay: 'always' });
    expect({ roundTrips: counted.roundTrips, commits: counted.commits, rollbacks: counted.rollbacks }).toEqual({ roundTrips: 4, commits: 1, rollbacks: 0 });
    const [event] = (await get(key, '/v1/events?type=payment_method.updated')).body.data;
    expect(event.data.object).toEqual(counted.result.body);
    expect(event.data.previous_attributes).toEqual({ metadata: { a: null }, billing_details: { email: null }, allow_redisplay: 'unspecified' });
    expect((await get(key, `${PM}/${pm.id}`)).body).toEqual(counted.result.body);
    expect((await post(key, `${PM}/${pm.id}`, params, { 'Idempotency-Key': `pm-update-${pm.id}` })).body).toEqual(counted.result.body);
    // Nothing changed: the same answer, no second event.
    expect((await post(key, `${PM}/${pm.id}`, { metadata: { a: '1' } })).body).toEqual(counted.result.body);
    expect((await get(key, '/v1/events?type=payment_method.updated')).body.data).toHaveLength(1);
    expectError(await post(newTestKey(), `${PM}/${pm.id}`, { metadata: { a: '2' } }), 404, { code: 'resource_missing' });
    expectError(await post(key, `${PM}/pm_card_visa`, { metadata: { a: '2' } }), 400, { type: 'invalid_request_error' });
  });

  test('isolation: another key or account can neither see nor use a payment method', async () => {
    const [a, b] = [newTestKey(), newTestKey()];
    const pm = await createPaymentMethod(t, a);
    expectError(await get(b, `${PM}/${pm.id}`), 404, { code: 'resource_missing', message: `No such PaymentMethod: '${pm.id}'` });
    expectError(await post(b, `${PM}/${pm.id}/detach`), 404, { code: 'resource_missing' });
    expect((await get(b, PM)).body.data).toEqual([]);
    expectError(await post(b, '/v1/customers', { payment_method: pm.id }), 400, { code: 'resource_missing', param: 'payment_method' });
    const connected = (await createAccount(t, a)).id;
    const as = { 'Stripe-Account': connected };
    expectError(await get(a, `${PM}/${pm.id}`, as), 404, { code: 'resource_missing' });
    const own = await post(a, PM, { type: 'card', card: { token: 'tok_visa' } }, as);
    expect((await get(a, `${PM}/${own.body.id}`, as)).status).toBe(200);
    expectError(await get(a, `${PM}/${own.body.id}`), 404, { code: 'resource_missing' });
  });
});

describe('sealed at rest', () => {
  test('the number and the CVC are in no table, no pg_dump and no log; the CVC goes after its TTL', async () => {
    const key = newTestKey();
    // A CVC no other test sends, so finding it anywhere means it leaked.
    const res = await post(key, PM, card('6011000990139424', { cvc: '917' }), { 'Idempotency-Key': 'seal-1' });
    expect(res.status).toBe(200);
    const row = await t.runtime.prisma.paymentMethod.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(Encryption.isSealed(row.number)).toBe(true);
    expect(Encryption.isSealed(row.cvc!)).toBe(true);
    expect(row.keyId).toBe(Encryption.keyIdOf(row.number));
    expect(await t.runtime.encryption.open(row.cvc!)).toBe('917');
    await expectNowhereAtRest(t, '6011000990139424', ['payment_methods', res.body.id]);
    // Three digits occur by chance in ids, timestamps and sealed values (base64), so the CVC is
    // looked for where it could leak, this account's card row, kept idempotent response and
    // events, as a token of its own (a value `917`, not digits inside a longer run).
    const account = (await get(key, '/v1/account')).body.id;
    const token = '(^|[^0-9A-Za-z+/])917($|[^0-9A-Za-z+/=])';
    const rows = await t.runtime.prisma.$queryRaw<{ n: bigint }[]>`
      SELECT (SELECT count(*) FROM payment_methods r WHERE r.account_id = ${account} AND (to_jsonb(r) - 'number' - 'cvc')::text ~ ${token})
           + (SELECT count(*) FROM idempotency_records r WHERE r.account_id = ${account} AND r::text ~ ${token})
           + (SELECT count(*) FROM events r WHERE r.account_id = ${account} AND r::text ~ ${token}) AS n`;
    expect(Number(rows[0].n)).toBe(0);
    expect(t.logText()).not.toMatch(/cvc[^\n]{0,40}917/);

    // Not yet expired: kept. Past CARD_CVC_TTL_SECONDS: purged, and the check stays as it was.
    expect(await purgeExpiredCvcs(t.runtime.prisma, Math.floor(nowMs / 1000))).toBe(0);
    expect(await purgeExpiredCvcs(t.runtime.prisma, Math.floor(nowMs / 1000) + 60)).toBeGreaterThanOrEqual(1);
    const purged = await t.runtime.prisma.paymentMethod.findUniqueOrThrow({ where: { id: res.body.id } });
    expect({ cvc: purged.cvc, cvcExpiresAt: purged.cvcExpiresAt }).toEqual({ cvc: null, cvcExpiresAt: null });
    expect((await get(key, `${PM}/${res.body.id}`)).body.card.checks.cvc_check).toBe('unchecked');
  });
});
