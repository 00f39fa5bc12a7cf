import Stripe from 'stripe';
import { bearer, newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { accountOfKey } from '../../helpers/events';
import { COMPLETE_INDIVIDUAL, form } from '../../helpers/fixtures';
import { expectErrorBody, expectMatchesResponseSchema } from '../../helpers/responseSchemas';

// Accounts end to end: the calling account, connected accounts (create, list, retrieve, update,
// delete), strict validation, test tokens, requirements and capabilities, and the events emitted.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

// Every member of the SDK's Account type is answered (individual and company only where they apply).
type SdkKeys = Exclude<keyof Stripe.Account, 'deleted'>;
const SDK_KEYS = [
  'business_profile', 'business_type', 'capabilities', 'charges_enabled', 'company', 'controller', 'country', 'created',
  'default_currency', 'details_submitted', 'email', 'external_accounts', 'future_requirements', 'groups', 'id', 'individual',
  'metadata', 'object', 'payouts_enabled', 'requirements', 'settings', 'tos_acceptance', 'type',
] as const satisfies readonly SdkKeys[];
type MissingKeys = Exclude<SdkKeys, (typeof SDK_KEYS)[number]>;
const sdkKeysComplete: [MissingKeys] extends [never] ? true : MissingKeys = true;

type Res = { status: number; body: any };
const post = (key: string, path: string, body: string | Record<string, unknown>, headers: Record<string, string> = {}): Promise<Res> =>
  t.http().post(path).set(bearer(key)).set(headers).type('form').send(typeof body === 'string' ? body : form(body)) as unknown as Promise<Res>;
const get = (key: string, path: string, headers: Record<string, string> = {}): Promise<Res> =>
  t.http().get(path).set(bearer(key)).set(headers) as unknown as Promise<Res>;
const del = (key: string, path: string): Promise<Res> => t.http().delete(path).set(bearer(key)) as unknown as Promise<Res>;

function expectError(res: Res, status: number, error: Record<string, unknown>): void {
  expect({ status: res.status, error: res.body?.error }).toMatchObject({ status, error });
  expectErrorBody(res.body);
}

const CUSTOM = { controller: { stripe_dashboard: { type: 'none' }, requirement_collection: 'application', fees: { payer: 'application' }, losses: { payments: 'application' } } };
const CAPS = { card_payments: { requested: true }, transfers: { requested: true } };

async function createAccount(key: string, params: Record<string, unknown> = {}): Promise<any> {
  const res = await post(key, '/v1/accounts', params);
  if (res.status !== 200) throw new Error(`creating an account failed: ${res.status} ${JSON.stringify(res.body)}`);
  expectMatchesResponseSchema('PostAccounts', 200, res.body);
  return res.body;
}

/** Everything a US individual must give, as the requirements name it. */
const US_INDIVIDUAL_DUE = [
  'business_profile.mcc',
  'business_profile.url',
  'external_account',
  'individual.address.city',
  'individual.address.line1',
  'individual.address.postal_code',
  'individual.address.state',
  'individual.dob.day',
  'individual.dob.month',
  'individual.dob.year',
  'individual.email',
  'individual.first_name',
  'individual.last_name',
  'individual.phone',
  'individual.ssn_last_4',
  'tos_acceptance.date',
  'tos_acceptance.ip',
];


describe('GET /v1/account', () => {
  it('returns the platform account that owns the key, complete and enabled', async () => {
    const key = newTestKey();
    const res = await get(key, '/v1/account');
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('GetAccount', 200, res.body);
    expect(res.body.id).toBe(await accountOfKey(t.runtime, key));
    expect(res.body).toMatchObject({ object: 'account', type: 'standard', charges_enabled: true, payouts_enabled: true, details_submitted: true });
    expect(res.body.controller).toEqual({ type: 'account' });
    expect(sdkKeysComplete).toBe(true);
  });

  it('returns the connected account named by Stripe-Account, through the SDK too', async () => {
    const key = newTestKey();
    const connected = await createAccount(key, { email: 'c@example.com' });
    const res = await get(key, '/v1/account', { 'Stripe-Account': connected.id });
    expect(res.body).toMatchObject({ id: connected.id, email: 'c@example.com' });
    const stripe = t.stripe(key);
    const viaSdk = await stripe.accounts.retrieveCurrent({}, { stripeAccount: connected.id });
    expect(viaSdk.id).toBe(connected.id);
    expect((await stripe.accounts.retrieveCurrent()).id).toBe(await accountOfKey(t.runtime, key));
  });
});

describe('POST /v1/accounts', () => {
  it('creates a connected account with the complete object and nulls', async () => {
    const key = newTestKey();
    const account = await createAccount(key);
    expect(account.id).toMatch(/^acct_[A-Za-z0-9]{16}$/);
    expect(account).toMatchObject({
      object: 'account',
      type: 'standard',
      business_type: null,
      email: null,
      country: 'US',
      default_currency: 'usd',
      metadata: {},
      charges_enabled: false,
      payouts_enabled: false,
      details_submitted: false,
      capabilities: { card_payments: 'inactive', transfers: 'inactive' },
      external_accounts: { object: 'list', data: [], has_more: false, url: `/v1/accounts/${account.id}/external_accounts` },
      tos_acceptance: { date: null, ip: null, user_agent: null },
    });
    expect(account.business_profile.mcc).toBeNull();
    expect(account.requirements.currently_due).toEqual(expect.arrayContaining(['business_type', 'external_account', 'tos_acceptance.date']));
    expect(account.individual).toBeUndefined();
    expect(account.controller).toMatchObject({ type: 'application', stripe_dashboard: { type: 'full' }, requirement_collection: 'stripe' });
  });

  it('creates through the SDK with every kind of parameter', async () => {
    const stripe = t.stripe(newTestKey());
    const account = await stripe.accounts.create({
      type: 'custom',
      country: 'US',
      email: 'sdk@example.com',
      business_type: 'company',
      capabilities: { card_payments: { requested: true }, transfers: { requested: true } },
      business_profile: { mcc: '5734', name: 'Shop', product_description: 'Things', support_url: '', annual_revenue: { amount: 1, currency: 'usd', fiscal_year_end: '2025-12-31' } },
      company: { name: 'Shop Inc', registration_date: { day: 1, month: 2, year: 2020 }, structure: 'llc', address: { city: 'Austin' } },
      settings: { payouts: { schedule: { interval: 'weekly', weekly_anchor: 'monday', delay_days: 'minimum' } }, payments: { statement_descriptor: 'SHOP' } },
      metadata: { order: '1' },
      default_currency: 'USD',
    });
    expect(account).toMatchObject({ type: 'custom', email: 'sdk@example.com', business_type: 'company', default_currency: 'usd', metadata: { order: '1' } });
    expect(account.company).toMatchObject({ name: 'Shop Inc', tax_id_provided: false, address: { city: 'Austin', line1: null } });
    expect(account.settings?.payouts?.schedule).toMatchObject({ interval: 'weekly', weekly_anchor: 'monday' });
    expect(account.requirements?.currently_due).toEqual(expect.arrayContaining(['company.tax_id', 'company.name'.replace('name', 'phone')]));
  });

  it('refuses an unknown nested parameter with its bracketed path', async () => {
    expectError(await post(newTestKey(), '/v1/accounts', 'company[bogus]=1'), 400, { code: 'parameter_unknown', param: 'company[bogus]' });
    expectError(await post(newTestKey(), '/v1/accounts', 'individual[dob][hour]=1'), 400, { code: 'parameter_unknown', param: 'individual[dob][hour]' });
    expectError(await post(newTestKey(), '/v1/accounts', 'settings[payouts][schedule][bogus]=1'), 400, {
      code: 'parameter_unknown',
      param: 'settings[payouts][schedule][bogus]',
    });
  });

  it('refuses an unknown capability, and a capability member other than requested', async () => {
    expectError(await post(newTestKey(), '/v1/accounts', 'capabilities[teleport_payments][requested]=true'), 400, {
      code: 'parameter_unknown',
      param: 'capabilities[teleport_payments]',
    });
    expectError(await post(newTestKey(), '/v1/accounts', 'capabilities[card_payments][enabled]=true'), 400, {
      code: 'parameter_unknown',
      param: 'capabilities[card_payments][enabled]',
    });
  });

  it('refuses bad enum values', async () => {
    expectError(await post(newTestKey(), '/v1/accounts', 'business_type=person'), 400, { param: 'business_type' });
    expectError(await post(newTestKey(), '/v1/accounts', 'controller[stripe_dashboard][type]=partial'), 400, {
      param: 'controller[stripe_dashboard][type]',
    });
    expectError(await post(newTestKey(), '/v1/accounts', 'company[structure]=empire'), 400, { param: 'company[structure]' });
    expectError(await post(newTestKey(), '/v1/accounts', 'settings[payouts][schedule][weekly_anchor]=someday'), 400, {
      param: 'settings[payouts][schedule][weekly_anchor]',
    });
  });

  it.each([
    ['company[address][city]', 101],
    ['individual[address][line1]', 201],
    ['company[address][line2]', 201],
    ['company[name]', 101],
    ['individual[first_name]', 101],
    ['individual[last_name]', 101],
    ['business_profile[mcc]', 5],
    ['business_profile[product_description]', 40001],
    ['settings[payments][statement_descriptor]', 23],
    ['settings[card_payments][statement_descriptor_prefix]', 11],
    ['company[verification][document][front]', 501],
    ['email', 5001],
  ])('refuses %s longer than its limit', async (param, length) => {
    const res = await post(newTestKey(), '/v1/accounts', `${param}=${'a'.repeat(length)}`);
    expectError(res, 400, { code: 'invalid_string_too_long', param });
    // One character less is accepted (a value of the right shape, for those with one).
    const shaped: Record<string, () => string> = { 'business_profile[mcc]': () => '5734', email: () => `${'a'.repeat(length - 13)}@example.com` };
    const ok = shaped[param]?.() ?? 'a'.repeat(length - 1);
    if (param === 'email') expect(ok.length).toBe(length - 1);
    expect((await post(newTestKey(), '/v1/accounts', `${param}=${encodeURIComponent(ok)}`)).status).toBe(200);
  });

  it('validates email, country, business_profile[mcc] and default_currency as the public API does', async () => {
    const key = newTestKey();
    expectError(await post(key, '/v1/accounts', 'email=not-an-email'), 400, { code: 'email_invalid', param: 'email', message: 'Invalid email address: not-an-email' });
    expectError(await post(key, '/v1/accounts', 'country=XX'), 400, { param: 'country', message: expect.stringContaining("Country 'XX' is unknown") });
    expectError(await post(key, '/v1/accounts', 'country=United States'), 400, { param: 'country' });
    // An ISO code where accounts can't be created.
    expectError(await post(key, '/v1/accounts', 'country=KP'), 400, { code: 'country_unsupported', param: 'country' });
    expectError(await post(key, '/v1/accounts', 'business_profile[mcc]=57a4'), 400, { param: 'business_profile[mcc]' });
    expectError(await post(key, '/v1/accounts', 'default_currency=eur'), 400, { param: 'default_currency', message: expect.stringContaining('usd') });
    expectError(await post(key, '/v1/accounts', 'country=JP&default_currency=usd'), 400, { param: 'default_currency' });

    // Valid values, in any case; each country's own currency is its default, others where it allows them.
    expect(await createAccount(key, { country: 'fr', email: 'a.b+c@example.co.uk', business_profile: { mcc: '5734' } })).toMatchObject({
      country: 'FR',
      default_currency: 'eur',
      business_profile: { mcc: '5734' },
    });
    expect((await createAccount(key, { country: 'DE', default_currency: 'GBP' })).default_currency).toBe('gbp');
    expect((await createAccount(key, { country: 'CA', default_currency: 'usd' })).default_currency).toBe('usd');
    expect((await createAccount(key, { country: 'JP' })).default_currency).toBe('jpy');
    // Cross-border payout countries are countries accounts can be created in.
    expect((await createAccount(key, { country: 'TH' })).default_currency).toBe('thb');

    // Updates check the same, against the account's country.
    const { id } = await createAccount(key, { country: 'GB' });
    expectError(await post(key, `/v1/accounts/${id}`, 'email=nope@'), 400, { code: 'email_invalid' });
    expectError(await post(key, `/v1/accounts/${id}`, 'business_profile[mcc]=12'), 400, { param: 'business_profile[mcc]' });
    expectError(await post(key, `/v1/accounts/${id}`, 'default_currency=jpy'), 400, { param: 'default_currency' });
    expect((await post(key, `/v1/accounts/${id}`, 'default_currency=eur')).body.default_currency).toBe('eur');
  });

  it('refuses a file id longer than 500 in documents', async () => {
    const res = await post(newTestKey(), '/v1/accounts', `documents[company_license][files][]=${'f'.repeat(501)}`);
    expectError(res, 400, { code: 'invalid_string_too_long', param: 'documents[company_license][files][0]' });
  });

  it('requires capabilities when the dashboard is none, in either spelling and for custom accounts', async () => {
    const rule = { code: 'parameter_missing', param: 'capabilities' };
    expectError(await post(newTestKey(), '/v1/accounts', 'controller[stripe_dashboard][type]=none'), 400, rule);
    expectError(await post(newTestKey(), '/v1/accounts', 'controller[service_dashboard][type]=none'), 400, rule);
    expectError(await post(newTestKey(), '/v1/accounts', 'type=custom'), 400, rule);
    const ok = await post(newTestKey(), '/v1/accounts', { controller: { service_dashboard: { type: 'none' } }, capabilities: { transfers: { requested: true } } });
    expect(ok.status).toBe(200);
    expect(ok.body.capabilities).toEqual({ transfers: 'inactive' });
  });

  it('accepts the spec spelling (service) and answers in the public one (stripe)', async () => {
    const account = await createAccount(newTestKey(), {
      controller: { service_dashboard: { type: 'express' }, losses: { payments: 'service' }, requirement_collection: 'service', fees: { payer: 'application' } },
    });
    expect(account.controller).toEqual({
      type: 'application',
      is_controller: true,
      fees: { payer: 'application' },
      losses: { payments: 'stripe' },
      requirement_collection: 'stripe',
      stripe_dashboard: { type: 'express' },
    });
    expect(account.type).toBe('express');
    const publicSpelling = await createAccount(newTestKey(), { controller: { stripe_dashboard: { type: 'full' }, losses: { payments: 'stripe' } } });
    expect(publicSpelling.controller).toMatchObject({ losses: { payments: 'stripe' }, stripe_dashboard: { type: 'full' } });
    expectError(
      await post(newTestKey(), '/v1/accounts', 'controller[service_dashboard][type]=full&controller[stripe_dashboard][type]=full'),
      400,
      { code: 'parameters_exclusive' },
    );
    expectError(await post(newTestKey(), '/v1/accounts', 'type=standard&controller[fees][payer]=account'), 400, { code: 'parameters_exclusive' });
  });

  it('turns public test tokens into external accounts and refuses other tokens', async () => {
    const key = newTestKey();
    const bank = await createAccount(key, { external_account: 'btok_us_verified' });
    expect(bank.external_accounts.data).toEqual([
      expect.objectContaining({ object: 'bank_account', account: bank.id, last4: '6789', currency: 'usd', default_for_currency: true }),
    ]);
    expect(bank.external_accounts.data[0].id).toMatch(/^ba_/);
    const card = await createAccount(key, { external_account: 'tok_visa_debit' });
    expect(card.external_accounts.data).toEqual([expect.objectContaining({ object: 'card', brand: 'Visa', funding: 'debit', last4: '5556' })]);
    const viaBankAccount = await createAccount(key, { bank_account: { account_number: '000123456789', country: 'US', routing_number: '110000000' } });
    expect(viaBankAccount.external_accounts.data[0]).toMatchObject({ object: 'bank_account', last4: '6789', routing_number: '110000000' });
    expectError(await post(key, '/v1/accounts', 'external_account=tok_nope'), 400, { code: 'resource_missing', param: 'external_account' });
    expectError(await post(key, '/v1/accounts', 'bank_account=btok_nope'), 400, { code: 'resource_missing', param: 'bank_account' });
    expectError(await post(key, '/v1/accounts', 'account_token=ct_123'), 400, { code: 'resource_missing', param: 'account_token' });
    expectError(await post(key, '/v1/accounts', 'bank_account[country]=US'), 400, { code: 'parameter_missing', param: 'bank_account[account_number]' });
  });

  it('takes external_account as a dictionary (a bank account or a debit card) on create and update, as the SDK types say', async () => {
    const key = newTestKey();
    const stripe = t.stripe(key);
    const bank = { object: 'bank_account', country: 'US', currency: 'usd', routing_number: '110000000', account_number: '000123456789' } as const;
    const made = await stripe.accounts.create({ type: 'express', country: 'US', external_account: bank } as any);
    expect(made.external_accounts!.data).toEqual([
      expect.objectContaining({ object: 'bank_account', last4: '6789', routing_number: '110000000', currency: 'usd', default_for_currency: true }),
    ]);
    const card = { object: 'card', number: '4000056655665556', exp_month: 12, exp_year: 2034, currency: 'usd' };
    const updated = await stripe.accounts.update(made.id, { external_account: card } as any);
    expect(updated.external_accounts!.data[0]).toMatchObject({ object: 'card', funding: 'debit', last4: '5556', default_for_currency: true });
    // stripe-node 14 (2023-10-16) sends the same dictionary.
    const Stripe14 = require('stripe-v14');
    const old = new Stripe14(key, { host: '127.0.0.1', port: t.port, protocol: 'http' });
    const older = await old.accounts.create({ type: 'express', country: 'US', external_account: bank });
    expect(older.external_accounts.data[0]).toMatchObject({ object: 'bank_account', last4: '6789' });
    // Bad input: a missing account number, an unknown member, another object.
    expectError(await post(key, '/v1/accounts', { external_account: { object: 'bank_account', country: 'US' } }), 400, { code: 'parameter_missing', param: 'external_account[account_number]' });
    expectError(await post(key, '/v1/accounts', { external_account: { ...bank, colour: 'red' } }), 400, { code: 'parameter_unknown', param: 'external_account[colour]' });
    expectError(await post(key, `/v1/accounts/${made.id}`, { external_account: { object: 'card', number: '4242424242424242', exp_month: 12, exp_year: 2034, currency: 'usd' } }), 400, {
      param: 'external_account',
    });
  });

  it('accepts the empty-string forms that unset', async () => {
    const account = await createAccount(newTestKey(), {
      business_profile: { support_url: '' },
      company: { structure: '', registration_date: '' },
      individual: { dob: '', full_name_aliases: '' },
      metadata: '',
      groups: { payments_pricing: '' },
    });
    expect(account.business_profile.support_url).toBeNull();
    expect(account.metadata).toEqual({});
  });
});

describe('requirements and capabilities', () => {
  it('lists what a US individual must give, then activates the capabilities once given, with events', async () => {
    const key = newTestKey();
    const account = await createAccount(key, { ...CUSTOM, capabilities: CAPS, business_type: 'individual', country: 'US' });
    expect(account.requirements.currently_due).toEqual(US_INDIVIDUAL_DUE);
    // The full SSN is due eventually; its last 4 now.
    expect(account.requirements.eventually_due).toEqual([...US_INDIVIDUAL_DUE, 'individual.id_number'].sort());
    expect(account.requirements.past_due).toEqual(US_INDIVIDUAL_DUE);
    expect(account.requirements.disabled_reason).toBe('requirements.past_due');
    expect(account.capabilities).toEqual({ card_payments: 'inactive', transfers: 'inactive' });
    expect(account.individual).toMatchObject({ object: 'person', account: account.id, first_name: null, dob: { day: null, month: null, year: null } });

    const partial = await post(key, `/v1/accounts/${account.id}`, { individual: { first_name: 'Jenny' } });
    expect(partial.status).toBe(200);
    expect(partial.body.requirements.currently_due).not.toContain('individual.first_name');
    expect(partial.body.capabilities.card_payments).toBe('inactive');

    const stripe = t.stripe(key);
    const done = await stripe.accounts.update(account.id, COMPLETE_INDIVIDUAL);
    expect(done.requirements?.currently_due).toEqual([]);
    expect(done.capabilities).toEqual({ card_payments: 'active', transfers: 'active' });
    expect(done).toMatchObject({ charges_enabled: true, payouts_enabled: true, details_submitted: true });
    expect(done.individual).toMatchObject({ first_name: 'Jenny', ssn_last_4_provided: true, dob: { day: 1, month: 1, year: 1990 } });
    expect(JSON.stringify(done)).not.toContain('"0000"');

    const events = await t.runtime.prisma.event.findMany({ where: { accountId: account.id }, orderBy: { seq: 'asc' } });
    // The bank account is reported on its own, before the account it completes.
    expect(events.map((e) => e.type)).toEqual(['account.updated', 'account.external_account.created', 'account.updated', 'capability.updated', 'capability.updated']);
    expect((events[1].data as any).object).toMatchObject({ object: 'bank_account', account: account.id, default_for_currency: true });
    const last = events[2].data as any;
    expect(last.object).toMatchObject({ id: account.id, charges_enabled: true });
    expect(last.previous_attributes).toMatchObject({ charges_enabled: false, capabilities: { card_payments: 'inactive', transfers: 'inactive' } });
    const capability = events[3].data as any;
    expect(capability.object).toMatchObject({ object: 'capability', account: account.id, status: 'active', requested: true });
    expect(capability.object.id).toMatch(/^(card_payments|transfers)$/);

    // Unrequesting a capability reports it too.
    await stripe.accounts.update(account.id, { capabilities: { transfers: { requested: false } } });
    const after = await t.runtime.prisma.event.findMany({ where: { accountId: account.id, type: 'capability.updated' }, orderBy: { seq: 'asc' } });
    expect((after.at(-1)!.data as any).object).toMatchObject({ id: 'transfers', status: 'unrequested', requested: false });
  });

  it('asks a company for company details, and an account elsewhere for an id number', async () => {
    const key = newTestKey();
    const company = await createAccount(key, { ...CUSTOM, capabilities: CAPS, business_type: 'company' });
    expect(company.requirements.currently_due).toEqual(expect.arrayContaining(['company.name', 'company.tax_id', 'company.address.line1']));
    const fr = await createAccount(key, { ...CUSTOM, capabilities: CAPS, business_type: 'individual', country: 'FR' });
    expect(fr.requirements.currently_due).toContain('individual.id_number');
    expect(fr.requirements.currently_due).not.toContain('individual.ssn_last_4');
  });

  it('emits nothing when an update changes nothing', async () => {
    const key = newTestKey();
    const account = await createAccount(key, { email: 'same@example.com' });
    expect((await post(key, `/v1/accounts/${account.id}`, { email: 'same@example.com' })).status).toBe(200);
    expect(await t.runtime.prisma.event.count({ where: { accountId: account.id } })).toBe(0);
  });
});

describe('retrieve, update, delete', () => {
  it('retrieves and updates with the SDK and over HTTP, with metadata semantics', async () => {
    const key = newTestKey();
    const stripe = t.stripe(key);
    const account = await stripe.accounts.create({ country: 'DE', email: 'a@example.com', metadata: { a: '1', b: '2' } });
    expect(account.default_currency).toBe('eur');
    expect((await stripe.accounts.retrieve(account.id)).email).toBe('a@example.com');
    const res = await get(key, `/v1/accounts/${account.id}`);
    expectMatchesResponseSchema('GetAccountsAccount', 200, res.body);
    const updated = await stripe.accounts.update(account.id, { email: 'b@example.com', metadata: { a: '' }, default_currency: 'usd' });
    expect(updated).toMatchObject({ email: 'b@example.com', metadata: { b: '2' }, default_currency: 'usd' });
    const http = await post(key, `/v1/accounts/${account.id}`, 'metadata=');
    expectMatchesResponseSchema('PostAccountsAccount', 200, http.body);
    expect(http.body.metadata).toEqual({});
  });

  it('concurrent updates of one account all apply, each with its event', async () => {
    const key = newTestKey();
    const stripe = t.stripe(key);
    const account = await stripe.accounts.create({ type: 'custom', country: 'US', capabilities: CAPS });
    // A sqlOnly operation: its transaction is on a pooled connection, not Prisma's.
    const transactions = jest.spyOn(t.runtime.prisma, '$transaction');
    try {
      await stripe.accounts.update(account.id, { metadata: { first: '1' } });
      expect(transactions).not.toHaveBeenCalled();
    } finally {
      transactions.mockRestore();
    }
    // Each locks the row in turn, so each merges into what the ones before it wrote.
    await Promise.all(Array.from({ length: 8 }, (_, i) => stripe.accounts.update(account.id, { metadata: { [`k${i}`]: String(i) } })));
    const final = await stripe.accounts.retrieve(account.id);
    expect(final.metadata).toEqual({ first: '1', ...Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`k${i}`, String(i)])) });
    const events = await t.runtime.prisma.event.findMany({ where: { accountId: account.id, type: 'account.updated' } });
    expect(events).toHaveLength(9);
  });

  it('validates updates as strictly as creates, without controller, country or type', async () => {
    const key = newTestKey();
    const { id } = await createAccount(key);
    expectError(await post(key, `/v1/accounts/${id}`, 'company[bogus]=1'), 400, { code: 'parameter_unknown', param: 'company[bogus]' });
    expectError(await post(key, `/v1/accounts/${id}`, 'controller[fees][payer]=account'), 400, { code: 'parameter_unknown', param: 'controller' });
    expectError(await post(key, `/v1/accounts/${id}`, 'capabilities[bogus][requested]=true'), 400, { param: 'capabilities[bogus]' });
    expectError(await post(key, `/v1/accounts/${id}`, `business_profile[mcc]=12345`), 400, { code: 'invalid_string_too_long' });
  });

  it('deletes an account; the SDK sees deleted, and Stripe-Account loses access at once', async () => {
    const key = newTestKey();
    const { id } = await createAccount(key);
    // Acting as it once puts it in the kernel's cache.
    expect((await get(key, '/v1/account', { 'Stripe-Account': id })).status).toBe(200);
    const res = await del(key, `/v1/accounts/${id}`);
    expect(res.body).toEqual({ id, object: 'account', deleted: true });
    expectMatchesResponseSchema('DeleteAccountsAccount', 200, res.body);
    expect((await get(key, '/v1/account', { 'Stripe-Account': id })).status).toBe(403);
    expectError(await get(key, `/v1/accounts/${id}`), 404, { code: 'resource_missing', param: 'id' });
    expectError(await del(key, `/v1/accounts/${id}`), 404, { code: 'resource_missing' });
    const other = await createAccount(key);
    expect(await t.stripe(key).accounts.del(other.id)).toEqual({ id: other.id, object: 'account', deleted: true });
  });

  it('keeps platforms apart', async () => {
    const mine = newTestKey();
    const theirs = newTestKey();
    const { id } = await createAccount(mine);
    await get(theirs, '/v1/account');
    expectError(await get(theirs, `/v1/accounts/${id}`), 404, { code: 'resource_missing' });
    expectError(await post(theirs, `/v1/accounts/${id}`, 'email=x@example.com'), 404, { code: 'resource_missing' });
    expectError(await del(theirs, `/v1/accounts/${id}`), 404, { code: 'resource_missing' });
    expect((await get(theirs, '/v1/accounts')).body.data).toEqual([]);
    expect((await get(theirs, '/v1/account', { 'Stripe-Account': id })).status).toBe(403);
    // A platform reads its own account by id, but not another platform's.
    const own = await accountOfKey(t.runtime, mine);
    expect((await get(mine, `/v1/accounts/${own}`)).body).toMatchObject({ id: own, object: 'account', controller: { type: 'account' } });
    expectError(await get(theirs, `/v1/accounts/${own}`), 404, { code: 'resource_missing' });
    expectError(await get(mine, '/v1/accounts/not-an-id'), 404, { code: 'resource_missing' });
  });
});

