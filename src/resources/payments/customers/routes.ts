import { route } from '../../../kernel/route';
import { OBJECT } from './serializer';
import { createCustomer, createsAlone, deleteCustomer, deleteCustomerDiscount, listCustomers, retrieveCustomer, searchCustomers, updateCustomer, updatesAlone } from './service';

const one = { object: OBJECT };
const many = { object: OBJECT, list: true };
const found = { object: OBJECT, search: true };

export const routes = [
  route('get', '/v1/customers', 'GetCustomers', many, listCustomers),
  route('post', '/v1/customers', 'PostCustomers', one, createCustomer, { oneStatement: createsAlone }),
  route('get', '/v1/customers/search', 'GetCustomersSearch', found, searchCustomers),
  route('get', '/v1/customers/{customer}', 'GetCustomersCustomer', one, retrieveCustomer),
  route('post', '/v1/customers/{customer}', 'PostCustomersCustomer', one, updateCustomer, { sqlOnly: true, oneStatement: updatesAlone }),
  route('delete', '/v1/customers/{customer}', 'DeleteCustomersCustomer', one, deleteCustomer),
  route('delete', '/v1/customers/{customer}/discount', 'DeleteCustomersCustomerDiscount', { object: 'discount' }, deleteCustomerDiscount),
];
