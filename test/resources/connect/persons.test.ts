import { newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { accountOfKey } from '../../helpers/events';
import { createAccount, createPerson, US_PERSON } from '../../helpers/fixtures';
import { expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../helpers/requests';

// Persons of connected accounts end to end: CRUD through the official SDK and raw HTTP, the
// relationship filters, what a company's requirements ask about its people and how providing
// them clears it, the representative rules, events, and who may see and change them.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get, del } = requestsOf(() => t);

const CUSTOM = { controller: { stripe_dashboard: { type: 'none' }, requirement_collection: 'application', fees: { payer: 'application' }, losses: { payments: 'application' } } };
const CAPS = { card_payments: { requested: true }, transfers: { requested: true } };

/** Everything about a US company except its people. */
const COMPANY_DETAILS = {
  business_profile: { mcc: '5734', url: 'http://127.0.0.1:0/shop' },
  company: { name: 'Shop Inc', phone: '+15555550100', tax_id: '000000000', address: { line1: '1 Main St', city: 'Austin', state: 'TX', postal_code: '73301' } },
  external_account: 'btok_us_verified',
  tos_acceptance: { date: 1700000000, ip: '203.0.113.1' },
};

/** What a US representative gives (the SSN's last 4 and a title included). */
const REPRESENTATIVE = {
  ...US_PERSON,
  relationship: { representative: true, executive: true, title: 'CEO' },
};

const REPRESENTATIVE_DUE = [
  'address.city', 'address.line1', 'address.postal_code', 'address.state', 'dob.day', 'dob.month', 'dob.year', 'email', 'first_name',
  'last_name', 'phone', 'relationship.title', 'ssn_last_4',
];

async function usCompany(key: string, params: Record<string, unknown> = {}) {
  return createAccount(t, key, { ...CUSTOM, capabilities: CAPS, business_type: 'company', country: 'US', ...params });
}

const due = async (key: string, account: string): Promise<string[]> => (await get(key, `/v1/accounts/${account}`)).body.requirements.currently_due;

describe('CRUD', () => {
  it('creates, retrieves, updates, lists and deletes through the SDK, never echoing identity numbers', async () => {
    const key = newTestKey();
    const stripe = t.stripe(key);
    const { id: account } = await usCompany(key);
    const created = await stripe.accounts.createPerson(account, {
      first_name: 'Jane',
      id_number: '123456789',
      ssn_last_4: '6789',
      dob: { day: 2, month: 3, year: 1970 },
      relationship: { owner: true, percent_ownership: 51.5 },
      metadata: { crm: '7' },
    });
    expect(created).toMatchObject({
      object: 'person',
      account,
      first_name: 'Jane',
      dob: { day: 2, month: 3, year: 1970 },
      id_number_provided: true,
      ssn_last_4_provided: true,
      relationship: { owner: true, percent_ownership: 51.5, representative: false, director: false },
      metadata: { crm: '7' },
    });
    expect(created.id).toMatch(/^person_[A-Za-z0-9]{24}$/);
    expect(JSON.stringify(created)).not.toMatch(/123456789|"6789"/);

    expect(await stripe.accounts.retrievePerson(account, created.id)).toMatchObject({ id: created.id, first_name: 'Jane' });
    const updated = await stripe.accounts.updatePerson(account, created.id, { last_name: 'Doe', metadata: { crm: '' }, relationship: { percent_ownership: '' } });
    expect(updated).toMatchObject({ first_name: 'Jane', last_name: 'Doe', metadata: {}, relationship: { owner: true, percent_ownership: null } });

    const other = await stripe.accounts.createPerson(account, { first_name: 'Dan', relationship: { director: true } });
    const all = await stripe.accounts.listPersons(account);
    expect(all.data.map((p) => p.id)).toEqual([other.id, created.id]);
    expect(all.url).toBe(`/v1/accounts/${account}/persons`);
    expect((await stripe.accounts.listPersons(account, { relationship: { owner: true } })).data.map((p) => p.id)).toEqual([created.id]);
    expect((await stripe.accounts.listPersons(account, { relationship: { owner: false } })).data.map((p) => p.id)).toEqual([other.id]);
    expect((await stripe.accounts.listPersons(account, { relationship: { director: true, owner: true } })).data).toEqual([]);

    expect(await stripe.accounts.deletePerson(account, other.id)).toEqual({ id: other.id, object: 'person', deleted: true });
    expectError(await get(key, `/v1/accounts/${account}/persons/${other.id}`), 404, { code: 'resource_missing', param: 'id', message: `No such person: '${other.id}'` });
    expectError(await del(key, `/v1/accounts/${account}/persons/${other.id}`), 404, { code: 'resource_missing' });
  });

  it('answers raw HTTP in the documented shapes, and validates strictly', async () => {
    const key = newTestKey();
    const { id: account } = await usCompany(key);
    const res = await post(key, `/v1/accounts/${account}/persons`, { ...REPRESENTATIVE, registered_address: { line1: '9 Side St' } });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostAccountsAccountPersons', 200, res.body);
    expectMatchesResponseSchema('GetAccountsAccountPersons', 200, (await get(key, `/v1/accounts/${account}/persons`)).body);
    expectError(await post(key, `/v1/accounts/${account}/persons`, 'relationship[boss]=true'), 400, { code: 'parameter_unknown', param: 'relationship[boss]' });
    expectError(await post(key, `/v1/accounts/${account}/persons`, 'email=nope'), 400, { code: 'email_invalid', param: 'email' });
    expectError(await post(key, `/v1/accounts/${account}/persons`, 'person_token=cpt_123'), 400, { code: 'resource_missing', param: 'person_token' });
    expectError(await post(key, `/v1/accounts/${account}/persons`, 'relationship[percent_ownership]=101'), 400, { param: 'relationship[percent_ownership]' });
    expectError(await get(key, `/v1/accounts/${account}/persons?relationship[owner]=maybe`), 400, { param: 'relationship[owner]' });
    expectError(await post(key, `/v1/accounts/${account}/persons/not-a-person`, 'first_name=x'), 404, { code: 'resource_missing' });
  });

  it("lists an individual account's individual, updated through the Persons API, and never deletes it", async () => {
    const key = newTestKey();
    const account = await createAccount(t, key, { ...CUSTOM, capabilities: CAPS, business_type: 'individual', individual: { first_name: 'Jenny' } });
    const individual = account.individual.id;
    const list = (await get(key, `/v1/accounts/${account.id}/persons`)).body;
    expect(list.data).toEqual([expect.objectContaining({ id: individual, first_name: 'Jenny', relationship: expect.objectContaining({ representative: true }) })]);
    const updated = await post(key, `/v1/accounts/${account.id}/persons/${individual}`, { last_name: 'Rosen' });
    expect(updated.body).toMatchObject({ id: individual, first_name: 'Jenny', last_name: 'Rosen' });
    expect(updated.body.requirements.currently_due).not.toContain('last_name');
    expect((await get(key, `/v1/accounts/${account.id}`)).body.individual).toMatchObject({ last_name: 'Rosen' });
    expect((await t.runtime.prisma.event.findMany({ where: { accountId: account.id, type: 'person.updated' } })).length).toBe(1);
    expectError(await del(key, `/v1/accounts/${account.id}/persons/${individual}`), 400, { type: 'invalid_request_error' });
  });
});

describe('a company and its people', () => {
  it('asks a US company for a representative and owners, and providing them clears it and activates its capabilities', async () => {
    const key = newTestKey();
    const stripe = t.stripe(key);
    const { id: account } = await usCompany(key, COMPANY_DETAILS);
    // Only people are missing: a representative, owners, and the confirmation that all owners are given.
    const first = await due(key, account);
    expect(first).toEqual(
      [
        ...REPRESENTATIVE_DUE.map((f) => `representative.${f}`),
        'company.owners_provided',
        ...REPRESENTATIVE_DUE.filter((f) => f !== 'relationship.title').map((f) => `owners.${f}`),
      ].sort(),
    );
    // Directors are not asked in the US.
    expect(first.some((r) => r.startsWith('directors.') || r === 'company.directors_provided')).toBe(false);

    // A representative with some details: what it lacks is named after it.
    const rep = await stripe.accounts.createPerson(account, { first_name: 'Jenny', relationship: { representative: true } });
    const second = await due(key, account);
    expect(second.filter((r) => r.startsWith('representative.'))).toEqual([]);
    expect(second).toEqual(expect.arrayContaining([`${rep.id}.last_name`, `${rep.id}.dob.day`, `${rep.id}.relationship.title`, `${rep.id}.ssn_last_4`]));
    expect(second).not.toContain(`${rep.id}.first_name`);
    expect(rep.requirements?.currently_due).toEqual(REPRESENTATIVE_DUE.filter((f) => f !== 'first_name'));
    expect(rep.verification?.status).toBe('unverified');

    const complete = await stripe.accounts.updatePerson(account, rep.id, REPRESENTATIVE);
    expect(complete.requirements?.currently_due).toEqual([]);
    expect(complete.verification?.status).toBe('verified');
    expect((await due(key, account)).filter((r) => r.startsWith(rep.id))).toEqual([]);

    // An owner replaces `owners.…` with its own entries; the confirmation is still due.
    const owner = await stripe.accounts.createPerson(account, { first_name: 'Owen', relationship: { owner: true, percent_ownership: 60 } });
    const third = await due(key, account);
    expect(third.filter((r) => r.startsWith('owners.'))).toEqual([]);
    expect(third).toEqual(expect.arrayContaining(['company.owners_provided', `${owner.id}.last_name`, `${owner.id}.email`]));
    expect(third).not.toContain(`${owner.id}.relationship.title`);
    await stripe.accounts.updatePerson(account, owner.id, { ...REPRESENTATIVE, first_name: 'Owen', relationship: { owner: true } });
    expect(await due(key, account)).toEqual(['company.owners_provided']);

    const done = await stripe.accounts.update(account, { company: { owners_provided: true } });
    expect(done.requirements?.currently_due).toEqual([]);
    expect(done).toMatchObject({ details_submitted: true, charges_enabled: true, capabilities: { card_payments: 'active', transfers: 'active' } });

    // Removing the owner (with owners_provided true) changes nothing more; the capability events carry what was before.
    const capabilityEvents = await t.runtime.prisma.event.findMany({ where: { accountId: account, type: 'capability.updated' }, orderBy: { seq: 'asc' } });
    expect(capabilityEvents.map((e) => (e.data as any).object.status)).toEqual(['active', 'active']);
    expect((capabilityEvents[0].data as any).previous_attributes).toMatchObject({ status: 'inactive' });
  });

  it('clears owners with owners_provided alone when nobody owns 25%, and asks for directors in the EEA', async () => {
    const key = newTestKey();
    const us = await usCompany(key, { company: { owners_provided: true } });
    expect(us.requirements.currently_due.filter((r: string) => r.startsWith('owners.') || r === 'company.owners_provided')).toEqual([]);

    const fr = await usCompany(key, { country: 'FR' });
    expect(fr.requirements.currently_due).toEqual(
      expect.arrayContaining(['company.directors_provided', 'directors.first_name', 'directors.dob.year', 'representative.id_number']),
    );
    expect(fr.requirements.currently_due).not.toContain('representative.ssn_last_4');
    expect(fr.requirements.currently_due).not.toContain('representative.address.state');
    const director = await createPerson(t, key, fr.id, { first_name: 'Dora', last_name: 'Dupont', relationship: { director: true } });
    const after = await due(key, fr.id);
    expect(after.filter((r) => r.startsWith('directors.'))).toEqual([]);
    expect(after).toEqual(expect.arrayContaining(['company.directors_provided', `${director.id}.dob.day`]));
  });

  it('keeps one representative, refuses to delete it, and reports every change as an event', async () => {
    const key = newTestKey();
    const { id: account } = await usCompany(key);
    const first = await createPerson(t, key, account, { first_name: 'A', relationship: { representative: true } });
    const second = await createPerson(t, key, account, { first_name: 'B', relationship: { representative: true } });
    expect((await get(key, `/v1/accounts/${account}/persons/${first.id}`)).body.relationship.representative).toBe(false);
    expect((await get(key, `/v1/accounts/${account}/persons?relationship[representative]=true`)).body.data.map((p: any) => p.id)).toEqual([second.id]);
    expectError(await del(key, `/v1/accounts/${account}/persons/${second.id}`), 400, { type: 'invalid_request_error' });
    expect((await del(key, `/v1/accounts/${account}/persons/${first.id}`)).body).toEqual({ id: first.id, object: 'person', deleted: true });

    const events = await t.runtime.prisma.event.findMany({ where: { accountId: account, type: { startsWith: 'person.' } }, orderBy: { seq: 'asc' } });
    expect(events.map((e) => [e.type, (e.data as any).object.id])).toEqual([
      ['person.created', first.id],
      ['person.created', second.id],
      ['person.updated', first.id],
      ['person.deleted', first.id],
    ]);
    const demoted = events[2].data as any;
    expect(demoted.object.relationship.representative).toBe(false);
    expect(demoted.previous_attributes).toMatchObject({ relationship: { representative: true } });
    // The account's requirements changed with its people, so it was updated too.
    expect(await t.runtime.prisma.event.count({ where: { accountId: account, type: 'account.updated' } })).toBeGreaterThan(0);
  });
});

describe('who may see and change persons', () => {
  it("keeps platforms apart, and a connected account sees only its own persons through Stripe-Account", async () => {
    const mine = newTestKey();
    const theirs = newTestKey();
    const { id: account } = await usCompany(mine);
    const person = await createPerson(t, mine, account);
    await get(theirs, '/v1/account');
    expectError(await get(theirs, `/v1/accounts/${account}/persons`), 404, { code: 'resource_missing', message: `No such account: '${account}'` });
    expectError(await get(theirs, `/v1/accounts/${account}/persons/${person.id}`), 404, { code: 'resource_missing' });
    expectError(await post(theirs, `/v1/accounts/${account}/persons/${person.id}`, 'first_name=x'), 404, { code: 'resource_missing' });
    expectError(await del(theirs, `/v1/accounts/${account}/persons/${person.id}`), 404, { code: 'resource_missing' });
    expectError(await post(theirs, `/v1/accounts/${account}/persons`, 'first_name=x'), 404, { code: 'resource_missing' });

    // Acting as the connected account, it reads its own persons; a sibling's are out of reach.
    const asIt = { 'Stripe-Account': account };
    expect((await get(mine, `/v1/accounts/${account}/persons`, asIt)).body.data.map((p: any) => p.id)).toEqual([person.id]);
    const sibling = await usCompany(mine);
    expectError(await get(mine, `/v1/accounts/${sibling.id}/persons`, asIt), 404, { code: 'resource_missing' });
    // The platform has no persons of its own here.
    expect((await get(mine, `/v1/accounts/${await accountOfKey(t.runtime, mine)}/persons`)).body.data).toEqual([]);
  });

  it('leaves persons to the account holder once onboarding started, unless the platform collects requirements', async () => {
    const key = newTestKey();
    const express = await createAccount(t, key, { type: 'express', business_type: 'company' });
    const person = await createPerson(t, key, express.id);
    await post(key, '/v1/account_links', { account: express.id, type: 'account_onboarding' });
    expectError(await post(key, `/v1/accounts/${express.id}/persons`, 'first_name=x'), 400, { type: 'invalid_request_error' });
    expectError(await post(key, `/v1/accounts/${express.id}/persons/${person.id}`, 'first_name=x'), 400, { type: 'invalid_request_error' });
    expectError(await del(key, `/v1/accounts/${express.id}/persons/${person.id}`), 400, { type: 'invalid_request_error' });
    expect((await get(key, `/v1/accounts/${express.id}/persons/${person.id}`)).status).toBe(200);

    const custom = await usCompany(key);
    await post(key, '/v1/account_links', { account: custom.id, type: 'account_onboarding' });
    expect((await post(key, `/v1/accounts/${custom.id}/persons`, 'first_name=x')).status).toBe(200);
  });
});

describe('additional_tos_acceptances.account: the public object, its members null until given', () => {
  test('stripe-node 14 (2023-10-16) and the newest read the object; accepting fills it', async () => {
    const key = newTestKey();
    const account = (await post(key, '/v1/accounts', { ...CUSTOM, country: 'US', business_type: 'company', capabilities: CAPS })).body;
    const Stripe14 = require('stripe-v14');
    const old = new Stripe14(key, { host: '127.0.0.1', port: t.port, protocol: 'http' });
    const person = await old.accounts.createPerson(account.id, { first_name: 'Jenny' });
    expect(person.additional_tos_acceptances).toEqual({ account: { date: null, ip: null, user_agent: null } });
    const accepted = await t.stripe(key).accounts.updatePerson(account.id, person.id, { additional_tos_acceptances: { account: { date: 1700000000, ip: '203.0.113.9' } } });
    expect(accepted.additional_tos_acceptances).toEqual({ account: { date: 1700000000, ip: '203.0.113.9', user_agent: null } });
    expectMatchesResponseSchema('GetAccountsAccountPersonsPerson', 200, accepted);
    const bad = await post(key, `/v1/accounts/${account.id}/persons/${person.id}`, { additional_tos_acceptances: { account: { date: 'yesterday' } } });
    expectError(bad, 400, { param: 'additional_tos_acceptances[account][date]' });
  });
});
