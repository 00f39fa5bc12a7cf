import { newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { createAccount, createCustomer, createFcSession, FC_PERMISSIONS, linkFcAccounts, refreshFcAccount } from '../../helpers/fixtures';
import { expectError, requestsOf } from '../../helpers/requests';
import { accountOfKey } from '../../helpers/events';
import { INSTITUTIONS } from '../../../src/resources/financial_connections/accounts/institutions';
import { deactivateAccount, finishRefresh } from '../../../src/resources/financial_connections/accounts/pipeline';
import { hashKey } from '../../../src/kernel/auth';
import { LATEST_API_VERSION } from '../../../src/kernel/versions';

// Financial Connections over HTTP, without workers: sessions (validation, client secret kept as a
// hash), completion by the sandbox endpoint (filters, limits, picks, outcomes, down institutions,
// relinking), accounts (list filters, retrieve, disconnect), owners, transactions and their
// filters, the events each change writes, and isolation between keys and connected accounts.
// Refresh steps are run directly here (the worker runs the same functions; the worker tests run
// them through the queue).

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ PUBLIC_URL: 'https://sandbank.example.test', FC_REFRESH_COOLDOWN_SECONDS: '3600' });
});
afterAll(() => t.close());

const { get, post } = requestsOf(() => t);
const FC = '/v1/financial_connections';
const complete = (key: string, id: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  post(key, `/sandbox${FC}/sessions/${id}/complete`, body, headers);

async function typesOf(key: string, accountId?: string): Promise<string[]> {
  const rows = await t.runtime.prisma.event.findMany({ where: { accountId: await accountOfKey(t.runtime, key) }, orderBy: { seq: 'asc' } });
  return rows.filter((r) => accountId === undefined || (r.data as any).object.id === accountId).map((r) => r.type);
}

describe('sessions', () => {
  test('create answers a pending session with a client secret kept only as a hash, and no accounts', async () => {
    const key = newTestKey();
    const customer = (await createCustomer(t, key)).id;
    const res = await post(key, `${FC}/sessions`, {
      account_holder: { type: 'customer', customer },
      permissions: ['balances', 'transactions'],
      filters: { country: 'us', account_subcategories: ['checking', 'savings'] },
      limits: { accounts: 2 },
      prefetch: ['balances'],
      manual_entry: { mode: 'disabled' },
      return_url: 'http://127.0.0.1:0/back',
    }, { 'Stripe-Version': LATEST_API_VERSION });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      object: 'financial_connections.session',
      account_holder: { type: 'customer', customer },
      accounts: { object: 'list', data: [], has_more: false, url: '/v1/financial_connections/accounts' },
      client_secret: expect.stringMatching(/^fcsess_client_secret_[A-Za-z0-9]{24}$/),
      filters: { account_subcategories: ['checking', 'savings'], country: 'US' },
      limits: { accounts: 2 },
      manual_entry: { mode: 'disabled' },
      permissions: ['balances', 'transactions'],
      prefetch: ['balances'],
      return_url: 'http://127.0.0.1:0/back',
      status: 'pending',
      livemode: false,
      url: null,
    });
    const links = await t.runtime.prisma.financialConnectionsLink.findMany({ where: { sessionId: res.body.id } });
    expect(links.map((l) => l.tokenHash)).toEqual([hashKey(res.body.client_secret)]);
    const stored = await t.runtime.prisma.financialConnectionsSession.findUnique({ where: { id: res.body.id } });
    expect(JSON.stringify(stored, (_k, v) => (typeof v === "bigint" ? String(v) : v))).not.toContain(res.body.client_secret);
    expect(t.logText()).not.toContain(res.body.client_secret);
    // A retrieve of a pending session hands out a fresh secret.
    const again = await get(key, `${FC}/sessions/${res.body.id}`);
    expect(again.body.client_secret).toMatch(/^fcsess_client_secret_/);
    expect(again.body.client_secret).not.toBe(res.body.client_secret);
  });

  test('account_holder must be a customer of the caller, or the caller or one of its connected accounts', async () => {
    const key = newTestKey();
    const other = newTestKey();
    const theirs = (await createCustomer(t, other)).id;
    expectError(await post(key, `${FC}/sessions`, { account_holder: { type: 'customer', customer: theirs }, permissions: ['balances'] }), 400, {
      code: 'resource_missing',
      param: 'account_holder[customer]',
    });
    expectError(await post(key, `${FC}/sessions`, { account_holder: { type: 'customer' }, permissions: ['balances'] }), 400, { param: 'account_holder[customer]' });
    const connected = (await createAccount(t, key)).id;
    const ok = await post(key, `${FC}/sessions`, { account_holder: { type: 'account', account: connected }, permissions: ['ownership'] });
    expect(ok.body.account_holder).toEqual({ type: 'account', account: connected });
    const foreign = (await createAccount(t, other)).id;
    expectError(await post(key, `${FC}/sessions`, { account_holder: { type: 'account', account: foreign }, permissions: ['balances'] }), 400, {
      code: 'resource_missing',
      param: 'account_holder[account]',
    });
    expectError(await post(key, `${FC}/sessions`, { account_holder: { type: 'account', account: connected }, permissions: [] }), 400, { param: 'permissions' });
    expectError(await post(key, `${FC}/sessions`, { account_holder: { type: 'account', account: connected }, permissions: ['bogus'] }), 400, { param: 'permissions[0]' });
    // A prefetch needs its permission.
    expectError(await post(key, `${FC}/sessions`, { account_holder: { type: 'account', account: connected }, permissions: ['balances'], prefetch: ['ownership'] }), 400, {
      param: 'prefetch',
    });
  });

  test('the sandbox completes with every account of an institution the filters allow, within the limit', async () => {
    const key = newTestKey();
    const s = await createFcSession(t, key, { filters: { account_subcategories: ['checking', 'savings', 'credit_card'] }, permissions: ['balances'], limits: { accounts: 2 } });
    const res = await complete(key, s.id, { institution: 'test_institution' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'succeeded', status_details: null, client_secret: null, url: null });
    expect(res.body.accounts.data.map((a: any) => a.subcategory)).toEqual(['checking', 'savings']);
    const [checking] = res.body.accounts.data;
    expect(checking).toMatchObject({
      object: 'financial_connections.account',
      account_holder: s.account_holder,
      account_numbers: [{ identifier_type: 'account_number', status: 'transactable', supported_networks: ['ach'], expected_expiry_date: null }],
      balance: null,
      balance_refresh: null,
      category: 'cash',
      display_name: 'Checking',
      institution_name: 'Test (Non-OAuth)',
      last4: '6789',
      ownership: null,
      permissions: ['balances'],
      status: 'active',
      subscriptions: [],
      supported_payment_method_types: ['link', 'us_bank_account'],
      transaction_refresh: null,
    });
    // Retrieved later, the session lists what it linked; it can't complete twice.
    const again = await get(key, `${FC}/sessions/${s.id}`);
    expect(again.body.accounts.data.map((a: any) => a.id)).toEqual(res.body.accounts.data.map((a: any) => a.id));
    expect(again.body.client_secret).toBeNull();
    expectError(await complete(key, s.id, { institution: 'test_institution' }), 400, { code: 'financial_connections_session_completed' });
    expect(await typesOf(key)).toEqual(['customer.created', 'financial_connections.account.created', 'financial_connections.account.created']);
  });

  test('accounts[] picks; a pick outside the filters, an unknown one or past the limit is refused; nothing eligible is refused', async () => {
    const key = newTestKey();
    const s = await createFcSession(t, key, { filters: { account_subcategories: ['checking', 'savings'] }, limits: { accounts: 1 } });
    expectError(await complete(key, s.id, { institution: 'test_institution', accounts: ['credit_card'] }), 400, { param: 'accounts' });
    expectError(await complete(key, s.id, { institution: 'test_institution', accounts: ['nope'] }), 400, { code: 'resource_missing', param: 'accounts' });
    expectError(await complete(key, s.id, { institution: 'test_institution', accounts: ['checking', 'savings'] }), 400, { param: 'accounts' });
    expectError(await complete(key, s.id, { institution: 'nowhere' }), 400, { code: 'resource_missing', param: 'institution' });
    const picked = await complete(key, s.id, { institution: 'test_institution', accounts: ['savings'] });
    expect(picked.body.accounts.data.map((a: any) => a.subcategory)).toEqual(['savings']);
    // payment_method needs an account usable for ACH: Invalid Payment Accounts has none.
    const pay = await createFcSession(t, key, { permissions: ['payment_method'] });
    expectError(await complete(key, pay.id, { institution: 'invalid_payment_accounts' }), 400, { param: 'institution' });
    const wrongCountry = await createFcSession(t, key, { filters: { country: 'FR' } });
    expectError(await complete(key, wrongCountry.id, { institution: 'test_institution' }), 400, { param: 'institution' });
  });

  test('before 2026-09-30.endive the country filter is filters[countries], of which the first counts; after, it is unknown', async () => {
    const key = newTestKey();
    const customer = (await createCustomer(t, key)).id;
    const body = (filters: Record<string, unknown>) => ({ account_holder: { type: 'customer', customer }, permissions: ['balances'], filters });
    const dahlia = { 'Stripe-Version': '2026-08-26.dahlia' };
    const old = await post(key, `${FC}/sessions`, body({ countries: ['fr', 'us'] }), dahlia);
    expect(old.status).toBe(200);
    // Answered at dahlia too: the filter shows as `countries` there (src/resources/financial_connections/versions.ts).
    expect(old.body.filters).toMatchObject({ countries: ['FR'] });
    // Only the first element counted: a US institution is not for this session.
    expectError(await complete(key, old.body.id, { institution: 'test_institution' }), 400, { param: 'institution' });
    expect((await post(key, `${FC}/sessions`, body({ country: 'us' }), dahlia)).body.filters).toMatchObject({ countries: ['US'] });
    expectError(await post(key, `${FC}/sessions`, body({ countries: ['us'], country: 'us' }), dahlia), 400, { code: 'parameters_exclusive', param: 'filters[countries]' });
    // Errors name what the request sent.
    expectError(await post(key, `${FC}/sessions`, body({ countries: ['u$'] }), dahlia), 400, { param: 'filters[countries]' });
    expectError(await post(key, `${FC}/sessions`, body({ countries: ['us'] }), { 'Stripe-Version': '2026-09-30.endive' }), 400, {
      code: 'parameter_unknown',
      param: 'filters[countries]',
    });
    const latest = await post(key, `${FC}/sessions`, body({ countries: ['us'] }), { 'Stripe-Version': LATEST_API_VERSION });
    expectError(latest, 400, { code: 'parameter_unknown', param: 'filters[countries]' });
    expect(latest.body.error.message).toContain('filters[countries] was removed in API version 2026-09-30.endive: use `filters[country]`');
    // The first request pinned the account to dahlia: without a version, `countries` is taken.
    expect((await post(key, `${FC}/sessions`, body({ countries: ['us'] }))).body.filters).toMatchObject({ countries: ['US'] });
  });

  test('failed, cancelled and a down institution end the session without accounts', async () => {
    const key = newTestKey();
    const a = await createFcSession(t, key);
    expect((await complete(key, a.id, { outcome: 'cancelled' })).body).toMatchObject({ status: 'cancelled', status_details: { cancelled: { reason: 'other' } }, accounts: { data: [] } });
    const b = await createFcSession(t, key);
    expect((await complete(key, b.id, { outcome: 'failed' })).body).toMatchObject({ status: 'failed', status_details: { failed: { reason: 'error' } } });
    const c = await createFcSession(t, key);
    expect((await complete(key, c.id, { institution: 'down_scheduled' })).body).toMatchObject({ status: 'failed', status_details: { failed: { reason: 'institution_down_scheduled' } } });
    const d = await createFcSession(t, key);
    expectError(await complete(key, d.id, { outcome: 'cancelled', institution: 'test_institution' }), 400, { param: 'institution' });
    expectError(await complete(key, d.id, {}), 400, { code: 'parameter_missing', param: 'institution' });
    expect(await typesOf(key)).not.toContain('financial_connections.account.created');
  });

  test('the institutions list names every test institution with its accounts', async () => {
    const res = await get(newTestKey(), '/sandbox/v1/financial_connections/institutions');
    expect(res.status).toBe(200);
    expect(res.body.object).toBe('list');
    expect(res.body.data.map((i: any) => i.name)).toEqual(INSTITUTIONS.map((i) => i.name));
    const invalid = res.body.data.find((i: any) => i.id === 'invalid_payment_accounts');
    expect(invalid.accounts.every((a: any) => a.supported_payment_method_types.length === 0)).toBe(true);
    expect(res.body.data.find((i: any) => i.id === 'down_error')).toMatchObject({ down: 'error', down_reason: expect.any(String) });
  });
});

