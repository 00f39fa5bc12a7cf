import type { Account } from '../../../generated/prisma/client';

// An account's row, and what its `details` column holds: the account's own parts and the records
// of its sub-resources (capabilities, external accounts, persons). The sub-resources read these
// without importing the account's serializer, which shows them inside the account.

export type AccountRow = Pick<
  Account,
  'id' | 'parentAccountId' | 'created' | 'type' | 'country' | 'email' | 'businessType' | 'defaultCurrency' | 'metadata' | 'details'
>;

/** What `details` holds (see prisma/schema.prisma): the posted sub-objects, in the public spelling. */
export interface AccountDetails {
  business_profile?: Record<string, any>;
  company?: Record<string, any>;
  individual?: Record<string, any>;
  /** Stable id of the account's individual (a person), made when `individual` is first given. */
  individual_id?: string;
  settings?: Record<string, any>;
  tos_acceptance?: Record<string, any>;
  controller?: { fees?: { payer?: string }; losses?: { payments?: string }; requirement_collection?: string; stripe_dashboard?: { type?: string } };
  documents?: Record<string, any>;
  groups?: Record<string, any>;
  /** `seq` orders the capability list (newest first); entries from before it have none. */
  capabilities?: Record<string, { requested: boolean; requested_at: number; seq?: number }>;
  external_accounts?: Record<string, any>[];
  /** Persons made through the Persons API (the individual is `individual`). */
  persons?: PersonRecord[];
  /** The last list position given to a capability, external account or person. */
  sequence?: number;
  /** Set by POST /v1/accounts/{account}/reject. */
  rejected?: { reason: string; disabled_reason: string; at: number };
}

/**
 * A person as stored in the account's `details.persons` (see prisma/schema.prisma): the posted
 * members in the public spelling, with its id, creation time and list position. The account's
 * individual (`details.individual`) is a person too, listed first.
 */
export interface PersonRecord extends Record<string, any> {
  id: string;
  created: number;
  seq: number;
}
