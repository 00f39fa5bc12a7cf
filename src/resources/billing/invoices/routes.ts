import { route } from '../../../kernel/route';
import { invoicePaid } from '../subscriptions/renewals';
import { createPreview, listUpcomingLines, retrieveUpcoming } from '../subscriptions/preview';
import { scheduleSubscriptions } from '../subscriptions/jobs';
import { INVOICE_ITEM_OBJECT, INVOICE_OBJECT, LINE_OBJECT } from './serializer';
import { listInvoiceItems, listInvoiceLines, listInvoices, payInvoice, retrieveInvoice, retrieveInvoiceItem, searchInvoices } from './service';

const invoice = { object: INVOICE_OBJECT };
const item = { object: INVOICE_ITEM_OBJECT };

// Invoices as far as subscriptions need them: read, listed and paid; subscriptions make them.
export const routes = [
  route('get', '/v1/invoices', 'GetInvoices', { ...invoice, list: true }, listInvoices),
  route('get', '/v1/invoices/search', 'GetInvoicesSearch', { ...invoice, search: true }, searchInvoices),
  // Previews (subscriptions work them out); `upcoming` before `{invoice}`, so it is never an id.
  route('post', '/v1/invoices/create_preview', 'PostInvoicesCreatePreview', invoice, createPreview),
  route('get', '/v1/invoices/upcoming', 'GetInvoicesUpcoming', invoice, retrieveUpcoming),
  route('get', '/v1/invoices/upcoming/lines', 'GetInvoicesUpcomingLines', { object: LINE_OBJECT, list: true }, listUpcomingLines),
  route('get', '/v1/invoices/{invoice}', 'GetInvoicesInvoice', invoice, retrieveInvoice),
  route('get', '/v1/invoices/{invoice}/lines', 'GetInvoicesInvoiceLines', { object: LINE_OBJECT, list: true }, listInvoiceLines),
  route('post', '/v1/invoices/{invoice}/pay', 'PostInvoicesInvoicePay', invoice, (ctx) => payInvoice(ctx, { paid: invoicePaid, schedule: scheduleSubscriptions })),
  route('get', '/v1/invoiceitems', 'GetInvoiceitems', { ...item, list: true }, listInvoiceItems),
  route('get', '/v1/invoiceitems/{invoiceitem}', 'GetInvoiceitemsInvoiceitem', item, retrieveInvoiceItem),
];
