import type { ExpandableFields } from '../../../kernel/expand';

export const OBJECT = 'login_link';

/** Login links have no id, as in the public API. */
export const serializeLoginLink = (link: { created: number; url: string }) => ({ object: OBJECT, created: link.created, url: link.url });

export const expandable: ExpandableFields = {};
