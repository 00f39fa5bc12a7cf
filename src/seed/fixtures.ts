import { createHash } from 'node:crypto';
import { parse as parseYaml } from 'yaml';

// The Stripe CLI's fixtures format (`stripe fixtures <file>`), read from JSON or YAML:
//   {"_meta": {"template_version": 0},
//    "fixtures": [{"name": "cus_alice", "path": "/v1/customers", "method": "post", "params": {…}}, …]}
// A string in `path`, `params`, `headers` or `idempotency_key` may hold references:
// `${name:dot.path}` reads an earlier fixture's answer (`${cus_alice:id}`,
// `${acct:requirements.currently_due.0}`), `${.env:VAR}` an environment variable, and
// `|default` after either is used when the value is missing or empty.

/** Something wrong with the seed, said in one line (the CLI prints it without a stack). */
export class SeedError extends Error {}

export type Method = 'get' | 'post' | 'delete';

export interface Fixture {
  readonly name: string;
  readonly path: string;
  readonly method: Method;
  readonly params: Record<string, unknown>;
  readonly headers: Readonly<Record<string, string>>;
  readonly idempotencyKey?: string;
  /** The CLI's `expected_error_type`: an error of this type is this fixture's answer, not a failure. */
  readonly expectedErrorType?: string;
  /** Hash of the fixture as written (references unresolved): a re-run can tell it changed. */
  readonly fingerprint: string;
}

