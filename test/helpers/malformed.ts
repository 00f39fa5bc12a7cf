import http from 'node:http';
import qs from 'qs';
import type { Schema } from '../../src/kernel/coerce';

// Malformed input generation for the conformance test: from an operation's parameter schema,
// requests that are wrong in every way a client (or an attacker) can be wrong. Each case says
// whether the request must be refused with a 4xx, or is possibly valid and must merely not crash.
// Everything random comes from a seeded generator, so a failure reproduces with the same seed.

// ---------------------------------------------------------------------------------------------
// Seeded randomness

export interface Rng {
  next(): number;
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  bytes(n: number): Buffer;
  ascii(n: number, alphabet?: string): string;
}

/** mulberry32: small, fast and good enough to pick test inputs. */
export function seededRng(seed: number): Rng {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  const PRINTABLE = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i))
    .filter((c) => c !== '#')
    .join('');
  return {
    next,
    int,
    pick: (items) => items[Math.floor(next() * items.length)],
    bytes: (n) => Buffer.from(Array.from({ length: n }, () => int(0, 255))),
    ascii: (n, alphabet = PRINTABLE) => Array.from({ length: n }, () => alphabet[int(0, alphabet.length - 1)]).join(''),
  };
}

// ---------------------------------------------------------------------------------------------
// An independent oracle: could a form-encoded value pass this schema at all?

const INTEGER = /^-?\d+$/;
const NUMBER = /^-?(\d+\.?\d*|\.\d+)$/;

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const hasOwn = (o: object | undefined, k: string): boolean => o !== undefined && Object.prototype.hasOwnProperty.call(o, k);

function stringFitsType(type: string, value: string): boolean {
  switch (type) {
    case 'string':
      return true;
    case 'integer':
      return INTEGER.test(value) && Number.isSafeInteger(Number(value));
    case 'number':
      return NUMBER.test(value);
    case 'boolean':
      return /^(true|false)$/i.test(value);
    default:
      return false;
  }
}

const formEquals = (expected: unknown, value: unknown): boolean =>
  expected === value || (typeof value === 'string' && expected !== null && typeof expected !== 'object' && String(expected) === value);

/**
 * False only when `value` (strings, arrays and objects, as a form parser yields them) certainly
 * fails `schema`, with form values read the way the public API reads them ("5" is an integer,
 * "true" a boolean). Conservative: keywords it doesn't know never make it say false.
 */
export function mayAccept(schema: any, value: unknown): boolean {
  if (schema === undefined || schema === null || schema === true) return true;
  if (schema === false) return false;
  if (Array.isArray(schema.anyOf) && !schema.anyOf.some((s: unknown) => mayAccept(s, value))) return false;
  if (Array.isArray(schema.oneOf) && !schema.oneOf.some((s: unknown) => mayAccept(s, value))) return false;
  if (Array.isArray(schema.allOf) && !schema.allOf.every((s: unknown) => mayAccept(s, value))) return false;
  if (Array.isArray(schema.enum) && !schema.enum.some((e: unknown) => formEquals(e, value))) return false;
  if (hasOwn(schema, 'const') && !formEquals(schema.const, value)) return false;
  const types: string[] | undefined = schema.type === undefined ? undefined : [schema.type].flat();

  if (typeof value === 'string') {
    if (types && !types.some((t) => stringFitsType(t, value))) return false;
    const asString = !types || types.includes('string');
    if (asString) {
      const length = Array.from(value).length;
      if (typeof schema.maxLength === 'number' && length > schema.maxLength) return false;
      if (typeof schema.minLength === 'number' && length < schema.minLength) return false;
      if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(value)) return false;
    } else if (NUMBER.test(value)) {
      const n = Number(value);
      if (typeof schema.minimum === 'number' && n < schema.minimum) return false;
      if (typeof schema.maximum === 'number' && n > schema.maximum) return false;
    }
    return true;
  }
  if (Array.isArray(value)) {
    // On the wire `a[0]=x` is both ['x'] and {'0': 'x'} (what the SDKs send for metadata {'0': 'x'}).
    if (types && !types.includes('array')) {
      return types.includes('object') && mayAccept(schema, Object.fromEntries(value.map((v, i) => [String(i), v])));
    }
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) return false;
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) return false;
    if (schema.items !== undefined && !value.every((v) => mayAccept(schema.items, v))) return false;
    return true;
  }
  if (isPlainObject(value)) {
    if (types && !types.includes('object')) return false;
    const keys = Object.keys(value);
    if (typeof schema.maxProperties === 'number' && keys.length > schema.maxProperties) return false;
    if (typeof schema.minProperties === 'number' && keys.length < schema.minProperties) return false;
    for (const k of keys) {
      if (schema.propertyNames !== undefined && !mayAccept(schema.propertyNames, k)) return false;
      if (hasOwn(schema.properties, k)) {
        if (!mayAccept(schema.properties[k], value[k])) return false;
      } else if (schema.additionalProperties === false) {
        return false;
      } else if (isPlainObject(schema.additionalProperties) && !mayAccept(schema.additionalProperties, value[k])) {
        return false;
      }
    }
    if (Array.isArray(schema.required) && !schema.required.every((r: string) => hasOwn(value, r))) return false;
    return true;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// A valid starting point, so that each case changes one thing

export function validValue(schema: any, depth = 0): unknown {
  if (!schema || depth > 6) return 'x';
  if (Array.isArray(schema.anyOf)) return validValue(schema.anyOf.find((s: any) => !(s.enum && s.enum.length === 1 && s.enum[0] === '')) ?? schema.anyOf[0], depth + 1);
  if (Array.isArray(schema.enum)) return String(schema.enum.find((e: unknown) => e !== '' && e !== '*') ?? schema.enum[0]);
  switch ([schema.type].flat()[0]) {
    case 'integer':
    case 'number':
      return String(schema.minimum ?? 1);
    case 'boolean':
      return 'true';
    case 'array':
      return [validValue(schema.items, depth + 1)];
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const r of schema.required ?? []) out[r] = validValue(schema.properties?.[r], depth + 1);
      return out;
    }
    default:
      return 'x';
  }
}

