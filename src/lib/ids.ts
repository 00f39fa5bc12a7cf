import { randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** Bytes at or above this would favour the first characters (256 % 62 = 8), so they are redrawn. */
const UNBIASED_LIMIT = 248;

// Random bytes are drawn in blocks: one randomBytes call per id costs more than the id itself.
const POOL_SIZE = 4096;
let pool = randomBytes(POOL_SIZE);
let offset = 0;

function nextByte(): number {
  if (offset === POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  return pool[offset++];
}

/**
 * `length` bytes from the pool, each handed out once (AES-GCM's IVs: a randomBytes(12) per seal
 * cost ~20 µs under load, more than the seal).
 */
export function pooledRandomBytes(length: number): Buffer {
  const out = Buffer.allocUnsafe(length);
  for (let i = 0; i < length; i++) out[i] = nextByte();
  return out;
}

/** Uniform random base62 string, for ids and secrets. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = nextByte();
    if (byte < UNBIASED_LIMIT) out += ALPHABET[byte % 62];
  }
  return out;
}

/** Ids look like the public API's: a type prefix and 24 random characters (accounts use 16). */
export function newId(prefix: string, length = 24): string {
  return `${prefix}_${randomBase62(length)}`;
}

const ID_SHAPES = new Map<string, RegExp>();

/**
 * Whether `id` is shaped like one of our ids with this prefix. Anything else can't exist, so
 * lookups answer 404 without asking the database (which can't even take a NUL).
 */
export function hasIdShape(prefix: string, id: string): boolean {
  let shape = ID_SHAPES.get(prefix);
  if (!shape) ID_SHAPES.set(prefix, (shape = new RegExp(`^${prefix}_[A-Za-z0-9]{1,64}$`)));
  return shape.test(id);
}

export const newRequestId = (): string => newId('req', 14);
