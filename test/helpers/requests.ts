import { bearer, type TestApp } from './app';
import { form } from './fixtures';
import { expectErrorBody } from './responseSchemas';

// The raw requests a resource's tests send with a key, and the error check they share.

export type Res = { status: number; body: any; text: string; headers: Record<string, string> };
type Body = string | Record<string, unknown>;

/** Requests to the app `app()` returns (called per request, so the app may start in beforeAll). */
export function requestsOf(app: () => TestApp) {
  const get = (key: string, path: string, headers: Record<string, string> = {}): Promise<Res> =>
    app().http().get(path).set(bearer(key)).set(headers) as unknown as Promise<Res>;
  return {
    get,
    post: (key: string, path: string, body: Body = {}, headers: Record<string, string> = {}): Promise<Res> =>
      app().http().post(path).set(bearer(key)).set(headers).type('form').send(typeof body === 'string' ? body : form(body)) as unknown as Promise<Res>,
    del: (key: string, path: string, headers: Record<string, string> = {}): Promise<Res> =>
      app().http().delete(path).set(bearer(key)).set(headers) as unknown as Promise<Res>,
    /** The account's events of one type, newest first. */
    eventsOf: async (key: string, type: string) => (await get(key, `/v1/events?type=${type}`)).body.data,
  };
}

/** The answer is this error (its members as given) in the public error shape. */
/** A request_log_url as the sandbox shapes it: the public API's `…/test/logs/req_…?t=<unix seconds>`, under PUBLIC_URL. */
export const requestLogUrlPattern = (t: TestApp, requestId: string): RegExp =>
  new RegExp(`^${t.config.publicUrl.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/test/logs/${requestId}\\?t=\\d{10}$`);

export function expectError(res: Res, status: number, error: Record<string, unknown>): void {
  expect({ status: res.status, error: res.body?.error }).toMatchObject({ status, error });
  expectErrorBody(res.body);
}
