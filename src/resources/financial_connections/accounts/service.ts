import { Prisma } from '../../../generated/prisma/client';
import type { Deps, RequestContext } from '../../../kernel/route';
import { hashKey as hashToken } from '../../../kernel/auth';
import { ApiError, invalidRequest, parametersExclusive, resourceMissing } from '../../../kernel/errors';
import { paginate, rangeWhere } from '../../../kernel/list';
import { checkHttpUrl } from '../../../kernel/urls';
import { unixSeconds } from '../../../lib/clock';
import { hasIdShape, newId, randomBase62 } from '../../../lib/ids';
import { causeOf, type EventCause, type Tx } from '../../../events/emit';
import { hostedUrl } from '../../../hosted/pages';
import { COUNTRY, DOWN_REASONS, INSTITUTIONS, institutionOf, type TestAccount, type TestInstitution } from './institutions';
import { deactivationJobId } from './jobs';
import {
  emitAccountEvent,
  lockAccount,
  nextSubscriptionDue,
  nothingAfter,
  runAfterCommit,
  startRefresh,
  subscriptionJob,
  type AfterCommit,
  type FcJob,
} from './pipeline';
import {
  ACCOUNTS_URL,
  FEATURE_OF_PREFETCH,
  PERMISSION_OF,
  serializeAccount,
  serializeOwner,
  serializeSession,
  serializeTransaction,
  type AccountRow,
  type Feature,
  type SessionRow,
  type SessionSecrets,
} from './serializer';

// Financial Connections: link sessions (completed by the hosted flow or the sandbox endpoint,
// both through completeSession), linked accounts and what can be done with them, their owners
// and transactions. Every change and its events commit together; refreshes, subscriptions and
// deactivations are finished by pipeline.ts.

const SESSION = 'financial connections session';
const ACCOUNT = 'financial connections account';
const TRANSACTION = 'financial connections transaction';

/** How long a session's hosted-flow url and client secret can be opened (once). */
export const LINK_TTL_SECONDS = 3600;
/** The public API's default for `limits[accounts]`. */
const DEFAULT_ACCOUNT_LIMIT = 100;

export const HOSTED_PATH = '/financial_connections/sessions';
/** A hosted url's token, or a client secret: either opens the hosted flow. */
export const LINK_TOKEN_SHAPE = /^(?:[A-Za-z0-9]{48}|fcsess_client_secret_[A-Za-z0-9]{24})$/;

// --- lookups --------------------------------------------------------------------------------

async function findSession(ctx: RequestContext, id: string): Promise<SessionRow> {
  if (!hasIdShape('fcsess', id)) throw resourceMissing(SESSION, id);
  const row = await ctx.deps.prisma.financialConnectionsSession.findUnique({ where: { id, accountId: ctx.caller.accountId } });
  if (!row) throw resourceMissing(SESSION, id);
  return row;
}

