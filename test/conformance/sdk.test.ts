import Stripe from 'stripe';
import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { createEvent, createVerificationReport } from '../helpers/fixtures';
import { resources } from '../../src/resources';

// Every operation through the official SDK, once as it succeeds and once as it fails: the SDK
// must parse each answer into the object the route declares (or a deleted object), and each
// error into the error class its status calls for, both with a request id. Operations the SDK
// has no method for (the sandbox's) go through its raw request. A new operation without an
// entry here fails the coverage test.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

type Call = (stripe: Stripe, key: string) => Promise<unknown>;

interface OperationCase {
  /** A call that succeeds. */
  readonly ok: Call;
  /** A call that fails, and the SDK error class it must raise. */
  readonly fails: Call;
  readonly error: new (...args: any[]) => Stripe.errors.StripeError;
}

const InvalidRequest = Stripe.errors.StripeInvalidRequestError;
const SCOPE = { type: 'account' as const };

const connectedAccount = async (stripe: Stripe) => (await stripe.accounts.create({ business_type: 'individual' })).id;
const endpoint = async (stripe: Stripe) => (await stripe.webhookEndpoints.create({ url: 'https://example.com/hooks', enabled_events: ['charge.succeeded'] })).id;
const session = async (stripe: Stripe) => (await stripe.identity.verificationSessions.create({ type: 'document' })).id;
const raw = (stripe: Stripe, path: string, params: Record<string, unknown>) => stripe.rawRequest('POST', path, params);

