import { listField, ref } from '../../kernel/expand';
import { isJsonObject, type Embedded, type VersionChange } from '../../kernel/versions';
import { chargesKey, INLINE_LIMIT, invoiceKey, refundsKey, type RefundsList } from './charges/history';

// Its objects' changes between API versions (see src/kernel/versions.ts for how they render, and
// docs/versions.md for the whole table). Serializers write the newest shape; each change here is
// undone, newest first, for a request or an event at an older version. A downgrade may get a part
// of an object (an event's previous_attributes): it moves what is there, and sets what every older
// object had only on a whole one. What older versions showed that today's objects don't carry (an
// intent's charges, a charge's refunds, the invoice paid) rides along embedded (charges/history.ts).

type Json = Record<string, any>;

const BASIL = '2025-03-31.basil';

/** A whole object (it says what it is), not an event's `previous_attributes`. */
const isWhole = (object: Json): boolean => typeof object.object === 'string';
const has = (object: Json, key: string): boolean => Object.prototype.hasOwnProperty.call(object, key);

const listOf = (url: string, embedded: unknown, fallbackHasMore: boolean): Json => {
  if (isJsonObject(embedded) && Array.isArray(embedded.data)) {
    const list = embedded as unknown as RefundsList;
    return { object: 'list', data: list.data, has_more: list.total_count > list.data.length, total_count: list.total_count, url };
  }
  // Not read for this rendering (an endpoint pinned older than its account's version): what is left is behind `url`.
  return { object: 'list', data: [], has_more: fallbackHasMore, url };
};

export const chargeChanges: readonly VersionChange[] = [
  {
    version: BASIL,
    object: 'charge',
    description: 'Removes `invoice` from charges (invoice payments are on the invoice): before, the id of the invoice the charge paid, or null.',
    expandable: { invoice: ref('invoice') },
    downgrade: (charge, _newest, embedded) => (isWhole(charge) ? { ...charge, invoice: embedded[invoiceKey(String(charge.id))] ?? null } : charge),
  },
  {
    version: '2023-08-16',
    object: 'charge',
    description:
      'Removes `dispute` (use `disputed` and the disputes list) and `destination` (use `transfer_data.destination`) from charges: before, ' +
      '`dispute` was the dispute’s id (null: Sandbank has no disputes) and `destination` the account of `transfer_data` (null without one).',
    expandable: { destination: ref('account') },
    downgrade: (charge) => {
      const out: Json = { ...charge };
      if (has(charge, 'transfer_data')) out.destination = isJsonObject(charge.transfer_data) ? (charge.transfer_data.destination ?? null) : null;
      if (isWhole(charge) && !has(out, 'dispute')) out.dispute = null;
      return out;
    },
  },
  {
    version: '2022-11-15',
    object: 'charge',
    description:
      'The charge no longer auto-expands `refunds`: before, every charge showed its refunds, a list (the first ten, newest first, ' +
      'the rest through its `url`); now only when expanded.',
    downgrade: (charge, _newest, embedded) => {
      if (!isWhole(charge) || has(charge, 'refunds')) return charge;
      const id = String(charge.id);
      return { ...charge, refunds: listOf(`/v1/charges/${id}/refunds`, embedded[refundsKey(id)], Number(charge.amount_refunded) > 0) };
    },
  },
];

/** A charge (newest shape, embedded in an intent) as versions before 2022-11-15 show it: every charge change undone. */
function olderCharge(charge: Json, embedded: Embedded): Json {
  let out = charge;
  for (const change of chargeChanges) out = change.downgrade(out, charge, embedded);
  return out;
}

export const paymentIntentChanges: readonly VersionChange[] = [
  {
    version: BASIL,
    object: 'payment_intent',
    description: 'Removes `invoice` from PaymentIntents (invoice payments are on the invoice): before, the id of the invoice it pays, or null.',
    expandable: { invoice: ref('invoice') },
    downgrade: (intent, _newest, embedded) => (isWhole(intent) ? { ...intent, invoice: embedded[invoiceKey(String(intent.id))] ?? null } : intent),
  },
  {
    version: '2022-11-15',
    object: 'payment_intent',
    description:
      'Removes `charges` from PaymentIntents in favor of `latest_charge`: before, `charges` listed its charges (every attempt, newest ' +
      'first, the first ten, each with its refunds) and there was no `latest_charge`.',
    // `charges.data.balance_transaction`, as the guides of that time expand it.
    expandable: { charges: listField('charge'), latest_charge: null },
    downgrade: (intent, _newest, embedded) => {
      if (!has(intent, 'latest_charge')) return intent;
      const { latest_charge: latest, ...out } = intent;
      if (!isWhole(intent)) return out;
      const id = String(intent.id);
      const list = listOf(`/v1/charges?payment_intent=${id}`, embedded[chargesKey(id)], latest !== null);
      // A charge embedded by the intent is its newest shape: the charge changes (all since 2022-11-15) are undone here.
      return { ...out, charges: { ...list, data: (list.data as Json[]).slice(0, INLINE_LIMIT).map((c) => olderCharge(c, embedded)) } };
    },
  },
];

export const versionChanges: readonly VersionChange[] = [...paymentIntentChanges, ...chargeChanges];
