import { newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { accountOfKey } from '../../helpers/events';
import { COMPLETE_INDIVIDUAL, createAccount } from '../../helpers/fixtures';
import { expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../helpers/requests';

// Capabilities of accounts: listed, retrieved and requested or removed through the official SDK
// and raw HTTP, with status and requirements that follow the account's, and capability.updated.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get } = requestsOf(() => t);

const CUSTOM_INDIVIDUAL = {
  controller: { stripe_dashboard: { type: 'none' }, requirement_collection: 'application' },
  capabilities: { card_payments: { requested: true }, transfers: { requested: true } },
  business_type: 'individual',
};


describe('capabilities', () => {
  it("list and retrieve them with the account's requirements, and complete the account to activate them", async () => {
    const key = newTestKey();
    const stripe = t.stripe(key);
    const account = await createAccount(t, key, CUSTOM_INDIVIDUAL);
    const list = await stripe.accounts.listCapabilities(account.id);
    expect(list.data.map((c) => c.id).sort()).toEqual(['card_payments', 'transfers']);
    expect(list.url).toBe(`/v1/accounts/${account.id}/capabilities`);
    const card = await stripe.accounts.retrieveCapability(account.id, 'card_payments');
    expect(card).toMatchObject({ id: 'card_payments', object: 'capability', account: account.id, requested: true, status: 'inactive' });
    expect(card.requested_at).toBe(account.created);
    expect(card.requirements?.currently_due).toEqual(account.requirements.currently_due);
    expect(card.requirements?.disabled_reason).toBe('requirements.fields_needed');

    await stripe.accounts.update(account.id, COMPLETE_INDIVIDUAL);
    const active = await stripe.accounts.retrieveCapability(account.id, 'card_payments');
    expect(active).toMatchObject({ status: 'active', requirements: { currently_due: [], disabled_reason: null } });
    expect((await stripe.accounts.listCapabilities(account.id)).data.map((c) => c.status)).toEqual(['active', 'active']);
    expectMatchesResponseSchema('GetAccountsAccountCapabilities', 200, (await get(key, `/v1/accounts/${account.id}/capabilities`)).body);
  });

  it('requests and removes one, newest first in the list, with capability.updated and previous_attributes', async () => {
    const key = newTestKey();
    const stripe = t.stripe(key);
    const account = await createAccount(t, key, CUSTOM_INDIVIDUAL);
    expect(await stripe.accounts.retrieveCapability(account.id, 'link_payments')).toMatchObject({ requested: false, requested_at: null, status: 'unrequested' });

    const requested = await stripe.accounts.updateCapability(account.id, 'link_payments', { requested: true });
    expect(requested).toMatchObject({ id: 'link_payments', requested: true, status: 'inactive' });
    expect(requested.requested_at).toEqual(expect.any(Number));
    expect((await stripe.accounts.listCapabilities(account.id)).data[0].id).toBe('link_payments');
    expect((await get(key, `/v1/accounts/${account.id}`)).body.capabilities).toEqual({ card_payments: 'inactive', link_payments: 'inactive', transfers: 'inactive' });
    // Asking again changes nothing.
    expect((await stripe.accounts.updateCapability(account.id, 'link_payments', { requested: true })).requested_at).toBe(requested.requested_at);

    const removed = await post(key, `/v1/accounts/${account.id}/capabilities/link_payments`, 'requested=false');
    expectMatchesResponseSchema('PostAccountsAccountCapabilitiesCapability', 200, removed.body);
    expect(removed.body).toMatchObject({ requested: false, status: 'unrequested' });
    expect((await stripe.accounts.listCapabilities(account.id)).data.map((c) => c.id)).not.toContain('link_payments');

    const events = await t.runtime.prisma.event.findMany({ where: { accountId: account.id, type: 'capability.updated' }, orderBy: { seq: 'asc' } });
    expect(events.map((e) => [(e.data as any).object.id, (e.data as any).object.status])).toEqual([
      ['link_payments', 'inactive'],
      ['link_payments', 'unrequested'],
    ]);
    expect((events[0].data as any).previous_attributes).toMatchObject({ requested: false, requested_at: null, status: 'unrequested' });
    expect((events[1].data as any).previous_attributes).toMatchObject({ requested: true, status: 'inactive' });
  });

  it("answers the platform's own, refuses unknown names, and keeps platforms and connected accounts apart", async () => {
    const mine = newTestKey();
    const theirs = newTestKey();
    const platform = (await get(mine, '/v1/account')).body.id;
    const own = await get(mine, `/v1/accounts/${platform}/capabilities`);
    expect(own.body.data.map((c: any) => [c.id, c.status])).toEqual([
      ['card_payments', 'active'],
      ['transfers', 'active'],
    ]);
    // The platform's own capabilities are not changed through the API.
    expectError(await post(mine, `/v1/accounts/${platform}/capabilities/link_payments`, 'requested=true'), 404, { code: 'resource_missing' });

    const account = await createAccount(t, mine, CUSTOM_INDIVIDUAL);
    expectError(await get(mine, `/v1/accounts/${account.id}/capabilities/bogus`), 404, { code: 'resource_missing', message: "No such capability: 'bogus'", param: 'id' });
    expectError(await post(mine, `/v1/accounts/${account.id}/capabilities/bogus`, 'requested=true'), 404, { code: 'resource_missing' });

    await get(theirs, '/v1/account');
    expectError(await get(theirs, `/v1/accounts/${account.id}/capabilities`), 404, { code: 'resource_missing' });
    expectError(await get(theirs, `/v1/accounts/${account.id}/capabilities/card_payments`), 404, { code: 'resource_missing' });
    expectError(await post(theirs, `/v1/accounts/${account.id}/capabilities/card_payments`, 'requested=false'), 404, { code: 'resource_missing' });
    expectError(await get(theirs, `/v1/accounts/${platform}/capabilities`), 404, { code: 'resource_missing' });

    // Acting as the connected account, it reads its own but changes nothing of itself.
    const asIt = { 'Stripe-Account': account.id };
    expect((await get(mine, `/v1/accounts/${account.id}/capabilities/card_payments`, asIt)).body.status).toBe('inactive');
    expectError(await post(mine, `/v1/accounts/${account.id}/capabilities/card_payments`, 'requested=false', asIt), 404, { code: 'resource_missing' });
    expect(await accountOfKey(t.runtime, mine)).toBe(platform);
  });
});
