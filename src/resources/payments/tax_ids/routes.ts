import { route } from '../../../kernel/route';
import { TAX_ID_OBJECT } from './serializer';
import { createTaxId, deleteTaxId, listTaxIds, retrieveTaxId } from './service';

const one = { object: TAX_ID_OBJECT };

// A customer's tax ids (the public API's customer tax id operations; `/v1/tax_ids` of the account is not served).
export const routes = [
  route('get', '/v1/customers/{customer}/tax_ids', 'GetCustomersCustomerTaxIds', { ...one, list: true }, listTaxIds),
  route('post', '/v1/customers/{customer}/tax_ids', 'PostCustomersCustomerTaxIds', one, createTaxId),
  route('get', '/v1/customers/{customer}/tax_ids/{tax_id}', 'GetCustomersCustomerTaxIdsId', one, retrieveTaxId),
  route('delete', '/v1/customers/{customer}/tax_ids/{tax_id}', 'DeleteCustomersCustomerTaxIdsId', one, deleteTaxId),
];
