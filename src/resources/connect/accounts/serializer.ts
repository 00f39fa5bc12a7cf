import type { ExpandableFields } from '../../../kernel/expand';
import type { Metadata } from '../../../kernel/metadata';
import { asksForDirectors, localCurrency } from './countries';
import type { AccountDetails, AccountRow, PersonRecord } from './details';
import { externalAccountsOf, serializeExternalAccount } from '../external_accounts/serializer';
import {
  fieldsFor,
  hasPersonRequirements,
  hasRelationship,
  personMissing,
  personsOf,
  serializePerson,
} from '../persons/serializer';

export const OBJECT = 'account';

/** The capability keys POST /v1/accounts accepts (the spec's list); the OpenAPI schema is built from it. */
export const CAPABILITIES = [
  'acss_debit_payments', 'affirm_payments', 'afterpay_clearpay_payments', 'alma_payments', 'amazon_pay_payments',
  'app_distribution', 'au_becs_debit_payments', 'bacs_debit_payments', 'bancontact_payments', 'bank_transfer_payments',
  'billie_payments', 'bizum_payments', 'blik_payments', 'boleto_payments', 'card_issuing', 'card_payments',
  'cartes_bancaires_payments', 'cashapp_payments', 'crypto_payments', 'eps_payments', 'fpx_payments',
  'gb_bank_transfer_payments', 'giropay_payments', 'grabpay_payments', 'ideal_payments', 'india_international_payments',
  'jcb_payments', 'jp_bank_transfer_payments', 'kakao_pay_payments', 'klarna_payments', 'konbini_payments',
  'kr_card_payments', 'legacy_payments', 'link_payments', 'mb_way_payments', 'mobilepay_payments', 'multibanco_payments',
  'mx_bank_transfer_payments', 'naver_pay_payments', 'nz_bank_account_becs_debit_payments', 'oxxo_payments', 'p24_payments',
  'pay_by_bank_payments', 'payco_payments', 'paynow_payments', 'payto_payments', 'pix_payments', 'promptpay_payments',
  'revolut_pay_payments', 'samsung_pay_payments', 'satispay_payments', 'scalapay_payments', 'sepa_bank_transfer_payments',
  'sepa_debit_payments', 'sofort_payments', 'sunbit_payments', 'swish_payments', 'tax_reporting_us_1099_k',
  'tax_reporting_us_1099_misc', 'transfers', 'treasury', 'twint_payments', 'upi_payments', 'us_bank_account_ach_payments',
  'us_bank_transfer_payments', 'zip_payments',
] as const;

/** Each capability is `{requested: boolean}`; an unknown key is refused like any unknown parameter. */
export const capabilitiesParamSchema = {
  type: 'object',
  additionalProperties: false,
  properties: Object.fromEntries(
    CAPABILITIES.map((name) => [name, { type: 'object', additionalProperties: false, properties: { requested: { type: 'boolean' } } }]),
  ),
};

export type CapabilityStatus = 'active' | 'inactive' | 'pending';

const ADDRESS_KEYS = ['city', 'country', 'line1', 'line2', 'postal_code', 'state'] as const;

const address = (value: Record<string, any> | undefined) =>
  Object.fromEntries(ADDRESS_KEYS.map((k) => [k, value?.[k] ?? null])) as Record<(typeof ADDRESS_KEYS)[number], string | null>;

const isPlatform = (row: AccountRow): boolean => row.parentAccountId === null;

/** The requirements still missing, as the public API names them (`individual.dob.day`, …). */
export function missingRequirements(row: AccountRow): string[] {
  if (isPlatform(row)) return [];
  const d = row.details as AccountDetails;
  const missing: string[] = [];
  const need = (field: string, present: unknown) => {
    if (present === undefined || present === null || present === '') missing.push(field);
  };
  const bp = d.business_profile ?? {};
  need('business_profile.mcc', bp.mcc);
  need('business_profile.url', bp.url ?? bp.product_description);
  need('business_type', row.businessType);
  const country = row.country ?? 'US';
  if (row.businessType === 'individual') {
    const ind = d.individual ?? {};
    const addr = ind.address ?? {};
    need('individual.address.city', addr.city);
    need('individual.address.line1', addr.line1);
    need('individual.address.postal_code', addr.postal_code);
    if (country === 'US') need('individual.address.state', addr.state);
    need('individual.dob.day', ind.dob?.day);
    need('individual.dob.month', ind.dob?.month);
    need('individual.dob.year', ind.dob?.year);
    need('individual.email', ind.email);
    need('individual.first_name', ind.first_name);
    need('individual.last_name', ind.last_name);
    need('individual.phone', ind.phone);
    if (country === 'US') need('individual.ssn_last_4', ind.ssn_last_4 ?? ind.id_number);
    else need('individual.id_number', ind.id_number);
  } else if (row.businessType) {
    const company = d.company ?? {};
    const addr = company.address ?? {};
    need('company.address.city', addr.city);
    need('company.address.line1', addr.line1);
    need('company.address.postal_code', addr.postal_code);
    if (country === 'US') need('company.address.state', addr.state);
    need('company.name', company.name);
    need('company.phone', company.phone);
    need('company.tax_id', company.tax_id);
    if (hasPersonRequirements(row.businessType)) missing.push(...personRequirements(row, country));
  }
  need('external_account', (d.external_accounts ?? [])[0]);
  need('tos_acceptance.date', d.tos_acceptance?.date);
  need('tos_acceptance.ip', d.tos_acceptance?.ip);
  return [...new Set(missing)].sort();
}

