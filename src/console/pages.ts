import { randomBytes } from 'node:crypto';
import type { LoopbackMethod } from '../lib/loopback';
import type { RequestLog } from '../kernel/requestLog';
import { html, type Html } from '../hosted/html';
import { hostedPage, type FileResult, type HostedPage, type PageRequest, type PageResult } from '../hosted/pages';
import type { ApiAnswer, CallOptions, ConsoleApi } from './api';
import type { Catalog } from './catalog';
import { consoleDocument, type NavEntry } from './layout';
import { csrfMatches, type Session, type SessionStore } from './sessions';

// The console's page registry. A page declares its method, path (under /console), whether it
// needs a session, and its navigation entry; `consolePages` turns them into hosted pages (the same
// machinery as /hosted: a CSP nonce per response, no-store, no referrer, escaped templates) with
// what every console page shares put in front: the session from the cookie, the CSRF check on
// every POST, the refusal of API keys on forms, and a context that calls the API as the
// signed-in key. A new page (events, requests, test clocks…) is one more entry in CONSOLE_PAGES.

export const CONSOLE_PREFIX = '/console';

/** What a page handler gets: the request, the session, and the API called as its key. */
export interface ConsoleContext {
  readonly req: PageRequest;
  readonly session: Session;
  readonly catalog: Catalog;
  readonly shared: ConsoleShared;
  /** Runs one API operation as the signed-in key, through the API's whole pipeline. */
  call(method: LoopbackMethod, path: string, params?: Record<string, unknown>, options?: CallOptions): Promise<ApiAnswer>;
  /** The page in the console's layout (header, navigation, view-as, sign-out). */
  page(title: string, body: Html, options?: { active?: string; status?: number; script?: string }): Promise<PageResult>;
  /** The console's "not found" page: what an id of another account gets, as an unknown one does. */
  notFound(message: string): Promise<PageResult>;
}

interface PageBase {
  readonly method: 'get' | 'post';
  /** Under /console, in Express syntax. */
  readonly path: string;
  /** Its entry in the header's navigation, if it has one. */
  readonly nav?: NavEntry;
}

/** A page of a signed-in session (most): no session, and a GET goes to sign-in while a POST is refused. */
export interface SessionPage extends PageBase {
  readonly public?: false;
  /** A page, or a small JSON document for the page's own script (as a FileResult: application/json). */
  readonly handler: (ctx: ConsoleContext) => Promise<PageResult | FileResult>;
}

/** A page reached before signing in (the sign-in form itself). */
export interface PublicPage extends PageBase {
  readonly public: true;
  readonly handler: (req: PageRequest, shared: ConsoleShared) => Promise<PageResult>;
}

export type ConsolePage = SessionPage | PublicPage;

/** What the console's pages share, made once at mount. */
export interface ConsoleShared {
  readonly api: ConsoleApi;
  /** The API's request log, when the app keeps one (the requests pages). */
  readonly requestLog?: RequestLog;
  readonly catalog: Catalog;
  readonly sessions: SessionStore;
  readonly nav: readonly NavEntry[];
  /** Checks a key typed into the sign-in form with the API's own authenticator. */
  readonly identify: (key: string) => Promise<{ platformAccountId: string; keyHint: string; publishable: boolean }>;
  /** The connected accounts the session's key may view as (its platform's), for the selector. */
  readonly connectedAccounts: (session: Session) => Promise<readonly string[]>;
  /** Checks that the key may act as a connected account, with the API's own Stripe-Account check. */
  readonly mayActAs: (key: string, account: string) => Promise<boolean>;
}

/** A plain console page outside a session (sign-in, refusals). */
export function plainPage(nonce: string, title: string, body: Html, status = 200, headers?: Record<string, string>): PageResult {
  return { status, headers, html: consoleDocument({ title, nonce, body }) };
}

const refusal = (req: PageRequest, status: number, title: string, message: string): PageResult =>
  plainPage(req.nonce, title, html`<section class="card"><h1>${title}</h1><p>${message}</p><p><a href="/console">Back to the console</a></p></section>`, status);

/** A new idempotency key for an action's POST, so a retried action can't act twice. */
export const actionKey = (): string => `console-${randomBytes(16).toString('hex')}`;

export function consolePages(pages: readonly ConsolePage[], shared: ConsoleShared): HostedPage[] {
  return pages.map((p) =>
    hostedPage(p.method, p.path, async (req) => {
      // A form is posted by the browser with the session's cookie, never with an API key: a
      // request carrying one is a script's, refused before anything runs.
      if (p.method === 'post' && req.authorization !== undefined) {
        return refusal(req, 403, 'API keys are not accepted here', "The console's forms act only for a signed-in browser session; call the API instead.");
      }
      if (p.public) return p.handler(req, shared);
      const session = await shared.sessions.find(req.cookie);
      if (!session) {
        if (p.method === 'get') return { redirect: `${CONSOLE_PREFIX}/sign-in` };
        return refusal(req, 401, 'Signed out', 'Your console session has ended. Sign in again.');
      }
      if (p.method === 'post' && !csrfMatches(session, req.form.csrf_token)) {
        return refusal(req, 403, 'This form has expired', 'The form was not sent from this session. Reload the page and try again.');
      }
      return p.handler(contextOf(req, session, shared, p.method === 'get'));
    }),
  );
}

/** `eager`: a page (not an action that redirects) will show the view-as selector, so its accounts are asked for at once. */
function contextOf(req: PageRequest, session: Session, shared: ConsoleShared, eager: boolean): ConsoleContext {
  const call: ConsoleContext['call'] = async (method, path, params, options) => {
    const answer = await shared.api.call(session, method, path, params, options);
    // The account viewed as is gone (deleted, or a data reset): the session goes back to the key's
    // own account, so the next page works; this one shows the API's refusal.
    if (session.stripeAccount && answer.status === 403 && answer.body?.error?.code === 'account_invalid') await shared.sessions.viewAs(session, null);
    return answer;
  };
  // The accounts the view-as selector offers: the platform's connected accounts, asked for while
  // the page does its own work, and kept a little while per session (every page shows them).
  let connected: Promise<readonly string[]> | undefined;
  const connectedAccounts = () => (connected ??= shared.connectedAccounts(session));
  if (eager) void connectedAccounts();
  const ctx: ConsoleContext = {
    req,
    session,
    catalog: shared.catalog,
    shared,
    call,
    page: async (title, body, options = {}) => ({
      status: options.status,
      html: consoleDocument({ title, nonce: req.nonce, body, session, nav: shared.nav, active: options.active, connected: await connectedAccounts(), script: options.script }),
    }),
    notFound: (message) => ctx.page('Not found', html`<section class="card"><h1>Not found</h1><p>${message}</p></section>`, { status: 404 }),
  };
  return ctx;
}
