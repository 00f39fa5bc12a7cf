import type { RequestContext } from '../../kernel/route';
import type { Prisma } from '../../generated/prisma/client';
import { unixSeconds } from '../../lib/clock';
import { hasIdShape, newId, randomBase62 } from '../../lib/ids';
import { invalidRequest, parametersExclusive, resourceMissing } from '../../kernel/errors';
import { paginate, rangeWhere } from '../../kernel/list';
import { applyMetadata, type Metadata, type MetadataParam } from '../../kernel/metadata';
import { causeOf, emit, previousAttributes, type EventCause, type Tx } from '../../events/emit';
import {
  capabilityStatuses,
  serializeAccount,
  serializeCapability,
  serializeDeletedAccount,
  type AccountDetails,
  type AccountRow,
} from './serializer';

const NAME = 'account';
/** The columns an account's public object is made from. */
export const ACCOUNT_ROW = {
  id: true,
  parentAccountId: true,
  created: true,
  type: true,
  country: true,
  email: true,
  businessType: true,
  defaultCurrency: true,
  metadata: true,
  details: true,
} as const;

const isPlainObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Merges posted members into stored ones; an empty string unsets a member (`dob=`, `support_url=`). */
function merge(current: Record<string, any> | undefined, patch: Record<string, any>): Record<string, any> {
  const out: Record<string, any> = { ...(current ?? {}) };
  for (const [key, value] of Object.entries(patch)) {
    if (value === '') delete out[key];
    else if (isPlainObject(value) && key !== 'metadata') out[key] = merge(isPlainObject(out[key]) ? out[key] : undefined, value);
    else if (key === 'metadata') out[key] = applyMetadata(out[key] ?? {}, value as MetadataParam);
    else out[key] = value;
  }
  return out;
}

/** The spec's `service` spelling becomes the public `stripe`; giving both spellings is ambiguous. */
function normalizeController(param: Record<string, any> | undefined): AccountDetails['controller'] | undefined {
  if (!param) return undefined;
  if (param.service_dashboard && param.stripe_dashboard) {
    throw parametersExclusive('controller[stripe_dashboard]', 'controller[service_dashboard]');
  }
  const publicValue = (v: string | undefined) => (v === 'service' ? 'stripe' : v);
  const dashboard = param.stripe_dashboard ?? param.service_dashboard;
  const out: NonNullable<AccountDetails['controller']> = {};
  if (param.fees) out.fees = { payer: param.fees.payer };
  if (param.losses) out.losses = { payments: publicValue(param.losses.payments) };
  if (param.requirement_collection) out.requirement_collection = publicValue(param.requirement_collection);
  if (dashboard) out.stripe_dashboard = { type: dashboard.type };
  return out;
}

/** The controller each legacy `type` stands for. */
const CONTROLLER_OF_TYPE: Record<string, NonNullable<AccountDetails['controller']>> = {
  standard: { fees: { payer: 'account' }, losses: { payments: 'stripe' }, requirement_collection: 'stripe', stripe_dashboard: { type: 'full' } },
  express: { fees: { payer: 'application' }, losses: { payments: 'application' }, requirement_collection: 'stripe', stripe_dashboard: { type: 'express' } },
  custom: { fees: { payer: 'application' }, losses: { payments: 'application' }, requirement_collection: 'application', stripe_dashboard: { type: 'none' } },
};

function typeOfController(c: NonNullable<AccountDetails['controller']>): string {
  const dashboard = c.stripe_dashboard?.type;
  if (dashboard === 'full') return 'standard';
  if (dashboard === 'express') return 'express';
  return c.requirement_collection === 'application' ? 'custom' : 'none';
}

// Public test tokens (https://docs.stripe.com/connect/testing): bank accounts and debit cards for payouts.
const TEST_BANK_ACCOUNTS: Record<string, { country: string; currency: string; routing: string; last4: string; bank: string }> = {
  btok_us: { country: 'US', currency: 'usd', routing: '110000000', last4: '6789', bank: 'STRIPE TEST BANK' },
  btok_us_verified: { country: 'US', currency: 'usd', routing: '110000000', last4: '6789', bank: 'STRIPE TEST BANK' },
};
const TEST_DEBIT_CARDS: Record<string, { brand: string; last4: string }> = {
  tok_visa_debit: { brand: 'Visa', last4: '5556' },
  tok_visa_debit_us: { brand: 'Visa', last4: '5556' },
  tok_mastercard_debit: { brand: 'MasterCard', last4: '8210' },
};