/**
 * What a company (or non-profit, or government entity) owes about its people: a representative
 * (`representative.first_name` … until one exists, then `person_….first_name` for what that
 * person lacks); for companies, owners (`company.owners_provided` until it is true, and
 * `owners.…` while no owner exists and it is not) and, in the EEA and the UK, directors alike.
 */
function personRequirements(row: AccountRow, country: string): string[] {
  const persons = personsOf(row);
  const company = (row.details as AccountDetails).company ?? {};
  const out: string[] = [];
  const representatives = persons.filter((p) => hasRelationship(p, 'representative'));
  if (representatives.length === 0) out.push(...fieldsFor('representative', country).map((f) => `representative.${f}`));
  const groups: ['owner' | 'director', string, boolean][] = [];
  if (row.businessType === 'company') {
    groups.push(['owner', 'owners', true]);
    groups.push(['director', 'directors', asksForDirectors(country)]);
  }
  for (const [role, plural, asked] of groups) {
    if (!asked) continue;
    const provided = company[`${plural}_provided`] === true;
    if (!provided) out.push(`company.${plural}_provided`);
    if (!provided && !persons.some((p) => hasRelationship(p, role))) {
      out.push(...fieldsFor(role, country).map((f) => `${plural}.${f}`));
    }
  }
  for (const p of persons) out.push(...personMissing(p, country, row.businessType).map((f) => `${p.id}.${f}`));
  return out;
}

/**
 * What will be due later as well as now: a US individual gives the last 4 of the SSN to start,
 * and the full number eventually (as in the public API, before payouts pass a volume threshold).
 */
export function eventuallyDueRequirements(row: AccountRow, missing: string[] = missingRequirements(row)): string[] {
  if (isPlatform(row) || row.businessType !== 'individual' || (row.country ?? 'US') !== 'US') return missing;
  const ind = (row.details as AccountDetails).individual ?? {};
  if (ind.id_number) return missing;
  return [...missing, 'individual.id_number'].sort();
}

export const isRejected = (row: AccountRow): boolean => (row.details as AccountDetails).rejected !== undefined;

/** Requested capabilities are inactive until nothing is due (and for good once the account is rejected), then active. */
export function capabilityStatuses(row: AccountRow): Record<string, CapabilityStatus> {
  if (isPlatform(row)) return { card_payments: 'active', transfers: 'active' };
  const due = missingRequirements(row).length > 0 || isRejected(row);
  const out: Record<string, CapabilityStatus> = {};
  for (const [name, c] of Object.entries((row.details as AccountDetails).capabilities ?? {})) {
    if (c.requested) out[name] = due ? 'inactive' : 'active';
  }
  return out;
}

export function requirements(row: AccountRow, missing: string[], hasCapabilities: boolean) {
  const rejected = (row.details as AccountDetails).rejected;
  return {
    alternatives: [],
    current_deadline: null,
    currently_due: missing,
    disabled_reason: rejected ? rejected.disabled_reason : missing.length > 0 ? 'requirements.past_due' : null,
    errors: [],
    eventually_due: eventuallyDueRequirements(row, missing),
    // Requested capabilities wait for these, so they are already past due.
    past_due: hasCapabilities ? missing : [],
    pending_verification: [],
  };
}

export const noFutureRequirements = {
  alternatives: [],
  current_deadline: null,
  currently_due: [],
  disabled_reason: null,
  errors: [],
  eventually_due: [],
  past_due: [],
  pending_verification: [],
};

/** The public `type` a controller amounts to; rows made without one (tests, old data) are custom. */
export function typeOf(row: AccountRow): string {
  if (isPlatform(row)) return 'standard';
  return row.type ?? 'custom';
}

