import { accountApiVersion, automaticCause } from '../../../events/emit';
import { handOffEvents } from '../../../events/jobs';
import { unixSeconds } from '../../../lib/clock';
import { randomBase62 } from '../../../lib/ids';
import { html, htmlDocument, raw, type Html } from '../../../hosted/html';
import { messagePage, type PageRequest, type PageResult } from '../../../hosted/pages';
import { ACCOUNT_ROW, changeAccount, lockConnectedAccount } from '../accounts/service';
import { prismaDb } from '../../../kernel/writes';
import type { AccountDetails, AccountRow } from '../accounts/details';
import { eventuallyDueRequirements, missingRequirements } from '../accounts/serializer';
import { hasRelationship, personsOf } from '../persons/serializer';
import { applyPerson } from '../persons/service';
import { hashToken, TOKEN_SHAPE } from './service';

// The hosted onboarding page an account link opens. Opening the link uses it up and shows a form
// for what is due; the form carries its own token, so it can be posted back (and corrected)
// for a while after the visit, but only by the browser that opened the link.

/** How long after the visit the form can still be submitted. */
const FORM_WINDOW_SECONDS = 3600;

const BUSINESS_TYPES = ['individual', 'company', 'non_profit', 'government_entity'] as const;

interface Field {
  readonly label: string;
  readonly type?: 'text' | 'email' | 'tel' | 'url';
  /** What "Fill in test data" puts here: values the public test mode treats as valid. */
  readonly test: string;
  /** An error message for a value that isn't acceptable, or null. */
  readonly check?: (value: string) => string | null;
  readonly max?: number;
}

const digits = (min: number, max: number, what: string) => (v: string) =>
  new RegExp(`^\\d{${min},${max}}$`).test(v) ? null : `${what} must be ${min === max ? min : `${min} to ${max}`} digits.`;
const between = (min: number, max: number, what: string) => (v: string) =>
  /^\d{1,4}$/.test(v) && Number(v) >= min && Number(v) <= max ? null : `${what} must be a number from ${min} to ${max}.`;
const email = (v: string) => (/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v) ? null : 'Enter a valid email address.');
const phone = (v: string) => (/^\+?[0-9 ().-]{7,20}$/.test(v) ? null : 'Enter a valid phone number.');
const state = (v: string) => (/^[A-Za-z]{2}$/.test(v) ? null : 'Enter the two-letter state code.');
const webUrl = (v: string) => {
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:' ? null : 'Enter a URL beginning with http:// or https://.';
  } catch {
    return 'Enter a URL beginning with http:// or https://.';
  }
};

const address = (owner: 'individual' | 'company' | 'representative'): Record<string, Field> => ({
  [`${owner}.address.line1`]: { label: 'Address line 1', test: 'address_full_match', max: 200 },
  [`${owner}.address.city`]: { label: 'City', test: 'San Francisco', max: 100 },
  [`${owner}.address.state`]: { label: 'State', test: 'CA', check: state },
  [`${owner}.address.postal_code`]: { label: 'Postal code', test: '94103', check: (v) => (/^[A-Za-z0-9 -]{3,10}$/.test(v) ? null : 'Enter a valid postal code.') },
});

/** A person's own details: the individual's, or a company representative's. */
const personal = (owner: 'individual' | 'representative'): Record<string, Field> => ({
  [`${owner}.first_name`]: { label: 'First name', test: 'Jenny', max: 100 },
  [`${owner}.last_name`]: { label: 'Last name', test: 'Rosen', max: 100 },
  [`${owner}.email`]: { label: 'Email', type: 'email', test: 'jenny.rosen@example.com', check: email, max: 800 },
  [`${owner}.phone`]: { label: 'Phone', type: 'tel', test: '+12025550123', check: phone },
  [`${owner}.dob.day`]: { label: 'Day of birth', test: '1', check: between(1, 31, 'The day') },
  [`${owner}.dob.month`]: { label: 'Month of birth', test: '1', check: between(1, 12, 'The month') },
  [`${owner}.dob.year`]: { label: 'Year of birth', test: '1901', check: between(1900, 2100, 'The year') },
  [`${owner}.ssn_last_4`]: { label: 'Last 4 digits of SSN', test: '0000', check: digits(4, 4, 'The SSN’s last 4') },
  [`${owner}.id_number`]: { label: 'ID number (in the US, the full Social Security number)', test: '000000000', check: digits(4, 20, 'The ID number') },
  ...address(owner),
});

