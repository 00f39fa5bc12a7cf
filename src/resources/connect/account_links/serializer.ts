import type { ExpandableFields } from '../../../kernel/expand';

export const OBJECT = 'account_link';

/** Account links have no id, as in the public API. */
export const serializeAccountLink = (link: { created: number; expiresAt: number; url: string }) => ({
  object: OBJECT,
  created: link.created,
  expires_at: link.expiresAt,
  url: link.url,
});

export const expandable: ExpandableFields = {};
