import { route } from '../../../kernel/route';
import { hostedPage } from '../../../hosted/pages';
import { serveShim, showLinkPage, SHIM_PATH, submitLinkPage } from './pages';
import { ACCOUNT_OBJECT, OWNER_OBJECT, SESSION_OBJECT, TRANSACTION_OBJECT } from './serializer';
import {
  completeSessionBySandbox,
  createSession,
  disconnectAccount,
  listAccounts,
  listInstitutions,
  listSessionsBySandbox,
  listOwners,
  listTransactions,
  refreshAccount,
  retrieveAccount,
  retrieveSession,
  retrieveTransaction,
  subscribeAccount,
  unsubscribeAccount,
  HOSTED_PATH,
} from './service';

// Path parameters are named fc_… in openapi/ (the public API's names, {account} and {session},
// already name connected accounts and verification sessions there).

const session = { object: SESSION_OBJECT };
const account = { object: ACCOUNT_OBJECT };
const accounts = { object: ACCOUNT_OBJECT, list: true };
// The sandbox's catalogue of test institutions is answered whole, not paginated: no expandable items.
const catalogue = { object: 'list' };
// Answers that carry a client secret (and hosted url): their idempotent copies are sealed.
const secret = { responseHasSecret: true };

const FC = '/v1/financial_connections';

export const routes = [
  route('post', `${FC}/sessions`, 'PostFinancialConnectionsSessions', session, createSession, secret),
  route('get', `${FC}/sessions/{fc_session}`, 'GetFinancialConnectionsSessionsSession', session, retrieveSession),
  route('get', '/sandbox/v1/financial_connections/institutions', 'GetSandboxFinancialConnectionsInstitutions', catalogue, listInstitutions),
  route('get', `/sandbox${FC}/sessions`, 'GetSandboxFinancialConnectionsSessions', { object: SESSION_OBJECT, list: true }, listSessionsBySandbox, secret),
  route('post', `/sandbox${FC}/sessions/{fc_session}/complete`, 'PostSandboxFinancialConnectionsSessionsSessionComplete', session, completeSessionBySandbox),
  route('get', `${FC}/accounts`, 'GetFinancialConnectionsAccounts', accounts, listAccounts),
  route('get', `${FC}/accounts/{fc_account}`, 'GetFinancialConnectionsAccountsAccount', account, retrieveAccount),
  route('post', `${FC}/accounts/{fc_account}/disconnect`, 'PostFinancialConnectionsAccountsAccountDisconnect', account, disconnectAccount),
  route('post', `${FC}/accounts/{fc_account}/refresh`, 'PostFinancialConnectionsAccountsAccountRefresh', account, refreshAccount),
  route('post', `${FC}/accounts/{fc_account}/subscribe`, 'PostFinancialConnectionsAccountsAccountSubscribe', account, subscribeAccount),
  route('post', `${FC}/accounts/{fc_account}/unsubscribe`, 'PostFinancialConnectionsAccountsAccountUnsubscribe', account, unsubscribeAccount),
  route('get', `${FC}/accounts/{fc_account}/owners`, 'GetFinancialConnectionsAccountsAccountOwners', { object: OWNER_OBJECT, list: true }, listOwners),
  route('get', `${FC}/transactions`, 'GetFinancialConnectionsTransactions', { object: TRANSACTION_OBJECT, list: true }, listTransactions),
  route('get', `${FC}/transactions/{fc_transaction}`, 'GetFinancialConnectionsTransactionsTransaction', { object: TRANSACTION_OBJECT }, retrieveTransaction),
];

export const pages = [
  hostedPage('get', SHIM_PATH, serveShim),
  hostedPage('get', `${HOSTED_PATH}/:token`, showLinkPage),
  hostedPage('post', `${HOSTED_PATH}/:token`, submitLinkPage),
  // Opened by the shim in a popup: the last page hands the session to this origin.
  hostedPage('get', `${HOSTED_PATH}/:token/popup/:origin`, showLinkPage),
  hostedPage('post', `${HOSTED_PATH}/:token/popup/:origin`, submitLinkPage),
];