/** Every requirement the page can collect, by the public API's requirement name. */
const FIELDS: Record<string, Field> = {
  'business_profile.mcc': { label: 'Merchant category code (MCC)', test: '5734', check: digits(4, 4, 'The MCC') },
  'business_profile.url': { label: 'Business website', type: 'url', test: 'https://accessible.stripe.com', check: webUrl, max: 5000 },
  ...personal('individual'),
  'company.name': { label: 'Legal business name', test: 'Sandbank Test Company', max: 100 },
  'company.phone': { label: 'Business phone', type: 'tel', test: '+12025550199', check: phone },
  'company.tax_id': { label: 'Employer Identification Number (EIN)', test: '000000000', check: digits(9, 9, 'The EIN') },
  ...address('company'),
  ...personal('representative'),
  'representative.relationship.title': { label: 'Job title', test: 'CEO', max: 5000 },
};

/** Confirmations a company gives with a checkbox: it has named all its owners (directors). */
const CONFIRMATIONS: Record<string, string> = {
  'company.owners_provided': 'Every owner of 25% or more is on file (or there is none besides the representative).',
  'company.directors_provided': 'Every director is on file.',
};

/** The bank account fields stand for the `external_account` requirement. */
const BANK_FIELDS: Record<string, Field> = {
  routing_number: { label: 'Routing number', test: '110000000', check: digits(9, 9, 'The routing number') },
  account_number: { label: 'Account number', test: '000123456789', check: digits(4, 17, 'The account number') },
};

const formName = (requirement: string): string => {
  const [head, ...rest] = requirement.split('.');
  return head + rest.map((p) => `[${p}]`).join('');
};

const valueAt = (source: Record<string, any> | undefined, path: string[]): unknown =>
  path.reduce<any>((node, key) => (node === null || typeof node !== 'object' ? undefined : node[key]), source);

/**
 * What the page asks for, given a business type: what is due (currently, or eventually too, as
 * the link's `collect` says), or every such field, filled in, for an update.
 */
function requirementsFor(row: AccountRow, businessType: string | null, link: Pick<Link, 'type' | 'collect'>): string[] {
  const details = row.details as AccountDetails;
  const asked = link.type === 'account_update' ? { ...row, businessType, details: { controller: details.controller } } : { ...row, businessType };
  const due = link.collect === 'eventually_due' ? eventuallyDueRequirements(asked) : missingRequirements(asked);
  // The representative's own entries (`person_….first_name`) are asked as the representative's.
  const representative = representativeOf(row);
  return due.map((r) => (representative && r.startsWith(`${representative.id}.`) ? `representative${r.slice(representative.id.length)}` : r));
}

/** The person representing a company, if it has one. */
const representativeOf = (row: AccountRow) => personsOf(row).find((p) => hasRelationship(p, 'representative'));

/** What is on file for a requirement (the representative's fields are the representative person's). */
function onFile(row: AccountRow, path: string[]): unknown {
  if (path[0] === 'representative') return valueAt(representativeOf(row), path.slice(1));
  return valueAt(row.details as Record<string, any>, path);
}

interface Link {
  tokenHash: string;
  type: string;
  collect: string;
  refreshUrl: string | null;
  returnUrl: string | null;
  account: AccountRow;
}

const LINK_SELECT = {
  tokenHash: true,
  type: true,
  collect: true,
  refreshUrl: true,
  returnUrl: true,
  account: { select: ACCOUNT_ROW },
} as const;

const invalidLink = (nonce: string) =>
  messagePage(nonce, 'This link is not valid', 'Ask the platform that sent you here for a new onboarding link.', 404);

/** Where a used or expired link sends the browser: refresh_url, or a page that says why. */
const spentLink = (nonce: string, refreshUrl: string | null): PageResult =>
  refreshUrl
    ? { redirect: refreshUrl }
    : messagePage(nonce, 'This link has expired', 'Onboarding links work once and for a few minutes. Ask the platform for a new one.', 410);

/** GET /hosted/account_links/:token: uses the link up and shows the form. */
export async function openOnboarding(req: PageRequest): Promise<PageResult> {
  const { deps, nonce } = req;
  const token = req.pathParams.token;
  if (!TOKEN_SHAPE.test(token)) return invalidLink(nonce);
  const tokenHash = hashToken(token);
  const now = unixSeconds(deps.clock);
  const formToken = randomBase62(40);
  // One conditional UPDATE, so of concurrent visits exactly one gets the form.
  const opened = await deps.prisma.accountLink.updateMany({
    where: { tokenHash, visitedAt: null, expiresAt: { gt: now } },
    data: { visitedAt: now, formTokenHash: hashToken(formToken) },
  });
  const link = await deps.prisma.accountLink.findUnique({ where: { tokenHash }, select: LINK_SELECT });
  if (!link) return invalidLink(nonce);
  if (opened.count === 0) return spentLink(nonce, link.refreshUrl);
  return renderForm(req, link, formToken, {}, []);
}

