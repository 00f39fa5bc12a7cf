import { isJsonObject, moveFields, type VersionChange } from '../../kernel/versions';

// Its objects' changes between API versions (see src/kernel/versions.ts for how they render, and
// docs/versions.md for the whole table). Serializers write the newest shape; each change here is
// undone, newest first, for a request or an event at an older version.

const REPORT_COMPONENTS = ['balance_report', 'payout_reconciliation_report'] as const;

export const versionChanges: readonly VersionChange[] = [
  {
    version: '2026-04-22.dahlia',
    object: 'account_session',
    description: 'Brings back the `balance_report` and `payout_reconciliation_report` components of account sessions.',
    downgrade: (session) => {
      if (!isJsonObject(session.components)) return session;
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
      if (!isJsonObject(session.components) || !isJsonObject(newest.components)) return session;
      const components = { ...session.components };
      for (const name of REPORT_COMPONENTS) if (newest.components[name] !== undefined) components[name] = newest.components[name];
      return { ...session, components };
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
      if (isJsonObject(requirements)) {
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
];
