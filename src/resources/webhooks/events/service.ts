import { unixSeconds } from '../../../lib/clock';
import { hasIdShape } from '../../../lib/ids';
import { parametersExclusive, resourceMissing } from '../../../kernel/errors';
import { paginateSql, rangeConditions } from '../../../kernel/list';
import type { RequestContext } from '../../../kernel/route';
import type { EventRow } from '../../../events/render';
import { EVENT_TYPES } from '../../../events/types';
import { eventRows, selectVisible } from './queries';
import { serializeEvent } from './serializer';

const NAME = 'event';

/** The oldest creation time still inside the retention window (the sweep may lag). */
const oldestVisible = (ctx: RequestContext): number => unixSeconds(ctx.deps.clock) - ctx.deps.config.eventRetentionDays * 86400;

const isConnected = (ctx: RequestContext): boolean => ctx.caller.accountId !== ctx.caller.platformAccountId;

/** `customer.*` matches every known type of that group; the wildcard is expanded over the type list. */
function expandType(type: string): string[] {
  if (!type.includes('*')) return [type];
  const pattern = new RegExp(`^${type.split('*').map(escapeRegExp).join('.*')}$`);
  return EVENT_TYPES.filter((t) => pattern.test(t));
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export async function listEvents(ctx: RequestContext) {
  const { params } = ctx;
  if (params.type !== undefined && params.types !== undefined) throw parametersExclusive('type', 'types');
  const types =
    params.type !== undefined ? expandType(params.type) : params.types !== undefined ? [...new Set((params.types as string[]).flatMap(expandType))] : undefined;
  const connected = isConnected(ctx);
  return paginateSql<EventRow & { seq: bigint }>({
    params,
    url: '/v1/events',
    rows: eventRows({
      accountId: ctx.caller.accountId,
      oldest: oldestVisible(ctx),
      created: rangeConditions('created', params.created),
      types,
      deliverySuccess: params.delivery_success,
    }),
    db: ctx.deps.sql,
    objectName: NAME,
    serialize: (row) => serializeEvent(row, connected, ctx.deps.versions),
  });
}

export async function retrieveEvent(ctx: RequestContext) {
  const id = ctx.pathParams.id;
  if (!hasIdShape('evt', id)) throw resourceMissing(NAME, id);
  const [row] = await ctx.deps.sql.query<EventRow>(selectVisible(id, ctx.caller.accountId, oldestVisible(ctx)));
  if (!row) throw resourceMissing(NAME, id);
  return serializeEvent(row, isConnected(ctx), ctx.deps.versions);
}
