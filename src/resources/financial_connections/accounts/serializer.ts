import type {
  FinancialConnectionsAccount,
  FinancialConnectionsOwner,
  FinancialConnectionsSession,
  FinancialConnectionsTransaction,
} from '../../../generated/prisma/client';
import { pathField, ref, type ExpandableFields } from '../../../kernel/expand';
import type { RequestContext } from '../../../kernel/route';
import { embed } from '../../../kernel/versions';
import { hasIdShape } from '../../../lib/ids';
import { templateOf, type TestInstitution } from './institutions';

export const SESSION_OBJECT = 'financial_connections.session';
export const ACCOUNT_OBJECT = 'financial_connections.account';
export const TRANSACTION_OBJECT = 'financial_connections.transaction';
export const OWNER_OBJECT = 'financial_connections.account_owner';
export const OWNERSHIP_OBJECT = 'financial_connections.account_ownership';

export const ACCOUNTS_URL = '/v1/financial_connections/accounts';

export const PERMISSIONS = ['balances', 'ownership', 'payment_method', 'transactions'] as const;
export const PREFETCH = ['balances', 'ownership', 'transactions'] as const;
export const REFRESH_FEATURES = ['balance', 'ownership', 'transactions'] as const;
export const SESSION_STATUSES = ['pending', 'succeeded', 'failed', 'cancelled'] as const;

export type Feature = (typeof REFRESH_FEATURES)[number];
export type SessionRow = FinancialConnectionsSession;
export type AccountRow = FinancialConnectionsAccount;
export type TransactionRow = FinancialConnectionsTransaction;
export type OwnerRow = FinancialConnectionsOwner;

/** The permission a refresh of each feature needs, and the feature each prefetch starts. */
export const PERMISSION_OF: Record<Feature, (typeof PERMISSIONS)[number]> = { balance: 'balances', ownership: 'ownership', transactions: 'transactions' };
export const FEATURE_OF_PREFETCH: Record<(typeof PREFETCH)[number], Feature> = { balances: 'balance', ownership: 'ownership', transactions: 'transactions' };

/** The refresh state objects as the account shows them, stored as such on the row. */
export interface RefreshState {
  id?: string;
  status: 'pending' | 'succeeded' | 'failed';
  last_attempted_at: number;
  next_refresh_available_at: number | null;
}

export interface SessionSecrets {
  clientSecret: string | null;
  url: string | null;
  /** A finished session's last client secret, which only versions before 2025-11-17.clover show. */
  lastClientSecret?: string | null;
}

/** Where a session carries its last client secret for the older versions (see `embed`). */
export const lastClientSecretKey = (sessionId: string): string => `${sessionId}.client_secret`;

export function serializeAccount(row: AccountRow): Record<string, unknown> {
  const { institution, account } = templateOf(row.institution, row.template);
  const disconnected = row.status === 'disconnected';
  return {
    id: row.id,
    object: ACCOUNT_OBJECT,
    account_holder: row.accountHolder,
    account_numbers: accountNumbersOf(institution, account.supported_payment_method_types),
    balance: disconnected ? null : (row.balance ?? null),
    balance_refresh: row.balanceRefresh ?? null,
    category: account.category,
    created: row.created,
    display_name: account.display_name,
    institution_name: institution.name,
    last4: account.last4,
    livemode: false,
    ownership: row.ownershipId,
    ownership_refresh: row.ownershipRefresh ?? null,
    permissions: row.permissions,
    status: row.status,
    status_details: statusDetailsOf(row),
    subcategory: account.subcategory,
    subscriptions: row.subscriptions,
    supported_payment_method_types: account.supported_payment_method_types,
    transaction_refresh: row.transactionRefresh ?? null,
  };
}

/** Numbers the account can be paid with; none for accounts that can't back a bank payment method. */
function accountNumbersOf(institution: TestInstitution, types: readonly string[]): Record<string, unknown>[] | null {
  if (!types.includes('us_bank_account')) return null;
  const identifier = institution.tokenized ? 'tokenized_account_number' : 'account_number';
  return [{ expected_expiry_date: null, identifier_type: identifier, status: 'transactable', supported_networks: ['ach'] }];
}

/** An active account of the Inactive Accounts institution says when it will stop working. */
function statusDetailsOf(row: AccountRow): Record<string, unknown> {
  if (row.status === 'active' && row.deactivateAt) {
    return { active: { action: 'relink_required', cause: 'institution_requirement', expected_deactivation_date: Math.ceil(row.deactivateAt.getTime() / 1000) } };
  }
  return {};
}

