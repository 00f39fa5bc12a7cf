import { aheadClock, bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { createAccount, createCustomer, form } from '../helpers/fixtures';
import { hashKey, createPlatformAccount, maskKey } from '../../src/kernel/auth';
import { clearedCookie, sessionCookie } from '../../src/console/sessions';
import type { Deps } from '../../src/kernel/route';
import { expectNowhereAtRest } from '../helpers/atRest';
import { consoleGet, consolePost, cookiePair, csrfOf, postSignIn, setCookie, signIn, signInForm } from '../helpers/console';

// The console's sessions: signing in with a key (the API's authenticator decides), the cookie's
// flags, CSRF on every form, sign-out, expiry, and the two refusals between the console and the
// API (the console's cookie opens no API endpoint; an API key acts on no console form).

const clock = aheadClock();
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ CONSOLE_SESSION_IDLE_SECONDS: '600', CONSOLE_SESSION_MAX_SECONDS: '3600' }, { clock });
});
afterAll(async () => {
  await t?.close();
});
beforeEach(() => {
  clock.aheadMs = 0;
});

const sessionRows = (accountId: string) => t.runtime.prisma.consoleSession.findMany({ where: { accountId } });
const accountOf = async (key: string) => (await t.http().get('/v1/account').set(bearer(key))).body.id as string;

