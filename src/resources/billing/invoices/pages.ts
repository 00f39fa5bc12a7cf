import { ApiError } from '../../../kernel/errors';
import type { RequestContext } from '../../../kernel/route';
import { accountApiVersion } from '../../../events/emit';
import { unixSeconds } from '../../../lib/clock';
import { html, htmlDocument, type Html } from '../../../hosted/html';
import { hostedPage, messagePage, type FileResult, type PageRequest, type PageResult } from '../../../hosted/pages';
import { createCardPaymentMethod, pendingNextAction } from '../../payments';
import { invoicePaid } from '../subscriptions/renewals';
import { scheduleSubscriptions } from '../subscriptions/jobs';
import { INVOICE_PAGE_PATH, invoiceOfToken, invoicePageUrl } from './links';
import { invoicePdf } from './pdf';
import { payInvoice } from './service';
import { day, invoiceView, money, STATUS_TEXT, type InvoiceView } from './view';

// The hosted invoice page (`hosted_invoice_url`) and its PDF (`invoice_pdf`). The token in the
// path is the only credential: it opens one invoice, whoever's key made it, and nothing else. An
// open invoice can be paid with a public test card: the card becomes a PaymentMethod of the
// invoice's account and the invoice is paid by `payInvoice`, the code of POST /v1/invoices/{id}/pay;
// a card that asks for 3-D Secure goes to its intent's challenge page, which sends the person back here.

const PAGE = `${INVOICE_PAGE_PATH}/:token`;

const invalidLink = (nonce: string) => messagePage(nonce, 'This link is not valid', 'Ask whoever sent you this invoice for a new link.', 404);

/** The invoice a token opens, with the request context of its account (for the payment), or the 404 page. */
async function open(req: PageRequest): Promise<{ view: InvoiceView; ctx: RequestContext } | PageResult> {
  const { deps } = req;
  const link = await invoiceOfToken(deps.prisma, req.pathParams.token ?? '');
  if (!link) return invalidLink(req.nonce);
  const view = await invoiceView(deps.prisma, deps, link.accountId, link.invoiceId, unixSeconds(deps.clock));
  const account = await deps.prisma.account.findUnique({ where: { id: link.accountId }, select: { id: true, parentAccountId: true } });
  if (!view || !account) return invalidLink(req.nonce);
  const version = await accountApiVersion(deps.prisma, account.id, deps.config.defaultApiVersion);
  const ctx: RequestContext = {
    requestId: req.requestId,
    // The invoice's own account, as its key would call; the page reaches nothing else.
    caller: { platformAccountId: account.parentAccountId ?? account.id, accountId: account.id, keyHint: 'hosted invoice page', defaultApiVersion: version, publishable: false },
    apiVersion: version,
    idempotencyKey: undefined,
    params: {},
    pathParams: { invoice: view.id },
    deps,
  };
  return { view, ctx };
}

function invoiceBody(view: InvoiceView, pdfUrl: string, error: string | null): Html {
  const title = `Invoice ${view.number ?? ''}`;
  const rows = view.lines.map(
    (l) => html`<tr><td>${l.description ?? ''}</td><td class="num">${l.quantity ?? ''}</td><td class="num">${money(view, l.amount)}</td></tr>`,
  );
  const totals: [string, number][] = [['Subtotal', view.subtotal]];
  if (view.discount !== 0) totals.push(['Discount', -view.discount]);
  if (view.tax !== 0) totals.push(['Tax', view.tax]);
  totals.push(['Total', view.total], ['Amount paid', view.amountPaid]);
  const shownError = error ?? view.lastPaymentError;
  return html`<style>table{width:100%;border-collapse:collapse;font-size:14px;margin:12px 0}td,th{padding:6px 4px;border-bottom:1px solid #e3e8ee;text-align:left}.num{text-align:right;white-space:nowrap}.due{font-size:18px;font-weight:600}.paid{background:#e6f4ea;border:1px solid #a8d5b5;border-radius:4px;padding:8px 12px;color:#1e5631}dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 12px;font-size:14px}dt{color:#697386}dd{margin:0}</style>
<h1 id="title">${title}</h1>
<dl>
<dt>Status</dt><dd id="status">${STATUS_TEXT[view.status] ?? view.status}</dd>
<dt>Billed to</dt><dd id="customer">${view.customerName ?? view.customerEmail ?? ''}</dd>
<dt>Issued</dt><dd>${day(view.finalizedAt)}</dd>
<dt>Due</dt><dd id="due-date">${day(view.dueDate)}</dd>
</dl>
${view.description ? html`<p id="description">${view.description}</p>` : ''}
<table id="lines"><thead><tr><th>Description</th><th class="num">Qty</th><th class="num">Amount</th></tr></thead><tbody>${rows}</tbody>
<tfoot>${totals.map(([label, amount]) => html`<tr><td colspan="2" class="num">${label}</td><td class="num">${money(view, amount)}</td></tr>`)}
<tr class="due"><td colspan="2" class="num">Amount due</td><td class="num" id="amount-due">${money(view, view.amountRemaining)}</td></tr></tfoot></table>
${view.status === 'paid' ? html`<p class="paid" id="paid">Paid on ${day(view.paidAt)}. Thank you.</p>` : ''}
${view.status === 'open' ? payForm(shownError) : ''}
${view.footer ? html`<p class="muted">${view.footer}</p>` : ''}
<p><a id="pdf" href="${pdfUrl}">Download the invoice (PDF)</a></p>`;
}

