import { route } from '../../../kernel/route';
import { BALANCE_TRANSACTION_OBJECT } from './serializer';
import { createBalanceTransaction, listBalanceTransactions, retrieveBalanceTransaction, updateBalanceTransaction } from './service';

const one = { object: BALANCE_TRANSACTION_OBJECT };

export const routes = [
  route('get', '/v1/customers/{customer}/balance_transactions', 'GetCustomersCustomerBalanceTransactions', { ...one, list: true }, listBalanceTransactions),
  route('post', '/v1/customers/{customer}/balance_transactions', 'PostCustomersCustomerBalanceTransactions', one, createBalanceTransaction),
  route('get', '/v1/customers/{customer}/balance_transactions/{transaction}', 'GetCustomersCustomerBalanceTransactionsTransaction', one, retrieveBalanceTransaction),
  route('post', '/v1/customers/{customer}/balance_transactions/{transaction}', 'PostCustomersCustomerBalanceTransactionsTransaction', one, updateBalanceTransaction),
];
