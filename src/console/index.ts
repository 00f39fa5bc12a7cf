import type { Express } from 'express';
import type { Authenticator } from '../kernel/auth';
import { ApiError } from '../kernel/errors';
import type { InFlight } from '../kernel/http';
import type { OpenApiDocument, OperationSpec } from '../kernel/openapi';
import type { ParamLimits } from '../kernel/params';
import type { RequestLog } from '../kernel/requestLog';
import type { Deps, Route } from '../kernel/route';
import { mountPages } from '../hosted/pages';
import { ConsoleApi } from './api';
import { Catalog } from './catalog';
import { clockPages } from './clocks';
import { dataPages } from './data';
import { eventPages } from './events';
import { homePages } from './home';
import { objectPages } from './objects';
import { outcomePages } from './outcomes';
import { requestPages } from './requests';
import { CONSOLE_PREFIX, consolePages, type ConsolePage, type ConsoleShared } from './pages';
import { SessionStore } from './sessions';
import { signInPages } from './signIn';
import { webhookPages } from './webhooks';

// The console (docs/console.md): server-rendered pages at /console on the API's port, over the
// API's own operations. A layer above the areas that names none of them: what it shows comes from
// the route table and the OpenAPI document, and what it does goes through the API (./api.ts).

export { CONSOLE_PREFIX };

/** Every console page; the header's navigation follows this order. */
export const CONSOLE_PAGES: readonly ConsolePage[] = [
  ...homePages,
  ...objectPages,
  ...eventPages,
  ...webhookPages,
  ...requestPages,
  ...clockPages,
  ...outcomePages,
  ...dataPages,
  ...signInPages,
];

export interface ConsoleOptions {
  readonly deps: Deps;
  readonly routes: readonly Route[];
  readonly operations: readonly OperationSpec[];
  /** The OpenAPI document, for the values a form offers (an outcome's). */
  readonly document?: OpenApiDocument;
  readonly authenticator: Authenticator;
  readonly limits: ParamLimits;
  readonly inFlight: InFlight;
  /** The API's request log (the requests pages read the signed-in key's platform's entries). */
  readonly requestLog?: RequestLog;
}

export interface MountedConsole {
  /** Closes the console's loopback connections to the app. */
  close(): Promise<void>;
}

/** How long a session's list of connected accounts (the view-as selector) is reused. */
const CONNECTED_TTL_MS = 30_000;
const CONNECTED_KEPT = 1_000;

export function mountConsole(app: Express, options: ConsoleOptions): MountedConsole {
  const { deps, authenticator } = options;
  const api = new ConsoleApi(app);
  const connected = new Map<string, { at: number; accounts: Promise<readonly string[]> }>();
  const shared: ConsoleShared = {
    connectedAccounts: (session) => {
      const now = deps.clock.nowMs();
      const kept = connected.get(session.tokenHash);
      if (kept && now - kept.at < CONNECTED_TTL_MS) return kept.accounts;
      const accounts = api
        .call({ ...session, stripeAccount: null }, 'GET', '/v1/accounts', { limit: 100 })
        .then((a) => (a.status === 200 ? (a.body.data as { id: string }[]).map((x) => x.id) : []))
        .catch(() => [] as string[]);
      connected.delete(session.tokenHash);
      if (connected.size >= CONNECTED_KEPT) connected.delete(connected.keys().next().value as string);
      connected.set(session.tokenHash, { at: now, accounts });
      return accounts;
    },
    api,
    requestLog: options.requestLog,
    catalog: new Catalog(options.routes, options.operations, options.document),
    sessions: new SessionStore(deps),
    nav: CONSOLE_PAGES.flatMap((p) => (p.nav ? [p.nav] : [])),
    identify: (key) => authenticator.identify({ authorization: `Bearer ${key}` }),
    mayActAs: async (key, account) => {
      const identity = await authenticator.identify({ authorization: `Bearer ${key}` });
      return authenticator.actingAs(identity, { 'stripe-account': account }).then(
        () => true,
        (err: unknown) => {
          if (err instanceof ApiError && err.status < 500) return false;
          throw err;
        },
      );
    },
  };
  mountPages(app, consolePages(CONSOLE_PAGES, shared), deps, options.limits, options.inFlight, CONSOLE_PREFIX);
  return { close: () => api.close() };
}