const CASES: Record<string, OperationCase> = {
  GetAccount: {
    ok: (stripe) => stripe.accounts.retrieveCurrent(),
    fails: (stripe) => stripe.accounts.retrieveCurrent(undefined, { stripeAccount: 'acct_0000000000000000' }),
    error: Stripe.errors.StripePermissionError,
  },
  GetAccounts: { ok: (stripe) => stripe.accounts.list(), fails: (stripe) => stripe.accounts.list({ limit: 0 }), error: InvalidRequest },
  PostAccounts: {
    ok: (stripe) => stripe.accounts.create({ email: 'a@example.com' }),
    fails: (stripe) => stripe.accounts.create({ controller: { stripe_dashboard: { type: 'none' } } }),
    error: InvalidRequest,
  },
  GetAccountsAccount: { ok: async (stripe) => stripe.accounts.retrieve(await connectedAccount(stripe)), fails: (stripe) => stripe.accounts.retrieve('acct_nope'), error: InvalidRequest },
  PostAccountsAccount: {
    ok: async (stripe) => stripe.accounts.update(await connectedAccount(stripe), { metadata: { a: '1' } }),
    fails: (stripe) => stripe.accounts.update('acct_nope', { metadata: { a: '1' } }),
    error: InvalidRequest,
  },
  DeleteAccountsAccount: { ok: async (stripe) => stripe.accounts.del(await connectedAccount(stripe)), fails: (stripe) => stripe.accounts.del('acct_nope'), error: InvalidRequest },
  PostAccountLinks: {
    ok: async (stripe) => stripe.accountLinks.create({ account: await connectedAccount(stripe), type: 'account_onboarding' }),
    fails: (stripe) => stripe.accountLinks.create({ account: 'acct_nope', type: 'account_onboarding' }),
    error: InvalidRequest,
  },
  PostAccountSessions: {
    ok: async (stripe) => stripe.accountSessions.create({ account: await connectedAccount(stripe), components: { account_onboarding: { enabled: true } } }),
    fails: async (stripe) => stripe.accountSessions.create({ account: await connectedAccount(stripe), components: { bogus: { enabled: true } } as Stripe.AccountSessionCreateParams.Components }),
    error: InvalidRequest,
  },
  PostSandboxAccountSessionsClaim: {
    ok: async (stripe) => {
      const { client_secret } = await stripe.accountSessions.create({ account: await connectedAccount(stripe), components: { payments: { enabled: true } } });
      return raw(stripe, '/sandbox/v1/account_sessions/claim', { client_secret });
    },
    fails: (stripe) => raw(stripe, '/sandbox/v1/account_sessions/claim', { client_secret: 'accs_secret__nope' }),
    error: InvalidRequest,
  },
  GetAppsSecrets: { ok: (stripe) => stripe.apps.secrets.list({ scope: SCOPE }), fails: (stripe) => stripe.apps.secrets.list({ scope: { type: 'user' } }), error: InvalidRequest },
  PostAppsSecrets: {
    ok: (stripe) => stripe.apps.secrets.create({ name: 'a', payload: 'p', scope: SCOPE }),
    fails: (stripe) => stripe.apps.secrets.create({ name: 'a', payload: 'p', scope: SCOPE, expires_at: 1 }),
    error: InvalidRequest,
  },
  GetAppsSecretsFind: {
    ok: async (stripe) => {
      await stripe.apps.secrets.create({ name: 'f', payload: 'p', scope: SCOPE });
      return stripe.apps.secrets.find({ name: 'f', scope: SCOPE });
    },
    fails: (stripe) => stripe.apps.secrets.find({ name: 'missing', scope: SCOPE }),
    error: InvalidRequest,
  },
  PostAppsSecretsDelete: {
    ok: async (stripe) => {
      await stripe.apps.secrets.create({ name: 'd', payload: 'p', scope: SCOPE });
      return stripe.apps.secrets.deleteWhere({ name: 'd', scope: SCOPE });
    },
    fails: (stripe) => stripe.apps.secrets.deleteWhere({ name: 'missing', scope: SCOPE }),
    error: InvalidRequest,
  },
  GetEvents: { ok: (stripe) => stripe.events.list(), fails: (stripe) => stripe.events.list({ limit: 101 }), error: InvalidRequest },
  GetEventsId: { ok: async (stripe, key) => stripe.events.retrieve(await createEvent(t, key)), fails: (stripe) => stripe.events.retrieve('evt_nope'), error: InvalidRequest },
  PostSandboxEventsIdResend: {
    ok: async (stripe, key) => {
      const event = await createEvent(t, key);
      return raw(stripe, `/sandbox/v1/events/${event}/resend`, { webhook_endpoint: await endpoint(stripe) });
    },
    fails: async (stripe) => raw(stripe, '/sandbox/v1/events/evt_nope/resend', { webhook_endpoint: await endpoint(stripe) }),
    error: InvalidRequest,
  },
  GetSandboxWebhookEndpointsWebhookEndpointDeliveries: {
    ok: async (stripe) => stripe.rawRequest('GET', `/sandbox/v1/webhook_endpoints/${await endpoint(stripe)}/deliveries`),
    fails: (stripe) => stripe.rawRequest('GET', '/sandbox/v1/webhook_endpoints/we_nope/deliveries'),
    error: InvalidRequest,
  },
  GetWebhookEndpoints: { ok: (stripe) => stripe.webhookEndpoints.list(), fails: (stripe) => stripe.webhookEndpoints.list({ limit: -1 }), error: InvalidRequest },
  PostWebhookEndpoints: {
    ok: (stripe) => stripe.webhookEndpoints.create({ url: 'https://example.com/hooks', enabled_events: ['*'] }),
    fails: (stripe) => stripe.webhookEndpoints.create({ url: 'not a url', enabled_events: ['*'] }),
    error: InvalidRequest,
  },
  GetWebhookEndpointsWebhookEndpoint: {
    ok: async (stripe) => stripe.webhookEndpoints.retrieve(await endpoint(stripe)),
    fails: (stripe) => stripe.webhookEndpoints.retrieve('we_nope'),
    error: InvalidRequest,
  },
  PostWebhookEndpointsWebhookEndpoint: {
    ok: async (stripe) => stripe.webhookEndpoints.update(await endpoint(stripe), { disabled: true }),
    fails: (stripe) => stripe.webhookEndpoints.update('we_nope', { disabled: true }),
    error: InvalidRequest,
  },
  DeleteWebhookEndpointsWebhookEndpoint: {
    ok: async (stripe) => stripe.webhookEndpoints.del(await endpoint(stripe)),
    fails: (stripe) => stripe.webhookEndpoints.del('we_nope'),
    error: InvalidRequest,
  },
  GetIdentityVerificationSessions: {
    ok: (stripe) => stripe.identity.verificationSessions.list({ status: 'requires_input' }),
    fails: (stripe) => stripe.identity.verificationSessions.list({ status: 'bogus' as 'verified' }),
    error: InvalidRequest,
  },
  PostIdentityVerificationSessions: {
    ok: (stripe) => stripe.identity.verificationSessions.create({ type: 'id_number' }),
    fails: (stripe) => stripe.identity.verificationSessions.create({}),
    error: InvalidRequest,
  },
  GetIdentityVerificationSessionsSession: {
    ok: async (stripe) => stripe.identity.verificationSessions.retrieve(await session(stripe)),
    fails: (stripe) => stripe.identity.verificationSessions.retrieve('vs_nope'),
    error: InvalidRequest,
  },
  PostIdentityVerificationSessionsSession: {
    ok: async (stripe) => stripe.identity.verificationSessions.update(await session(stripe), { metadata: { a: '1' } }),
    fails: async (stripe) => {
      const id = await session(stripe);
      await stripe.identity.verificationSessions.cancel(id);
      return stripe.identity.verificationSessions.update(id, { metadata: { a: '1' } });
    },
    error: InvalidRequest,
  },
  PostIdentityVerificationSessionsSessionCancel: {
    ok: async (stripe) => stripe.identity.verificationSessions.cancel(await session(stripe)),
    fails: (stripe) => stripe.identity.verificationSessions.cancel('vs_nope'),
    error: InvalidRequest,
  },
  PostIdentityVerificationSessionsSessionRedact: {
    ok: async (stripe) => stripe.identity.verificationSessions.redact(await session(stripe)),
    fails: (stripe) => stripe.identity.verificationSessions.redact('vs_nope'),
    error: InvalidRequest,
  },
  PostSandboxIdentityVerificationSessionsSessionSubmit: {
    ok: async (stripe) => raw(stripe, `/sandbox/v1/identity/verification_sessions/${await session(stripe)}/submit`, { outcome: 'verified' }),
    fails: async (stripe) => raw(stripe, `/sandbox/v1/identity/verification_sessions/${await session(stripe)}/submit`, { outcome: 'bogus' }),
    error: InvalidRequest,
  },
  GetIdentityVerificationReports: {
    ok: (stripe) => stripe.identity.verificationReports.list({ type: 'document' }),
    fails: (stripe) => stripe.identity.verificationReports.list({ type: 'bogus' as 'document' }),
    error: InvalidRequest,
  },
  GetIdentityVerificationReportsReport: {
    ok: async (stripe, key) => stripe.identity.verificationReports.retrieve(await createVerificationReport(t, key)),
    fails: (stripe) => stripe.identity.verificationReports.retrieve('vr_nope'),
    error: InvalidRequest,
  },
};

