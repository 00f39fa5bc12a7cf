import { route } from '../../../kernel/route';
import { OBJECT } from './serializer';
import { listCapabilities, retrieveCapability, updateCapability } from './service';

export const routes = [
  route('get', '/v1/accounts/{account}/capabilities', 'GetAccountsAccountCapabilities', { object: OBJECT, list: true }, listCapabilities),
  route('get', '/v1/accounts/{account}/capabilities/{capability}', 'GetAccountsAccountCapabilitiesCapability', { object: OBJECT }, retrieveCapability),
  route('post', '/v1/accounts/{account}/capabilities/{capability}', 'PostAccountsAccountCapabilitiesCapability', { object: OBJECT }, updateCapability),
];