/** POST /hosted/account_links/:token: the form, or "leave". */
export async function submitOnboarding(req: PageRequest): Promise<PageResult> {
  const { deps, nonce, form } = req;
  const token = req.pathParams.token;
  if (!TOKEN_SHAPE.test(token)) return invalidLink(nonce);
  const tokenHash = hashToken(token);
  const now = unixSeconds(deps.clock);
  const link = await deps.prisma.accountLink.findUnique({
    where: { tokenHash },
    select: { ...LINK_SELECT, visitedAt: true, completedAt: true, formTokenHash: true },
  });
  if (!link) return invalidLink(nonce);
  const formToken = typeof form.form_token === 'string' ? form.form_token : '';
  const usable =
    link.completedAt === null &&
    link.visitedAt !== null &&
    link.visitedAt + FORM_WINDOW_SECONDS > now &&
    link.formTokenHash !== null &&
    formToken.length > 0 &&
    hashToken(formToken) === link.formTokenHash;
  if (!usable) return spentLink(nonce, link.refreshUrl);

  if (form.action === 'leave') {
    const left = await deps.prisma.accountLink.updateMany({ where: { tokenHash, completedAt: null }, data: { completedAt: now } });
    if (left.count === 0) return spentLink(nonce, link.refreshUrl);
    return finished(nonce, link.returnUrl, 'You left onboarding', 'Nothing was changed. You can close this window.');
  }

  const read = readForm(form, link, req, now);
  if (read.errors.length > 0) return renderForm(req, link, formToken, form, read.errors);

  const eventIds = await deps.prisma.$transaction(async (tx) => {
    // Completing uses the form up; a second submit (another tab) finds it done.
    const completed = await tx.accountLink.updateMany({ where: { tokenHash, completedAt: null }, data: { completedAt: now } });
    if (completed.count === 0) return null;
    const db = prismaDb(tx);
    const locked = await lockConnectedAccount(db, link.account.id, link.account.parentAccountId ?? '');
    if (!locked) return null;
    const apiVersion = await accountApiVersion(tx, link.account.id, deps.config.defaultApiVersion);
    const representative = read.representative;
    const existing = representativeOf(locked.row)?.id;
    // The representative's details make (or complete) the account's representative person.
    const edit = representative
      ? (details: AccountDetails) => {
          applyPerson(details, existing, { ...representative, relationship: { ...(representative.relationship ?? {}), representative: true } }, now);
          return details;
        }
      : undefined;
    const change = await changeAccount(db, locked, read.params, { now, apiVersion, cause: automaticCause }, edit);
    return change.eventIds;
  });
  if (eventIds === null) return spentLink(nonce, link.refreshUrl);
  if (eventIds.length > 0) await handOffEvents(deps.queues, eventIds);
  return finished(nonce, link.returnUrl, 'Onboarding complete', 'Your details were saved. You can close this window.');
}

function finished(nonce: string, returnUrl: string | null, title: string, message: string): PageResult {
  return returnUrl ? { redirect: returnUrl } : messagePage(nonce, title, message, 200);
}

/** The update parameters the posted form amounts to, or what is wrong with it. */
const TOS_MESSAGE = 'Accept the services agreement to continue.';

interface ReadForm {
  params: Record<string, any>;
  /** The representative's details, for a company. */
  representative?: Record<string, any>;
  errors: string[];
}

