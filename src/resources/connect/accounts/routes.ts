import { route } from '../../../kernel/route';
import { OBJECT } from './serializer';
import { createAccount, deleteAccount, listAccounts, rejectAccount, retrieveAccount, retrieveCallerAccount, updateAccount } from './service';

const one = { object: OBJECT };
const many = { object: OBJECT, list: true };

export const routes = [
  route('get', '/v1/account', 'GetAccount', one, retrieveCallerAccount),
  route('get', '/v1/accounts', 'GetAccounts', many, listAccounts),
  route('post', '/v1/accounts', 'PostAccounts', one, createAccount, { oneStatement: () => true }),
  route('get', '/v1/accounts/{account}', 'GetAccountsAccount', one, retrieveAccount),
  route('post', '/v1/accounts/{account}', 'PostAccountsAccount', one, updateAccount, { sqlOnly: true, oneStatement: () => true }),
  route('delete', '/v1/accounts/{account}', 'DeleteAccountsAccount', one, deleteAccount),
  route('post', '/v1/accounts/{account}/reject', 'PostAccountsAccountReject', one, rejectAccount),
];