function controllerOf(row: AccountRow) {
  if (isPlatform(row)) return { type: 'account' };
  const c = (row.details as AccountDetails).controller ?? {};
  return {
    fees: { payer: c.fees?.payer ?? 'application' },
    is_controller: true,
    losses: { payments: c.losses?.payments ?? 'application' },
    requirement_collection: c.requirement_collection ?? 'application',
    stripe_dashboard: { type: c.stripe_dashboard?.type ?? 'none' },
    type: 'application',
  };
}

function businessProfile(bp: Record<string, any> = {}) {
  return {
    annual_revenue: bp.annual_revenue ?? null,
    estimated_worker_count: bp.estimated_worker_count ?? null,
    mcc: bp.mcc ?? null,
    minority_owned_business_designation: bp.minority_owned_business_designation ?? null,
    monthly_estimated_revenue: { amount: bp.monthly_estimated_revenue?.amount ?? 0, currency: bp.monthly_estimated_revenue?.currency ?? 'usd' },
    name: bp.name ?? null,
    product_description: bp.product_description ?? null,
    specified_commercial_transactions_act_url: null,
    support_address: bp.support_address ? address(bp.support_address) : null,
    support_email: bp.support_email ?? null,
    support_phone: bp.support_phone ?? null,
    support_url: bp.support_url ?? null,
    url: bp.url ?? null,
  };
}

function company(c: Record<string, any> = {}) {
  return {
    address: address(c.address),
    directors_provided: c.directors_provided ?? false,
    directorship_declaration: c.directorship_declaration ?? null,
    executives_provided: c.executives_provided ?? false,
    name: c.name ?? null,
    owners_provided: c.owners_provided ?? false,
    ownership_declaration: c.ownership_declaration ?? null,
    phone: c.phone ?? null,
    ...(c.structure ? { structure: c.structure } : {}),
    tax_id_provided: Boolean(c.tax_id),
    vat_id_provided: Boolean(c.vat_id),
    verification: { document: { back: c.verification?.document?.back ?? null, details: null, details_code: null, front: c.verification?.document?.front ?? null } },
  };
}

/** The account's individual as a person; its requirements are the account's `individual.…` ones. */
function individualPerson(row: AccountRow, missing: string[]) {
  const personal = (fields: string[]) => fields.filter((f) => f.startsWith('individual.')).map((f) => f.slice('individual.'.length));
  const individualId = (row.details as AccountDetails).individual_id;
  const record = personsOf(row).find((p) => p.id === individualId) ?? {
    id: `person_${row.id.slice(5)}`,
    created: row.created,
    seq: 0,
    relationship: { representative: true },
  };
  const person = serializePerson(row, record, {
    currentlyDue: personal(missing),
    eventuallyDue: personal(eventuallyDueRequirements(row, missing)),
  });
  // Its verification waits for the whole account, as the account's individual.
  return { ...person, verification: { ...person.verification, status: missing.length === 0 ? 'verified' : 'unverified' } };
}

/** A person's own requirements (`first_name` …): the individual's from the account, others by their relationships. */
export function personRequirementsOf(row: AccountRow, record: PersonRecord) {
  const d = row.details as AccountDetails;
  if (record.id === d.individual_id && row.businessType === 'individual') {
    const person = individualPerson(row, missingRequirements(row));
    return { currentlyDue: person.requirements.currently_due, eventuallyDue: person.requirements.eventually_due };
  }
  const due = personMissing(record, row.country ?? 'US', row.businessType);
  return { currentlyDue: due, eventuallyDue: due };
}

