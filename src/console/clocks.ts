import { unixSeconds } from '../lib/clock';
import { html, type Html } from '../hosted/html';
import type { PageResult } from '../hosted/pages';
import type { ApiAnswer } from './api';
import { csrfField, objectLink, table, when } from './layout';
import { errorBox, unixOf } from './objects';
import { actionKey, type ConsoleContext, type ConsolePage } from './pages';

// Test clocks: the list and a create form, and a clock's page: its time, an advance form, the
// customers and subscriptions on it, and what its last advance did (the account's events written
// between the advance's `advancing` and `ready` events). All through the API's own operations.

const PAGE_SIZE = 25;
const CLOCKS = '/v1/test_helpers/test_clocks';
/** How many events of an advance are read (100 a page); more is said to be more. */
const ADVANCE_EVENTS_MAX = 1000;
/** Events of one type listed by id in the summary; the rest are counted. */
const IDS_SHOWN = 5;
/** How many pages of `advancing` events are looked through for this clock's latest. */
const ADVANCING_PAGES = 5;

interface Clock {
  id: string;
  name: string | null;
  frozen_time: number;
  status: string;
  status_details: { advancing?: { target_frozen_time: number } };
  created: number;
  deletes_after: number;
}
interface Event {
  id: string;
  type: string;
  created: number;
  data: { object: { id?: string } };
}

const clockHref = (id: string): string => `/console/clocks/${encodeURIComponent(id)}`;

/** A unix time as a datetime-local field's value (UTC, to the second). */
const fieldValue = (unix: number): string => new Date(unix * 1000).toISOString().slice(0, 19);

const datetimeNote = html`<span class="muted">Times are UTC.</span>`;

async function clocksPage(ctx: ConsoleContext, failed?: ApiAnswer, status = 200): Promise<PageResult> {
  const { query } = ctx.req;
  const answer = await ctx.call('GET', CLOCKS, { limit: PAGE_SIZE, ...(query.starting_after ? { starting_after: query.starting_after } : {}) });
  const clocks = answer.status === 200 ? (answer.body.data as Clock[]) : [];
  const now = unixSeconds(ctx.req.deps.clock);
  const body = html`<h1>Test clocks</h1>
${failed ? errorBox(failed) : ''}
<section class="card"><h2>New test clock</h2>
<form class="filters" method="post" action="/console/clocks">${csrfField(ctx.session)}
<input type="hidden" name="idempotency_key" value="${actionKey()}">
<label>Name<input name="name" maxlength="300" data-test="clock-name"></label>
<label>Frozen time (UTC)<input type="datetime-local" step="1" name="frozen_time" required value="${fieldValue(now)}" data-test="clock-frozen-time"></label>
<button type="submit" data-test="clock-create">Create</button>
</form>${datetimeNote}</section>
${answer.status === 200 ? '' : errorBox(answer)}
${table(
  [
    { heading: 'Clock', cell: (c: Clock) => html`<a class="mono" href="${clockHref(c.id)}">${c.id}</a>` },
    { heading: 'Name', cell: (c: Clock) => c.name ?? '' },
    { heading: 'Frozen time (UTC)', cell: (c: Clock) => when(c.frozen_time) },
    { heading: 'Status', cell: (c: Clock) => statusBadge(c) },
    { heading: 'Created (UTC)', cell: (c: Clock) => when(c.created) },
  ],
  clocks,
  'No test clocks yet.',
)}
${answer.status === 200 && answer.body.has_more && clocks.length > 0 ? html`<div class="pager"><a href="/console/clocks?starting_after=${encodeURIComponent(clocks[clocks.length - 1].id)}" data-test="page-older">Older →</a></div>` : ''}`;
  return ctx.page('Test clocks', body, { active: 'clocks', status });
}

const statusBadge = (c: Clock): Html => html`<span class="badge ${c.status === 'ready' ? '' : 'bad'}" data-test="clock-status">${c.status}</span>`;

/** POST /console/clocks: creates a clock (frozen_time from a UTC date-time field). */
async function createClock(ctx: ConsoleContext): Promise<PageResult> {
  const { form } = ctx.req;
  const frozen = unixOf(typeof form.frozen_time === 'string' ? form.frozen_time : undefined);
  const name = typeof form.name === 'string' && form.name !== '' ? form.name : undefined;
  // A time that isn't one goes to the API as typed, so the refusal is the API's.
  const answer = await ctx.call('POST', CLOCKS, { frozen_time: frozen ?? form.frozen_time ?? '', ...(name ? { name } : {}) }, { idempotencyKey: idempotencyKeyOf(form) });
  if (answer.status !== 200) return clocksPage(ctx, answer, answer.status);
  return { redirect: clockHref(answer.body.id) };
}

