import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { accountOfKey, createConnectedAccount, emitTestEvent } from '../helpers/events';
import {
  createAccount,
  createAccountSession,
  createAppSecret,
  createVerificationReport,
  createVerificationSession,
  createWebhookEndpoint,
  form,
  WEBHOOK_URL,
} from '../helpers/fixtures';
import {
  documentedOperations,
  expectMatchesResponseSchema,
  responseSchema,
  responseSchemaErrors,
} from '../helpers/responseSchemas';

// Successful (and error) responses of every documented operation, checked against the schemas
// openapi/ declares, so the document and the implementation can't drift apart. An area that
// adds operations adds a scenario for each of them below.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
// close() also removes the app's queue keys from Redis.
afterAll(() => t.close());

interface Answer {
  readonly label: string;
  readonly status: number;
  readonly body: unknown;
}

type Scenario = (key: string) => Promise<Answer[]>;

const answer = (label: string, res: { status: number; body: unknown }): Answer => ({ label, status: res.status, body: res.body });

const post = (key: string, path: string, body: string | Record<string, unknown>) =>
  t
    .http()
    .post(path)
    .set(bearer(key))
    .type('form')
    .send(typeof body === 'string' ? body : form(body));
const get = (key: string, path: string) => t.http().get(path).set(bearer(key));
const del = (key: string, path: string) => t.http().delete(path).set(bearer(key));

const WE = '/v1/webhook_endpoints';
const AC = '/v1/accounts';
const SE = '/v1/apps/secrets';
const CUSTOM_INDIVIDUAL = {
  controller: { stripe_dashboard: { type: 'none' }, requirement_collection: 'application' },
  capabilities: { card_payments: { requested: true }, transfers: { requested: true } },
  business_type: 'individual',
  individual: { first_name: 'Jenny', metadata: { a: '1' } },
};

