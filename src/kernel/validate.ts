import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { coerce, type Schema } from './coerce';
import { ApiError, echo, invalidRequest, parameterMissing, parameterUnknown } from './errors';

const ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: false, useDefaults: false, validateFormats: false });

export interface ParamsValidator {
  (params: Record<string, unknown>): Record<string, unknown>;
  compile(): void;
}

/** PostgreSQL's INTEGER, the type of every integer column (`created`, `expires_at`, …). */
export const INTEGER_RANGE = { minimum: -2147483648, maximum: 2147483647 } as const;

/**
 * The schema with every integer that states no bound of its own bounded by INTEGER_RANGE, so a
 * value no column can hold (`created[gt]=2147483648`) is a 400, never a failed query.
 */
export function boundIntegers(schema: Schema): Schema {
  const out: Schema = { ...schema };
  if (schema.type === 'integer') {
    out.minimum ??= INTEGER_RANGE.minimum;
    out.maximum ??= INTEGER_RANGE.maximum;
  }
  if (schema.properties) out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, boundIntegers(v)]));
  if (typeof schema.additionalProperties === 'object') out.additionalProperties = boundIntegers(schema.additionalProperties);
  if (schema.items) out.items = boundIntegers(schema.items);
  if (schema.anyOf) out.anyOf = schema.anyOf.map(boundIntegers);
  return out;
}

/**
 * Returns the coerced parameters or throws the public API's error. The schema is compiled on the
 * operation's first request, not at start: compiling all of them took a second or more of a start's
 * CPU, on the critical path of a restart under load (test/kernel/openapi.test.ts compiles every one).
 */
export function compileParamsValidator(schema: Schema): ParamsValidator {
  let validate: ValidateFunction | undefined;
  const secrets = secretParams(schema);
  const validator = (params: Record<string, unknown>) => {
    validate ??= ajv.compile(boundIntegers(schema));
    const coerced = coerce(schema, params) as Record<string, unknown>;
    if (!validate(coerced)) throw toApiError(validate.errors ?? [], coerced, secrets);
    return coerced;
  };
  /** Compiles now (a test checks every operation's schema compiles). */
  validator.compile = () => void (validate ??= ajv.compile(boundIntegers(schema)));
  return validator;
}

/**
 * Parameters marked `format: password` (OpenAPI's hint for values to hide), as bracketed paths:
 * their values are never repeated in an error message, which is also kept for idempotent replays.
 */
export function secretParams(schema: Schema, prefix: string[] = [], out = new Set<string>()): Set<string> {
  if (schema.format === 'password' && prefix.length > 0) out.add(bracketPath(prefix));
  for (const [name, member] of Object.entries(schema.properties ?? {})) secretParams(member, [...prefix, name], out);
  for (const branch of schema.anyOf ?? []) secretParams(branch, prefix, out);
  return out;
}

/** `/metadata/foo` → `metadata[foo]`, `/enabled_events/0` → `enabled_events[0]`. */
export function bracketPath(segments: string[]): string {
  return segments.map((s, i) => (i === 0 ? s : `[${s}]`)).join('');
}