function settings(row: AccountRow, s: Record<string, any> = {}) {
  const schedule = s.payouts?.schedule ?? {};
  return {
    bacs_debit_payments: { display_name: s.bacs_debit_payments?.display_name ?? null, service_user_number: null },
    branding: {
      icon: s.branding?.icon ?? null,
      logo: s.branding?.logo ?? null,
      primary_color: s.branding?.primary_color ?? null,
      secondary_color: s.branding?.secondary_color ?? null,
    },
    card_issuing: { tos_acceptance: { date: s.card_issuing?.tos_acceptance?.date ?? null, ip: s.card_issuing?.tos_acceptance?.ip ?? null } },
    card_payments: {
      decline_on: { avs_failure: s.card_payments?.decline_on?.avs_failure ?? false, cvc_failure: s.card_payments?.decline_on?.cvc_failure ?? false },
      statement_descriptor_prefix: s.card_payments?.statement_descriptor_prefix ?? null,
      statement_descriptor_prefix_kana: s.card_payments?.statement_descriptor_prefix_kana ?? null,
      statement_descriptor_prefix_kanji: s.card_payments?.statement_descriptor_prefix_kanji ?? null,
    },
    dashboard: { display_name: (row.details as AccountDetails).business_profile?.name ?? null, timezone: 'Etc/UTC' },
    invoices: { default_account_tax_ids: null, hosted_payment_method_save: s.invoices?.hosted_payment_method_save ?? 'offer' },
    payments: {
      statement_descriptor: s.payments?.statement_descriptor ?? null,
      statement_descriptor_kana: s.payments?.statement_descriptor_kana ?? null,
      statement_descriptor_kanji: s.payments?.statement_descriptor_kanji ?? null,
      statement_descriptor_prefix_kana: s.payments?.statement_descriptor_prefix_kana ?? null,
      statement_descriptor_prefix_kanji: s.payments?.statement_descriptor_prefix_kanji ?? null,
    },
    payouts: {
      debit_negative_balances: s.payouts?.debit_negative_balances ?? true,
      schedule: {
        delay_days: typeof schedule.delay_days === 'number' ? schedule.delay_days : 2,
        interval: schedule.interval ?? 'daily',
        ...(schedule.monthly_anchor !== undefined ? { monthly_anchor: schedule.monthly_anchor } : {}),
        ...(schedule.monthly_payout_days !== undefined ? { monthly_payout_days: schedule.monthly_payout_days } : {}),
        ...(schedule.weekly_anchor !== undefined ? { weekly_anchor: schedule.weekly_anchor } : {}),
        ...(schedule.weekly_payout_days !== undefined ? { weekly_payout_days: schedule.weekly_payout_days } : {}),
      },
      statement_descriptor: null,
    },
  };
}

/** An external account as stored, with the members the SDK's types declare that it was stored without. */
const externalAccount = (ea: Record<string, any>) => (ea.object === 'card' ? { regulated_status: null, ...ea } : ea);

/** The complete public Account object, with the nulls the SDK's `Account` type describes. */
export function serializeAccount(row: AccountRow) {
  const d = row.details as AccountDetails;
  const missing = missingRequirements(row);
  const capabilities = capabilityStatuses(row);
  const hasCapabilities = Object.keys(capabilities).length > 0;
  const complete = missing.length === 0;
  const rejected = isRejected(row);
  const externalAccounts = externalAccountsOf(d).map(serializeExternalAccount);
  const anyPaymentsActive = Object.entries(capabilities).some(([name, s]) => s === 'active' && name.endsWith('_payments'));
  return {
    id: row.id,
    object: OBJECT,
    business_profile: businessProfile(d.business_profile),
    business_type: row.businessType,
    capabilities,
    charges_enabled: isPlatform(row) || (complete && anyPaymentsActive && !rejected),
    ...(row.businessType && row.businessType !== 'individual' ? { company: company(d.company) } : {}),
    controller: controllerOf(row),
    country: row.country ?? 'US',
    created: row.created,
    default_currency: row.defaultCurrency ?? localCurrency(row.country ?? 'US'),
    details_submitted: isPlatform(row) || complete,
    email: row.email,
    external_accounts: { object: 'list', data: externalAccounts.map(externalAccount), has_more: false, total_count: externalAccounts.length, url: `/v1/accounts/${row.id}/external_accounts` },
    future_requirements: noFutureRequirements,
    groups: d.groups ? { payments_pricing: d.groups.payments_pricing ?? null } : null,
    ...(row.businessType === 'individual' ? { individual: individualPerson(row, missing) } : {}),
    metadata: row.metadata as Metadata,
    payouts_enabled: isPlatform(row) || (complete && externalAccounts.length > 0 && !rejected),
    requirements: requirements(row, missing, hasCapabilities),
    settings: settings(row, d.settings),
    tos_acceptance: {
      date: d.tos_acceptance?.date ?? null,
      ip: d.tos_acceptance?.ip ?? null,
      ...(d.tos_acceptance?.service_agreement ? { service_agreement: d.tos_acceptance.service_agreement } : {}),
      user_agent: d.tos_acceptance?.user_agent ?? null,
    },
    type: typeOf(row),
  };
}

export const serializeDeletedAccount = (id: string) => ({ id, object: OBJECT, deleted: true as const });

/** Its external accounts are always shown (a list); a path goes through them (`external_accounts.data.account`). */
export const expandable: ExpandableFields = { external_accounts: { type: 'bank_account', list: true, expand: async (value) => value } };
