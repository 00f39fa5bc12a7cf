import { route } from '../../../kernel/route';
import { OBJECT } from './serializer';
import { createTaxRate, listTaxRates, retrieveTaxRate, updateTaxRate } from './service';

const one = { object: OBJECT };
const many = { object: OBJECT, list: true };

// Tax rates can't be deleted (the public API archives them with `active=false`).
export const routes = [
  route('get', '/v1/tax_rates', 'GetTaxRates', many, listTaxRates),
  route('post', '/v1/tax_rates', 'PostTaxRates', one, createTaxRate),
  route('get', '/v1/tax_rates/{tax_rate}', 'GetTaxRatesTaxRate', one, retrieveTaxRate),
  route('post', '/v1/tax_rates/{tax_rate}', 'PostTaxRatesTaxRate', one, updateTaxRate),
];