/** The given valid parameters, or the required ones made up from the schema. */
export function baselineFor(schema: Schema, given?: Record<string, unknown>): Record<string, unknown> {
  if (given) return given;
  const made = validValue(schema) as Record<string, unknown>;
  return mayAccept(schema, made) ? made : {};
}

// ---------------------------------------------------------------------------------------------
// Cases

export type Expectation = 'reject' | 'no-crash';

export interface ParamsCase {
  readonly label: string;
  /** Form text of the parameters. */
  readonly text?: string;
  /** Raw body bytes (non-GET only), instead of `text`. */
  readonly rawBody?: Buffer;
  /** `query` puts the text in the query string even for POST and DELETE. */
  readonly where?: 'natural' | 'query';
  /** Content-Type of a body; null sends none. Default: form. */
  readonly contentType?: string | null;
  readonly headers?: Record<string, string>;
  readonly expect: Expectation;
}

export interface Limits {
  readonly depth: number;
  readonly count: number;
  readonly bodyBytes: number;
}

export interface GenerateOptions {
  readonly method: 'get' | 'post' | 'delete';
  readonly schema: Schema;
  readonly baseline: Record<string, unknown>;
  readonly limits: Limits;
  readonly rng: Rng;
}

export const encodeForm = (params: Record<string, unknown>): string => qs.stringify(params, { arrayFormat: 'indices' });

const clone = <T>(v: T): T => (v === undefined ? v : JSON.parse(JSON.stringify(v)));

export function setAt(root: Record<string, unknown>, path: readonly string[], value: unknown): Record<string, unknown> {
  const out = clone(root);
  let node: any = out;
  for (let i = 0; i < path.length - 1; i++) {
    const next = path[i + 1];
    if (node[path[i]] === undefined || typeof node[path[i]] !== 'object') node[path[i]] = /^\d+$/.test(next) ? [] : {};
    node = node[path[i]];
  }
  node[path[path.length - 1]] = value;
  return out;
}

function without(root: Record<string, unknown>, key: string): Record<string, unknown> {
  const out = clone(root);
  delete out[key];
  return out;
}

/** `['a', '0', 'b']` → `a[0][b]`, the way a form names a nested parameter. */
const bracketed = (path: readonly string[]): string => path.map((s, i) => (i === 0 ? s : `[${s}]`)).join('');

export interface Slot {
  readonly path: string[];
  readonly schema: any;
}

/** Every parameter, and the members of closed objects (and of arrays of them) below it. */
export function slotsOf(schema: any, path: string[] = [], depth = 0): Slot[] {
  const out: Slot[] = [];
  const properties = schema?.properties ?? {};
  for (const [name, sub] of Object.entries<any>(properties)) {
    const here = [...path, name];
    out.push({ path: here, schema: sub });
    if (depth >= 3) continue;
    for (const branch of [sub, ...(sub.anyOf ?? [])]) {
      if (branch?.properties) out.push(...slotsOf(branch, here, depth + 1));
      if (branch?.items?.properties) out.push(...slotsOf(branch.items, [...here, '0'], depth + 1));
    }
  }
  return out;
}

