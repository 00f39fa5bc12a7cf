import { html, type Html } from '../hosted/html';
import type { PageResult } from '../hosted/pages';
import type { ApiAnswer } from './api';
import { csrfField, objectLink, table, when } from './layout';
import { errorBox } from './objects';
import type { ConsoleContext, ConsolePage } from './pages';

// Test outcomes: what a customer or a bank would answer in live mode, answered here through the
// sandbox's own operations (so the intent, session or account moves on exactly as the hosted
// page's buttons make it): pending 3-D Secure challenges (complete or fail), identity sessions
// awaiting input (submit an outcome), pending Financial Connections sessions (complete with a
// test institution), and the forwarding requests with their request and response as the API masks them.

const SHOWN = 25;
const FORWARDS_SHOWN = 10;
const PA = '/sandbox/v1/payment_authentications';
const VS = '/v1/identity/verification_sessions';
const FCS = '/sandbox/v1/financial_connections/sessions';
const SUBMIT_OPERATION = 'PostSandboxIdentityVerificationSessionsSessionSubmit';

interface Authentication {
  id: string;
  created: number;
  expires_at: number;
  payment_intent: string | null;
  setup_intent: string | null;
}
interface VerificationSession {
  id: string;
  type: string;
  created: number;
  last_error: { code: string | null } | null;
}
interface FcSession {
  id: string;
  account_holder: { customer?: string; account?: string } | null;
  permissions: string[];
}
interface Institution {
  id: string;
  name: string;
  down: string | null;
}
interface Forward {
  id: string;
  created: number;
  url: string;
  payment_method: string;
  request_details: unknown;
  response_details: unknown;
}

/** What an action just did, said at the top of the page after its redirect: a sentence of ours around an id and a status. */
const DONE: Readonly<Record<string, string>> = {
  authentication: '3-D Secure authentication answered:',
  verification: 'Verification session submitted:',
  financial_connections: 'Financial Connections session completed:',
};
const ID = /^[a-z]+_[A-Za-z0-9]{1,64}$/;
function doneBox(query: Readonly<Record<string, string>>): Html | string {
  const what = DONE[query.done ?? ''];
  if (!what || !ID.test(query.id ?? '') || !/^[a-z_]{1,40}$/.test(query.status ?? '')) return '';
  return html`<section class="card" role="status" data-test="outcome-done">${what} <span class="mono">${query.id}</span> is <strong>${query.status}</strong>${
    query.intent && ID.test(query.intent) ? html` (for ${objectLink(query.intent)})` : ''
  }.</section>`;
}

const actionForm = (action: string, ctx: ConsoleContext, body: Html): Html => html`<form method="post" action="${action}" style="display:inline-flex;gap:6px;align-items:center;margin:0">${csrfField(ctx.session)}${body}</form>`;

