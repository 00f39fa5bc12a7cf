import { readFileSync } from 'node:fs';
import { ConfigError, type Config } from '../../../config';

// Where forwards may go (FORWARDING_DESTINATIONS): each destination is a URL prefix with its body
// format, the credential it accepts (a SHA-256, or "any"), its timeout, a signature key and
// whether it may reach private and loopback addresses. The public API's destinations are set up
// by Stripe at onboarding; here the operator lists them. Parsed once per config, and checked as
// each process starts (the area's `checkConfig`), so a bad setting stops start-up.

/** The card fields a forward fills, each at a path of the JSON body. */
export const CARD_FIELDS = ['number', 'exp_month', 'exp_year', 'name', 'cvc'] as const;
export type CardField = (typeof CARD_FIELDS)[number];

export interface ForwardingDestination {
  /** URL prefix a forward's `url` must start with. */
  readonly url: string;
  readonly bodyFormat: 'json';
  /** Header carrying the destination's credential, lower case. */
  readonly credentialHeader: string;
  /** Hex SHA-256 of the accepted credential value, or 'any' (a sandbox that takes whatever is sent). */
  readonly credentialSha256: string;
  readonly timeoutMs: number;
  /** HMAC-SHA256 key of `request_signature`; null: the destination takes no signature. */
  readonly signatureKey: string | null;
  /** Header the signature is written to. */
  readonly signatureHeader: string;
  readonly allowPrivateNetwork: boolean;
  /** Where each card field sits in the body, as path segments. */
  readonly fields: Readonly<Record<CardField, readonly string[]>>;
}

/** The built-in "your own token vault" shape: `{card: {number, exp_month, exp_year, name, cvc}}`. */
export const TOKEN_VAULT_FIELDS: Readonly<Record<CardField, readonly string[]>> = Object.freeze({
  number: ['card', 'number'],
  exp_month: ['card', 'exp_month'],
  exp_year: ['card', 'exp_year'],
  name: ['card', 'name'],
  cvc: ['card', 'cvc'],
});

export const DEFAULT_TIMEOUT_MS = 30_000;
/** The public API's forwards answer within its own limits; a minute at most here. */
export const MAX_TIMEOUT_MS = 60_000;
export const DEFAULT_SIGNATURE_HEADER = 'Sandbank-Signature';

const KNOWN_KEYS = new Set([
  'url',
  'body_format',
  'credential_header',
  'credential_sha256',
  'timeout_ms',
  'signature_key',
  'signature_header',
  'allow_private_network',
  'fields',
]);

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

class DestinationConfigError extends Error {}

const parsedOf = new WeakMap<Config, readonly ForwardingDestination[]>();

/** The config's FORWARDING_DESTINATIONS, parsed once; a bad one throws the ConfigError start-up stops with. */
export function forwardingDestinations(config: Config): readonly ForwardingDestination[] {
  let parsed = parsedOf.get(config);
  if (!parsed) {
    try {
      parsed = parseForwardingDestinations(config.forwardingDestinations);
    } catch (err) {
      if (err instanceof DestinationConfigError) throw new ConfigError(`FORWARDING_DESTINATIONS ${err.message}`);
      throw err;
    }
    parsedOf.set(config, parsed);
  }
  return parsed;
}

/**
 * FORWARDING_DESTINATIONS: inline JSON (it starts with `[`) or the path of a JSON file; an array of
 * destinations, each an object with at least `url` (or just the URL prefix as a string).
 */