export async function lockSession(tx: Tx, where: Prisma.Sql): Promise<SessionRow | null> {
  const rows = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM financial_connections_sessions WHERE ${where} FOR UPDATE`;
  if (rows.length === 0) return null;
  return tx.financialConnectionsSession.findUnique({ where: { id: rows[0].id } });
}

async function findAccount(ctx: RequestContext, id: string, param = 'id', status = 404): Promise<AccountRow> {
  const missing = resourceMissing(ACCOUNT, id, param, status);
  if (!hasIdShape('fca', id)) throw missing;
  const row = await ctx.deps.prisma.financialConnectionsAccount.findUnique({ where: { id, accountId: ctx.caller.accountId } });
  if (!row) throw missing;
  return row;
}

async function lockOwnedAccount(tx: Tx, ctx: RequestContext, id: string): Promise<AccountRow> {
  if (!hasIdShape('fca', id)) throw resourceMissing(ACCOUNT, id);
  const row = await lockAccount(tx, Prisma.sql`id = ${id} AND account_id = ${ctx.caller.accountId}`);
  if (!row) throw resourceMissing(ACCOUNT, id);
  return row;
}

/** The linked accounts of a session, in the order it linked them. */
export async function accountsOf(db: Tx | Deps['prisma'], session: SessionRow): Promise<AccountRow[]> {
  if (session.linkedAccounts.length === 0) return [];
  const rows = await db.financialConnectionsAccount.findMany({ where: { id: { in: session.linkedAccounts } } });
  const byId = new Map(rows.map((r) => [r.id, r]));
  return session.linkedAccounts.flatMap((id) => byId.get(id) ?? []);
}

// --- sessions -------------------------------------------------------------------------------

/** `account_holder`: a customer of the caller, or the caller itself or one of its connected accounts. */
async function holderOf(ctx: RequestContext, param: { type: string; customer?: string; account?: string }): Promise<{ holder: Record<string, string>; key: string }> {
  const { prisma } = ctx.deps;
  if (param.type === 'customer') {
    if (param.account !== undefined) throw invalidRequest('account_holder[account] applies only to `type=account`.', 'parameter_invalid', 'account_holder[account]');
    if (param.customer === undefined) throw invalidRequest('account_holder[customer] is required when `type` is `customer`.', 'parameter_missing', 'account_holder[customer]');
    const found = hasIdShape('cus', param.customer)
      ? await prisma.customer.findUnique({ where: { id: param.customer, accountId: ctx.caller.accountId }, select: { deleted: true } })
      : null;
    if (!found || found.deleted) throw resourceMissing('customer', param.customer, 'account_holder[customer]', 400);
    return { holder: { type: 'customer', customer: param.customer }, key: `customer:${param.customer}` };
  }
  if (param.customer !== undefined) throw invalidRequest('account_holder[customer] applies only to `type=customer`.', 'parameter_invalid', 'account_holder[customer]');
  if (param.account === undefined) throw invalidRequest('account_holder[account] is required when `type` is `account`.', 'parameter_missing', 'account_holder[account]');
  const missing = resourceMissing('account', param.account, 'account_holder[account]', 400);
  if (!hasIdShape('acct', param.account)) throw missing;
  const account = await prisma.account.findUnique({ where: { id: param.account }, select: { id: true, parentAccountId: true } });
  if (!account || (account.id !== ctx.caller.accountId && account.parentAccountId !== ctx.caller.accountId)) throw missing;
  return { holder: { type: 'account', account: param.account }, key: `account:${param.account}` };
}

/** A fresh client secret (and hosted url, for hosted sessions) for a pending session; only their hashes are stored. */
async function issueLinks(tx: Tx, deps: Deps, row: SessionRow, now: number): Promise<SessionSecrets> {
  const clientSecret = `fcsess_client_secret_${randomBase62(24)}`;
  const token = row.hostedReturnUrl === null ? null : randomBase62(48);
  const expiresAt = now + LINK_TTL_SECONDS;
  await tx.financialConnectionsLink.createMany({
    data: [clientSecret, ...(token ? [token] : [])].map((t) => ({ tokenHash: hashToken(t), sessionId: row.id, expiresAt })),
  });
  // Kept sealed for the older versions, which show a finished session's secret.
  await tx.financialConnectionsSession.update({ where: { id: row.id }, data: { clientSecret: await deps.encryption.seal(clientSecret) } });
  return { clientSecret, url: token ? hostedUrl(deps.config, `${HOSTED_PATH}/${token}`) : null };
}

/** A finished session's secrets: none at the newest version, its last client secret for older ones. */
async function finishedSecrets(deps: Deps, row: SessionRow): Promise<SessionSecrets> {
  return { clientSecret: null, url: null, lastClientSecret: row.clientSecret === null ? null : await deps.encryption.open(row.clientSecret) };
}

/** POST /v1/financial_connections/sessions */
export async function createSession(ctx: RequestContext) {
  const { params, deps, caller } = ctx;
  const { holder } = await holderOf(ctx, params.account_holder);
  const permissions = [...new Set<string>(params.permissions)];
  const prefetch = [...new Set<string>(params.prefetch ?? [])];
  for (const feature of prefetch) {
    const needed = PERMISSION_OF[FEATURE_OF_PREFETCH[feature as keyof typeof FEATURE_OF_PREFETCH]];
    if (!permissions.includes(needed)) {
      throw invalidRequest(`Prefetching \`${feature}\` needs the \`${needed}\` permission; add it to \`permissions\`.`, 'parameter_invalid', 'prefetch');
    }
  }
  if (params.return_url !== undefined) checkHttpUrl(params.return_url, 'return_url');
  const hostedReturnUrl: string | undefined = params.hosted?.return_url;
  if (params.ui_mode === 'hosted' && hostedReturnUrl === undefined) {
    throw invalidRequest('hosted[return_url] is required when `ui_mode` is `hosted`.', 'parameter_missing', 'hosted[return_url]');
  }
  if (hostedReturnUrl !== undefined && params.ui_mode !== 'hosted') {
    throw invalidRequest('hosted[return_url] applies only to `ui_mode=hosted`.', 'parameter_invalid', 'hosted[return_url]');
  }
  if (hostedReturnUrl !== undefined) checkHttpUrl(hostedReturnUrl, 'hosted[return_url]');
  const filters = filtersOf(params.filters);
  const limit = params.limits?.accounts;
  const now = unixSeconds(deps.clock);
  return deps.prisma.$transaction(async (tx) => {
    const row = await tx.financialConnectionsSession.create({
      data: {
        id: newId('fcsess'),
        accountId: caller.accountId,
        created: now,
        accountHolder: holder,
        permissions,
        filters: (filters as Prisma.InputJsonValue | null) ?? Prisma.DbNull,
        limits: { accounts: typeof limit === 'number' ? limit : DEFAULT_ACCOUNT_LIMIT },
        manualEntry: params.manual_entry ?? Prisma.DbNull,
        prefetch,
        returnUrl: params.return_url ?? null,
        hostedReturnUrl: hostedReturnUrl ?? null,
        status: 'pending',
        linkedAccounts: [],
      },
    });
    return serializeSession(row, [], await issueLinks(tx, deps, row, now));
  });
}

