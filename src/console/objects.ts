import { API_VERSIONS } from '../kernel/versions';
import { html, raw, type Html } from '../hosted/html';
import type { PageResult } from '../hosted/pages';
import { errorMessage, type ApiAnswer } from './api';
import type { ObjectKind } from './catalog';
import { jsonView, objectHref, objectLink, table, when, type Column } from './layout';
import type { ConsoleContext, ConsolePage } from './pages';

// Objects: the list of each served object type (the API's own list operation, so its cursor
// pagination, `created` filters and search language), an id lookup, and each object's page (the
// API's own retrieve operation, rendered at a chosen version, every id a link).

const PAGE_SIZE = 25;

/** Fields worth a glance in a list row, the first few an object has. */
const SUMMARY_FIELDS = ['email', 'name', 'description', 'type', 'status', 'amount', 'currency', 'url', 'percent_off', 'code'];
const SUMMARY_COUNT = 3;

/** Objects listed on another's page: a customer's payment methods, subscriptions, invoices and payments. */
const RELATED: Readonly<Record<string, readonly { title: string; type: string; param: string }[]>> = {
  customer: [
    { title: 'Payment methods', type: 'payment_method', param: 'customer' },
    { title: 'Subscriptions', type: 'subscription', param: 'customer' },
    { title: 'Invoices', type: 'invoice', param: 'customer' },
    { title: 'Payments', type: 'payment_intent', param: 'customer' },
  ],
};

type Obj = Record<string, unknown> & { id: string };

function summary(object: Obj): Html {
  const shown = SUMMARY_FIELDS.filter((f) => object[f] !== undefined && object[f] !== null && typeof object[f] !== 'object').slice(0, SUMMARY_COUNT);
  return html`${shown.map((f) => html`<span class="muted">${f}</span> ${String(object[f])}<br>`)}`;
}

const objectColumns = (type: string): Column<Obj>[] => [
  { heading: 'ID', cell: (o) => objectLink(o.id, type) },
  { heading: 'Details', cell: summary },
  { heading: 'Created (UTC)', cell: (o) => when(o.created) },
];

/** `2026-11-27T10:00` (a datetime-local field, read as UTC) as unix seconds; undefined when empty or not a time. */
export function unixOf(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const ms = Date.parse(/[zZ]|[+-]\d\d:\d\d$/.test(value) ? value : `${value}Z`);
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}

/** The link to a list page (`base`) with some of its query changed (undefined values dropped). */
export function listHref(query: Readonly<Record<string, string>>, changes: Record<string, string | undefined>, base = '/console/objects'): string {
  const next = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...query, ...changes })) if (v !== undefined && v !== '') next.set(k, v);
  return `${base}?${next.toString()}`;
}

export function errorBox(answer: ApiAnswer): Html {
  return html`<div class="error" role="alert">${errorMessage(answer)}</div>`;
}

function kindsIndex(ctx: ConsoleContext): Promise<PageResult> {
  const body = html`<h1>Objects</h1>
${lookupForm()}
<div class="grid">${ctx.catalog.kinds.map((k) => html`<a href="${listHref({}, { type: k.type })}"><span>${k.type}</span>${k.searchPath ? html`<span class="muted">search</span>` : ''}</a>`)}</div>`;
  return ctx.page('Objects', body, { active: 'objects' });
}

const lookupForm = (): Html => html`<form class="filters" method="get" action="/console/objects">
<label>Find by id<input name="id" placeholder="cus_…" class="mono" size="34" data-test="object-lookup"></label>
<button type="submit" class="secondary">Open</button></form>`;