/** For each operationId: requests that succeed, in the variety of shapes the operation can answer. */
const scenarios: Record<string, Scenario> = {
  PostAccountSessions: async (key) => {
    const { id } = await createAccount(t, key);
    return [
      answer('one component', await post(key, '/v1/account_sessions', { account: id, components: { account_onboarding: { enabled: true } } })),
      answer(
        'features in both spellings',
        await post(key, '/v1/account_sessions', {
          account: id,
          components: {
            payouts: { enabled: true, features: { disable_service_user_authentication: true, instant_payouts: true } },
            account_management: { enabled: false, features: { disable_stripe_user_authentication: true } },
            documents: { enabled: true },
          },
        }),
      ),
    ];
  },
  PostAccountLinks: async (key) => {
    const { id } = await createAccount(t, key);
    const custom = await createAccount(t, key, CUSTOM_INDIVIDUAL);
    return [
      answer('onboarding', await post(key, '/v1/account_links', { account: id, type: 'account_onboarding', refresh_url: 'https://example.com/r', return_url: 'https://example.com/ok' })),
      answer('update', await post(key, '/v1/account_links', { account: custom.id, type: 'account_update', collection_options: { fields: 'eventually_due' } })),
    ];
  },
  PostSandboxAccountSessionsClaim: async (key) => {
    const { client_secret } = await createAccountSession(t, key);
    return [answer('claimed', await post(key, '/sandbox/v1/account_sessions/claim', { client_secret }))];
  },
  GetAccount: async (key) => {
    const platform = await get(key, '/v1/account');
    const connected = await createAccount(t, key, { business_type: 'individual', external_account: 'tok_visa_debit' });
    return [answer('platform', platform), answer('connected account', await get(key, '/v1/account').set('Stripe-Account', connected.id))];
  },
  GetAccounts: async (key) => {
    const out = [answer('empty list', await get(key, AC))];
    for (let i = 0; i < 3; i++) await createAccount(t, key, { metadata: { i: String(i) } });
    out.push(answer('full list', await get(key, AC)));
    const first = await get(key, `${AC}?limit=2`);
    out.push(answer('first page', first));
    out.push(answer('next page', await get(key, `${AC}?limit=2&starting_after=${first.body.data[1].id}`)));
    out.push(answer('created filter', await get(key, `${AC}?created[gte]=0`)));
    return out;
  },
  PostAccounts: async (key) => [
    answer('minimal', await post(key, AC, '')),
    answer('custom individual', await post(key, AC, { ...CUSTOM_INDIVIDUAL })),
    answer('company, spec spelling', await post(key, AC, {
      business_type: 'company',
      controller: { service_dashboard: { type: 'express' }, losses: { payments: 'service' }, requirement_collection: 'service' },
      company: { name: 'Co', structure: 'llc', address: { city: 'Austin' } },
      bank_account: { account_number: '000123456789', country: 'US', routing_number: '110000000' },
      settings: { payouts: { schedule: { interval: 'weekly', weekly_anchor: 'friday' } } },
      groups: { payments_pricing: 'default' },
    })),
  ],
  GetAccountsAccount: async (key) => {
    const plain = await createAccount(t, key);
    const full = await createAccount(t, key, { ...CUSTOM_INDIVIDUAL });
    return [answer('defaults', await get(key, `${AC}/${plain.id}`)), answer('individual', await get(key, `${AC}/${full.id}`))];
  },
  PostAccountsAccount: async (key) => {
    const { id } = await createAccount(t, key, { ...CUSTOM_INDIVIDUAL });
    return [
      answer('no change', await post(key, `${AC}/${id}`, '')),
      answer('everything given', await post(key, `${AC}/${id}`, {
        business_profile: { mcc: '5734', url: 'https://example.com' },
        individual: {
          first_name: 'J', last_name: 'R', dob: { day: 1, month: 1, year: 1990 }, email: 'j@example.com', phone: '+15555550100',
          address: { line1: '1 Main St', city: 'SF', state: 'CA', postal_code: '94111' }, ssn_last_4: '0000',
        },
        external_account: 'btok_us_verified',
        tos_acceptance: { date: 1700000000, ip: '203.0.113.1' },
      })),
      answer('metadata unset', await post(key, `${AC}/${id}`, 'metadata=')),
    ];
  },
  DeleteAccountsAccount: async (key) => {
    const { id } = await createAccount(t, key);
    return [answer('deleted', await del(key, `${AC}/${id}`))];
  },
  GetWebhookEndpoints: async (key) => {
    const out = [answer('empty list', await get(key, WE))];
    for (let i = 0; i < 4; i++) await createWebhookEndpoint(t, key, { url: `${WEBHOOK_URL}/${i}`, metadata: { i: String(i) } });
    out.push(answer('full list', await get(key, WE)));
    const first = await get(key, `${WE}?limit=2`);
    out.push(answer('first page', first));
    out.push(answer('next page', await get(key, `${WE}?limit=2&starting_after=${first.body.data[1].id}`)));
    out.push(answer('previous page', await get(key, `${WE}?limit=1&ending_before=${first.body.data[1].id}`)));
    return out;
  },
  PostWebhookEndpoints: async (key) => [
    answer('minimal', await post(key, WE, { url: WEBHOOK_URL, enabled_events: ['charge.succeeded'] })),
    answer('all events', await post(key, WE, 'url=https://example.com/all&enabled_events[]=*')),
    answer(
      'every parameter',
      await post(key, WE, {
        url: WEBHOOK_URL,
        enabled_events: ['account.updated', 'capability.updated'],
        api_version: '2026-08-26.dahlia',
        connect: true,
        description: 'All of it',
        metadata: { a: '1' },
      }),
    ),
  ],
  GetWebhookEndpointsWebhookEndpoint: async (key) => {
    const plain = await createWebhookEndpoint(t, key);
    const full = await createWebhookEndpoint(t, key, { api_version: '2024-06-20', description: 'd', metadata: { a: '1' }, enabled_events: ['*'] });
    return [answer('defaults', await get(key, `${WE}/${plain.id}`)), answer('every field set', await get(key, `${WE}/${full.id}`))];
  },
  PostWebhookEndpointsWebhookEndpoint: async (key) => {
    const { id } = await createWebhookEndpoint(t, key, { description: 'd', metadata: { a: '1' } });
    const path = `${WE}/${id}`;
    return [
      answer('no change', await post(key, path, '')),
      answer('disabled', await post(key, path, 'disabled=true')),
      answer('url and events', await post(key, path, { url: 'https://example.org/x', enabled_events: ['*'] })),
      answer('description unset', await post(key, path, 'description=')),
      answer('metadata unset', await post(key, path, 'metadata=')),
      answer('enabled again', await post(key, path, 'disabled=false')),
    ];
  },
  DeleteWebhookEndpointsWebhookEndpoint: async (key) => {
    const { id } = await createWebhookEndpoint(t, key);
    return [answer('deleted', await del(key, `${WE}/${id}`))];
  },
  GetEvents: async (key) => {
    const out = [answer('empty list', await get(key, EV))];
    const { connected } = await eventsOf(key);
    out.push(answer('full list', await get(key, EV)));
    out.push(answer('filtered by type', await get(key, `${EV}?type=account.*&limit=2`)));
    out.push(answer('filtered by types', await get(key, `${EV}?types[]=capability.updated&delivery_success=true`)));
    const first = await get(key, `${EV}?limit=1`);
    out.push(answer('next page', await get(key, `${EV}?limit=1&starting_after=${first.body.data[0].id}`)));
    out.push(answer('connected account', await get(key, EV).set('Stripe-Account', connected)));
    return out;
  },
  GetEventsId: async (key) => {
    const { plain, updated, ofConnected, connected } = await eventsOf(key);
    return [
      answer('plain', await get(key, `${EV}/${plain}`)),
      answer('with previous_attributes', await get(key, `${EV}/${updated}`)),
      answer('of a connected account', await get(key, `${EV}/${ofConnected}`).set('Stripe-Account', connected)),
    ];
  },
  PostSandboxEventsIdResend: async (key) => {
    const { plain } = await eventsOf(key);
    const { id } = await createWebhookEndpoint(t, key);
    return [answer('resent', await post(key, `/sandbox/v1/events/${plain}/resend`, { webhook_endpoint: id }))];
  },
  GetSandboxWebhookEndpointsWebhookEndpointDeliveries: async (key) => {
    const { id } = await createWebhookEndpoint(t, key);
    const path = `/sandbox/v1/webhook_endpoints/${id}/deliveries`;
    const out = [answer('empty list', await get(key, path))];
    await recordAttempts(key, id);
    out.push(answer('attempts', await get(key, path)));
    out.push(answer('a page', await get(key, `${path}?limit=1`)));
    return out;
  },
  PostAppsSecrets: async (key) => [
    answer('account scope', await post(key, SE, { name: 'a', payload: 'p', scope: { type: 'account' } })),
    answer('user scope, expiring', await post(key, SE, { name: 'a', payload: 'p', scope: { type: 'user', user: 'usr_1' }, expires_at: 2000000000 })),
    answer('replaced', await post(key, SE, { name: 'a', payload: 'q', scope: { type: 'account' } })),
  ],
  GetAppsSecretsFind: async (key) => {
    await createAppSecret(t, key, { name: 'a' });
    await createAppSecret(t, key, { name: 'b', scope: { type: 'user', user: 'usr_1' }, expires_at: 2000000000 });
    return [
      answer('account scope', await get(key, `${SE}/find?name=a&scope[type]=account`)),
      answer('user scope, expiring', await get(key, `${SE}/find?name=b&scope[type]=user&scope[user]=usr_1`)),
    ];
  },
  GetAppsSecrets: async (key) => {
    const out = [answer('empty list', await get(key, `${SE}?scope[type]=account`))];
    for (let i = 0; i < 3; i++) await createAppSecret(t, key, { name: `n${i}`, ...(i === 1 ? { expires_at: 2000000000 } : {}) });
    await createAppSecret(t, key, { name: 'u', scope: { type: 'user', user: 'usr_1' } });
    out.push(answer('full list', await get(key, `${SE}?scope[type]=account`)));
    const first = await get(key, `${SE}?scope[type]=account&limit=2`);
    out.push(answer('next page', await get(key, `${SE}?scope[type]=account&limit=2&starting_after=${first.body.data[1].id}`)));
    out.push(answer('user scope', await get(key, `${SE}?scope[type]=user&scope[user]=usr_1`)));
    return out;
  },
  PostAppsSecretsDelete: async (key) => {
    await createAppSecret(t, key, { name: 'a' });
    await createAppSecret(t, key, { name: 'b', scope: { type: 'user', user: 'usr_1' }, expires_at: 2000000000 });
    return [
      answer('account scope', await post(key, `${SE}/delete`, { name: 'a', scope: { type: 'account' } })),
      answer('user scope, expiring', await post(key, `${SE}/delete`, { name: 'b', scope: { type: 'user', user: 'usr_1' } })),
    ];
  },
  GetIdentityVerificationSessions: async (key) => {
    await createVerificationSession(t, key, { type: 'id_number', client_reference_id: 'c' });
    await createVerificationReport(t, key, 'verified', { type: 'document', options: { document: { require_matching_selfie: true } } });
    return [
      answer('list', await get(key, VS)),
      answer('expanded', await get(key, `${VS}?expand[]=data.verified_outputs&expand[]=data.provided_details&expand[]=data.last_verification_report`)),
    ];
  },
  PostIdentityVerificationSessions: async (key) => {
    const { id } = await createAccount(t, key);
    return [
      answer('document', await post(key, VS, { type: 'document', expand: ['provided_details'] })),
      answer('everything', await post(key, VS, {
        type: 'document',
        client_reference_id: 'r',
        metadata: { a: '1' },
        options: { document: { allowed_types: ['passport'], require_id_number: true, require_live_capture: true, require_matching_selfie: true } },
        provided_details: { email: 'a@example.com', phone: '+14155550123' },
        related_customer: 'cus_1',
        related_customer_account: id,
        return_url: 'https://example.com/back',
        expand: ['provided_details', 'verified_outputs'],
      })),
      answer('flow', await post(key, VS, { verification_flow: 'vf_1' })),
    ];
  },
  GetIdentityVerificationSessionsSession: async (key) => {
    const open = await createVerificationSession(t, key);
    const report = await createVerificationReport(t, key, 'verified', { type: 'id_number' });
    const { verification_session } = (await get(key, `/v1/identity/verification_reports/${report}`)).body;
    return [
      answer('requires_input', await get(key, `${VS}/${open.id}`)),
      answer('verified, expanded', await get(key, `${VS}/${verification_session}?expand[]=verified_outputs&expand[]=last_verification_report&expand[]=provided_details`)),
    ];
  },
  PostIdentityVerificationSessionsSession: async (key) => {
    const { id } = await createVerificationSession(t, key);
    return [answer('updated', await post(key, `${VS}/${id}`, { type: 'id_number', metadata: { a: '1' } }))];
  },
  PostIdentityVerificationSessionsSessionCancel: async (key) => {
    const { id } = await createVerificationSession(t, key);
    return [answer('canceled', await post(key, `${VS}/${id}/cancel`, {}))];
  },
  PostIdentityVerificationSessionsSessionRedact: async (key) => {
    const { id } = await createVerificationSession(t, key);
    return [answer('redacting', await post(key, `${VS}/${id}/redact`, {}))];
  },
  PostSandboxIdentityVerificationSessionsSessionSubmit: async (key) => {
    const a = await createVerificationSession(t, key);
    const b = await createVerificationSession(t, key);
    return [
      answer('processing', await post(key, `/sandbox${VS}/${a.id}/submit`, { outcome: 'verified' })),
      answer('abandoned', await post(key, `/sandbox${VS}/${b.id}/submit`, { outcome: 'abandoned' })),
    ];
  },
  GetIdentityVerificationReports: async (key) => {
    await createVerificationReport(t, key, 'document_expired');
    await createVerificationReport(t, key, 'id_number_mismatch', { type: 'id_number' });
    return [answer('list', await get(key, VR))];
  },
  GetIdentityVerificationReportsReport: async (key) => {
    const report = await createVerificationReport(t, key, 'selfie_face_mismatch', { type: 'document', options: { document: { require_matching_selfie: true, require_id_number: true } } });
    return [answer('report', await get(key, `${VR}/${report}`))];
  },
};

