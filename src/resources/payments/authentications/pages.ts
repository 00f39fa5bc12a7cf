import { hashKey as hashToken } from '../../../kernel/auth';
import { unixSeconds } from '../../../lib/clock';
import { handOffEvents } from '../../../events/jobs';
import { html, htmlDocument } from '../../../hosted/html';
import { messagePage, openerOrigin, type PageRequest, type PageResult, type ScriptResult } from '../../../hosted/pages';
import { answerChallenge, challengeOfToken, PAGE_PATH, type Answered, type Challenge } from './service';

// The hosted 3-D Secure challenge, as the public test mode's page: an explanation and two
// buttons, "Complete authentication" and "Fail authentication". The answer claims the challenge
// (single use) and moves the intent on in one transaction (answerChallenge), then the customer
// goes back to the return URL with the intent's redirect parameters, or, opened by the Stripe.js
// stand-in in a popup (`…/<token>/popup/<origin>`), the last page tells the opener and closes.

const TITLE = '3D Secure test authentication';
export const SCRIPT_PATH = '/payments/sandbank-stripe.js';
const MESSAGE_TYPE = 'sandbank:three_d_secure';

const INTENT_NAMES = { payment_intent: 'payment', setup_intent: 'card setup' } as const;

const invalidLink = (nonce: string) => messagePage(nonce, 'This link is not valid', 'Ask the site that sent you here to start the payment again.', 404);
const usedLink = (nonce: string) =>
  messagePage(nonce, 'This authentication has already been answered', 'A 3D Secure challenge works once. Go back to the site that sent you here.', 410);
const expiredLink = (nonce: string) =>
  messagePage(nonce, 'This authentication has expired', 'A 3D Secure challenge left unanswered too long fails. Go back to the site that sent you here.', 410);


/** The token's challenge while it can still be answered, or the page that says why not. */
async function openChallenge(req: PageRequest): Promise<Challenge | PageResult> {
  const challenge = await challengeOfToken(req.deps.prisma, req.pathParams.token ?? '');
  if (!challenge) return invalidLink(req.nonce);
  if (challenge.status !== 'pending') return usedLink(req.nonce);
  if (challenge.expiresAt <= unixSeconds(req.deps.clock)) return expiredLink(req.nonce);
  return challenge;
}

const page = (req: PageRequest, body: ReturnType<typeof html>, script?: string): PageResult => ({ html: htmlDocument({ title: TITLE, nonce: req.nonce, body, script }) });

/** GET /hosted/three_d_secure/:token(/popup/:origin) */
export async function showChallengePage(req: PageRequest): Promise<PageResult> {
  const origin = openerOrigin(req);
  if (origin !== null && typeof origin !== 'string') return origin;
  const found = await openChallenge(req);
  if (!('intentId' in found)) return found;
  return page(
    req,
    html`<h1>${TITLE}</h1>
<p>This is a test page standing in for the customer's bank: in live mode the bank shows its own 3D Secure page here.
Choose how this ${INTENT_NAMES[found.intentType]} authentication ends.</p>
<p class="muted">For <code id="intent">${found.intentId}</code>.</p>
<form method="post">
<button type="submit" name="outcome" value="complete" id="complete">Complete authentication</button>
<button type="submit" name="outcome" value="fail" id="fail" class="secondary">Fail authentication</button>
</form>`,
  );
}

