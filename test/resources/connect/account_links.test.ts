import { bearer, newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { createAccount, form } from '../../helpers/fixtures';
import { expectErrorBody, expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { hashToken } from '../../../src/resources/connect/account_links/service';

// Account links end to end over HTTP: create (supertest and the SDK) with its validation, the
// hosted onboarding page (single use, expiry, refresh and return redirects, form errors, leave,
// escaping), the account it completes, and the rule on holder fields once onboarding began.
// The same page in a real browser: account_links.browser.test.ts.

type Res = { status: number; body: any; text: string; headers: Record<string, string> };

let nowMs = Date.UTC(2026, 10, 23, 12, 0, 0);
const clock = { nowMs: () => nowMs };
const now = () => Math.floor(nowMs / 1000);
const TTL = 300;
const REFRESH = 'https://platform.example/refresh';
const RETURN = 'https://platform.example/return';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ ACCOUNT_LINK_TTL_SECONDS: String(TTL) }, { clock });
});
afterAll(() => t.close());

const post = (key: string, path: string, body: string | Record<string, unknown>, headers: Record<string, string> = {}): Promise<Res> =>
  t.http().post(path).set(bearer(key)).set(headers).type('form').send(typeof body === 'string' ? body : form(body)) as unknown as Promise<Res>;
const get = (key: string, path: string, headers: Record<string, string> = {}): Promise<Res> =>
  t.http().get(path).set(bearer(key)).set(headers) as unknown as Promise<Res>;
const createLink = (key: string, body: string | Record<string, unknown>, headers: Record<string, string> = {}) =>
  post(key, '/v1/account_links', body, headers);

function expectError(res: Res, status: number, error: Record<string, unknown>): void {
  expect({ status: res.status, error: res.body?.error }).toMatchObject({ status, error });
  expectErrorBody(res.body);
}

/** The path of a link's URL (the test app answers it whatever PUBLIC_URL says). */
const pathOf = (url: string): string => new URL(url).pathname;
const tokenOf = (url: string): string => pathOf(url).split('/').pop() as string;

const openPage = (url: string): Promise<Res> => t.http().get(pathOf(url)) as unknown as Promise<Res>;
const submitPage = (url: string, fields: Record<string, unknown>): Promise<Res> =>
  t.http().post(pathOf(url)).type('form').send(form(fields)) as unknown as Promise<Res>;
const formTokenOf = (page: Res): string => {
  const match = /name="form_token" value="([0-9A-Za-z]+)"/.exec(page.text);
  if (!match) throw new Error(`no form token in the page: ${page.status}`);
  return match[1];
};

/** What "Fill in test data" posts for a US individual. */
const INDIVIDUAL_FORM = {
  business_profile: { mcc: '5734', url: 'https://accessible.stripe.com' },
  individual: {
    first_name: 'Jenny',
    last_name: 'Rosen',
    email: 'jenny.rosen@example.com',
    phone: '+12025550123',
    dob: { day: '1', month: '1', year: '1901' },
    ssn_last_4: '0000',
    address: { line1: 'address_full_match', city: 'San Francisco', state: 'ca', postal_code: '94103' },
  },
  external_account: { routing_number: '110000000', account_number: '000123456789' },
  tos_acceptance: 'accepted',
};

async function newPlatform(params: Record<string, unknown> = { business_type: 'individual' }): Promise<{ key: string; account: string }> {
  const key = newTestKey();
  return { key, account: (await createAccount(t, key, params)).id };
}

const CUSTOM = {
  controller: { stripe_dashboard: { type: 'none' }, requirement_collection: 'application', fees: { payer: 'application' }, losses: { payments: 'application' } },
  capabilities: { card_payments: { requested: true }, transfers: { requested: true } },
  business_type: 'individual',
};