const VS = '/v1/identity/verification_sessions';
const VR = '/v1/identity/verification_reports';

const EV = '/v1/events';

/** Events of the key's account (one with previous_attributes) and of a connected account. */
async function eventsOf(key: string) {
  await createWebhookEndpoint(t, key);
  const account = await accountOfKey(t.runtime, key);
  const connected = await createConnectedAccount(t.runtime, account);
  const quiet = { handOff: false };
  const plain = await emitTestEvent(t.runtime, account, 'account.updated', undefined, quiet);
  await emitTestEvent(t.runtime, account, 'capability.updated', { id: 'card_payments', object: 'capability' }, quiet);
  const updated = await emitTestEvent(t.runtime, account, 'account.updated', { id: account, object: 'account', email: 'new@example.com' }, {
    ...quiet,
    previousAttributes: { email: null },
  });
  const ofConnected = await emitTestEvent(t.runtime, connected, 'account.updated', { id: connected, object: 'account' }, quiet);
  return { account, connected, plain, updated, ofConnected };
}

/** The attempts a worker would record: one that succeeded, one that failed with a network error. */
async function recordAttempts(key: string, endpointId: string): Promise<void> {
  const { plain } = await eventsOf(key);
  const prisma = t.runtime.prisma;
  const delivery = await prisma.webhookDelivery.create({
    data: { id: `whdel_${plain.slice(4)}`, eventId: plain, endpointId, status: 'succeeded', attempts: 2, completedAt: new Date() },
  });
  const base = { deliveryId: delivery.id, endpointId, eventId: plain, attemptedAt: new Date() };
  await prisma.webhookAttempt.create({
    data: { ...base, id: `whatt_${plain.slice(4)}1`, attempt: 1, durationMs: 300, statusCode: null, error: 'ECONNREFUSED: connect ECONNREFUSED', succeeded: false },
  });
  await prisma.webhookAttempt.create({
    data: { ...base, id: `whatt_${plain.slice(4)}2`, attempt: 2, durationMs: 12, statusCode: 200, responseExcerpt: '{"received":true}', succeeded: true },
  });
}