async function outcomesPage(ctx: ConsoleContext, failed?: ApiAnswer): Promise<PageResult> {
  const [authentications, sessions, fcSessions, institutions, forwards] = await Promise.all([
    ctx.call('GET', PA, { status: 'pending', limit: SHOWN }),
    ctx.call('GET', VS, { status: 'requires_input', limit: SHOWN }),
    ctx.call('GET', FCS, { status: 'pending', limit: SHOWN }),
    ctx.call('GET', '/sandbox/v1/financial_connections/institutions'),
    ctx.call('GET', '/v1/forwarding/requests', { limit: FORWARDS_SHOWN }),
  ]);
  const outcomes = ctx.catalog.paramValues(SUBMIT_OPERATION, 'outcome');
  const banks = institutions.status === 200 ? (institutions.body.data as Institution[]) : [];
  const body = html`<h1>Test outcomes</h1>
${failed ? errorBox(failed) : ''}
${doneBox(ctx.req.query)}
<section class="card" data-test="authentications"><h2>3-D Secure authentications awaiting an answer</h2>
<p class="muted">What the customer’s bank page would answer: completing pays (or sets up) the intent, failing sends it back to <code>requires_payment_method</code>.</p>
${authentications.status === 200 ? '' : errorBox(authentications)}
${table(
  [
    { heading: 'Authentication', cell: (a: Authentication) => html`<span class="mono">${a.id}</span>` },
    { heading: 'For', cell: (a: Authentication) => (a.payment_intent ? objectLink(a.payment_intent) : a.setup_intent ? objectLink(a.setup_intent) : '') },
    { heading: 'Created (UTC)', cell: (a: Authentication) => when(a.created) },
    { heading: 'Expires (UTC)', cell: (a: Authentication) => when(a.expires_at) },
    {
      heading: 'Answer',
      cell: (a: Authentication) => html`${actionForm(
        `/console/outcomes/authentications/${encodeURIComponent(a.id)}/complete`,
        ctx,
        html`<button type="submit" data-test="authentication-complete">Complete</button>`,
      )} ${actionForm(`/console/outcomes/authentications/${encodeURIComponent(a.id)}/fail`, ctx, html`<button type="submit" class="secondary" data-test="authentication-fail">Fail</button>`)}`,
    },
  ],
  authentications.status === 200 ? (authentications.body.data as Authentication[]) : [],
  'No 3-D Secure authentication is waiting.',
)}
</section>
<section class="card" data-test="verifications"><h2>Identity verification sessions awaiting input</h2>
${sessions.status === 200 ? '' : errorBox(sessions)}
${table(
  [
    { heading: 'Session', cell: (s: VerificationSession) => objectLink(s.id) },
    { heading: 'Type', cell: (s: VerificationSession) => s.type },
    { heading: 'Last error', cell: (s: VerificationSession) => s.last_error?.code ?? '' },
    { heading: 'Created (UTC)', cell: (s: VerificationSession) => when(s.created) },
    {
      heading: 'Submit',
      cell: (s: VerificationSession) =>
        actionForm(
          `/console/outcomes/verifications/${encodeURIComponent(s.id)}/submit`,
          ctx,
          html`<select name="outcome" aria-label="Outcome" data-test="verification-outcome">${outcomes.map((o) => html`<option value="${o}">${o}</option>`)}</select>
<button type="submit" data-test="verification-submit">Submit</button>`,
        ),
    },
  ],
  sessions.status === 200 ? (sessions.body.data as VerificationSession[]) : [],
  'No verification session is awaiting input.',
)}
<p class="muted">A failure must belong to a check the session runs (the API says which); <code>abandoned</code> is the user leaving.</p>
</section>
<section class="card" data-test="financial-connections"><h2>Financial Connections sessions awaiting the customer</h2>
<p class="muted">Complete a pending session with a test institution: every account of it the session allows is linked; a down institution fails the session.</p>
${fcSessions.status === 200 ? '' : errorBox(fcSessions)}${institutions.status === 200 ? '' : errorBox(institutions)}
${table(
  [
    { heading: 'Session', cell: (f: FcSession) => html`<span class="mono">${f.id}</span>` },
    { heading: 'Account holder', cell: (f: FcSession) => (f.account_holder?.customer ? objectLink(f.account_holder.customer) : f.account_holder?.account ? objectLink(f.account_holder.account) : '') },
    { heading: 'Permissions', cell: (f: FcSession) => f.permissions.join(', ') },
    {
      heading: 'Complete with',
      cell: (f: FcSession) =>
        actionForm(
          `/console/outcomes/financial_connections/${encodeURIComponent(f.id)}/complete`,
          ctx,
          html`<select name="institution" aria-label="Institution" data-test="fc-institution">${banks.map((b) => html`<option value="${b.id}">${b.name}${b.down ? ` (down: ${b.down})` : ''}</option>`)}</select>
<button type="submit" data-test="fc-complete">Complete</button>`,
        ),
    },
  ],
  fcSessions.status === 200 ? (fcSessions.body.data as FcSession[]) : [],
  'No Financial Connections session is pending.',
)}
</section>
<section class="card" data-test="forwards"><h2>Forwarding requests</h2>
<p class="muted">The latest ${FORWARDS_SHOWN}, each request and response as the API shows them (card details and secrets masked).</p>
${forwards.status === 200 ? '' : errorBox(forwards)}
${table(
  [
    { heading: 'Request', cell: (f: Forward) => html`${objectLink(f.id)}<br><span class="mono">${f.url}</span><br>${when(f.created)}` },
    { heading: 'Sent', cell: (f: Forward) => html`<pre class="json" data-test="forward-request">${JSON.stringify(f.request_details, null, 2)}</pre>` },
    { heading: 'Received', cell: (f: Forward) => html`<pre class="json" data-test="forward-response">${JSON.stringify(f.response_details, null, 2)}</pre>` },
  ],
  forwards.status === 200 ? (forwards.body.data as Forward[]) : [],
  'No forwarding requests yet.',
)}
</section>`;
  return ctx.page('Test outcomes', body, { active: 'outcomes', status: failed?.status ?? 200 });
}