describe('POST /v1/account_links', () => {
  test('answers a single-use hosted URL under PUBLIC_URL that expires after ACCOUNT_LINK_TTL_SECONDS', async () => {
    const { key, account } = await newPlatform();
    const res = await createLink(key, { account, type: 'account_onboarding', refresh_url: REFRESH, return_url: RETURN });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostAccountLinks', 200, res.body);
    expect(res.body).toEqual({ object: 'account_link', created: now(), expires_at: now() + TTL, url: expect.any(String) });
    expect(res.body.url.startsWith(`${t.config.publicUrl}/hosted/account_links/`)).toBe(true);
    expect(tokenOf(res.body.url)).toMatch(/^[0-9A-Za-z]{40}$/);
    // A second link is another URL.
    const again = await createLink(key, { account, type: 'account_onboarding' });
    expect(again.body.url).not.toBe(res.body.url);
  });

  test('through the official SDK; a connected account (stripeAccount) has no connected accounts of its own', async () => {
    const { key, account } = await newPlatform();
    const stripe = t.stripe(key);
    const link = await stripe.accountLinks.create({
      account,
      type: 'account_onboarding',
      collection_options: { fields: 'eventually_due', future_requirements: 'include' },
      refresh_url: REFRESH,
      return_url: RETURN,
    });
    expect(link.object).toBe('account_link');
    expect(link.expires_at - link.created).toBe(TTL);
    await expect(stripe.accountLinks.create({ account, type: 'account_onboarding' }, { stripeAccount: account })).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      statusCode: 400,
      code: 'resource_missing',
      param: 'account',
    });
  });

  test('validates type, collect against collection_options, the URLs and unknown parameters', async () => {
    const { key, account } = await newPlatform();
    expectError(await createLink(key, { account }), 400, { code: 'parameter_missing', param: 'type' });
    expectError(await createLink(key, { type: 'account_onboarding' }), 400, { code: 'parameter_missing', param: 'account' });
    expectError(await createLink(key, { account, type: 'onboarding' }), 400, { param: 'type' });
    expectError(await createLink(key, { account, type: 'account_onboarding', collect: 'currently_due', collection_options: { fields: 'currently_due' } }), 400, {
      param: 'collect',
    });
    expectError(await createLink(key, { account, type: 'account_onboarding', collection_options: { fields: 'all' } }), 400, {
      param: 'collection_options[fields]',
    });
    expectError(await createLink(key, { account, type: 'account_onboarding', collection_options: { bogus: 'x' } }), 400, {
      code: 'parameter_unknown',
      param: 'collection_options[bogus]',
    });
    expectError(await createLink(key, { account, type: 'account_onboarding', bogus: '1' }), 400, { code: 'parameter_unknown', param: 'bogus' });
    expectError(await createLink(key, { account, type: 'account_onboarding', return_url: 'javascript:alert(1)' }), 400, { code: 'url_invalid', param: 'return_url' });
    expectError(await createLink(key, { account, type: 'account_onboarding', refresh_url: 'not a url' }), 400, { code: 'url_invalid', param: 'refresh_url' });
    expectError(await createLink(key, { account, type: 'account_onboarding', refresh_url: `https://example.com/${'a'.repeat(5000)}` }), 400, {
      param: 'refresh_url',
    });
    // `collect` alone, the deprecated form, is accepted.
    expect((await createLink(key, { account, type: 'account_onboarding', collect: 'eventually_due' })).status).toBe(200);
  });

  test('account_update only where the platform collects requirements', async () => {
    const { key, account } = await newPlatform();
    const refused = await createLink(key, { account, type: 'account_update' });
    expectError(refused, 400, { type: 'invalid_request_error', param: 'type' });
    expect(refused.body.error.message).toContain('requirement_collection');
    const custom = (await createAccount(t, key, CUSTOM)).id;
    expect((await createLink(key, { account: custom, type: 'account_update' })).status).toBe(200);
  });

  test("the account must be one of the caller's connected accounts", async () => {
    const { key, account } = await newPlatform();
    const other = newTestKey();
    expectError(await createLink(other, { account, type: 'account_onboarding' }), 400, { code: 'resource_missing', param: 'account' });
    expectError(await createLink(key, { account: 'acct_nope', type: 'account_onboarding' }), 400, { code: 'resource_missing', param: 'account' });
    // The platform itself is not its own connected account.
    const platform = (await get(key, '/v1/account')).body.id;
    expectError(await createLink(key, { account: platform, type: 'account_onboarding' }), 400, { code: 'resource_missing' });
  });
});