function bankAccount(accountId: string, input: { country: string; currency: string; routing: string | null; last4: string; bank: string | null; holderName?: string; holderType?: string; accountType?: string }) {
  return {
    id: newId('ba'),
    object: 'bank_account',
    account: accountId,
    account_holder_name: input.holderName ?? null,
    account_holder_type: input.holderType ?? null,
    account_type: input.accountType ?? null,
    available_payout_methods: ['standard'],
    bank_name: input.bank,
    country: input.country,
    currency: input.currency,
    default_for_currency: true,
    fingerprint: randomBase62(16),
    future_requirements: { currently_due: [], errors: [], past_due: [], pending_verification: [] },
    last4: input.last4,
    metadata: {},
    requirements: { currently_due: [], errors: [], past_due: [], pending_verification: [] },
    routing_number: input.routing,
    status: 'new',
  };
}

function externalAccountFromToken(accountId: string, token: string, param: string): Record<string, any> {
  const bank = TEST_BANK_ACCOUNTS[token];
  if (bank) return bankAccount(accountId, { ...bank });
  const card = TEST_DEBIT_CARDS[token];
  if (card) {
    return {
      id: newId('card'),
      object: 'card',
      account: accountId,
      address_city: null,
      address_country: null,
      address_line1: null,
      address_line1_check: null,
      address_line2: null,
      address_state: null,
      address_zip: null,
      address_zip_check: null,
      available_payout_methods: ['standard', 'instant'],
      brand: card.brand,
      country: 'US',
      currency: 'usd',
      cvc_check: null,
      default_for_currency: true,
      dynamic_last4: null,
      exp_month: 12,
      exp_year: new Date().getUTCFullYear() + 3,
      fingerprint: randomBase62(16),
      funding: 'debit',
      last4: card.last4,
      metadata: {},
      name: null,
      tokenization_method: null,
    };
  }
  throw invalidRequest(
    `No such token: '${token.slice(0, 100)}'. Use a public test token such as btok_us_verified (bank account) or tok_visa_debit (debit card).`,
    'resource_missing',
    param,
  );
}

/** The external account a request brings, if any: a token or bank account details. */
function externalAccountOf(accountId: string, params: Record<string, any>): Record<string, any> | undefined {
  if (params.external_account !== undefined && params.bank_account !== undefined) throw parametersExclusive('external_account', 'bank_account');
  if (typeof params.external_account === 'string') return externalAccountFromToken(accountId, params.external_account, 'external_account');
  const b = params.bank_account;
  if (typeof b === 'string') return externalAccountFromToken(accountId, b, 'bank_account');
  if (isPlainObject(b)) {
    if (!/^\d{4,17}$/.test(b.account_number)) throw invalidRequest('Invalid bank_account[account_number]: it must be 4 to 17 digits.', 'parameter_invalid', 'bank_account[account_number]');
    return bankAccount(accountId, {
      country: b.country.toUpperCase(),
      currency: (b.currency ?? 'usd').toLowerCase(),
      routing: b.routing_number ?? null,
      last4: b.account_number.slice(-4),
      bank: b.country.toUpperCase() === 'US' ? 'STRIPE TEST BANK' : null,
      holderName: b.account_holder_name,
      holderType: b.account_holder_type,
      accountType: b.account_type,
    });
  }
  return undefined;
}

/** There are no public test account tokens, so every `account_token` is refused clearly. */
function refuseAccountToken(params: Record<string, any>): void {
  if (params.account_token !== undefined) {
    throw invalidRequest(
      `No such token: '${String(params.account_token).slice(0, 100)}'. Account tokens are not supported here; pass the account's details directly.`,
      'resource_missing',
      'account_token',
    );
  }
}

/** Applies the posted sub-objects, capabilities and external account to stored details. */
function applyDetails(current: AccountDetails, params: Record<string, any>, accountId: string, now: number): AccountDetails {
  const next: AccountDetails = { ...current };
  for (const key of ['business_profile', 'company', 'settings', 'tos_acceptance', 'documents', 'groups'] as const) {
    if (params[key] !== undefined) next[key] = merge(current[key], params[key]);
  }
  if (params.individual !== undefined) {
    next.individual = merge(current.individual, params.individual);
    next.individual_id ??= newId('person');
  }
  if (params.capabilities !== undefined) {
    const capabilities = { ...(current.capabilities ?? {}) };
    for (const [name, value] of Object.entries<{ requested?: boolean }>(params.capabilities)) {
      if (value.requested === true) capabilities[name] = { requested: true, requested_at: capabilities[name]?.requested_at ?? now };
      else if (value.requested === false) delete capabilities[name];
    }
    next.capabilities = capabilities;
  }
  const external = externalAccountOf(accountId, params);
  if (external) {
    // It becomes the default for its currency and replaces the old default.
    next.external_accounts = [external, ...(current.external_accounts ?? []).filter((e) => e.currency !== external.currency)];
  }
  return next;
}