/** `filters` as stored and shown (an older version's `countries` arrives as `country`, ../requestVersions.ts). */
function filtersOf(param: Record<string, any> | undefined): Record<string, unknown> | null {
  if (param === undefined) return null;
  const country: string | undefined = param.country?.toUpperCase();
  return {
    account_subcategories: param.account_subcategories ? [...new Set(param.account_subcategories as string[])] : null,
    country: country ?? null,
  };
}

/** GET /v1/financial_connections/sessions/{fc_session}: a pending session carries a fresh client secret (and url). */
export async function retrieveSession(ctx: RequestContext) {
  const row = await findSession(ctx, ctx.pathParams.fc_session);
  const accounts = await accountsOf(ctx.deps.prisma, row);
  if (row.status !== 'pending') return serializeSession(row, accounts, await finishedSecrets(ctx.deps, row));
  const now = unixSeconds(ctx.deps.clock);
  const secrets = await ctx.deps.prisma.$transaction((tx) => issueLinks(tx, ctx.deps, row, now));
  return serializeSession(row, accounts, secrets);
}

/**
 * GET /sandbox/v1/financial_connections/sessions: the caller's sessions, newest first (`status`
 * filters; `pending` are those a test can complete). No public API lists them. A pending one
 * carries the client secret last issued and no url (retrieving it issues fresh ones); a finished
 * one what its retrieve shows.
 */
