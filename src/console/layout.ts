import { escapeHtml, html, Html, pageShell, raw } from '../hosted/html';
import type { Session } from './sessions';

// The console's shared page: a header with the navigation, the view-as selector and sign-out
// (forms carrying the session's CSRF token), then the page's body; and the shared pieces pages
// are made of (tables of objects, pagination, JSON with its ids linked). Values go through html``
// only, so whatever an object holds (a name, metadata) is text, never markup.

const STYLE = `
  * { box-sizing: border-box; }
  body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; background: #f6f8fa; color: #1a1f36; margin: 0; font-size: 14px; }
  a { color: #533afd; text-decoration: none; }
  a:hover { text-decoration: underline; }
  header { background: #fff; border-bottom: 1px solid #e3e8ee; padding: 10px 24px; display: flex; gap: 20px; align-items: center; flex-wrap: wrap; }
  header .brand { font-weight: 700; font-size: 16px; color: #1a1f36; }
  header .test { background: #fff3cd; color: #7a5a00; border-radius: 4px; padding: 2px 8px; font-size: 12px; font-weight: 600; }
  header nav { display: flex; gap: 14px; flex: 1; flex-wrap: wrap; }
  header nav a.active { font-weight: 600; color: #1a1f36; }
  header form { display: flex; gap: 6px; align-items: center; margin: 0; }
  header .who { color: #697386; font-size: 12px; }
  main { max-width: 1180px; margin: 24px auto; padding: 0 24px; }
  h1 { font-size: 22px; margin: 0 0 16px; }
  h2 { font-size: 16px; margin: 24px 0 8px; }
  section.card > h2:first-child { margin-top: 0; }
  h1 .type { color: #697386; font-weight: 500; margin-right: 6px; }
  h1 .id { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 20px; }
  section.card { background: #fff; border: 1px solid #e3e8ee; border-radius: 8px; padding: 16px 20px; margin-bottom: 16px; }
  table { width: 100%; border-collapse: collapse; background: #fff; }
  th, td { text-align: left; padding: 7px 10px; border-bottom: 1px solid #eef1f4; vertical-align: top; overflow-wrap: anywhere; }
  th { font-size: 12px; color: #697386; font-weight: 600; text-transform: uppercase; letter-spacing: .03em; white-space: nowrap; }
  tr:hover td { background: #fafbfc; }
  code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
  pre.json { background: #fff; border: 1px solid #e3e8ee; border-radius: 8px; padding: 14px 16px; overflow-x: auto; white-space: pre-wrap; overflow-wrap: anywhere; line-height: 1.45; }
  pre.json .s { color: #0a6e31; } pre.json .k { color: #1a1f36; } pre.json .n { color: #9a3412; }
  pre.json a.s { color: #533afd; text-decoration: underline; }
  .object { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 16px; align-items: start; }
  .object pre.json { margin: 0; }
  @media (max-width: 900px) { .object { grid-template-columns: minmax(0, 1fr); } }
  input, select { padding: 6px 8px; border: 1px solid #c1c9d2; border-radius: 4px; font-size: 14px; background: #fff; }
  button { padding: 6px 12px; border-radius: 4px; border: 1px solid #635bff; background: #635bff; color: #fff; font-size: 14px; cursor: pointer; }
  button.secondary { background: #fff; color: #635bff; }
  form.filters { display: flex; gap: 10px; align-items: flex-end; flex-wrap: wrap; margin-bottom: 12px; }
  form.filters label { display: flex; flex-direction: column; gap: 3px; font-size: 12px; color: #697386; }
  .pager { display: flex; gap: 14px; margin: 12px 0; }
  .muted { color: #697386; font-size: 13px; }
  .error { background: #fdecea; border: 1px solid #f5c2c0; border-radius: 6px; padding: 10px 14px; color: #8a1c14; margin-bottom: 12px; }
  .badge { display: inline-block; border-radius: 10px; padding: 1px 8px; font-size: 12px; background: #eef1f4; }
  .badge.bad { background: #fdecea; color: #8a1c14; }
  .grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(250px, 1fr)); gap: 8px; }
  .grid a { background: #fff; border: 1px solid #e3e8ee; border-radius: 6px; padding: 10px 12px; display: flex; justify-content: space-between; gap: 8px; overflow-wrap: anywhere; }
  .signin { max-width: 440px; margin: 80px auto; }
  .signin input { width: 100%; margin: 6px 0 12px; }
  .note { background: #e8f5e9; border: 1px solid #b7dfb9; border-radius: 6px; padding: 10px 14px; color: #1e5631; margin-bottom: 12px; }
  .row-head { display: flex; justify-content: space-between; gap: 12px; align-items: flex-start; margin-bottom: 8px; }
  .row-head h2 { margin: 0 0 4px; }
  .badge, .nowrap { white-space: nowrap; }
  .actions { display: flex; gap: 6px; flex-wrap: wrap; }
  .actions form { margin: 0; }
  button:disabled { opacity: .45; cursor: default; }
  .secret { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #fff8e1; border: 1px solid #f5d77a; border-radius: 4px; padding: 8px 10px; display: block; margin: 8px 0; overflow-wrap: anywhere; }
`;

