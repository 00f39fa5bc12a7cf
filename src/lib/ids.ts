import { randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Random base62 string; 62 ≤ 64 so `byte % 62` has a negligible bias for identifiers. */
export function randomBase62(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[bytes[i] % 62];
  return out;
}

/** Ids look like the public API's: a type prefix and 24 random characters (accounts use 16). */
export function newId(prefix: string, length = 24): string {
  return `${prefix}_${randomBase62(length)}`;
}

export const newRequestId = (): string => newId('req', 14);
