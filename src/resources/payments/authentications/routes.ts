import { hostedPage } from '../../../hosted/pages';
import { CHALLENGE_PATH, SCRIPT_PATH, serveStandIn, showChallengePage, submitChallengePage } from './pages';

// No API operation of its own: the challenge page (its URL is an intent's next_action) and the Stripe.js stand-in.

export const pages = [
  hostedPage('get', SCRIPT_PATH, serveStandIn),
  hostedPage('get', CHALLENGE_PATH, showChallengePage),
  hostedPage('post', CHALLENGE_PATH, submitChallengePage),
  // Opened by the stand-in in a popup: the last page tells the opener.
  hostedPage('get', `${CHALLENGE_PATH}/popup/:origin`, showChallengePage),
  hostedPage('post', `${CHALLENGE_PATH}/popup/:origin`, submitChallengePage),
];