describe('the hosted onboarding page', () => {
  test('opens once, as HTML that is never cached or referred; a second visit goes to refresh_url', async () => {
    const { key, account } = await newPlatform();
    const { url } = (await createLink(key, { account, type: 'account_onboarding', refresh_url: REFRESH, return_url: RETURN })).body;
    const page = await openPage(url);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.headers['content-security-policy']).toMatch(/default-src 'none'.*script-src 'nonce-[^']+'/);
    // The fields of what is due for a US individual, and the test-data button.
    for (const name of ['individual[first_name]', 'individual[dob][year]', 'individual[ssn_last_4]', 'individual[address][state]', 'business_profile[mcc]', 'external_account[routing_number]']) {
      expect(page.text).toContain(`name="${name}"`);
    }
    expect(page.text).not.toContain('name="company[name]"');
    expect(page.text).toContain('id="fill-test-data"');
    const second = await openPage(url);
    expect(second.status).toBe(303);
    expect(second.headers.location).toBe(REFRESH);
  });

  test('an expired link goes to refresh_url; without refresh_url it says so; an unknown token is a 404 page', async () => {
    const { key, account } = await newPlatform();
    const withRefresh = (await createLink(key, { account, type: 'account_onboarding', refresh_url: REFRESH })).body.url;
    const without = (await createLink(key, { account, type: 'account_onboarding' })).body.url;
    nowMs += (TTL + 1) * 1000;
    const expired = await openPage(withRefresh);
    expect(expired.status).toBe(303);
    expect(expired.headers.location).toBe(REFRESH);
    const plain = await openPage(without);
    expect(plain.status).toBe(410);
    expect(plain.text).toContain('expired');
    const unknown = await t.http().get(`/hosted/account_links/${'x'.repeat(40)}`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers['content-type']).toContain('text/html');
    expect((await t.http().get('/hosted/account_links/short')).status).toBe(404);
  });

  test('completing the form fills the requirements, activates the capabilities, emits events and goes to return_url', async () => {
    const { key, account } = await newPlatform();
    const before = (await get(key, `/v1/accounts/${account}`)).body;
    expect(before.requirements.currently_due.length).toBeGreaterThan(5);
    expect(before.capabilities).toEqual({ card_payments: 'inactive', transfers: 'inactive' });
    const { url } = (await createLink(key, { account, type: 'account_onboarding', refresh_url: REFRESH, return_url: RETURN })).body;
    const page = await openPage(url);
    const done = await submitPage(url, { form_token: formTokenOf(page), action: 'submit', ...INDIVIDUAL_FORM });
    expect(done.status).toBe(303);
    expect(done.headers.location).toBe(RETURN);

    const after = (await get(key, `/v1/accounts/${account}`)).body;
    expectMatchesResponseSchema('GetAccountsAccount', 200, after);
    // A currently_due link leaves what is due only eventually (the full SSN).
    expect(after.requirements).toMatchObject({ currently_due: [], eventually_due: ['individual.id_number'], past_due: [], disabled_reason: null });
    expect(after).toMatchObject({ charges_enabled: true, payouts_enabled: true, details_submitted: true, capabilities: { card_payments: 'active', transfers: 'active' } });
    expect(after.individual).toMatchObject({ first_name: 'Jenny', last_name: 'Rosen', dob: { day: 1, month: 1, year: 1901 }, address: { state: 'CA' } });
    expect(after.external_accounts.data[0]).toMatchObject({ object: 'bank_account', last4: '6789', routing_number: '110000000' });
    expect(after.tos_acceptance.date).toBe(now());
    expect(after.tos_acceptance.ip).toEqual(expect.any(String));

    // The connected account's events (its platform's connect endpoints get them).
    const events = (await get(key, '/v1/events?limit=10', { 'Stripe-Account': account })).body.data;
    const types = events.map((e: any) => e.type);
    expect(types).toEqual(expect.arrayContaining(['account.updated', 'capability.updated', 'capability.updated']));
    const updated = events.find((e: any) => e.type === 'account.updated' && e.account === account);
    expect(updated.request).toEqual({ id: null, idempotency_key: null });
    expect(updated.data.previous_attributes).toHaveProperty('charges_enabled', false);

    // The form and the link are used up.
    const again = await submitPage(url, { form_token: formTokenOf(page), action: 'submit', ...INDIVIDUAL_FORM });
    expect(again.status).toBe(303);
    expect(again.headers.location).toBe(REFRESH);
    expect((await openPage(url)).headers.location).toBe(REFRESH);
  });

  test('collection_options[fields]=eventually_due also asks for what is due later, and clears it', async () => {
    const { key, account } = await newPlatform();
    const current = (await createLink(key, { account, type: 'account_onboarding' })).body.url;
    expect((await openPage(current)).text).not.toContain('name="individual[id_number]"');
    const { url } = (await createLink(key, { account, type: 'account_onboarding', collection_options: { fields: 'eventually_due' }, return_url: RETURN })).body;
    const page = await openPage(url);
    expect(page.text).toContain('name="individual[id_number]"');
    const missing = await submitPage(url, { form_token: formTokenOf(page), action: 'submit', ...INDIVIDUAL_FORM });
    expect(missing.status).toBe(400);
    expect(missing.text).toContain('ID number (in the US, the full Social Security number) is required.');
    const done = await submitPage(url, {
      form_token: formTokenOf(missing),
      action: 'submit',
      ...INDIVIDUAL_FORM,
      individual: { ...INDIVIDUAL_FORM.individual, id_number: '000000000' },
    });
    expect(done.status).toBe(303);
    const after = (await get(key, `/v1/accounts/${account}`)).body;
    expect(after.requirements).toMatchObject({ currently_due: [], eventually_due: [] });
    expect(after.individual).toMatchObject({ id_number_provided: true, requirements: { eventually_due: [] } });
  });

  test('wrong or missing values re-show the form with what to fix, and change nothing', async () => {
    const { key, account } = await newPlatform();
    const { url } = (await createLink(key, { account, type: 'account_onboarding', return_url: RETURN })).body;
    const token = formTokenOf(await openPage(url));
    const bad = await submitPage(url, {
      form_token: token,
      action: 'submit',
      ...INDIVIDUAL_FORM,
      individual: { ...INDIVIDUAL_FORM.individual, dob: { day: '32', month: '1', year: '1901' }, email: 'nope', first_name: '<b>x</b>' },
      external_account: { routing_number: '12', account_number: '000123456789' },
      tos_acceptance: undefined,
    });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('The day must be a number from 1 to 31.');
    expect(bad.text).toContain('Enter a valid email address.');
    expect(bad.text).toContain('The routing number must be 9 digits.');
    expect(bad.text).toContain('Accept the services agreement');
    expect(bad.text.split('Accept the services agreement to continue.')).toHaveLength(2);
    // What was typed comes back escaped.
    expect(bad.text).toContain('value="&lt;b&gt;x&lt;/b&gt;"');
    expect(bad.text).not.toContain('<b>x</b>');
    expect((await get(key, `/v1/accounts/${account}`)).body.individual?.first_name ?? null).toBeNull();
    // The same form, corrected, goes through.
    const fixed = await submitPage(url, { form_token: formTokenOf(bad), action: 'submit', ...INDIVIDUAL_FORM });
    expect(fixed.status).toBe(303);
    expect(fixed.headers.location).toBe(RETURN);
  });

  test('the form needs the token its page carried', async () => {
    const { key, account } = await newPlatform();
    const { url } = (await createLink(key, { account, type: 'account_onboarding', refresh_url: REFRESH })).body;
    // Not opened yet: there is no form to post.
    expect((await submitPage(url, { form_token: 'x'.repeat(40), ...INDIVIDUAL_FORM })).headers.location).toBe(REFRESH);
    await openPage(url);
    const forged = await submitPage(url, { form_token: 'x'.repeat(40), action: 'submit', ...INDIVIDUAL_FORM });
    expect(forged.status).toBe(303);
    expect(forged.headers.location).toBe(REFRESH);
    const notForm = await t.http().post(pathOf(url)).set('Content-Type', 'application/json').send('{}');
    expect(notForm.status).toBe(415);
  });

  test('leaving changes nothing and goes to return_url', async () => {
    const { key, account } = await newPlatform();
    const { url } = (await createLink(key, { account, type: 'account_onboarding', refresh_url: REFRESH, return_url: RETURN })).body;
    const left = await submitPage(url, { form_token: formTokenOf(await openPage(url)), action: 'leave' });
    expect(left.status).toBe(303);
    expect(left.headers.location).toBe(RETURN);
    expect((await get(key, `/v1/accounts/${account}`)).body.details_submitted).toBe(false);
  });

  test('without a business type, the page asks for it and collects the chosen owner', async () => {
    const { key, account } = await newPlatform({});
    const { url } = (await createLink(key, { account, type: 'account_onboarding', return_url: RETURN })).body;
    const page = await openPage(url);
    expect(page.text).toContain('name="business_type"');
    expect(page.text).toContain('name="company[tax_id]"');
    expect(page.text).toContain('name="individual[first_name]"');
    // A company also names its representative and confirms its owners.
    expect(page.text).toContain('name="representative[relationship][title]"');
    expect(page.text).toContain('name="company_owners_provided"');
    const companyForm = {
      form_token: formTokenOf(page),
      action: 'submit',
      business_type: 'company',
      business_profile: INDIVIDUAL_FORM.business_profile,
      company: { name: 'Sandbank Test Company', phone: '+12025550199', tax_id: '000000000', address: INDIVIDUAL_FORM.individual.address },
      representative: { ...INDIVIDUAL_FORM.individual, relationship: { title: 'CEO' } },
      // The other owner's fields, left empty, are ignored.
      individual: { first_name: '' },
      external_account: INDIVIDUAL_FORM.external_account,
      tos_acceptance: 'accepted',
    };
    const unconfirmed = await submitPage(url, companyForm);
    expect(unconfirmed.status).toBe(400);
    expect(unconfirmed.text).toContain('Every owner of 25% or more is on file');
    const done = await submitPage(url, { ...companyForm, company_owners_provided: 'confirmed' });
    expect(done.status).toBe(303);
    const after = (await get(key, `/v1/accounts/${account}`)).body;
    expect(after).toMatchObject({
      business_type: 'company',
      company: { name: 'Sandbank Test Company', tax_id_provided: true, owners_provided: true },
      details_submitted: true,
    });
    expect(after.requirements.currently_due).toEqual([]);
    // The representative is a person of the account, and its creation an event.
    const persons = (await get(key, `/v1/accounts/${account}/persons`)).body.data;
    expect(persons).toEqual([
      expect.objectContaining({ first_name: 'Jenny', relationship: expect.objectContaining({ representative: true, title: 'CEO' }), ssn_last_4_provided: true }),
    ]);
    const types = (await t.runtime.prisma.event.findMany({ where: { accountId: account }, orderBy: { seq: 'asc' } })).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['person.created', 'account.external_account.created', 'account.updated']));
  });

  test('account_update shows what is on file, and blank fields keep it', async () => {
    const { key, account } = await newPlatform(CUSTOM);
    const first = (await createLink(key, { account, type: 'account_onboarding' })).body.url;
    const firstPage = await openPage(first);
    expect((await submitPage(first, { form_token: formTokenOf(firstPage), action: 'submit', ...INDIVIDUAL_FORM })).status).toBe(200);
    const { url } = (await createLink(key, { account, type: 'account_update', return_url: RETURN })).body;
    const page = await openPage(url);
    expect(page.text).toContain('value="Jenny"');
    const done = await submitPage(url, { form_token: formTokenOf(page), action: 'submit', individual: { first_name: 'Jen' }, tos_acceptance: 'accepted' });
    expect(done.status).toBe(303);
    const after = (await get(key, `/v1/accounts/${account}`)).body;
    expect(after.individual).toMatchObject({ first_name: 'Jen', last_name: 'Rosen' });
    expect(after.requirements.currently_due).toEqual([]);
  });

  test("values on file are escaped in the page", async () => {
    const { key, account } = await newPlatform({ business_type: 'individual', business_profile: { name: '<script>alert(1)</script>' } });
    const { url } = (await createLink(key, { account, type: 'account_onboarding' })).body;
    const page = await openPage(url);
    expect(page.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page.text).not.toContain('<script>alert(1)');
  });

  test('the URL token is kept only as a hash, is never logged, and a replayed create is sealed', async () => {
    const { key, account } = await newPlatform();
    const first = await createLink(key, { account, type: 'account_onboarding' }, { 'Idempotency-Key': `link-${account}` });
    const replay = await createLink(key, { account, type: 'account_onboarding' }, { 'Idempotency-Key': `link-${account}` });
    expect(replay.body.url).toBe(first.body.url);
    const token = tokenOf(first.body.url);
    await openPage(first.body.url);
    expect(t.logText()).not.toContain(token);
    const prisma = t.runtime.prisma;
    expect(await prisma.accountLink.count({ where: { tokenHash: hashToken(token) } })).toBe(1);
    const dump = JSON.stringify(await prisma.$queryRawUnsafe(`SELECT row_to_json(r)::text AS row FROM (SELECT * FROM idempotency_records) r`));
    expect(dump).not.toContain(token);
    const links = JSON.stringify(await prisma.$queryRawUnsafe(`SELECT row_to_json(r)::text AS row FROM (SELECT * FROM account_links) r`));
    expect(links).not.toContain(token);
  });
});

