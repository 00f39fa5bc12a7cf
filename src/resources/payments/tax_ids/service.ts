import type { Prisma } from '../../../generated/prisma/client';
import { unixSeconds } from '../../../lib/clock';
import { hasIdShape, newId } from '../../../lib/ids';
import { TxSql } from '../../../lib/sql';
import { resourceMissing } from '../../../kernel/errors';
import { paginate } from '../../../kernel/list';
import type { ExpandableField } from '../../../kernel/expand';
import type { RequestContext } from '../../../kernel/route';
import { emit, requestEventOptions, type Tx } from '../../../events/emit';
import { handOffEvents } from '../../../events/jobs';
import { lockLiveCustomer } from '../payment_methods/service';
import { checkTaxIdValue, taxIdCountry, testVerification } from './formats';
import { serializeDeletedTaxId, serializeTaxId, type TaxIdRow, type TaxIdVerification } from './serializer';

// A customer's tax ids (`/v1/customers/{customer}/tax_ids`): made, listed, read and deleted, with
// `customer.tax_id.created` / `.deleted`. A type that is verified starts `pending`; what test mode's
// verification finds follows in the same transaction as `customer.tax_id.updated`, as the public
// API sends it once its check is done.

const NAME = 'tax id';

/** The caller's live customer `id` (the path's), locked for the rest of the transaction. */
async function lockPathCustomer(tx: Tx, ctx: RequestContext): Promise<string> {
  const id = ctx.pathParams.customer;
  if (!hasIdShape('cus', id) || !(await lockLiveCustomer(new TxSql(tx), ctx.caller.accountId, id))) throw resourceMissing('customer', id, 'customer');
  return id;
}

/** The caller's live customer of the path, unlocked (reads). */
async function pathCustomer(ctx: RequestContext): Promise<string> {
  const id = ctx.pathParams.customer;
  const found = hasIdShape('cus', id) ? await ctx.deps.prisma.customer.findFirst({ where: { id, accountId: ctx.caller.accountId, deleted: false }, select: { id: true } }) : null;
  if (!found) throw resourceMissing('customer', id, 'customer');
  return id;
}

/**
 * Adds tax ids to customer `customerId` (locked by the caller) in `tx`: each checked, then written,
 * with its events. `param`: how errors name the entry (`value`, `tax_id_data[0][value]`).
 */
export async function addTaxIds(tx: Tx, ctx: RequestContext, customerId: string, given: readonly { type: string; value: string }[], param: (i: number) => string): Promise<{ rows: TaxIdRow[]; eventIds: string[] }> {
  given.forEach((g, i) => checkTaxIdValue(g.type, g.value, param(i)));
  const now = unixSeconds(ctx.deps.clock);
  const options = requestEventOptions(ctx, now);
  const rows: TaxIdRow[] = [];
  const eventIds: string[] = [];
  for (const g of given) {
    const found = testVerification(g.type, g.value);
    const row: TaxIdRow = {
      id: newId('txi'),
      customerId,
      created: now,
      type: g.type,
      value: g.value,
      country: taxIdCountry(g.type, g.value),
      verification: found as unknown as Prisma.JsonValue,
    };
    await tx.customerTaxId.create({ data: { ...row, accountId: ctx.caller.accountId, verification: found as unknown as Prisma.InputJsonValue }, select: { id: true } });
    // A checked type is pending when it is made; the check's result is the update that follows.
    const checked = found.status === 'verified' || found.status === 'unverified';
    const first: TaxIdVerification = checked ? { ...found, status: 'pending' } : found;
    eventIds.push(await emit(tx, 'customer.tax_id.created', serializeTaxId(row, first), options));
    if (checked) eventIds.push(await emit(tx, 'customer.tax_id.updated', serializeTaxId(row), { ...options, previousAttributes: { verification: { status: 'pending' } } }));
    rows.push(row);
  }
  return { rows, eventIds };
}

export async function createTaxId(ctx: RequestContext) {
  const { params, deps } = ctx;
  const { row, eventIds } = await deps.prisma.$transaction(async (tx) => {
    const customerId = await lockPathCustomer(tx, ctx);
    const { rows, eventIds } = await addTaxIds(tx, ctx, customerId, [{ type: params.type, value: params.value }], () => 'value');
    return { row: rows[0], eventIds };
  });
  await handOffEvents(deps.queues, eventIds);
  // Answered as made: a check's result comes after (its `customer.tax_id.updated`).
  const verification = row.verification as unknown as TaxIdVerification;
  return serializeTaxId(row, verification.status === 'verified' || verification.status === 'unverified' ? { ...verification, status: 'pending' } : verification);
}

const strip = ({ seq: _s, accountId: _a, ...row }: TaxIdRow & { seq: bigint; accountId: string }): TaxIdRow => row;

async function findTaxId(ctx: RequestContext, customerId: string, tx: Tx = ctx.deps.prisma): Promise<TaxIdRow> {
  const id = ctx.pathParams.tax_id;
  const row = hasIdShape('txi', id) ? await tx.customerTaxId.findFirst({ where: { id, customerId, accountId: ctx.caller.accountId } }) : null;
  if (!row) throw resourceMissing(NAME, id);
  return strip(row);
}

export async function retrieveTaxId(ctx: RequestContext) {
  return serializeTaxId(await findTaxId(ctx, await pathCustomer(ctx)));
}

export async function deleteTaxId(ctx: RequestContext) {
  const { deps } = ctx;
  const { id, eventId } = await deps.prisma.$transaction(async (tx) => {
    const customerId = await lockPathCustomer(tx, ctx);
    const row = await findTaxId(ctx, customerId, tx);
    await tx.customerTaxId.delete({ where: { id: row.id }, select: { id: true } });
    return { id: row.id, eventId: await emit(tx, 'customer.tax_id.deleted', serializeTaxId(row), requestEventOptions(ctx, unixSeconds(deps.clock))) };
  });
  await handOffEvents(deps.queues, [eventId]);
  return serializeDeletedTaxId(id);
}

export async function listTaxIds(ctx: RequestContext) {
  const customerId = await pathCustomer(ctx);
  return paginate<TaxIdRow & { seq: bigint; accountId: string }>({
    params: ctx.params,
    url: `/v1/customers/${customerId}/tax_ids`,
    where: { accountId: ctx.caller.accountId, customerId },
    model: ctx.deps.prisma.customerTaxId as any,
    objectName: NAME,
    serialize: (row) => serializeTaxId(strip(row)),
  });
}

/**
 * A customer's tax ids as the customer object's `tax_ids` list shows them (its first page: the
 * public API's `expand[]=tax_ids`), newest first, for the customer's expansion to hook in.
 */
export async function customerTaxIdList(tx: Tx, accountId: string, customerId: string, limit = 10) {
  const [rows, total] = await Promise.all([
    tx.customerTaxId.findMany({ where: { accountId, customerId }, orderBy: { seq: 'desc' }, take: limit }),
    tx.customerTaxId.count({ where: { accountId, customerId } }),
  ]);
  return { object: 'list' as const, data: rows.map((r) => serializeTaxId(strip(r))), has_more: total > limit, total_count: total, url: `/v1/customers/${customerId}/tax_ids` };
}

/** A customer's `tax_ids` (`expand[]=tax_ids`): its first ten, newest first. */
export const customerTaxIdsField: ExpandableField = {
  type: 'tax_id',
  list: true,
  expand: async (_value, customer, ctx) => customerTaxIdList(ctx.deps.prisma, ctx.caller.accountId, String(customer.id)),
};
