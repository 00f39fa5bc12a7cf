import { Prisma } from '../../../generated/prisma/client';
import { hashKey as hashToken } from '../../../kernel/auth';
import { unixSeconds } from '../../../lib/clock';
import { accountApiVersion, automaticCause } from '../../../events/emit';
import { ApiError } from '../../../kernel/errors';
import { html, htmlDocument, raw } from '../../../hosted/html';
import { messagePage, openerOrigin, type PageRequest, type PageResult, type ScriptResult } from '../../../hosted/pages';
import { DOWN_REASONS, INSTITUTIONS, institutionOf, type TestInstitution } from './institutions';
import { runAfterCommit } from './pipeline';
import { serializeAccount, serializeSession, type SessionRow } from './serializer';
import { accountLimitOf, accountsOf, completeSession, eligibleAccounts, LINK_TOKEN_SHAPE, lockSession, type Completion } from './service';

// The hosted bank-link flow a session's `url` (ui_mode=hosted) or its client secret opens: pick
// a test institution, log in (the test institutions' special inputs behave as the public test
// mode's), pick accounts within the session's filters and limits, and return. Nothing is stored
// until the flow ends: every step's form carries what was chosen, and the last one claims the
// link (single use) in the transaction that completes the session (completeSession, as the
// sandbox endpoint does). Opened by the shim (`sandbank-financial-connections.js`, in a popup at
// `…/<client_secret>/popup/<origin>`), the last page hands the session to the opener's origin.

const TITLE = 'Link your bank account';
export const SHIM_PATH = '/financial_connections/sandbank-financial-connections.js';
const MESSAGE_TYPE = 'sandbank:financial_connections';

const invalidLink = (nonce: string) => messagePage(nonce, 'This link is not valid', 'Ask the site that sent you here for a new bank-link session.', 404);
const usedLink = (nonce: string) => messagePage(nonce, 'This link has already been used', 'A bank-link session works once. Ask the site that sent you here for a new one.', 410);
const expiredLink = (nonce: string) => messagePage(nonce, 'This link has expired', 'Bank-link sessions expire after an hour. Ask the site that sent you here for a new one.', 410);


/** The link's session while the link can still be used, or the page that says why not. */
async function linkedSession(req: PageRequest): Promise<SessionRow | PageResult> {
  const token = req.pathParams.token ?? '';
  if (!LINK_TOKEN_SHAPE.test(token)) return invalidLink(req.nonce);
  const link = await req.deps.prisma.financialConnectionsLink.findUnique({ where: { tokenHash: hashToken(token) }, include: { session: true } });
  if (!link) return invalidLink(req.nonce);
  if (link.usedAt !== null || link.session.status !== 'pending') return usedLink(req.nonce);
  if (link.expiresAt <= unixSeconds(req.deps.clock)) return expiredLink(req.nonce);
  return link.session;
}

// Re-prompts (a wrong password, a bank that is down) are 200: the flow goes on.
const page = (req: PageRequest, body: ReturnType<typeof html>, script?: string): PageResult => ({
  html: htmlDocument({ title: TITLE, nonce: req.nonce, body, script }),
});

/** Hidden fields carrying the choices made so far. */
const carried = (fields: Record<string, string | undefined>) =>
  Object.entries(fields).map(([name, value]) => (value === undefined ? '' : html`<input type="hidden" name="${name}" value="${value}">`));

const cancelButton = html`<button type="submit" name="step" value="cancel" id="cancel" class="secondary" formnovalidate>Cancel</button>`;

function institutionsPage(req: PageRequest, session: SessionRow, error?: string): PageResult {
  const choices = INSTITUTIONS.map(
    (i) => html`<button type="submit" name="institution" value="${i.id}" id="institution-${i.id}" class="secondary">${i.name}</button>`,
  );
  return page(
    req,
    html`<h1>${TITLE}</h1>
<p class="muted">Session <code>${session.id}</code>. In test mode, pick a test institution; no real bank is contacted.</p>
${error ? html`<p class="errors" id="error">${error}</p>` : ''}
<form method="post">
<input type="hidden" name="step" value="login">
<fieldset><legend>Select your bank</legend>${choices}</fieldset>
</form>
<form method="post">${cancelButton}</form>`,
  );
}

/** What the login step asks next for Bank (Non-OAuth): its special inputs, as the public test mode's. */
type LoginOutcome = 'ok' | 'error' | 'incorrect' | 'mfa' | 'security_question';

function loginOutcome(form: Record<string, unknown>): LoginOutcome {
  const values = ['username', 'password'].map((f) => String(form[f] ?? '').trim().toLowerCase());
  for (const special of ['error', 'incorrect', 'mfa', 'security_question'] as const) if (values.includes(special)) return special;
  return 'ok';
}

