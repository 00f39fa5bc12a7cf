import { randomBytes } from 'node:crypto';
import { ApiError } from '../kernel/errors';
import { html } from '../hosted/html';
import type { PageRequest, PageResult } from '../hosted/pages';
import { CONSOLE_PREFIX, plainPage, type ConsolePage, type ConsoleShared } from './pages';
import { clearedCookie, cookieValue, sessionCookie, tokenMatches } from './sessions';

// Signing in and out, and choosing the account to view as. The sign-in form has no session yet,
// so its CSRF token is a double-submit one: a random value in a short-lived cookie of the sign-in
// path and the same value in the form (another site can make a browser post, but can't read or
// set the cookie, so it can't sign a browser in to its own key).

const SIGN_IN_COOKIE = 'sandbank_console_signin';
const SIGN_IN_PATH = `${CONSOLE_PREFIX}/sign-in`;

function signInForm(req: PageRequest, error?: string): PageResult {
  const token = randomBytes(24).toString('base64url');
  const secure = req.deps.config.publicUrl.startsWith('https:') ? '; Secure' : '';
  const body = html`<section class="card signin">
<h1>Sign in to the console</h1>
${error ? html`<div class="error" role="alert">${error}</div>` : ''}
<form method="post" action="${SIGN_IN_PATH}">
<input type="hidden" name="csrf_token" value="${token}">
<label for="key">Secret or restricted test key</label>
<input id="key" name="key" type="password" autocomplete="off" spellcheck="false" placeholder="sk_test_…" required data-test="console-key">
<button type="submit" data-test="console-signin">Sign in</button>
</form>
<p class="muted">The key stays on the server, sealed, for as long as the session lasts; the console calls the API with it, so it sees and does what the key's API calls may.</p>
</section>`;
  return plainPage(req.nonce, 'Sign in', body, error ? 401 : 200, {
    'Set-Cookie': `${SIGN_IN_COOKIE}=${token}; Path=${SIGN_IN_PATH}; HttpOnly; SameSite=Strict; Max-Age=3600${secure}`,
  });
}

async function showSignIn(req: PageRequest, shared: ConsoleShared): Promise<PageResult> {
  if (await shared.sessions.find(req.cookie)) return { redirect: CONSOLE_PREFIX };
  return signInForm(req);
}

async function submitSignIn(req: PageRequest, shared: ConsoleShared): Promise<PageResult> {
  if (!tokenMatches(req.form.csrf_token, cookieValue(req.cookie, SIGN_IN_COOKIE))) {
    return plainPage(req.nonce, 'This form has expired', html`<section class="card"><h1>This form has expired</h1><p><a href="${SIGN_IN_PATH}">Sign in again</a>.</p></section>`, 403);
  }
  const key = typeof req.form.key === 'string' ? req.form.key.trim() : '';
  if (key === '') return signInForm(req, 'Enter a secret (sk_test_…) or restricted (rk_test_…) key.');
  let identity;
  try {
    identity = await shared.identify(key);
  } catch (err) {
    // The authenticator's own refusal (unknown in AUTH_MODE=registered, malformed, live): it shows the key masked only.
    if (err instanceof ApiError && err.status === 401) return signInForm(req, err.message);
    throw err;
  }
  if (identity.publishable) return signInForm(req, 'A publishable key can’t sign in: use a secret (sk_test_…) or restricted (rk_test_…) key.');
  const token = await shared.sessions.create(key, identity.platformAccountId, identity.keyHint);
  return { redirect: CONSOLE_PREFIX, headers: { 'Set-Cookie': sessionCookie(req.deps, token) } };
}

export const signInPages: readonly ConsolePage[] = [
  { method: 'get', path: '/sign-in', public: true, handler: showSignIn },
  { method: 'post', path: '/sign-in', public: true, handler: submitSignIn },
  {
    // The registry checked the session and its CSRF token before this runs.
    method: 'post',
    path: '/sign-out',
    handler: async (ctx) => {
      await ctx.shared.sessions.delete(ctx.session);
      return { redirect: SIGN_IN_PATH, headers: { 'Set-Cookie': clearedCookie(ctx.req.deps) } };
    },
  },
  {
    method: 'post',
    path: '/view-as',
    handler: async (ctx) => {
      const wanted = typeof ctx.req.form.account === 'string' ? ctx.req.form.account.trim() : '';
      const own = wanted === '' || wanted === ctx.session.accountId;
      if (!own && !(await ctx.shared.mayActAs(ctx.session.key, wanted))) {
        return ctx.page('Not allowed', html`<section class="card"><h1>Not allowed</h1><p>This key can’t act as ${wanted}.</p></section>`, { status: 403 });
      }
      await ctx.shared.sessions.viewAs(ctx.session, own ? null : wanted);
      return { redirect: CONSOLE_PREFIX };
    },
  },
];
