import type { NextFunction, Request, Response } from 'express';

// CORS as the public API sends it, so a browser front end can call the sandbox directly: any
// origin, the methods the API has, and the headers a client needs to read (Request-Id first).
// The key travels in the Authorization header, never in a cookie, so `*` exposes nothing a
// page could not already ask for with the key it holds.

const HEADERS: readonly (readonly [string, string])[] = Object.entries({
  'Access-Control-Allow-Credentials': 'true',
  'Access-Control-Allow-Methods': 'GET, HEAD, PUT, PATCH, POST, DELETE',
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers':
    'Request-Id, Stripe-Manage-Version, Stripe-Should-Retry, X-Stripe-External-Auth-Required, X-Stripe-Privileged-Session-Required',
  'Access-Control-Max-Age': '300',
});

/** What a preflight may ask to send when it names nothing: what the SDKs and Stripe.js send. */
const DEFAULT_ALLOWED_HEADERS = 'Authorization, Content-Type, Idempotency-Key, Stripe-Account, Stripe-Version';

/** A header value safe to echo: a list of header names, nothing else. */
const HEADER_LIST = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+(\s*,\s*[A-Za-z0-9!#$%&'*+.^_`|~-]+)*$/;

/**
 * Every answer but those under `exceptPrefixes` (the hosted pages and the console, which are
 * same-origin HTML and must not be readable from another origin) carries the headers; an OPTIONS
 * preflight is answered here, without a key, as the browser sends none.
 */
export function cors(exceptPrefixes: readonly string[]) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (exceptPrefixes.some((prefix) => req.path === prefix || req.path.startsWith(`${prefix}/`))) return next();
    for (const [name, value] of HEADERS) res.setHeader(name, value);
    if (req.method !== 'OPTIONS') return next();
    const requested = req.headers['access-control-request-headers'];
    res.setHeader('Access-Control-Allow-Headers', typeof requested === 'string' && HEADER_LIST.test(requested.trim()) ? requested.trim() : DEFAULT_ALLOWED_HEADERS);
    res.setHeader('Vary', 'Access-Control-Request-Headers');
    res.statusCode = 200;
    res.setHeader('Content-Length', '0');
    res.end();
  };
}
