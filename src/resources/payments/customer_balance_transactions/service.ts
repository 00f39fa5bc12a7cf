import { Prisma } from '../../../generated/prisma/client';
import { unixSeconds } from '../../../lib/clock';
import { currencyOf } from '../../../lib/currencies';
import { hasIdShape, newId } from '../../../lib/ids';
import { TxSql } from '../../../lib/sql';
import { invalidRequest, resourceMissing } from '../../../kernel/errors';
import { paginate, rangeWhere } from '../../../kernel/list';
import { applyMetadata, type Metadata, type MetadataParam } from '../../../kernel/metadata';
import type { RequestContext } from '../../../kernel/route';
import { prismaDb, type Db } from '../../../kernel/writes';
import { requestEventOptions, type EmitOptions, type Tx } from '../../../events/emit';
import { handOffEvents } from '../../../events/jobs';
import { moveCustomerBalance } from '../customers/service';
import { lockLiveCustomer } from '../payment_methods/service';
import { serializeBalanceTransaction, type BalanceTransactionRow } from './serializer';

// A customer's credit balance (`customer.balance`, negative: a credit) and the transactions that
// move it: `adjustment`s made through the API, and `applied_to_invoice` when an invoice takes it
// at finalization (billing calls `applyCustomerBalance`). A change of balance is the customer's
// `customer.updated`; the public API sends no event of the transaction itself.

const NAME = 'customer balance transaction';

/** The caller's live customer of the path, locked for the rest of the transaction. */
async function lockPathCustomer(tx: Tx, ctx: RequestContext): Promise<string> {
  const id = ctx.pathParams.customer;
  if (!hasIdShape('cus', id) || !(await lockLiveCustomer(new TxSql(tx), ctx.caller.accountId, id))) throw resourceMissing('customer', id, 'customer');
  return id;
}

async function pathCustomer(ctx: RequestContext): Promise<string> {
  const id = ctx.pathParams.customer;
  const found = hasIdShape('cus', id) ? await ctx.deps.prisma.customer.findFirst({ where: { id, accountId: ctx.caller.accountId, deleted: false }, select: { id: true } }) : null;
  if (!found) throw resourceMissing('customer', id, 'customer');
  return id;
}

/** A balance in one currency: a customer's balance is in one currency only here. */
const otherCurrency = (held: string, given: string, param?: string) =>
  invalidRequest(`Can't combine currencies on a single customer. This customer has a balance in ${held}; this transaction is in ${given}.`, 'parameter_invalid', param);

/** Writes a transaction moving the customer's balance (locked by the caller) and the balance itself. */
async function recordTransaction(
  tx: Tx,
  db: Pick<Db, 'write'>,
  t: { accountId: string; customerId: string; type: string; amount: bigint; currency: string; description: string | null; invoiceId: string | null; metadata: Metadata },
  options: EmitOptions,
): Promise<{ row: BalanceTransactionRow; eventId: string }> {
  const moved = await moveCustomerBalance(tx, db, t.customerId, t.amount, t.currency, options);
  const row: BalanceTransactionRow = {
    id: newId('cbtxn'),
    customerId: t.customerId,
    created: options.created,
    type: t.type,
    amount: t.amount,
    currency: t.currency,
    endingBalance: moved.after,
    description: t.description,
    invoiceId: t.invoiceId,
    metadata: t.metadata as Prisma.JsonValue,
  };
  await tx.customerBalanceTransaction.create({ data: { ...row, accountId: t.accountId, metadata: t.metadata as Prisma.InputJsonValue }, select: { id: true } });
  return { row, eventId: moved.eventId };
}

export async function createBalanceTransaction(ctx: RequestContext) {
  const { params, deps } = ctx;
  const currency = currencyOf(params.currency);
  const { row, eventId } = await deps.prisma.$transaction(async (tx) => {
    const customerId = await lockPathCustomer(tx, ctx);
    const customer = await tx.customer.findUniqueOrThrow({ where: { id: customerId }, select: { currency: true } });
    if (customer.currency !== null && customer.currency !== currency) throw otherCurrency(customer.currency, currency, 'currency');
    return recordTransaction(
      tx,
      prismaDb(tx),
      {
        accountId: ctx.caller.accountId,
        customerId,
        type: 'adjustment',
        amount: BigInt(params.amount),
        currency,
        description: params.description || null,
        invoiceId: null,
        metadata: applyMetadata({}, params.metadata as MetadataParam | undefined),
      },
      requestEventOptions(ctx, unixSeconds(deps.clock)),
    );
  });
  await handOffEvents(deps.queues, [eventId]);
  return serializeBalanceTransaction(row);
}

