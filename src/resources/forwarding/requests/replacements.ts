import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../../../kernel/errors';
import type { CardField, ForwardingDestination } from './destinations';

// What a forward does to the request it sends: fills the card fields left blank in the JSON body
// (keeping each blank's JSON type), checks and redacts the credential header, signs the final body,
// and masks card data in what is recorded (the request as sent, the response as received).

export const REPLACEMENTS = ['card_cvc', 'card_expiry', 'card_number', 'cardholder_name', 'request_signature'] as const;
export type Replacement = (typeof REPLACEMENTS)[number];

const FIELDS_OF: Record<Exclude<Replacement, 'request_signature'>, readonly CardField[]> = {
  card_number: ['number'],
  card_expiry: ['exp_month', 'exp_year'],
  card_cvc: ['cvc'],
  cardholder_name: ['name'],
};

export interface CardData {
  readonly number: string;
  readonly expMonth: number;
  readonly expYear: number;
  readonly name: string | null;
  /** Only when `card_cvc` asked for it and the body has its field. */
  readonly cvc?: string;
}

export interface Header {
  name: string;
  value: string;
}

export const REDACTED = '[REDACTED]';
const MASKED_CVC = '***';

/** `424242******4242`: the first six and last four digits, as the public API shows a number. */
export const maskNumber = (number: string): string => `${number.slice(0, 6)}${'*'.repeat(Math.max(0, number.length - 10))}${number.slice(-4)}`;

/** A 400 `forwarding_api_invalid_parameter`; `parameter`: the request's own parameters were wrong, so no idempotent result is kept. */
export const invalidForwardingParameter = (message: string, param: string, kind: 'parameter' | 'state' = 'parameter'): ApiError =>
  new ApiError({ status: 400, code: 'forwarding_api_invalid_parameter', message, param, kind });

/** The JSON body as an object, or the public error naming `request[body]`. */
export function parseBody(body: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw invalidForwardingParameter('request[body] must be JSON: the destination takes a JSON body.', 'request[body]');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw invalidForwardingParameter('request[body] must be a JSON object.', 'request[body]');
  }
  return parsed as Record<string, unknown>;
}

type Blank = { parent: Record<string, unknown>; key: string; kind: 'string' | 'number' };

/** The blank at `path`, if the body has the field; a field that is there but not blank is refused. */
function blankAt(body: Record<string, unknown>, path: readonly string[], field: CardField): Blank | undefined {
  let parent: unknown = body;
  for (const segment of path.slice(0, -1)) {
    if (typeof parent !== 'object' || parent === null || Array.isArray(parent)) return undefined;
    parent = (parent as Record<string, unknown>)[segment];
  }
  if (typeof parent !== 'object' || parent === null || Array.isArray(parent)) return undefined;
  const key = path[path.length - 1];
  if (!Object.prototype.hasOwnProperty.call(parent, key)) return undefined;
  const value = (parent as Record<string, unknown>)[key];
  if (value === '') return { parent: parent as Record<string, unknown>, key, kind: 'string' };
  if (value === 0 && field !== 'name') return { parent: parent as Record<string, unknown>, key, kind: 'number' };
  throw invalidForwardingParameter(
    `request[body] ${path.join('.')} must be left blank ("" or 0) for Sandbank to fill it in${field === 'name' ? ' (a name is a string: "")' : ''}.`,
    'request[body]',
  );
}

/** The card fields `replacements` asks for that the body has, each at its blank. */
export function blanksOf(body: Record<string, unknown>, replacements: readonly Replacement[], destination: ForwardingDestination): Map<CardField, Blank> {
  const out = new Map<CardField, Blank>();
  for (const r of replacements) {
    if (r === 'request_signature') continue;
    for (const field of FIELDS_OF[r]) {
      const blank = blankAt(body, destination.fields[field], field);
      if (blank) out.set(field, blank);
    }
  }
  return out;
}

function valueOf(field: CardField, card: CardData): string | number | null {
  switch (field) {
    case 'number':
      return card.number;
    case 'exp_month':
      return card.expMonth;
    case 'exp_year':
      return card.expYear;
    case 'name':
      return card.name;
    case 'cvc':
      return card.cvc!;
  }
}

/**
 * Fills each blank with its card value in the blank's JSON type (a month as `"03"` in a string);
 * `mask` writes what the record shows instead: the number masked, the CVC `***`, the rest as sent.
 */
