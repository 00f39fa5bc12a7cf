import { html } from '../hosted/html';
import type { PageResult } from '../hosted/pages';
import type { ApiAnswer } from './api';
import { csrfField } from './layout';
import { errorBox } from './objects';
import type { ConsoleContext, ConsolePage } from './pages';

// Data: resets the key's data with the sandbox's own operation (DELETE /sandbox/v1/data: every
// object of the platform and its connected accounts; the account, its keys and console sessions
// stay), once the platform's account id is typed into the form, so no stray click wipes it.

async function dataPage(ctx: ConsoleContext, refusal?: string | ApiAnswer, status = 200): Promise<PageResult> {
  const account = ctx.session.accountId;
  const done = ctx.req.query.deleted;
  const body = html`<h1>Data</h1>
${typeof refusal === 'string' ? html`<div class="error" role="alert" data-test="reset-refused">${refusal}</div>` : refusal ? errorBox(refusal) : ''}
${done !== undefined && /^\d+$/.test(done) ? html`<section class="card" role="status" data-test="reset-done">The data was reset: ${done} objects deleted.</section>` : ''}
<section class="card"><h2>Reset this sandbox’s data</h2>
<p>Deletes every object of <code>${account}</code> and of its connected accounts (customers, payments, billing, events, webhook endpoints, test clocks…), and the connected accounts themselves. The account, its API keys and this console session stay.</p>
<form class="filters" method="post" action="/console/data/reset">${csrfField(ctx.session)}
<label>Type the account id to confirm<input name="confirm" autocomplete="off" size="34" class="mono" placeholder="${account}" data-test="reset-confirm"></label>
<button type="submit" data-test="reset">Reset data</button>
</form></section>`;
  return ctx.page('Data', body, { active: 'data', status });
}

/** POST /console/data/reset: resets only when the confirmation is the account id. */
async function resetData(ctx: ConsoleContext): Promise<PageResult> {
  const typed = typeof ctx.req.form.confirm === 'string' ? ctx.req.form.confirm.trim() : '';
  if (typed !== ctx.session.accountId) {
    return dataPage(ctx, `Nothing was deleted: type the account id ${ctx.session.accountId} to confirm the reset.`, 400);
  }
  // The platform's reset, whatever account is viewed as: it deletes the connected ones too, so
  // the session goes back to its own account.
  const answer = await ctx.shared.api.call({ ...ctx.session, stripeAccount: null }, 'DELETE', '/sandbox/v1/data');
  if (ctx.session.stripeAccount) await ctx.shared.sessions.viewAs(ctx.session, null);
  if (answer.status !== 200) return dataPage(ctx, answer, answer.status);
  const deleted = Object.values(answer.body.deleted as Record<string, number>).reduce((a, b) => a + b, 0);
  return { redirect: `/console/data?deleted=${deleted}` };
}

export const dataPages: readonly ConsolePage[] = [
  { method: 'get', path: '/data', nav: { key: 'data', label: 'Data', href: '/console/data' }, handler: (ctx) => dataPage(ctx) },
  { method: 'post', path: '/data/reset', handler: resetData },
];
