import { route } from '../../../kernel/route';
import { OBJECT } from './serializer';
import { createPromotionCode, listPromotionCodes, retrievePromotionCode, updatePromotionCode } from './service';

const one = { object: OBJECT };
const many = { object: OBJECT, list: true };

// Promotion codes can't be deleted (the public API deactivates them with `active=false`).
export const routes = [
  route('get', '/v1/promotion_codes', 'GetPromotionCodes', many, listPromotionCodes),
  route('post', '/v1/promotion_codes', 'PostPromotionCodes', one, createPromotionCode),
  route('get', '/v1/promotion_codes/{promotion_code}', 'GetPromotionCodesPromotionCode', one, retrievePromotionCode),
  route('post', '/v1/promotion_codes/{promotion_code}', 'PostPromotionCodesPromotionCode', one, updatePromotionCode),
];