const FIXTURE_FIELDS = ['name', 'path', 'method', 'params', 'headers', 'idempotency_key', 'expected_error_type'];
const METHODS: readonly string[] = ['get', 'post', 'delete'];
/** Headers a fixture may set; the key comes from the seed's own settings. */
const HEADERS = new Map(['Stripe-Account', 'Stripe-Version', 'Idempotency-Key'].map((h) => [h.toLowerCase(), h]));
// Names are what references use, so they can't hold a reference's punctuation.
const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}$/;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Parses a fixtures file: YAML when its name ends in .yaml or .yml, JSON otherwise. */
export function parseFixtures(text: string, fileName: string): Fixture[] {
  let data: unknown;
  try {
    data = /\.ya?ml$/i.test(fileName) ? parseYaml(text) : JSON.parse(text);
  } catch (err) {
    throw new SeedError(`${fileName} is not valid ${/\.ya?ml$/i.test(fileName) ? 'YAML' : 'JSON'}: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!isObject(data) || !Array.isArray(data.fixtures)) throw new SeedError(`${fileName} has no "fixtures" list`);
  for (const key of Object.keys(data)) {
    if (key === 'env') throw new SeedError(`${fileName}: "env" (writing answers to a local .env) is not supported by Sandbank's seed`);
    if (key !== '_meta' && key !== 'fixtures') throw new SeedError(`${fileName}: unknown top-level field "${key}" (a fixtures file has _meta and fixtures)`);
  }
  const version = isObject(data._meta) ? data._meta.template_version : undefined;
  if (data._meta !== undefined && !isObject(data._meta)) throw new SeedError(`${fileName}: _meta must be an object`);
  if (version !== undefined && version !== 0) throw new SeedError(`${fileName}: template_version ${JSON.stringify(version)} is not supported (only 0)`);

  const seen = new Set<string>();
  return data.fixtures.map((raw, index) => {
    const where = isObject(raw) && typeof raw.name === 'string' ? `fixture ${raw.name}` : `fixture #${index + 1}`;
    const fail = (message: string): never => {
      throw new SeedError(`${fileName}: ${where}: ${message}`);
    };
    if (!isObject(raw)) return fail('must be an object');
    for (const key of Object.keys(raw)) {
      if (!FIXTURE_FIELDS.includes(key)) {
        fail(`unknown field "${key}" (a fixture has ${FIXTURE_FIELDS.join(', ')}; Stripe-Account goes in headers)`);
      }
    }
    const { name, path, method, params = {}, headers = {}, idempotency_key: idempotencyKey, expected_error_type: expectedErrorType } = raw;
    if (typeof name !== 'string' || !NAME.test(name)) fail('needs a name of letters, digits, _, . and - (up to 200)');
    if (seen.has(name as string)) fail('another fixture has this name');
    seen.add(name as string);
    if (typeof path !== 'string' || !/^\/(sandbox\/)?v1\//.test(path)) fail('needs a path that starts with /v1/ (or /sandbox/v1/)');
    if (/[?#]/.test(path as string)) fail('its path has a query; parameters go in params');
    if (typeof method !== 'string' || !METHODS.includes(method.toLowerCase())) fail('needs a method: get, post or delete');
    if (!isObject(params)) fail('params must be an object');
    if (!isObject(headers) || !Object.values(headers).every((v) => typeof v === 'string')) fail('headers must map names to strings');
    const named: Record<string, string> = {};
    for (const [header, value] of Object.entries(headers as Record<string, string>)) {
      const canonical = HEADERS.get(header.toLowerCase());
      if (!canonical) fail(`header "${header}" can't be set (only ${[...HEADERS.values()].join(', ')})`);
      named[canonical!] = value;
    }
    if (idempotencyKey !== undefined && typeof idempotencyKey !== 'string') fail('idempotency_key must be a string');
    if (expectedErrorType !== undefined && typeof expectedErrorType !== 'string') fail('expected_error_type must be a string');
    const { name: _name, ...definition } = raw;
    return {
      name: name as string,
      path: path as string,
      method: (method as string).toLowerCase() as Method,
      params: params as Record<string, unknown>,
      headers: named,
      idempotencyKey: idempotencyKey as string | undefined,
      expectedErrorType: expectedErrorType as string | undefined,
      fingerprint: createHash('sha256').update(canonicalJson(definition)).digest('hex'),
    };
  });
}

/** JSON with object keys sorted, so a fixture's hash doesn't change when its keys are reordered. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isObject(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

// `${name:path}` or `${name:path|default}`; the name can't hold `:` and the path can't hold `|`.
const REFERENCE = /\$\{([^:|{}\s]+):([^|{}\s]+)(?:\|([^}]*))?\}/g;
const ENV = '.env';

export interface ReferenceScope {
  /** The answers of the fixtures that ran, by name. */
  readonly answers: ReadonlyMap<string, unknown>;
  /** Every fixture's name, in file order (to tell a later fixture from an unknown one). */
  readonly names: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
}

const missing = (value: unknown): boolean => value === undefined || value === null || value === '';

/** Follows a dot path (`requirements.currently_due.0`) into an answer. */
function lookup(answer: unknown, path: string): unknown {
  let value = answer;
  for (const segment of path.split('.')) {
    if (Array.isArray(value) && /^\d+$/.test(segment)) value = value[Number(segment)];
    else if (isObject(value) && Object.hasOwn(value, segment)) value = value[segment];
    else return undefined;
  }
  return value;
}

/** The value one reference stands for; `fixture` names the fixture being resolved, for the error. */
function referenced(scope: ReferenceScope, fixture: string, whole: string, name: string, path: string, fallback: string | undefined): unknown {
  let value: unknown;
  if (name === ENV) {
    value = scope.env[path];
    if (missing(value) && fallback === undefined) {
      throw new SeedError(`fixture ${fixture}: ${whole}: the environment variable ${path} is not set (give a default: \${.env:${path}|value})`);
    }
  } else {
    if (!scope.answers.has(name)) {
      if (name === fixture) throw new SeedError(`fixture ${fixture}: ${whole} refers to the fixture itself`);
      const later = scope.names.includes(name);
      throw new SeedError(
        later
          ? `fixture ${fixture}: ${whole} refers to fixture ${name}, which comes later in the file (fixtures run in file order)`
          : `fixture ${fixture}: ${whole} refers to ${name}, but no fixture has that name`,
      );
    }
    value = lookup(scope.answers.get(name), path);
    if (missing(value) && fallback === undefined) throw new SeedError(`fixture ${fixture}: ${whole}: ${name}'s answer has no ${path}`);
  }
  return missing(value) ? fallback : value;
}

/**
 * Replaces the references in one string. A string that is one reference and nothing else takes
 * the referenced value as it is (a number, a boolean, an object); references inside a longer
 * string are written into it (`encode` escapes them, for paths).
 */
export function resolveString(text: string, scope: ReferenceScope, fixture: string, encode: (s: string) => string = (s) => s): unknown {
  const matches = [...text.matchAll(REFERENCE)];
  if (matches.length === 0) return text;
  if (matches.length === 1 && matches[0][0] === text) {
    const [whole, name, path, fallback] = matches[0];
    const value = referenced(scope, fixture, whole, name, path, fallback);
    return typeof value === 'string' ? encode(value) : value;
  }
  return text.replace(REFERENCE, (whole: string, name: string, path: string, fallback: string | undefined) => {
    const value = referenced(scope, fixture, whole, name, path, fallback);
    if (typeof value === 'object') throw new SeedError(`fixture ${fixture}: ${whole} is an object or a list, which only a string holding nothing but the reference can take`);
    return encode(String(value));
  });
}

/** Resolves every string in params (values only; keys are taken as written). */
export function resolveValue(value: unknown, scope: ReferenceScope, fixture: string): unknown {
  if (typeof value === 'string') return resolveString(value, scope, fixture);
  if (Array.isArray(value)) return value.map((v) => resolveValue(v, scope, fixture));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveValue(v, scope, fixture)]));
  return value;
}

/** A resolved path: its references escaped as path segments. */
export function resolvePath(path: string, scope: ReferenceScope, fixture: string): string {
  // Paths start with a literal /v1/ (checked when read), so a reference is never the whole path.
  return resolveString(path, scope, fixture, encodeURIComponent) as string;
}

/** A header's or idempotency key's value: a string, whatever the reference held. */
export function resolveText(text: string, scope: ReferenceScope, fixture: string): string {
  const resolved = resolveString(text, scope, fixture);
  if (typeof resolved === 'object' && resolved !== null) throw new SeedError(`fixture ${fixture}: ${text} must resolve to text, not an object`);
  return String(resolved);
}
