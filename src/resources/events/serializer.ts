import type { ExpandableFields } from '../../kernel/expand';
import { renderEvent, type EventRow } from '../../events/render';

export const OBJECT = 'event';

export const serializeEvent = (row: EventRow, connected: boolean) => renderEvent(row, { connected });

/** `data.object` is a snapshot; nothing in an event expands. */
export const expandable: ExpandableFields = {};