/** POST /hosted/three_d_secure/:token(/popup/:origin): answers the challenge once. */
export async function submitChallengePage(req: PageRequest): Promise<PageResult> {
  const origin = openerOrigin(req);
  if (origin !== null && typeof origin !== 'string') return origin;
  const found = await openChallenge(req);
  if (!('intentId' in found)) return found;
  const outcome = String(req.form.outcome ?? '');
  if (outcome !== 'complete' && outcome !== 'fail') return messagePage(req.nonce, 'Choose an answer', 'Complete or fail the authentication with one of the buttons.', 400);
  const answered = await answerChallenge(req.deps, { tokenHash: hashToken(req.pathParams.token) }, outcome === 'complete' ? 'succeeded' : 'failed');
  if (!answered) {
    // Another answer, a new confirmation or the expiry came first.
    const now = await challengeOfToken(req.deps.prisma, req.pathParams.token);
    return now?.status === 'pending' ? expiredLink(req.nonce) : usedLink(req.nonce);
  }
  await handOffEvents(req.deps.queues, answered.eventIds);
  if (origin) return handOff(req, origin, answered);
  if (answered.challenge.returnUrl !== null) return { redirect: withParams(answered.challenge.returnUrl, answered.redirectParams) };
  const succeeded = answered.redirectParams.redirect_status === 'succeeded';
  return messagePage(req.nonce, succeeded ? 'Authentication complete' : 'Authentication failed', 'You can close this page.', 200);
}

/** The return URL with the redirect parameters added to its own query. */
function withParams(returnUrl: string, params: Record<string, string>): string {
  const url = new URL(returnUrl);
  for (const [name, value] of Object.entries(params)) url.searchParams.append(name, value);
  return url.toString();
}

/** The stand-in's popup ends here: the outcome goes to the opener's origin (only), then the window closes. */
function handOff(req: PageRequest, origin: string, answered: Answered): PageResult {
  const { challenge, redirectParams } = answered;
  const message = { type: MESSAGE_TYPE, intent: challenge.intentId, intent_type: challenge.intentType, redirect_status: redirectParams.redirect_status };
  // JSON inside a script: `<` escaped so no value can close the script element.
  const data = JSON.stringify(message).replace(/</g, '\\u003c');
  const script = `(function(){var data=${data};if(window.opener){window.opener.postMessage(data,${JSON.stringify(origin)});}setTimeout(function(){window.close();},100);})();`;
  const succeeded = redirectParams.redirect_status === 'succeeded';
  return page(req, html`<h1>${succeeded ? 'Authentication complete' : 'Authentication failed'}</h1><p>You can close this window.</p>`, script);
}

/** GET /hosted/payments/sandbank-stripe.js: stands in for Stripe.js's card confirmations and their 3-D Secure step. */
export async function serveStandIn(req: PageRequest): Promise<ScriptResult> {
  const api = req.deps.config.publicUrl;
  return {
    javascript: STAND_IN.replace('__API__', JSON.stringify(api))
      .replace('__ORIGIN__', JSON.stringify(new URL(api).origin))
      .replace('__TYPE__', JSON.stringify(MESSAGE_TYPE)),
  };
}

export const CHALLENGE_PATH = `${PAGE_PATH}/:token`;

