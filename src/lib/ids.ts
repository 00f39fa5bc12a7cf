import { randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** Bytes at or above this would favour the first characters (256 % 62 = 8), so they are redrawn. */
const UNBIASED_LIMIT = 248;

/** Uniform random base62 string, for ids and secrets. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const bytes = randomBytes(length - out.length + 8);
    for (let i = 0; i < bytes.length && out.length < length; i++) {
      if (bytes[i] < UNBIASED_LIMIT) out += ALPHABET[bytes[i] % 62];
    }
  }
  return out;
}

/** Ids look like the public API's: a type prefix and 24 random characters (accounts use 16). */
export function newId(prefix: string, length = 24): string {
  return `${prefix}_${randomBase62(length)}`;
}

export const newRequestId = (): string => newId('req', 14);
