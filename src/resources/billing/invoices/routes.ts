import { route } from '../../../kernel/route';
import { invoicePaid } from '../subscriptions/renewals';
import { createPreview, listUpcomingLines, retrieveUpcoming } from '../subscriptions/preview';
import { scheduleSubscriptions } from '../subscriptions/jobs';
import { INVOICE_OBJECT, LINE_OBJECT } from './serializer';
import { listInvoiceLines, listInvoices, payInvoice, retrieveInvoice, searchInvoices } from './service';
import {
  createManualInvoice,
  deleteManualInvoice,
  finalizeManualInvoice,
  markManualInvoiceUncollectible,
  sendManualInvoice,
  updateManualInvoice,
  voidManualInvoice,
} from './manual';

const invoice = { object: INVOICE_OBJECT };

// Invoices: read, listed and paid; subscriptions make theirs, and manual ones go through their own
// operations (manual.ts).
export const routes = [
  route('get', '/v1/invoices', 'GetInvoices', { ...invoice, list: true }, listInvoices),
  route('get', '/v1/invoices/search', 'GetInvoicesSearch', { ...invoice, search: true }, searchInvoices),
  // Previews (subscriptions work them out); `upcoming` before `{invoice}`, so it is never an id.
  route('post', '/v1/invoices/create_preview', 'PostInvoicesCreatePreview', invoice, createPreview),
  route('get', '/v1/invoices/upcoming', 'GetInvoicesUpcoming', invoice, retrieveUpcoming),
  route('get', '/v1/invoices/upcoming/lines', 'GetInvoicesUpcomingLines', { object: LINE_OBJECT, list: true }, listUpcomingLines),
  route('get', '/v1/invoices/{invoice}', 'GetInvoicesInvoice', invoice, retrieveInvoice),
  route('get', '/v1/invoices/{invoice}/lines', 'GetInvoicesInvoiceLines', { object: LINE_OBJECT, list: true }, listInvoiceLines),
  route('post', '/v1/invoices', 'PostInvoices', invoice, createManualInvoice),
  route('post', '/v1/invoices/{invoice}', 'PostInvoicesInvoice', invoice, updateManualInvoice),
  route('delete', '/v1/invoices/{invoice}', 'DeleteInvoicesInvoice', invoice, deleteManualInvoice),
  route('post', '/v1/invoices/{invoice}/finalize', 'PostInvoicesInvoiceFinalize', invoice, finalizeManualInvoice),
  route('post', '/v1/invoices/{invoice}/void', 'PostInvoicesInvoiceVoid', invoice, voidManualInvoice),
  route('post', '/v1/invoices/{invoice}/mark_uncollectible', 'PostInvoicesInvoiceMarkUncollectible', invoice, markManualInvoiceUncollectible),
  route('post', '/v1/invoices/{invoice}/send', 'PostInvoicesInvoiceSend', invoice, sendManualInvoice),
  route('post', '/v1/invoices/{invoice}/pay', 'PostInvoicesInvoicePay', invoice, (ctx) => payInvoice(ctx, { paid: invoicePaid, schedule: scheduleSubscriptions })),
];
