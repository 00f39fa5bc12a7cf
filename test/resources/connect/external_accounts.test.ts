import Stripe from 'stripe';
import { newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { createAccount, createExternalAccount } from '../../helpers/fixtures';
import { expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../helpers/requests';

// External accounts of connected accounts end to end: test tokens, bank and card details, the
// default of each currency, updates, deletes, the account's embedded list and its url, events,
// and who may see and change them.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get, del } = requestsOf(() => t);

const CUSTOM = {
  controller: { stripe_dashboard: { type: 'none' }, requirement_collection: 'application' },
  capabilities: { transfers: { requested: true } },
};

describe('external accounts', () => {
  it('adds test tokens through the SDK; the first of a currency is its default, and the account lists them at its url', async () => {
    const key = newTestKey();
    const stripe = t.stripe(key);
    const { id: account } = await createAccount(t, key, CUSTOM);
    const first = (await stripe.accounts.createExternalAccount(account, { external_account: 'btok_us_verified', metadata: { a: '1' } })) as Stripe.BankAccount;
    expect(first).toMatchObject({ object: 'bank_account', account, bank_name: 'STRIPE TEST BANK', last4: '6789', currency: 'usd', default_for_currency: true, metadata: { a: '1' } });
    expect(first.id).toMatch(/^ba_/);
    const second = await stripe.accounts.createExternalAccount(account, { external_account: 'btok_us' });
    expect(second.default_for_currency).toBe(false);
    const card = (await stripe.accounts.createExternalAccount(account, { external_account: 'tok_visa_debit' })) as Stripe.Card;
    expect(card).toMatchObject({ object: 'card', brand: 'Visa', funding: 'debit', last4: '5556', default_for_currency: false, regulated_status: 'unregulated' });

    const listed = await stripe.accounts.listExternalAccounts(account);
    expect(listed.data.map((e) => e.id)).toEqual([card.id, second.id, first.id]);
    expect((await stripe.accounts.listExternalAccounts(account, { object: 'card' })).data.map((e) => e.id)).toEqual([card.id]);
    expect((await stripe.accounts.listExternalAccounts(account, { object: 'bank_account' })).data.map((e) => e.id)).toEqual([second.id, first.id]);
    expect(await stripe.accounts.retrieveExternalAccount(account, card.id)).toMatchObject({ id: card.id, object: 'card' });

    // The account embeds the same list, and its url answers it.
    const retrieved = (await get(key, `/v1/accounts/${account}`)).body;
    expect(retrieved.external_accounts).toMatchObject({ object: 'list', total_count: 3, url: `/v1/accounts/${account}/external_accounts` });
    const viaUrl = await get(key, retrieved.external_accounts.url);
    expectMatchesResponseSchema('GetAccountsAccountExternalAccounts', 200, viaUrl.body);
    expect(viaUrl.body.data).toEqual(retrieved.external_accounts.data);
  });

  it('takes bank account details and test debit card numbers, and refuses other cards as the public API does', async () => {
    const key = newTestKey();
    const { id: account } = await createAccount(t, key, { ...CUSTOM, country: 'DE' });
    const path = `/v1/accounts/${account}/external_accounts`;
    const iban = await post(key, path, { external_account: { object: 'bank_account', country: 'DE', account_number: '89370400440532013000', account_holder_name: 'Jenny' } });
    expect(iban.status).toBe(400);
    const bank = await post(key, path, { external_account: { object: 'bank_account', country: 'de', account_number: '000123456789', account_holder_type: 'company' } });
    expect(bank.body).toMatchObject({ object: 'bank_account', country: 'DE', currency: 'eur', last4: '6789', account_holder_type: 'company', default_for_currency: true });
    const card = await post(key, path, { external_account: { object: 'card', number: '5200 8282 8282 8210', exp_month: '3', exp_year: '2040', cvc: '123' } });
    expect(card.body).toMatchObject({ object: 'card', brand: 'MasterCard', exp_month: 3, exp_year: 2040, cvc_check: 'pass' });
    expectError(await post(key, path, { external_account: 'tok_visa' }), 400, { code: 'invalid_card_type', param: 'external_account' });
    expectError(await post(key, path, { external_account: { object: 'card', number: '4242424242424242', exp_month: 1, exp_year: 2040 } }), 400, { code: 'invalid_card_type' });
    const live = await post(key, path, { external_account: { object: 'card', number: '4111111111111112', exp_month: 1, exp_year: 2040 } });
    expectError(live, 402, { type: 'card_error', code: 'card_declined', decline_code: 'test_mode_live_card' });
    expectError(await post(key, path, { external_account: 'btok_nope' }), 400, { code: 'resource_missing', param: 'external_account' });
    expectError(await post(key, path, {}), 400, { code: 'parameter_missing', param: 'external_account' });
    expectError(await post(key, path, { external_account: { object: 'bank_account', country: 'US' } }), 400, { param: expect.stringMatching(/^external_account\[/) });
    // Through the SDK, a declined card is its card error.
    await expect(
      t.stripe(key).accounts.createExternalAccount(account, { external_account: { object: 'card', number: '4111111111111112', exp_month: 1, exp_year: 2040 } }),
    ).rejects.toBeInstanceOf(Stripe.errors.StripeCardError);
  });

  it('moves the default of a currency, updates holder fields and metadata, and deletes all but a default, with events', async () => {
    const key = newTestKey();
    const stripe = t.stripe(key);
    const { id: account } = await createAccount(t, key, CUSTOM);
    const first = await createExternalAccount(t, key, account, { external_account: 'btok_us_verified' });
    const second = await createExternalAccount(t, key, account);

    const moved = (await stripe.accounts.updateExternalAccount(account, second.id, { default_for_currency: true, account_holder_name: 'Jenny Rosen', account_holder_type: 'individual', metadata: { k: 'v' } })) as Stripe.BankAccount;
    expect(moved).toMatchObject({ default_for_currency: true, account_holder_name: 'Jenny Rosen', account_holder_type: 'individual', metadata: { k: 'v' } });
    expect((await stripe.accounts.retrieveExternalAccount(account, first.id)).default_for_currency).toBe(false);
    const unset = await post(key, `/v1/accounts/${account}/external_accounts/${second.id}`, 'account_holder_type=&metadata[k]=');
    expect(unset.body).toMatchObject({ account_holder_type: null, metadata: {} });
    expectError(await post(key, `/v1/accounts/${account}/external_accounts/${second.id}`, 'default_for_currency=false'), 400, { param: 'default_for_currency' });
    expectError(await post(key, `/v1/accounts/${account}/external_accounts/${second.id}`, 'exp_month=1'), 400, { code: 'parameter_unknown', param: 'exp_month' });

    expectError(await del(key, `/v1/accounts/${account}/external_accounts/${second.id}`), 400, { type: 'invalid_request_error' });
    expect(await stripe.accounts.deleteExternalAccount(account, first.id)).toEqual({ id: first.id, object: 'bank_account', currency: 'usd', deleted: true });
    expectError(await get(key, `/v1/accounts/${account}/external_accounts/${first.id}`), 404, { code: 'resource_missing', message: `No such external account: '${first.id}'` });

    const events = await t.runtime.prisma.event.findMany({ where: { accountId: account, type: { startsWith: 'account.external_account.' } }, orderBy: { seq: 'asc' } });
    expect(events.map((e) => [e.type, (e.data as any).object.id])).toEqual([
      ['account.external_account.created', first.id],
      ['account.external_account.created', second.id],
      // The new default, then the old one it replaced.
      ['account.external_account.updated', second.id],
      ['account.external_account.updated', first.id],
      ['account.external_account.updated', second.id],
      ['account.external_account.deleted', first.id],
    ]);
    expect((events[2].data as any).previous_attributes).toMatchObject({ default_for_currency: false, account_holder_name: null, metadata: {} });
    expect((events[3].data as any).previous_attributes).toEqual({ default_for_currency: true });
  });

  it("updates bank accounts only where the platform collects requirements, and leaves them to the holder once onboarding started", async () => {
    const key = newTestKey();
    const express = await createAccount(t, key, { type: 'express' });
    const bank = await createExternalAccount(t, key, express.id);
    const card = await createExternalAccount(t, key, express.id, { external_account: 'tok_visa_debit' });
    expectError(await post(key, `/v1/accounts/${express.id}/external_accounts/${bank.id}`, 'metadata[a]=1'), 400, { type: 'invalid_request_error' });
    expect((await post(key, `/v1/accounts/${express.id}/external_accounts/${card.id}`, 'name=Jenny')).body.name).toBe('Jenny');

    await post(key, '/v1/account_links', { account: express.id, type: 'account_onboarding' });
    expectError(await post(key, `/v1/accounts/${express.id}/external_accounts`, 'external_account=btok_us'), 400, { param: 'external_account' });
    expectError(await post(key, `/v1/accounts/${express.id}/external_accounts/${card.id}`, 'name=Jen'), 400, { type: 'invalid_request_error' });
    expect((await get(key, `/v1/accounts/${express.id}/external_accounts`)).body.data).toHaveLength(2);
  });

  it('keeps platforms apart, and a connected account reads only its own through Stripe-Account', async () => {
    const mine = newTestKey();
    const theirs = newTestKey();
    const { id: account } = await createAccount(t, mine, CUSTOM);
    const bank = await createExternalAccount(t, mine, account);
    await get(theirs, '/v1/account');
    const path = `/v1/accounts/${account}/external_accounts`;
    expectError(await get(theirs, path), 404, { code: 'resource_missing' });
    expectError(await post(theirs, path, 'external_account=btok_us'), 404, { code: 'resource_missing' });
    expectError(await get(theirs, `${path}/${bank.id}`), 404, { code: 'resource_missing' });
    expectError(await post(theirs, `${path}/${bank.id}`, 'metadata[a]=1'), 404, { code: 'resource_missing' });
    expectError(await del(theirs, `${path}/${bank.id}`), 404, { code: 'resource_missing' });

    const asIt = { 'Stripe-Account': account };
    expect((await get(mine, path, asIt)).body.data.map((e: any) => e.id)).toEqual([bank.id]);
    expectError(await post(mine, path, 'external_account=btok_us', asIt), 404, { code: 'resource_missing' });
    const sibling = await createAccount(t, mine);
    expectError(await get(mine, `/v1/accounts/${sibling.id}/external_accounts`, asIt), 404, { code: 'resource_missing' });
    // Another account's external account is not one of this account's.
    expectError(await get(mine, `/v1/accounts/${sibling.id}/external_accounts/${bank.id}`), 404, { code: 'resource_missing' });
  });
});