describe('accounts', () => {
  test('list filters by holder and session, and a holder filter takes one of customer and account', async () => {
    const key = newTestKey();
    const [a1] = await linkFcAccounts(t, key, { accounts: ['checking'] });
    const [b1, b2] = await linkFcAccounts(t, key, { accounts: ['savings', 'credit_card'] });
    const all = await get(key, `${FC}/accounts`);
    expect(all.body.data.map((a: any) => a.id)).toEqual([b2.id, b1.id, a1.id]);
    const byCustomer = await get(key, `${FC}/accounts?account_holder[customer]=${a1.account_holder.customer}`);
    expect(byCustomer.body.data.map((a: any) => a.id)).toEqual([a1.id]);
    const bySession = await get(key, `${FC}/accounts?session=${(await t.runtime.prisma.financialConnectionsAccount.findUniqueOrThrow({ where: { id: b1.id } })).sessionId}`);
    expect(bySession.body.data.map((a: any) => a.id)).toEqual([b2.id, b1.id]);
    expectError(await get(key, `${FC}/accounts?account_holder[customer]=cus_1&account_holder[account]=acct_1`), 400, { code: 'parameters_exclusive' });
    expectError(await get(key, `${FC}/accounts?session=fcsess_nope`), 400, { code: 'resource_missing', param: 'session' });
  });

  test('one key never sees another key’s accounts, and a connected account (Stripe-Account) has its own', async () => {
    const key = newTestKey();
    const [mine] = await linkFcAccounts(t, key, { accounts: ['checking'] });
    const other = newTestKey();
    expectError(await get(other, `${FC}/accounts/${mine.id}`), 404, { code: 'resource_missing' });
    expect((await get(other, `${FC}/accounts`)).body.data).toEqual([]);
    expectError(await post(other, `${FC}/accounts/${mine.id}/disconnect`), 404, { code: 'resource_missing' });
    const connected = (await createAccount(t, key)).id;
    const asConnected = { 'Stripe-Account': connected };
    expectError(await get(key, `${FC}/accounts/${mine.id}`, asConnected), 404, { code: 'resource_missing' });
    const s = await post(key, `${FC}/sessions`, { account_holder: { type: 'account', account: connected }, permissions: ['balances'] }, asConnected);
    expect(s.status).toBe(200);
    const done = await complete(key, s.body.id, { institution: 'bank_oauth' }, asConnected);
    expect(done.body.accounts.data).toHaveLength(3);
    expect((await get(key, `${FC}/accounts`)).body.data.map((a: any) => a.id)).toEqual([mine.id]);
    expectError(await get(key, `${FC}/sessions/${s.body.id}`), 404, { code: 'resource_missing' });
    expect((await get(key, `${FC}/accounts`, asConnected)).body.data).toHaveLength(3);
  });

  test('disconnect: status disconnected, balance null, no more refreshes, the event once', async () => {
    const key = newTestKey();
    const [account] = await linkFcAccounts(t, key, { accounts: ['checking'] });
    const refreshed = await refreshFcAccount(t, key, account.id, 'balance');
    expect(refreshed.balance).toMatchObject({ type: 'cash', cash: { available: { usd: expect.any(Number) } }, current: { usd: expect.any(Number) } });
    const res = await post(key, `${FC}/accounts/${account.id}/disconnect`);
    expect(res.body).toMatchObject({ status: 'disconnected', balance: null });
    expect((await post(key, `${FC}/accounts/${account.id}/disconnect`)).body.status).toBe('disconnected');
    expectError(await post(key, `${FC}/accounts/${account.id}/refresh`, { features: ['balance'] }), 400, { code: 'financial_connections_account_disconnected' });
    expectError(await post(key, `${FC}/accounts/${account.id}/subscribe`, { features: ['transactions'] }), 400, { code: 'financial_connections_account_disconnected' });
    expect((await typesOf(key, account.id)).filter((ty) => ty.endsWith('disconnected'))).toHaveLength(1);
    // Linking the same test account again makes a new account.
    const [again] = await linkFcAccounts(t, key, { accounts: ['checking'] }, { account_holder: account.account_holder });
    expect(again.id).not.toBe(account.id);
  });

  test('a credit account has `credit.used`, not `cash.available`', async () => {
    const key = newTestKey();
    const [card] = await linkFcAccounts(t, key, { accounts: ['credit_card'] });
    const { balance } = await refreshFcAccount(t, key, card.id, 'balance');
    expect(balance).toEqual({ as_of: expect.any(Number), type: 'credit', credit: { used: { usd: expect.any(Number) } }, current: { usd: -balance.credit.used.usd } });
    expect(balance).not.toHaveProperty('cash');
  });

  test('a refresh needs the permission its feature does, on an active account', async () => {
    const key = newTestKey();
    const [account] = await linkFcAccounts(t, key, { accounts: ['checking'] }, { permissions: ['balances'] });
    expectError(await post(key, `${FC}/accounts/${account.id}/refresh`, { features: ['transactions'] }), 400, {
      code: 'financial_connections_missing_permission',
      param: 'features',
    });
    expectError(await post(key, `${FC}/accounts/${account.id}/subscribe`, { features: ['transactions'] }), 400, { code: 'financial_connections_missing_permission' });
    expectError(await post(key, `${FC}/accounts/${account.id}/refresh`, { features: ['bogus'] }), 400, { param: 'features[0]' });
    expectError(await post(key, `${FC}/accounts/${account.id}/refresh`, {}), 400, { code: 'parameter_missing', param: 'features' });
  });
});

