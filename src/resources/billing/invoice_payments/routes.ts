import { route } from '../../../kernel/route';
import { INVOICE_PAYMENT_OBJECT } from './serializer';
import { listInvoicePayments, retrieveInvoicePayment } from './service';

const one = { object: INVOICE_PAYMENT_OBJECT };

// Invoice payments are made by billing as it collects invoices: read and listed here.
export const routes = [
  route('get', '/v1/invoice_payments', 'GetInvoicePayments', { ...one, list: true }, listInvoicePayments),
  route('get', '/v1/invoice_payments/{invoice_payment}', 'GetInvoicePaymentsInvoicePayment', one, retrieveInvoicePayment),
];