function loginPage(req: PageRequest, institution: TestInstitution, prompt?: { error?: string; extra?: 'mfa' | 'security_question' }): PageResult {
  const fields =
    institution.login === 'credentials'
      ? prompt?.extra === 'mfa'
        ? html`<label for="code">Enter the code we sent to your phone</label><input id="code" name="code" autocomplete="one-time-code" required>`
        : prompt?.extra === 'security_question'
          ? html`<label for="answer">What was the name of your first pet?</label><input id="answer" name="answer" required>`
          : html`<label for="username">Username</label><input id="username" name="username" autocomplete="off" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="off" required>
<p class="muted">Any values log in. Test inputs: <code>error</code> ends the flow with an error, <code>incorrect</code> lets you retry, <code>mfa</code> and <code>security_question</code> ask for more.</p>`
      : institution.login === 'oauth'
        ? html`<p>${institution.name} asks you to authorize access to your accounts.</p>`
        : html`<p class="muted">This test institution needs no credentials.</p>`;
  return page(
    req,
    html`<h1>Log in to ${institution.name}</h1>
${prompt?.error ? html`<p class="errors" id="error">${prompt.error}</p>` : ''}
<form method="post">
${carried({ institution: institution.id, verified: prompt?.extra ? 'credentials' : undefined })}
<fieldset>${fields}</fieldset>
<button type="submit" name="step" value="accounts" id="login">${institution.login === 'oauth' ? 'Authorize' : 'Continue'}</button>
</form>
<form method="post"><button type="submit" name="step" value="start" class="secondary" formnovalidate>Choose another bank</button></form>
<form method="post">${cancelButton}</form>`,
  );
}

function accountsPage(req: PageRequest, session: SessionRow, institution: TestInstitution, error?: string): PageResult {
  const eligible = eligibleAccounts(session, institution);
  const limit = accountLimitOf(session);
  const boxes = eligible.map(
    (a, i) => html`<label><input type="checkbox" name="accounts[]" value="${a.id}" id="account-${a.id}"${raw(i < limit ? ' checked' : '')}> ${a.display_name} ••••${a.last4}</label>`,
  );
  const body =
    eligible.length === 0
      ? html`<p class="errors" id="error">No account at ${institution.name} can be linked for this request.</p>
<form method="post"><button type="submit" name="step" value="start" class="secondary">Choose another bank</button></form>`
      : html`<form method="post">
${carried({ institution: institution.id })}
<fieldset><legend>Select accounts (at most ${limit})</legend>${boxes}</fieldset>
<button type="submit" name="step" value="link" id="link">Link accounts</button>
</form>`;
  return page(req, html`<h1>Choose accounts at ${institution.name}</h1>${error ? html`<p class="errors" id="error">${error}</p>` : ''}${body}<form method="post">${cancelButton}</form>`);
}

/** GET /hosted/financial_connections/sessions/:token(/popup/:origin) */
export async function showLinkPage(req: PageRequest): Promise<PageResult> {
  const origin = openerOrigin(req);
  if (origin !== null && typeof origin !== 'string') return origin;
  const found = await linkedSession(req);
  if (!('id' in found)) return found;
  return institutionsPage(req, found);
}

/** POST /hosted/financial_connections/sessions/:token(/popup/:origin): one step of the flow. */
export async function submitLinkPage(req: PageRequest): Promise<PageResult> {
  const origin = openerOrigin(req);
  if (origin !== null && typeof origin !== 'string') return origin;
  const found = await linkedSession(req);
  if (!('id' in found)) return found;
  const step = String(req.form.step ?? '');
  if (step === 'cancel') return finish(req, origin, { outcome: 'cancelled' });
  if (step === 'start') return institutionsPage(req, found);
  const institution = institutionOf(String(req.form.institution ?? ''));
  if (!institution) return institutionsPage(req, found, 'Choose a bank from the list.');
  if (step === 'login') {
    if (institution.down) return institutionsPage(req, found, `${institution.name}: ${DOWN_REASONS[institution.down]}`);
    return loginPage(req, institution);
  }
  if (step === 'accounts') {
    if (institution.login === 'credentials' && req.form.verified !== 'credentials') {
      const outcome = loginOutcome(req.form);
      if (outcome === 'error') return finish(req, origin, { outcome: 'failed', reason: 'login_error' });
      if (outcome === 'incorrect') return loginPage(req, institution, { error: 'The username or password is incorrect. Try again.' });
      if (outcome === 'mfa' || outcome === 'security_question') return loginPage(req, institution, { extra: outcome });
    }
    return accountsPage(req, found, institution);
  }
  if (step === 'link') {
    // Forms are parsed without arrays (as API bodies are, before validation): accounts[] is {0: …, 1: …}.
    const picked = req.form.accounts;
    const chosen = typeof picked === 'object' && picked !== null ? Object.values(picked).map(String) : [];
    if (chosen.length === 0) return accountsPage(req, found, institution, 'Select at least one account.');
    if (chosen.length > accountLimitOf(found)) return accountsPage(req, found, institution, `Select at most ${accountLimitOf(found)} accounts.`);
    return finish(req, origin, { outcome: 'succeeded', institution: institution.id, accounts: chosen });
  }
  return institutionsPage(req, found);
}

/**
 * Ends the flow: claims the link and completes the session in one transaction, then returns to
 * the session's return URL, or hands the session to the shim's opener, or says it is done.
 */