/** Largest maxLength among the string schemas reachable from a slot's own value (not below it). */
function maxLengthOf(schema: any): number | undefined {
  const lengths = [schema, ...(schema?.anyOf ?? []), ...(schema?.oneOf ?? [])]
    .map((s: any) => s?.maxLength)
    .filter((n: unknown): n is number => typeof n === 'number');
  return lengths.length ? Math.max(...lengths) : undefined;
}

const WRONG_VALUES: readonly [string, unknown][] = [
  ['a non-numeric string', 'zz-not-valid'],
  ['a numeric string', '12'],
  ['a boolean string', 'true'],
  ['a decimal string', '1.5'],
  ['an empty string', ''],
  ['an object', { zz_unknown: 'x' }],
  ['a nested object', { zz: { deeper: 'x' } }],
  ['an array', ['zz-not-valid']],
  ['an array of objects', [{ zz_unknown: 'x' }]],
  ['an array of arrays', [['x']]],
];

const ODD_STRINGS: readonly [string, string][] = [
  ['a NUL byte', 'a\u0000b'],
  ['control characters', '\u0007\u001b[31m\r\n'],
  ['unicode', 'ü☃𝄞\u202eRTL'],
  ['a 5001-character string', 'x'.repeat(5001)],
  ['an SQL-looking string', "'; DROP TABLE accounts; --"],
];

const WEIRD_KEYS: readonly string[] = [
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'a[',
  ']]',
  '[[',
  '%5B%5D',
  '%E2%98%83',
  '%F0%9F%92%A9',
  'a%00b',
  '%20',
];

/** Raw top-level keys: none of them may be taken for a parameter (or dropped in silence). */
const WEIRD_TOP_LEVEL: readonly string[] = [
  '__proto__=x',
  '__proto__[polluted]=yes',
  'constructor=x',
  'constructor[prototype][polluted]=yes',
  'toString=x',
  'hasOwnProperty=x',
  'valueOf=x',
  'a[=x',
  ']]=x',
  '[[=x',
  '[]=x',
  '][=x',
  'a]b=x',
  '%5B%5D=x',
  '%E2%98%83=x',
  '%F0%9F%92%A9=x',
  'a%00b=x',
  '%20=x',
];

const INVALID_PERCENT_KEYS: readonly string[] = ['%=x', '%Z=x', '%ZZ%ZZ=x', '%E0%A4%A=x', '%ED%A0%80=x', '%C0%AF=x'];
const INVALID_PERCENT_VALUES: readonly [string, string][] = [
  ['%ZZ', '%ZZ'],
  ['%', '%'],
  ['%E0%A4%A', '%E0%A4%A'],
  ['%ED%A0%80', '%ED%A0%80'],
];

const join = (...parts: string[]): string => parts.filter((p) => p !== '').join('&');