describe('owners', () => {
  test('an ownership refresh makes an ownership whose owners list pages; joint accounts have two owners, some none', async () => {
    const key = newTestKey();
    const accounts = await linkFcAccounts(t, key, { institution: 'ownership_accounts' });
    const byTemplate = Object.fromEntries(accounts.map((a) => [a.display_name, a]));
    const joint = await refreshFcAccount(t, key, byTemplate['Joint Checking'].id, 'ownership');
    expect(joint.ownership).toMatch(/^fcaowns_/);
    expect(joint.ownership_refresh).toMatchObject({ status: 'succeeded' });
    const owners = await get(key, `${FC}/accounts/${joint.id}/owners?ownership=${joint.ownership}&limit=1`);
    expect(owners.body).toMatchObject({ object: 'list', has_more: true, url: `${FC}/accounts/${joint.id}/owners` });
    const second = await get(key, `${FC}/accounts/${joint.id}/owners?ownership=${joint.ownership}&starting_after=${owners.body.data[0].id}`);
    expect(second.body.data).toHaveLength(1);
    expect(second.body.has_more).toBe(false);
    for (const o of [...owners.body.data, ...second.body.data]) {
      expect(o).toMatchObject({ object: 'financial_connections.account_owner', ownership: joint.ownership, name: expect.any(String), email: expect.any(String), raw_address: expect.any(String) });
    }
    const expanded = await get(key, `${FC}/accounts/${joint.id}?expand[]=ownership`);
    expect(expanded.body.ownership).toMatchObject({ object: 'financial_connections.account_ownership', id: joint.ownership, owners: { data: expect.any(Array) } });
    expect(expanded.body.ownership.owners.data).toHaveLength(2);
    const none = await refreshFcAccount(t, key, byTemplate['No Ownership Data'].id, 'ownership');
    expect((await get(key, `${FC}/accounts/${none.id}/owners?ownership=${none.ownership}`)).body.data).toEqual([]);
    // The ownership must be this account's.
    expectError(await get(key, `${FC}/accounts/${none.id}/owners?ownership=${joint.ownership}`), 400, { code: 'resource_missing', param: 'ownership' });
    expectError(await get(key, `${FC}/accounts/${none.id}/owners`), 400, { code: 'parameter_missing', param: 'ownership' });
  });

  test('the same test account has the same owners and history wherever it is linked', async () => {
    const a = newTestKey();
    const b = newTestKey();
    const [first] = await linkFcAccounts(t, a, { institution: 'ownership_accounts', accounts: ['joint'] });
    const [second] = await linkFcAccounts(t, b, { institution: 'ownership_accounts', accounts: ['joint'] });
    const ownersOf = async (key: string, id: string) => {
      const { ownership } = await refreshFcAccount(t, key, id, 'ownership');
      return (await get(key, `${FC}/accounts/${id}/owners?ownership=${ownership}`)).body.data.map((o: any) => [o.name, o.email, o.phone, o.raw_address]);
    };
    expect(await ownersOf(a, first.id)).toEqual(await ownersOf(b, second.id));
    const historyOf = async (key: string, id: string) => {
      await refreshFcAccount(t, key, id, 'transactions');
      const rows = await t.runtime.prisma.financialConnectionsTransaction.findMany({ where: { fcAccountId: id }, orderBy: { ordinal: 'asc' } });
      return rows.map((r) => [r.amount, r.description, r.status]);
    };
    expect(await historyOf(a, first.id)).toEqual(await historyOf(b, second.id));
  });
});

