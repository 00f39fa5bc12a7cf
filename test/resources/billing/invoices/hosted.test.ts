import { inflateSync } from 'node:zlib';
import { newTestKey, startTestApp, type TestApp } from '../../../helpers/app';
import { createCustomer, form } from '../../../helpers/fixtures';
import { payingCustomer, recurringPrice } from '../../../helpers/billing';
import { expectMatchesResponseSchema } from '../../../helpers/responseSchemas';
import { requestsOf } from '../../../helpers/requests';
import { expectMatchesSdkTypes } from '../../../helpers/sdkTypes';
import { invoicePdf } from '../../../../src/resources/billing/invoices/pdf';
import type { InvoiceView } from '../../../../src/resources/billing/invoices/view';

// The hosted invoice page and PDF of finalized invoices (`hosted_invoice_url`, `invoice_pdf`):
// their links, the page (escaped, paid with a test card through the invoice's pay operation), the
// PDF's text, and tokens that open one invoice only. The browser test pays through chromium.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get, eventsOf } = requestsOf(() => t);
const IN = '/v1/invoices';
const HOSTED = /^http:\/\/[^/]+\/hosted\/invoices\/([A-Za-z0-9]{48})$/;
const EVIL = '<script>alert(1)</script>';

/** The path of a hosted URL, for supertest (the URL is under PUBLIC_URL). */
const pathOf = (url: string): string => {
  expect(url.startsWith(`${t.config.publicUrl}/hosted/invoices/`)).toBe(true);
  return new URL(url).pathname;
};

/** A finalized send_invoice invoice of a new customer, with two lines. */
async function sentInvoice(key = newTestKey(), name = 'Ada Lovelace', description = 'Consulting, March') {
  const customer = (await createCustomer(t, key, { name, email: 'ada@example.com' })).id as string;
  expect((await post(key, '/v1/invoiceitems', { customer, amount: 12000, currency: 'usd', description })).status).toBe(200);
  expect((await post(key, '/v1/invoiceitems', { customer, amount: 550, currency: 'usd', description: 'Travel' })).status).toBe(200);
  const draft = await post(key, IN, { customer, collection_method: 'send_invoice', days_until_due: 14, pending_invoice_items_behavior: 'include' });
  expect(draft.status).toBe(200);
  expect(draft.body).toMatchObject({ status: 'draft', hosted_invoice_url: null, invoice_pdf: null });
  const res = await post(key, `${IN}/${draft.body.id}/finalize`);
  expect(res.status).toBe(200);
  return { key, customer, invoice: res.body as Record<string, any> };
}

const page = (url: string) => t.http().get(pathOf(url));
const pay = (url: string, card: Record<string, string>) => t.http().post(pathOf(url)).type('form').send(form(card));

/** The text pdfkit drew: its content streams inflated, the hex strings of its text operators decoded. */
function pdfText(pdf: Buffer): string {
  const raw = pdf.toString('latin1');
  let text = '';
  for (const m of raw.matchAll(/stream\r?\n([\s\S]*?)\r?\nendstream/g)) {
    let content: string;
    try {
      content = inflateSync(Buffer.from(m[1], 'latin1')).toString('latin1');
    } catch {
      content = m[1];
    }
    for (const h of content.matchAll(/<([0-9a-fA-F]+)>/g)) text += Buffer.from(h[1], 'hex').toString('latin1');
    text += '\n';
  }
  return text;
}


test('a finalized send_invoice invoice has a stable hosted page and PDF under PUBLIC_URL; the draft had neither', async () => {
  const { key, invoice } = await sentInvoice();
  expectMatchesResponseSchema('PostInvoicesInvoiceFinalize', 200, invoice);
  expectMatchesSdkTypes(invoice);
  expect(invoice.hosted_invoice_url).toMatch(HOSTED);
  expect(invoice.invoice_pdf).toBe(`${invoice.hosted_invoice_url}/pdf`);
  const again = await get(key, `${IN}/${invoice.id}`);
  expectMatchesResponseSchema('GetInvoicesInvoice', 200, again.body);
  expect(again.body).toMatchObject({ hosted_invoice_url: invoice.hosted_invoice_url, invoice_pdf: invoice.invoice_pdf });
  const list = await get(key, `${IN}?limit=3`);
  expect(list.body.data[0]).toMatchObject({ id: invoice.id, hosted_invoice_url: invoice.hosted_invoice_url });
  const [finalized] = await eventsOf(key, 'invoice.finalized');
  expect(finalized.data.object).toMatchObject({ id: invoice.id, hosted_invoice_url: invoice.hosted_invoice_url, invoice_pdf: invoice.invoice_pdf });
  // The token is stored as a hash and sealed, never in the clear.
  const token = HOSTED.exec(invoice.hosted_invoice_url)![1];
  const rows = await t.runtime.prisma.$queryRaw<{ token_hash: string; token: string }[]>`SELECT token_hash, token FROM invoice_links WHERE invoice_id = ${invoice.id}`;
  expect(rows).toHaveLength(1);
  expect(rows[0].token.startsWith('sealed:v1:')).toBe(true);
  expect(JSON.stringify(rows)).not.toContain(token);
});

