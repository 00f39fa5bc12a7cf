import { bearer, newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { expectNowhereAtRest } from '../../helpers/atRest';
import { createAccount, form } from '../../helpers/fixtures';
import { expectErrorBody, expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { COMPONENTS } from '../../../src/resources/connect/account_sessions/serializer';
import { hashSecret } from '../../../src/resources/connect/account_sessions/service';

// Account sessions end to end: create (supertest and the SDK), strict validation of the
// component table, defaults, the single-use sandbox claim (concurrency included), expiry with an
// injected clock, and the secret kept out of the database and the logs.

type Res = { status: number; body: any; headers: Record<string, string> };

let nowMs = Date.UTC(2026, 10, 23, 12, 0, 0);
const clock = { nowMs: () => nowMs };
const TTL = 120;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ ACCOUNT_SESSION_TTL_SECONDS: String(TTL) }, { clock });
});
afterAll(() => t.close());

const post = (key: string, path: string, body: string | Record<string, unknown>, headers: Record<string, string> = {}): Promise<Res> =>
  t.http().post(path).set(bearer(key)).set(headers).type('form').send(typeof body === 'string' ? body : form(body)) as unknown as Promise<Res>;
const createSession = (key: string, body: string | Record<string, unknown>) => post(key, '/v1/account_sessions', body);
const claim = (key: string, client_secret: string, headers: Record<string, string> = {}) =>
  post(key, '/sandbox/v1/account_sessions/claim', { client_secret }, headers);

function expectError(res: Res, status: number, error: Record<string, unknown>): void {
  expect({ status: res.status, error: res.body?.error }).toMatchObject({ status, error });
  expectErrorBody(res.body);
}

async function newPlatform(): Promise<{ key: string; account: string }> {
  const key = newTestKey();
  return { key, account: (await createAccount(t, key)).id };
}

