import { html, type Html } from '../hosted/html';
import type { PageResult } from '../hosted/pages';
import { ApiError } from '../kernel/errors';
import { RECENT_PER_ACCOUNT, type FailedRequest, type RecentRequest } from '../kernel/requestLog';
import { objectLink, table } from './layout';
import { listHref } from './objects';
import type { ConsoleContext, ConsolePage } from './pages';

// Requests: the recent requests of the signed-in key's platform (the API's request log,
// kernel/requestLog.ts: every answer's line, kept per account), the console's own among them (they
// are API requests), and each request's page, with the error body a failed one answered: the page
// its `request_log_url` opens (src/hosted/requestLogPage.ts links here). The log is the API's, not
// an object of any account, so there is no operation to list it: the pages read it as that page
// does, for the platform whose key the session holds, checked again with the API's authenticator.

export const requestHref = (id: string): string => `/console/requests/${encodeURIComponent(id)}`;

const at = (ms: number): string => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

/** The platform whose key the session holds, checked now (a key revoked since sign-in reads nothing). */
async function platformOf(ctx: ConsoleContext): Promise<string | undefined> {
  try {
    const identity = await ctx.shared.identify(ctx.session.key);
    return identity.publishable ? undefined : identity.platformAccountId;
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) return undefined;
    throw err;
  }
}

const statusBadge = (status: number): Html => (status >= 400 ? html`<span class="badge bad">${status}</span>` : html`<span class="badge">${status}</span>`);

async function requestsPage(ctx: ConsoleContext): Promise<PageResult> {
  const log = ctx.shared.requestLog;
  const platform = await platformOf(ctx);
  const all = log && platform ? await log.recent.of(platform) : [];
  const failedOnly = ctx.req.query.failed === '1';
  // The console's page reads (a home page is some 30 lists) would bury a client's requests: shown on asking. Its actions always show.
  const reads = ctx.req.query.console_reads === '1';
  const rows = all.filter((r) => (!failedOnly || r.status >= 400) && (reads || !r.console || r.method !== 'GET'));
  const toggle = (name: string, on: boolean, label: string) =>
    html`<a href="${listHref(ctx.req.query, { [name]: on ? undefined : '1' }, '/console/requests')}" data-test="requests-${name}">${on ? html`<strong>✓ ${label}</strong>` : label}</a>`;
  const body = html`<h1>Requests</h1>
<p class="muted">The latest ${RECENT_PER_ACCOUNT} API requests made with this account’s keys, the console’s actions among them.</p>
<div class="pager">${toggle('failed', failedOnly, 'Only failed ones')}${toggle('console_reads', reads, 'With the console’s page reads')}</div>
${table(
  [
    { heading: 'At (UTC)', cell: (r: RecentRequest) => html`<span class="mono nowrap">${at(r.receivedAtMs)}</span>` },
    { heading: 'Request', cell: (r: RecentRequest) => html`<code>${r.method}</code> <span class="mono">${r.path}</span>` },
    { heading: 'Status', cell: (r: RecentRequest) => statusBadge(r.status) },
    { heading: 'Request id', cell: (r: RecentRequest) => html`<a class="mono nowrap" href="${requestHref(r.requestId)}">${r.requestId}</a>` },
    { heading: 'Idempotency key', cell: (r: RecentRequest) => html`<span class="mono">${r.idempotencyKey ?? ''}</span>` },
    {
      heading: 'Key',
      cell: (r: RecentRequest) =>
        html`<span class="mono nowrap">${r.key}</span>${r.console ? html` <span class="badge">console</span>` : ''}${r.stripeAccount ? html`<br><span class="muted">as ${r.stripeAccount}</span>` : ''}`,
    },
  ],
  rows,
  failedOnly ? 'No failed request among the latest.' : 'No requests yet.',
)}`;
  return ctx.page('Requests', body, { active: 'requests' });
}

function failureOf(failed: FailedRequest): Html {
  let pretty = failed.body;
  try {
    pretty = JSON.stringify(JSON.parse(failed.body), null, 2);
  } catch {
    // Shown as kept (a body cut to fit the log's budget is no longer JSON).
  }
  return html`<section class="card"><h2>Answered ${failed.status} with</h2><pre class="json" data-test="request-error">${pretty}</pre></section>`;
}

async function requestPage(ctx: ConsoleContext): Promise<PageResult> {
  const id = ctx.req.pathParams.id;
  const log = ctx.shared.requestLog;
  const platform = await platformOf(ctx);
  const missing = () => ctx.notFound(`No request ${id} among this account’s latest requests.`);
  if (!log || !platform) return missing();
  const [recent, found] = await Promise.all([log.recent.of(platform), log.find(id)]);
  const line = recent.find((r) => r.requestId === id);
  // Another platform's failed request is the same 404 as one the log doesn't hold.
  const failed = found && found.account === platform ? found : undefined;
  if (!line && !failed) return missing();
  const fields: [string, unknown][] = line
    ? [
        ['Request', html`<code>${line.method}</code> <span class="mono">${line.path}</span>`],
        ['Operation', html`<span class="mono">${line.route}</span>`],
        ['Status', statusBadge(line.status)],
        ['At (UTC)', at(line.receivedAtMs)],
        ['Idempotency key', html`<span class="mono">${line.idempotencyKey ?? '—'}</span>`],
        ['Key', html`<span class="mono">${line.key}</span>`],
        ['Stripe-Account', line.stripeAccount ? objectLink(line.stripeAccount) : '—'],
        ['Made by', line.console ? 'the console' : 'an API client'],
      ]
    : [
        ['Request', html`<code>${failed!.method}</code> <span class="mono">${failed!.route}</span>`],
        ['Status', statusBadge(failed!.status)],
        ['At (UTC)', at(failed!.receivedAt * 1000)],
      ];
  const body = html`<h1><span class="type">request</span><span class="id">${id}</span></h1>
<section class="card"><table><tbody>${fields.map(([k, v]) => html`<tr><th>${k}</th><td data-test="request-${k.toLowerCase().replace(/[^a-z]+/g, '-')}">${v}</td></tr>`)}</tbody></table></section>
${failed ? failureOf(failed) : ''}
<p><a href="/console/requests">All requests</a></p>`;
  return ctx.page(id, body, { active: 'requests' });
}

export const requestPages: readonly ConsolePage[] = [
  { method: 'get', path: '/requests', nav: { key: 'requests', label: 'Requests', href: '/console/requests' }, handler: requestsPage },
  { method: 'get', path: '/requests/:id', handler: requestPage },
];