/** The action's idempotency key from its form (made when the form was rendered), if it is one of ours. */
const idempotencyKeyOf = (form: Record<string, unknown>): string | undefined =>
  typeof form.idempotency_key === 'string' && /^console-[0-9a-f]{32}$/.test(form.idempotency_key) ? form.idempotency_key : undefined;

async function clockPage(ctx: ConsoleContext, failed?: ApiAnswer): Promise<PageResult> {
  const id = ctx.req.pathParams.id;
  const clock = await ctx.call('GET', `${CLOCKS}/${encodeURIComponent(id)}`);
  if (clock.status === 404) return ctx.notFound(`No test clock ${id} was found for this account.`);
  if (clock.status !== 200) return ctx.page(id, html`<h1><span class="id">${id}</span></h1>${errorBox(clock)}`, { active: 'clocks', status: clock.status });
  const c = clock.body as Clock;
  const [customers, subscriptions, advance] = await Promise.all([
    ctx.call('GET', '/v1/customers', { test_clock: c.id, limit: 10 }),
    ctx.call('GET', '/v1/subscriptions', { test_clock: c.id, status: 'all', limit: 10 }),
    lastAdvance(ctx, c.id),
  ]);
  const advancing = c.status === 'advancing';
  const target = c.status_details.advancing?.target_frozen_time;
  const body = html`<h1><span class="type">test clock</span><span class="id">${c.id}</span></h1>
${failed ? errorBox(failed) : ''}
<section class="card" data-test="clock">
<table><tbody>
<tr><th>Name</th><td>${c.name ?? ''}</td></tr>
<tr><th>Status</th><td>${statusBadge(c)}</td></tr>
<tr><th>Frozen time (UTC)</th><td data-test="clock-frozen-time">${when(c.frozen_time)}</td></tr>
${target !== undefined ? html`<tr><th>Advancing to (UTC)</th><td>${when(target)}</td></tr>` : ''}
<tr><th>Deleted after (UTC)</th><td>${when(c.deletes_after)}</td></tr>
<tr><th>Object</th><td>${objectLink(c.id, 'test_helpers.test_clock')}</td></tr>
</tbody></table>
${
  advancing
    ? html`<p data-test="clock-advancing">The clock is advancing: its subscriptions and invoices are catching up with the new time. <a href="${clockHref(c.id)}" data-test="clock-refresh">Refresh</a> to see it ready.</p>`
    : html`<h2>Advance</h2>
<form class="filters" method="post" action="${clockHref(c.id)}/advance">${csrfField(ctx.session)}
<input type="hidden" name="idempotency_key" value="${actionKey()}">
<label>Advance to (UTC)<input type="datetime-local" step="1" name="frozen_time" required value="${fieldValue(c.frozen_time + 86_400)}" data-test="advance-to"></label>
<button type="submit" data-test="advance">Advance</button>
</form>
<p class="muted">The date and time are read as UTC. The clock can be advanced at most two intervals of its shortest subscription at once (two years without one).</p>`
}
</section>
<section class="card" data-test="clock-customers"><h2>Customers</h2>${listOf(customers, 'customer', 'No customer lives on this clock.')}</section>
<section class="card" data-test="clock-subscriptions"><h2>Subscriptions</h2>${listOf(subscriptions, 'subscription', 'No subscription on this clock.')}</section>
<section class="card" data-test="clock-last-advance"><h2>What the last advance did</h2>${advance}</section>`;
  // Without JavaScript the Refresh link does the same.
  const script = advancing ? 'setTimeout(function(){location.reload();},1000);' : undefined;
  return ctx.page(c.id, body, { active: 'clocks', status: failed?.status ?? 200, script });
}

function listOf(answer: ApiAnswer, type: string, empty: string): Html {
  if (answer.status !== 200) return errorBox(answer);
  const rows = answer.body.data as { id: string; email?: string | null; name?: string | null; status?: string; created: number }[];
  return html`${table(
    [
      { heading: 'ID', cell: (o: (typeof rows)[number]) => objectLink(o.id, type) },
      { heading: type === 'customer' ? 'Email / name' : 'Status', cell: (o: (typeof rows)[number]) => (type === 'customer' ? (o.email ?? o.name ?? '') : (o.status ?? '')) },
      { heading: 'Created (UTC)', cell: (o: (typeof rows)[number]) => when(o.created) },
    ],
    rows,
    empty,
  )}${answer.body.has_more ? html`<p class="muted">Showing the latest ${rows.length}.</p>` : ''}`;
}

