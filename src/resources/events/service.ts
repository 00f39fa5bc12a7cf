import { Prisma } from '../../generated/prisma/client';
import { unixSeconds } from '../../lib/clock';
import { hasIdShape } from '../../lib/ids';
import { parametersExclusive, resourceMissing } from '../../kernel/errors';
import { paginate, rangeWhere } from '../../kernel/list';
import type { RequestContext } from '../../kernel/route';
import type { EventRow } from '../../events/render';
import { EVENT_TYPES } from '../../events/types';
import { serializeEvent } from './serializer';

const NAME = 'event';

/** Events of the acting account still inside the retention window (the sweep may lag). */
function visible(ctx: RequestContext): Prisma.EventWhereInput {
  const oldest = unixSeconds(ctx.deps.clock) - ctx.deps.config.eventRetentionDays * 86400;
  return { accountId: ctx.caller.accountId, created: { gte: oldest } };
}

const isConnected = (ctx: RequestContext): boolean => ctx.caller.accountId !== ctx.caller.platformAccountId;

/** `customer.*` matches every known type of that group; the wildcard is expanded over the type list. */
function expandType(type: string): string[] {
  if (!type.includes('*')) return [type];
  const pattern = new RegExp(`^${type.split('*').map(escapeRegExp).join('.*')}$`);
  return EVENT_TYPES.filter((t) => pattern.test(t));
}

const typeWhere = (type: string): Prisma.EventWhereInput => ({ type: { in: expandType(type) } });

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export async function listEvents(ctx: RequestContext) {
  const { params } = ctx;
  if (params.type !== undefined && params.types !== undefined) throw parametersExclusive('type', 'types');
  const where: Prisma.EventWhereInput = { ...visible(ctx) };
  const created = rangeWhere(params.created);
  if (created !== undefined) where.AND = [{ created }];
  if (params.type !== undefined) Object.assign(where, typeWhere(params.type));
  if (params.types !== undefined) where.type = { in: [...new Set((params.types as string[]).flatMap(expandType))] };
  if (params.delivery_success !== undefined) {
    const unfinished = { status: { in: ['pending', 'failed'] } };
    where.deliveries = params.delivery_success ? { none: unfinished } : { some: unfinished };
  }
  const connected = isConnected(ctx);
  return paginate<EventRow & { seq: bigint }>({
    params,
    url: '/v1/events',
    where: where as Record<string, unknown>,
    model: ctx.deps.prisma.event as any,
    objectName: NAME,
    serialize: (row) => serializeEvent(row, connected),
  });
}

export async function retrieveEvent(ctx: RequestContext) {
  const id = ctx.pathParams.id;
  if (!hasIdShape('evt', id)) throw resourceMissing(NAME, id);
  const row = await ctx.deps.prisma.event.findFirst({ where: { id, ...visible(ctx) } });
  if (!row) throw resourceMissing(NAME, id);
  return serializeEvent(row, isConnected(ctx));
}
