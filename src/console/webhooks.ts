import { html, type Html } from '../hosted/html';
import type { PageResult } from '../hosted/pages';
import { eventHref } from './events';
import { csrfField, objectLink, table, when } from './layout';
import { errorBox, listPager } from './objects';
import { actionKey, type ConsoleContext, type ConsolePage } from './pages';

// Webhook endpoints: the account's endpoints (the API's list), a form that creates one (its
// signing secret shown once, on the answer to that form: never in a URL, never again), enable and
// disable (the API's update with `disabled`), and "send a test event". Neither the public API nor
// the sandbox has a test-event operation; the console resends the account's latest event that
// the endpoint listens to, with the sandbox's resend operation (`stripe events resend`).

const PAGE_SIZE = 25;
/** The events list's `types` takes up to 20. */
const TYPES_MAX = 20;

type Endpoint = { id: string; url: string; status: string; enabled_events: string[]; created: number; description: string | null };

const field = (ctx: ConsoleContext, name: string): string => (typeof ctx.req.form[name] === 'string' ? (ctx.req.form[name] as string) : '');

function statusForm(ctx: ConsoleContext, e: Endpoint): Html {
  const disable = e.status === 'enabled';
  return html`<form method="post" action="/console/webhooks/${encodeURIComponent(e.id)}/status">${csrfField(ctx.session)}<input type="hidden" name="disabled" value="${String(disable)}">
<button type="submit" class="secondary" data-test="${disable ? 'endpoint-disable' : 'endpoint-enable'}">${disable ? 'Disable' : 'Enable'}</button></form>`;
}

const testForm = (ctx: ConsoleContext, e: Endpoint): Html =>
  html`<form method="post" action="/console/webhooks/${encodeURIComponent(e.id)}/test">${csrfField(ctx.session)}<input type="hidden" name="idempotency_key" value="${actionKey()}">
<button type="submit" class="secondary" data-test="endpoint-test" ${e.status === 'enabled' ? '' : html`disabled`}>Send test event</button></form>`;

async function endpointsPage(ctx: ConsoleContext, created?: { id: string; secret: string }, status = 200, problem?: Html): Promise<PageResult> {
  const { query } = ctx.req;
  const answer = await ctx.call('GET', '/v1/webhook_endpoints', {
    limit: PAGE_SIZE,
    ...(query.starting_after ? { starting_after: query.starting_after } : {}),
    ...(query.ending_before ? { ending_before: query.ending_before } : {}),
  });
  const rows = answer.status === 200 ? (answer.body.data as Endpoint[]) : [];
  const body = html`<h1>Webhook endpoints</h1>
${
  created
    ? html`<section class="card" data-test="endpoint-created"><h2>Endpoint ${created.id} created</h2>
<p>Its signing secret, shown this once (the API's retrieve doesn't show it again). Keep it where your webhook handler reads it:</p>
<code class="secret" data-test="endpoint-secret">${created.secret}</code></section>`
    : ''
}
${problem ?? ''}
${answer.status === 200 ? '' : errorBox(answer)}
${table(
  [
    { heading: 'Endpoint', cell: (e: Endpoint) => html`${objectLink(e.id)}<br><span class="mono">${e.url}</span>${e.description ? html`<br><span class="muted">${e.description}</span>` : ''}` },
    { heading: 'Events', cell: (e: Endpoint) => html`<code>${e.enabled_events.join(', ')}</code>` },
    { heading: 'Status', cell: (e: Endpoint) => (e.status === 'enabled' ? html`<span class="badge">enabled</span>` : html`<span class="badge bad">disabled</span>`) },
    { heading: 'Created (UTC)', cell: (e: Endpoint) => when(e.created) },
    { heading: '', cell: (e: Endpoint) => html`<div class="actions">${statusForm(ctx, e)}${testForm(ctx, e)}</div>` },
  ],
  rows,
  'No webhook endpoints yet.',
)}
${answer.status === 200 ? listPager(query, answer, rows, '/console/webhooks') : ''}
<section class="card"><h2>Add an endpoint</h2>
<form class="filters" method="post" action="/console/webhooks">${csrfField(ctx.session)}<input type="hidden" name="idempotency_key" value="${actionKey()}">
<label>URL<input name="url" type="url" size="44" required placeholder="https://example.com/webhooks" data-test="endpoint-url"></label>
<label>Events (comma-separated; * for all)<input name="enabled_events" value="*" size="36" data-test="endpoint-events"></label>
<label>Description<input name="description" size="24"></label>
<button type="submit" data-test="endpoint-create">Add endpoint</button>
</form></section>`;
  return ctx.page('Webhook endpoints', body, { active: 'webhooks', status });
}

