import type { CustomerBalanceTransaction } from '../../../generated/prisma/client';
import { ref, type ExpandableFields } from '../../../kernel/expand';
import type { Metadata } from '../../../kernel/metadata';

export const BALANCE_TRANSACTION_OBJECT = 'customer_balance_transaction';

export type BalanceTransactionRow = Omit<CustomerBalanceTransaction, 'seq' | 'accountId'>;

export function serializeBalanceTransaction(row: BalanceTransactionRow) {
  return {
    id: row.id,
    object: BALANCE_TRANSACTION_OBJECT,
    amount: Number(row.amount),
    checkout_session: null,
    created: row.created,
    credit_note: null,
    currency: row.currency,
    customer: row.customerId as string | Record<string, unknown>,
    customer_account: null,
    description: row.description,
    ending_balance: Number(row.endingBalance),
    invoice: row.invoiceId as string | Record<string, unknown> | null,
    livemode: false,
    metadata: row.metadata as Metadata,
    type: row.type,
  };
}

export const expandable: ExpandableFields = { customer: ref('customer'), invoice: ref('invoice') };