export function fill(blanks: Map<CardField, Blank>, card: CardData, mask: boolean): void {
  for (const [field, blank] of blanks) {
    const value = valueOf(field, card);
    let out: string | number | null;
    if (field === 'name') out = value ?? '';
    else if (mask && field === 'number') out = maskNumber(card.number);
    else if (mask && field === 'cvc') out = MASKED_CVC;
    else if (blank.kind === 'number') out = Number(value);
    else out = field === 'exp_month' ? String(value).padStart(2, '0') : String(value);
    blank.parent[blank.key] = out;
  }
}

/** Headers the service sets itself, or that only the connection may carry. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'content-type', 'user-agent', 'accept']);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Header values never hold control characters (CR, LF would split the request). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Names whose values are credentials wherever they are sent; redacted in every record. */
const SECRET_HEADER = /^(authorization|proxy-authorization|cookie|set-cookie)$|api[-_]?key|token|secret|password|credential|signature/i;

/** Checks the caller's headers; answers them in order. */
export function checkHeaders(headers: readonly Header[]): Header[] {
  headers.forEach((h, i) => {
    if (!HEADER_NAME.test(h.name)) throw invalidForwardingParameter(`request[headers][${i}][name] is not a valid header name.`, `request[headers][${i}][name]`);
    if (!HEADER_VALUE.test(h.value)) throw invalidForwardingParameter(`request[headers][${i}][value] holds characters a header can't carry.`, `request[headers][${i}][value]`);
    if (RESERVED_HEADERS.has(h.name.toLowerCase())) {
      throw invalidForwardingParameter(`request[headers][${i}][name]: ${h.name} is set by the forwarding service, not by the caller.`, `request[headers][${i}][name]`);
    }
  });
  return headers.map((h) => ({ name: h.name, value: h.value }));
}

const sha256Hex = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/**
 * The destination's credential: when it names a SHA-256, the credential header must be sent and
 * hash to it (compared in constant time). "any" takes whatever is sent, or nothing.
 */
export function checkCredential(headers: readonly Header[], destination: ForwardingDestination): void {
  if (destination.credentialSha256 === 'any') return;
  const sent = headers.filter((h) => h.name.toLowerCase() === destination.credentialHeader);
  const expected = Buffer.from(destination.credentialSha256, 'hex');
  if (sent.length !== 1 || !timingSafeEqual(sha256Hex(sent[0].value), expected)) {
    throw invalidForwardingParameter(
      `The ${destination.credentialHeader} header must carry the credential this destination accepts (once), and it doesn't.`,
      'request[headers]',
    );
  }
}

/** The headers as recorded: credentials (the destination's credential header, and any header named like one) redacted. */
export function redactHeaders(headers: readonly Header[], credentialHeader?: string): Header[] {
  return headers.map((h) => ({ name: h.name, value: h.name.toLowerCase() === credentialHeader || SECRET_HEADER.test(h.name) ? REDACTED : h.value }));
}

/**
 * Sandbank's request signature (the public API doesn't publish its own): HMAC-SHA256 of the final
 * body, exactly as sent, under the destination's `signature_key`, in lower-case hex.
 */
export const signBody = (body: string, key: string): string => createHmac('sha256', key).update(body, 'utf8').digest('hex');

const digitsBounded = (text: string): RegExp => new RegExp(`(?<!\\d)${text.replace(/[^0-9]/g, '')}(?!\\d)`, 'g');

/**
 * Masks card data in text the destination sent back (or that a record holds): the number wherever
 * it stands as a whole run of digits, the CVC likewise. Over-masking a digit run equal to the CVC
 * is the safe mistake.
 */
export function maskText(text: string, secrets: { number: string; cvc?: string }): string {
  let out = text.replace(digitsBounded(secrets.number), maskNumber(secrets.number));
  if (secrets.cvc) out = out.replace(digitsBounded(secrets.cvc), MASKED_CVC);
  return out;
}

/**
 * A JSON text with card data masked and still JSON: a number value equal to the card number (or
 * the CVC) becomes the masked string. Other texts are masked as text.
 */
export function maskBody(text: string, secrets: { number: string; cvc?: string }): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return maskText(text, secrets);
  }
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return maskText(v, secrets);
    if (typeof v === 'number') {
      if (String(v) === secrets.number) return maskNumber(secrets.number);
      if (secrets.cvc && String(v) === secrets.cvc) return MASKED_CVC;
      return v;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [maskText(k, secrets), walk(x)]));
    return v;
  };
  const masked = walk(parsed);
  // Unchanged texts keep their own formatting.
  return JSON.stringify(masked) === JSON.stringify(parsed) ? text : JSON.stringify(masked);
}
