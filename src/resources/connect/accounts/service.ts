import { ACCOUNT_REVOKED_CHANNEL } from '../../../kernel/auth';
import type { RequestContext } from '../../../kernel/route';
import type { Prisma } from '../../../generated/prisma/client';
import { unixSeconds } from '../../../lib/clock';
import { hasIdShape, newId, randomBase62 } from '../../../lib/ids';
import { ApiError, invalidRequest, parametersExclusive, resourceMissing } from '../../../kernel/errors';
import { paginate, rangeWhere } from '../../../kernel/list';
import { applyMetadata, type Metadata, type MetadataParam } from '../../../kernel/metadata';
import { insertAccount, selectForChange, updateAccountRow } from './queries';
import type { Db } from '../../../kernel/writes';
import type { EventType } from '../../../events/types';
import { causeOf, emit, emitIn, previousAttributes, requestEventOptions, type EmitOptions, type EventCause } from '../../../events/emit';
import { handOffEvents } from '../../../events/jobs';
import { isIsoCountry, isSupportedCountry, localCurrency, supportedCurrencies } from './countries';
import type { AccountDetails, AccountRow } from './details';
import { serializeAccount, serializeDeletedAccount, personRequirementsOf } from './serializer';
import { capabilitiesOf, serializeCapability } from '../capabilities/serializer';
import { externalAccountsOf, serializeExternalAccount } from '../external_accounts/serializer';
import { personsOf, serializePerson } from '../persons/serializer';

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

/** The next list position in an account (capabilities, external accounts and persons share one counter). */
export function nextSeq(details: AccountDetails): number {
  details.sequence = (details.sequence ?? 0) + 1;
  return details.sequence;
}

