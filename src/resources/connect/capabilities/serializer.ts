import { ref, type ExpandableFields } from '../../../kernel/expand';
import {
  capabilityStatuses,
  isRejected,
  missingRequirements,
  noFutureRequirements,
  requirements,
  type CapabilityStatus,
} from '../accounts/serializer';
import type { AccountDetails, AccountRow } from '../accounts/details';

export const OBJECT = 'capability';

export interface CapabilityEntry {
  readonly name: string;
  readonly requestedAt: number | null;
  /** List position: newest first; entries from before positions existed come last, by name. */
  readonly order: number;
}

/**
 * The account's capabilities, newest first: the requested ones (a platform has its own pair,
 * always active).
 */
export function capabilitiesOf(row: AccountRow): CapabilityEntry[] {
  const stored = (row.details as AccountDetails).capabilities ?? {};
  return Object.keys(capabilityStatuses(row))
    .map((name) => ({ name, requestedAt: stored[name]?.requested_at ?? row.created, order: stored[name]?.seq ?? 0 }))
    .sort((a, b) => b.order - a.order || a.name.localeCompare(b.name));
}

/** A capability object; `status` is given when it is already known (unrequested after a removal). */
export function serializeCapability(row: AccountRow, name: string, status: CapabilityStatus | 'unrequested' = capabilityStatuses(row)[name] ?? 'unrequested') {
  const platform = row.parentAccountId === null;
  const c = (row.details as AccountDetails).capabilities?.[name];
  const requested = platform ? status !== 'unrequested' : (c?.requested ?? false);
  const missing = status === 'inactive' ? missingRequirements(row) : [];
  const base = requirements(row, missing, true);
  return {
    id: name,
    object: OBJECT,
    account: row.id,
    future_requirements: { ...noFutureRequirements },
    requested,
    requested_at: requested ? (c?.requested_at ?? row.created) : null,
    requirements: {
      ...base,
      // A capability names its own reasons: fields needed, or a rejection.
      disabled_reason: isRejected(row) ? 'rejected.other' : missing.length > 0 ? 'requirements.fields_needed' : null,
    },
    status,
  };
}

export type Capability = ReturnType<typeof serializeCapability>;

export const expandable: ExpandableFields = { account: ref('account') };