export async function listSessionsBySandbox(ctx: RequestContext) {
  const { params, deps } = ctx;
  const page = await paginate<SessionRow>({
    params,
    url: '/sandbox/v1/financial_connections/sessions',
    where: { accountId: ctx.caller.accountId, ...(params.status !== undefined ? { status: params.status } : {}) },
    model: deps.prisma.financialConnectionsSession as any,
    objectName: SESSION,
    serialize: (row) => row,
  });
  const secretsOf = async (row: SessionRow): Promise<SessionSecrets> =>
    row.status !== 'pending' ? finishedSecrets(deps, row) : { clientSecret: row.clientSecret === null ? null : await deps.encryption.open(row.clientSecret), url: null };
  return { ...page, data: await Promise.all((page.data as SessionRow[]).map(async (row) => serializeSession(row, await accountsOf(deps.prisma, row), await secretsOf(row)))) };
}

// --- completion -----------------------------------------------------------------------------

/** How a flow ended: accounts picked at an institution, or the user failing or leaving. */
export type Completion =
  | { outcome: 'succeeded'; institution: string; accounts?: readonly string[] }
  | { outcome: 'failed'; reason: string }
  | { outcome: 'cancelled' };

/** The accounts of an institution that a session may link: its filters, and `payment_method` needing an ACH-capable account. */
export function eligibleAccounts(session: Pick<SessionRow, 'filters' | 'permissions'>, institution: TestInstitution): TestAccount[] {
  // Sessions stored before endive's rename keep `countries` (the first element counted).
  const filters = (session.filters ?? {}) as { country?: string | null; countries?: string[] | null; account_subcategories?: string[] | null };
  const country = filters.country ?? filters.countries?.[0];
  if (country && country !== COUNTRY) return [];
  return institution.accounts.filter(
    (a) =>
      (!filters.account_subcategories || filters.account_subcategories.includes(a.subcategory)) &&
      (!session.permissions.includes('payment_method') || a.supported_payment_method_types.includes('us_bank_account')),
  );
}

export const accountLimitOf = (session: SessionRow): number => ((session.limits ?? {}) as { accounts?: number }).accounts ?? DEFAULT_ACCOUNT_LIMIT;

/** The accounts a successful completion links, or the 400 that says why none can be. */
function picksOf(session: SessionRow, institution: TestInstitution, chosen: readonly string[] | undefined): TestAccount[] {
  const eligible = eligibleAccounts(session, institution);
  const limit = accountLimitOf(session);
  if (chosen === undefined) {
    if (eligible.length === 0) throw invalidRequest(`No account of ${institution.name} matches this session's filters and permissions.`, 'parameter_invalid', 'institution');
    return eligible.slice(0, limit);
  }
  const picks: TestAccount[] = [];
  for (const id of new Set(chosen)) {
    const account = institution.accounts.find((a) => a.id === id);
    if (!account) throw invalidRequest(`${institution.name} has no test account '${id}'.`, 'resource_missing', 'accounts');
    if (!eligible.includes(account)) throw invalidRequest(`The account '${id}' doesn't match this session's filters and permissions.`, 'parameter_invalid', 'accounts');
    picks.push(account);
  }
  if (picks.length === 0) throw invalidRequest('Pick at least one account.', 'parameter_invalid', 'accounts');
  if (picks.length > limit) throw invalidRequest(`This session links at most ${limit} account${limit === 1 ? '' : 's'} (limits[accounts]).`, 'parameter_invalid', 'accounts');
  return picks;
}

export interface Completed {
  readonly row: SessionRow;
  readonly accounts: AccountRow[];
  readonly after: AfterCommit;
}

/**
 * Ends a pending session (locked by the caller) as the flow did: links the picked accounts (a
 * holder's account linked before is reused, and reactivated if it went inactive), starts the
 * prefetch refreshes and, for Inactive Accounts, the deactivation; or records the failure or
 * cancellation. The one place both the hosted flow and the sandbox endpoint complete a session.
 */