export function generateCases(opts: GenerateOptions): ParamsCase[] {
  const { schema, baseline, limits, rng, method } = opts;
  const isGet = method === 'get';
  const cases: ParamsCase[] = [];
  const base = encodeForm(baseline);
  const structured = (label: string, params: Record<string, unknown>): ParamsCase => ({
    label,
    text: encodeForm(params),
    expect: mayAccept(schema, params) ? 'no-crash' : 'reject',
  });
  const raw = (label: string, text: string, expect: Expectation, extra: Partial<ParamsCase> = {}): ParamsCase => ({ label, text, expect, ...extra });

  // Unknown and missing parameters.
  cases.push(structured('an unknown parameter', { ...baseline, zz_unknown: 'x' }));
  cases.push(structured('an unknown object parameter', { ...baseline, zz_unknown: { a: 'b' } }));
  cases.push(structured('an unknown array parameter', { ...baseline, ZZ_Unknown: ['x', 'y'] }));
  for (const r of (schema.required as string[] | undefined) ?? []) cases.push(structured(`without required ${r}`, without(baseline, r)));

  // Every parameter, and the members of closed objects below it.
  for (const slot of slotsOf(schema)) {
    const name = bracketed(slot.path);
    for (const [what, value] of WRONG_VALUES) cases.push(structured(`${name} as ${what}`, setAt(baseline, slot.path, value)));
    for (const [what, value] of ODD_STRINGS) cases.push(structured(`${name} as ${what}`, setAt(baseline, slot.path, value)));
    const max = maxLengthOf(slot.schema);
    if (max !== undefined) cases.push(structured(`${name} one past maxLength ${max}`, setAt(baseline, slot.path, 'x'.repeat(max + 1))));
    // Inside arrays and open objects: overlong items, keys and values.
    const item = slot.schema.items ?? slot.schema.anyOf?.find((b: any) => b.items)?.items;
    if (item) cases.push(structured(`${name} with a 5001-character item`, setAt(baseline, slot.path, ['x'.repeat(5001)])));
    const open = [slot.schema, ...(slot.schema.anyOf ?? [])].find((b: any) => b?.type === 'object' && b.additionalProperties !== false);
    if (open) {
      cases.push(structured(`${name} with a 501-character value`, setAt(baseline, slot.path, { k: 'v'.repeat(501) })));
      cases.push(structured(`${name} with a 41-character key`, setAt(baseline, slot.path, { ['k'.repeat(41)]: 'v' })));
      cases.push(structured(`${name} with a NUL in a key`, setAt(baseline, slot.path, { 'a\u0000b': 'v' })));
      cases.push(structured(`${name} with a NUL in a value`, setAt(baseline, slot.path, { k: 'a\u0000b' })));
      const many = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, 'v']));
      cases.push(structured(`${name} with 1000 keys`, setAt(baseline, slot.path, many)));
    }

    if (slot.path.length === 1) {
      const rest = encodeForm(without(baseline, name));
      const current = typeof baseline[name] === 'string' ? (baseline[name] as string) : 'zz';
      // Duplicated keys: the parser makes an array of them.
      cases.push({
        label: `${name} given twice`,
        text: join(rest, `${name}=${encodeURIComponent(current)}`, `${name}=zz`),
        expect: mayAccept(schema, { ...without(baseline, name), [name]: [current, 'zz'] }) ? 'no-crash' : 'reject',
      });
      // Invalid percent-encoding in the value stays literal text.
      for (const [what, literal] of INVALID_PERCENT_VALUES) {
        cases.push({
          label: `${name} with invalid percent-encoding ${what}`,
          text: join(rest, `${name}=${literal}`),
          expect: mayAccept(schema, { ...without(baseline, name), [name]: literal }) ? 'no-crash' : 'reject',
        });
      }
      // Deeper than the parser allows.
      cases.push(raw(`${name} nested past the depth limit`, join(rest, `${name}${'[a]'.repeat(limits.depth + 1)}=x`), 'reject'));
      // Weird keys one level down.
      const openObject = mayAccept(slot.schema, { zz_weird: 'x' });
      for (const key of WEIRD_KEYS) {
        cases.push(raw(`${name}[${key}]`, join(rest, `${name}[${key}]=x`), openObject ? 'no-crash' : 'reject'));
      }
      // Huge arrays: past the parser's limits, and large within them.
      const arrayish = mayAccept(slot.schema, ['x']) || [slot.schema, ...(slot.schema.anyOf ?? [])].some((b: any) => b?.type === 'array');
      cases.push(raw(`${name} with an array index past the limit`, join(rest, `${name}[${limits.count + 1}]=x`), openObject ? 'no-crash' : 'reject'));
      if (arrayish) {
        const count = isGet ? 1000 : limits.count + 1;
        const text = join(rest, Array.from({ length: count }, () => `${name}[]=x`).join('&'));
        cases.push(raw(`${name} with ${count} items`, text, count > limits.count ? 'reject' : mayAccept(schema, { ...without(baseline, name), [name]: Array(count).fill('x') }) ? 'no-crash' : 'reject'));
        const junk = Array.from({ length: 500 }, (_, i) => `zz-${i}`);
        cases.push(structured(`${name} with 500 junk items`, { ...without(baseline, name), [name]: junk }));
      }
    }
  }

  // Weird top-level keys and invalid percent-encoding in keys.
  for (const key of WEIRD_TOP_LEVEL) cases.push(raw(`top-level key ${key.split('=')[0]}`, join(base, key), 'reject'));
  for (const key of INVALID_PERCENT_KEYS) cases.push(raw(`key with invalid percent-encoding ${key.split('=')[0]}`, join(base, key), 'reject'));
  cases.push(raw('a lone %', join(base, '%'), 'reject'));

  // Deep nesting of an unknown parameter, and too many parameters.
  cases.push(raw('an unknown parameter nested past the depth limit', join(base, `zz${'[a]'.repeat(limits.depth + 1)}=x`), 'reject'));
  cases.push(raw('an unknown parameter nested within the depth limit', join(base, `zz${'[a]'.repeat(limits.depth - 1)}=x`), 'reject'));
  cases.push(raw(`${limits.count + 1} parameters`, join(base, Array.from({ length: limits.count + 1 }, () => 'z').join('&')), 'reject'));
  if (!isGet) {
    cases.push(raw(`${limits.count + 1} distinct parameters`, join(base, Array.from({ length: limits.count + 1 }, (_, i) => `z${i}=1`).join('&')), 'reject'));
  }
  cases.push(raw('300 distinct unknown parameters', join(base, Array.from({ length: 300 }, (_, i) => `z${i}=1`).join('&')), 'reject'));

  // Other encodings.
  const json = JSON.stringify(baseline);
  if (isGet) {
    cases.push(raw('a JSON query string', encodeURIComponent(json), 'reject'));
    cases.push(raw('a raw JSON query string', json.replace(/[^A-Za-z0-9_.,:{}[\]"-]/g, (c) => encodeURIComponent(c)), 'reject'));
  } else {
    cases.push(raw('a JSON body', json, 'reject', { contentType: 'application/json' }));
    cases.push(raw('a JSON body with charset', json, 'reject', { contentType: 'application/json; charset=utf-8' }));
    cases.push(raw('a JSON body sent as a form', `${json}`, 'reject'));
    cases.push(raw('a text/plain body', base || 'zz=1', 'reject', { contentType: 'text/plain' }));
    cases.push(raw('a multipart body', `--x\r\nContent-Disposition: form-data; name="zz"\r\n\r\n1\r\n--x--`, 'reject', {
      contentType: 'multipart/form-data; boundary=x',
    }));
    cases.push(raw('a body past the size limit', `zz=${'x'.repeat(limits.bodyBytes)}`, 'reject'));
    cases.push(raw('a form body in the query string too', join(base, 'zz_unknown=1'), 'reject', { where: 'query' }));
  }

  // Random garbage, always led by a name no operation uses.
  for (let i = 0; i < 8; i++) {
    if (isGet) {
      cases.push(raw(`random query garbage #${i}`, `zz${rng.ascii(rng.int(1, 1500))}`, 'reject'));
    } else {
      const bytes = Buffer.concat([Buffer.from('zz'), rng.bytes(rng.int(1, 3000))]);
      cases.push({ label: `random body bytes #${i}`, rawBody: bytes, expect: 'reject', contentType: i % 4 === 3 ? null : undefined });
    }
  }

  // Headers.
  cases.push(raw('an unknown Stripe-Version', base, 'reject', { headers: { 'Stripe-Version': '2099-01-01' } }));
  cases.push(raw('a garbage Stripe-Version', base, 'reject', { headers: { 'Stripe-Version': 'not a version; beta=v9' } }));
  cases.push(raw('an unreachable Stripe-Account', base, 'reject', { headers: { 'Stripe-Account': 'acct_zzNoSuchAccount' } }));
  cases.push(raw('a garbage Authorization', base, 'reject', { headers: { Authorization: 'Bearer sk_test_a b c' } }));
  cases.push(raw('an empty Authorization', base, 'reject', { headers: { Authorization: '' } }));
  cases.push(raw('Basic auth with garbage', base, 'reject', { headers: { Authorization: 'Basic !!!not-base64!!!' } }));
  if (method === 'post') cases.push(raw('an Idempotency-Key of 256 characters', base, 'reject', { headers: { 'Idempotency-Key': 'k'.repeat(256) } }));

  // Some of the structured cases once more in the query string of a POST.
  if (!isGet) {
    const structuredCases = cases.filter((c) => c.text !== undefined && !c.headers && !c.contentType && c.where === undefined && c.text.length < 8000);
    for (let i = 0; i < 12 && structuredCases.length > 0; i++) {
      const c = rng.pick(structuredCases);
      cases.push({ ...c, label: `${c.label} (in the query string)`, where: 'query' });
    }
  }
  return cases;
}

// ---------------------------------------------------------------------------------------------
// Sending

export interface RawRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: Buffer;
}

export interface RawResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

export function sendRaw(port: number, req: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...req.headers };
    if (req.body) headers['Content-Length'] = req.body.length;
    const r = http.request({ host: '127.0.0.1', port, method: req.method, path: req.path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    r.on('error', reject);
    if (req.body) r.write(req.body);
    r.end();
  });
}

export function closeAgent(): void {
  agent.destroy();
}

/** Runs `tasks` with at most `concurrency` at a time, in order of start. */
export async function inBatches<T>(items: readonly T[], concurrency: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++];
      await run(item);
    }
  });
  await Promise.all(workers);
}