async function finish(req: PageRequest, origin: string | null, completion: Completion): Promise<PageResult> {
  const { deps } = req;
  const token = req.pathParams.token ?? '';
  const now = unixSeconds(deps.clock);
  const completed = await deps.prisma
    .$transaction(async (tx) => {
      // One conditional UPDATE claims the link, so of two submissions exactly one gets through.
      const claimed = await tx.$queryRaw<{ session_id: string }[]>`
        UPDATE financial_connections_links SET used_at = ${new Date(deps.clock.nowMs())}
        WHERE token_hash = ${hashToken(token)} AND used_at IS NULL AND expires_at > ${now}
        RETURNING session_id`;
      if (claimed.length === 0) return undefined;
      const session = await lockSession(tx, Prisma.sql`id = ${claimed[0].session_id} AND status = 'pending'`);
      if (!session) return undefined;
      const version = await accountApiVersion(tx, session.accountId, deps.config.defaultApiVersion);
      return completeSession(tx, deps, session, completion, automaticCause, version);
    })
    .catch((err) => {
      if (err instanceof ApiError && err.status < 500) return { error: err.message };
      throw err;
    });
  if (completed === undefined) return usedLink(req.nonce);
  if ('error' in completed) return messagePage(req.nonce, 'These accounts could not be linked', completed.error, 400);
  await runAfterCommit(deps.queues, completed.after);
  const session = completed.row;
  if (origin) return handOff(req, origin, session);
  const returnUrl = session.hostedReturnUrl ?? session.returnUrl;
  if (returnUrl) return { redirect: returnUrl };
  const done = session.status === 'succeeded' ? `Linked ${completed.accounts.length} account(s). You can close this page.` : 'Nothing was linked. You can close this page.';
  return messagePage(req.nonce, session.status === 'succeeded' ? 'Accounts linked' : 'Bank linking ended', done, 200);
}

/** The shim's last page: the session (its `accounts` an array, as Stripe.js answers) goes to the opener, then the window closes. */
async function handOff(req: PageRequest, origin: string, row: SessionRow): Promise<PageResult> {
  const accounts = await accountsOf(req.deps.prisma, row);
  const session = { ...serializeSession(row, []), accounts: accounts.map(serializeAccount) };
  // JSON inside a script: `<` escaped so no value can close the script element.
  const data = JSON.stringify({ type: MESSAGE_TYPE, session }).replace(/</g, '\\u003c');
  const script = `(function(){var data=${data};if(window.opener){window.opener.postMessage(data,${JSON.stringify(origin)});}setTimeout(function(){window.close();},100);})();`;
  return page(req, html`<h1>${row.status === 'succeeded' ? 'Accounts linked' : 'Bank linking ended'}</h1><p>You can close this window.</p>`, script);
}

/** GET /hosted/financial_connections/sandbank-financial-connections.js: stands in for Stripe.js's collectFinancialConnectionsAccounts. */
export async function serveShim(req: PageRequest): Promise<ScriptResult> {
  const base = `${req.deps.config.publicUrl}/hosted/financial_connections/sessions/`;
  return { javascript: SHIM.replace('__BASE__', JSON.stringify(base)).replace('__TYPE__', JSON.stringify(MESSAGE_TYPE)) };
}

// Opens the hosted flow in a popup for the session's client secret and resolves as Stripe.js does:
// `{financialConnectionsSession}` (its `accounts` an array), or `{error}` when the window closes first.
const SHIM = `(function () {
  var BASE = __BASE__;
  var TYPE = __TYPE__;
  function collectFinancialConnectionsAccounts(options) {
    return new Promise(function (resolve, reject) {
      var secret = options && options.clientSecret;
      if (typeof secret !== 'string' || !/^fcsess_client_secret_[A-Za-z0-9]+$/.test(secret)) {
        reject(new Error('collectFinancialConnectionsAccounts needs {clientSecret}: a session\\'s client_secret'));
        return;
      }
      var url = BASE + secret + '/popup/' + encodeURIComponent(window.location.origin);
      var popup = window.open(url, 'sandbank-financial-connections', 'width=520,height=760');
      if (!popup) {
        resolve({ error: { type: 'validation_error', message: 'The bank-link window could not be opened (a popup blocker?).' } });
        return;
      }
      var done = false;
      function onMessage(event) {
        if (event.origin !== new URL(BASE).origin || !event.data || event.data.type !== TYPE) return;
        done = true;
        cleanup();
        resolve({ financialConnectionsSession: event.data.session });
      }
      var timer = setInterval(function () {
        if (!done && popup.closed) {
          cleanup();
          resolve({ error: { type: 'validation_error', message: 'The bank-link window was closed before the flow ended.' } });
        }
      }, 300);
      function cleanup() {
        clearInterval(timer);
        window.removeEventListener('message', onMessage);
      }
      window.addEventListener('message', onMessage);
    });
  }
  var api = { collectFinancialConnectionsAccounts: collectFinancialConnectionsAccounts };
  window.SandbankFinancialConnections = api;
  /** Stripe(publishableKey)-shaped, so a front end can swap one line. */
  window.Sandbank = function () { return api; };
})();
`;