export async function completeSession(tx: Tx, deps: Deps, session: SessionRow, completion: Completion, cause: EventCause, apiVersion: string): Promise<Completed> {
  if (session.status !== 'pending') {
    throw invalidRequest(`This session is already ${session.status}; a session completes once.`, 'financial_connections_session_completed', undefined);
  }
  const now = unixSeconds(deps.clock);
  if (completion.outcome !== 'succeeded') {
    const statusDetails = completion.outcome === 'failed' ? { failed: { reason: completion.reason } } : { cancelled: { reason: 'other' } };
    const row = await tx.financialConnectionsSession.update({ where: { id: session.id }, data: { status: completion.outcome, statusDetails } });
    await tx.financialConnectionsLink.updateMany({ where: { sessionId: session.id, usedAt: null }, data: { usedAt: new Date(deps.clock.nowMs()) } });
    return { row, accounts: [], after: nothingAfter() };
  }
  const institution = institutionOf(completion.institution);
  if (!institution) throw invalidRequest(`No such institution: '${completion.institution}'`, 'resource_missing', 'institution');
  if (institution.down) return completeSession(tx, deps, session, { outcome: 'failed', reason: `institution_down_${institution.down}` }, cause, apiVersion);
  const picks = picksOf(session, institution, completion.accounts);
  const holder = session.accountHolder as Record<string, string>;
  const holderKey = `${holder.type}:${holder[holder.type]}`;
  const after: AfterCommit = nothingAfter();
  const accounts: AccountRow[] = [];
  for (const pick of picks) {
    let row = await linkAccount(tx, deps, session, institution, pick, holderKey, now, cause, apiVersion, after);
    for (const prefetch of session.prefetch) {
      const started = await startRefresh(tx, deps, row, FEATURE_OF_PREFETCH[prefetch as keyof typeof FEATURE_OF_PREFETCH]);
      row = started.row;
      if (started.job) after.jobs.push(started.job);
    }
    accounts.push(row);
  }
  const row = await tx.financialConnectionsSession.update({ where: { id: session.id }, data: { status: 'succeeded', statusDetails: Prisma.DbNull, linkedAccounts: accounts.map((a) => a.id) } });
  // The flow is over: no link of this session opens it again.
  await tx.financialConnectionsLink.updateMany({ where: { sessionId: session.id, usedAt: null }, data: { usedAt: new Date(deps.clock.nowMs()) } });
  return { row, accounts, after };
}

/** Links one test account for the session's holder: a new account, or the one linked before (not disconnected). */
async function linkAccount(
  tx: Tx,
  deps: Deps,
  session: SessionRow,
  institution: TestInstitution,
  pick: TestAccount,
  holderKey: string,
  now: number,
  cause: EventCause,
  apiVersion: string,
  after: AfterCommit,
): Promise<AccountRow> {
  const deactivateAt = institution.inactive ? new Date(deps.clock.nowMs() + deps.config.fcDeactivationDelayMs) : null;
  const existing = await lockAccount(
    tx,
    Prisma.sql`account_id = ${session.accountId} AND holder_key = ${holderKey} AND institution = ${institution.id} AND template = ${pick.id} AND status <> 'disconnected'`,
  );
  let row: AccountRow;
  if (existing) {
    const reactivated = existing.status === 'inactive';
    const subscribed = existing.subscriptions.includes('transactions');
    row = await tx.financialConnectionsAccount.update({
      where: { id: existing.id },
      data: {
        status: 'active',
        sessionId: session.id,
        permissions: session.permissions,
        links: existing.links + 1,
        deactivateAt,
        subscriptionDueAt: reactivated && subscribed ? nextSubscriptionDue(deps) : undefined,
      },
    });
    if (reactivated) {
      after.eventIds.push(await emitAccountEvent(tx, row, 'reactivated', now, cause, apiVersion));
      if (subscribed && row.subscriptionDueAt) after.jobs.push(subscriptionJob(row.id, row.subscriptionDueAt, deps.clock.nowMs()));
    }
  } else {
    row = await tx.financialConnectionsAccount.create({
      data: {
        id: newId('fca'),
        accountId: session.accountId,
        sessionId: session.id,
        created: now,
        holderKey,
        accountHolder: session.accountHolder as Prisma.InputJsonValue,
        institution: institution.id,
        template: pick.id,
        status: 'active',
        permissions: session.permissions,
        subscriptions: [],
        deactivateAt,
      },
    });
    after.eventIds.push(await emitAccountEvent(tx, row, 'created', now, cause, apiVersion));
  }
  if (deactivateAt) after.jobs.push({ id: deactivationJobId(row.id, row.links), data: { step: 'deactivate', id: row.id }, delayMs: deps.config.fcDeactivationDelayMs });
  return row;
}

