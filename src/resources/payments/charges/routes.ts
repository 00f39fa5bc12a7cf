import { route } from '../../../kernel/route';
import { CHARGE_OBJECT } from './serializer';
import { listCharges, retrieveCharge, searchCharges, updateChargeOperation } from './service';

const one = { object: CHARGE_OBJECT };

// No POST /v1/charges: charges are made by PaymentIntent confirmations only.
export const routes = [
  route('get', '/v1/charges', 'GetCharges', { object: CHARGE_OBJECT, list: true }, listCharges),
  route('get', '/v1/charges/search', 'GetChargesSearch', { object: CHARGE_OBJECT, search: true }, searchCharges),
  route('get', '/v1/charges/{charge}', 'GetChargesCharge', one, retrieveCharge),
  route('post', '/v1/charges/{charge}', 'PostChargesCharge', one, updateChargeOperation),
];