describe('transactions', () => {
  test('refused before the first successful transaction refresh; then up to 180 days, newest first, with filters', async () => {
    const key = newTestKey();
    const [account] = await linkFcAccounts(t, key, { accounts: ['checking'] });
    expectError(await get(key, `${FC}/transactions?account=${account.id}`), 400, { code: 'financial_connections_no_successful_transaction_refresh', param: 'account' });
    expectError(await get(key, `${FC}/transactions`), 400, { code: 'parameter_missing', param: 'account' });
    expectError(await get(key, `${FC}/transactions?account=fca_nope`), 400, { code: 'resource_missing', param: 'account' });
    const refreshed = await refreshFcAccount(t, key, account.id);
    expect(refreshed.transaction_refresh).toMatchObject({ id: expect.stringMatching(/^fctxnref_/), status: 'succeeded', next_refresh_available_at: expect.any(Number) });
    const rows = await t.runtime.prisma.financialConnectionsTransaction.findMany({ where: { fcAccountId: account.id }, orderBy: { seq: 'desc' } });
    expect(rows.length).toBeGreaterThan(50);
    const now = Math.floor(Date.now() / 1000);
    expect(Math.min(...rows.map((r) => r.transactedAt))).toBeGreaterThan(now - 181 * 86400);
    expect(new Set(rows.map((r) => r.status))).toEqual(new Set(['pending', 'posted', 'void']));
    expect(rows.some((r) => r.amount < 0) && rows.some((r) => r.amount > 0)).toBe(true);

    const page = await get(key, `${FC}/transactions?account=${account.id}&limit=3`);
    expect(page.body).toMatchObject({ object: 'list', has_more: true, url: '/v1/financial_connections/transactions' });
    expect(page.body.data.map((x: any) => x.id)).toEqual(rows.slice(0, 3).map((r) => r.id));
    const newest = page.body.data[0];
    expect(newest).toMatchObject({ object: 'financial_connections.transaction', account: account.id, currency: 'usd', transaction_refresh: refreshed.transaction_refresh.id });
    expect((await get(key, `${FC}/transactions/${newest.id}`)).body).toEqual(newest);
    const cut = rows[10].transactedAt;
    const since = await get(key, `${FC}/transactions?account=${account.id}&transacted_at[gte]=${cut}&limit=100`);
    expect(since.body.data.map((x: any) => x.id).sort()).toEqual(rows.filter((r) => r.transactedAt >= cut).map((r) => r.id).sort());
    expect((await get(key, `${FC}/transactions?account=${account.id}&transacted_at=${cut}`)).body.data.every((x: any) => x.transacted_at === cut)).toBe(true);
    // Another key sees none of it.
    const other = newTestKey();
    expectError(await get(other, `${FC}/transactions/${newest.id}`), 404, { code: 'resource_missing' });
    expectError(await get(other, `${FC}/transactions?account=${account.id}`), 400, { code: 'resource_missing' });
  });

  test('a later refresh adds transactions and settles pending ones; transaction_refresh[after] lists only what changed since', async () => {
    const key = newTestKey();
    const [account] = await linkFcAccounts(t, key, { accounts: ['checking'] });
    const first = (await refreshFcAccount(t, key, account.id)).transaction_refresh.id;
    const before = await t.runtime.prisma.financialConnectionsTransaction.findMany({ where: { fcAccountId: account.id } });
    // The not-before rule (FC_REFRESH_COOLDOWN_SECONDS is an hour here): a refresh now is not started.
    const early = await post(key, `${FC}/accounts/${account.id}/refresh`, { features: ['transactions'] });
    expect(early.body.transaction_refresh).toMatchObject({ id: first, status: 'succeeded' });
    expect(await t.runtime.prisma.financialConnectionsRefresh.count({ where: { fcAccountId: account.id } })).toBe(1);
    // Past it, a refresh starts and finishes.
    await t.runtime.prisma.financialConnectionsAccount.update({ where: { id: account.id }, data: { transactionRefresh: { id: first, status: 'succeeded', last_attempted_at: 1, next_refresh_available_at: 1 } } });
    const second = await refreshFcAccount(t, key, account.id);
    expect(second.transaction_refresh.id).not.toBe(first);
    const after = await t.runtime.prisma.financialConnectionsTransaction.findMany({ where: { fcAccountId: account.id } });
    expect(after.length).toBeGreaterThan(before.length);
    const wasPending = before.filter((r) => r.status === 'pending').map((r) => r.id);
    const settled = after.filter((r) => wasPending.includes(r.id) && r.status !== 'pending');
    const changed = after.filter((r) => r.transactionRefresh === second.transaction_refresh.id).map((r) => r.id).sort();
    expect(changed.length).toBe(after.length - before.length + settled.length);
    const listed = await get(key, `${FC}/transactions?account=${account.id}&transaction_refresh[after]=${first}&limit=100`);
    expect(listed.body.data.map((x: any) => x.id).sort()).toEqual(changed);
    expectError(await get(key, `${FC}/transactions?account=${account.id}&transaction_refresh[after]=fctxnref_nope`), 400, { param: 'transaction_refresh[after]' });
  });
});

