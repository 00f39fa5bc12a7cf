// Form values arrive as strings. Coerce them by the operation's schema before validation, the way
// stripe-mock does, so "5" becomes 5 where an integer is expected and "true" a boolean. Values
// that don't fit are left alone for the validator to report.

export interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  items?: Schema;
  anyOf?: Schema[];
  enum?: unknown[];
  [keyword: string]: unknown;
}

const INTEGER = /^-?\d+$/;
/** Any letter case, as the public API's v1 reads them: SDKs before 2025 (stripe-python, stripe-dotnet) send `True`/`False`. */
const BOOLEANS = new Map([
  ['true', true],
  ['false', false],
]);
const NUMBER = /^-?(\d+\.?\d*|\.\d+)$/;

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function fits(schema: Schema, value: unknown): boolean {
  if (schema.anyOf) return schema.anyOf.some((s) => fits(s, value));
  if (schema.enum && !schema.enum.includes(value)) return false;
  switch (schema.type) {
    case 'object':
      return isPlainObject(value);
    case 'array':
      return Array.isArray(value);
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'string':
      return typeof value === 'string';
    default:
      return true;
  }
}

const INDEX = /^(0|[1-9]\d*)$/;

/** Form arrays arrive indexed, as objects keyed 0..n-1 (see params.ts); sparse or other keys stay an object. */
function denseArray(value: unknown): unknown[] | undefined {
  if (!isPlainObject(value)) return undefined;
  const keys = Object.keys(value);
  if (keys.length === 0) return undefined;
  const out: unknown[] = new Array(keys.length);
  for (const key of keys) {
    if (!INDEX.test(key) || Number(key) >= keys.length) return undefined;
    out[Number(key)] = value[key];
  }
  return out;
}

export function coerce(schema: Schema | undefined, value: unknown): unknown {
  if (!schema) return value;
  if (schema.anyOf) {
    for (const branch of schema.anyOf) {
      const candidate = coerce(branch, value);
      if (fits(branch, candidate)) return candidate;
    }
    return value;
  }
  switch (schema.type) {
    case 'integer':
      return typeof value === 'string' && INTEGER.test(value) && Number.isSafeInteger(Number(value)) ? Number(value) : value;
    case 'number':
      return typeof value === 'string' && NUMBER.test(value) ? Number(value) : value;
    case 'boolean':
      return typeof value === 'string' ? (BOOLEANS.get(value.toLowerCase()) ?? value) : value;
    case 'array': {
      const items = Array.isArray(value) ? value : denseArray(value);
      return items ? items.map((item) => coerce(schema.items, item)) : value;
    }
    case 'object': {
      if (!isPlainObject(value)) return value;
      const out: Record<string, unknown> = {};
      const extra = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
      for (const key of Object.keys(value)) {
        out[key] = coerce(schema.properties?.[key] ?? extra, value[key]);
      }
      return out;
    }
    default:
      return value;
  }
}