/** Merges posted members into stored ones; an empty string unsets a member (`dob=`, `support_url=`). */
export function merge(current: Record<string, any> | undefined, patch: Record<string, any>): Record<string, any> {
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
interface TestCard {
  brand: string;
  last4: string;
  funding: 'debit' | 'credit';
}
const TEST_DEBIT_CARDS: Record<string, TestCard> = {
  tok_visa_debit: { brand: 'Visa', last4: '5556', funding: 'debit' },
  tok_visa_debit_us: { brand: 'Visa', last4: '5556', funding: 'debit' },
  tok_mastercard_debit: { brand: 'MasterCard', last4: '8210', funding: 'debit' },
};
/** Test card tokens and numbers that are not debit cards: refused for payouts, as the public API does. */
const TEST_CREDIT_CARDS: Record<string, TestCard> = {
  tok_visa: { brand: 'Visa', last4: '4242', funding: 'credit' },
  tok_mastercard: { brand: 'MasterCard', last4: '4444', funding: 'credit' },
  tok_amex: { brand: 'American Express', last4: '8431', funding: 'credit' },
};
const TEST_CARD_NUMBERS: Record<string, TestCard> = {
  '4000056655665556': TEST_DEBIT_CARDS.tok_visa_debit,
  '5200828282828210': TEST_DEBIT_CARDS.tok_mastercard_debit,
  '4242424242424242': TEST_CREDIT_CARDS.tok_visa,
  '5555555555554444': TEST_CREDIT_CARDS.tok_mastercard,
  '378282246310005': TEST_CREDIT_CARDS.tok_amex,
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

const notDebit = (param: string) =>
  new ApiError({ status: 400, code: 'invalid_card_type', param, message: "This card doesn't appear to be a debit card. Payouts to cards need a debit card, such as tok_visa_debit." });

function debitCard(accountId: string, card: TestCard, param: string, details: Record<string, any> = {}) {
  if (card.funding !== 'debit') throw notDebit(param);
  return {
    id: newId('card'),
    object: 'card',
    account: accountId,
    address_city: details.address_city ?? null,
    address_country: details.address_country ?? null,
    address_line1: details.address_line1 ?? null,
    address_line1_check: details.address_line1 ? 'pass' : null,
    address_line2: details.address_line2 ?? null,
    address_state: details.address_state ?? null,
    address_zip: details.address_zip ?? null,
    address_zip_check: details.address_zip ? 'pass' : null,
    available_payout_methods: ['standard', 'instant'],
    brand: card.brand,
    country: 'US',
    currency: (details.currency ?? 'usd').toLowerCase(),
    cvc_check: details.cvc ? 'pass' : null,
    default_for_currency: true,
    dynamic_last4: null,
    exp_month: details.exp_month ?? 12,
    exp_year: details.exp_year ?? new Date().getUTCFullYear() + 3,
    fingerprint: randomBase62(16),
    funding: card.funding,
    last4: card.last4,
    metadata: {},
    name: details.name ?? null,
    regulated_status: 'unregulated',
    tokenization_method: null,
  };
}

const noSuchToken = (token: string, param: string) =>
  invalidRequest(
    `No such token: '${token.slice(0, 100)}'. Use a public test token such as btok_us_verified (bank account) or tok_visa_debit (debit card).`,
    'resource_missing',
    param,
  );

function externalAccountFromToken(accountId: string, token: string, param: string, details?: Record<string, any>): Record<string, any> {
  const bank = TEST_BANK_ACCOUNTS[token];
  if (bank) return bankAccount(accountId, { ...bank });
  const card = TEST_DEBIT_CARDS[token] ?? TEST_CREDIT_CARDS[token];
  if (card) return debitCard(accountId, card, param, details);
  throw noSuchToken(token, param);
}

/** A card's details: only the public test numbers; any other number is a live card, refused as in test mode. */
function externalAccountFromCard(accountId: string, c: Record<string, any>, param: string): Record<string, any> {
  if (typeof c.token === 'string') return externalAccountFromToken(accountId, c.token, `${param}[token]`, { currency: c.currency });
  const number = String(c.number ?? '').replace(/[\s-]/g, '');
  const card = TEST_CARD_NUMBERS[number];
  if (!card) {
    throw new ApiError({
      status: 402,
      type: 'card_error',
      code: 'card_declined',
      param: `${param}[number]`,
      message: 'Your card was declined. Your request was in test mode, but used a non test card. For a list of valid test cards, visit: https://stripe.com/docs/testing.',
      extra: { decline_code: 'test_mode_live_card' },
    });
  }
  return debitCard(accountId, card, param, c);
}

function externalAccountFromBankDetails(accountId: string, b: Record<string, any>, param: string): Record<string, any> {
  if (!/^\d{4,17}$/.test(b.account_number)) throw invalidRequest(`Invalid ${param}[account_number]: it must be 4 to 17 digits.`, 'parameter_invalid', `${param}[account_number]`);
  return bankAccount(accountId, {
    country: b.country.toUpperCase(),
    currency: (b.currency ?? localCurrency(b.country.toUpperCase())).toLowerCase(),
    routing: b.routing_number ?? null,
    last4: b.account_number.slice(-4),
    bank: b.country.toUpperCase() === 'US' ? 'STRIPE TEST BANK' : null,
    holderName: b.account_holder_name,
    holderType: b.account_holder_type,
    accountType: b.account_type,
  });
}

/**
 * The external account a parameter names: a test token, or bank account (or test card) details.
 * `param` is the parameter's name, for errors.
 */
export function externalAccountFrom(accountId: string, value: unknown, param: string): Record<string, any> {
  if (typeof value === 'string') return externalAccountFromToken(accountId, value, param);
  const v = value as Record<string, any>;
  if (v.object === 'card') return externalAccountFromCard(accountId, v, param);
  return externalAccountFromBankDetails(accountId, v, param);
}

/** The external account a request brings, if any: a token or bank account details. */
function externalAccountOf(accountId: string, params: Record<string, any>): Record<string, any> | undefined {
  if (params.external_account !== undefined && params.bank_account !== undefined) throw parametersExclusive('external_account', 'bank_account');
  if (params.external_account !== undefined) return externalAccountFrom(accountId, params.external_account, 'external_account');
  if (params.bank_account !== undefined) return externalAccountFrom(accountId, params.bank_account, 'bank_account');
  return undefined;
}

/** There are no public test account (or person) tokens, so every such token is refused clearly. */
export function refuseToken(params: Record<string, any>, param: 'account_token' | 'person_token'): void {
  if (params[param] !== undefined) {
    throw invalidRequest(
      `No such token: '${String(params[param]).slice(0, 100)}'. ${param === 'account_token' ? 'Account' : 'Person'} tokens are not supported here; pass the details directly.`,
      'resource_missing',
      param,
    );
  }
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** `email_invalid`, as the public API answers a malformed address. */
export function checkEmail(value: string | undefined, param: string): void {
  if (value !== undefined && !EMAIL.test(value)) throw invalidRequest(`Invalid email address: ${value.slice(0, 200)}`, 'email_invalid', param);
}

function checkCountry(value: string): string {
  const country = value.toUpperCase();
  if (!/^[A-Z]{2}$/.test(country) || !isIsoCountry(country)) {
    throw invalidRequest(
      `Country '${value.slice(0, 100)}' is unknown. Try using a 2-character alphanumeric country code instead, such as 'US', 'EG', or 'GB'. ` +
        'A full list of country codes is available at https://en.wikipedia.org/wiki/ISO_3166-1_alpha-2#Officially_assigned_code_elements',
      undefined,
      'country',
    );
  }
  if (!isSupportedCountry(country)) {
    throw invalidRequest(`Connected accounts in ${country} are not supported. See https://stripe.com/global for the countries where accounts can be created.`, 'country_unsupported', 'country');
  }
  return country;
}

/** What create and update check beyond the schema: the email, the MCC and the currency for the account's country. */
function checkAccountParams(params: Record<string, any>, country: string): void {
  checkEmail(params.email, 'email');
  const mcc = params.business_profile?.mcc;
  if (mcc !== undefined && !/^\d{4}$/.test(mcc)) {
    throw invalidRequest(`Invalid business_profile[mcc]: '${mcc}' is not a merchant category code; it must be four digits, such as 5734.`, 'parameter_invalid', 'business_profile[mcc]');
  }
  const currency = currencyOf(params.default_currency);
  if (currency !== undefined && !supportedCurrencies(country).includes(currency)) {
    throw invalidRequest(
      `${currency} is not a supported default currency for accounts in ${country}. Use one of: ${supportedCurrencies(country).join(', ')}.`,
      'parameter_invalid',
      'default_currency',
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
  if (params.capabilities !== undefined) next.capabilities = requestCapabilities(next, params.capabilities, now);
  const external = externalAccountOf(accountId, params);
  if (external) {
    // It becomes the default for its currency and replaces the old default.
    const replaced = (current.external_accounts ?? []).filter((e) => !(e.currency === external.currency && e.default_for_currency));
    next.external_accounts = [{ ...external, seq: nextSeq(next) }, ...replaced];
  }
  return next;
}

/** Requests (or removes) capabilities; a newly requested one is the newest of the list. */
export function requestCapabilities(details: AccountDetails, param: Record<string, { requested?: boolean }>, now: number): NonNullable<AccountDetails['capabilities']> {
  const capabilities = { ...(details.capabilities ?? {}) };
  for (const [name, value] of Object.entries(param)) {
    if (value.requested === true && !capabilities[name]?.requested) capabilities[name] = { requested: true, requested_at: now, seq: nextSeq(details) };
    else if (value.requested === false) delete capabilities[name];
  }
  return capabilities;
}

const currencyOf = (value: string | undefined) => value?.toLowerCase();

/**
 * The account a path names, to read: the caller's own account or one of its connected accounts;
 * otherwise 404 `resource_missing`.
 */
export async function findReadable(ctx: RequestContext, id: string): Promise<AccountRow> {
  if (!hasIdShape('acct', id)) throw resourceMissing(NAME, id);
  const row = await ctx.deps.prisma.account.findUnique({ where: { id }, select: ACCOUNT_ROW });
  if (!row || (row.id !== ctx.caller.accountId && row.parentAccountId !== ctx.caller.accountId)) throw resourceMissing(NAME, id);
  return row;
}

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

/** The caller's own account or one of its connected accounts, by id (the object registry's, for `expand[]`); null otherwise. */
export async function retrieveAccountObject(ctx: RequestContext, id: string) {
  if (!hasIdShape('acct', id)) return null;
  const row = await ctx.deps.prisma.account.findUnique({ where: { id }, select: ACCOUNT_ROW });
  return row && (row.id === ctx.caller.accountId || row.parentAccountId === ctx.caller.accountId) ? serializeAccount(row) : null;
}

/** GET /v1/account: the platform itself, or the connected account named by Stripe-Account. */
export async function retrieveCallerAccount(ctx: RequestContext) {
  const row = await ctx.deps.prisma.account.findUnique({ where: { id: ctx.caller.accountId }, select: ACCOUNT_ROW });
  if (!row) throw resourceMissing(NAME, ctx.caller.accountId);
  return serializeAccount(row);
}

export async function createAccount(ctx: RequestContext) {
  const { params, deps, caller } = ctx;
  refuseToken(params, 'account_token');
  const country = checkCountry(params.country ?? 'US');
  checkAccountParams(params, country);
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
  const row: AccountRow = {
    id,
    parentAccountId: caller.accountId,
    created: now,
    type: typeOfController(controller),
    country,
    email: params.email ?? null,
    businessType: params.business_type ?? null,
    defaultCurrency: currencyOf(params.default_currency) ?? null,
    metadata: applyMetadata({}, params.metadata as MetadataParam | undefined),
    details: details as Prisma.JsonObject,
  };
  await deps.write(insertAccount(row));
  return serializeAccount(row);
}

/** GET /v1/accounts/{account}: the caller's own account, or one of its connected accounts. */
export async function retrieveAccount(ctx: RequestContext) {
  return serializeAccount(await findReadable(ctx, ctx.pathParams.account));
}

/** What the account holder provides through onboarding; see checkHolderFields. */
const HOLDER_FIELDS = ['business_type', 'company', 'individual', 'external_account', 'bank_account'] as const;

/**
 * Once an account link or session exists, the holder's own details are theirs to give: the
 * platform may change them only where it collects requirements itself.
 */
function checkHolderFields(params: Record<string, any>, current: AccountRow, onboardingStarted: boolean): void {
  const field = HOLDER_FIELDS.find((f) => params[f] !== undefined);
  if (field !== undefined) checkHolderMayChange(current, onboardingStarted, `\`${field}\` of this account`, field);
}

/**
 * Once an account link or session exists, what the holder provides (its details, persons and
 * external accounts) is theirs to give, unless the platform collects requirements itself.
 */
export function checkHolderMayChange(current: AccountRow, onboardingStarted: boolean, what: string, param?: string): void {
  if (!onboardingStarted) return;
  if ((current.details as AccountDetails).controller?.requirement_collection === 'application') return;
  throw invalidRequest(
    `You cannot change ${what}: an account link or account session exists for it, and the account holder ` +
      'provides these details through onboarding. Only platforms that collect requirements themselves ' +
      '(controller[requirement_collection] is `application`, which includes Custom accounts) may change them.',
    undefined,
    param,
  );
}

export interface AccountChangeOptions {
  readonly now: number;
  readonly apiVersion: string;
  readonly cause: EventCause;
}

/** What a change writes: the new details, and the columns it sets (left out: unchanged). */
export interface AccountChange {
  readonly details: AccountDetails;
  readonly email?: string;
  readonly businessType?: string;
  readonly defaultCurrency?: string;
  readonly metadata?: Metadata;
  /** The individual was changed as a person (through the Persons API), so it is reported as one. */
  readonly individualChanged?: boolean;
}

type Rendered = { id: string } & Record<string, unknown>;

/** `<prefix>.created`, `.updated` (with previous_attributes) and `.deleted` for what differs between two sets of objects. */
async function emitSetChanges(db: AccountDb, prefix: 'account.external_account' | 'person', before: Rendered[], after: Rendered[], emitOptions: Omit<EmitOptions, 'previousAttributes'>) {
  const ids: string[] = [];
  const emit = (type: EventType, object: Rendered, options: Omit<EmitOptions, 'previousAttributes'> & Partial<EmitOptions>) => emitIn(db, type, object, options);
  const old = new Map(before.map((o) => [o.id, o]));
  const now = new Map(after.map((o) => [o.id, o]));
  // What was made first, then what that changed (another default, another representative), then what went.
  for (const object of after) if (!old.has(object.id)) ids.push(await emit(`${prefix}.created` as const, object, emitOptions));
  for (const object of after) {
    const was = old.get(object.id);
    const changed = was ? previousAttributes(was, object) : {};
    if (Object.keys(changed).length > 0) ids.push(await emit(`${prefix}.updated` as const, object, { ...emitOptions, previousAttributes: changed }));
  }
  for (const object of before) if (!now.has(object.id)) ids.push(await emit(`${prefix}.deleted` as const, object, emitOptions));
  return ids;
}

const renderedExternalAccounts = (row: AccountRow): Rendered[] => externalAccountsOf(row.details as AccountDetails).map(serializeExternalAccount) as Rendered[];

/** The account's persons as objects; its individual only when it was changed as a person. */
function renderedPersons(row: AccountRow, withIndividual: boolean): Rendered[] {
  const individualId = (row.details as AccountDetails).individual_id;
  return personsOf(row)
    .filter((p) => withIndividual || p.id !== individualId)
    .map((p) => serializePerson(row, p, personRequirementsOf(row, p)) as unknown as Rendered);
}

/**
 * Writes a change to an account read by lockConnectedAccount, and emits an event for each
 * thing it changed: its external accounts and persons (created, updated, deleted), the account
 * (account.updated), and each capability whose status or request changed (capability.updated),
 * all with previous_attributes. Returns the row as written, its public object and the events to
 * hand off after commit.
 */
export async function commitAccountChange(db: AccountDb, current: LockedAccount, change: AccountChange, options: AccountChangeOptions) {
  const row: AccountRow = {
    ...current.row,
    email: change.email === undefined ? current.row.email : change.email,
    businessType: change.businessType === undefined ? current.row.businessType : change.businessType,
    defaultCurrency: change.defaultCurrency === undefined ? current.row.defaultCurrency : change.defaultCurrency,
    metadata: change.metadata ?? current.row.metadata,
    details: change.details as Prisma.JsonObject,
  };
  await db.write(updateAccountRow(row, current.version, () => resourceMissing(NAME, row.id)));
  const emit = (type: EventType, object: Record<string, unknown>, options: EmitOptions) => emitIn(db, type, object, options);
  const emitOptions = { accountId: current.row.id, apiVersion: options.apiVersion, created: options.now, cause: options.cause };
  const eventIds: string[] = [];
  eventIds.push(...(await emitSetChanges(db, 'account.external_account', renderedExternalAccounts(current.row), renderedExternalAccounts(row), emitOptions)));
  const individual = change.individualChanged === true;
  eventIds.push(...(await emitSetChanges(db, 'person', renderedPersons(current.row, individual), renderedPersons(row, individual), emitOptions)));
  const before = serializeAccount(current.row);
  const after = serializeAccount(row);
  const changed = previousAttributes(before, after);
  if (Object.keys(changed).length > 0) {
    eventIds.push(await emit('account.updated', after, { ...emitOptions, previousAttributes: changed }));
  }
  const names = new Set([...capabilitiesOf(current.row), ...capabilitiesOf(row)].map((c) => c.name));
  for (const name of names) {
    const was = serializeCapability(current.row, name);
    const now = serializeCapability(row, name);
    if (was.status === now.status && was.requested === now.requested) continue;
    eventIds.push(await emit('capability.updated', now, { ...emitOptions, previousAttributes: previousAttributes(was, now) }));
  }
  return { updated: row, row: after, eventIds };
}

/**
 * Applies `params` (the update parameters, already validated) to an account read by
 * lockConnectedAccount (see commitAccountChange). `edit` makes further changes to the new details (the
 * onboarding page's representative).
 */
export async function changeAccount(
  db: AccountDb,
  current: LockedAccount,
  params: Record<string, any>,
  options: AccountChangeOptions,
  edit?: (details: AccountDetails) => AccountDetails,
) {
  const applied = applyDetails(current.row.details as AccountDetails, params, current.row.id, options.now);
  return commitAccountChange(
    db,
    current,
    {
      details: edit ? edit(applied) : applied,
      email: params.email,
      businessType: params.business_type,
      defaultCurrency: currencyOf(params.default_currency),
      metadata: params.metadata === undefined ? undefined : applyMetadata(current.row.metadata as Metadata, params.metadata),
    },
    options,
  );
}

export interface LockedAccount {
  readonly row: AccountRow;
  /** An account link or session exists (see checkHolderMayChange). */
  readonly onboardingStarted: boolean;
  /** The row version read (`xmin`): the change is written over it only. */
  readonly version: string;
}

/** Where an account change is read and written: an operation's deps, or a transaction (`prismaDb`). */
export type AccountDb = Db;

/**
 * A connected account of `parentAccountId` about to change; null when there is none. In a
 * transaction it stays locked for the rest of it; outside one (an operation sent as one
 * statement) the change applies only if nothing changed the row meanwhile.
 */
export async function lockConnectedAccount(db: AccountDb, id: string, parentAccountId: string): Promise<LockedAccount | null> {
  const [found] = await db.sql.query<AccountRow & { session_created_at: number | null; link_created_at: number | null; version: string }>(
    selectForChange(id, parentAccountId, db.sql.inTransaction),
  );
  if (!found) return null;
  const { session_created_at, link_created_at, version, ...row } = found;
  return { row, onboardingStarted: session_created_at !== null || link_created_at !== null, version };
}

/** What a sub-resource's write does to its account: the new details, and its answer from the account as written. */
export interface AccountEdit<T> {
  readonly details: AccountDetails;
  readonly answer: (row: AccountRow) => T;
  readonly individualChanged?: boolean;
}

/**
 * A write to a connected account's sub-resources (capabilities, external accounts, persons): the
 * account named by the path is locked for the operation, `edit` says what changes (it gets a
 * copy of the details to change), and the change is written with its events (commitAccountChange).
 */
export async function editAccount<T>(ctx: RequestContext, edit: (locked: LockedAccount, details: AccountDetails, now: number) => AccountEdit<T>): Promise<T> {
  const { deps, caller } = ctx;
  const id = ctx.pathParams.account;
  if (!hasIdShape('acct', id)) throw resourceMissing(NAME, id);
  const now = unixSeconds(deps.clock);
  // In the operation's transaction: the row stays locked, so concurrent writes to one account apply one after another.
  const locked = await lockConnectedAccount(deps, id, caller.accountId);
  if (!locked) throw resourceMissing(NAME, id);
  const details = structuredClone(locked.row.details as AccountDetails);
  const e = edit(locked, details, now);
  const change = await commitAccountChange(deps, locked, { details: e.details, individualChanged: e.individualChanged }, {
    now,
    apiVersion: caller.defaultApiVersion,
    cause: causeOf(ctx),
  });
  if (change.eventIds.length > 0) await handOffEvents(deps.queues, change.eventIds);
  return e.answer(change.updated);
}

export async function updateAccount(ctx: RequestContext) {
  const { params, deps, caller } = ctx;
  const id = ctx.pathParams.account;
  if (!hasIdShape('acct', id)) throw resourceMissing(NAME, id);
  refuseToken(params, 'account_token');
  const now = unixSeconds(deps.clock);
  // Locked in the operation's transaction (its writes then go as one statement before the commit),
  // so concurrent updates merge instead of overwriting each other.
  const locked = await lockConnectedAccount(deps, id, caller.accountId);
  if (!locked) throw resourceMissing(NAME, id);
  checkHolderFields(params, locked.row, locked.onboardingStarted);
  checkAccountParams(params, locked.row.country ?? 'US');
  const { row, eventIds } = await changeAccount(deps, locked, params, { now, apiVersion: caller.defaultApiVersion, cause: causeOf(ctx) });
  if (eventIds.length > 0) await handOffEvents(deps.queues, eventIds);
  return row;
}

/** `reason` → `requirements.disabled_reason`, before 2026-09-30. */
const REJECTIONS: Record<string, string> = {
  fraud: 'rejected.fraud',
  other: 'rejected.other',
  terms_of_service: 'rejected.terms_of_service',
};
/** From 2026-09-30 (endive) `fraud` is four specific reasons, and the reason says the platform rejected it. */
const ENDIVE_REJECTIONS: Record<string, string> = {
  credit: 'rejected.platform_other',
  fraud_no_intent_to_fulfill: 'rejected.platform_fraud',
  fraud_other: 'rejected.platform_fraud',
  fraud_payment_method_casher: 'rejected.platform_fraud',
  fraud_payment_method_tester: 'rejected.platform_fraud',
  other: 'rejected.platform_other',
  terms_of_service: 'rejected.platform_terms_of_service',
};
const ENDIVE = '2026-09-30';

/** The disabled reason a rejection for `reason` gives at `apiVersion`, or a 400 naming the reasons that version takes. */
function rejection(reason: string, apiVersion: string): string {
  const allowed = apiVersion.slice(0, 10) >= ENDIVE ? ENDIVE_REJECTIONS : REJECTIONS;
  const disabledReason = allowed[reason];
  if (disabledReason === undefined) {
    throw invalidRequest(`Invalid reason: must be one of ${Object.keys(allowed).join(', ')} (at API version ${apiVersion}).`, 'parameter_invalid', 'reason');
  }
  return disabledReason;
}

/**
 * POST /v1/accounts/{account}/reject: only accounts whose platform bears their losses (Custom and
 * Express). Charges and payouts stop, capabilities become inactive, and `requirements.disabled_reason`
 * says why, in the spelling of the request's API version.
 */
export async function rejectAccount(ctx: RequestContext) {
  const disabledReason = rejection(ctx.params.reason, ctx.apiVersion);
  return editAccount(ctx, (_locked, details, now) => {
    if (details.controller?.losses?.payments !== 'application') {
      throw invalidRequest(
        'Only accounts where your platform is liable for negative account balances (controller[losses][payments] is `application`, ' +
          'which includes Custom and Express accounts) can be rejected.',
      );
    }
    details.rejected = { reason: ctx.params.reason, disabled_reason: disabledReason, at: now };
    return { details, answer: serializeAccount };
  });
}

/** The platform's Connect application, as an `application` object: its id follows the platform's (`ca_` for `acct_`). */
const applicationOf = (platformId: string) => ({ id: `ca_${platformId.slice('acct_'.length)}`, object: 'application' as const, name: null });

export async function deleteAccount(ctx: RequestContext) {
  const id = ctx.pathParams.account;
  if (!hasIdShape('acct', id)) throw resourceMissing(NAME, id);
  const platform = ctx.caller.accountId;
  const eventId = await ctx.deps.prisma.$transaction(async (tx) => {
    // Everything the account owns (keys, endpoints, events) goes with it by cascade.
    const deleted = await tx.account.deleteMany({ where: { id, parentAccountId: platform } });
    if (deleted.count === 0) throw resourceMissing(NAME, id);
    // The platform's Connect endpoints hear it, as a platform does whose account disconnects its
    // application: the platform's event (the account's own are gone), naming the account.
    return emit(tx, 'account.application.deauthorized', applicationOf(platform), { ...requestEventOptions(ctx, unixSeconds(ctx.deps.clock)), connectedAccountId: id });
  });
  // This process forgets it before answering; the others hear the trigger's NOTIFY on commit.
  ctx.deps.notifications.announce(ACCOUNT_REVOKED_CHANNEL, id);
  await handOffEvents(ctx.deps.queues, [eventId]);
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
