import { route } from '../../../kernel/route';
import { OBJECT } from './serializer';
import { createPerson, deletePerson, listPersons, retrievePerson, updatePerson } from './service';

const one = { object: OBJECT };

export const routes = [
  route('get', '/v1/accounts/{account}/persons', 'GetAccountsAccountPersons', { object: OBJECT, list: true }, listPersons),
  route('post', '/v1/accounts/{account}/persons', 'PostAccountsAccountPersons', one, createPerson),
  route('get', '/v1/accounts/{account}/persons/{person}', 'GetAccountsAccountPersonsPerson', one, retrievePerson),
  route('post', '/v1/accounts/{account}/persons/{person}', 'PostAccountsAccountPersonsPerson', one, updatePerson),
  route('delete', '/v1/accounts/{account}/persons/{person}', 'DeleteAccountsAccountPersonsPerson', one, deletePerson),
];