test("a subscription's invoice gets them too (every finalized invoice, as the public API)", async () => {
  const key = newTestKey();
  const { id: customer } = await payingCustomer(t, key);
  const price = await recurringPrice(t, key, 2000);
  const sub = await post(key, '/v1/subscriptions', { customer, items: [{ price: price.id }], expand: ['latest_invoice'] });
  expect(sub.status).toBe(200);
  expect(sub.body.latest_invoice).toMatchObject({ status: 'paid', hosted_invoice_url: expect.stringMatching(HOSTED), invoice_pdf: expect.stringMatching(/\/pdf$/) });
  const shown = await page(sub.body.latest_invoice.hosted_invoice_url);
  expect(shown.status).toBe(200);
  expect(shown.text).toContain('id="paid"');
  expect(shown.text).not.toContain('id="pay"');
});

test('the page shows the invoice, under the hosted pages\' headers, with values as inert text', async () => {
  const { invoice } = await sentInvoice(newTestKey(), EVIL, `Line ${EVIL}`);
  const res = await page(invoice.hosted_invoice_url);
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/html/);
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers['referrer-policy']).toBe('no-referrer');
  expect(res.headers['content-security-policy']).toMatch(/default-src 'none'.*script-src 'nonce-/);
  expect(res.text).toContain(invoice.number);
  expect(res.text).toContain('$120.00');
  expect(res.text).toContain('$5.50');
  expect(res.text).toContain('<td class="num" id="amount-due">$125.50</td>');
  expect(res.text).toContain('<dd id="status">Open</dd>');
  expect(res.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  expect(res.text).toContain('Line &lt;script&gt;');
  expect(res.text).not.toContain(EVIL);
  // No script at all on this page, and nothing loaded from elsewhere.
  expect(res.text).not.toMatch(/<script/i);
  const links = [...res.text.matchAll(/(?:src|href|action)="([^"]*)"/g)].map((m) => m[1]);
  expect(links).toEqual(['data:,', invoice.invoice_pdf]);
  expect(res.text).toContain('<form method="post" id="pay">');
});

test('the PDF: application/pdf, a PDF, with the number, customer, lines, totals and amount due', async () => {
  const { invoice } = await sentInvoice(newTestKey(), 'Grace Hopper', 'Compiler work');
  // fetch, for the body's bytes as they are (the app listens on this machine).
  const res = await fetch(`http://127.0.0.1:${t.port}${pathOf(invoice.invoice_pdf)}`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/pdf');
  expect(res.headers.get('content-disposition')).toBe(`inline; filename="Invoice-${invoice.number}.pdf"`);
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('referrer-policy')).toBe('no-referrer');
  const pdf = Buffer.from(await res.arrayBuffer());
  expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
  expect(pdf.subarray(-6).toString('latin1')).toMatch(/%%EOF/);
  const text = pdfText(pdf);
  for (const shown of [invoice.number, 'Grace Hopper', 'Compiler work', '$120.00', 'Travel', '$5.50', 'Amount due', '$125.50', 'Open']) expect(text).toContain(shown);
});

test('invoicePdf without compression leaves the text readable as drawn', async () => {
  const view: InvoiceView = {
    id: 'in_1',
    accountId: 'acct_1',
    number: 'ABCD1234-0007',
    status: 'paid',
    currency: 'eur',
    customerName: 'Émile',
    customerEmail: null,
    description: null,
    footer: 'Thanks',
    finalizedAt: 1_800_000_000,
    dueDate: null,
    paidAt: 1_800_000_100,
    lines: [{ description: 'Widget', quantity: 2, amount: 1998 }],
    subtotal: 1998,
    discount: 0,
    tax: 0,
    total: 1998,
    amountDue: 1998,
    amountPaid: 1998,
    amountRemaining: 0,
    lastPaymentError: null,
  };
  const pdf = await invoicePdf(view, { compress: false });
  const raw = pdf.toString('latin1');
  expect(raw.startsWith('%PDF-')).toBe(true);
  expect(raw).not.toContain('/FlateDecode');
  const text = pdfText(pdf);
  for (const shown of ['ABCD1234-0007', 'Widget', 'Paid on', 'Thanks', '€19.98'.replace('€', '\x80')]) expect(text).toContain(shown);
});