// `Sandbank(publishableKey)` (or `SandbankStripe`) answers an object with Stripe.js's
// confirmCardPayment, confirmCardSetup, handleNextAction, retrievePaymentIntent and
// retrieveSetupIntent, resolving `{paymentIntent}` / `{setupIntent}` or `{error}` as Stripe.js
// does. It calls the API with the key and the intent's client secret; a `use_stripe_sdk` next
// action opens the challenge page in a popup and waits for its answer, a `redirect_to_url` one
// sends the whole page there (and the promise never settles, as with Stripe.js).
const STAND_IN = `(function () {
  var API = __API__;
  var CHALLENGE_ORIGIN = __ORIGIN__;
  var TYPE = __TYPE__;
  var KINDS = {
    pi: { type: 'payment_intent', path: '/v1/payment_intents/', key: 'paymentIntent', failure: 'payment_intent_authentication_failure' },
    seti: { type: 'setup_intent', path: '/v1/setup_intents/', key: 'setupIntent', failure: 'setup_intent_authentication_failure' }
  };

  function intentOf(clientSecret) {
    var m = /^((pi|seti)_[A-Za-z0-9]+)_secret_[A-Za-z0-9]+$/.exec(typeof clientSecret === 'string' ? clientSecret : '');
    return m ? { id: m[1], kind: KINDS[m[2]] } : null;
  }

  function invalidSecret(expected) {
    return { error: { type: 'validation_error', code: 'invalid_client_secret', message: 'Invalid value for ' + expected + ': expected the client_secret of an intent (<id>_secret_<secret>).' } };
  }

  function encode(params, prefix) {
    var parts = [];
    Object.keys(params).forEach(function (name) {
      var value = params[name];
      var key = prefix ? prefix + '[' + name + ']' : name;
      if (value === undefined || value === null) return;
      if (typeof value === 'object') parts.push(encode(value, key));
      else parts.push(encodeURIComponent(key) + '=' + encodeURIComponent(String(value)));
    });
    return parts.filter(Boolean).join('&');
  }

  function Client(key, options) {
    if (typeof key !== 'string' || key === '') throw new Error('Sandbank(): pass your publishable key (pk_test_…)');
    this.key = key;
    this.apiBase = (options && options.apiBase) || API;
  }

  Client.prototype.request = function (method, path, params) {
    var query = encode(params);
    var init = { method: method, headers: { Authorization: 'Bearer ' + this.key } };
    if (method !== 'GET') {
      init.headers['Content-Type'] = 'application/x-www-form-urlencoded';
      init.body = query;
    }
    return fetch(this.apiBase + path + (method === 'GET' && query ? '?' + query : ''), init)
      .then(function (res) {
        return res.json().then(function (json) { return { ok: res.ok, json: json }; });
      })
      .catch(function (err) {
        return { ok: false, json: { error: { type: 'api_connection_error', message: String((err && err.message) || err) } } };
      });
  };

  /** {paymentIntent} / {setupIntent}, or {error} when the attempt failed (the intent back to requires_payment_method). */
  function resultOf(intent, object) {
    var lastError = object.last_payment_error || object.last_setup_error;
    var out = {};
    if (object.status === 'requires_payment_method' && lastError) {
      out.error = Object.assign({}, lastError);
      out.error[intent.kind.type] = object;
      return out;
    }
    out[intent.kind.key] = object;
    return out;
  }

  Client.prototype.retrieveIntent = function (intent, clientSecret) {
    return this.request('GET', intent.kind.path + intent.id, { client_secret: clientSecret }).then(function (r) {
      if (!r.ok) return { error: r.json.error };
      var out = {};
      out[intent.kind.key] = r.json;
      return out;
    });
  };

  /** Waits for the challenge popup's answer; resolves true when it answered, false when it was closed first. */
  function challenge(url) {
    return new Promise(function (resolve) {
      var popup = window.open(url + '/popup/' + encodeURIComponent(window.location.origin), 'sandbank-three-d-secure', 'width=520,height=640');
      if (!popup) {
        resolve(false);
        return;
      }
      var timer = setInterval(function () {
        if (popup.closed) finish(false);
      }, 300);
      function onMessage(event) {
        if (event.origin !== CHALLENGE_ORIGIN || !event.data || event.data.type !== TYPE) return;
        finish(true);
      }
      function finish(answered) {
        clearInterval(timer);
        window.removeEventListener('message', onMessage);
        resolve(answered);
      }
      window.addEventListener('message', onMessage);
    });
  }

  Client.prototype.nextAction = function (intent, clientSecret, object) {
    var self = this;
    var action = object.next_action;
    if (object.status !== 'requires_action' || !action) return Promise.resolve(resultOf(intent, object));
    if (action.type === 'redirect_to_url') {
      window.location.assign(action.redirect_to_url.url);
      return new Promise(function () {});
    }
    if (action.type !== 'use_stripe_sdk') return Promise.resolve({ error: { type: 'invalid_request_error', message: 'Unsupported next_action: ' + action.type } });
    return challenge(action.use_stripe_sdk.stripe_js).then(function (answered) {
      return self.retrieveIntent(intent, clientSecret).then(function (r) {
        if (r.error) return r;
        var latest = r[intent.kind.key];
        if (!answered && latest.status === 'requires_action') {
          var error = { type: 'invalid_request_error', code: intent.kind.failure, message: 'The authentication window was closed before it was answered.' };
          error[intent.kind.type] = latest;
          return { error: error };
        }
        return resultOf(intent, latest);
      });
    });
  };

  Client.prototype.confirm = function (kind, clientSecret, data) {
    var self = this;
    var intent = intentOf(clientSecret);
    if (!intent || intent.kind !== KINDS[kind]) return Promise.resolve(invalidSecret('clientSecret'));
    var params = { client_secret: clientSecret, use_stripe_sdk: 'true' };
    data = data || {};
    if (typeof data.return_url === 'string') params.return_url = data.return_url;
    return this.paymentMethodOf(data.payment_method).then(function (pm) {
      if (pm.error) return { error: pm.error };
      if (pm.id) params.payment_method = pm.id;
      return self.request('POST', intent.kind.path + intent.id + '/confirm', params).then(function (r) {
        if (!r.ok) return { error: r.json.error };
        return self.nextAction(intent, clientSecret, r.json);
      });
    });
  };

  /** An id as given; card details ({card: {number, exp_month, exp_year, cvc}, billing_details}, where Stripe.js takes a card Element) become a PaymentMethod first. */
  Client.prototype.paymentMethodOf = function (pm) {
    if (typeof pm === 'string') return Promise.resolve({ id: pm });
    if (!pm || typeof pm !== 'object') return Promise.resolve({});
    if (!pm.card || typeof pm.card !== 'object' || typeof pm.card.number !== 'string') {
      return Promise.resolve({ error: { type: 'validation_error', code: 'parameter_invalid', message: 'payment_method: pass an id, or {card: {number, exp_month, exp_year, cvc}}: there are no Elements here.' } });
    }
    var params = { type: 'card', card: pm.card };
    if (pm.billing_details) params.billing_details = pm.billing_details;
    return this.request('POST', '/v1/payment_methods', params).then(function (r) {
      return r.ok ? { id: r.json.id } : { error: r.json.error };
    });
  };

  Client.prototype.confirmCardPayment = function (clientSecret, data) { return this.confirm('pi', clientSecret, data); };
  Client.prototype.confirmCardSetup = function (clientSecret, data) { return this.confirm('seti', clientSecret, data); };

  Client.prototype.handleNextAction = function (options) {
    var self = this;
    var clientSecret = options && options.clientSecret;
    var intent = intentOf(clientSecret);
    if (!intent) return Promise.resolve(invalidSecret('clientSecret'));
    return this.retrieveIntent(intent, clientSecret).then(function (r) {
      return r.error ? r : self.nextAction(intent, clientSecret, r[intent.kind.key]);
    });
  };

  Client.prototype.retrievePaymentIntent = function (clientSecret) {
    var intent = intentOf(clientSecret);
    return intent && intent.kind === KINDS.pi ? this.retrieveIntent(intent, clientSecret) : Promise.resolve(invalidSecret('retrievePaymentIntent'));
  };
  Client.prototype.retrieveSetupIntent = function (clientSecret) {
    var intent = intentOf(clientSecret);
    return intent && intent.kind === KINDS.seti ? this.retrieveIntent(intent, clientSecret) : Promise.resolve(invalidSecret('retrieveSetupIntent'));
  };

  window.SandbankStripe = function (key, options) { return new Client(key, options); };
  /** Stripe(publishableKey)-shaped, so a front end swaps one line; with the Financial Connections shim loaded first, it has collectFinancialConnectionsAccounts too. */
  window.Sandbank = function (key, options) {
    var client = new Client(key, options);
    var fc = window.SandbankFinancialConnections;
    if (fc) client.collectFinancialConnectionsAccounts = fc.collectFinancialConnectionsAccounts;
    return client;
  };
})();
`;
