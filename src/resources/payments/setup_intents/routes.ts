import { route } from '../../../kernel/route';
import { SETUP_INTENT_OBJECT } from './serializer';
import { cancelSetupIntent, confirmSetupIntent, createSetupIntent, listSetupIntents, retrieveSetupIntent, updateSetupIntent, updatesAlone } from './service';

const one = { object: SETUP_INTENT_OBJECT };
const many = { object: SETUP_INTENT_OBJECT, list: true };
// Every answer carries the client secret: idempotent copies are sealed.
const secret = { responseHasSecret: true };
// What Stripe.js calls: a publishable key with the intent's client secret reaches these two.
const stripeJs = { publishable: 'client_secret' as const };

export const routes = [
  route('get', '/v1/setup_intents', 'GetSetupIntents', many, listSetupIntents),
  route('post', '/v1/setup_intents', 'PostSetupIntents', one, createSetupIntent, secret),
  route('get', '/v1/setup_intents/{setup_intent}', 'GetSetupIntentsIntent', one, retrieveSetupIntent, stripeJs),
  route('post', '/v1/setup_intents/{setup_intent}', 'PostSetupIntentsIntent', one, updateSetupIntent, { ...secret, sqlOnly: true, oneStatement: updatesAlone }),
  route('post', '/v1/setup_intents/{setup_intent}/confirm', 'PostSetupIntentsIntentConfirm', one, confirmSetupIntent, { ...secret, ...stripeJs }),
  route('post', '/v1/setup_intents/{setup_intent}/cancel', 'PostSetupIntentsIntentCancel', one, cancelSetupIntent, secret),
];