/** A navigation entry of the header, declared by the page that serves it (src/console/pages.ts). */
export interface NavEntry {
  readonly label: string;
  readonly href: string;
  /** The entry shown as current on pages that name it. */
  readonly key: string;
}

export interface LayoutOptions {
  readonly title: string;
  readonly nonce: string;
  readonly body: Html;
  /** The signed-in session: the header then shows the navigation, view-as and sign-out. */
  readonly session?: Session;
  readonly nav?: readonly NavEntry[];
  readonly active?: string;
  /** Connected accounts the key may view as (the view-as selector); absent: no selector. */
  readonly connected?: readonly string[];
  readonly script?: string;
}

/** The hidden CSRF field every form of a session carries. */
export const csrfField = (session: Session): Html => html`<input type="hidden" name="csrf_token" value="${session.csrfToken}">`;

function headerOf(options: LayoutOptions): Html {
  const { session } = options;
  if (!session) return html`<header><span class="brand">Sandbank console</span><span class="test">Test mode</span></header>`;
  const links = (options.nav ?? []).map(
    (n) => html`<a href="${n.href}" class="${n.key === options.active ? 'active' : ''}">${n.label}</a>`,
  );
  const accounts = options.connected ?? [];
  const viewAs =
    accounts.length === 0 && !session.stripeAccount
      ? ''
      : html`<form method="post" action="/console/view-as">${csrfField(session)}<label class="who" for="view-as">View as</label>
<select id="view-as" name="account" data-test="view-as"><option value="">${session.accountId} (own)</option>${[
          ...new Set([...(session.stripeAccount ? [session.stripeAccount] : []), ...accounts]),
        ].map((a) => html`<option value="${a}" ${raw(a === session.stripeAccount ? 'selected' : '')}>${a}</option>`)}</select>
<button class="secondary" type="submit">Switch</button></form>`;
  return html`<header><a class="brand" href="/console">Sandbank console</a><span class="test">Test mode</span>
<nav>${links}</nav>${viewAs}
<span class="who">${session.keyHint}</span>
<form method="post" action="/console/sign-out">${csrfField(session)}<button class="secondary" type="submit" data-test="console-signout">Sign out</button></form>
</header>`;
}

export function consoleDocument(options: LayoutOptions): Html {
  return pageShell({
    title: `${options.title} · Sandbank console`,
    nonce: options.nonce,
    style: STYLE,
    script: options.script,
    body: html`${headerOf(options)}
<main>
${options.body}
</main>`,
  });
}

/** A column of a table: its heading and the cell of one row. */
export interface Column<T> {
  readonly heading: string;
  readonly cell: (row: T) => unknown;
}

/** A table of rows, each `data-test="object-row"` (the hook tests and scripts find lists by). */
export function table<T>(columns: readonly Column<T>[], rows: readonly T[], empty = 'Nothing here yet.'): Html {
  if (rows.length === 0) return html`<p class="muted">${empty}</p>`;
  return html`<table><thead><tr>${columns.map((c) => html`<th>${c.heading}</th>`)}</tr></thead>
<tbody>${rows.map((row) => html`<tr data-test="object-row">${columns.map((c) => html`<td>${c.cell(row)}</td>`)}</tr>`)}</tbody></table>`;
}

/** The console page of an object (`type` for ids with no prefix of their own, such as coupons'). */
export const objectHref = (id: string, type?: string): string =>
  `/console/objects/${encodeURIComponent(id)}${type ? `?type=${encodeURIComponent(type)}` : ''}`;

export const objectLink = (id: string, type?: string): Html => html`<a class="mono" href="${objectHref(id, type)}">${id}</a>`;

/** A unix time as UTC, to the second. */
export const when = (unixSeconds: unknown): string =>
  typeof unixSeconds === 'number' ? new Date(unixSeconds * 1000).toISOString().replace('.000Z', 'Z').replace('T', ' ') : '';

/**
 * JSON exactly as JSON.stringify(value, null, 2) writes it, with each string value that `isId`
 * recognises made a link to its object page. Keys and every other token are escaped text.
 */
export function jsonView(value: unknown, isId: (text: string) => boolean): Html {
  const text = JSON.stringify(value, null, 2);
  const out: string[] = [];
  const token = /"(?:[^"\\]|\\.)*"(\s*:)?|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/g;
  let last = 0;
  for (let m = token.exec(text); m; m = token.exec(text)) {
    out.push(escapeHtml(text.slice(last, m.index)));
    last = token.lastIndex;
    const [whole, colon] = m;
    if (colon !== undefined) {
      out.push(`<span class="k">${escapeHtml(whole)}</span>`);
    } else if (whole.startsWith('"')) {
      const inner = JSON.parse(whole) as string;
      out.push(isId(inner) ? `<a class="s" href="${escapeHtml(objectHref(inner))}">${escapeHtml(whole)}</a>` : `<span class="s">${escapeHtml(whole)}</span>`);
    } else {
      out.push(`<span class="n">${escapeHtml(whole)}</span>`);
    }
  }
  out.push(escapeHtml(text.slice(last)));
  return html`<pre class="json" data-test="object-json">${raw(out.join(''))}</pre>`;
}