/** POST /console/webhooks: the API's create; the answer shows the secret (a page, not a redirect, so it is in no URL). */
async function createEndpoint(ctx: ConsoleContext): Promise<PageResult> {
  const events = field(ctx, 'enabled_events')
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  const params: Record<string, unknown> = { url: field(ctx, 'url'), enabled_events: events };
  if (field(ctx, 'description') !== '') params.description = field(ctx, 'description');
  const answer = await ctx.call('POST', '/v1/webhook_endpoints', params, { idempotencyKey: field(ctx, 'idempotency_key') || undefined });
  if (answer.status !== 200) return endpointsPage(ctx, undefined, answer.status, errorBox(answer));
  return endpointsPage(ctx, { id: answer.body.id as string, secret: answer.body.secret as string });
}

/** POST …/status: the API's update with `disabled`. */
async function setStatus(ctx: ConsoleContext): Promise<PageResult> {
  const id = ctx.req.pathParams.id;
  const answer = await ctx.call('POST', `/v1/webhook_endpoints/${encodeURIComponent(id)}`, { disabled: field(ctx, 'disabled') === 'true' });
  if (answer.status === 404) return ctx.notFound(`No webhook endpoint ${id} was found for this account.`);
  if (answer.status !== 200) return endpointsPage(ctx, undefined, answer.status, errorBox(answer));
  return { redirect: '/console/webhooks' };
}

/** POST …/test: resends the latest event the endpoint listens to, and shows that event's page. */
async function sendTest(ctx: ConsoleContext): Promise<PageResult> {
  const id = ctx.req.pathParams.id;
  const endpoint = await ctx.call('GET', `/v1/webhook_endpoints/${encodeURIComponent(id)}`);
  if (endpoint.status === 404) return ctx.notFound(`No webhook endpoint ${id} was found for this account.`);
  if (endpoint.status !== 200) return endpointsPage(ctx, undefined, endpoint.status, errorBox(endpoint));
  const types = endpoint.body.enabled_events as string[];
  const latest = await ctx.call('GET', '/v1/events', { limit: 1, ...(types.includes('*') ? {} : { types: types.slice(0, TYPES_MAX) }) });
  const event = latest.status === 200 ? (latest.body.data as { id: string }[])[0] : undefined;
  if (!event) {
    const none = html`<div class="error" role="alert">The account has no event yet that ${id} listens to (${types.join(', ')}): make one through the API (create a customer, say), then send it.</div>`;
    return endpointsPage(ctx, undefined, 409, latest.status === 200 ? none : errorBox(latest));
  }
  const answer = await ctx.call('POST', `/sandbox/v1/events/${encodeURIComponent(event.id)}/resend`, { webhook_endpoint: id }, { idempotencyKey: field(ctx, 'idempotency_key') || undefined });
  if (answer.status !== 200) return endpointsPage(ctx, undefined, answer.status, errorBox(answer));
  return { redirect: `${eventHref(event.id)}?resent=${encodeURIComponent(id)}` };
}

export const webhookPages: readonly ConsolePage[] = [
  { method: 'get', path: '/webhooks', nav: { key: 'webhooks', label: 'Webhooks', href: '/console/webhooks' }, handler: (ctx) => endpointsPage(ctx) },
  { method: 'post', path: '/webhooks', handler: createEndpoint },
  { method: 'post', path: '/webhooks/:id/status', handler: setStatus },
  { method: 'post', path: '/webhooks/:id/test', handler: sendTest },
];