describe('POST /v1/account_sessions', () => {
  test('answers every component, with defaults filled, a long single-use secret and the TTL', async () => {
    const { key, account } = await newPlatform();
    const res = await createSession(key, {
      account,
      components: { payments: { enabled: true, features: { refund_management: false } }, documents: { enabled: true } },
    });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostAccountSessions', 200, res.body);
    expect(res.body).toMatchObject({ object: 'account_session', account, livemode: false, expires_at: Math.floor(nowMs / 1000) + TTL });
    expect(res.body.client_secret).toMatch(/^accs_secret__[A-Za-z0-9]{48}$/);
    expect(Object.keys(res.body.components).sort()).toEqual(Object.keys(COMPONENTS).sort());
    expect(res.body.components.payments).toEqual({
      enabled: true,
      features: {
        capture_payments: true,
        destination_on_behalf_of_charge_management: false,
        dispute_management: true,
        refund_management: false,
        smart_disputes_management: false,
      },
    });
    expect(res.body.components.documents).toEqual({ enabled: true, features: {} });
    expect(res.body.components.account_onboarding).toEqual({
      enabled: false,
      features: { disable_stripe_user_authentication: false, external_account_collection: true },
    });
    // The account records that a session exists.
    const row = await t.runtime.prisma.account.findUniqueOrThrow({ where: { id: account }, select: { sessionCreatedAt: true } });
    expect(row.sessionCreatedAt).toBe(Math.floor(nowMs / 1000));
  });

  test('through the official SDK, in both spellings of the user-authentication feature', async () => {
    const { key, account } = await newPlatform();
    const stripe = t.stripe(key);
    const session = await stripe.accountSessions.create({
      account,
      components: {
        account_onboarding: { enabled: true, features: { disable_stripe_user_authentication: true, external_account_collection: false } },
        payouts: { enabled: true, features: { instant_payouts: true } },
      },
    });
    expect(session.object).toBe('account_session');
    expect(session.account).toBe(account);
    expect(session.client_secret.startsWith('accs_secret__')).toBe(true);
    expect(session.components.account_onboarding.features).toEqual({ disable_stripe_user_authentication: true, external_account_collection: false });
    expect(session.components.payouts.features.instant_payouts).toBe(true);
    expect(session.components.payments.enabled).toBe(false);

    // The spec's spelling is accepted and answered in the public one.
    const spec = await createSession(key, { account, components: { balances: { enabled: true, features: { disable_service_user_authentication: true } } } });
    expect(spec.status).toBe(200);
    expect(spec.body.components.balances.features).toMatchObject({ disable_stripe_user_authentication: true });
    expect(spec.body.components.balances.features).not.toHaveProperty('disable_service_user_authentication');

    const both = await createSession(key, {
      account,
      components: { balances: { enabled: true, features: { disable_service_user_authentication: true, disable_stripe_user_authentication: false } } },
    });
    expectError(both, 400, { code: 'parameters_exclusive', param: 'components[balances][features][disable_stripe_user_authentication]' });

    // The SDK raises the public API's error class.
    await expect(stripe.accountSessions.create({ account: 'acct_nope', components: { payments: { enabled: true } } })).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      code: 'resource_missing',
      param: 'account',
    });
  });

  test('refuses unknown components and features, a missing enabled, and missing parameters', async () => {
    const { key, account } = await newPlatform();
    expectError(await createSession(key, `account=${account}&components[bogus][enabled]=true`), 400, {
      code: 'parameter_unknown',
      param: 'components[bogus]',
    });
    expectError(await createSession(key, `account=${account}&components[payments][enabled]=true&components[payments][features][bogus]=true`), 400, {
      code: 'parameter_unknown',
      param: 'components[payments][features][bogus]',
    });
    // A feature of another component is unknown here.
    expectError(await createSession(key, `account=${account}&components[payments][enabled]=true&components[payments][features][send_money]=true`), 400, {
      code: 'parameter_unknown',
      param: 'components[payments][features][send_money]',
    });
    expectError(await createSession(key, `account=${account}&components[documents][enabled]=true&components[documents][features][x]=true`), 400, {
      code: 'parameter_unknown',
      param: 'components[documents][features][x]',
    });
    expectError(await createSession(key, `account=${account}&components[payments][features][refund_management]=true`), 400, {
      code: 'parameter_missing',
      param: 'components[payments][enabled]',
    });
    expectError(await createSession(key, `account=${account}&components[payments][enabled]=maybe`), 400, {
      param: 'components[payments][enabled]',
    });
    expectError(await createSession(key, `account=${account}`), 400, { code: 'parameter_missing', param: 'components' });
    expectError(await createSession(key, 'components[payments][enabled]=true'), 400, { code: 'parameter_missing', param: 'account' });
    expectError(await createSession(key, `account=${account}&components[payments][enabled]=true&bogus=1`), 400, {
      code: 'parameter_unknown',
      param: 'bogus',
    });
  });

  test('the account must be a connected account of the calling platform', async () => {
    const mine = await newPlatform();
    const other = await newPlatform();
    const body = (account: string) => ({ account, components: { payments: { enabled: true } } });
    expectError(await createSession(mine.key, body(other.account)), 400, { code: 'resource_missing', param: 'account' });
    expectError(await createSession(mine.key, body('acct_0000000000000000')), 400, { code: 'resource_missing', param: 'account' });
    expectError(await createSession(mine.key, body('not an id')), 400, { code: 'resource_missing', param: 'account' });
    // Nothing was recorded on the other platform's account.
    const row = await t.runtime.prisma.account.findUniqueOrThrow({ where: { id: other.account }, select: { sessionCreatedAt: true } });
    expect(row.sessionCreatedAt).toBeNull();
  });
});

