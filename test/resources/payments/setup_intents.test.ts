import { bearer, newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { expectNowhereAtRest } from '../../helpers/atRest';
import { createAccount, createCustomer, createPaymentMethod } from '../../helpers/fixtures';
import { privateDatabase, type PrivateDatabase } from '../../helpers/isolation';
import { expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { sdkTypeProblems } from '../../helpers/sdkTypes';
import { expectError, requestsOf } from '../../helpers/requests';
import { AUTHENTICATION_TTL_SECONDS } from '../../../src/resources/payments/authentications/service';
import { expireChallenge, reconcileAuthenticationExpiries } from '../../../src/resources/payments/authentications/pipeline';
import { expiryJobId } from '../../../src/resources/payments/authentications/jobs';
import { LATEST_API_VERSION } from '../../../src/kernel/versions';
import { countPostgres } from '../../helpers/postgresCounts';

// SetupIntents end to end: create (and confirm=true), retrieve, update, list, confirm and cancel;
// every kind of test card's outcome (success, decline, 3-D Secure), the card attached to the
// customer and marked ready off-session, the events each change writes, the client secret and
// the challenge page's token sealed at rest, concurrent confirmations, Connect, and the hosted
// challenge page answered over HTTP (completed, failed, used twice) and left to expire.
// The file has a database of its own, so its at-rest search sees only its own rows.

let nowMs = Date.now();
const clock = { nowMs: () => nowMs };

let db: PrivateDatabase;
let t: TestApp;
beforeAll(async () => {
  db = await privateDatabase('setup_intents');
  t = await startTestApp({ DATABASE_URL: db.url }, { clock });
});
afterAll(async () => {
  await t.close();
  await db.drop();
});

const { post, get, eventsOf } = requestsOf(() => t);

const SI = '/v1/setup_intents';
const RETURN_URL = 'http://127.0.0.1:0/done?order=42';
/** A SetupIntent that takes cards only: no redirect-based methods, so no return_url is needed to confirm. */
const cardsOnly = { allowed_payment_method_types: ['card'] };

const pmRow = (id: string) => t.runtime.prisma.paymentMethod.findUniqueOrThrow({ where: { id } });
const siRow = (id: string) => t.runtime.prisma.setupIntent.findUniqueOrThrow({ where: { id } });
const hostedPath = (url: string) => new URL(url).pathname;

async function confirmedWith(key: string, card: string, extra: Record<string, unknown> = {}) {
  const customer = (await createCustomer(t, key)).id;
  const res = await post(key, SI, { customer, payment_method: card, confirm: true, ...cardsOnly, ...extra });
  return { customer, res };
}

describe('create and retrieve', () => {
  test('a new SetupIntent: requires_payment_method, its client secret, the defaults; setup_intent.created without the secret', async () => {
    const key = newTestKey();
    const res = await post(key, SI, { metadata: { order: '1' }, description: 'Save a card' });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostSetupIntents', 200, res.body);
    expect(sdkTypeProblems(res.body)).toEqual([]);
    expect(res.body).toMatchObject({
      object: 'setup_intent',
      status: 'requires_payment_method',
      usage: 'off_session',
      customer: null,
      payment_method: null,
      payment_method_types: ['card'],
      allowed_payment_method_types: null,
      automatic_payment_methods: { enabled: true, allow_redirects: 'always' },
      metadata: { order: '1' },
      description: 'Save a card',
      next_action: null,
      last_setup_error: null,
      latest_attempt: null,
      livemode: false,
    });
    expect(res.body.client_secret).toMatch(new RegExp(`^${res.body.id}_secret_[A-Za-z0-9]+$`));
    const retrieved = await get(key, `${SI}/${res.body.id}`);
    expect(retrieved.body).toEqual(res.body);
    const [event] = await eventsOf(key, 'setup_intent.created');
    expect(event.data.object).toMatchObject({ id: res.body.id, status: 'requires_payment_method', client_secret: null });
    // Sealed at rest, never logged.
    expect((await siRow(res.body.id)).clientSecret).toMatch(/^sealed:v1:/);
    await expectNowhereAtRest(t, res.body.client_secret, [res.body.id]);
  });

  test('parameters: usage, payment_method_types, automatic_payment_methods, a payment method (requires_confirmation), bad references', async () => {
    const key = newTestKey();
    const typed = await post(key, SI, { usage: 'on_session', ...cardsOnly, payment_method: 'pm_card_visa' });
    expect(typed.body).toMatchObject({ usage: 'on_session', automatic_payment_methods: null, allowed_payment_method_types: ['card'], payment_method_types: ['card'], status: 'requires_confirmation' });
    expect(typed.body.payment_method).toMatch(/^pm_/);
    const never = await post(key, SI, { automatic_payment_methods: { enabled: true, allow_redirects: 'never' } });
    expect(never.body.automatic_payment_methods).toEqual({ enabled: true, allow_redirects: 'never' });
    expectError(await post(key, SI, { automatic_payment_methods: { enabled: true }, ...cardsOnly }), 400, { code: 'parameters_exclusive' });
    expectError(await post(key, SI, { usage: 'sometimes' }), 400, { param: 'usage' });
    expectError(await post(key, SI, { allowed_payment_method_types: ['ideal'] }), 400, { param: 'allowed_payment_method_types[0]' });
    // Before 2026-09-30.endive the list was `payment_method_types`; today that name is unknown.
    const today = await post(key, SI, { payment_method_types: ['card'] }, { 'Stripe-Version': LATEST_API_VERSION });
    expectError(today, 400, { code: 'parameter_unknown', param: 'payment_method_types' });
    expect(today.body.error.message).toContain('use `allowed_payment_method_types` instead');
    const pinned = newTestKey();
    const older = await post(pinned, SI, { payment_method_types: ['card'] }, { 'Stripe-Version': '2026-08-26.dahlia' });
    expect(older.body).toMatchObject({ automatic_payment_methods: null, payment_method_types: ['card'] });
    expectError(await post(pinned, SI, { payment_method_types: ['ideal'] }, { 'Stripe-Version': '2026-08-26.dahlia' }), 400, { param: 'payment_method_types[0]' });
    expectError(await post(key, SI, { customer: 'cus_nope' }), 400, { code: 'resource_missing', param: 'customer' });
    expectError(await post(key, SI, { payment_method: 'pm_nope' }), 400, { code: 'resource_missing', param: 'payment_method' });
    expectError(await post(key, SI, { on_behalf_of: 'acct_nope' }), 400, { code: 'resource_missing', param: 'on_behalf_of' });
    expectError(await post(key, SI, { return_url: RETURN_URL }), 400, { param: 'return_url' });
    expectError(await post(key, SI, { attach_to_self: true, customer: (await createCustomer(t, key)).id }), 400, { param: 'attach_to_self' });
    expectError(await get(key, `${SI}/seti_nope`), 404, { code: 'resource_missing', message: "No such setupintent: 'seti_nope'" });
  });

  test('a client_secret sent must be its own; a wrong one shows nothing of it', async () => {
    const key = newTestKey();
    const { body } = await post(key, SI, {});
    expect((await get(key, `${SI}/${body.id}?client_secret=${body.client_secret}`)).body.id).toBe(body.id);
    const wrong = await get(key, `${SI}/${body.id}?client_secret=${body.id}_secret_wrong`);
    expectError(wrong, 400, { param: 'client_secret', code: 'setup_intent_invalid_parameter' });
    expect(JSON.stringify(wrong.body)).not.toContain(body.client_secret);
    expect(wrong.body.error.setup_intent).toBeUndefined();
  });

  test('a publishable key retrieves and confirms with the client secret, and does nothing else', async () => {
    const key = newTestKey();
    const pk = `pk_test_${key.slice('sk_test_'.length)}`;
    const customer = (await createCustomer(t, key)).id;
    const { body } = await post(key, SI, { customer, ...cardsOnly });
    expect((await get(pk, `${SI}/${body.id}?client_secret=${body.client_secret}`)).body).toEqual(body);
    expectError(await get(pk, `${SI}/${body.id}`), 400, { code: 'parameter_missing', param: 'client_secret' });
    const wrong = await get(pk, `${SI}/${body.id}?client_secret=${body.id}_secret_wrong`);
    expectError(wrong, 400, { code: 'setup_intent_invalid_parameter', param: 'client_secret' });
    expect(JSON.stringify(wrong.body)).not.toContain(body.id + '_secret_' + body.client_secret.split('_secret_')[1]);
    // Another intent's secret opens nothing either.
    const other = (await post(key, SI, {})).body;
    expectError(await get(pk, `${SI}/${body.id}?client_secret=${other.client_secret}`), 400, { code: 'setup_intent_invalid_parameter' });
    expectError(await post(pk, `${SI}/${body.id}/confirm`, { payment_method: 'pm_card_visa' }), 400, { code: 'parameter_missing', param: 'client_secret' });
    const confirmed = await post(pk, `${SI}/${body.id}/confirm`, { client_secret: body.client_secret, payment_method: 'pm_card_visa' });
    expect(confirmed.body).toMatchObject({ id: body.id, status: 'succeeded', customer });
    for (const refused of [await post(pk, SI, {}), await get(pk, SI), await post(pk, `${SI}/${body.id}`, { metadata: { a: '1' } }), await post(pk, `${SI}/${other.id}/cancel`, {})]) {
      expectError(refused, 401, { code: 'secret_key_required' });
    }
  });

  test('on_behalf_of names a connected account of the platform; under Stripe-Account the intent is the connected account’s', async () => {
    const key = newTestKey();
    const connected = (await createAccount(t, key)).id;
    expect((await post(key, SI, { on_behalf_of: connected })).body.on_behalf_of).toBe(connected);
    const other = (await createAccount(t, newTestKey())).id;
    expectError(await post(key, SI, { on_behalf_of: other }), 400, { code: 'resource_missing', param: 'on_behalf_of' });

    const as = { 'Stripe-Account': connected };
    const customer = (await t.http().post('/v1/customers').set(bearer(key)).set(as).type('form').send('')).body.id;
    const direct = await post(key, SI, { customer, payment_method: 'pm_card_visa', confirm: true, ...cardsOnly }, as);
    expect(direct.body.status).toBe('succeeded');
    expect((await siRow(direct.body.id)).accountId).toBe(connected);
    expect((await get(key, `${SI}/${direct.body.id}`, as)).status).toBe(200);
    expectError(await get(key, `${SI}/${direct.body.id}`), 404, { code: 'resource_missing' });
    expect((await get(key, SI)).body.data.map((s: any) => s.id)).not.toContain(direct.body.id);
    expect((await get(newTestKey(), `${SI}/${direct.body.id}`)).status).toBe(404);
  });
});

describe('confirm: every kind of test card', () => {
  test('a card that needs nothing succeeds: attached to the customer (payment_method.attached), ready off-session', async () => {
    const key = newTestKey();
    const { customer, res } = await confirmedWith(key, 'pm_card_visa');
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostSetupIntents', 200, res.body);
    expect(res.body).toMatchObject({ status: 'succeeded', customer, next_action: null, last_setup_error: null });
    expect(res.body.latest_attempt).toMatch(/^setatt_/);
    const pm = await pmRow(res.body.payment_method);
    expect({ customer: pm.customerId, ready: pm.offSessionReady }).toEqual({ customer, ready: true });
    expect((await eventsOf(key, 'payment_method.attached'))[0].data.object).toMatchObject({ id: pm.id, customer });
    const [succeeded] = await eventsOf(key, 'setup_intent.succeeded');
    expect(succeeded.data.object).toMatchObject({ id: res.body.id, status: 'succeeded', client_secret: null });
    expect((await eventsOf(key, 'setup_intent.created')).length).toBe(1);

    const onSession = await confirmedWith(key, 'pm_card_mastercard', { usage: 'on_session' });
    expect((await pmRow(onSession.res.body.payment_method)).offSessionReady).toBe(false);
    // 4000000000000341 attaches and sets up; only its charges fail.
    const attachOnly = await confirmedWith(key, 'pm_card_chargeCustomerFail');
    expect(attachOnly.res.body.status).toBe('succeeded');
    expect((await pmRow(attachOnly.res.body.payment_method)).customerId).toBe(attachOnly.customer);
  });

  test('confirm as its own step, with the payment method given there; without a customer nothing is attached', async () => {
    const key = newTestKey();
    const { body } = await post(key, SI, cardsOnly);
    const pm = (await createPaymentMethod(t, key)).id;
    const confirmed = await post(key, `${SI}/${body.id}/confirm`, { payment_method: pm });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toMatchObject({ status: 'succeeded', payment_method: pm, customer: null });
    expect(confirmed.body.client_secret).toBe(body.client_secret);
    expect((await pmRow(pm)).customerId).toBeNull();
    expect((await eventsOf(key, 'payment_method.attached')).length).toBe(0);
  });

  test.each([
    ['pm_card_chargeDeclined', 'card_declined', 'generic_decline'],
    ['pm_card_chargeDeclinedInsufficientFunds', 'card_declined', 'insufficient_funds'],
    ['pm_card_chargeDeclinedExpiredCard', 'expired_card', 'expired_card'],
    ['pm_card_chargeDeclinedIncorrectCvc', 'incorrect_cvc', 'incorrect_cvc'],
    ['pm_card_chargeDeclinedFraudulent', 'card_declined', 'fraudulent'],
  ])('%s fails: 402 %s (%s), last_setup_error, back to requires_payment_method, setup_intent.setup_failed', async (card, code, declineCode) => {
    const key = newTestKey();
    const { customer, res } = await confirmedWith(key, card);
    expectError(res, 402, { type: 'card_error', code, decline_code: declineCode });
    const id = res.body.error.setup_intent.id;
    expect(res.body.error.setup_intent).toMatchObject({ status: 'requires_payment_method', client_secret: null });
    const after = (await get(key, `${SI}/${id}`)).body;
    expectMatchesResponseSchema('GetSetupIntentsIntent', 200, after);
    expect(after).toMatchObject({ status: 'requires_payment_method', payment_method: null, customer });
    expect(after.last_setup_error).toMatchObject({ type: 'card_error', code, decline_code: declineCode });
    expect(after.last_setup_error.payment_method.id).toMatch(/^pm_/);
    expect((await pmRow(after.last_setup_error.payment_method.id)).customerId).toBeNull();
    expect((await eventsOf(key, 'setup_intent.setup_failed'))[0].data.object.id).toBe(id);
    // The intent can be confirmed again with another card.
    expect((await post(key, `${SI}/${id}/confirm`, { payment_method: 'pm_card_visa' })).body).toMatchObject({ status: 'succeeded', last_setup_error: null });
  });

  test.each(['pm_card_authenticationRequiredOnSetup', 'pm_card_authenticationRequired', 'pm_card_threeDSecure2Required'])(
    '%s needs authentication: requires_action with the hosted challenge (redirect_to_url with a return_url, else use_stripe_sdk)',
    async (card) => {
      const key = newTestKey();
      const { res } = await confirmedWith(key, card, { return_url: RETURN_URL });
      expect(res.status).toBe(200);
      expectMatchesResponseSchema('PostSetupIntents', 200, res.body);
      expect(res.body.status).toBe('requires_action');
      expect(res.body.next_action).toEqual({ type: 'redirect_to_url', redirect_to_url: { return_url: RETURN_URL, url: expect.stringMatching(/\/hosted\/three_d_secure\/[A-Za-z0-9]{48}$/) } });
      expect(res.body.next_action.redirect_to_url.url.startsWith(t.config.publicUrl)).toBe(true);
      expect((await get(key, `${SI}/${res.body.id}`)).body.next_action).toEqual(res.body.next_action);
      const [event] = await eventsOf(key, 'setup_intent.requires_action');
      expect(event.data.object).toMatchObject({ id: res.body.id, status: 'requires_action', next_action: null });
      expect((await pmRow(res.body.payment_method)).customerId).toBeNull();

      const sdk = await confirmedWith(key, card);
      expect(sdk.res.body.next_action).toEqual({
        type: 'use_stripe_sdk',
        use_stripe_sdk: { type: 'three_d_secure_redirect', stripe_js: expect.stringMatching(/\/hosted\/three_d_secure\/[A-Za-z0-9]{48}$/), source: null },
      });
      expectMatchesResponseSchema('PostSetupIntents', 200, sdk.res.body);
    },
  );

  test('redirect-based payment methods (the default) need a return_url unless Stripe.js confirms; a return_url must be an http(s) URL', async () => {
    const key = newTestKey();
    const { body } = await post(key, SI, { payment_method: 'pm_card_visa' });
    expectError(await post(key, `${SI}/${body.id}/confirm`, {}), 400, { type: 'invalid_request_error' });
    expectError(await post(key, `${SI}/${body.id}/confirm`, { return_url: 'javascript:alert(1)' }), 400, { code: 'url_invalid', param: 'return_url' });
    expect((await post(key, `${SI}/${body.id}/confirm`, { use_stripe_sdk: true })).body.status).toBe('succeeded');
    const withUrl = await post(key, SI, { payment_method: 'pm_card_visa', confirm: true, return_url: RETURN_URL });
    expect(withUrl.body.status).toBe('succeeded');
  });

  test('confirming without a payment method, or once succeeded or canceled: setup_intent_unexpected_state', async () => {
    const key = newTestKey();
    const bare = (await post(key, SI, cardsOnly)).body;
    expectError(await post(key, `${SI}/${bare.id}/confirm`, {}), 400, { code: 'setup_intent_unexpected_state' });
    const { res } = await confirmedWith(key, 'pm_card_visa');
    const again = await post(key, `${SI}/${res.body.id}/confirm`, {});
    expectError(again, 400, { code: 'setup_intent_unexpected_state' });
    expect(again.body.error.setup_intent).toMatchObject({ id: res.body.id, status: 'succeeded', client_secret: null });
    await post(key, `${SI}/${bare.id}/cancel`, {});
    expectError(await post(key, `${SI}/${bare.id}/confirm`, { payment_method: 'pm_card_visa' }), 400, { code: 'setup_intent_unexpected_state' });
  });

  test('two concurrent confirmations: one wins, the other gets setup_intent_unexpected_state; one set of events', async () => {
    const key = newTestKey();
    const customer = (await createCustomer(t, key)).id;
    const { body } = await post(key, SI, { customer, payment_method: 'pm_card_visa', ...cardsOnly });
    const answers = await Promise.all([0, 1, 2].map(() => post(key, `${SI}/${body.id}/confirm`, {})));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400, 400]);
    for (const a of answers.filter((x) => x.status === 400)) expect(a.body.error.code).toBe('setup_intent_unexpected_state');
    expect((await eventsOf(key, 'setup_intent.succeeded')).length).toBe(1);
    expect((await eventsOf(key, 'payment_method.attached')).length).toBe(1);
  });

  test('an Idempotency-Key replays the confirmation (with its client secret)', async () => {
    const key = newTestKey();
    const { body } = await post(key, SI, { payment_method: 'pm_card_visa', ...cardsOnly });
    const headers = { 'Idempotency-Key': `confirm-${body.id}` };
    const first = await post(key, `${SI}/${body.id}/confirm`, {}, headers);
    const second = await post(key, `${SI}/${body.id}/confirm`, {}, headers);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toEqual(first.body);
    expect((await eventsOf(key, 'setup_intent.succeeded')).length).toBe(1);
  });
});

