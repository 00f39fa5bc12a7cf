import { invalidRequest } from './errors';

/** C0 controls and DEL: the URL parser drops or escapes them, and PostgreSQL can't store NUL. */
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

/** Absolute http(s) URLs only; localhost is fine, since receivers in a sandbox are often local. */
export function checkHttpUrl(url: string, param: string): void {
  let parsed: URL | undefined;
  try {
    parsed = CONTROL_CHARACTERS.test(url) ? undefined : new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || !parsed.hostname) {
    throw invalidRequest(`Invalid URL: ${url.slice(0, 200)}. URLs must be absolute and begin with http:// or https://.`, 'url_invalid', param);
  }
}
