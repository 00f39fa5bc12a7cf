import { route } from '../../../kernel/route';
import { clearDefaultPaymentMethod } from '../customers/service';
import { PAYMENT_METHOD_OBJECT } from './serializer';
import {
  attachPaymentMethodToCustomer,
  createPaymentMethod,
  detachPaymentMethod,
  listCustomerPaymentMethods,
  listPaymentMethods,
  retrieveCustomerPaymentMethod,
  retrievePaymentMethod,
  updatePaymentMethod,
} from './service';

const one = { object: PAYMENT_METHOD_OBJECT };
const many = { object: PAYMENT_METHOD_OBJECT, list: true };

export const routes = [
  route('get', '/v1/payment_methods', 'GetPaymentMethods', many, listPaymentMethods),
  // Stripe.js creates PaymentMethods with the publishable key (createPaymentMethod, confirmCardPayment).
  route('post', '/v1/payment_methods', 'PostPaymentMethods', one, createPaymentMethod, { publishable: true }),
  route('get', '/v1/payment_methods/{payment_method}', 'GetPaymentMethodsPaymentMethod', one, retrievePaymentMethod),
  route('post', '/v1/payment_methods/{payment_method}', 'PostPaymentMethodsPaymentMethod', one, updatePaymentMethod, { sqlOnly: true, oneStatement: () => true }),
  route('post', '/v1/payment_methods/{payment_method}/attach', 'PostPaymentMethodsPaymentMethodAttach', one, attachPaymentMethodToCustomer),
  route('post', '/v1/payment_methods/{payment_method}/detach', 'PostPaymentMethodsPaymentMethodDetach', one, (ctx) => detachPaymentMethod(ctx, clearDefaultPaymentMethod)),
  route('get', '/v1/customers/{customer}/payment_methods', 'GetCustomersCustomerPaymentMethods', many, listCustomerPaymentMethods),
  route('get', '/v1/customers/{customer}/payment_methods/{payment_method}', 'GetCustomersCustomerPaymentMethodsPaymentMethod', one, retrieveCustomerPaymentMethod),
];
