import type { ExpandableFields } from '../../../kernel/expand';
import { renderEvent, type EventRow } from '../../../events/render';
import type { VersionRenderer } from '../../../kernel/versions';

export const OBJECT = 'event';

export const serializeEvent = (row: EventRow, connected: boolean, versions: VersionRenderer) => renderEvent(row, versions, { connected });

/** `data.object` is a snapshot; nothing in an event expands. */
export const expandable: ExpandableFields = {};
