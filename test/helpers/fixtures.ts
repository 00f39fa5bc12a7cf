import qs from 'qs';
import { bearer, type TestApp } from './app';
import { accountOfKey, emitTestEvent } from './events';
import { finishProcessing } from '../../src/resources/identity/pipeline';

// Objects the conformance tests need, per area. When an area adds an operation with a path
// parameter, add a factory for that parameter here; when its create operation has required
// parameters, add a valid body to `validParams` so malformed inputs are tried one at a time.

/** Form encoding as the official SDKs send it: bracketed keys, indexed arrays. */
export const form = (params: Record<string, unknown>): string => qs.stringify(params, { arrayFormat: 'indices' });

export const WEBHOOK_URL = 'https://example.com/hooks';

/** Creates a webhook endpoint over HTTP and returns the response body; fails on a non-200. */
export async function createWebhookEndpoint(app: TestApp, key: string, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const res = await app
    .http()
    .post('/v1/webhook_endpoints')
    .set(bearer(key))
    .type('form')
    .send(form({ url: WEBHOOK_URL, enabled_events: ['charge.succeeded'], ...params }));
  if (res.status !== 200) throw new Error(`creating a webhook endpoint failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Creates `n` webhook endpoints one after another; ids oldest first. */
export async function createWebhookEndpoints(app: TestApp, key: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await createWebhookEndpoint(app, key, { url: `${WEBHOOK_URL}/${i}` })).id);
  return ids;
}

/** Creates a connected account of the key's platform over HTTP and returns the response body. */
export async function createAccount(app: TestApp, key: string, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const res = await app.http().post('/v1/accounts').set(bearer(key)).type('form').send(form(params));
  if (res.status !== 200) throw new Error(`creating an account failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export type FixtureFactory = (app: TestApp, key: string) => Promise<string>;

/** An existing object for each path parameter name used in openapi/ (`{webhook_endpoint}` …). */
export const pathFixtures: Record<string, FixtureFactory> = {
  webhook_endpoint: async (app, key) => (await createWebhookEndpoint(app, key)).id,
  /** A connected account of the key's platform (`/v1/accounts/{account}`). */
  account: async (app, key) => (await createAccount(app, key)).id,
  /** An event of the key's account (`/v1/events/{id}`, `/sandbox/v1/events/{id}/resend`). */
  id: (app, key) => createEvent(app, key),
  /** A verification session in requires_input (`/v1/identity/verification_sessions/{session}` …). */
  session: async (app, key) => (await createVerificationSession(app, key)).id,
  /** A verification report (`/v1/identity/verification_reports/{report}`). */
  report: (app, key) => createVerificationReport(app, key),
};

/** An event of the key's account, emitted as services do (not handed to workers). */
export async function createEvent(app: TestApp, key: string): Promise<string> {
  // Creating an endpoint is a request, so the key has an account by then.
  await createWebhookEndpoint(app, key);
  return emitTestEvent(app.runtime, await accountOfKey(app.runtime, key), 'account.updated', undefined, { handOff: false });
}

/** A body or query that passes validation, for operations with required parameters. */
export const validParams: Record<string, Record<string, unknown>> = {
  PostWebhookEndpoints: { url: WEBHOOK_URL, enabled_events: ['charge.succeeded'] },
  // Well-formed; no endpoint has this id, so an accepted resend is a 400 rather than a delivery.
  PostSandboxEventsIdResend: { webhook_endpoint: 'we_000000000000000000000000' },
  // Well-formed; no connected account has this id, so an accepted body is a 400 resource_missing.
  PostAccountSessions: { account: 'acct_0000000000000000', components: { payments: { enabled: true, features: { refund_management: true } } } },
  // Well-formed; no connected account has this id, so an accepted body is a 400 resource_missing.
  PostAccountLinks: { account: 'acct_0000000000000000', type: 'account_onboarding' },
  // Well-formed; no session has this secret.
  PostSandboxAccountSessionsClaim: { client_secret: 'accs_secret__000000000000000000000000000000000000000000000000' },
  PostAppsSecrets: { name: 'api-key', payload: 'not-really-secret', scope: { type: 'account' } },
  PostAppsSecretsDelete: { name: 'api-key', scope: { type: 'account' } },
  GetAppsSecretsFind: { name: 'api-key', scope: { type: 'account' } },
  GetAppsSecrets: { scope: { type: 'user', user: 'usr_1' } },
  PostIdentityVerificationSessions: { type: 'document' },
  PostSandboxIdentityVerificationSessionsSessionSubmit: { outcome: 'verified' },
};

/** Creates an account session for a new connected account of the key's platform; returns the response body. */
export async function createAccountSession(app: TestApp, key: string, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const account = (await createAccount(app, key)).id;
  const res = await app
    .http()
    .post('/v1/account_sessions')
    .set(bearer(key))
    .type('form')
    .send(form({ account, components: { account_onboarding: { enabled: true } }, ...params }));
  if (res.status !== 200) throw new Error(`creating an account session failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Creates (or replaces) an app secret over HTTP and returns the response body (no payload). */
export async function createAppSecret(app: TestApp, key: string, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const res = await app
    .http()
    .post('/v1/apps/secrets')
    .set(bearer(key))
    .type('form')
    .send(form({ name: 'api-key', payload: 'secret-value', scope: { type: 'account' }, ...params }));
  if (res.status !== 200) throw new Error(`creating an app secret failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}
/** Creates a verification session over HTTP and returns the response body. */
export async function createVerificationSession(app: TestApp, key: string, params: Record<string, unknown> = { type: 'document' }): Promise<Record<string, any>> {
  const res = await app.http().post('/v1/identity/verification_sessions').set(bearer(key)).type('form').send(form(params));
  if (res.status !== 200) throw new Error(`creating a verification session failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/**
 * Submits a new session with `outcome` and runs its processing step as the worker would (no
 * waiting for the delay); returns the report id.
 */
export async function createVerificationReport(app: TestApp, key: string, outcome = 'verified', params?: Record<string, unknown>): Promise<string> {
  const { id } = await createVerificationSession(app, key, params);
  const res = await app.http().post(`/sandbox/v1/identity/verification_sessions/${id}/submit`).set(bearer(key)).type('form').send(form({ outcome }));
  if (res.status !== 200) throw new Error(`submitting a verification session failed: ${res.status} ${JSON.stringify(res.body)}`);
  await finishProcessing(app.runtime, id);
  const row = await app.runtime.prisma.identityVerificationSession.findUniqueOrThrow({ where: { id } });
  if (!row.lastVerificationReport) throw new Error('the processing step made no report');
  return row.lastVerificationReport;
}