function readForm(form: Record<string, unknown>, link: Link, req: PageRequest, now: number): ReadForm {
  const row = link.account;
  const errors: string[] = [];
  const params: Record<string, any> = {};
  const representative: Record<string, any> = {};
  let businessType = row.businessType;
  if (businessType === null) {
    const posted = form.business_type;
    if (typeof posted !== 'string' || !(BUSINESS_TYPES as readonly string[]).includes(posted)) {
      return { params, errors: ['Choose a business type.'] };
    }
    businessType = posted;
    params.business_type = posted;
  }
  const country = row.country ?? 'US';
  const details = row.details as AccountDetails;
  // An update may leave what is on file as it is; onboarding asks only for what is missing.
  const update = link.type === 'account_update';
  for (const requirement of requirementsFor(row, businessType, link)) {
    if (requirement === 'business_type') continue;
    if (requirement === 'tos_acceptance.date' || requirement === 'tos_acceptance.ip') {
      if (params.tos_acceptance) continue;
      if (update && details.tos_acceptance?.date && form.tos_acceptance !== 'accepted') continue;
      // tos_acceptance.date and .ip are one checkbox: one message.
      if (form.tos_acceptance !== 'accepted' && !errors.includes(TOS_MESSAGE)) errors.push(TOS_MESSAGE);
      else params.tos_acceptance = { date: now, ip: req.ip || '0.0.0.0', user_agent: req.userAgent || null };
      continue;
    }
    if (CONFIRMATIONS[requirement]) {
      const member = requirement.slice('company.'.length);
      const confirmed = form[requirement.replace('.', '_')] === 'confirmed';
      if (update && details.company?.[member] === true && !confirmed) continue;
      if (!confirmed) errors.push(`Confirm: ${CONFIRMATIONS[requirement]}`);
      else params.company = { ...(params.company ?? {}), [member]: true };
      continue;
    }
    if (requirement === 'external_account') {
      const bank = (form.external_account ?? {}) as Record<string, unknown>;
      const blank = Object.keys(BANK_FIELDS).every((k) => typeof bank[k] !== 'string' || bank[k] === '');
      if (update && blank && (details.external_accounts ?? []).length > 0) continue;
      const values: Record<string, string> = {};
      for (const [key, field] of Object.entries(BANK_FIELDS)) {
        const value = typeof bank[key] === 'string' ? (bank[key] as string).trim() : '';
        if (value === '' && key === 'routing_number' && country !== 'US') continue;
        const problem = value === '' ? `${field.label} is required.` : (field.check?.(value) ?? null);
        if (problem) errors.push(problem);
        else values[key] = value;
      }
      if (values.account_number) {
        params.bank_account = {
          object: 'bank_account',
          country,
          currency: row.defaultCurrency ?? 'usd',
          account_number: values.account_number,
          ...(values.routing_number ? { routing_number: values.routing_number } : {}),
          account_holder_type: businessType === 'individual' ? 'individual' : 'company',
        };
      }
      continue;
    }
    const field = FIELDS[requirement];
    if (!field) continue;
    const path = requirement.split('.');
    const raw = valueAt(form, path);
    const value = typeof raw === 'string' ? raw.trim() : '';
    const current = onFile(row, path);
    if (value === '' && update && current !== undefined && current !== null && current !== '') continue;
    const problem = value === '' ? `${field.label} is required.` : value.length > (field.max ?? 100) ? `${field.label} is too long.` : (field.check?.(value) ?? null);
    if (problem) {
      errors.push(problem);
      continue;
    }
    // The representative is a person of its own; everything else is an account parameter.
    let node = path[0] === 'representative' ? representative : params;
    const inner = path[0] === 'representative' ? path.slice(1) : path;
    for (const key of inner.slice(0, -1)) node = node[key] ??= {};
    const last = path[path.length - 1];
    node[last] = path[1] === 'dob' ? Number(value) : last === 'state' ? value.toUpperCase() : value;
  }
  return { params, errors, ...(Object.keys(representative).length > 0 ? { representative } : {}) };
}

function input(name: string, field: Field, value: unknown): Html {
  const id = `f_${name.replace(/[^A-Za-z0-9]/g, '_')}`;
  return html`<label for="${id}">${field.label}</label>
<input id="${id}" name="${name}" type="${field.type ?? 'text'}" value="${typeof value === 'string' || typeof value === 'number' ? String(value) : ''}" data-test="${field.test}" required>`;
}