/** For each operationId: requests that fail, to check the error body against `default`. */
const errorScenarios: Record<string, Scenario> = {
  PostAccountSessions: async (key) => [
    answer('unknown component', await post(key, '/v1/account_sessions', 'account=acct_nope&components[bogus][enabled]=true')),
    answer('unknown account', await post(key, '/v1/account_sessions', 'account=acct_nope&components[payments][enabled]=true')),
  ],
  PostAccountLinks: async (key) => {
    const { id } = await createAccount(t, key);
    return [
      answer('unknown account', await post(key, '/v1/account_links', 'account=acct_nope&type=account_onboarding')),
      answer('update of a dashboard account', await post(key, '/v1/account_links', { account: id, type: 'account_update' })),
      answer('collect and collection_options', await post(key, '/v1/account_links', { account: id, type: 'account_onboarding', collect: 'currently_due', collection_options: { fields: 'eventually_due' } })),
      answer('bad return_url', await post(key, '/v1/account_links', { account: id, type: 'account_onboarding', return_url: 'ftp://example.com' })),
    ];
  },
  PostSandboxAccountSessionsClaim: async (key) => {
    const { client_secret } = await createAccountSession(t, key);
    await post(key, '/sandbox/v1/account_sessions/claim', { client_secret });
    return [
      answer('unknown secret', await post(key, '/sandbox/v1/account_sessions/claim', { client_secret: 'accs_secret__nope' })),
      answer('claimed before', await post(key, '/sandbox/v1/account_sessions/claim', { client_secret })),
    ];
  },
  GetAccount: async (key) => [answer('unknown parameter', await get(key, '/v1/account?bogus=1'))],
  GetAccounts: async (key) => [answer('bad limit', await get(key, `${AC}?limit=0`))],
  PostAccounts: async (key) => [
    answer('unknown nested parameter', await post(key, AC, 'company[bogus]=1')),
    answer('dashboard none without capabilities', await post(key, AC, 'controller[stripe_dashboard][type]=none')),
  ],
  GetAccountsAccount: async (key) => [answer('unknown id', await get(key, `${AC}/acct_nope`))],
  PostAccountsAccount: async (key) => [answer('unknown id', await post(key, `${AC}/acct_nope`, 'email=a@example.com'))],
  DeleteAccountsAccount: async (key) => [answer('unknown id', await del(key, `${AC}/acct_nope`))],
  GetWebhookEndpoints: async (key) => [answer('bad limit', await get(key, `${WE}?limit=0`))],
  PostWebhookEndpoints: async (key) => [answer('missing url', await post(key, WE, 'enabled_events[]=*'))],
  GetWebhookEndpointsWebhookEndpoint: async (key) => [answer('unknown id', await get(key, `${WE}/we_nope`))],
  PostWebhookEndpointsWebhookEndpoint: async (key) => [answer('unknown id', await post(key, `${WE}/we_nope`, 'disabled=true'))],
  DeleteWebhookEndpointsWebhookEndpoint: async (key) => [answer('unknown id', await del(key, `${WE}/we_nope`))],
  GetEvents: async (key) => [
    answer('type and types', await get(key, `${EV}?type=account.updated&types[]=account.updated`)),
    answer('21 types', await get(key, `${EV}?${Array.from({ length: 21 }, () => 'types[]=account.updated').join('&')}`)),
  ],
  GetEventsId: async (key) => [answer('unknown id', await get(key, `${EV}/evt_nope`))],
  PostSandboxEventsIdResend: async (key) => {
    const { plain } = await eventsOf(key);
    const { id } = await createWebhookEndpoint(t, key);
    return [
      answer('unknown endpoint', await post(key, `/sandbox/v1/events/${plain}/resend`, { webhook_endpoint: 'we_nope' })),
      answer('unknown event', await post(key, '/sandbox/v1/events/evt_nope/resend', { webhook_endpoint: id })),
    ];
  },
  GetSandboxWebhookEndpointsWebhookEndpointDeliveries: async (key) => [
    answer('unknown endpoint', await get(key, '/sandbox/v1/webhook_endpoints/we_nope/deliveries')),
  ],
  PostAppsSecrets: async (key) => [
    answer('user scope without user', await post(key, SE, { name: 'a', payload: 'p', scope: { type: 'user' } })),
    answer('expires_at in the past', await post(key, SE, { name: 'a', payload: 'p', scope: { type: 'account' }, expires_at: 1 })),
  ],
  GetAppsSecretsFind: async (key) => [answer('no such secret', await get(key, `${SE}/find?name=nope&scope[type]=account`))],
  GetAppsSecrets: async (key) => [answer('missing scope', await get(key, SE))],
  PostAppsSecretsDelete: async (key) => [answer('no such secret', await post(key, `${SE}/delete`, { name: 'nope', scope: { type: 'account' } }))],
  GetIdentityVerificationSessions: async (key) => [answer('bad status', await get(key, `${VS}?status=bogus`))],
  PostIdentityVerificationSessions: async (key) => [
    answer('no type', await post(key, VS, {})),
    answer('bad email', await post(key, VS, { type: 'document', provided_details: { email: 'x' } })),
  ],
  GetIdentityVerificationSessionsSession: async (key) => [answer('unknown id', await get(key, `${VS}/vs_nope`))],
  PostIdentityVerificationSessionsSession: async (key) => {
    const { id } = await createVerificationSession(t, key);
    await post(key, `${VS}/${id}/cancel`, {});
    return [answer('canceled', await post(key, `${VS}/${id}`, { metadata: { a: '1' } }))];
  },
  PostIdentityVerificationSessionsSessionCancel: async (key) => [answer('unknown id', await post(key, `${VS}/vs_nope/cancel`, {}))],
  PostIdentityVerificationSessionsSessionRedact: async (key) => [answer('unknown id', await post(key, `${VS}/vs_nope/redact`, {}))],
  PostSandboxIdentityVerificationSessionsSessionSubmit: async (key) => {
    const { id } = await createVerificationSession(t, key);
    return [answer('outcome of a check not run', await post(key, `/sandbox${VS}/${id}/submit`, { outcome: 'selfie_manipulated' }))];
  },
  GetIdentityVerificationReports: async (key) => [answer('bad type', await get(key, `${VR}?type=selfie`))],
  GetIdentityVerificationReportsReport: async (key) => [answer('unknown id', await get(key, `${VR}/vr_nope`))],
};

