import { route } from '../../../kernel/route';
import { hostedPage } from '../../../hosted/pages';
import { CHALLENGE_PATH, SCRIPT_PATH, serveStandIn, showChallengePage, submitChallengePage } from './pages';
import { OBJECT } from './serializer';
import { answerAuthentication, listAuthentications } from './service';

// The challenge page (its URL is an intent's next_action) and the Stripe.js stand-in; and the
// sandbox's operations listing the caller's challenges and answering one as the page does.

const PA = '/sandbox/v1/payment_authentications';

export const routes = [
  route('get', PA, 'GetSandboxPaymentAuthentications', { object: OBJECT, list: true }, listAuthentications),
  route('post', `${PA}/{payment_authentication}/complete`, 'PostSandboxPaymentAuthenticationsPaymentAuthenticationComplete', { object: OBJECT }, (ctx) =>
    answerAuthentication(ctx, 'succeeded'),
  ),
  route('post', `${PA}/{payment_authentication}/fail`, 'PostSandboxPaymentAuthenticationsPaymentAuthenticationFail', { object: OBJECT }, (ctx) =>
    answerAuthentication(ctx, 'failed'),
  ),
];

export const pages = [
  hostedPage('get', SCRIPT_PATH, serveStandIn),
  hostedPage('get', CHALLENGE_PATH, showChallengePage),
  hostedPage('post', CHALLENGE_PATH, submitChallengePage),
  // Opened by the stand-in in a popup: the last page tells the opener.
  hostedPage('get', `${CHALLENGE_PATH}/popup/:origin`, showChallengePage),
  hostedPage('post', `${CHALLENGE_PATH}/popup/:origin`, submitChallengePage),
];