describe('update, cancel, list', () => {
  test('update: metadata and description always; customer, payment method and types before it succeeded', async () => {
    const key = newTestKey();
    const { body } = await post(key, SI, cardsOnly);
    const customer = (await createCustomer(t, key)).id;
    const updated = await post(key, `${SI}/${body.id}`, { metadata: { a: '1' }, description: 'd', customer, payment_method: 'pm_card_visa' });
    expect(updated.status).toBe(200);
    expectMatchesResponseSchema('PostSetupIntentsIntent', 200, updated.body);
    expect(updated.body).toMatchObject({ metadata: { a: '1' }, description: 'd', customer, status: 'requires_confirmation' });
    expect((await post(key, `${SI}/${body.id}/confirm`, {})).body.status).toBe('succeeded');
    expect((await post(key, `${SI}/${body.id}`, { metadata: { a: '' }, description: '' })).body).toMatchObject({ metadata: {}, description: null });
    expectError(await post(key, `${SI}/${body.id}`, { payment_method: 'pm_card_visa' }), 400, { code: 'setup_intent_unexpected_state' });
    expectError(await post(key, `${SI}/seti_nope`, { metadata: { a: '1' } }), 404, { code: 'resource_missing' });
  });

  test('an update without a card is one commit in 4 round trips (BEGIN, the locked read, one statement, COMMIT)', async () => {
    const key = newTestKey();
    const { body } = await post(key, SI, { metadata: { a: '1', b: '2' } });
    const counted = await countPostgres(() => post(key, `${SI}/${body.id}`, { metadata: { a: '' }, description: 'd', allowed_payment_method_types: ['card'] }, { 'Idempotency-Key': `si-update-${body.id}` }));
    expect(counted.result.status).toBe(200);
    expectMatchesResponseSchema('PostSetupIntentsIntent', 200, counted.result.body);
    expect(counted.result.body).toMatchObject({ metadata: { b: '2' }, description: 'd', payment_method_types: ['card'], automatic_payment_methods: null, status: 'requires_payment_method' });
    expect(counted.result.body.client_secret).toBe(body.client_secret);
    expect({ roundTrips: counted.roundTrips, commits: counted.commits, rollbacks: counted.rollbacks }).toEqual({ roundTrips: 4, commits: 1, rollbacks: 0 });
    expect((await get(key, `${SI}/${body.id}`)).body).toEqual(counted.result.body);
    // Replayed by its key; no event (the public API has no setup_intent.updated).
    expect((await post(key, `${SI}/${body.id}`, { metadata: { a: '' }, description: 'd', allowed_payment_method_types: ['card'] }, { 'Idempotency-Key': `si-update-${body.id}` })).body).toEqual(counted.result.body);
    expect((await get(key, '/v1/events?limit=100')).body.data.map((e: any) => e.type)).toEqual(['setup_intent.created']);
    // A customer is locked and kept, in the same one commit.
    expectError(await post(key, `${SI}/${body.id}`, { customer: 'cus_nope' }), 400, { code: 'resource_missing' });
    const customer = (await createCustomer(t, key)).id;
    const withCustomer = await countPostgres(() => post(key, `${SI}/${body.id}`, { customer }));
    expect(withCustomer.result.body.customer).toBe(customer);
    expect(withCustomer.commits).toBe(1);
    expectError(await post(newTestKey(), `${SI}/${body.id}`, { description: 'x' }), 404, { code: 'resource_missing' });
  });

  test('cancel: a reason, setup_intent.canceled, the open challenge closed; a succeeded one can’t be canceled', async () => {
    const key = newTestKey();
    const { res } = await confirmedWith(key, 'pm_card_authenticationRequired', { return_url: RETURN_URL });
    const page = hostedPath(res.body.next_action.redirect_to_url.url);
    const canceled = await post(key, `${SI}/${res.body.id}/cancel`, { cancellation_reason: 'requested_by_customer' });
    expect(canceled.status).toBe(200);
    expectMatchesResponseSchema('PostSetupIntentsIntentCancel', 200, canceled.body);
    expect(canceled.body).toMatchObject({ status: 'canceled', cancellation_reason: 'requested_by_customer', next_action: null });
    expect((await eventsOf(key, 'setup_intent.canceled'))[0].data.object.id).toBe(res.body.id);
    expect((await t.http().get(page)).status).toBe(410);
    expectError(await post(key, `${SI}/${res.body.id}/cancel`, {}), 400, { code: 'setup_intent_unexpected_state' });
    expectError(await post(key, `${SI}/${res.body.id}/cancel`, { cancellation_reason: 'bored' }), 400, { param: 'cancellation_reason' });
    const done = await confirmedWith(key, 'pm_card_visa');
    expectError(await post(key, `${SI}/${done.res.body.id}/cancel`, {}), 400, { code: 'setup_intent_unexpected_state' });
  });

  test('list: newest first, the caller’s only; customer, payment_method and created filter', async () => {
    const key = newTestKey();
    const a = await confirmedWith(key, 'pm_card_visa');
    const b = (await post(key, SI, {})).body;
    await post(newTestKey(), SI, {});
    const all = await get(key, SI);
    expectMatchesResponseSchema('GetSetupIntents', 200, all.body);
    expect(all.body.data.map((s: any) => s.id)).toEqual([b.id, a.res.body.id]);
    expect(all.body.data[0].client_secret).toBe(b.client_secret);
    expect((await get(key, `${SI}?customer=${a.customer}`)).body.data.map((s: any) => s.id)).toEqual([a.res.body.id]);
    expect((await get(key, `${SI}?payment_method=${a.res.body.payment_method}`)).body.data.map((s: any) => s.id)).toEqual([a.res.body.id]);
    expect((await get(key, `${SI}?created[gt]=${b.created + 10}`)).body.data).toEqual([]);
    expect((await get(key, `${SI}?limit=1`)).body).toMatchObject({ has_more: true, data: [{ id: b.id }] });
    const expanded = await get(key, `${SI}?expand[]=data.customer&expand[]=data.payment_method&customer=${a.customer}`);
    expect(expanded.body.data[0]).toMatchObject({ customer: { id: a.customer, object: 'customer' }, payment_method: { object: 'payment_method' } });
  });
});