/** POST /sandbox/v1/financial_connections/sessions/{fc_session}/complete: what the hosted flow does, for tests. */
export async function completeSessionBySandbox(ctx: RequestContext) {
  const { params, deps } = ctx;
  const outcome: string = params.outcome ?? 'succeeded';
  let completion: Completion;
  if (outcome === 'succeeded') {
    if (params.institution === undefined) throw invalidRequest('Missing required param: institution.', 'parameter_missing', 'institution');
    completion = { outcome, institution: params.institution, accounts: params.accounts };
  } else {
    if (params.institution !== undefined || params.accounts !== undefined) {
      throw invalidRequest(`\`institution\` and \`accounts\` apply only to outcome=succeeded, not \`${outcome}\`.`, 'parameter_invalid', params.institution !== undefined ? 'institution' : 'accounts');
    }
    completion = outcome === 'failed' ? { outcome, reason: 'error' } : { outcome: 'cancelled' };
  }
  const completed = await deps.prisma.$transaction(async (tx) => {
    const id = ctx.pathParams.fc_session;
    if (!hasIdShape('fcsess', id)) throw resourceMissing(SESSION, id);
    const session = await lockSession(tx, Prisma.sql`id = ${id} AND account_id = ${ctx.caller.accountId}`);
    if (!session) throw resourceMissing(SESSION, id);
    return completeSession(tx, deps, session, completion, causeOf(ctx), ctx.caller.defaultApiVersion);
  });
  await runAfterCommit(deps.queues, completed.after);
  return serializeSession(completed.row, completed.accounts, await finishedSecrets(deps, completed.row));
}

/** The test institutions as the sandbox lists them. */
export function institutionList() {
  return INSTITUTIONS.map((i) => ({
    id: i.id,
    name: i.name,
    login: i.login,
    down: i.down,
    down_reason: i.down ? DOWN_REASONS[i.down] : null,
    accounts_go_inactive: i.inactive,
    tokenized_account_numbers: i.tokenized,
    accounts: i.accounts.map((a) => ({
      id: a.id,
      display_name: a.display_name,
      category: a.category,
      subcategory: a.subcategory,
      last4: a.last4,
      supported_payment_method_types: a.supported_payment_method_types,
      owners: a.owners,
    })),
  }));
}

/** GET /sandbox/v1/financial_connections/institutions: a fixed catalogue, answered whole. */
export async function listInstitutions() {
  return { object: 'list', data: institutionList(), has_more: false, url: '/sandbox/v1/financial_connections/institutions' };
}

// --- accounts -------------------------------------------------------------------------------

/** GET /v1/financial_connections/accounts */
export async function listAccounts(ctx: RequestContext) {
  const { params } = ctx;
  const holder = params.account_holder as { customer?: string; account?: string } | undefined;
  if (holder?.customer !== undefined && holder.account !== undefined) throw parametersExclusive('account_holder[customer]', 'account_holder[account]');
  const where: Record<string, unknown> = { accountId: ctx.caller.accountId };
  if (holder?.customer !== undefined) where.holderKey = `customer:${holder.customer}`;
  if (holder?.account !== undefined) where.holderKey = `account:${holder.account}`;
  if (params.session !== undefined) {
    const session = hasIdShape('fcsess', params.session)
      ? await ctx.deps.prisma.financialConnectionsSession.findUnique({ where: { id: params.session, accountId: ctx.caller.accountId }, select: { linkedAccounts: true } })
      : null;
    if (!session) throw resourceMissing(SESSION, params.session, 'session', 400);
    where.id = { in: session.linkedAccounts };
  }
  return paginate({ params, url: ACCOUNTS_URL, where, model: ctx.deps.prisma.financialConnectionsAccount as any, objectName: ACCOUNT, serialize: serializeAccount });
}

