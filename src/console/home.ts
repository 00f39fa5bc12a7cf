import { html } from '../hosted/html';
import type { PageResult } from '../hosted/pages';
import { objectLink, table, when } from './layout';
import type { ConsoleContext, ConsolePage } from './pages';

// Home: how many objects of each type the account has, its latest events, and its webhook
// endpoints whose latest delivery attempt failed. All from the API's own list operations.

/** Counts stop here ("10+"): each type costs one short indexed page (a page of 100 invoices with their lines is not short). */
const COUNT_LIMIT = 10;
const RECENT_EVENTS = 10;
/** Endpoints whose latest attempt is looked at: the public API's limit per account (MAX_WEBHOOK_ENDPOINTS' default). */
const ENDPOINTS_CHECKED = 16;

async function home(ctx: ConsoleContext): Promise<PageResult> {
  const listable = ctx.catalog.kinds;
  const [counts, events, endpoints] = await Promise.all([
    Promise.all(
      listable.map(async (kind) => {
        const answer = await ctx.call('GET', kind.listPath, { limit: COUNT_LIMIT });
        // A list that needs a filter (transactions of one account) has no count of its own.
        if (answer.status !== 200) return { kind, count: null };
        const n = (answer.body.data as unknown[]).length;
        return { kind, count: answer.body.has_more ? `${n}+` : String(n) };
      }),
    ),
    ctx.call('GET', '/v1/events', { limit: RECENT_EVENTS }),
    ctx.call('GET', '/v1/webhook_endpoints', { limit: ENDPOINTS_CHECKED }),
  ]);
  const failing = (
    await Promise.all(
      (endpoints.status === 200 ? (endpoints.body.data as { id: string; url: string; status: string }[]) : []).map(async (endpoint) => {
        const attempts = await ctx.call('GET', `/sandbox/v1/webhook_endpoints/${encodeURIComponent(endpoint.id)}/deliveries`, { limit: 1 });
        const latest = attempts.status === 200 ? (attempts.body.data as { succeeded: boolean; status_code: number | null; error: string | null; created: number }[])[0] : undefined;
        return latest && !latest.succeeded ? { endpoint, latest } : undefined;
      }),
    )
  ).filter((f) => f !== undefined);

  const shown = counts.filter((c) => c.count !== null && c.count !== '0');
  const body = html`<h1>Home</h1>
<section class="card"><h2>Objects</h2>
${shown.length === 0 ? html`<p class="muted">No objects yet: create some through the API.</p>` : ''}
<div class="grid">${shown.map((c) => html`<a href="/console/objects?type=${encodeURIComponent(c.kind.type)}" data-test="count-${c.kind.type}"><span>${c.kind.type}</span><strong>${c.count}</strong></a>`)}</div>
</section>
<section class="card"><h2>Recent events</h2>
${table(
  [
    { heading: 'Event', cell: (e: { id: string }) => objectLink(e.id) },
    { heading: 'Type', cell: (e: { type: string }) => html`<code>${e.type}</code>` },
    { heading: 'Created (UTC)', cell: (e: { created: number }) => when(e.created) },
  ],
  events.status === 200 ? (events.body.data as { id: string; type: string; created: number }[]) : [],
  'No events yet.',
)}
</section>
<section class="card"><h2>Failing webhook endpoints</h2>
${table(
  [
    { heading: 'Endpoint', cell: (f: (typeof failing)[number]) => objectLink(f.endpoint.id) },
    { heading: 'URL', cell: (f: (typeof failing)[number]) => html`<span class="mono">${f.endpoint.url}</span>` },
    {
      heading: 'Latest attempt',
      cell: (f: (typeof failing)[number]) => html`<span class="badge bad">${f.latest.status_code ?? f.latest.error ?? 'failed'}</span> ${when(f.latest.created)}`,
    },
  ],
  failing,
  'Every endpoint’s latest delivery succeeded.',
)}
${endpoints.status === 200 && endpoints.body.has_more ? html`<p class="muted">Of the latest ${ENDPOINTS_CHECKED} endpoints.</p>` : ''}
</section>`;
  return ctx.page('Home', body, { active: 'home' });
}

export const homePages: readonly ConsolePage[] = [{ method: 'get', path: '', nav: { key: 'home', label: 'Home', href: '/console' }, handler: home }];
