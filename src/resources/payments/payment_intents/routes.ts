import { route } from '../../../kernel/route';
import { PAYMENT_INTENT_OBJECT } from './serializer';
import {
  cancelPaymentIntent,
  capturePaymentIntent,
  confirmPaymentIntent,
  createPaymentIntent,
  incrementAuthorization,
  listPaymentIntents,
  retrievePaymentIntent,
  searchPaymentIntents,
  updatePaymentIntent,
} from './service';

// Every answer carries the intent's client secret, so idempotent copies are stored sealed. Every
// change is SQL on a pooled connection (`sqlOnly`); a create, confirmed or not, is one statement
// unless it must read back what it wrote (service.ts says when); an update is the locked read and
// one statement (4 round trips, 1 commit), a card made from payment_method_data included.
const one = { object: PAYMENT_INTENT_OBJECT };
const secret = { responseHasSecret: true, sqlOnly: true };

export const routes = [
  route('get', '/v1/payment_intents', 'GetPaymentIntents', { object: PAYMENT_INTENT_OBJECT, list: true }, listPaymentIntents),
  route('post', '/v1/payment_intents', 'PostPaymentIntents', one, createPaymentIntent, { ...secret, oneStatement: () => true }),
  route('get', '/v1/payment_intents/search', 'GetPaymentIntentsSearch', { object: PAYMENT_INTENT_OBJECT, search: true }, searchPaymentIntents),
  // What Stripe.js calls, with a publishable key and the intent's client secret.
  route('get', '/v1/payment_intents/{intent}', 'GetPaymentIntentsIntent', one, retrievePaymentIntent, { publishable: 'client_secret' }),
  route('post', '/v1/payment_intents/{intent}', 'PostPaymentIntentsIntent', one, updatePaymentIntent, { ...secret, oneStatement: () => true }),
  route('post', '/v1/payment_intents/{intent}/cancel', 'PostPaymentIntentsIntentCancel', one, cancelPaymentIntent, secret),
  route('post', '/v1/payment_intents/{intent}/capture', 'PostPaymentIntentsIntentCapture', one, capturePaymentIntent, secret),
  route('post', '/v1/payment_intents/{intent}/increment_authorization', 'PostPaymentIntentsIntentIncrementAuthorization', one, incrementAuthorization, secret),
  route('post', '/v1/payment_intents/{intent}/confirm', 'PostPaymentIntentsIntentConfirm', one, confirmPaymentIntent, { ...secret, publishable: 'client_secret' }),
];