/** GET /v1/financial_connections/accounts/{fc_account} */
export async function retrieveAccount(ctx: RequestContext) {
  return serializeAccount(await findAccount(ctx, ctx.pathParams.fc_account));
}

/** POST …/accounts/{fc_account}/disconnect: final; no more refreshes, and `balance` is null. */
export async function disconnectAccount(ctx: RequestContext) {
  const { deps } = ctx;
  const { row, eventIds } = await deps.prisma.$transaction(async (tx) => {
    const current = await lockOwnedAccount(tx, ctx, ctx.pathParams.fc_account);
    if (current.status === 'disconnected') return { row: current, eventIds: [] };
    const row = await tx.financialConnectionsAccount.update({
      where: { id: current.id },
      data: { status: 'disconnected', balance: Prisma.DbNull, subscriptions: [], subscriptionDueAt: null, deactivateAt: null },
    });
    return { row, eventIds: [await emitAccountEvent(tx, row, 'disconnected', unixSeconds(deps.clock), causeOf(ctx), ctx.caller.defaultApiVersion)] };
  });
  await runAfterCommit(deps.queues, { eventIds, jobs: [] });
  return serializeAccount(row);
}

/** Refreshes and subscriptions need an active account, with the permission the feature needs. */
function refuseUnusable(row: AccountRow, features: readonly Feature[], action: string): void {
  if (row.status === 'inactive') {
    throw invalidRequest(`Data cannot be ${action} on inactive Financial Connections accounts.`, 'financial_connections_account_inactive', undefined);
  }
  if (row.status === 'disconnected') {
    throw invalidRequest(`Data cannot be ${action} on disconnected Financial Connections accounts.`, 'financial_connections_account_disconnected', undefined);
  }
  for (const feature of features) {
    const needed = PERMISSION_OF[feature];
    if (!row.permissions.includes(needed)) {
      throw new ApiError({
        status: 400,
        message: `The account was linked without the \`${needed}\` permission, which \`${feature}\` needs. Link it again in a session with permissions[]=${needed}.`,
        code: 'financial_connections_missing_permission',
        param: 'features',
        kind: 'state',
      });
    }
  }
}

/** POST …/accounts/{fc_account}/refresh: starts each feature's refresh unless one runs or `next_refresh_available_at` is ahead. */
export async function refreshAccount(ctx: RequestContext) {
  const { deps } = ctx;
  const features = [...new Set<Feature>(ctx.params.features)];
  const { row, after } = await deps.prisma.$transaction(async (tx) => {
    let row = await lockOwnedAccount(tx, ctx, ctx.pathParams.fc_account);
    refuseUnusable(row, features, 'refreshed');
    const jobs: FcJob[] = [];
    for (const feature of features) {
      const started = await startRefresh(tx, deps, row, feature);
      row = started.row;
      if (started.job) jobs.push(started.job);
    }
    return { row, after: { eventIds: [], jobs } };
  });
  await runAfterCommit(deps.queues, after);
  return serializeAccount(row);
}

/** POST …/accounts/{fc_account}/subscribe: transactions are refreshed now, then every FC_SUBSCRIPTION_INTERVAL_MS. */
export async function subscribeAccount(ctx: RequestContext) {
  const { deps } = ctx;
  const { row, after } = await deps.prisma.$transaction(async (tx) => {
    const current = await lockOwnedAccount(tx, ctx, ctx.pathParams.fc_account);
    refuseUnusable(current, ['transactions'], 'subscribed to');
    const dueAt = nextSubscriptionDue(deps);
    const subscribed = await tx.financialConnectionsAccount.update({
      where: { id: current.id },
      data: { subscriptions: [...new Set([...current.subscriptions, 'transactions'])], subscriptionDueAt: dueAt },
    });
    const started = await startRefresh(tx, deps, subscribed, 'transactions', { scheduled: true });
    return { row: started.row, after: { eventIds: [], jobs: [...(started.job ? [started.job] : []), subscriptionJob(current.id, dueAt, deps.clock.nowMs())] } };
  });
  await runAfterCommit(deps.queues, after);
  return serializeAccount(row);
}

