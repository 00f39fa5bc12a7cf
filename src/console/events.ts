import { html, type Html } from '../hosted/html';
import type { FileResult, PageResult } from '../hosted/pages';
import { csrfField, jsonView, objectLink, table, when } from './layout';
import { errorBox, listPager } from './objects';
import { actionKey, type ConsoleContext, type ConsolePage } from './pages';

// Events: the account's events (the API's list, filtered by `type`, with its cursors), and each
// event's page: its payload as the API renders it, and its deliveries, one row per endpoint it
// went to with every attempt (status, duration, response excerpt) and a Resend button that runs
// the sandbox's resend operation (what `stripe events resend` does).

const PAGE_SIZE = 25;
/** How often the events list asks whether newer events came. */
const POLL_MS = 3000;

// The list's first page asks /console/events.json every POLL_MS whether events newer than its
// first row came (the API's list with ending_before), and says how many, with a link that shows
// them. Reading needs none of it: without JavaScript the page is the same, minus the notice.
const LIVE_SCRIPT = `(function () {
  var box = document.getElementById('live-events');
  if (!box || !window.fetch) return;
  var q = new URLSearchParams();
  if (box.dataset.first) q.set('ending_before', box.dataset.first);
  if (box.dataset.type) q.set('type', box.dataset.type);
  function poll() {
    fetch('/console/events.json?' + q.toString(), { credentials: 'same-origin', headers: { accept: 'application/json' } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (news) {
        if (news && news.count > 0) {
          box.querySelector('span').textContent = news.count + (news.more ? '+' : '') + (news.count === 1 && !news.more ? ' new event' : ' new events');
          box.hidden = false;
        }
      })
      .catch(function () {})
      .then(function () { setTimeout(poll, ${POLL_MS}); });
  }
  setTimeout(poll, ${POLL_MS});
})();`;
/** Attempts shown per endpoint on an event's page (the first delivery and its retries, then resends). */
const ATTEMPTS_SHOWN = 20;
/** The public API's limit of endpoints per account (MAX_WEBHOOK_ENDPOINTS' default is 16). */
const ENDPOINTS_ASKED = 100;

export const eventHref = (id: string): string => `/console/events/${encodeURIComponent(id)}`;

type Event = { id: string; type: string; created: number; pending_webhooks: number; request?: { id: string | null } };

async function eventsList(ctx: ConsoleContext): Promise<PageResult> {
  const { query } = ctx.req;
  const answer = await ctx.call('GET', '/v1/events', {
    limit: PAGE_SIZE,
    ...(query.type ? { type: query.type } : {}),
    ...(query.starting_after ? { starting_after: query.starting_after } : {}),
    ...(query.ending_before ? { ending_before: query.ending_before } : {}),
  });
  const rows = answer.status === 200 ? (answer.body.data as Event[]) : [];
  const body = html`<h1>Events</h1>
<form class="filters" method="get" action="/console/events">
<label>Type (customer.* for a group)<input name="type" value="${query.type ?? ''}" size="36" placeholder="payment_intent.succeeded" data-test="event-type"></label>
<button type="submit">Filter</button>
${query.type ? html`<a href="/console/events">Every type</a>` : ''}
</form>
${answer.status === 200 ? '' : errorBox(answer)}
${table(
  [
    { heading: 'Event', cell: (e: Event) => html`<a class="mono" href="${eventHref(e.id)}">${e.id}</a>` },
    { heading: 'Type', cell: (e: Event) => html`<code>${e.type}</code>` },
    { heading: 'Pending webhooks', cell: (e: Event) => (e.pending_webhooks > 0 ? html`<span class="badge">${e.pending_webhooks}</span>` : '') },
    { heading: 'Created (UTC)', cell: (e: Event) => when(e.created) },
  ],
  rows,
  query.type ? 'No event of this type.' : 'No events yet.',
)}
${answer.status === 200 ? listPager(query, answer, rows, '/console/events') : ''}`;
  // Only the first page, the newest, is told of newer events.
  const live = answer.status === 200 && !query.starting_after && !query.ending_before;
  const page = await ctx.page('Events', live ? html`${liveBox(rows[0]?.id, query.type)}${body}` : body, {
    active: 'events',
    status: answer.status === 200 ? 200 : answer.status,
    script: live ? LIVE_SCRIPT : undefined,
  });
  // The script asks this origin, and nothing else, for the count.
  return 'html' in page ? { ...page, headers: { ...page.headers, 'Content-Security-Policy': liveCsp(ctx.req.nonce) } } : page;
}

