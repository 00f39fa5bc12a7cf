import { ref, type ExpandableFields } from '../../../kernel/expand';
import type { AccountDetails } from '../accounts/details';

// External accounts are kept in the account's `details.external_accounts` as their public
// objects (bank accounts and debit cards), each with its list position `seq`.

export const BANK_ACCOUNT_OBJECT = 'bank_account';
export const CARD_OBJECT = 'card';

export interface ExternalAccountRecord extends Record<string, any> {
  id: string;
  object: 'bank_account' | 'card';
  currency: string;
  default_for_currency: boolean;
  seq?: number;
}

/**
 * Newest first. Records from before `seq` existed keep their stored order (newest first) behind
 * every later one.
 */
export function externalAccountsOf(details: AccountDetails): ExternalAccountRecord[] {
  const records = (details.external_accounts ?? []) as ExternalAccountRecord[];
  return records
    .map((record, index) => ({ record, order: record.seq ?? -index }))
    .sort((a, b) => b.order - a.order)
    .map((x) => x.record);
}

/** The public BankAccount or Card object: the record without its list position. */
export function serializeExternalAccount(record: ExternalAccountRecord) {
  const { seq: _seq, ...object } = record;
  if (object.object === CARD_OBJECT) return { ...object, regulated_status: object.regulated_status ?? null };
  return object;
}

export const serializeDeletedExternalAccount = (record: ExternalAccountRecord) => ({
  id: record.id,
  object: record.object,
  currency: record.currency,
  deleted: true as const,
});

export const expandable: ExpandableFields = { account: ref('account'), customer: ref('customer') };
