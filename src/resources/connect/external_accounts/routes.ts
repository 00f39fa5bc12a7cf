import { route } from '../../../kernel/route';
import { BANK_ACCOUNT_OBJECT } from './serializer';
import { createExternalAccount, deleteExternalAccount, listExternalAccounts, retrieveExternalAccount, updateExternalAccount } from './service';

// Lists hold bank accounts and cards alike; expand paths are checked against the bank account's
// fields, which the card shares (see src/resources/index.ts).
const one = { object: BANK_ACCOUNT_OBJECT };
const PATH = '/v1/accounts/{account}/external_accounts';

export const routes = [
  route('get', PATH, 'GetAccountsAccountExternalAccounts', { object: BANK_ACCOUNT_OBJECT, list: true }, listExternalAccounts),
  route('post', PATH, 'PostAccountsAccountExternalAccounts', one, createExternalAccount),
  route('get', `${PATH}/{external_account}`, 'GetAccountsAccountExternalAccountsExternalAccount', one, retrieveExternalAccount),
  route('post', `${PATH}/{external_account}`, 'PostAccountsAccountExternalAccountsExternalAccount', one, updateExternalAccount),
  route('delete', `${PATH}/{external_account}`, 'DeleteAccountsAccountExternalAccountsExternalAccount', one, deleteExternalAccount),
];