const operations = documentedOperations();

describe('openapi/ declares every response', () => {
  test.each(operations.map((o) => [o.operationId]))('%s has a JSON 200 schema and the default error response', (operationId) => {
    expect(() => responseSchema(operationId, 200)).not.toThrow();
    expect(responseSchema(operationId, 400)).toEqual(responseSchema(operationId, 500));
    expect(Object.keys(responseSchema(operationId, 404)).sort()).toEqual(['additionalProperties', 'properties', 'required', 'type']);
  });

  test('every operation has a success scenario and an error scenario in this file', () => {
    const ids = operations.map((o) => o.operationId);
    expect(ids.filter((id) => !scenarios[id])).toEqual([]);
    expect(ids.filter((id) => !errorScenarios[id])).toEqual([]);
    // …and no scenario is left over from an operation that is gone.
    expect(Object.keys(scenarios).filter((id) => !ids.includes(id))).toEqual([]);
  });
});

describe.each(operations.filter((o) => scenarios[o.operationId]).map((o) => [o.operationId] as const))('%s', (operationId) => {
  test('successful responses match the declared 200 schema', async () => {
    const answers = await scenarios[operationId](newTestKey());
    expect(answers.length).toBeGreaterThan(0);
    for (const a of answers) {
      expect({ label: a.label, status: a.status }).toEqual({ label: a.label, status: 200 });
      expectMatchesResponseSchema(operationId, 200, a.body);
    }
  });

  test('error responses match the declared default schema', async () => {
    const answers = await errorScenarios[operationId](newTestKey());
    for (const a of answers) {
      expect(a.status).toBeGreaterThanOrEqual(400);
      expect(a.status).toBeLessThan(500);
      expectMatchesResponseSchema(operationId, a.status, a.body);
    }
  });
});

