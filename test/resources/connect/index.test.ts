import Stripe from 'stripe';
import { bearer, newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { form, US_PERSON } from '../../helpers/fixtures';
import { expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { LATEST_API_VERSION } from '../../../src/kernel/versions';

// A platform onboards a company account the way users meet Connect: capabilities, an external
// account, its people, a login link and, in the end, a rejection, first through the official
// SDK, then the same steps over raw HTTP, each answer in its documented shape; the events it
// reads back tell the story in order.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const COMPANY = {
  type: 'express' as const,
  country: 'US',
  email: 'owner@example.com',
  business_type: 'company' as const,
  business_profile: { mcc: '5734', url: 'https://shop.example' },
  company: { name: 'Shop Inc', phone: '+15555550100', tax_id: '000000000', address: { line1: '1 Main St', city: 'Austin', state: 'TX', postal_code: '73301' } },
  tos_acceptance: { date: 1700000000, ip: '203.0.113.1' },
};


describe('the Connect sub-resources through the official SDK', () => {
  it('capabilities, external accounts, persons, a login link and a rejection, with their events', async () => {
    const key = newTestKey();
    const stripe = t.stripe(key);
    const account = await stripe.accounts.create(COMPANY);
    expect(account.capabilities).toEqual({ card_payments: 'inactive', transfers: 'inactive' });
    expect(account.requirements?.currently_due).toEqual(expect.arrayContaining(['external_account', 'representative.first_name', 'company.owners_provided']));
    expect((await stripe.accounts.retrieve(account.id)).id).toBe(account.id);

    // Capabilities.
    const caps = await stripe.accounts.listCapabilities(account.id);
    expect(caps.data.map((c) => c.status)).toEqual(['inactive', 'inactive']);
    expect((await stripe.accounts.retrieveCapability(account.id, 'transfers')).requirements?.currently_due).toEqual(account.requirements?.currently_due);
    expect((await stripe.accounts.updateCapability(account.id, 'us_bank_account_ach_payments', { requested: true })).status).toBe('inactive');

    // External accounts: a bank account, and a debit card (an Express account's bank accounts are its holder's to update).
    const bank = await stripe.accounts.createExternalAccount(account.id, { external_account: 'btok_us_verified' });
    const card = await stripe.accounts.createExternalAccount(account.id, { external_account: 'tok_visa_debit' });
    expect((await stripe.accounts.listExternalAccounts(account.id)).data.map((e) => e.id)).toEqual([card.id, bank.id]);
    expect((await stripe.accounts.updateExternalAccount(account.id, card.id, { metadata: { payout: 'instant' } })).metadata).toEqual({ payout: 'instant' });
    expect((await stripe.accounts.retrieveExternalAccount(account.id, bank.id)).default_for_currency).toBe(true);

    // Its people: a representative who owns it, then the confirmation that every owner is given.
    const representative = await stripe.accounts.createPerson(account.id, { ...US_PERSON, relationship: { representative: true, owner: true, percent_ownership: 100, title: 'CEO' } });
    const helper = await stripe.accounts.createPerson(account.id, { first_name: 'Sam', relationship: { executive: true } });
    expect((await stripe.accounts.listPersons(account.id, { relationship: { owner: true } })).data.map((p) => p.id)).toEqual([representative.id]);
    expect((await stripe.accounts.retrievePerson(account.id, helper.id)).first_name).toBe('Sam');
    expect((await stripe.accounts.updatePerson(account.id, helper.id, { last_name: 'Smith' })).last_name).toBe('Smith');
    expect(await stripe.accounts.deletePerson(account.id, helper.id)).toMatchObject({ id: helper.id, deleted: true });
    const onboarded = await stripe.accounts.update(account.id, { company: { owners_provided: true } });
    expect(onboarded.requirements?.currently_due).toEqual([]);
    expect(onboarded).toMatchObject({ details_submitted: true, charges_enabled: true, payouts_enabled: true });
    expect((await stripe.accounts.listCapabilities(account.id)).data.map((c) => [c.id, c.status])).toEqual([
      ['us_bank_account_ach_payments', 'active'],
      ['transfers', 'active'],
      ['card_payments', 'active'],
    ]);

    // The Express Dashboard, then a rejection.
    const link = await stripe.accounts.createLoginLink(account.id);
    expect((await t.http().get(new URL(link.url).pathname)).text).toContain(account.id);
    const rejected = await stripe.accounts.reject(account.id, { reason: 'terms_of_service' });
    expect(rejected).toMatchObject({ charges_enabled: false, payouts_enabled: false, requirements: { disabled_reason: 'rejected.platform_terms_of_service' } });

    // The events, as the platform reads them about its connected account.
    const events = await stripe.events.list({ limit: 100 }, { stripeAccount: account.id });
    const types = events.data.map((e) => e.type).reverse();
    expect(types.filter((type) => type !== 'account.updated')).toEqual([
      'capability.updated', // us_bank_account_ach_payments requested
      'account.external_account.created',
      'account.external_account.created',
      'account.external_account.updated',
      'person.created',
      'person.created',
      'person.updated',
      'person.deleted',
      'capability.updated',
      'capability.updated',
      'capability.updated', // all three active
      'capability.updated',
      'capability.updated',
      'capability.updated', // and inactive again
    ]);
    const requested = events.data.find((e) => e.type === 'capability.updated' && (e.data.object as Stripe.Capability).id === 'us_bank_account_ach_payments');
    expect(events.data.every((e) => e.account === account.id)).toBe(true);
    expect(requested).toBeDefined();
  });
});

describe('the Connect sub-resources over raw HTTP', () => {
  it('answers each operation in its documented shape', async () => {
    const key = newTestKey();
    const send = async (method: 'get' | 'post' | 'delete', path: string, operationId: string, body: Record<string, unknown> = {}) => {
      // The documented shapes are today's: pinned, as the default is the contract's older version.
      const req = t.http()[method](path).set(bearer(key)).set('Stripe-Version', LATEST_API_VERSION);
      const res = method === 'post' ? await req.type('form').send(form(body)) : await req;
      expect({ operationId, status: res.status }).toEqual({ operationId, status: 200 });
      expectMatchesResponseSchema(operationId, 200, res.body);
      return res.body;
    };
    const account = await send('post', '/v1/accounts', 'PostAccounts', COMPANY);
    const base = `/v1/accounts/${account.id}`;
    await send('get', `${base}/capabilities`, 'GetAccountsAccountCapabilities');
    await send('get', `${base}/capabilities/card_payments`, 'GetAccountsAccountCapabilitiesCapability');
    await send('post', `${base}/capabilities/card_payments`, 'PostAccountsAccountCapabilitiesCapability', { requested: true });
    const bank = await send('post', `${base}/external_accounts`, 'PostAccountsAccountExternalAccounts', { external_account: 'btok_us_verified' });
    const card = await send('post', `${base}/external_accounts`, 'PostAccountsAccountExternalAccounts', { external_account: 'tok_visa_debit' });
    await send('get', `${base}/external_accounts?object=card`, 'GetAccountsAccountExternalAccounts');
    await send('get', `${base}/external_accounts/${bank.id}`, 'GetAccountsAccountExternalAccountsExternalAccount');
    await send('post', `${base}/external_accounts/${card.id}`, 'PostAccountsAccountExternalAccountsExternalAccount', { name: 'Jenny Rosen' });
    const second = await send('post', `${base}/external_accounts`, 'PostAccountsAccountExternalAccounts', { external_account: 'tok_mastercard_debit' });
    await send('delete', `${base}/external_accounts/${second.id}`, 'DeleteAccountsAccountExternalAccountsExternalAccount');
    const person = await send('post', `${base}/persons`, 'PostAccountsAccountPersons', { ...US_PERSON, relationship: { representative: true, title: 'CEO' } });
    const owner = await send('post', `${base}/persons`, 'PostAccountsAccountPersons', { ...US_PERSON, first_name: 'Owen', relationship: { owner: true } });
    await send('get', `${base}/persons?relationship[representative]=true`, 'GetAccountsAccountPersons');
    await send('get', `${base}/persons/${person.id}`, 'GetAccountsAccountPersonsPerson');
    await send('post', `${base}/persons/${owner.id}`, 'PostAccountsAccountPersonsPerson', { relationship: { percent_ownership: 30 } });
    await send('delete', `${base}/persons/${owner.id}`, 'DeleteAccountsAccountPersonsPerson');
    const onboarded = await send('post', base, 'PostAccountsAccount', { company: { owners_provided: true } });
    expect(onboarded.requirements.currently_due).toEqual([]);
    await send('post', `${base}/login_links`, 'PostAccountsAccountLoginLinks');
    await send('post', `${base}/reject`, 'PostAccountsAccountReject', { reason: 'fraud_other' });
    expect((await send('get', base, 'GetAccountsAccount')).requirements.disabled_reason).toBe('rejected.platform_fraud');
  });
});
