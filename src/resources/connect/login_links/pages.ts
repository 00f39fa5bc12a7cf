import { unixSeconds } from '../../../lib/clock';
import { html, htmlDocument } from '../../../hosted/html';
import { messagePage, type PageRequest, type PageResult } from '../../../hosted/pages';
import { ACCOUNT_ROW } from '../accounts/service';
import { serializeAccount } from '../accounts/serializer';
import { hashToken, TOKEN_SHAPE } from '../account_links/service';

// The page a login link opens: it stands for the Express Dashboard, which this sandbox doesn't
// have. Opening the link uses it up; it shows the account's id and status, and nothing more.

const invalidLink = (nonce: string) =>
  messagePage(nonce, 'This link is not valid', 'Ask the platform that sent you here for a new login link.', 404);

const spentLink = (nonce: string) =>
  messagePage(nonce, 'This link has expired', 'Login links work once and for a few minutes. Ask the platform for a new one.', 410);

const yesNo = (value: boolean) => (value ? 'yes' : 'no');

/** GET /hosted/login_links/:token */
export async function openDashboard(req: PageRequest): Promise<PageResult> {
  const { deps, nonce } = req;
  const token = req.pathParams.token;
  if (!TOKEN_SHAPE.test(token)) return invalidLink(nonce);
  const tokenHash = hashToken(token);
  const now = unixSeconds(deps.clock);
  // One conditional UPDATE, so of concurrent visits exactly one gets the page.
  const opened = await deps.prisma.loginLink.updateMany({ where: { tokenHash, usedAt: null, expiresAt: { gt: now } }, data: { usedAt: now } });
  const link = await deps.prisma.loginLink.findUnique({ where: { tokenHash }, select: { account: { select: ACCOUNT_ROW } } });
  if (!link) return invalidLink(nonce);
  if (opened.count === 0) return spentLink(nonce);
  const account = serializeAccount(link.account);
  const body = html`<h1>Express Dashboard</h1>
<p class="muted">This page stands for the Express Dashboard a login link opens in the public API.</p>
<dl>
<dt>Account</dt><dd id="account-id">${account.id}</dd>
<dt>Name</dt><dd>${account.business_profile.name ?? account.email ?? '—'}</dd>
<dt>Details submitted</dt><dd id="details-submitted">${yesNo(account.details_submitted)}</dd>
<dt>Charges enabled</dt><dd id="charges-enabled">${yesNo(account.charges_enabled)}</dd>
<dt>Payouts enabled</dt><dd id="payouts-enabled">${yesNo(account.payouts_enabled)}</dd>
${account.requirements.disabled_reason ? html`<dt>Disabled</dt><dd id="disabled-reason">${account.requirements.disabled_reason}</dd>` : ''}
</dl>`;
  return { html: htmlDocument({ title: 'Express Dashboard', nonce, body }) };
}