describe('events', () => {
  test('refreshes emit refreshed_* when they finish; a finished refresh run again does nothing', async () => {
    const key = newTestKey();
    const [account] = await linkFcAccounts(t, key, { accounts: ['checking'] }, { permissions: FC_PERMISSIONS });
    const res = await post(key, `${FC}/accounts/${account.id}/refresh`, { features: ['balance', 'ownership', 'transactions'] });
    expect(res.body).toMatchObject({
      balance_refresh: { status: 'pending', next_refresh_available_at: null },
      ownership_refresh: { status: 'pending' },
      transaction_refresh: { status: 'pending', id: expect.stringMatching(/^fctxnref_/) },
    });
    const refreshes = await t.runtime.prisma.financialConnectionsRefresh.findMany({ where: { fcAccountId: account.id } });
    for (const r of refreshes) expect(await finishRefresh(t.runtime, r.id)).toHaveLength(1);
    for (const r of refreshes) expect(await finishRefresh(t.runtime, r.id)).toEqual([]);
    expect((await typesOf(key, account.id)).sort()).toEqual([
      'financial_connections.account.created',
      'financial_connections.account.refreshed_balance',
      'financial_connections.account.refreshed_ownership',
      'financial_connections.account.refreshed_transactions',
    ]);
  });
});

