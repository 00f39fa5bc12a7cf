import { route } from '../../../kernel/route';
import { INVOICE_ITEM_OBJECT } from './serializer';
import { createInvoiceItem, deleteInvoiceItem, listInvoiceItems, retrieveInvoiceItem, updateInvoiceItem } from './service';

const item = { object: INVOICE_ITEM_OBJECT };

export const routes = [
  route('get', '/v1/invoiceitems', 'GetInvoiceitems', { ...item, list: true }, listInvoiceItems),
  route('post', '/v1/invoiceitems', 'PostInvoiceitems', item, createInvoiceItem),
  route('get', '/v1/invoiceitems/{invoiceitem}', 'GetInvoiceitemsInvoiceitem', item, retrieveInvoiceItem),
  route('post', '/v1/invoiceitems/{invoiceitem}', 'PostInvoiceitemsInvoiceitem', item, updateInvoiceItem),
  route('delete', '/v1/invoiceitems/{invoiceitem}', 'DeleteInvoiceitemsInvoiceitem', item, deleteInvoiceItem),
];