describe('the hosted 3-D Secure challenge over HTTP', () => {
  async function challenged(key: string, card = 'pm_card_authenticationRequiredOnSetup', returnUrl = RETURN_URL) {
    const { customer, res } = await confirmedWith(key, card, { return_url: returnUrl });
    expect(res.body.status).toBe('requires_action');
    return { customer, intent: res.body, page: hostedPath(res.body.next_action.redirect_to_url.url) };
  }

  test('the page explains and offers both answers; "Complete authentication" succeeds and redirects with the redirect parameters', async () => {
    const key = newTestKey();
    const { customer, intent, page } = await challenged(key);
    const shown = await t.http().get(page);
    expect(shown.status).toBe(200);
    expect(shown.headers['cache-control']).toBe('no-store');
    expect(shown.headers['content-security-policy']).toContain("default-src 'none'");
    expect(shown.text).toContain('Complete authentication');
    expect(shown.text).toContain('Fail authentication');
    expect(shown.text).toContain(intent.id);

    const answered = await t.http().post(page).type('form').send('outcome=complete');
    expect(answered.status).toBe(303);
    const back = new URL(answered.headers.location);
    expect(back.origin + back.pathname).toBe('http://127.0.0.1:0/done');
    expect(Object.fromEntries(back.searchParams)).toEqual({ order: '42', setup_intent: intent.id, setup_intent_client_secret: intent.client_secret, redirect_status: 'succeeded' });
    const after = (await get(key, `${SI}/${intent.id}`)).body;
    expect(after).toMatchObject({ status: 'succeeded', next_action: null, payment_method: intent.payment_method });
    const pm = await pmRow(intent.payment_method);
    expect({ customer: pm.customerId, ready: pm.offSessionReady }).toEqual({ customer, ready: true });
    const [event] = await eventsOf(key, 'setup_intent.succeeded');
    expect(event.request).toEqual({ id: null, idempotency_key: null });
    expect((await eventsOf(key, 'payment_method.attached')).length).toBe(1);

    // Single use: the link says so, and a second answer changes nothing.
    const used = await t.http().get(page);
    expect(used.status).toBe(410);
    expect(used.text).toContain('already been answered');
    expect((await t.http().post(page).type('form').send('outcome=fail')).status).toBe(410);
    expect((await get(key, `${SI}/${intent.id}`)).body.status).toBe('succeeded');
  });

  test('"Fail authentication" fails the setup (setup_intent_authentication_failure, setup_intent.setup_failed), redirect_status=failed', async () => {
    const key = newTestKey();
    const { intent, page } = await challenged(key, 'pm_card_authenticationRequired', 'http://127.0.0.1:0/back');
    const answered = await t.http().post(page).type('form').send('outcome=fail');
    expect(answered.status).toBe(303);
    expect(Object.fromEntries(new URL(answered.headers.location).searchParams)).toMatchObject({ setup_intent: intent.id, redirect_status: 'failed' });
    const after = (await get(key, `${SI}/${intent.id}`)).body;
    expectMatchesResponseSchema('GetSetupIntentsIntent', 200, after);
    expect(after).toMatchObject({ status: 'requires_payment_method', payment_method: null, next_action: null });
    expect(after.last_setup_error).toMatchObject({ code: 'setup_intent_authentication_failure', type: 'invalid_request_error', payment_method: { id: intent.payment_method } });
    expect((await eventsOf(key, 'setup_intent.setup_failed')).length).toBe(1);
    expect((await pmRow(intent.payment_method)).customerId).toBeNull();
  });

  test('4000008260003178 sets up once authenticated; a new confirmation closes the old challenge', async () => {
    const key = newTestKey();
    const first = await challenged(key, 'pm_card_authenticationRequiredChargeDeclinedInsufficientFunds');
    const again = await post(key, `${SI}/${first.intent.id}/confirm`, { return_url: RETURN_URL });
    const second = hostedPath(again.body.next_action.redirect_to_url.url);
    expect(second).not.toBe(first.page);
    expect((await t.http().get(first.page)).status).toBe(410);
    expect((await t.http().post(second).type('form').send('outcome=complete')).status).toBe(303);
    expect((await get(key, `${SI}/${first.intent.id}`)).body.status).toBe('succeeded');
  });

  test('a customer deleted while the challenge was open: completing it fails the setup, and nothing is attached', async () => {
    const key = newTestKey();
    const { customer, intent, page } = await challenged(key);
    expect((await t.http().delete(`/v1/customers/${customer}`).set(bearer(key))).status).toBe(200);
    expect((await t.http().post(page).type('form').send('outcome=complete')).status).toBe(303);
    const after = (await get(key, `${SI}/${intent.id}`)).body;
    expect(after).toMatchObject({ status: 'requires_payment_method', last_setup_error: { code: 'resource_missing' } });
    expect((await pmRow(intent.payment_method)).customerId).toBeNull();
  });

  test('unknown tokens and bad answers get message pages; the token is sealed at rest', async () => {
    expect((await t.http().get('/hosted/three_d_secure/nope')).status).toBe(404);
    expect((await t.http().get(`/hosted/three_d_secure/${'a'.repeat(48)}`)).status).toBe(404);
    const key = newTestKey();
    const { intent, page } = await challenged(key);
    expect((await t.http().post(page).type('form').send('outcome=maybe')).status).toBe(400);
    expect((await t.http().get(`${page}/popup/javascript:alert(1)`)).status).toBe(400);
    const token = page.split('/').pop()!;
    await expectNowhereAtRest(t, token, [intent.id]);
    expect((await get(key, `${SI}/${intent.id}`)).body.status).toBe('requires_action');
  });

  test('a challenge left unanswered expires: the job at its due time fails the intent; the reconciler re-adds due ones', async () => {
    const key = newTestKey();
    const { intent, page } = await challenged(key);
    const challenge = await t.runtime.prisma.paymentAuthentication.findFirstOrThrow({ where: { intentId: intent.id, status: 'pending' } });
    // Early: nothing happens.
    expect(await expireChallenge(t.runtime, challenge.id)).toEqual([]);
    const reconciledEarly = await reconcileAuthenticationExpiries(t.runtime, nowMs);
    expect(reconciledEarly.authenticationExpiries).toBe(0);
    nowMs += (AUTHENTICATION_TTL_SECONDS + 1) * 1000;
    try {
      expect((await t.http().get(page)).status).toBe(410);
      const reconciled = await reconcileAuthenticationExpiries(t.runtime, nowMs);
      expect(reconciled.authenticationExpiries).toBeGreaterThanOrEqual(1);
      expect(expiryJobId(challenge.id, challenge.expiresAt)).toBe(`expire-${challenge.id}-${challenge.expiresAt}`);
      const events = await expireChallenge(t.runtime, challenge.id);
      expect(events.length).toBe(1);
      expect(await expireChallenge(t.runtime, challenge.id)).toEqual([]);
      const after = (await get(key, `${SI}/${intent.id}`)).body;
      expect(after).toMatchObject({ status: 'requires_payment_method', last_setup_error: { code: 'setup_intent_authentication_failure' } });
      expect((await t.runtime.prisma.paymentAuthentication.findUniqueOrThrow({ where: { id: challenge.id } })).status).toBe('expired');
      expect((await t.http().post(page).type('form').send('outcome=complete')).status).toBe(410);
    } finally {
      nowMs = Date.now();
    }
  });
});
