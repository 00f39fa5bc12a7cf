import type { ExpandableFields } from '../../../kernel/expand';

export const OBJECT = 'sandbox.data_reset';

export const expandable: ExpandableFields = {};

export interface DeletedCounts {
  accounts: number;
  webhook_endpoints: number;
  events: number;
  account_sessions: number;
  account_links: number;
  login_links: number;
  apps_secrets: number;
  identity_verification_sessions: number;
  identity_verification_reports: number;
  customers: number;
  customer_tax_ids: number;
  customer_balance_transactions: number;
  payment_methods: number;
  payment_intents: number;
  charges: number;
  refunds: number;
  setup_intents: number;
  /** 3-D Secure challenges of PaymentIntents and SetupIntents. */
  payment_authentications: number;
  forwarding_requests: number;
  products: number;
  prices: number;
  tax_rates: number;
  coupons: number;
  promotion_codes: number;
  subscriptions: number;
  subscription_items: number;
  invoices: number;
  invoice_items: number;
  /** Due payment retries of invoices (dunning). */
  invoice_payment_retries: number;
  invoice_payments: number;
  /** Hosted invoice pages' and PDFs' links. */
  invoice_links: number;
  /** The `invoice.overdue` sent per invoice. */
  invoice_overdue_notices: number;
  /** What manual invoices carry beyond every invoice's columns. */
  invoice_details: number;
  test_clocks: number;
  idempotency_records: number;
  seed_runs: number;
  financial_connections_transactions: number;
  financial_connections_owners: number;
  financial_connections_ownerships: number;
  financial_connections_refreshes: number;
  financial_connections_accounts: number;
  financial_connections_sessions: number;
}

export const serializeDataReset = (account: string, deleted: DeletedCounts) => ({ object: OBJECT, account, livemode: false, deleted });