describe('holder fields once onboarding began', () => {
  const holderUpdates: Record<string, Record<string, unknown>> = {
    individual: { individual: { first_name: 'Changed' } },
    company: { company: { name: 'Changed' } },
    business_type: { business_type: 'company' },
    external_account: { external_account: 'btok_us_verified' },
  };

  test('can change before any link or session exists', async () => {
    const { key, account } = await newPlatform();
    for (const params of Object.values(holderUpdates)) expect((await post(key, `/v1/accounts/${account}`, params)).status).toBe(200);
  });

  test.each(['link', 'session'])('after an account %s, only where the platform collects requirements', async (kind) => {
    const { key, account } = await newPlatform();
    const custom = (await createAccount(t, key, CUSTOM)).id;
    for (const id of [account, custom]) {
      const res =
        kind === 'link'
          ? await createLink(key, { account: id, type: 'account_onboarding' })
          : await post(key, '/v1/account_sessions', { account: id, components: { account_onboarding: { enabled: true } } });
      expect(res.status).toBe(200);
    }
    for (const [param, params] of Object.entries(holderUpdates)) {
      const refused = await post(key, `/v1/accounts/${account}`, params);
      expectError(refused, 400, { type: 'invalid_request_error', param });
      expect(refused.body.error.message).toContain('requirement_collection');
      expect((await post(key, `/v1/accounts/${custom}`, params)).status).toBe(200);
    }
    // Everything else still changes, and a refused update changed nothing.
    const other = await post(key, `/v1/accounts/${account}`, { metadata: { a: '1' }, email: 'new@example.com' });
    expect(other.status).toBe(200);
    expect(other.body.individual?.first_name ?? null).toBeNull();
    await expect(t.stripe(key).accounts.update(account, { individual: { first_name: 'X' } })).rejects.toMatchObject({ statusCode: 400, param: 'individual' });
  });
});