function payForm(error: string | null): Html {
  return html`${error ? html`<p class="errors" id="error" role="alert">${error}</p>` : ''}
<form method="post" id="pay">
<fieldset><legend>Pay with a test card</legend>
<p class="muted">Use a public test card number, such as 4242 4242 4242 4242. No real card is charged.</p>
<label for="number">Card number</label><input id="number" name="number" inputmode="numeric" autocomplete="off" required>
<label for="exp">Expiry (MM / YY)</label><input id="exp" name="exp" placeholder="MM / YY" autocomplete="off" required>
<label for="cvc">CVC</label><input id="cvc" name="cvc" inputmode="numeric" autocomplete="off">
</fieldset>
<button type="submit" id="submit">Pay invoice</button>
</form>`;
}

const invoicePage = (req: PageRequest, view: InvoiceView, error: string | null = null, status = 200): PageResult => ({
  status,
  html: htmlDocument({ title: `Invoice ${view.number ?? ''}`, nonce: req.nonce, body: invoiceBody(view, `${invoicePageUrl(req.deps, req.pathParams.token)}/pdf`, error) }),
});

/** GET /hosted/invoices/:token */
export async function showInvoicePage(req: PageRequest): Promise<PageResult> {
  const found = await open(req);
  return 'view' in found ? invoicePage(req, found.view) : found;
}

/** A form field's text; anything but one string (a list, an object) is none. */
const textOf = (value: unknown): string => (typeof value === 'string' ? value : '');

/** `MM / YY`, `MM/YYYY` or `MMYY` as a month and year; null when it is none of them. */
function expiryOf(text: string): { month: number; year: number } | null {
  const m = /^\s*(\d{1,2})\s*\/?\s*(\d{2}|\d{4})\s*$/.exec(text);
  return m ? { month: Number(m[1]), year: Number(m[2]) } : null;
}

/** POST /hosted/invoices/:token: pays the open invoice with the card of the form. */
export async function payInvoicePage(req: PageRequest): Promise<PageResult> {
  const found = await open(req);
  if (!('view' in found)) return found;
  const { view, ctx } = found;
  if (view.status !== 'open') return invoicePage(req, view);
  const number = textOf(req.form.number).replace(/[\s-]/g, '');
  const expiry = expiryOf(textOf(req.form.exp));
  const cvc = textOf(req.form.cvc).trim();
  if (number === '') return invoicePage(req, view, 'Enter a card number.', 400);
  if (!expiry) return invoicePage(req, view, 'Enter the expiry as MM / YY.', 400);
  const pageUrl = invoicePageUrl(req.deps, req.pathParams.token);
  try {
    const card = await createCardPaymentMethod(ctx, { number, exp_month: expiry.month, exp_year: expiry.year, cvc: cvc === '' ? undefined : cvc });
    await payInvoice({ ...ctx, params: { payment_method: card.id } }, { paid: invoicePaid, schedule: scheduleSubscriptions }, { returnUrl: pageUrl });
  } catch (err) {
    if (!(err instanceof ApiError) || err.status >= 500) throw err;
    if (err.code === 'authentication_required') {
      const challenge = await challengeUrl(req, view.id);
      if (challenge) return { redirect: challenge };
    }
    // The invoice as the attempt left it (counted, its decline recorded).
    const again = await open(req);
    return invoicePage(req, 'view' in again ? again.view : view, err.message, err.status);
  }
  // Paid: the page again, by GET, so a reload doesn't post twice.
  return { redirect: pageUrl };
}

/** The challenge page of the invoice's intent waiting on 3-D Secure, if there is one. */
async function challengeUrl(req: PageRequest, invoiceId: string): Promise<string | null> {
  const intent = await req.deps.prisma.paymentIntent.findFirst({ where: { invoiceId, status: 'requires_action' }, orderBy: { seq: 'desc' }, select: { id: true } });
  if (!intent) return null;
  const next = (await pendingNextAction(req.deps.sql, req.deps, intent.id)) as { redirect_to_url?: { url: string } } | null;
  return next?.redirect_to_url?.url ?? null;
}

/** GET /hosted/invoices/:token/pdf */
export async function servePdf(req: PageRequest): Promise<PageResult | FileResult> {
  const found = await open(req);
  if (!('view' in found)) return found;
  const { view } = found;
  return { file: await invoicePdf(view), contentType: 'application/pdf', filename: `Invoice-${view.number ?? view.id}.pdf` };
}

export const pages = [hostedPage('get', PAGE, showInvoicePage), hostedPage('post', PAGE, payInvoicePage), hostedPage('get', `${PAGE}/pdf`, servePdf)];