describe('the schemas are strict enough to catch drift', () => {
  test('a webhook endpoint with a missing, extra or mistyped member is refused', async () => {
    const key = newTestKey();
    const { secret: _secret, ...endpoint } = await createWebhookEndpoint(t, key);
    const op = 'GetWebhookEndpointsWebhookEndpoint';
    expect(responseSchemaErrors(op, 200, endpoint)).toEqual([]);
    const { url: _url, ...withoutUrl } = endpoint;
    expect(responseSchemaErrors(op, 200, withoutUrl).length).toBeGreaterThan(0);
    expect(responseSchemaErrors(op, 200, { ...endpoint, connect: false }).length).toBeGreaterThan(0);
    expect(responseSchemaErrors(op, 200, { ...endpoint, created: '123' }).length).toBeGreaterThan(0);
    expect(responseSchemaErrors(op, 200, { ...endpoint, status: 'paused' }).length).toBeGreaterThan(0);
    expect(responseSchemaErrors(op, 200, { ...endpoint, object: 'webhook' }).length).toBeGreaterThan(0);
    expect(responseSchemaErrors(op, 200, { ...endpoint, metadata: { a: 1 } }).length).toBeGreaterThan(0);
  });

  test('a list with a wrong envelope or a wrong item is refused', async () => {
    const key = newTestKey();
    await createWebhookEndpoint(t, key);
    const { body } = await get(key, WE);
    const op = 'GetWebhookEndpoints';
    expect(responseSchemaErrors(op, 200, body)).toEqual([]);
    expect(responseSchemaErrors(op, 200, { ...body, object: 'array' }).length).toBeGreaterThan(0);
    expect(responseSchemaErrors(op, 200, { ...body, url: '/v1/other' }).length).toBeGreaterThan(0);
    const { has_more: _h, ...noHasMore } = body;
    expect(responseSchemaErrors(op, 200, noHasMore).length).toBeGreaterThan(0);
    expect(responseSchemaErrors(op, 200, { ...body, data: [{ ...body.data[0], livemode: 'no' }] }).length).toBeGreaterThan(0);
  });

  test('an event with a missing, extra or mistyped member is refused', async () => {
    const key = newTestKey();
    const { plain } = await eventsOf(key);
    const { body: event } = await get(key, `${EV}/${plain}`);
    const op = 'GetEventsId';
    expect(responseSchemaErrors(op, 200, event)).toEqual([]);
    const { request: _request, ...withoutRequest } = event;
    expect(responseSchemaErrors(op, 200, withoutRequest).length).toBeGreaterThan(0);
    expect(responseSchemaErrors(op, 200, { ...event, webhooks: [] }).length).toBeGreaterThan(0);
    expect(responseSchemaErrors(op, 200, { ...event, id: 'ev_1' }).length).toBeGreaterThan(0);
    expect(responseSchemaErrors(op, 200, { ...event, pending_webhooks: '0' }).length).toBeGreaterThan(0);
  });

  test('an error body in another shape is refused', () => {
    const op = 'PostWebhookEndpoints';
    expect(responseSchemaErrors(op, 400, { error: { type: 'invalid_request_error', message: 'm' } })).toEqual([]);
    expect(responseSchemaErrors(op, 400, { message: 'm' }).length).toBeGreaterThan(0);
    expect(responseSchemaErrors(op, 400, { error: { type: 'oops', message: 'm' } }).length).toBeGreaterThan(0);
    expect(responseSchemaErrors(op, 400, { error: { message: 'm' } }).length).toBeGreaterThan(0);
  });
});
