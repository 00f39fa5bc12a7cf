import type { RequestContext } from '../../../kernel/route';
import { invalidRequest, parameterUnknown, resourceMissing } from '../../../kernel/errors';
import { paginateItems } from '../../../kernel/list';
import { applyMetadata, type Metadata } from '../../../kernel/metadata';
import { hasIdShape } from '../../../lib/ids';
import { checkHolderMayChange, editAccount, externalAccountFrom, findReadable, nextSeq, type LockedAccount } from '../accounts/service';
import type { AccountDetails, AccountRow } from '../accounts/details';
import {
  BANK_ACCOUNT_OBJECT,
  externalAccountsOf,
  serializeDeletedExternalAccount,
  serializeExternalAccount,
  type ExternalAccountRecord,
} from './serializer';

// External accounts of a connected account: the bank accounts and debit cards it is paid out
// to, kept in the account's details. Each currency has one default; writes lock the account and
// report account.external_account.created / updated / deleted.

const NAME = 'external account';
const HOLDER_WHAT = 'the external accounts of this account';

/** The members an update may change, per kind of external account. */
const UPDATABLE: Record<'bank_account' | 'card', readonly string[]> = {
  bank_account: ['account_holder_name', 'account_holder_type', 'account_type', 'documents'],
  card: ['address_city', 'address_country', 'address_line1', 'address_line2', 'address_state', 'address_zip', 'exp_month', 'exp_year', 'name'],
};

function findExternalAccount(details: AccountDetails, id: string): ExternalAccountRecord {
  const record = hasIdShape('ba', id) || hasIdShape('card', id) ? externalAccountsOf(details).find((e) => e.id === id) : undefined;
  if (!record) throw resourceMissing(NAME, id);
  return record;
}

/** The external account as answered, from the account as written. */
const answerFor = (id: string) => (row: AccountRow) => serializeExternalAccount(findExternalAccount(row.details as AccountDetails, id));

/** Makes `id` the default of its currency, and every other external account of that currency not. */
function makeDefault(records: ExternalAccountRecord[], id: string): ExternalAccountRecord[] {
  const currency = records.find((r) => r.id === id)!.currency;
  return records.map((r) => (r.currency === currency ? { ...r, default_for_currency: r.id === id } : r));
}

/** POST /v1/accounts/{account}/external_accounts: a test token, or bank account (or test card) details. */
export async function createExternalAccount(ctx: RequestContext) {
  const { params } = ctx;
  return editAccount(ctx, (locked, details) => {
    checkHolderMayChange(locked.row, locked.onboardingStarted, HOLDER_WHAT, 'external_account');
    const made = externalAccountFrom(locked.row.id, params.external_account, 'external_account') as ExternalAccountRecord;
    const record: ExternalAccountRecord = { ...made, metadata: applyMetadata({}, params.metadata), seq: nextSeq(details) };
    const existing = (details.external_accounts ?? []) as ExternalAccountRecord[];
    // The first of its currency is its default; a later one only when it asks to be.
    const first = !existing.some((e) => e.currency === record.currency);
    record.default_for_currency = false;
    details.external_accounts = [record, ...existing];
    if (first || params.default_for_currency === true) details.external_accounts = makeDefault(details.external_accounts as ExternalAccountRecord[], record.id);
    return { details, answer: answerFor(record.id) };
  });
}

/** GET /v1/accounts/{account}/external_accounts: newest first, optionally only bank accounts or cards (`object`). */
export async function listExternalAccounts(ctx: RequestContext) {
  const row = await findReadable(ctx, ctx.pathParams.account);
  const items = externalAccountsOf(row.details as AccountDetails).filter((e) => ctx.params.object === undefined || e.object === ctx.params.object);
  return paginateItems({
    params: ctx.params,
    url: `/v1/accounts/${row.id}/external_accounts`,
    items,
    objectName: NAME,
    serialize: serializeExternalAccount,
  });
}

/** GET /v1/accounts/{account}/external_accounts/{external_account} */
export async function retrieveExternalAccount(ctx: RequestContext) {
  const row = await findReadable(ctx, ctx.pathParams.account);
  return serializeExternalAccount(findExternalAccount(row.details as AccountDetails, ctx.pathParams.external_account));
}

/**
 * Bank accounts can be updated only where the platform collects requirements (as the public API
 * says); cards wherever the holder's details may change.
 */
function checkUpdate(locked: LockedAccount, record: ExternalAccountRecord, params: Record<string, any>): void {
  const other = record.object === BANK_ACCOUNT_OBJECT ? UPDATABLE.card : UPDATABLE.bank_account;
  const refused = other.find((p) => params[p] !== undefined);
  if (refused !== undefined) throw parameterUnknown(refused);
  checkHolderMayChange(locked.row, locked.onboardingStarted, HOLDER_WHAT);
  if (record.object === BANK_ACCOUNT_OBJECT && (locked.row.details as AccountDetails).controller?.requirement_collection !== 'application') {
    throw invalidRequest(
      'You can only update bank accounts of accounts where the platform collects requirements ' +
        '(controller[requirement_collection] is `application`, which includes Custom accounts).',
    );
  }
  if (params.default_for_currency === false && record.default_for_currency) {
    throw invalidRequest(
      `${record.id} is the default external account for ${record.currency}. Make another external account the default ` +
        '(default_for_currency=true) instead.',
      undefined,
      'default_for_currency',
    );
  }
}

/** POST /v1/accounts/{account}/external_accounts/{external_account}: holder fields, metadata, default_for_currency. */
export async function updateExternalAccount(ctx: RequestContext) {
  const { params } = ctx;
  const id = ctx.pathParams.external_account;
  return editAccount(ctx, (locked, details) => {
    const record = findExternalAccount(details, id);
    checkUpdate(locked, record, params);
    const next: Record<string, any> = { ...record };
    for (const member of UPDATABLE[record.object]) {
      if (params[member] === undefined) continue;
      // An empty value unsets a member (account_holder_type=).
      next[member] = params[member] === '' ? null : params[member];
    }
    if (params.metadata !== undefined) next.metadata = applyMetadata((record.metadata ?? {}) as Metadata, params.metadata);
    let records = (details.external_accounts as ExternalAccountRecord[]).map((r) => (r.id === id ? (next as ExternalAccountRecord) : r));
    if (params.default_for_currency === true) records = makeDefault(records, id);
    details.external_accounts = records;
    return { details, answer: answerFor(id) };
  });
}

/** DELETE /v1/accounts/{account}/external_accounts/{external_account}: any but the default of its currency. */
export async function deleteExternalAccount(ctx: RequestContext) {
  const id = ctx.pathParams.external_account;
  return editAccount(ctx, (locked, details) => {
    const record = findExternalAccount(details, id);
    checkHolderMayChange(locked.row, locked.onboardingStarted, HOLDER_WHAT);
    if (record.default_for_currency) {
      throw invalidRequest(
        `You cannot delete the default external account for ${record.currency}. Make another external account the default ` +
          'using the `default_for_currency` parameter, and then delete this one.',
      );
    }
    details.external_accounts = (details.external_accounts as ExternalAccountRecord[]).filter((r) => r.id !== id);
    return { details, answer: () => serializeDeletedExternalAccount(record) };
  });
}