describe('signing in', () => {
  test('the console sends a visitor without a session to the sign-in form, whose page has a nonce CSP, no third-party origin and no CORS', async () => {
    const home = await t.http().get('/console');
    expect(home.status).toBe(303);
    expect(home.headers.location).toBe('/console/sign-in');
    const page = await t.http().get('/console/sign-in');
    expect(page.status).toBe(200);
    expect(page.text).toContain('data-test="console-key"');
    expect(page.text).toContain('data-test="console-signin"');
    const csp = page.headers['content-security-policy'];
    expect(csp).toMatch(/^default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-[A-Za-z0-9+/=]+'; img-src data:; base-uri 'none'; frame-ancestors 'none'$/);
    expect(csp).not.toMatch(/https?:/);
    expect(page.headers['access-control-allow-origin']).toBeUndefined();
    expect(page.headers['cache-control']).toBe('no-store');
    // No asset from anywhere: no src= or stylesheet link at all.
    expect(page.text).not.toMatch(/<(script|img|link)[^>]+(src|href)="https?:/);
  });

  test('a secret key signs in: an HttpOnly, SameSite=Strict cookie of /console holding a random token; the key is in no cookie, page or log', async () => {
    const key = newTestKey();
    const res = await postSignIn(t, key);
    expect(res.status).toBe(303);
    const cookie = setCookie(res.headers, 'sandbank_console')!;
    expect(cookie).toMatch(/^sandbank_console=[A-Za-z0-9_-]{43}; Path=\/console; HttpOnly; SameSite=Strict; Max-Age=3600$/);
    const home = await consoleGet(t, { cookie: cookiePair(cookie) }, '/console');
    expect(home.status).toBe(200);
    expect(home.text).toContain(maskKey(key));
    expect(home.text).not.toContain(key);
    expect(cookie).not.toContain(key.slice(8));
    expect(t.logText()).not.toContain(key.slice(8));
    // The row keeps the token's hash and the key sealed, nothing in clear.
    const [row] = await sessionRows(await accountOf(key));
    expect(row.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.tokenHash).not.toBe(cookiePair(cookie).split('=')[1]);
    expect(row.sealedKey).toMatch(/^sealed:v1:/);
    expect(JSON.stringify(row)).not.toContain(key.slice(8));
    // Nor anywhere else in the database, a dump included.
    await expectNowhereAtRest(t, key.slice(8));
  });

  test('the cookie is Secure when PUBLIC_URL is https', () => {
    const deps = { config: { publicUrl: 'https://sandbox.example.com', consoleSessionMaxSeconds: 60 } } as unknown as Deps;
    expect(sessionCookie(deps, 'tok')).toBe('sandbank_console=tok; Path=/console; HttpOnly; SameSite=Strict; Secure; Max-Age=60');
    expect(clearedCookie(deps)).toBe('sandbank_console=; Path=/console; HttpOnly; SameSite=Strict; Secure; Max-Age=0');
  });

  test('a restricted key signs in; a publishable key, a live key, a malformed key and an empty field are refused on the form, the key never echoed', async () => {
    await signIn(t, `rk_test_${newTestKey().slice(8)}`);
    for (const [key, message] of [
      [`pk_test_${newTestKey().slice(8)}`, 'A publishable key can’t sign in'],
      ['sk_live_abcdefgh1234', 'Live mode is disabled'],
      ['not a key', 'Invalid API Key provided'],
      ['', 'Enter a secret'],
    ]) {
      const res = await postSignIn(t, key);
      expect(res.status).toBe(401);
      expect(res.text).toContain(message);
      if (key.length > 8) expect(res.text).not.toContain(key);
      expect(setCookie(res.headers, 'sandbank_console')).toBeUndefined();
    }
  });

  test('the sign-in form refuses a post without its own cookie and token (another site posting a key)', async () => {
    const { cookie, csrf } = await signInForm(t);
    const key = newTestKey();
    const noCookie = await t.http().post('/console/sign-in').type('form').send(form({ csrf_token: csrf, key }));
    expect(noCookie.status).toBe(403);
    const wrongToken = await t.http().post('/console/sign-in').set('Cookie', cookie).type('form').send(form({ csrf_token: 'x'.repeat(32), key }));
    expect(wrongToken.status).toBe(403);
    expect(setCookie(noCookie.headers, 'sandbank_console')).toBeUndefined();
    expect(setCookie(wrongToken.headers, 'sandbank_console')).toBeUndefined();
  });

  test('AUTH_MODE=registered: only a registered key signs in', async () => {
    const registered = await startTestApp({ AUTH_MODE: 'registered' });
    try {
      const key = newTestKey();
      const refused = await postSignIn(registered, key);
      expect(refused.status).toBe(401);
      expect(refused.text).toContain(`Invalid API Key provided: ${maskKey(key)}`);
      await createPlatformAccount(registered.runtime.prisma, registered.runtime.clock, { keyHash: hashKey(key), hint: maskKey(key), origin: 'registered' });
      const session = await signIn(registered, key);
      expect((await consoleGet(registered, session, '/console')).status).toBe(200);
    } finally {
      await registered.close();
    }
  });
});

describe('forms and sign-out', () => {
  test('a form posted without the session’s CSRF token is refused and changes nothing; with it, sign-out ends the session', async () => {
    const key = newTestKey();
    const session = await signIn(t, key);
    const without = await t.http().post('/console/sign-out').set('Cookie', session.cookie).type('form').send(form({}));
    expect(without.status).toBe(403);
    const wrong = await t.http().post('/console/sign-out').set('Cookie', session.cookie).type('form').send(form({ csrf_token: 'A'.repeat(43) }));
    expect(wrong.status).toBe(403);
    // Another session's token is no better.
    const other = await signIn(t, key);
    const otherToken = csrfOf((await consoleGet(t, other, '/console/objects')).text);
    const crossed = await t.http().post('/console/sign-out').set('Cookie', session.cookie).type('form').send(form({ csrf_token: otherToken }));
    expect(crossed.status).toBe(403);
    expect((await consoleGet(t, session, '/console')).status).toBe(200);

    const out = await consolePost(t, session, '/console/sign-out', {});
    expect(out.status).toBe(303);
    expect(out.headers.location).toBe('/console/sign-in');
    expect(setCookie(out.headers, 'sandbank_console')).toMatch(/^sandbank_console=; Path=\/console; HttpOnly; SameSite=Strict; Max-Age=0$/);
    const after = await consoleGet(t, session, '/console');
    expect(after.status).toBe(303);
    expect(after.headers.location).toBe('/console/sign-in');
    // The other session lives on.
    expect((await consoleGet(t, other, '/console')).status).toBe(200);
  });

  test('a form action with an API key is refused without acting, even with the session’s cookie and token', async () => {
    const key = newTestKey();
    const session = await signIn(t, key);
    const csrf = csrfOf((await consoleGet(t, session, '/console/objects')).text);
    const res = await t.http().post('/console/sign-out').set('Cookie', session.cookie).set(bearer(key)).type('form').send(form({ csrf_token: csrf }));
    expect(res.status).toBe(403);
    expect(res.text).toContain('API keys are not accepted here');
    expect((await consoleGet(t, session, '/console')).status).toBe(200);
    // Nor does a key alone sign anything in.
    const signin = await t.http().post('/console/sign-in').set(bearer(key)).type('form').send(form({ key }));
    expect(signin.status).toBe(403);
  });

  test('the console’s cookie opens no API endpoint: a /v1 request with only the cookie answers 401 as without it', async () => {
    const key = newTestKey();
    const session = await signIn(t, key);
    for (const [method, path] of [
      ['get', '/v1/customers'],
      ['post', '/v1/customers'],
      ['get', '/v1/account'],
    ] as const) {
      const res = await t.http()[method](path).set('Cookie', session.cookie);
      expect(res.status).toBe(401);
      expect(res.body.error.message).toMatch(/^You did not provide an API key/);
    }
  });

  test('a POST without a session is refused (401) and a GET goes to sign-in', async () => {
    const res = await t.http().post('/console/view-as').type('form').send(form({ account: '' }));
    expect(res.status).toBe(401);
    const page = await t.http().get('/console/objects?type=customer').set('Cookie', 'sandbank_console=nosuchtoken');
    expect(page.status).toBe(303);
    expect(page.headers.location).toBe('/console/sign-in');
  });
});

describe('expiry', () => {
  test('a session idle longer than CONSOLE_SESSION_IDLE_SECONDS ends, its row deleted; requests keep it alive until CONSOLE_SESSION_MAX_SECONDS', async () => {
    const key = newTestKey();
    const session = await signIn(t, key);
    const account = await accountOf(key);
    clock.aheadMs = 500_000;
    expect((await consoleGet(t, session, '/console/objects')).status).toBe(200);
    clock.aheadMs = 1_000_000; // 500 s after the last request: still within the idle time
    expect((await consoleGet(t, session, '/console/objects')).status).toBe(200);
    clock.aheadMs = 1_700_000; // 700 s idle
    const idle = await consoleGet(t, session, '/console/objects');
    expect(idle.status).toBe(303);
    expect(idle.headers.location).toBe('/console/sign-in');
    expect(await sessionRows(account)).toHaveLength(0);

    const busy = await signIn(t, key);
    for (let s = 500; s < 3600; s += 500) {
      clock.aheadMs = 1_700_000 + s * 1000;
      expect((await consoleGet(t, busy, '/console/objects')).status).toBe(200);
    }
    clock.aheadMs = 1_700_000 + 3600_000;
    expect((await consoleGet(t, busy, '/console/objects')).status).toBe(303);
  });
});

describe('view as', () => {
  test('the selector offers the platform’s connected accounts; choosing one shows its objects; an account the key may not act as is refused', async () => {
    const key = newTestKey();
    const connected = (await createAccount(t, key)).id as string;
    expect(connected).toMatch(/^acct_/);
    const theirs = (await t.http().post('/v1/customers').set(bearer(key)).set('Stripe-Account', connected).type('form').send(form({ name: 'Connected customer' }))).body.id;
    const session = await signIn(t, key);
    const home = await consoleGet(t, session, '/console');
    expect(home.text).toContain(`<option value="${connected}"`);
    expect((await consoleGet(t, session, `/console/objects/${theirs}`)).status).toBe(404);

    const switched = await consolePost(t, session, '/console/view-as', { account: connected });
    expect(switched.status).toBe(303);
    const shown = await consoleGet(t, session, `/console/objects/${theirs}`);
    expect(shown.status).toBe(200);
    expect(shown.text).toContain('Connected customer');

    const stranger = (await createAccount(t, newTestKey())).id;
    const refused = await consolePost(t, session, '/console/view-as', { account: stranger });
    expect(refused.status).toBe(403);
    const [row] = await sessionRows(await accountOf(key));
    expect(row.stripeAccount).toBe(connected);

    expect((await consolePost(t, session, '/console/view-as', { account: '' })).status).toBe(303);
    expect((await consoleGet(t, session, `/console/objects/${theirs}`)).status).toBe(404);
  });

  test('when the account viewed as is deleted, the page says so and the session goes back to the key’s own account', async () => {
    const key = newTestKey();
    const connected = (await createAccount(t, key)).id as string;
    const own = (await createCustomer(t, key, { name: 'Platform customer' })).id;
    const session = await signIn(t, key);
    expect((await consolePost(t, session, '/console/view-as', { account: connected })).status).toBe(303);
    expect((await t.http().delete(`/v1/accounts/${connected}`).set(bearer(key))).status).toBe(200);
    const refused = await consoleGet(t, session, '/console/objects?type=customer');
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('does not have access to account');
    const [row] = await sessionRows(await accountOf(key));
    expect(row.stripeAccount).toBeNull();
    const back = await consoleGet(t, session, '/console/objects?type=customer');
    expect(back.status).toBe(200);
    expect(back.text).toContain(own);
  });
});
