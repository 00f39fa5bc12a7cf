import { invalidRequest } from './errors';

export type Metadata = Record<string, string>;
export type MetadataParam = Record<string, string> | '';

export const METADATA_LIMITS = { keys: 50, keyLength: 40, valueLength: 500 } as const;

/**
 * Applies a `metadata` parameter to the stored value: `metadata=` unsets every key, an empty
 * value unsets one key, anything else sets it. The schema bounds key and value sizes; the key
 * count is checked on the result, since unsetting and setting can arrive together.
 */
export function applyMetadata(current: Metadata, param: MetadataParam | undefined): Metadata {
  if (param === undefined) return current;
  if (param === '') return {};
  const next: Metadata = { ...current };
  for (const [key, value] of Object.entries(param)) {
    if (value === '') delete next[key];
    else next[key] = value;
  }
  if (Object.keys(next).length > METADATA_LIMITS.keys) {
    throw invalidRequest(`Invalid metadata: an object can have at most ${METADATA_LIMITS.keys} metadata keys.`, 'parameter_invalid', 'metadata');
  }
  return next;
}
