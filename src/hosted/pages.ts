import { randomBytes } from 'node:crypto';
import type { Express, Request, Response } from 'express';
import type { Config } from '../config';
import type { Deps } from '../kernel/route';
import { ApiError } from '../kernel/errors';
import type { InFlight } from '../kernel/http';
import { parseForm, readBody, type ParamLimits } from '../kernel/params';
import { html, htmlDocument, type Html } from './html';

// Hosted pages: the HTML a user's browser opens from a link the API returned (account onboarding,
// identity verification). They are not API operations: no key, no JSON, and the link itself is
// the credential, so the path never reaches a log and the page is never cached or referred.

export const HOSTED_PREFIX = '/hosted';

export interface PageRequest {
  readonly requestId: string;
  readonly pathParams: Record<string, string>;
  /** The posted form, parsed like API bodies (qs, same limits); empty for GET. */
  readonly form: Record<string, unknown>;
  /** Allows the page's own inline script under the Content-Security-Policy. */
  readonly nonce: string;
  /** The browser's address and user agent, for records such as terms acceptance. */
  readonly ip: string;
  readonly userAgent: string;
  /** The `Authorization` header, for a page that asks for a key (the request log's). */
  readonly authorization?: string;
  /** The query string's parameters (the first value of each), for pages that filter or page. */
  readonly query: Readonly<Record<string, string>>;
  /** The `Cookie` header, for pages with a session (the console's). */
  readonly cookie?: string;
  readonly deps: Deps;
}

export type PageResult =
  | { readonly html: Html; readonly status?: number; readonly headers?: Record<string, string> }
  | { readonly redirect: string; readonly headers?: Record<string, string> };
/** A script the integrator's own pages load (a client-side library, such as Financial Connections' shim). */
export type ScriptResult = { readonly javascript: string };
/** A document the page's link serves as it is (an invoice's PDF); `filename` names it for saving. */
export type FileResult = { readonly file: Buffer; readonly contentType: string; readonly filename: string };

export interface HostedPage {
  readonly method: 'get' | 'post';
  /** Under HOSTED_PREFIX, in Express syntax (`/account_links/:token`). */
  readonly path: string;
  readonly handler: (req: PageRequest) => Promise<PageResult | ScriptResult | FileResult>;
}

export const hostedPage = (method: HostedPage['method'], path: string, handler: HostedPage['handler']): HostedPage => ({
  method,
  path,
  handler,
});

/** The absolute URL of a hosted path, under PUBLIC_URL. */
export const hostedUrl = (config: Config, path: string): string => `${config.publicUrl}${HOSTED_PREFIX}${path}`;

/**
 * The origin of the page that opened a hosted page as a popup (a client-side stand-in puts it in
 * the path as `:origin`): an http(s) origin and nothing else; null when not opened so; the error
 * page when it is not one.
 */
export function openerOrigin(req: PageRequest): string | null | PageResult {
  const given = req.pathParams.origin;
  if (given === undefined) return null;
  try {
    const url = new URL(given);
    if ((url.protocol === 'http:' || url.protocol === 'https:') && url.origin === given) return url.origin;
  } catch {
    // Falls through to the error page.
  }
  return messagePage(req.nonce, 'This link is not valid', 'The page that opened this window did not say where it is.', 400);
}

/** A plain page that says what went wrong, for links that can't redirect anywhere. */
export function messagePage(nonce: string, title: string, message: string, status: number): PageResult {
  return { status, html: htmlDocument({ title, nonce, body: html`<h1>${title}</h1><p>${message}</p>` }) };
}

function send(res: Response, result: PageResult | ScriptResult | FileResult, nonce: string): void {
  res.set({
    'Cache-Control': 'no-store',
    // The URL is a bearer credential: never pass it on as a referrer.
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    // No form-action: Chromium applies it to the redirect after a submit (to return_url).
    'Content-Security-Policy': `default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-${nonce}'; img-src data:; base-uri 'none'; frame-ancestors 'none'`,
  });
  if ('redirect' in result) {
    if (result.headers) res.set(result.headers);
    res.redirect(303, result.redirect);
    return;
  }
  if ('javascript' in result) {
    // Loaded by the integrator's own pages, from their origin.
    res.set({ 'Cross-Origin-Resource-Policy': 'cross-origin', 'Cache-Control': 'no-cache' });
    res.status(200).type('application/javascript; charset=utf-8').send(result.javascript);
    return;
  }
  if ('file' in result) {
    const name = result.filename.replace(/[^A-Za-z0-9._-]/g, '_');
    // Not HTML (nosniff keeps it so): the page CSP would only stand in the way of the browser's PDF viewer.
    res.set({ 'Content-Disposition': `inline; filename="${name}"`, 'Content-Security-Policy': "frame-ancestors 'none'" });
    res.status(200).type(result.contentType).send(result.file);
    return;
  }
  if (result.headers) res.set(result.headers);
  res.status(result.status ?? 200).type('text/html; charset=utf-8').send(result.html.text);
}

/** `inFlight`: a submitted form's change finishes before shutdown disconnects the database. `prefix`: where the pages live. */
export function mountPages(app: Express, pages: readonly HostedPage[], deps: Deps, limits: ParamLimits, inFlight: InFlight, prefix = HOSTED_PREFIX): void {
  for (const page of pages) {
    const label = `${page.method.toUpperCase()} ${prefix}${page.path.replace(/:(\w+)/g, '{$1}')}`;
    app[page.method](`${prefix}${page.path}`, async (req: Request, res: Response) => {
      res.locals.route = label;
      const requestId = String(res.locals.requestId ?? '');
      const nonce = randomBytes(16).toString('base64');
      inFlight.enter();
      try {
        let form: Record<string, unknown> = {};
        if (page.method === 'post') {
          const type = String(req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
          if (type !== 'application/x-www-form-urlencoded') {
            send(res, messagePage(nonce, 'Unsupported form', 'This page accepts only HTML form submissions.', 415), nonce);
            return;
          }
          form = parseForm(await readBody(req, limits.bodyLimitBytes), limits, 'request body');
        }
        const pathParams = Object.fromEntries(Object.entries(req.params).map(([k, v]) => [k, String(v)]));
        const ip = req.socket.remoteAddress ?? '';
        const userAgent = String(req.headers['user-agent'] ?? '').slice(0, 5000);
        const authorization = req.headers.authorization;
        const query: Record<string, string> = {};
        for (const [name, value] of new URLSearchParams(req.originalUrl.split('?')[1] ?? '')) query[name] ??= value;
        const cookie = req.headers.cookie;
        send(res, await page.handler({ requestId, pathParams, form, nonce, ip, userAgent, authorization, query, cookie, deps }), nonce);
      } catch (err) {
        if (err instanceof ApiError && err.status < 500) {
          send(res, messagePage(nonce, 'This request could not be read', err.message, err.status), nonce);
          return;
        }
        deps.logger.error({ err, request_id: requestId, route: label }, 'hosted page failed');
        send(res, messagePage(nonce, 'Something went wrong', 'The page could not be shown. Please try again.', 500), nonce);
      } finally {
        inFlight.leave();
      }
    });
  }
}