const routes = resources.flatMap((r) => r.routes);

test('every operation has an SDK case', () => {
  expect(Object.keys(CASES).sort()).toEqual(routes.map((r) => r.operationId).sort());
});

/** The raw request answers the parsed body without the typed wrapper. */
const objectOf = (result: unknown): Record<string, any> => result as Record<string, any>;

for (const r of routes) {
  const c = CASES[r.operationId];
  if (!c) continue;

  test(`${r.operationId}: the SDK parses the answer into a ${r.returns.list ? 'list of ' : ''}${r.returns.object}`, async () => {
    const key = newTestKey();
    const result = objectOf(await c.ok(t.stripe(key), key));
    if (r.returns.list) {
      expect(result.object).toBe('list');
      for (const item of result.data) expect(item.object).toBe(r.returns.object);
    } else {
      expect(result.object).toBe(r.returns.object);
    }
    expect(result.lastResponse?.requestId ?? result.lastResponse?.headers?.['request-id']).toMatch(/^req_/);
  });

  test(`${r.operationId}: the SDK raises ${c.error.name} for a failing call`, async () => {
    const key = newTestKey();
    // The key's account exists before the failing call, as it would for a real client.
    await t.http().get('/v1/account').set(bearer(key));
    const failure = await c.fails(t.stripe(key), key).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(c.error);
    const err = failure as Stripe.errors.StripeError;
    expect(err.statusCode).toBeGreaterThanOrEqual(400);
    expect(err.statusCode).toBeLessThan(500);
    expect(err.requestId).toMatch(/^req_/);
    expect(err.message.length).toBeGreaterThan(0);
  });
}

