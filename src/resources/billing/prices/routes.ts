import { route } from '../../../kernel/route';
import { OBJECT } from './serializer';
import { createPrice, listPrices, retrievePrice, searchPrices, updatePrice, updatesAlone } from './service';

const one = { object: OBJECT };
const many = { object: OBJECT, list: true };
const found = { object: OBJECT, search: true };

// Prices can't be deleted (the public API archives them with `active=false`).
export const routes = [
  route('get', '/v1/prices', 'GetPrices', many, listPrices),
  route('post', '/v1/prices', 'PostPrices', one, createPrice),
  route('get', '/v1/prices/search', 'GetPricesSearch', found, searchPrices),
  route('get', '/v1/prices/{price}', 'GetPricesPrice', one, retrievePrice),
  route('post', '/v1/prices/{price}', 'PostPricesPrice', one, updatePrice, { sqlOnly: true, oneStatement: updatesAlone }),
];
