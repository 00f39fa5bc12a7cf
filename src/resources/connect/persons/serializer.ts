import type { ExpandableFields } from '../../../kernel/expand';
import type { Metadata } from '../../../kernel/metadata';
import type { AccountDetails, AccountRow, PersonRecord } from '../accounts/details';

export const OBJECT = 'person';

export const RELATIONSHIPS = ['authorizer', 'director', 'executive', 'legal_guardian', 'owner', 'representative'] as const;
export type Relationship = (typeof RELATIONSHIPS)[number];

const COMPANY_TYPES = new Set(['company', 'non_profit', 'government_entity']);
/** Business types whose requirements name a representative (and, for companies, owners and directors). */
export const hasPersonRequirements = (businessType: string | null): boolean => businessType !== null && COMPANY_TYPES.has(businessType);

/** The account's persons, oldest first: its individual (when it has one), then those made through the Persons API. */
export function personsOf(row: Pick<AccountRow, 'id' | 'created' | 'details'>): PersonRecord[] {
  const d = row.details as AccountDetails;
  const out: PersonRecord[] = [];
  if (d.individual_id && d.individual) {
    // The individual represents the account unless another person was made its representative.
    const relationship = { representative: true, ...(d.individual.relationship ?? {}) };
    out.push({ ...d.individual, relationship, id: d.individual_id, created: row.created, seq: 0 });
  }
  return [...out, ...(d.persons ?? [])];
}

export const hasRelationship = (p: Record<string, any>, r: Relationship): boolean => p.relationship?.[r] === true;

const present = (v: unknown): boolean => v !== undefined && v !== null && v !== '';

const valueAt = (record: Record<string, any>, field: string): unknown =>
  field.split('.').reduce<any>((node, key) => (node === null || typeof node !== 'object' ? undefined : node[key]), record);

/** What identifies a person, as requirements name it (`dob.day`, `ssn_last_4`, …), for an account in `country`. */
function identityFields(country: string): string[] {
  return [
    'address.city',
    'address.line1',
    'address.postal_code',
    ...(country === 'US' ? ['address.state'] : []),
    'dob.day',
    'dob.month',
    'dob.year',
    'email',
    'first_name',
    'last_name',
    'phone',
    country === 'US' ? 'ssn_last_4' : 'id_number',
  ];
}

/**
 * The fields each relationship asks of a person (the public US country spec's `representative.*`
 * and `owners.*`; directors give their name and date of birth). The US last 4 of the SSN is
 * also satisfied by the full number.
 */
export function fieldsFor(role: 'representative' | 'owner' | 'director', country: string): string[] {
  if (role === 'director') return ['dob.day', 'dob.month', 'dob.year', 'first_name', 'last_name'];
  const fields = identityFields(country);
  return role === 'representative' ? [...fields, 'relationship.title'] : fields;
}

export function missingFields(person: Record<string, any>, fields: readonly string[]): string[] {
  return fields.filter((f) => {
    if (f === 'ssn_last_4') return !present(person.ssn_last_4) && !present(person.id_number);
    return !present(valueAt(person, f));
  });
}

/** What a company person still owes for the relationships it has, sorted. */
export function personMissing(person: Record<string, any>, country: string, businessType: string | null): string[] {
  if (!hasPersonRequirements(businessType)) return [];
  const fields = new Set<string>();
  if (hasRelationship(person, 'representative')) for (const f of fieldsFor('representative', country)) fields.add(f);
  if (businessType === 'company' && hasRelationship(person, 'owner')) for (const f of fieldsFor('owner', country)) fields.add(f);
  if (businessType === 'company' && hasRelationship(person, 'director')) for (const f of fieldsFor('director', country)) fields.add(f);
  return missingFields(person, [...fields]).sort();
}

const ADDRESS_KEYS = ['city', 'country', 'line1', 'line2', 'postal_code', 'state'] as const;
const address = (value: Record<string, any> | undefined) => Object.fromEntries(ADDRESS_KEYS.map((k) => [k, value?.[k] ?? null]));
const japanAddress = (value: Record<string, any> | undefined) =>
  value ? Object.fromEntries([...ADDRESS_KEYS, 'town'].map((k) => [k, value[k] ?? null])) : null;
const documentSides = (value: Record<string, any> | undefined) => ({ back: value?.back ?? null, details: null, details_code: null, front: value?.front ?? null });

export interface PersonRequirements {
  /** Due now, without the person's prefix (`first_name`). */
  readonly currentlyDue: string[];
  /** Due now or later. */
  readonly eventuallyDue: string[];
}

/** The public Person object; identity numbers are never echoed, only whether they were given. */
export function serializePerson(row: Pick<AccountRow, 'id'>, p: PersonRecord, requirements: PersonRequirements) {
  const r = p.relationship ?? {};
  const due = requirements.currentlyDue;
  return {
    id: p.id,
    object: OBJECT,
    account: row.id,
    // The acceptance object is always there, its members null until the person accepts.
    additional_tos_acceptances: {
      account: {
        date: p.additional_tos_acceptances?.account?.date ?? null,
        ip: p.additional_tos_acceptances?.account?.ip ?? null,
        user_agent: p.additional_tos_acceptances?.account?.user_agent || null,
      },
    },
    address: address(p.address),
    address_kana: japanAddress(p.address_kana),
    address_kanji: japanAddress(p.address_kanji),
    created: p.created,
    dob: { day: p.dob?.day ?? null, month: p.dob?.month ?? null, year: p.dob?.year ?? null },
    email: p.email ?? null,
    first_name: p.first_name ?? null,
    first_name_kana: p.first_name_kana ?? null,
    first_name_kanji: p.first_name_kanji ?? null,
    full_name_aliases: Array.isArray(p.full_name_aliases) ? p.full_name_aliases : [],
    future_requirements: { alternatives: [], currently_due: [], errors: [], eventually_due: [], past_due: [], pending_verification: [] },
    gender: p.gender ?? null,
    id_number_provided: present(p.id_number),
    id_number_secondary_provided: present(p.id_number_secondary),
    last_name: p.last_name ?? null,
    last_name_kana: p.last_name_kana ?? null,
    last_name_kanji: p.last_name_kanji ?? null,
    maiden_name: p.maiden_name ?? null,
    metadata: (p.metadata ?? {}) as Metadata,
    nationality: p.nationality ?? null,
    phone: p.phone ?? null,
    political_exposure: p.political_exposure ?? 'none',
    registered_address: address(p.registered_address),
    relationship: {
      authorizer: r.authorizer ?? false,
      director: r.director ?? false,
      executive: r.executive ?? false,
      legal_guardian: r.legal_guardian ?? false,
      owner: r.owner ?? false,
      percent_ownership: typeof r.percent_ownership === 'number' ? r.percent_ownership : null,
      representative: r.representative ?? false,
      title: r.title ?? null,
    },
    requirements: { alternatives: [], currently_due: due, errors: [], eventually_due: requirements.eventuallyDue, past_due: due, pending_verification: [] },
    ssn_last_4_provided: present(p.ssn_last_4),
    verification: {
      additional_document: documentSides(p.verification?.additional_document),
      details: null,
      details_code: null,
      document: documentSides(p.verification?.document),
      status: due.length === 0 ? 'verified' : 'unverified',
    },
  };
}

export type Person = ReturnType<typeof serializePerson>;

export const serializeDeletedPerson = (id: string) => ({ id, object: OBJECT, deleted: true as const });

export const expandable: ExpandableFields = {};