/** A session's filters without `countries`, which endive renamed (rows stored before it still have it). */
function newestFilters({ countries, ...filters }: Record<string, unknown>): Record<string, unknown> {
  return countries !== undefined && filters.country === undefined ? { ...filters, country: Array.isArray(countries) ? (countries[0] ?? null) : null } : filters;
}

export function serializeSession(row: SessionRow, accounts: readonly AccountRow[], secrets: SessionSecrets = { clientSecret: null, url: null }): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: row.id,
    object: SESSION_OBJECT,
    account_holder: row.accountHolder,
    accounts: { object: 'list', data: accounts.map(serializeAccount), has_more: false, url: ACCOUNTS_URL },
    client_secret: secrets.clientSecret,
    filters: row.filters === null ? undefined : newestFilters(row.filters as Record<string, unknown>),
    hosted: row.hostedReturnUrl === null ? undefined : { return_url: row.hostedReturnUrl },
    limits: row.limits ?? undefined,
    livemode: false,
    manual_entry: row.manualEntry ?? undefined,
    permissions: row.permissions,
    prefetch: row.prefetch.length > 0 ? row.prefetch : null,
    return_url: row.returnUrl ?? undefined,
    status: row.status,
    status_details: row.statusDetails ?? null,
    ui_mode: row.hostedReturnUrl === null ? undefined : 'hosted',
    url: secrets.url,
  };
  for (const key of Object.keys(out)) if (out[key] === undefined) delete out[key];
  return secrets.lastClientSecret ? embed(out, { [lastClientSecretKey(row.id)]: secrets.lastClientSecret }) : out;
}

export function serializeTransaction(row: TransactionRow): Record<string, unknown> {
  return {
    id: row.id,
    object: TRANSACTION_OBJECT,
    account: row.fcAccountId,
    amount: row.amount,
    currency: row.currency,
    description: row.description,
    livemode: false,
    status: row.status,
    status_transitions: { posted_at: row.postedAt, void_at: row.voidAt },
    transacted_at: row.transactedAt,
    transaction_refresh: row.transactionRefresh,
    updated: row.updated,
  };
}

export function serializeOwner(row: OwnerRow): Record<string, unknown> {
  return {
    id: row.id,
    object: OWNER_OBJECT,
    email: row.email,
    name: row.name,
    ownership: row.ownershipId,
    phone: row.phone,
    raw_address: row.rawAddress,
    refreshed_at: row.refreshedAt,
  };
}

/** `ownership` expanded: the ownership with its first page of owners. */
async function expandOwnership(value: unknown, _parent: Record<string, unknown>, ctx: RequestContext): Promise<unknown> {
  if (typeof value !== 'string' || !hasIdShape('fcaowns', value)) return value ?? null;
  const ownership = await ctx.deps.prisma.financialConnectionsOwnership.findUnique({
    where: { id: value, accountId: ctx.caller.accountId },
    include: { owners: { orderBy: { seq: 'desc' }, take: 11 } },
  });
  if (!ownership) return value;
  const owners = ownership.owners.slice(0, 10);
  return {
    id: ownership.id,
    object: OWNERSHIP_OBJECT,
    created: ownership.created,
    owners: {
      object: 'list',
      data: owners.map(serializeOwner),
      has_more: ownership.owners.length > 10,
      url: `${ACCOUNTS_URL}/${ownership.fcAccountId}/owners?ownership=${ownership.id}`,
    },
  };
}

/** A session's and an account's `account_holder`: the customer or account it belongs to. */
const ACCOUNT_HOLDER_OBJECT = 'financial_connections.account_holder';

export const expandable: Readonly<Record<string, ExpandableFields>> = {
  [SESSION_OBJECT]: { account_holder: pathField(ACCOUNT_HOLDER_OBJECT) },
  [ACCOUNT_OBJECT]: { ownership: { type: OWNERSHIP_OBJECT, expand: expandOwnership }, account_holder: pathField(ACCOUNT_HOLDER_OBJECT) },
  [ACCOUNT_HOLDER_OBJECT]: { account: ref('account'), customer: ref('customer') },
  [OWNERSHIP_OBJECT]: {},
  [TRANSACTION_OBJECT]: {},
  [OWNER_OBJECT]: {},
};