describe('POST /sandbox/v1/account_sessions/claim', () => {
  test('answers once with the account and components, without the secret', async () => {
    const { key, account } = await newPlatform();
    const created = await createSession(key, { account, components: { payouts: { enabled: true } } });
    const first = await claim(key, created.body.client_secret);
    expect(first.status).toBe(200);
    expectMatchesResponseSchema('PostSandboxAccountSessionsClaim', 200, first.body);
    expect(first.body).toEqual({
      object: 'account_session_claim',
      account,
      components: created.body.components,
      expires_at: created.body.expires_at,
      livemode: false,
    });
    expect(JSON.stringify(first.body)).not.toContain(created.body.client_secret);
    expectError(await claim(key, created.body.client_secret), 400, { code: 'account_session_already_claimed', param: 'client_secret' });
  });

  test('refuses unknown secrets, and another platform cannot claim (nor use up) a session', async () => {
    const mine = await newPlatform();
    const other = await newPlatform();
    expectError(await claim(mine.key, 'accs_secret__nope'), 400, { code: 'resource_missing', param: 'client_secret' });
    expectError(await claim(mine.key, 'something else'), 400, { code: 'resource_missing', param: 'client_secret' });
    const created = await createSession(mine.key, { account: mine.account, components: { payments: { enabled: true } } });
    expectError(await claim(other.key, created.body.client_secret), 400, { code: 'resource_missing', param: 'client_secret' });
    // The connected account itself (Stripe-Account) may claim it.
    const ok = await claim(mine.key, created.body.client_secret, { 'Stripe-Account': mine.account });
    expect(ok.status).toBe(200);
  });

  test('of concurrent claims exactly one succeeds', async () => {
    const { key, account } = await newPlatform();
    const created = await createSession(key, { account, components: { payments: { enabled: true } } });
    const answers = await Promise.all(Array.from({ length: 8 }, () => claim(key, created.body.client_secret)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    for (const a of answers.filter((x) => x.status !== 200)) {
      expectError(a, 400, { code: 'account_session_already_claimed' });
    }
  });

  test('an expired secret is refused (ACCOUNT_SESSION_TTL_SECONDS, injected clock)', async () => {
    const { key, account } = await newPlatform();
    const a = await createSession(key, { account, components: { payments: { enabled: true } } });
    const b = await createSession(key, { account, components: { payments: { enabled: true } } });
    const start = nowMs;
    try {
      nowMs = start + (TTL - 1) * 1000;
      expect((await claim(key, a.body.client_secret)).status).toBe(200);
      nowMs = start + TTL * 1000;
      expectError(await claim(key, b.body.client_secret), 400, { code: 'account_session_expired', param: 'client_secret' });
    } finally {
      nowMs = start;
    }
  });
});

test('the client secret is stored only as a hash, and never logged', async () => {
  const { key, account } = await newPlatform();
  const res = await createSession(key, { account, components: { account_onboarding: { enabled: true } } });
  const secret: string = res.body.client_secret;
  const random = secret.slice('accs_secret__'.length);
  await claim(key, secret);
  await claim(key, secret); // a refused claim too
  const prisma = t.runtime.prisma;
  const rows = await prisma.accountSession.findMany({ where: { accountId: account } });
  expect(rows).toHaveLength(1);
  expect(rows[0].secretHash).toBe(hashSecret(secret));
  // No table, dump or log holds it in plain text.
  await expectNowhereAtRest(t, random, [rows[0].secretHash]);
});

test('with an Idempotency-Key, as the SDKs send, the stored response is sealed and a replay still returns the secret', async () => {
  const { key, account } = await newPlatform();
  const body = { account, components: { payments: { enabled: true } } };
  const first = await post(key, '/v1/account_sessions', body, { 'Idempotency-Key': 'session-once' });
  expect(first.status).toBe(200);
  const secret: string = first.body.client_secret;
  const random = secret.slice('accs_secret__'.length);

  const record = await t.runtime.prisma.idempotencyRecord.findFirst({ where: { key: 'session-once' } });
  expect(record?.status).toBe(200);
  expect(record!.responseBody).toMatch(/^sealed:v1:/);
  expect(record!.responseBody).not.toContain(random);

  const replay = await post(key, '/v1/account_sessions', body, { 'Idempotency-Key': 'session-once' });
  expect(replay.status).toBe(200);
  expect(replay.headers['idempotent-replayed']).toBe('true');
  expect(replay.body.client_secret).toBe(secret);
  await expectNowhereAtRest(t, random, [record!.responseBody!]);
});