function renderForm(req: PageRequest, link: Link, formToken: string, posted: Record<string, unknown>, errors: string[]): PageResult {
  const row = link.account;
  const details = row.details as AccountDetails;
  const known = row.businessType;
  // Without a business type, both kinds of owner are shown; the script shows the chosen one.
  const types = known ? [known] : ['individual', 'company'];
  const due = new Set(types.flatMap((t) => requirementsFor(row, t, link)));
  const shown = (requirement: string) => due.has(requirement);
  const prefill = (requirement: string) => {
    const path = requirement.split('.');
    return valueAt(posted, path) ?? onFile(row, path);
  };
  const group = (legend: string, prefix: string, owner?: string): Html | '' => {
    const names = Object.keys(FIELDS).filter((r) => r.startsWith(prefix) && shown(r));
    if (names.length === 0) return '';
    return html`<fieldset${owner && !known ? raw(` data-owner="${owner}"`) : ''}><legend>${legend}</legend>
${names.map((r) => input(formName(r), FIELDS[r], prefill(r)))}
</fieldset>`;
  };
  const bank = (posted.external_account ?? {}) as Record<string, unknown>;
  const country = row.country ?? 'US';
  const body = html`<h1>${link.type === 'account_update' ? 'Update your account' : 'Set up payouts'}</h1>
<p class="muted">For ${details.business_profile?.name ?? row.email ?? row.id}. ${link.type === 'account_update' ? 'Change what you need to; blank fields keep what is on file.' : 'These are the details the account still needs.'}</p>
${errors.length > 0 ? html`<div class="errors" role="alert"><ul>${errors.map((e) => html`<li>${e}</li>`)}</ul></div>` : ''}
<form method="post" id="onboarding" novalidate>
<input type="hidden" name="form_token" value="${formToken}">
${shown('business_type') || !known
  ? html`<fieldset><legend>Business type</legend><label for="f_business_type">Type of business</label>
<select id="f_business_type" name="business_type">
${BUSINESS_TYPES.map((t) => html`<option value="${t}"${(posted.business_type ?? 'individual') === t ? raw(' selected') : ''}>${t.replace('_', ' ')}</option>`)}
</select></fieldset>`
  : ''}
${group('Business details', 'business_profile.')}
${group('About you', 'individual.', 'individual')}
${group('About the company', 'company.', 'company')}
${group('The company’s representative', 'representative.', 'company')}
${Object.keys(CONFIRMATIONS).some(shown)
  ? html`<fieldset${!known ? raw(' data-owner="company"') : ''}><legend>Owners and directors</legend>
${Object.entries(CONFIRMATIONS)
  .filter(([r]) => shown(r))
  .map(([r, label]) => {
    const name = r.replace('.', '_');
    return html`<label><input type="checkbox" name="${name}" value="confirmed" data-test="checked"${posted[name] === 'confirmed' ? raw(' checked') : ''}> ${label}</label>`;
  })}
</fieldset>`
  : ''}
${shown('external_account')
  ? html`<fieldset><legend>Bank account for payouts</legend>
${country === 'US' ? input('external_account[routing_number]', BANK_FIELDS.routing_number, bank.routing_number) : ''}
${input('external_account[account_number]', BANK_FIELDS.account_number, bank.account_number)}
</fieldset>`
  : ''}
${shown('tos_acceptance.date') || shown('tos_acceptance.ip')
  ? html`<fieldset><legend>Terms</legend><label><input type="checkbox" name="tos_acceptance" value="accepted" data-test="checked"${posted.tos_acceptance === 'accepted' ? raw(' checked') : ''}> I accept the services agreement.</label></fieldset>`
  : ''}
${due.size === 0 ? html`<p>Nothing is due for this account.</p>` : ''}
<button type="button" class="secondary" id="fill-test-data">Fill in test data</button>
<button type="submit" name="action" value="submit" id="submit">${due.size === 0 ? 'Continue' : 'Submit'}</button>
<button type="submit" name="action" value="leave" class="secondary" id="leave" formnovalidate>Leave</button>
</form>`;
  return { status: errors.length > 0 ? 400 : 200, html: htmlDocument({ title: 'Account onboarding', nonce: req.nonce, body, script: SCRIPT }) };
}

/** Shows the chosen owner's fields (disabling the other's) and fills in test data on demand. */
const SCRIPT = `
(function () {
  var form = document.getElementById('onboarding');
  var type = document.getElementById('f_business_type');
  function showOwner() {
    if (!type) return;
    var owner = type.value === 'individual' ? 'individual' : 'company';
    form.querySelectorAll('fieldset[data-owner]').forEach(function (f) {
      var on = f.getAttribute('data-owner') === owner;
      f.hidden = !on;
      f.disabled = !on;
    });
  }
  if (type) type.addEventListener('change', showOwner);
  showOwner();
  document.getElementById('fill-test-data').addEventListener('click', function () {
    form.querySelectorAll('[data-test]').forEach(function (el) {
      if (el.type === 'checkbox') el.checked = true;
      else if (!el.value) el.value = el.getAttribute('data-test');
    });
    showOwner();
  });
})();
`;
