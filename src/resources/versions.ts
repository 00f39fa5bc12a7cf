import { VersionRenderer, type VersionChange } from '../kernel/versions';

// The one table of differences between the API versions Sandbank accepts, in the objects it
// serves. Serializers write the newest shape; a request with an older Stripe-Version, and an
// event rendered for an older version (an endpoint's `api_version`, or the account's default
// when the event was written), get each change made after that version undone, newest first.
// Only changes visible in Sandbank's objects are here; the public changelog (docs.stripe.com/
// changelog) has the rest. Request parameters are not translated: requests use today's names.
//
// Checked and found unchanged across the accepted versions: capabilities, webhook endpoints,
// identity verification sessions and reports, account links, app secrets, coupons.

type Json = Record<string, any>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A downgrade that moves fields: each `[from, to]` takes the value at the dotted path `from`
 * (when present: a partial object moves what it has) to the top-level `to`; the objects named
 * in `replaced` go away, as the older versions had none.
 */
function moveFields(moves: readonly (readonly [string, string])[], replaced: readonly string[]) {
  return (object: Json): Json => {
    const out: Json = { ...object };
    for (const [from, to] of moves) {
      let node: unknown = object;
      for (const segment of from.split('.')) node = isObject(node) ? node[segment] : undefined;
      if (node !== undefined) out[to] = node;
    }
    for (const key of replaced) delete out[key];
    return out;
  };
}

const REPORT_COMPONENTS = ['balance_report', 'payout_reconciliation_report'] as const;

export const VERSION_CHANGES: readonly VersionChange[] = [
  {
    version: '2026-04-22.dahlia',
    object: 'account_session',
    description: 'Brings back the `balance_report` and `payout_reconciliation_report` components of account sessions.',
    downgrade: (session) => {
      if (!isObject(session.components)) return session;
      const components = { ...session.components };
      for (const name of REPORT_COMPONENTS) delete components[name];
      return { ...session, components };
    },
  },
  {
    version: '2025-09-30.clover',
    object: 'account_session',
    description: 'Removes the `balance_report` and `payout_reconciliation_report` components of account sessions (added in 2025-08-27.basil).',
    downgrade: (session, newest) => {
      if (!isObject(session.components) || !isObject(newest.components)) return session;
      const components = { ...session.components };
      for (const name of REPORT_COMPONENTS) if (newest.components[name] !== undefined) components[name] = newest.components[name];
      return { ...session, components };
    },
  },
  {
    version: '2025-09-30.clover',
    object: 'promotion_code',
    description:
      "Moves a promotion code's `coupon` into `promotion` (`{type: 'coupon', coupon}`), where it is the coupon's id unless expanded; " +
      'before, `coupon` was the whole coupon.',
    downgrade: (code, _newest, embedded) => {
      if (!isObject(code.promotion)) return code;
      const { promotion, ...rest } = code;
      const coupon = promotion.coupon;
      return { ...rest, coupon: typeof coupon === 'string' ? (embedded[coupon] ?? coupon) : coupon };
    },
  },
  {
    version: '2019-02-19',
    object: 'account',
    description:
      'Moves the business details into `business_profile` (`business_name` → `name`, `business_url` → `url`), the settings into ' +
      '`settings` (`payout_schedule`, `payout_statement_descriptor`, `debit_negative_balances`, `statement_descriptor`, ' +
      '`decline_charge_on` → `decline_on`, `business_logo` → `icon`, `business_logo_large` → `logo`, `business_primary_color` → ' +
      '`primary_color`, `display_name`, `timezone`), and replaces `verification` with `requirements` (`fields_needed` → ' +
      '`currently_due`, `due_by` → `current_deadline`).',
    downgrade: (account) => {
      const out = moveFields(
        [
          ['business_profile.name', 'business_name'],
          ['business_profile.url', 'business_url'],
          ['business_profile.mcc', 'mcc'],
          ['business_profile.product_description', 'product_description'],
          ['business_profile.support_address', 'support_address'],
          ['business_profile.support_email', 'support_email'],
          ['business_profile.support_phone', 'support_phone'],
          ['business_profile.support_url', 'support_url'],
          ['settings.branding.icon', 'business_logo'],
          ['settings.branding.logo', 'business_logo_large'],
          ['settings.branding.primary_color', 'business_primary_color'],
          ['settings.card_payments.decline_on', 'decline_charge_on'],
          ['settings.dashboard.display_name', 'display_name'],
          ['settings.dashboard.timezone', 'timezone'],
          ['settings.payments.statement_descriptor', 'statement_descriptor'],
          ['settings.payouts.debit_negative_balances', 'debit_negative_balances'],
          ['settings.payouts.schedule', 'payout_schedule'],
          ['settings.payouts.statement_descriptor', 'payout_statement_descriptor'],
        ],
        ['business_profile', 'settings', 'requirements'],
      )(account);
      const requirements = account.requirements;
      if (isObject(requirements)) {
        out.verification = moveFields(
          [
            ['disabled_reason', 'disabled_reason'],
            ['current_deadline', 'due_by'],
            ['currently_due', 'fields_needed'],
          ],
          Object.keys(requirements),
        )(requirements);
      }
      return out;
    },
  },
  {
    version: '2017-05-25',
    object: 'event',
    description: "An event's `request` becomes `{id, idempotency_key}`; before, it was the request's id.",
    downgrade: (event) => (isObject(event.request) ? { ...event, request: event.request.id ?? null } : event),
  },
];

/** Renders objects for a version, with the table above. */
export const versions = new VersionRenderer(VERSION_CHANGES);