const currencyOf = (value: string | undefined) => value?.toLowerCase();

/**
 * A connected account of the calling platform, or `resource_missing`: 404 on `id` for a path
 * parameter, or (with `param`) 400 on that body parameter (`account` of account sessions).
 */
export async function findOwned(ctx: RequestContext, id: string, param?: string): Promise<AccountRow> {
  const missing = () => (param === undefined ? resourceMissing(NAME, id) : resourceMissing(NAME, id, param, 400));
  if (!hasIdShape('acct', id)) throw missing();
  const row = await ctx.deps.prisma.account.findUnique({ where: { id, parentAccountId: ctx.caller.accountId }, select: ACCOUNT_ROW });
  if (!row) throw missing();
  return row;
}

/** GET /v1/account: the platform itself, or the connected account named by Stripe-Account. */
export async function retrieveCallerAccount(ctx: RequestContext) {
  const row = await ctx.deps.prisma.account.findUnique({ where: { id: ctx.caller.accountId }, select: ACCOUNT_ROW });
  if (!row) throw resourceMissing(NAME, ctx.caller.accountId);
  return serializeAccount(row);
}

export async function createAccount(ctx: RequestContext) {
  const { params, deps, caller } = ctx;
  refuseAccountToken(params);
  if (params.type !== undefined && params.controller !== undefined) throw parametersExclusive('type', 'controller');
  const given = normalizeController(params.controller);
  const controller = params.type ? CONTROLLER_OF_TYPE[params.type] : { ...CONTROLLER_OF_TYPE.standard, ...given };
  if (given && !given.stripe_dashboard) controller.stripe_dashboard = { type: given.requirement_collection === 'application' ? 'none' : 'full' };
  const requested = Object.values<{ requested?: boolean }>(params.capabilities ?? {}).some((c) => c.requested === true);
  if (controller.stripe_dashboard?.type === 'none' && !requested) {
    throw invalidRequest(
      'You must request at least one capability in `capabilities` when controller[stripe_dashboard][type] is `none` (which includes Custom accounts).',
      'parameter_missing',
      'capabilities',
    );
  }
  const id = newId('acct', 16);
  const now = unixSeconds(deps.clock);
  // Accounts with a dashboard get the usual pair when they ask for nothing.
  const capabilities = params.capabilities ?? (requested ? undefined : { card_payments: { requested: true }, transfers: { requested: true } });
  const details = applyDetails({ controller }, { ...params, capabilities }, id, now);
  const row = await deps.prisma.account.create({
    data: {
      id,
      parentAccountId: caller.accountId,
      created: now,
      defaultApiVersion: caller.defaultApiVersion,
      type: typeOfController(controller),
      country: (params.country ?? 'US').toUpperCase(),
      email: params.email ?? null,
      businessType: params.business_type ?? null,
      defaultCurrency: currencyOf(params.default_currency) ?? null,
      metadata: applyMetadata({}, params.metadata as MetadataParam | undefined),
      details: details as Prisma.InputJsonValue,
    },
    select: ACCOUNT_ROW,
  });
  return serializeAccount(row);
}

export async function retrieveAccount(ctx: RequestContext) {
  return serializeAccount(await findOwned(ctx, ctx.pathParams.account));
}

/** What the account holder provides through onboarding; see checkHolderFields. */
const HOLDER_FIELDS = ['business_type', 'company', 'individual', 'external_account', 'bank_account'] as const;

/**
 * Once an account link or session exists, the holder's own details are theirs to give: the
 * platform may change them only where it collects requirements itself.
 */
function checkHolderFields(params: Record<string, any>, current: AccountRow, onboardingStarted: boolean): void {
  if (!onboardingStarted) return;
  if ((current.details as AccountDetails).controller?.requirement_collection === 'application') return;
  const field = HOLDER_FIELDS.find((f) => params[f] !== undefined);
  if (field === undefined) return;
  throw invalidRequest(
    `You cannot change \`${field}\` of this account: an account link or account session exists for it, and the account holder ` +
      'provides these details through onboarding. Only platforms that collect requirements themselves ' +
      '(controller[requirement_collection] is `application`, which includes Custom accounts) may change them.',
    undefined,
    field,
  );
}

