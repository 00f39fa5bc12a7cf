import { ApiError, echo } from '../kernel/errors';
import type { Authenticator } from '../kernel/auth';
import { KEPT, type FailedRequest, type RequestLog } from '../kernel/requestLog';
import { html, htmlDocument } from './html';
import { hostedPage, messagePage, type HostedPage, type PageResult } from './pages';

// The page of each failed request, at REQUEST_LOG_PATH/req_… (the `request_log_url` of its error
// body). It shows an error body, which may name the platform's objects, so it answers only to the
// key of the platform that made the request: as a browser's Basic user name (`curl -u sk_test_…:`
// too) or Bearer, checked by the API's own authenticator. Another platform's key gets the same
// 404 as an id the log doesn't hold, so it can't tell whether the request exists.

const when = (unixSeconds: number): string => new Date(unixSeconds * 1000).toISOString().replace('.000Z', 'Z');

function entryPage(entry: FailedRequest, nonce: string): PageResult {
  let pretty = entry.body;
  try {
    pretty = JSON.stringify(JSON.parse(entry.body), null, 2);
  } catch {
    // Shown as kept (a body cut to fit the log's budget is no longer JSON).
  }
  const title = `${entry.method} ${entry.route}`;
  const body = html`<h1>${title}</h1>
<p class="muted">${entry.requestId} · ${when(entry.receivedAt)}</p>
<p>Answered <strong>${entry.status}</strong> with:</p>
<pre>${pretty}</pre>
${inConsole(entry.requestId)}`;
  return { html: htmlDocument({ title, nonce, body }) };
}

/** The console shows the same entry beside the account's other requests (its cookie is the console's own path's, so this page can't tell a signed-in browser). */
const inConsole = (requestId: string) =>
  html`<p><a href="/console/requests/${encodeURIComponent(requestId)}" data-test="open-in-console">Open it in the console</a> (signed in with the same account's key), beside the account's other recent requests.</p>`;

/** A browser shows a sign-in box for this, where the key goes in as the user name; or the console opens it. */
const signIn = (nonce: string, requestId: string): PageResult => {
  const title = 'Sign in with your API key';
  const body = html`<h1>${title}</h1><p>A request log opens only with the secret key (sk_test_…) of the account that made the request: give it as the user name, with no password, or as a Bearer token.</p>
${inConsole(requestId)}`;
  return { status: 401, html: htmlDocument({ title, nonce, body }), headers: { 'WWW-Authenticate': 'Basic realm="Sandbank"' } };
};

export function requestLogPage(log: RequestLog, authenticator: Authenticator): HostedPage {
  return hostedPage('get', '/:requestId', async ({ pathParams, nonce, authorization }) => {
    let platform: string;
    try {
      const identity = await authenticator.identify({ authorization });
      // A publishable key is public: it opens no log.
      if (identity.publishable) return signIn(nonce, echo(pathParams.requestId));
      platform = identity.platformAccountId;
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return signIn(nonce, echo(pathParams.requestId));
      throw err;
    }
    const requestId = echo(pathParams.requestId);
    const entry = await log.find(requestId);
    if (entry && entry.account === platform) return entryPage(entry, nonce);
    const missing = `Sandbank keeps its latest ${KEPT.toLocaleString('en-US')} failed requests of each deployment, and your account has no ${requestId} among them (older, or lost with Redis's data). Every request is in the API's log: search it for "request_id":"${requestId}".`;
    return messagePage(nonce, 'No log for this request', missing, 404);
  });
}