const liveCsp = (nonce: string): string =>
  `default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-${nonce}'; connect-src 'self'; img-src data:; base-uri 'none'; frame-ancestors 'none'`;

const liveBox = (first: string | undefined, type: string | undefined): Html =>
  html`<div id="live-events" class="note" role="status" hidden data-first="${first ?? ''}" data-type="${type ?? ''}" data-test="new-events"><span></span> · <a href="${type ? `/console/events?type=${encodeURIComponent(type)}` : '/console/events'}">Show them</a></div>`;

/** GET /console/events.json: how many events are newer than `ending_before` (of `type`), for the list's script. */
async function newerEvents(ctx: ConsoleContext): Promise<FileResult> {
  const { query } = ctx.req;
  const answer = await ctx.call('GET', '/v1/events', {
    limit: PAGE_SIZE,
    ...(query.type ? { type: query.type } : {}),
    ...(query.ending_before ? { ending_before: query.ending_before } : {}),
  });
  const body = answer.status === 200 ? { count: (answer.body.data as unknown[]).length, more: answer.body.has_more === true } : { count: 0, more: false, error: answer.status };
  return { file: Buffer.from(JSON.stringify(body)), contentType: 'application/json', filename: 'events.json' };
}

type Endpoint = { id: string; url: string; status: string };
type Attempt = {
  id: string;
  delivery: string;
  attempt: number;
  created: number;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  response_body: string | null;
  succeeded: boolean;
  outcome: string;
};

/** The event's attempts to each of the caller's endpoints (the sandbox deliveries list, `event=`); endpoints it never went to are left out. */
async function deliveriesOf(ctx: ConsoleContext, eventId: string): Promise<{ endpoint: Endpoint; attempts: Attempt[]; more: boolean }[]> {
  const endpoints = await ctx.call('GET', '/v1/webhook_endpoints', { limit: ENDPOINTS_ASKED });
  if (endpoints.status !== 200) return [];
  const all = await Promise.all(
    (endpoints.body.data as Endpoint[]).map(async (endpoint) => {
      const answer = await ctx.call('GET', `/sandbox/v1/webhook_endpoints/${encodeURIComponent(endpoint.id)}/deliveries`, { event: eventId, limit: ATTEMPTS_SHOWN });
      return { endpoint, attempts: answer.status === 200 ? (answer.body.data as Attempt[]) : [], more: answer.status === 200 && answer.body.has_more === true };
    }),
  );
  return all.filter((d) => d.attempts.length > 0);
}

function outcomeOf(a: Attempt): Html {
  if (a.outcome === 'started') return html`<span class="badge">sending</span>`;
  const label = a.status_code ?? a.error ?? a.outcome;
  return a.succeeded ? html`<span class="badge">${label}</span>` : html`<span class="badge bad">${label}</span>`;
}

function deliveryRow(ctx: ConsoleContext, eventId: string, d: { endpoint: Endpoint; attempts: Attempt[]; more: boolean }): Html {
  const latest = d.attempts[0];
  return html`<section class="card" data-test="delivery" data-endpoint="${d.endpoint.id}">
<div class="row-head"><div><h2>${objectLink(d.endpoint.id)}</h2><span class="mono">${d.endpoint.url}</span> ${d.endpoint.status === 'enabled' ? '' : html`<span class="badge">disabled</span>`}
<br><span class="muted">Latest:</span> ${outcomeOf(latest)} <span class="muted">${when(latest.created)}</span></div>
<form method="post" action="${eventHref(eventId)}/resend">${csrfField(ctx.session)}<input type="hidden" name="webhook_endpoint" value="${d.endpoint.id}"><input type="hidden" name="idempotency_key" value="${actionKey()}">
<button type="submit" data-test="resend">Resend</button></form></div>
<table class="attempts"><thead><tr><th>At (UTC)</th><th>Delivery (attempt)</th><th>Answer</th><th>Duration</th><th>Response</th></tr></thead>
<tbody>${d.attempts.map(
    (a) => html`<tr data-test="attempt"><td class="nowrap">${when(a.created)}</td><td><span class="muted mono">${a.delivery}</span> (#${a.attempt})</td><td>${outcomeOf(a)}</td><td class="nowrap">${a.duration_ms} ms</td><td><code>${a.response_body ?? a.error ?? ''}</code></td></tr>`,
  )}</tbody></table>
