import { route } from '../../../kernel/route';
import { REFUND_OBJECT } from './serializer';
import { cancelRefund, createRefund, expireRefund, listRefunds, retrieveRefund, updateRefund } from './service';

const one = { object: REFUND_OBJECT };
const many = { object: REFUND_OBJECT, list: true };

export const routes = [
  route('get', '/v1/refunds', 'GetRefunds', many, listRefunds),
  route('post', '/v1/refunds', 'PostRefunds', one, createRefund),
  route('get', '/v1/refunds/{refund}', 'GetRefundsRefund', one, retrieveRefund),
  route('post', '/v1/refunds/{refund}', 'PostRefundsRefund', one, updateRefund),
  route('post', '/v1/refunds/{refund}/cancel', 'PostRefundsRefundCancel', one, cancelRefund),
  route('post', '/v1/test_helpers/refunds/{refund}/expire', 'PostTestHelpersRefundsRefundExpire', one, expireRefund),
];