test('paying on the page with 4242424242424242: the invoice is paid through its pay operation (invoice.paid), and the page says so', async () => {
  const { key, invoice } = await sentInvoice();
  const res = await pay(invoice.hosted_invoice_url, { number: '4242 4242 4242 4242', exp: '12 / 34', cvc: '123' });
  expect(res.status).toBe(303);
  expect(res.headers.location).toBe(invoice.hosted_invoice_url);
  const paid = await get(key, `${IN}/${invoice.id}?expand[]=payments`);
  expect(paid.body).toMatchObject({ status: 'paid', amount_paid: 12550, amount_remaining: 0, attempt_count: 1 });
  const intent = paid.body.payments.data[0].payment.payment_intent;
  const pi = await get(key, `/v1/payment_intents/${intent}`);
  expect(pi.body).toMatchObject({ status: 'succeeded', amount: 12550 });
  const card = await get(key, `/v1/payment_methods/${pi.body.payment_method}`);
  expect(card.body.card).toMatchObject({ last4: '4242', exp_month: 12, exp_year: 2034 });
  const [event] = await eventsOf(key, 'invoice.paid');
  expect(event.data.object).toMatchObject({ id: invoice.id, status: 'paid', hosted_invoice_url: invoice.hosted_invoice_url });
  const shown = await page(invoice.hosted_invoice_url);
  expect(shown.text).toContain('<dd id="status">Paid</dd>');
  expect(shown.text).toContain('id="paid"');
  expect(shown.text).not.toContain('id="pay"');
  // Posting again pays nothing more.
  const twice = await pay(invoice.hosted_invoice_url, { number: '4242424242424242', exp: '12/34' });
  expect(twice.status).toBe(200);
  expect((await eventsOf(key, 'invoice.paid')).length).toBe(1);
});

test('a declined card shows the decline on the page; the attempt is recorded; a wrong number or expiry says so', async () => {
  const { key, invoice } = await sentInvoice();
  const res = await pay(invoice.hosted_invoice_url, { number: '4000000000000002', exp: '12/34', cvc: '123' });
  expect(res.status).toBe(402);
  expect(res.text).toContain('<p class="errors" id="error" role="alert">Your card was declined.</p>');
  expect(res.text).toContain('<dd id="status">Open</dd>');
  expect((await get(key, `${IN}/${invoice.id}`)).body).toMatchObject({ status: 'open', attempt_count: 1 });
  expect(await eventsOf(key, 'invoice.payment_failed')).toHaveLength(1);
  const wrong = await pay(invoice.hosted_invoice_url, { number: '4242424242424241', exp: '12/34' });
  expect(wrong.status).toBe(402);
  expect(wrong.text).toContain('Your card number is incorrect.');
  const noExpiry = await pay(invoice.hosted_invoice_url, { number: '4242424242424242', exp: 'soon' });
  expect(noExpiry.status).toBe(400);
  expect(noExpiry.text).toContain('Enter the expiry as MM / YY.');
  expect((await get(key, `${IN}/${invoice.id}`)).body).toMatchObject({ status: 'open', attempt_count: 1 });
});

test('a card that asks for 3-D Secure goes to its challenge page and back; completing it pays the invoice', async () => {
  const { key, invoice } = await sentInvoice();
  const res = await pay(invoice.hosted_invoice_url, { number: '4000002760003184', exp: '12/34', cvc: '123' });
  expect(res.status).toBe(303);
  expect(res.headers.location).toMatch(/\/hosted\/three_d_secure\/[A-Za-z0-9]{48}$/);
  expect((await get(key, `${IN}/${invoice.id}`)).body).toMatchObject({ status: 'open' });
  const answered = await t.http().post(new URL(res.headers.location).pathname).type('form').send('outcome=complete');
  expect(answered.status).toBe(303);
  const back = new URL(answered.headers.location);
  expect(`${back.origin}${back.pathname}`).toBe(invoice.hosted_invoice_url);
  expect(back.searchParams.get('redirect_status')).toBe('succeeded');
  expect((await get(key, `${IN}/${invoice.id}`)).body).toMatchObject({ status: 'paid' });
  expect((await page(invoice.hosted_invoice_url)).text).toContain('<dd id="status">Paid</dd>');
});

test("a token opens its own invoice only, whoever's key made it; a wrong token is the 404 page", async () => {
  const a = await sentInvoice(newTestKey(), 'Customer A');
  const b = await sentInvoice(newTestKey(), 'Customer B');
  const pageA = await page(a.invoice.hosted_invoice_url);
  expect(pageA.text).toContain(a.invoice.number);
  expect(pageA.text).toContain('Customer A');
  expect(pageA.text).not.toContain('Customer B');
  // The API keeps each key to its own invoices.
  expect((await get(a.key, `${IN}/${b.invoice.id}`)).status).toBe(404);
  const token = HOSTED.exec(a.invoice.hosted_invoice_url)![1];
  const altered = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;
  for (const bad of [altered, 'short', `${token}x`, b.invoice.id]) {
    for (const path of [`/hosted/invoices/${bad}`, `/hosted/invoices/${bad}/pdf`]) {
      const res = await t.http().get(path);
      expect(res.status).toBe(404);
      expect(res.text).toContain('This link is not valid');
      expect(res.text).not.toContain('Customer');
    }
  }
  const posted = await t.http().post(`/hosted/invoices/${altered}`).type('form').send(form({ number: '4242424242424242', exp: '12/34' }));
  expect(posted.status).toBe(404);
  expect((await get(b.key, `${IN}/${b.invoice.id}`)).body.status).toBe('open');
});