/** The answer of an action: back to the page saying what happened, or the page with the API's refusal. */
async function answered(ctx: ConsoleContext, answer: ApiAnswer, done: string, intent?: string | null): Promise<PageResult> {
  if (answer.status !== 200) return outcomesPage(ctx, answer);
  const query = new URLSearchParams({ done, id: String(answer.body.id), status: String(answer.body.status) });
  if (intent) query.set('intent', intent);
  return { redirect: `/console/outcomes?${query.toString()}` };
}

const answerAuthentication = (result: 'complete' | 'fail') => async (ctx: ConsoleContext) => {
  const id = ctx.req.pathParams.id;
  const answer = await ctx.call('POST', `${PA}/${encodeURIComponent(id)}/${result}`);
  if (answer.status === 404) return ctx.notFound(`No 3-D Secure authentication ${id} was found for this account.`);
  return answered(ctx, answer, 'authentication', answer.body?.payment_intent ?? answer.body?.setup_intent);
};

async function submitVerification(ctx: ConsoleContext): Promise<PageResult> {
  const id = ctx.req.pathParams.id;
  const outcome = typeof ctx.req.form.outcome === 'string' ? ctx.req.form.outcome : '';
  const answer = await ctx.call('POST', `/sandbox${VS}/${encodeURIComponent(id)}/submit`, { outcome });
  if (answer.status === 404) return ctx.notFound(`No verification session ${id} was found for this account.`);
  return answered(ctx, answer, 'verification');
}

async function completeFinancialConnections(ctx: ConsoleContext): Promise<PageResult> {
  const id = ctx.req.pathParams.id;
  const institution = typeof ctx.req.form.institution === 'string' ? ctx.req.form.institution : '';
  const answer = await ctx.call('POST', `${FCS}/${encodeURIComponent(id)}/complete`, { institution });
  if (answer.status === 404) return ctx.notFound(`No Financial Connections session ${id} was found for this account.`);
  return answered(ctx, answer, 'financial_connections');
}

export const outcomePages: readonly ConsolePage[] = [
  { method: 'get', path: '/outcomes', nav: { key: 'outcomes', label: 'Test outcomes', href: '/console/outcomes' }, handler: (ctx) => outcomesPage(ctx) },
  { method: 'post', path: '/outcomes/authentications/:id/complete', handler: answerAuthentication('complete') },
  { method: 'post', path: '/outcomes/authentications/:id/fail', handler: answerAuthentication('fail') },
  { method: 'post', path: '/outcomes/verifications/:id/submit', handler: submitVerification },
  { method: 'post', path: '/outcomes/financial_connections/:id/complete', handler: completeFinancialConnections },
];
