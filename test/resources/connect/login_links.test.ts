import Stripe from 'stripe';
import { bearer, newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { COMPLETE_EXPRESS, createAccount } from '../../helpers/fixtures';
import { expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { hashToken } from '../../../src/resources/connect/account_links/service';
import { expectError, requestsOf, type Res } from '../../helpers/requests';
import { LATEST_API_VERSION } from '../../../src/kernel/versions';

// Login links end to end: created for the platform's onboarded Express accounts (SDK and raw
// HTTP), and the hosted page standing for the Express Dashboard: single use, expiring, the
// account's id and status, escaped, no-store, its token kept only as a hash.

let nowMs = Date.UTC(2026, 11, 1, 12, 0, 0);
const clock = { nowMs: () => nowMs };
const TTL = 120;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ LOGIN_LINK_TTL_SECONDS: String(TTL), PUBLIC_URL: 'https://sandbank.test' }, { clock });
});
afterAll(() => t.close());

const { post } = requestsOf(() => t);

const openPage = (url: string): Promise<Res> => t.http().get(new URL(url).pathname) as unknown as Promise<Res>;
const tokenOf = (url: string): string => new URL(url).pathname.split('/').pop() as string;

describe('POST /v1/accounts/{account}/login_links', () => {
  it('answers a single-use URL under PUBLIC_URL for an onboarded Express account, through the SDK too', async () => {
    const key = newTestKey();
    const { id } = await createAccount(t, key, COMPLETE_EXPRESS);
    const res = await post(key, `/v1/accounts/${id}/login_links`);
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostAccountsAccountLoginLinks', 200, res.body);
    expect(res.body).toEqual({ object: 'login_link', created: Math.floor(nowMs / 1000), url: expect.stringMatching(/^https:\/\/sandbank\.test\/hosted\/login_links\/[A-Za-z0-9]{40}$/) });
    const viaSdk = await t.stripe(key).accounts.createLoginLink(id);
    expect(viaSdk.object).toBe('login_link');
    expect(viaSdk.url).not.toBe(res.body.url);
  });

  it('refuses accounts without the Express Dashboard, Express accounts still onboarding, and accounts of others', async () => {
    const key = newTestKey();
    const standard = await createAccount(t, key, { ...COMPLETE_EXPRESS, type: 'standard' });
    expectError(await post(key, `/v1/accounts/${standard.id}/login_links`), 400, { type: 'invalid_request_error', message: expect.stringContaining('Express Dashboard') });
    const onboarding = await createAccount(t, key, { type: 'express' });
    expectError(await post(key, `/v1/accounts/${onboarding.id}/login_links`), 400, {
      message: 'Cannot create a login link for an account that has not completed onboarding.',
    });
    await expect(t.stripe(key).accounts.createLoginLink(onboarding.id)).rejects.toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);

    const express = await createAccount(t, key, COMPLETE_EXPRESS);
    expectError(await post(newTestKey(), `/v1/accounts/${express.id}/login_links`), 404, { code: 'resource_missing' });
    // Acting as the account itself, it makes no login link of its own.
    expectError(await post(key, `/v1/accounts/${express.id}/login_links`, '', { 'Stripe-Account': express.id }), 404, { code: 'resource_missing' });
    expectError(await post(key, `/v1/accounts/${(await t.http().get('/v1/account').set(bearer(key))).body.id}/login_links`), 404, { code: 'resource_missing' });
  });
});

describe('the hosted page standing for the Express Dashboard', () => {
  it("opens once, shows the account's id and status with the hosted pages' headers, then says the link is spent", async () => {
    const key = newTestKey();
    const { id } = await createAccount(t, key, { ...COMPLETE_EXPRESS, business_profile: { ...COMPLETE_EXPRESS.business_profile, name: '<b>Shop</b>' } });
    const { url } = (await post(key, `/v1/accounts/${id}/login_links`)).body;
    const page = await openPage(url);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.headers['content-security-policy']).toMatch(/script-src 'nonce-[^']+'/);
    expect(page.text).toContain('Express Dashboard');
    expect(page.text).toContain(`<dd id="account-id">${id}</dd>`);
    expect(page.text).toContain('<dd id="charges-enabled">yes</dd>');
    expect(page.text).toContain('<dd id="payouts-enabled">yes</dd>');
    expect(page.text).toContain('&lt;b&gt;Shop&lt;/b&gt;');
    expect(page.text).not.toContain('<b>Shop</b>');

    const again = await openPage(url);
    expect(again.status).toBe(410);
    expect(again.text).toContain('This link has expired');
    expect((await openPage('https://sandbank.test/hosted/login_links/' + 'A'.repeat(40))).status).toBe(404);
    expect((await openPage('https://sandbank.test/hosted/login_links/short')).status).toBe(404);
  });

  it("shows a rejected account's status, and a link opened after LOGIN_LINK_TTL_SECONDS is spent", async () => {
    const key = newTestKey();
    const { id } = await createAccount(t, key, COMPLETE_EXPRESS);
    const late = (await post(key, `/v1/accounts/${id}/login_links`)).body.url;
    // Today's reasons (endive's): pinned, as the default is the contract's older version.
    await post(key, `/v1/accounts/${id}/reject`, { reason: 'other' }, { 'Stripe-Version': LATEST_API_VERSION });
    const { url } = (await post(key, `/v1/accounts/${id}/login_links`)).body;
    const page = await openPage(url);
    expect(page.text).toContain('<dd id="charges-enabled">no</dd>');
    expect(page.text).toContain('<dd id="disabled-reason">rejected.platform_other</dd>');
    nowMs += (TTL + 1) * 1000;
    expect((await openPage(late)).status).toBe(410);
  });

  it('keeps the token only as a hash, never logs it, and seals a replayed create', async () => {
    const key = newTestKey();
    const { id } = await createAccount(t, key, COMPLETE_EXPRESS);
    const headers = { 'Idempotency-Key': `login-${id}` };
    const first = await post(key, `/v1/accounts/${id}/login_links`, '', headers);
    const replay = await post(key, `/v1/accounts/${id}/login_links`, '', headers);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.url).toBe(first.body.url);
    const token = tokenOf(first.body.url);
    await openPage(first.body.url);
    expect(t.logText()).not.toContain(token);
    const prisma = t.runtime.prisma;
    expect(await prisma.loginLink.count({ where: { tokenHash: hashToken(token) } })).toBe(1);
    for (const table of ['idempotency_records', 'login_links']) {
      const dump = JSON.stringify(await prisma.$queryRawUnsafe(`SELECT row_to_json(r)::text AS row FROM (SELECT * FROM ${table}) r`));
      expect(dump).not.toContain(token);
    }
  });
});
