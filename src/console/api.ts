import type { RequestListener } from 'node:http';
import { VIEWER_REQUEST } from '../kernel/auth';
import { LoopbackServer, type LoopbackMethod } from '../lib/loopback';
import type { Session } from './sessions';

// Every read and action of the console is an API request made as the signed-in key, sent to the
// app itself over a loopback port of its own (src/lib/loopback.ts, as the seed does). So the
// console goes through the very pipeline a client's request does (auth and the Stripe-Account
// check, rate limits, validation, idempotency, events and webhooks, versions, the request log),
// can do nothing the API can't, and can show nothing of another account: one key's console sees
// what that key's API calls see. Calling the handlers directly would skip half of that pipeline,
// and re-implementing it here would be the same pipeline written twice.

export interface ApiAnswer {
  readonly status: number;
  /** The JSON body as the API rendered it. */
  readonly body: any;
}

export interface CallOptions {
  /** Stripe-Version to render at; the account's default when absent. */
  readonly version?: string;
  readonly idempotencyKey?: string;
}

/** How many of the console's API requests may be in flight at once (the home page's counts run side by side). */
const CONNECTIONS = 8;

export class ConsoleApi {
  private loopback: Promise<LoopbackServer> | undefined;

  constructor(private readonly app: RequestListener) {}

  /** The app, each request marked as a viewer's: a version picked in the console never pins the account's default. */
  private readonly viewer: RequestListener = (req, res) => {
    (req as unknown as Record<symbol, boolean>)[VIEWER_REQUEST] = true;
    this.app(req, res);
  };

  /** Runs one API operation as the session's key (and its view-as account). */
  async call(session: Session, method: LoopbackMethod, path: string, params: Record<string, unknown> = {}, options: CallOptions = {}): Promise<ApiAnswer> {
    this.loopback ??= LoopbackServer.open(this.viewer, CONNECTIONS).catch((err: unknown) => {
      this.loopback = undefined;
      throw err;
    });
    const headers: Record<string, string> = { authorization: `Bearer ${session.key}`, 'user-agent': 'Sandbank-Console' };
    if (session.stripeAccount) headers['stripe-account'] = session.stripeAccount;
    if (options.version) headers['stripe-version'] = options.version;
    if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    const answer = await (await this.loopback).request(method, path, params, headers);
    try {
      return { status: answer.status, body: JSON.parse(answer.text) };
    } catch {
      // Every answer of the API is JSON; anything else is shown as the error it is.
      return { status: answer.status >= 400 ? answer.status : 502, body: { error: { message: `The API answered ${answer.status} with a body that is not JSON.` } } };
    }
  }

  async close(): Promise<void> {
    const loopback = this.loopback;
    this.loopback = undefined;
    if (loopback) await (await loopback.catch(() => undefined))?.close();
  }
}

/** The error message of an API answer that is not a 2xx. */
export const errorMessage = (answer: ApiAnswer): string =>
  typeof answer.body?.error?.message === 'string' ? answer.body.error.message : `The API answered ${answer.status}.`;