describe('inactive accounts', () => {
  test('an Inactive Accounts account goes inactive when due: a running refresh then fails, new ones are refused; relinking reactivates it', async () => {
    const key = newTestKey();
    const [account] = await linkFcAccounts(t, key, { institution: 'inactive_accounts', accounts: ['checking'] });
    expect(account.status_details).toEqual({ active: { action: 'relink_required', cause: 'institution_requirement', expected_deactivation_date: expect.any(Number) } });
    const started = await post(key, `${FC}/accounts/${account.id}/refresh`, { features: ['balance'] });
    expect(started.body.balance_refresh.status).toBe('pending');
    // Not yet due (FC_DEACTIVATION_DELAY_MS is 10 s here): nothing happens.
    expect(await deactivateAccount(t.runtime, account.id)).toEqual([]);
    await t.runtime.prisma.financialConnectionsAccount.update({ where: { id: account.id }, data: { deactivateAt: new Date(Date.now() - 1000) } });
    expect(await deactivateAccount(t.runtime, account.id)).toHaveLength(1);
    expect(await deactivateAccount(t.runtime, account.id)).toEqual([]);
    const [refresh] = await t.runtime.prisma.financialConnectionsRefresh.findMany({ where: { fcAccountId: account.id } });
    await finishRefresh(t.runtime, refresh.id);
    const inactive = (await get(key, `${FC}/accounts/${account.id}`)).body;
    expect(inactive).toMatchObject({ status: 'inactive', status_details: {}, balance: null, balance_refresh: { status: 'failed', next_refresh_available_at: null } });
    expectError(await post(key, `${FC}/accounts/${account.id}/refresh`, { features: ['balance'] }), 400, {
      code: 'financial_connections_account_inactive',
      message: 'Data cannot be refreshed on inactive Financial Connections accounts.',
    });
    expectError(await post(key, `${FC}/accounts/${account.id}/subscribe`, { features: ['transactions'] }), 400, { code: 'financial_connections_account_inactive' });
    // The same holder links the same test account again: the same account, active again.
    const [again] = await linkFcAccounts(t, key, { institution: 'inactive_accounts', accounts: ['checking'] }, { account_holder: account.account_holder });
    expect(again).toMatchObject({ id: account.id, status: 'active' });
    expect(await typesOf(key, account.id)).toEqual([
      'financial_connections.account.created',
      'financial_connections.account.deactivated',
      'financial_connections.account.refreshed_balance',
      'financial_connections.account.reactivated',
    ]);
  });

  test('a refresh asked for while one of that feature runs is not started again', async () => {
    const key = newTestKey();
    const [account] = await linkFcAccounts(t, key, { accounts: ['checking'] });
    const first = await post(key, `${FC}/accounts/${account.id}/refresh`, { features: ['transactions'] });
    const second = await post(key, `${FC}/accounts/${account.id}/refresh`, { features: ['transactions'] });
    expect(second.body.transaction_refresh).toEqual(first.body.transaction_refresh);
    expect(await t.runtime.prisma.financialConnectionsRefresh.count({ where: { fcAccountId: account.id } })).toBe(1);
  });

  test('prefetch starts the matching refreshes when the account is linked', async () => {
    const key = newTestKey();
    const [account] = await linkFcAccounts(t, key, { accounts: ['checking'] }, { prefetch: ['balances', 'ownership'] });
    expect(account).toMatchObject({ balance_refresh: { status: 'pending' }, ownership_refresh: { status: 'pending' }, transaction_refresh: null });
  });
});
