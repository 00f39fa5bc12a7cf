import type { AppSecret } from '../../../generated/prisma/client';
import type { ExpandableFields } from '../../../kernel/expand';

export const OBJECT = 'apps.secret';

export type AppSecretRow = Pick<AppSecret, 'id' | 'created' | 'name' | 'scopeType' | 'scopeUser' | 'expiresAt'>;

/**
 * The public object. `payload` is shown only by find (create, delete and list leave it out, as
 * the public API does); `deleted` only by delete.
 */
export function serializeSecret(row: AppSecretRow, extra: { payload?: string; deleted?: true } = {}) {
  return {
    id: row.id,
    object: OBJECT,
    created: row.created,
    ...(extra.deleted ? { deleted: true as const } : {}),
    expires_at: row.expiresAt,
    livemode: false,
    name: row.name,
    ...(extra.payload !== undefined ? { payload: extra.payload } : {}),
    scope: row.scopeUser === null ? { type: row.scopeType } : { type: row.scopeType, user: row.scopeUser },
  };
}

/** A secret has nothing to expand. */
export const expandable: ExpandableFields = {};