${d.more ? html`<p class="muted">The latest ${d.attempts.length} attempts.</p>` : ''}
</section>`;
}

async function eventPage(ctx: ConsoleContext): Promise<PageResult> {
  const id = ctx.req.pathParams.id;
  const [event, deliveries] = await Promise.all([ctx.call('GET', `/v1/events/${encodeURIComponent(id)}`), deliveriesOf(ctx, id)]);
  // Another account's event is a 404 for this key, as one that doesn't exist.
  if (event.status === 404) return ctx.notFound(`No event ${id} was found for this account.`);
  if (event.status !== 200) return ctx.page(id, html`<h1><span class="id">${id}</span></h1>${errorBox(event)}`, { active: 'events', status: event.status });
  const e = event.body as Event;
  // Only an endpoint id is echoed: a link can't make the page say anything else.
  const resent = /^we_[A-Za-z0-9]+$/.test(ctx.req.query.resent ?? '') ? ctx.req.query.resent : undefined;
  const body = html`<h1><span class="type">${e.type}</span><span class="id">${e.id}</span></h1>
<p class="muted">Created ${when(e.created)} UTC${e.request?.id ? html` · request <a class="mono" href="/console/requests/${encodeURIComponent(e.request.id)}">${e.request.id}</a>` : ''}</p>
${resent ? html`<div class="note" role="status" data-test="resent">Resent to <span class="mono">${resent}</span>: its attempt shows here once it is made (reload).</div>` : ''}
<h2>Deliveries</h2>${deliveries.length === 0 ? html`<p class="muted">This event has not gone to any of the account's webhook endpoints.</p>` : deliveries.map((d) => deliveryRow(ctx, e.id, d))}
<h2>Payload</h2>${jsonView(e, (text) => text !== e.id && ctx.catalog.typeOfId(text) !== undefined)}`;
  return ctx.page(e.id, body, { active: 'events' });
}

/** POST …/resend: the sandbox's resend operation, to one endpoint; back to the event's page. */
async function resend(ctx: ConsoleContext): Promise<PageResult> {
  const id = ctx.req.pathParams.id;
  const endpoint = typeof ctx.req.form.webhook_endpoint === 'string' ? ctx.req.form.webhook_endpoint : '';
  const key = typeof ctx.req.form.idempotency_key === 'string' && ctx.req.form.idempotency_key !== '' ? ctx.req.form.idempotency_key : undefined;
  const answer = await ctx.call('POST', `/sandbox/v1/events/${encodeURIComponent(id)}/resend`, { webhook_endpoint: endpoint }, { idempotencyKey: key });
  if (answer.status === 404) return ctx.notFound(`No event ${id} was found for this account.`);
  if (answer.status !== 200) {
    return ctx.page('Resend refused', html`<h1>Resend refused</h1>${errorBox(answer)}<p><a href="${eventHref(id)}">Back to the event</a></p>`, { active: 'events', status: answer.status });
  }
  return { redirect: `${eventHref(id)}?resent=${encodeURIComponent(answer.body.webhook_endpoint as string)}` };
}

export const eventPages: readonly ConsolePage[] = [
  { method: 'get', path: '/events', nav: { key: 'events', label: 'Events', href: '/console/events' }, handler: eventsList },
  { method: 'get', path: '/events.json', handler: newerEvents },
  { method: 'get', path: '/events/:id', handler: eventPage },
  { method: 'post', path: '/events/:id/resend', handler: resend },
];