describe('POST /v1/accounts/{account}/reject', () => {
  const OLDER = { 'Stripe-Version': '2026-08-26.dahlia' };

  it('rejects an account its platform bears the losses of: charges and payouts stop, and the reason shows', async () => {
    const key = newTestKey();
    const account = await createAccount(key, { ...CUSTOM, capabilities: CAPS, business_type: 'individual', ...COMPLETE_INDIVIDUAL });
    expect(account).toMatchObject({ charges_enabled: true, payouts_enabled: true });
    // A version before endive (2026-09-30), whose reasons are fraud, terms_of_service and other.
    const res = await post(key, `/v1/accounts/${account.id}/reject`, { reason: 'terms_of_service' }, OLDER);
    expectMatchesResponseSchema('PostAccountsAccountReject', 200, res.body);
    expect(res.body).toMatchObject({
      id: account.id,
      charges_enabled: false,
      payouts_enabled: false,
      capabilities: { card_payments: 'inactive', transfers: 'inactive' },
      requirements: { disabled_reason: 'rejected.terms_of_service' },
    });
    const capability = await get(key, `/v1/accounts/${account.id}/capabilities/card_payments`);
    expect(capability.body).toMatchObject({ status: 'inactive', requirements: { disabled_reason: 'rejected.other' } });
    const events = await t.runtime.prisma.event.findMany({ where: { accountId: account.id }, orderBy: { seq: 'asc' } });
    const updated = events.filter((e) => e.type === 'account.updated').at(-1)!.data as any;
    expect(updated.previous_attributes).toMatchObject({ charges_enabled: true, requirements: { disabled_reason: null } });
    expect(events.filter((e) => e.type === 'capability.updated').map((e) => (e.data as any).object.status).slice(-2)).toEqual(['inactive', 'inactive']);
  });

  it("takes the reasons of the request's API version, and only for accounts whose losses the platform bears", async () => {
    const key = newTestKey();
    const stripe = t.stripe(key);
    const express = await createAccount(key, { type: 'express' });
    // The SDK sends an endive version: `fraud` became specific fraud reasons.
    await expect(stripe.accounts.reject(express.id, { reason: 'fraud' as 'other' })).rejects.toMatchObject({ statusCode: 400, param: 'reason' });
    const rejected = await stripe.accounts.reject(express.id, { reason: 'fraud_payment_method_tester' });
    expect(rejected.requirements?.disabled_reason).toBe('rejected.platform_fraud');
    // Older versions take fraud, terms_of_service and other.
    const other = await createAccount(key, { type: 'express' });
    expectError(await post(key, `/v1/accounts/${other.id}/reject`, { reason: 'credit' }, OLDER), 400, { param: 'reason' });
    expect((await post(key, `/v1/accounts/${other.id}/reject`, { reason: 'fraud' }, OLDER)).body.requirements.disabled_reason).toBe('rejected.fraud');
    expectError(await post(key, `/v1/accounts/${other.id}/reject`, {}), 400, { code: 'parameter_missing', param: 'reason' });

    const standard = await createAccount(key);
    expectError(await post(key, `/v1/accounts/${standard.id}/reject`, { reason: 'other' }), 400, { type: 'invalid_request_error' });
    expectError(await post(newTestKey(), `/v1/accounts/${express.id}/reject`, { reason: 'other' }), 404, { code: 'resource_missing' });
  });
});

describe('GET /v1/accounts', () => {
  it('lists newest first through the SDK, with a created filter', async () => {
    const key = newTestKey();
    const a = await createAccount(key);
    const b = await createAccount(key);
    const page = await t.stripe(key).accounts.list({ limit: 10 });
    expect(page.data.map((x) => x.id)).toEqual([b.id, a.id]);
    const none = await get(key, `/v1/accounts?created[gt]=${b.created + 1000}`);
    expect(none.body.data).toEqual([]);
    const all = await get(key, `/v1/accounts?created[lte]=${b.created}`);
    expect(all.body.data.map((x: any) => x.id)).toEqual([b.id, a.id]);
    expectError(await get(key, '/v1/accounts?type=custom'), 400, { code: 'parameter_unknown', param: 'type' });
  });
});

