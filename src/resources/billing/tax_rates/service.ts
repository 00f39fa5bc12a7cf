import type { Prisma } from '../../../generated/prisma/client';
import { unixSeconds } from '../../../lib/clock';
import { hasIdShape, newId } from '../../../lib/ids';
import { resourceMissing } from '../../../kernel/errors';
import { paginate, rangeWhere } from '../../../kernel/list';
import { applyMetadata, type Metadata, type MetadataParam } from '../../../kernel/metadata';
import type { RequestContext } from '../../../kernel/route';
import { emit, previousAttributes, requestEventOptions } from '../../../events/emit';
import { handOffEvents } from '../../../events/jobs';
import { serializeTaxRate, type TaxRateRow } from './serializer';

const NAME = 'tax rate';

async function findTaxRate(ctx: RequestContext, id: string, tx: Prisma.TransactionClient = ctx.deps.prisma): Promise<TaxRateRow> {
  if (!hasIdShape('txr', id)) throw resourceMissing(NAME, id);
  const row = await tx.taxRate.findUnique({ where: { id, accountId: ctx.caller.accountId } });
  if (!row) throw resourceMissing(NAME, id);
  return row;
}

/** Country codes are answered upper case, as the public API does. */
const countryOf = (value: string | undefined) => (value === undefined ? undefined : value.toUpperCase());

export async function createTaxRate(ctx: RequestContext) {
  const { params, deps } = ctx;
  const now = unixSeconds(deps.clock);
  const { row, eventId } = await deps.prisma.$transaction(async (tx) => {
    const row = await tx.taxRate.create({
      data: {
        id: newId('txr'),
        accountId: ctx.caller.accountId,
        created: now,
        active: params.active ?? true,
        displayName: params.display_name,
        description: params.description ?? null,
        percentage: params.percentage,
        inclusive: params.inclusive,
        country: countryOf(params.country) ?? null,
        state: params.state ?? null,
        jurisdiction: params.jurisdiction ?? null,
        taxType: params.tax_type ?? null,
        metadata: applyMetadata({}, params.metadata as MetadataParam | undefined),
      },
    });
    return { row, eventId: await emit(tx, 'tax_rate.created', serializeTaxRate(row), requestEventOptions(ctx, now)) };
  });
  await handOffEvents(deps.queues, [eventId]);
  return serializeTaxRate(row);
}

export async function retrieveTaxRate(ctx: RequestContext) {
  return serializeTaxRate(await findTaxRate(ctx, ctx.pathParams.tax_rate));
}

export async function updateTaxRate(ctx: RequestContext) {
  const { params, deps } = ctx;
  const id = ctx.pathParams.tax_rate;
  if (!hasIdShape('txr', id)) throw resourceMissing(NAME, id);
  const now = unixSeconds(deps.clock);
  const result = await deps.prisma.$transaction(async (tx) => {
    // Lock the row so concurrent metadata edits don't overwrite each other.
    const locked = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM tax_rates WHERE id = ${id} AND account_id = ${ctx.caller.accountId} FOR UPDATE`;
    if (locked.length === 0) throw resourceMissing(NAME, id);
    const current = await findTaxRate(ctx, id, tx);
    const given: Partial<TaxRateRow> = {
      active: params.active,
      country: countryOf(params.country),
      description: params.description,
      displayName: params.display_name,
      jurisdiction: params.jurisdiction,
      metadata: params.metadata === undefined ? undefined : applyMetadata(current.metadata as Metadata, params.metadata),
      state: params.state,
      taxType: params.tax_type,
    };
    const fields = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) as Partial<TaxRateRow>;
    const before = serializeTaxRate(current);
    const changed = previousAttributes(before, serializeTaxRate({ ...current, ...fields }));
    if (Object.keys(changed).length === 0) return { taxRate: before, eventId: undefined };
    const taxRate = serializeTaxRate(await tx.taxRate.update({ where: { id }, data: fields as Prisma.TaxRateUpdateInput }));
    const eventId = await emit(tx, 'tax_rate.updated', taxRate, { ...requestEventOptions(ctx, now), previousAttributes: changed });
    return { taxRate, eventId };
  });
  if (result.eventId) await handOffEvents(deps.queues, [result.eventId]);
  return result.taxRate;
}

export async function listTaxRates(ctx: RequestContext) {
  const { params } = ctx;
  return paginate<TaxRateRow & { seq: bigint }>({
    params,
    url: '/v1/tax_rates',
    where: { accountId: ctx.caller.accountId, active: params.active, inclusive: params.inclusive, created: rangeWhere(params.created) },
    model: ctx.deps.prisma.taxRate as any,
    objectName: NAME,
    serialize: serializeTaxRate,
  });
}