const strip = ({ seq: _s, accountId: _a, ...row }: BalanceTransactionRow & { seq: bigint; accountId: string }): BalanceTransactionRow => row;

async function findTransaction(ctx: RequestContext, customerId: string, tx: Tx = ctx.deps.prisma): Promise<BalanceTransactionRow> {
  const id = ctx.pathParams.transaction;
  const row = hasIdShape('cbtxn', id) ? await tx.customerBalanceTransaction.findFirst({ where: { id, customerId, accountId: ctx.caller.accountId } }) : null;
  if (!row) throw resourceMissing(NAME, id);
  return strip(row);
}

export async function retrieveBalanceTransaction(ctx: RequestContext) {
  return serializeBalanceTransaction(await findTransaction(ctx, await pathCustomer(ctx)));
}

/** Only `description` and `metadata` change; the amount and what it applied to are fixed. No event: the balance stays. */
export async function updateBalanceTransaction(ctx: RequestContext) {
  const { params, deps } = ctx;
  return deps.prisma.$transaction(async (tx) => {
    const customerId = await pathCustomer(ctx);
    const id = ctx.pathParams.transaction;
    const locked = hasIdShape('cbtxn', id) ? await tx.$queryRaw<{ id: string }[]>`SELECT id FROM customer_balance_transactions WHERE id = ${id} AND customer_id = ${customerId} FOR UPDATE` : [];
    if (locked.length === 0) throw resourceMissing(NAME, id);
    const row = await findTransaction(ctx, customerId, tx);
    const next: BalanceTransactionRow = {
      ...row,
      description: params.description === undefined ? row.description : params.description || null,
      metadata: applyMetadata(row.metadata as Metadata, params.metadata as MetadataParam | undefined),
    };
    await tx.customerBalanceTransaction.update({ where: { id }, data: { description: next.description, metadata: next.metadata as Prisma.InputJsonValue }, select: { id: true } });
    return serializeBalanceTransaction(next);
  });
}

export async function listBalanceTransactions(ctx: RequestContext) {
  const { params } = ctx;
  const customerId = await pathCustomer(ctx);
  return paginate<BalanceTransactionRow & { seq: bigint; accountId: string }>({
    params,
    url: `/v1/customers/${customerId}/balance_transactions`,
    where: { accountId: ctx.caller.accountId, customerId, created: rangeWhere(params.created), invoiceId: params.invoice },
    model: ctx.deps.prisma.customerBalanceTransaction as any,
    objectName: NAME,
    serialize: (row) => serializeBalanceTransaction(strip(row)),
  });
}

/** What an invoice's finalization did with its customer's balance. */
export interface AppliedBalance {
  /** The customer's balance before (0 when it is in another currency). */
  readonly startingBalance: bigint;
  /** After: the credit left, or the invoice's own credit (a negative total) added to it; never above 0. */
  readonly endingBalance: bigint;
  /** What the invoice asks for once the balance is applied. */
  readonly amountDue: bigint;
}

/**
 * Applies customer `customerId`'s balance to an invoice of `total` in `currency` being finalized
 * (the caller holds the customer's lock), as the public API does: a credit (negative balance)
 * reduces what is due, an amount owed is added to it, and a negative total becomes credit; the
 * change is an `applied_to_invoice` transaction and the customer's `customer.updated` (through
 * `db`). A balance in another currency is left as it is.
 */
export async function applyCustomerBalance(
  tx: Tx,
  db: Pick<Db, 'write'>,
  invoice: { accountId: string; customerId: string; invoiceId: string; currency: string; total: bigint },
  /** The customer's balance as read in this transaction, under its lock. */
  customer: { balance: bigint; currency: string | null },
  options: EmitOptions,
): Promise<AppliedBalance> {
  const same = customer.currency === null || customer.currency === invoice.currency;
  const starting = same ? customer.balance : 0n;
  const combined = invoice.total + starting;
  const amountDue = combined > 0n ? combined : 0n;
  const ending = same && combined < 0n ? combined : 0n;
  if (same && ending !== starting) {
    await recordTransaction(
      tx,
      db,
      { accountId: invoice.accountId, customerId: invoice.customerId, type: 'applied_to_invoice', amount: ending - starting, currency: invoice.currency, description: null, invoiceId: invoice.invoiceId, metadata: {} },
      options,
    );
  }
  return { startingBalance: starting, endingBalance: ending, amountDue };
}