async function listPage(ctx: ConsoleContext, kind: ObjectKind): Promise<PageResult> {
  const { query } = ctx.req;
  const searching = kind.searchPath !== undefined && (query.query ?? '') !== '';
  let answer: ApiAnswer;
  if (searching) {
    answer = await ctx.call('GET', kind.searchPath!, { query: query.query, limit: PAGE_SIZE, ...(query.page ? { page: query.page } : {}) });
  } else {
    const created: Record<string, number> = {};
    const gte = unixOf(query.created_gte);
    const lte = unixOf(query.created_lte);
    if (gte !== undefined) created.gte = gte;
    if (lte !== undefined) created.lte = lte;
    answer = await ctx.call('GET', kind.listPath, {
      limit: PAGE_SIZE,
      ...(query.starting_after ? { starting_after: query.starting_after } : {}),
      ...(query.ending_before ? { ending_before: query.ending_before } : {}),
      ...(Object.keys(created).length > 0 ? { created } : {}),
    });
  }
  const rows = answer.status === 200 ? (answer.body.data as Obj[]) : [];
  const pager = answer.status !== 200 ? '' : searching ? searchPager(query, answer) : listPager(query, answer, rows);
  const body = html`<h1>${kind.type}</h1>
<form class="filters" method="get" action="/console/objects">
<input type="hidden" name="type" value="${kind.type}">
${
  kind.searchPath
    ? html`<label>Search (the API's query language)<input name="query" value="${query.query ?? ''}" size="44" placeholder="email:'jenny@example.com' AND metadata['plan']:'gold'" data-test="object-search"></label>`
    : ''
}
${
  kind.created
    ? html`<label>Created from (UTC)<input type="datetime-local" name="created_gte" value="${query.created_gte ?? ''}"></label>
<label>Created to (UTC)<input type="datetime-local" name="created_lte" value="${query.created_lte ?? ''}"></label>`
    : ''
}
${kind.searchPath || kind.created ? html`<button type="submit">Apply</button>` : ''}
</form>
${lookupForm()}
${answer.status === 200 ? '' : errorBox(answer)}
${table(objectColumns(kind.type), rows, searching ? 'No object matches this search.' : 'No objects yet.')}
${pager}`;
  return ctx.page(kind.type, body, { active: 'objects', status: answer.status === 200 ? 200 : answer.status });
}

/** Newer/older links of a list page at `base`, from the API's cursors. */
export function listPager(query: Readonly<Record<string, string>>, answer: ApiAnswer, rows: readonly { id: string }[], base = '/console/objects'): Html {
  if (rows.length === 0) return html``;
  const cleared = { starting_after: undefined, ending_before: undefined };
  const backwards = query.ending_before !== undefined;
  // Going back, has_more says whether there are newer ones; going forward, older ones.
  const newer = backwards ? answer.body.has_more : query.starting_after !== undefined;
  const older = backwards ? true : answer.body.has_more;
  return html`<div class="pager">
${newer ? html`<a href="${listHref(query, { ...cleared, ending_before: rows[0].id }, base)}" data-test="page-newer">← Newer</a>` : ''}
${older ? html`<a href="${listHref(query, { ...cleared, starting_after: rows[rows.length - 1].id }, base)}" data-test="page-older">Older →</a>` : ''}
</div>`;
}

function searchPager(query: Readonly<Record<string, string>>, answer: ApiAnswer): Html {
  const next = answer.body.next_page as string | null;
  return next ? html`<div class="pager"><a href="${listHref(query, { page: next })}" data-test="page-older">More results →</a></div>` : html``;
}

/** GET /console/objects: the index of types, a type's list, or an id typed in (sent to its page). */
async function objectsPage(ctx: ConsoleContext): Promise<PageResult> {
  const { query } = ctx.req;
  if (query.id !== undefined) {
    const id = query.id.trim();
    return id === '' ? kindsIndex(ctx) : { redirect: objectHref(id, query.type) };
  }
  if (!query.type) return kindsIndex(ctx);
  const kind = ctx.catalog.kind(query.type);
  if (!kind) return ctx.notFound(`The console has no list of ${query.type} objects.`);
  return listPage(ctx, kind);
}

/** GET /console/objects/:id: the object as the API's retrieve renders it, at the version picked. */
async function objectPage(ctx: ConsoleContext): Promise<PageResult> {
  const id = ctx.req.pathParams.id;
  const version = ctx.req.query.version || undefined;
  const wanted = ctx.req.query.type;
  const types = wanted ? (ctx.catalog.kind(wanted)?.retrievePath ? [wanted] : []) : ctx.catalog.candidateTypes(id);
  // With one type possible, its related lists are asked for beside the object itself (they name
  // it by id, and answer nothing of another account's); dropped if the object isn't found.
  const early = types.length === 1 ? relatedOf(ctx, types[0], id) : undefined;
  early?.catch(() => undefined);
  for (const type of types) {
    const answer = await ctx.call('GET', ctx.catalog.retrievePath(type, id)!, {}, { version });
    // Another account's id is a 404 too: the API can't tell them apart for this key, and neither can the console.
    if (answer.status === 404) continue;
    if (answer.status !== 200) return ctx.page(id, html`<h1><span class="id">${id}</span></h1>${errorBox(answer)}`, { active: 'objects', status: answer.status });
    return showObject(ctx, type, answer.body as Obj, version, await (early ?? relatedOf(ctx, type, id)));
  }
  return ctx.notFound(`No object ${id} was found for this account.`);
}

/** The sections of objects related to an object of `type` (RELATED), each from its type's list operation. */
function relatedOf(ctx: ConsoleContext, type: string, id: string): Promise<Html[]> {
  return Promise.all(
    (RELATED[type] ?? []).map(async (r) => {
      const kind = ctx.catalog.kind(r.type);
      if (!kind) return html``;
      const answer = await ctx.call('GET', kind.listPath, { [r.param]: id, limit: 10 });
      const rows = answer.status === 200 ? (answer.body.data as Obj[]) : [];
      return html`<section class="card" data-test="related-${r.type}"><h2>${r.title}</h2>${answer.status === 200 ? '' : errorBox(answer)}${table(objectColumns(r.type), rows, 'None.')}
${answer.status === 200 && answer.body.has_more ? html`<p class="muted">Showing the latest ${rows.length}.</p>` : ''}</section>`;
    }),
  );
}

function showObject(ctx: ConsoleContext, type: string, object: Obj, version: string | undefined, related: readonly Html[]): Promise<PageResult> {
  const shownVersion = version ?? '';
  // Every id but the object's own is a link to its page.
  const isLink = (text: string) => text !== object.id && ctx.catalog.typeOfId(text) !== undefined;
  const body = html`<h1><span class="type">${type}</span><span class="id">${object.id}</span></h1>
<form class="filters" method="get" action="${objectHref(object.id)}">
<input type="hidden" name="type" value="${type}">
<label>API version<select name="version" data-test="version-picker"><option value="">The account's default</option>${[...API_VERSIONS]
    .reverse()
    .map((v) => html`<option value="${v}" ${raw(v === shownVersion ? 'selected' : '')}>${v}</option>`)}</select></label>
<button type="submit" class="secondary">Show</button>
</form>
${
  related.length === 0
    ? jsonView(object, isLink)
    : html`<div class="object">${jsonView(object, isLink)}<div>${related}</div></div>`
}`;
  return ctx.page(object.id, body, { active: 'objects' });
}

export const objectPages: readonly ConsolePage[] = [
  { method: 'get', path: '/objects', nav: { key: 'objects', label: 'Objects', href: '/console/objects' }, handler: objectsPage },
  { method: 'get', path: '/objects/:id', handler: objectPage },
];