export function parseForwardingDestinations(raw: string): readonly ForwardingDestination[] {
  const text = raw.trim();
  if (text === '') return Object.freeze([]);
  let source = text;
  if (!text.startsWith('[')) {
    try {
      source = readFileSync(text, 'utf8');
    } catch (err) {
      throw new DestinationConfigError(`cannot read the file "${text}" (${(err as Error).message})`);
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(source);
  } catch (err) {
    throw new DestinationConfigError(`is not valid JSON (${(err as Error).message})`);
  }
  if (!Array.isArray(parsed)) throw new DestinationConfigError('must be a JSON array of destinations');
  return Object.freeze(parsed.map((entry, i) => Object.freeze(destinationOf(entry, `[${i}]`))));
}

function destinationOf(entry: unknown, at: string): ForwardingDestination {
  const o: Record<string, unknown> = typeof entry === 'string' ? { url: entry } : (entry as Record<string, unknown>);
  if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new DestinationConfigError(`${at} must be an object or a URL prefix`);
  const unknown = Object.keys(o).filter((k) => !KNOWN_KEYS.has(k));
  if (unknown.length > 0) throw new DestinationConfigError(`${at} has unknown members: ${unknown.join(', ')}`);
  const str = (key: string, fallback: string): string => {
    const v = o[key] ?? fallback;
    if (typeof v !== 'string') throw new DestinationConfigError(`${at}.${key} must be a string`);
    return v;
  };
  const url = str('url', '');
  if (!/^https?:\/\/[^/?#@\s]+/i.test(url)) throw new DestinationConfigError(`${at}.url must start with http:// or https:// and a host, got "${url}"`);
  if (str('body_format', 'json') !== 'json') throw new DestinationConfigError(`${at}.body_format must be "json"`);
  const credentialHeader = str('credential_header', 'Authorization');
  const signatureHeader = str('signature_header', DEFAULT_SIGNATURE_HEADER);
  for (const [key, name] of [['credential_header', credentialHeader], ['signature_header', signatureHeader]]) {
    if (!HEADER_NAME.test(name)) throw new DestinationConfigError(`${at}.${key} must be a header name`);
  }
  const credentialSha256 = str('credential_sha256', 'any').toLowerCase();
  if (credentialSha256 !== 'any' && !/^[0-9a-f]{64}$/.test(credentialSha256)) {
    throw new DestinationConfigError(`${at}.credential_sha256 must be "any" or 64 hex digits (the SHA-256 of the accepted value)`);
  }
  const timeoutMs = o.timeout_ms ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || (timeoutMs as number) < 1 || (timeoutMs as number) > MAX_TIMEOUT_MS) {
    throw new DestinationConfigError(`${at}.timeout_ms must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}`);
  }
  const signatureKey = o.signature_key === undefined || o.signature_key === null ? null : str('signature_key', '');
  if (signatureKey === '') throw new DestinationConfigError(`${at}.signature_key must not be empty`);
  const allowPrivate = o.allow_private_network ?? false;
  if (typeof allowPrivate !== 'boolean') throw new DestinationConfigError(`${at}.allow_private_network must be true or false`);
  return {
    url,
    bodyFormat: 'json',
    credentialHeader: credentialHeader.toLowerCase(),
    credentialSha256,
    timeoutMs: timeoutMs as number,
    signatureKey,
    signatureHeader,
    allowPrivateNetwork: allowPrivate,
    fields: fieldsOf(o.fields, at),
  };
}

/** `{"number": "payment.card.pan", …}`: dot paths; fields not named keep the token vault's place. */
function fieldsOf(raw: unknown, at: string): Record<CardField, readonly string[]> {
  if (raw === undefined) return TOKEN_VAULT_FIELDS;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new DestinationConfigError(`${at}.fields must be an object of dot paths`);
  const out: Record<string, readonly string[]> = { ...TOKEN_VAULT_FIELDS };
  for (const [field, path] of Object.entries(raw)) {
    if (!(CARD_FIELDS as readonly string[]).includes(field)) throw new DestinationConfigError(`${at}.fields.${field} is not one of ${CARD_FIELDS.join(', ')}`);
    if (typeof path !== 'string' || path === '' || path.split('.').some((s) => s === '')) {
      throw new DestinationConfigError(`${at}.fields.${field} must be a dot path such as "card.number"`);
    }
    out[field] = Object.freeze(path.split('.'));
  }
  return Object.freeze(out) as Record<CardField, readonly string[]>;
}

/**
 * The destination a forward's URL belongs to, or undefined. The URL must be absolute http(s)
 * without user info (`http://127.0.0.1:80@elsewhere/` would otherwise pass a prefix check), and
 * both as written and as parsed it must start with the prefix.
 */
export function destinationFor(destinations: readonly ForwardingDestination[], url: string): { destination: ForwardingDestination; href: string } | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if ((parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.username || parsed.password) return undefined;
  const destination = destinations.find((d) => url.startsWith(d.url) && parsed.href.startsWith(d.url));
  return destination && { destination, href: parsed.href };
}
