import { unixSeconds } from '../../../lib/clock';
import { Encryption } from '../../../lib/encryption';
import { newId, randomBase62 } from '../../../lib/ids';
import { invalidRequest } from '../../../kernel/errors';
import { LATEST_API_VERSION } from '../../../kernel/versions';
import type { RequestContext } from '../../../kernel/route';
import { insertSession, latestSecret } from './queries';
import { FEATURES, serializeStripecliSession } from './serializer';

/** Seconds the CLI waits before it asks for a new session once its socket closed. */
const RECONNECT_DELAY = 5;

/** The websocket path the CLI opens (the session's id and feature ride in its query string). */
export const SOCKET_PATH = '/v1/stripecli/socket';

/** `filters` is the CLI's JSON (`stripe logs tail --filter-…`): an object, or 400 naming it. */
function parseFilters(raw: string | undefined): unknown {
  if (raw === undefined || raw === '') return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw invalidRequest('Invalid filters: must be a JSON object.', 'parameter_invalid', 'filters');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw invalidRequest('Invalid filters: must be a JSON object.', 'parameter_invalid', 'filters');
  }
  return parsed;
}

/**
 * `stripe listen` and `stripe logs tail` start here: a session of the caller's account, its
 * signing secret (sealed at rest, shown only in this answer) and where its websocket is.
 */
export async function createStripecliSession(ctx: RequestContext) {
  const { params, deps, caller } = ctx;
  const asked: string[] = params.websocket_features;
  const feature = FEATURES.find((f) => asked.includes(f));
  if (feature === undefined) {
    throw invalidRequest(`Invalid websocket_features: must include one of ${FEATURES.join(', ')}.`, 'parameter_invalid', 'websocket_features');
  }
  const filters = parseFilters(params.filters);
  const row = { id: newId('cli'), created: unixSeconds(deps.clock), deviceName: params.device_name, feature, filters };
  // One secret per account, as Stripe keeps (`stripe listen --print-secret` then matches the listener's).
  const [previous] = await deps.sql.query<{ secret: string }>(latestSecret(caller.accountId));
  const secret = previous ? await deps.encryption.open(previous.secret) : `whsec_${randomBase62(64)}`;
  const sealed = await deps.encryption.seal(secret);
  await deps.write(insertSession(row, caller.accountId, sealed, Encryption.keyIdOf(sealed)));
  const websocketUrl = `${deps.config.publicUrl.replace(/^http/, 'ws')}${SOCKET_PATH}`;
  return serializeStripecliSession(row, {
    secret,
    websocketUrl,
    defaultVersion: caller.defaultApiVersion,
    latestVersion: LATEST_API_VERSION,
    reconnectDelay: RECONNECT_DELAY,
  });
}
