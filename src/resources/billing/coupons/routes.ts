import { route } from '../../../kernel/route';
import { OBJECT } from './serializer';
import { createCoupon, deleteCoupon, listCoupons, retrieveCoupon, updateCoupon } from './service';

const one = { object: OBJECT };
const many = { object: OBJECT, list: true };

export const routes = [
  route('get', '/v1/coupons', 'GetCoupons', many, listCoupons),
  route('post', '/v1/coupons', 'PostCoupons', one, createCoupon),
  route('get', '/v1/coupons/{coupon}', 'GetCouponsCoupon', one, retrieveCoupon),
  route('post', '/v1/coupons/{coupon}', 'PostCouponsCoupon', one, updateCoupon),
  route('delete', '/v1/coupons/{coupon}', 'DeleteCouponsCoupon', one, deleteCoupon),
];