/** This clock's newest event of `type` at or after `since`, looking through a few pages of that type. */
async function latestOfClock(ctx: ConsoleContext, clock: string, type: string, since?: number): Promise<Event | ApiAnswer | undefined> {
  let after: string | undefined;
  for (let page = 0; page < ADVANCING_PAGES; page++) {
    const answer = await ctx.call('GET', '/v1/events', { type, limit: 100, ...(since !== undefined ? { created: { gte: since } } : {}), ...(after ? { starting_after: after } : {}) });
    if (answer.status !== 200) return answer;
    const events = answer.body.data as Event[];
    const found = events.find((e) => e.data.object.id === clock);
    if (found) return found;
    if (!answer.body.has_more || events.length === 0) return undefined;
    after = events[events.length - 1].id;
  }
  return undefined;
}

/** The events of the account from the advance's `advancing` event to its `ready` one (or now), by type. */
async function lastAdvance(ctx: ConsoleContext, clock: string): Promise<Html> {
  const advancing = await latestOfClock(ctx, clock, 'test_helpers.test_clock.advancing');
  if (advancing === undefined) return html`<p class="muted">The clock has not been advanced yet.</p>`;
  if ('status' in advancing) return errorBox(advancing);
  // The ready event after it: the oldest of the clock's since then (one advance at a time).
  const readyList = await ctx.call('GET', '/v1/events', { type: 'test_helpers.test_clock.ready', created: { gte: advancing.created }, limit: 100 });
  if (readyList.status !== 200) return errorBox(readyList);
  const ready = (readyList.body.data as Event[]).filter((e) => e.data.object.id === clock).at(-1);
  // Newest first: from the ready event (or the newest, while advancing) down to the advancing one.
  const events: Event[] = [];
  let started = ready === undefined;
  let after: string | undefined;
  let complete = false;
  while (events.length < ADVANCE_EVENTS_MAX) {
    const answer = await ctx.call('GET', '/v1/events', {
      limit: 100,
      created: { gte: advancing.created, ...(ready ? { lte: ready.created } : {}) },
      ...(after ? { starting_after: after } : {}),
    });
    if (answer.status !== 200) return errorBox(answer);
    const page = answer.body.data as Event[];
    for (const e of page) {
      if (e.id === ready?.id) started = true;
      if (started) events.push(e);
      if (e.id === advancing.id) {
        complete = true;
        break;
      }
    }
    if (complete || !answer.body.has_more || page.length === 0) break;
    after = page[page.length - 1].id;
  }
  const byType = new Map<string, Event[]>();
  for (const e of events) byType.set(e.type, [...(byType.get(e.type) ?? []), e]);
  const groups = [...byType.entries()].sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]));
  const target = (advancing.data.object as { status_details?: { advancing?: { target_frozen_time?: number } } }).status_details?.advancing?.target_frozen_time;
  return html`<p>Advanced ${target !== undefined ? html`to <strong>${when(target)}</strong> UTC` : ''} at ${when(advancing.created)} UTC${
    ready ? html`, ready at ${when(ready.created)} UTC` : html`; not ready yet`
  }. ${events.length} events of the account were written in that time${complete ? '' : ' (at least)'}:</p>
${table(
  [
    { heading: 'Type', cell: (g: (typeof groups)[number]) => html`<code>${g[0]}</code>` },
    { heading: 'Count', cell: (g: (typeof groups)[number]) => html`<span data-test="event-count">${g[1].length}</span>` },
    {
      heading: 'Events',
      cell: (g: (typeof groups)[number]) =>
        html`${g[1].slice(0, IDS_SHOWN).map((e) => html`${objectLink(e.id)} `)}${g[1].length > IDS_SHOWN ? html`<span class="muted">and ${g[1].length - IDS_SHOWN} more</span>` : ''}`,
    },
  ],
  groups,
  'No events.',
)}`;
}

/** POST /console/clocks/:id/advance: advances the clock to the UTC date-time typed. */
async function advanceClock(ctx: ConsoleContext): Promise<PageResult> {
  const id = ctx.req.pathParams.id;
  const { form } = ctx.req;
  const target = unixOf(typeof form.frozen_time === 'string' ? form.frozen_time : undefined);
  const answer = await ctx.call('POST', `${CLOCKS}/${encodeURIComponent(id)}/advance`, { frozen_time: target ?? form.frozen_time ?? '' }, { idempotencyKey: idempotencyKeyOf(form) });
  if (answer.status === 404) return ctx.notFound(`No test clock ${id} was found for this account.`);
  if (answer.status !== 200) return clockPage(ctx, answer);
  return { redirect: clockHref(id) };
}

export const clockPages: readonly ConsolePage[] = [
  { method: 'get', path: '/clocks', nav: { key: 'clocks', label: 'Test clocks', href: '/console/clocks' }, handler: (ctx) => clocksPage(ctx) },
  { method: 'post', path: '/clocks', handler: createClock },
  { method: 'get', path: '/clocks/:id', handler: (ctx) => clockPage(ctx) },
  { method: 'post', path: '/clocks/:id/advance', handler: advanceClock },
];
