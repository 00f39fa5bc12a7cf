import type { ExpandableFields } from '../../../kernel/expand';

export const OBJECT = 'stripecli_session';

/** The features a session's websocket may serve, as `stripe listen` and `stripe logs tail` ask. */
export const FEATURES = ['webhooks', 'request_logs'] as const;

export interface StripecliSessionRow {
  id: string;
  feature: string;
}

/**
 * What the CLI reads (its pkg/stripeauth `StripeCLISession`), with the `object` every answer of
 * this API names (the CLI ignores fields it doesn't know).
 */
export function serializeStripecliSession(
  row: StripecliSessionRow,
  extra: { secret: string; websocketUrl: string; defaultVersion: string; latestVersion: string; reconnectDelay: number },
) {
  return {
    object: OBJECT,
    display_connect_filter_warning: false,
    reconnect_delay: extra.reconnectDelay,
    secret: extra.secret,
    websocket_authorized_feature: row.feature,
    websocket_id: row.id,
    websocket_url: extra.websocketUrl,
    default_version: extra.defaultVersion,
    latest_version: extra.latestVersion,
  };
}

/** A CLI session has nothing to expand. */
export const expandable: ExpandableFields = {};