function segmentsOf(instancePath: string): string[] {
  return instancePath === '' ? [] : instancePath.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function valueAt(root: unknown, segments: string[]): unknown {
  let node: any = root;
  for (const s of segments) node = node == null ? undefined : node[s];
  return node;
}

function describe(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  return text.length > 50 ? `${text.slice(0, 50)}…` : text;
}

/** Errors an anyOf branch for "" reports when the value was meant for another branch. */
const isEmptyBranchNoise = (e: ErrorObject): boolean =>
  (e.keyword === 'enum' && Array.isArray(e.params.allowedValues) && e.params.allowedValues.length === 1 && e.params.allowedValues[0] === '') ||
  e.keyword === 'anyOf';

const KEYWORD_RANK: Record<string, number> = {
  additionalProperties: 0,
  required: 1,
  maxLength: 2,
  minLength: 2,
  maxItems: 2,
  minItems: 2,
  maxProperties: 2,
  propertyNames: 2,
  pattern: 3,
  enum: 3,
  minimum: 3,
  maximum: 3,
  type: 4,
};

/** `a`, `a or b`, `a, b, or c`: the public API's list of accepted values. */
const oneOf = new Intl.ListFormat('en', { style: 'long', type: 'disjunction' });

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const SCALAR_TYPES = new Set(['string', 'integer', 'number', 'boolean']);
const SCALAR_KEYWORDS = new Set(['enum', 'const', 'maxLength', 'minLength', 'pattern', 'format', 'minimum', 'maximum']);
/** An error that only a scalar schema reports (so the value was meant to be a scalar). */
const isScalarError = (e: ErrorObject): boolean =>
  SCALAR_KEYWORDS.has(e.keyword) || (e.keyword === 'type' && [e.params.type].flat().every((t) => SCALAR_TYPES.has(String(t))));

/**
 * Where a value matched no branch of an anyOf (a card form, a bank account form or a token, say),
 * only the errors of the branch it was meant for: the one that doesn't refuse the value's type and
 * knows all its members, else the one with the fewest complaints. Otherwise a member of one form
 * would be reported as an unknown parameter of another.
 */
function meantBranches(errors: ErrorObject[]): ErrorObject[] {
  let out = errors;
  for (let round = 0; round < 8; round++) {
    const byAnyOf = new Map<string, Map<string, ErrorObject[]>>();
    for (const e of out) {
      const m = /^(.*?\/anyOf)\/(\d+)(\/|$)/.exec(e.schemaPath);
      if (!m) continue;
      const branches = byAnyOf.get(m[1]) ?? new Map<string, ErrorObject[]>();
      branches.set(m[2], [...(branches.get(m[2]) ?? []), e]);
      byAnyOf.set(m[1], branches);
    }
    const contested = [...byAnyOf.entries()].find(([, branches]) => branches.size > 1);
    if (!contested) return out;
    const [prefix, branches] = contested;
    const score = (list: ErrorObject[]): number[] => {
      const real = list.filter((e) => !isEmptyBranchNoise(e));
      if (real.length === 0) return [2, 0, 0];
      const wrongType = real.some((e) => e.keyword === 'type' && e.schemaPath.split('/').length === prefix.split('/').length + 2) ? 1 : 0;
      return [wrongType, real.filter((e) => e.keyword === 'additionalProperties').length, real.length];
    };
    const ranked = [...branches.entries()].sort(([ia, a], [ib, b]) => {
      const [sa, sb] = [score(a), score(b)];
      return sa[0] - sb[0] || sa[1] - sb[1] || sa[2] - sb[2] || Number(ia) - Number(ib);
    });
    const keep = `${prefix}/${ranked[0][0]}`;
    out = out.filter((e) => !e.schemaPath.startsWith(`${prefix}/`) || e.schemaPath === keep || e.schemaPath.startsWith(`${keep}/`));
  }
  return out;
}

export function toApiError(all: ErrorObject[], params: unknown, secrets: ReadonlySet<string> = new Set()): ApiError {
  const errors = meantBranches(all);
  const unknown = errors.find((e) => e.keyword === 'additionalProperties');
  if (unknown) return parameterUnknown(bracketPath([...segmentsOf(unknown.instancePath), String(unknown.params.additionalProperty)]));

  // An object value that misses a member: only when the value is an object at all (not an anyOf "" branch).
  const missing = errors.find((e) => e.keyword === 'required');
  if (missing) return parameterMissing(bracketPath([...segmentsOf(missing.instancePath), String(missing.params.missingProperty)]));

  // Errors inside propertyNames carry `propertyName`; the propertyNames error itself names the key.
  const candidates = errors.filter((e) => !isEmptyBranchNoise(e) && (e as { propertyName?: string }).propertyName === undefined);
  const pool = candidates.length > 0 ? candidates : errors;
  const depth = (e: ErrorObject) => segmentsOf(e.instancePath).length;
  const deepest = Math.max(...pool.map(depth));
  const atDeepest = pool.filter((e) => depth(e) === deepest);
  atDeepest.sort((a, b) => (KEYWORD_RANK[a.keyword] ?? 5) - (KEYWORD_RANK[b.keyword] ?? 5));
  const error = atDeepest[0];
  const segments = segmentsOf(error.instancePath);
  // Object keys a client chose (metadata's, say) can be any length: the name is cut where it is shown.
  const param = echo(bracketPath(segments));
  const value = valueAt(params, segments);
  const shown = (v: unknown): string => (secrets.has(param) ? `(the value of ${param} is not shown)` : describe(v));

  // Brackets under a scalar (`metadata[foo][bar]=x`): the bracketed name is an unknown parameter.
  if (isPlainObject(value) && Object.keys(value).length > 0 && atDeepest.every(isScalarError)) {
    return parameterUnknown(bracketPath([...segments, Object.keys(value)[0]]));
  }
  if (value === '') {
    return invalidRequest(
      `You passed an empty string for '${param}'. We assume empty values are an attempt to unset a parameter; however '${param}' cannot be unset. You should remove '${param}' from your request or supply a non-empty value.`,
      'parameter_invalid_empty',
      param,
    );
  }
  switch (error.keyword) {
    case 'maxLength':
      return invalidRequest(
        `Invalid string: ${shown(value)}; must be at most ${error.params.limit} characters`,
        'invalid_string_too_long',
        param,
      );
    case 'minLength':
      return invalidRequest(`Invalid string: ${param} must be at least ${error.params.limit} characters`, 'parameter_invalid_string_empty', param);
    case 'maxItems':
      return invalidRequest(`Array ${param} exceeded maximum ${error.params.limit} allowed elements.`, 'parameter_invalid', param);
    case 'minItems':
      return invalidRequest(`Invalid array: ${param} must have at least ${error.params.limit} elements`, 'parameter_invalid', param);
    case 'maxProperties':
      return invalidRequest(`Invalid ${param}: it can have at most ${error.params.limit} keys`, 'parameter_invalid', param);
    case 'propertyNames': {
      const key = String(error.params.propertyName);
      // The limit comes from the inner maxLength error on the same key (metadata keys: 40).
      const inner = errors.find((e) => (e as { propertyName?: string }).propertyName === key && e.keyword === 'maxLength');
      const limit = inner?.params.limit ?? 40;
      return invalidRequest(`Invalid key '${describe(key)}' in ${param}: keys must be at most ${limit} characters`, 'parameter_invalid', bracketPath([...segments, key]));
    }
    case 'enum': {
      // The public API lists every accepted value, and an enum error carries no code.
      const allowed = (error.params.allowedValues as unknown[]).filter((v) => v !== '').map(String);
      return invalidRequest(`Invalid ${param}: must be one of ${oneOf.format(allowed)}`, undefined, param);
    }
    case 'minimum':
      return invalidRequest(`Invalid ${param}: must be greater than or equal to ${error.params.limit}`, 'parameter_invalid', param);
    case 'maximum':
      return invalidRequest(`Invalid ${param}: must be less than or equal to ${error.params.limit}`, 'parameter_invalid', param);
    case 'pattern':
      return invalidRequest(`Invalid ${param}: ${shown(value)} is not in the expected format`, 'parameter_invalid', param);
    case 'type': {
      const expected = String(error.params.type);
      if (expected === 'integer') return invalidRequest(`Invalid integer: ${shown(value)}`, 'parameter_invalid_integer', param);
      if (expected === 'number') return invalidRequest(`Invalid decimal: ${shown(value)}`, 'parameter_invalid', param);
      // As the public API: no code (stripe-python#487 shows `error_code=None` for "Invalid boolean: True").
      if (expected === 'boolean') return invalidRequest(`Invalid boolean: ${shown(value)}`, undefined, param);
      if (expected === 'array') return invalidRequest(`Invalid array for ${param}: send it as ${param}[]=… or ${param}[0]=…`, 'parameter_invalid', param);
      if (expected === 'object') return invalidRequest(`Invalid object for ${param}: send it as ${param}[key]=…`, 'parameter_invalid', param);
      return invalidRequest(`Invalid ${param}: expected a ${expected}`, 'parameter_invalid', param);
    }
    default:
      return invalidRequest(`Invalid value for ${param}.`, 'parameter_invalid', param);
  }
}