export interface AccountChangeOptions {
  readonly now: number;
  readonly apiVersion: string;
  readonly cause: EventCause;
}

/**
 * Applies `params` (the update parameters, already validated) to an account the caller has locked
 * in `tx`, and emits account.updated and capability.updated for what changed. Returns the new
 * public object and the events to hand off after commit.
 */
export async function changeAccount(tx: Tx, current: AccountRow, params: Record<string, any>, options: AccountChangeOptions) {
  const { now } = options;
  const details = applyDetails(current.details as AccountDetails, params, current.id, now);
  const row = await tx.account.update({
    where: { id: current.id },
    data: {
      email: params.email,
      businessType: params.business_type,
      defaultCurrency: currencyOf(params.default_currency),
      metadata: params.metadata === undefined ? undefined : applyMetadata(current.metadata as Metadata, params.metadata),
      details: details as Prisma.InputJsonValue,
    },
    select: ACCOUNT_ROW,
  });
  const before = serializeAccount(current);
  const after = serializeAccount(row);
  const eventIds: string[] = [];
  const emitOptions = { accountId: current.id, apiVersion: options.apiVersion, created: now, cause: options.cause };
  const changed = previousAttributes(before, after);
  if (Object.keys(changed).length > 0) {
    eventIds.push(await emit(tx, 'account.updated', after, { ...emitOptions, previousAttributes: changed }));
  }
  const statusBefore = capabilityStatuses(current);
  const statusAfter = capabilityStatuses(row);
  for (const name of new Set([...Object.keys(statusBefore), ...Object.keys(statusAfter)])) {
    const status = statusAfter[name] ?? 'unrequested';
    if ((statusBefore[name] ?? 'unrequested') === status) continue;
    eventIds.push(await emit(tx, 'capability.updated', serializeCapability(row, name, status), emitOptions));
  }
  return { row: after, eventIds };
}

/** Locks a connected account of `parentAccountId` for the rest of `tx`; null when there is none. */
export async function lockConnectedAccount(tx: Tx, id: string, parentAccountId: string) {
  const locked = await tx.$queryRaw<{ session_created_at: number | null; link_created_at: number | null }[]>`
    SELECT session_created_at, link_created_at FROM accounts WHERE id = ${id} AND parent_account_id = ${parentAccountId} FOR UPDATE`;
  if (locked.length === 0) return null;
  const row = await tx.account.findUniqueOrThrow({ where: { id }, select: ACCOUNT_ROW });
  return { row, onboardingStarted: locked[0].session_created_at !== null || locked[0].link_created_at !== null };
}

export async function updateAccount(ctx: RequestContext) {
  const { params, deps, caller } = ctx;
  const id = ctx.pathParams.account;
  if (!hasIdShape('acct', id)) throw resourceMissing(NAME, id);
  refuseAccountToken(params);
  const now = unixSeconds(deps.clock);
  const { row, eventIds } = await deps.prisma.$transaction(async (tx) => {
    // The row stays locked, so concurrent updates merge instead of overwriting each other.
    const locked = await lockConnectedAccount(tx, id, caller.accountId);
    if (!locked) throw resourceMissing(NAME, id);
    checkHolderFields(params, locked.row, locked.onboardingStarted);
    return changeAccount(tx, locked.row, params, { now, apiVersion: caller.defaultApiVersion, cause: causeOf(ctx) });
  });
  if (eventIds.length > 0) await deps.jobs.handOffEvents(eventIds);
  return row;
}

export async function deleteAccount(ctx: RequestContext) {
  const id = ctx.pathParams.account;
  if (!hasIdShape('acct', id)) throw resourceMissing(NAME, id);
  // Everything the account owns (keys, endpoints, events) goes with it by cascade.
  const deleted = await ctx.deps.prisma.account.deleteMany({ where: { id, parentAccountId: ctx.caller.accountId } });
  if (deleted.count === 0) throw resourceMissing(NAME, id);
  return serializeDeletedAccount(id);
}

export async function listAccounts(ctx: RequestContext) {
  const created = rangeWhere(ctx.params.created);
  return paginate<AccountRow & { seq: bigint }>({
    params: ctx.params,
    url: '/v1/accounts',
    where: { parentAccountId: ctx.caller.accountId, ...(created !== undefined ? { created } : {}) },
    model: ctx.deps.prisma.account as any,
    objectName: NAME,
    serialize: (row: AccountRow) => serializeAccount(row),
  });
}
