import { Prisma } from '../../../generated/prisma/client';
import { unixSeconds } from '../../../lib/clock';
import { automaticCause } from '../../../events/emit';
import { html, htmlDocument } from '../../../hosted/html';
import { messagePage, type PageRequest, type PageResult } from '../../../hosted/pages';
import { checksOf, lockSession } from './pipeline';
import { ABANDONED, FAILURES, type SessionRow } from './serializer';
import { afterSubmit, hashToken, LINK_TOKEN_SHAPE, submitLocked } from './service';

// The hosted verification page a session's `url` opens. As in the public test mode, nothing is
// checked: the user picks an outcome. The link is single-use (the submission claims it in the
// same transaction as the session's change) and expires URL_TTL_SECONDS after it was issued.
// The session's client secret opens it too (at HOSTED_PATH/<client_secret>), for
// CLIENT_SECRET_TTL_SECONDS, as Stripe.js's verifyIdentity would.

const TITLE = 'Verify your identity';

const invalidLink = (nonce: string) =>
  messagePage(nonce, 'This link is not valid', 'Ask the site that sent you here for a new verification link.', 404);
const usedLink = (nonce: string) =>
  messagePage(nonce, 'This link has already been used', 'A verification link works once. Ask the site that sent you here for a new one.', 410);
const expiredLink = (nonce: string) =>
  messagePage(nonce, 'This link has expired', 'Verification links expire (48 hours for a link, 24 for a client secret). Ask the site that sent you here for a new one.', 410);

const CHECK_NAMES = { document: 'an identity document', selfie: 'a selfie matching the document', id_number: 'an ID number' } as const;

/** The link's session when the link can still be used, or the page that says why not. */
async function linkedSession(req: PageRequest): Promise<SessionRow | PageResult> {
  const token = req.pathParams.token ?? '';
  if (!LINK_TOKEN_SHAPE.test(token)) return invalidLink(req.nonce);
  const link = await req.deps.prisma.identityVerificationLink.findUnique({ where: { tokenHash: hashToken(token) }, include: { session: true } });
  if (!link) return invalidLink(req.nonce);
  if (link.usedAt !== null) return usedLink(req.nonce);
  if (link.expiresAt <= unixSeconds(req.deps.clock)) return expiredLink(req.nonce);
  return link.session;
}

function closedSession(req: PageRequest, row: SessionRow): PageResult | undefined {
  if (row.redactionStatus !== null || row.status === 'canceled') {
    return messagePage(req.nonce, 'This verification is closed', 'It was canceled. Ask the site that sent you here for a new verification link.', 410);
  }
  if (row.status === 'processing') return messagePage(req.nonce, 'Verification submitted', 'Your verification is being processed.', 409);
  if (row.status === 'verified') return messagePage(req.nonce, 'Already verified', 'This verification is already complete.', 409);
  return undefined;
}

const failuresOf = (row: SessionRow) =>
  Object.entries(FAILURES).filter(([, f]) => f.check === null || checksOf(row).includes(f.check));

/** GET /hosted/identity/verification_sessions/:token */
export async function showVerificationPage(req: PageRequest): Promise<PageResult> {
  const found = await linkedSession(req);
  if (!('id' in found)) return found;
  const closed = closedSession(req, found);
  if (closed) return closed;
  const checks = checksOf(found).map((c) => html`<li>${CHECK_NAMES[c]}</li>`);
  const options = failuresOf(found).map(([code, f]) => html`<option value="${code}">${code}: ${f.reason}</option>`);
  const lastError = found.lastError as { code: string; reason: string } | null;
  const body = html`<h1>${TITLE}</h1>
<p class="muted">Verification session <code>${found.id}</code> checks:</p>
<ul>${checks}</ul>
${lastError ? html`<p class="errors">Last attempt: ${lastError.code}: ${lastError.reason}</p>` : ''}
<form method="post">
<fieldset>
<legend>Test outcome</legend>
<p class="muted">In test mode no document is checked. Choose what the verification should end with.</p>
<button type="submit" name="outcome" value="verified" id="verify">Verify successfully</button>
<label for="failure">Or fail with</label>
<select name="failure" id="failure">${options}</select>
<button type="submit" name="outcome" value="failed" id="fail">Fail verification</button>
</fieldset>
<button type="submit" name="outcome" value="${ABANDONED}" id="leave" class="secondary">Leave without verifying</button>
</form>`;
  return { html: htmlDocument({ title: TITLE, nonce: req.nonce, body }) };
}

/** POST /hosted/identity/verification_sessions/:token: claims the link and submits the chosen outcome. */
export async function submitVerificationPage(req: PageRequest): Promise<PageResult> {
  const { deps } = req;
  const choice = req.form.outcome;
  const outcome = choice === 'failed' ? req.form.failure : choice;
  if (typeof outcome !== 'string' || !(outcome === 'verified' || outcome === ABANDONED || outcome in FAILURES)) {
    return messagePage(req.nonce, 'Choose an outcome', 'Go back and choose how the verification should end.', 400);
  }
  const token = req.pathParams.token ?? '';
  if (!LINK_TOKEN_SHAPE.test(token)) return invalidLink(req.nonce);
  const now = unixSeconds(deps.clock);
  const result = await deps.prisma
    .$transaction(async (tx) => {
      // One conditional UPDATE claims the link, so of two submissions exactly one gets through.
      const claimed = await tx.$queryRaw<{ session_id: string }[]>`
        UPDATE identity_verification_links SET used_at = ${new Date(deps.clock.nowMs())}
        WHERE token_hash = ${hashToken(token)} AND used_at IS NULL AND expires_at > ${now}
        RETURNING session_id`;
      if (claimed.length === 0) return undefined;
      const session = await lockSession(tx, Prisma.sql`id = ${claimed[0].session_id}`);
      if (!session) return undefined;
      const closed = closedSession(req, session);
      if (closed) throw new ClosedPage(closed);
      return submitLocked(tx, deps, session, outcome, automaticCause, 'outcome');
    })
    .catch((err) => {
      if (err instanceof ClosedPage) return err.page;
      throw err;
    });
  if (result === undefined) {
    // Say why, without having used anything.
    const found = await linkedSession(req);
    return 'id' in found ? usedLink(req.nonce) : found;
  }
  if ('html' in result || 'redirect' in result) return result;
  await afterSubmit(deps, result);
  if (result.row.returnUrl) return { redirect: result.row.returnUrl };
  const left = outcome === ABANDONED;
  return messagePage(
    req.nonce,
    left ? 'You left the verification' : 'Verification submitted',
    left ? 'Nothing was submitted. You can close this page.' : 'Thank you. Your verification is being processed; you can close this page.',
    200,
  );
}

/** Rolls back the claim when the session can't take a submission, and carries the page to show. */
class ClosedPage extends Error {
  constructor(readonly page: PageResult) {
    super('closed');
  }
}