/** POST …/accounts/{fc_account}/unsubscribe: no more scheduled refreshes. */
export async function unsubscribeAccount(ctx: RequestContext) {
  const row = await ctx.deps.prisma.$transaction(async (tx) => {
    const current = await lockOwnedAccount(tx, ctx, ctx.pathParams.fc_account);
    return tx.financialConnectionsAccount.update({
      where: { id: current.id },
      data: { subscriptions: current.subscriptions.filter((s) => s !== 'transactions'), subscriptionDueAt: null },
    });
  });
  return serializeAccount(row);
}

/** GET …/accounts/{fc_account}/owners: the owners one ownership refresh found. */
export async function listOwners(ctx: RequestContext) {
  const { params } = ctx;
  const account = await findAccount(ctx, ctx.pathParams.fc_account);
  const ownership = hasIdShape('fcaowns', params.ownership)
    ? await ctx.deps.prisma.financialConnectionsOwnership.findUnique({ where: { id: params.ownership, fcAccountId: account.id }, select: { id: true } })
    : null;
  if (!ownership) throw resourceMissing('financial connections account ownership', params.ownership, 'ownership', 400);
  return paginate({
    params,
    url: `${ACCOUNTS_URL}/${account.id}/owners`,
    where: { ownershipId: ownership.id },
    model: ctx.deps.prisma.financialConnectionsOwner as any,
    objectName: 'financial connections account owner',
    serialize: serializeOwner,
  });
}

// --- transactions ---------------------------------------------------------------------------

/** GET /v1/financial_connections/transactions: only once a transaction refresh of the account succeeded. */
export async function listTransactions(ctx: RequestContext) {
  const { params, deps } = ctx;
  const account = await findAccount(ctx, params.account, 'account', 400);
  if (account.transactionRefreshes === 0) {
    throw invalidRequest(
      `The account ${account.id} has no successful transaction refresh; refresh its transactions first (features[]=transactions).`,
      'financial_connections_no_successful_transaction_refresh',
      'account',
    );
  }
  const where: Record<string, unknown> = { accountId: ctx.caller.accountId, fcAccountId: account.id };
  const transactedAt = rangeWhere(params.transacted_at);
  if (transactedAt !== undefined) where.transactedAt = transactedAt;
  const after: string | undefined = params.transaction_refresh?.after;
  if (after !== undefined) {
    const refresh = hasIdShape('fctxnref', after)
      ? await deps.prisma.financialConnectionsRefresh.findUnique({ where: { id: after, fcAccountId: account.id }, select: { seq: true } })
      : null;
    if (!refresh) throw resourceMissing('transaction refresh', after, 'transaction_refresh[after]', 400);
    where.refreshSeq = { gt: refresh.seq };
  }
  return paginate({
    params,
    url: '/v1/financial_connections/transactions',
    where,
    model: deps.prisma.financialConnectionsTransaction as any,
    objectName: TRANSACTION,
    serialize: serializeTransaction,
  });
}

/** GET /v1/financial_connections/transactions/{fc_transaction} */
export async function retrieveTransaction(ctx: RequestContext) {
  const id = ctx.pathParams.fc_transaction;
  if (!hasIdShape('fctxn', id)) throw resourceMissing(TRANSACTION, id);
  const row = await ctx.deps.prisma.financialConnectionsTransaction.findUnique({ where: { id, accountId: ctx.caller.accountId } });
  if (!row) throw resourceMissing(TRANSACTION, id);
  return serializeTransaction(row);
}

