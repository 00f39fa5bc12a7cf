import type { TestApp } from './app';
import { form } from './fixtures';

// Driving the console over HTTP (supertest): signing in as a browser does (the sign-in page's
// cookie and form token, then the key), and the session's cookie and CSRF token for later forms.

export interface ConsoleSession {
  /** The `Cookie` header value of the session. */
  readonly cookie: string;
}

/** `name=value` of a Set-Cookie header's cookie called `name`. */
export function setCookie(headers: Record<string, unknown>, name: string): string | undefined {
  const all = (headers['set-cookie'] as string[] | undefined) ?? [];
  return all.find((c) => c.startsWith(`${name}=`));
}

export const cookiePair = (setCookieValue: string): string => setCookieValue.split(';')[0];

/** The hidden CSRF token of the first form of a page. */
export function csrfOf(page: string): string {
  const match = /name="csrf_token" value="([^"]+)"/.exec(page);
  if (!match) throw new Error('no csrf_token in the page');
  return match[1];
}

/** Opens the sign-in form; answers its cookie and form token. */
export async function signInForm(t: TestApp): Promise<{ cookie: string; csrf: string }> {
  const res = await t.http().get('/console/sign-in');
  expect(res.status).toBe(200);
  return { cookie: cookiePair(setCookie(res.headers, 'sandbank_console_signin')!), csrf: csrfOf(res.text) };
}

/** Posts a key to the sign-in form; answers the response. */
export async function postSignIn(t: TestApp, key: string) {
  const { cookie, csrf } = await signInForm(t);
  return t.http().post('/console/sign-in').set('Cookie', cookie).type('form').send(form({ csrf_token: csrf, key }));
}

/** Signs in with `key`; answers the session's cookie. */
export async function signIn(t: TestApp, key: string): Promise<ConsoleSession> {
  const res = await postSignIn(t, key);
  expect(res.status).toBe(303);
  expect(res.headers.location).toBe('/console');
  return { cookie: cookiePair(setCookie(res.headers, 'sandbank_console')!) };
}

/** A console page as the session sees it. */
export const consoleGet = (t: TestApp, session: ConsoleSession, path: string) => t.http().get(path).set('Cookie', session.cookie);

/** Posts a console form with the session's CSRF token (read from `from`, a page of the session). */
export async function consolePost(t: TestApp, session: ConsoleSession, path: string, body: Record<string, unknown>, from = '/console/objects') {
  const page = await consoleGet(t, session, from);
  return t
    .http()
    .post(path)
    .set('Cookie', session.cookie)
    .type('form')
    .send(form({ csrf_token: csrfOf(page.text), ...body }));
}

/** The text of the page's JSON view, unescaped: what the API's JSON looks like, pretty-printed. */
export function jsonTextOf(page: string): string {
  const match = /<pre class="json" data-test="object-json">([\s\S]*?)<\/pre>/.exec(page);
  if (!match) throw new Error('no JSON view in the page');
  return match[1]
    .replace(/<[^>]+>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

/** How many object rows a page lists. */
export const rowCount = (page: string): number => page.split('data-test="object-row"').length - 1;
