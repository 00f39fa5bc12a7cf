// The test institutions the public test mode offers (see compat.md), each with its test
// accounts. Everything an account shows (numbers, balances, owners, transactions) is generated
// from its institution and template (feed.ts), so the same test account always has the same data.

export type Category = 'cash' | 'credit' | 'investment' | 'other';
export type Subcategory = 'checking' | 'savings' | 'credit_card' | 'line_of_credit' | 'mortgage' | 'other';
/** Who owns the account, as its ownership refreshes find them. */
export type OwnersKind = 'single' | 'joint' | 'partial' | 'none';

export interface TestAccount {
  readonly id: string;
  readonly display_name: string;
  readonly category: Category;
  readonly subcategory: Subcategory;
  readonly last4: string;
  /** The balance the generator starts from, in cents (for credit accounts: what is used). */
  readonly balance: number;
  readonly supported_payment_method_types: readonly string[];
  readonly owners: OwnersKind;
}

/** How logging in goes: `credentials` (Bank (Non-OAuth): the special inputs of compat.md), `oauth`, or a pass-through `none`. */
export type Login = 'none' | 'oauth' | 'credentials';

export interface TestInstitution {
  readonly id: string;
  readonly name: string;
  readonly login: Login;
  /** Set for institutions whose login always fails, and why. */
  readonly down: null | 'scheduled' | 'unscheduled' | 'error';
  /** Its accounts go `inactive` FC_DEACTIVATION_DELAY_MS after being linked. */
  readonly inactive: boolean;
  /** Account numbers are tokenized (`identifier_type: tokenized_account_number`). */
  readonly tokenized: boolean;
  readonly accounts: readonly TestAccount[];
}

export const COUNTRY = 'US';
export const CURRENCY = 'usd';

const ACH = ['link', 'us_bank_account'] as const;

const account = (
  id: string,
  display_name: string,
  category: Category,
  subcategory: Subcategory,
  last4: string,
  balance: number,
  options: { payments?: boolean; owners?: OwnersKind } = {},
): TestAccount => ({
  id,
  display_name,
  category,
  subcategory,
  last4,
  balance,
  // Only cash accounts can back a bank payment method.
  supported_payment_method_types: options.payments === false || category !== 'cash' ? [] : ACH,
  owners: options.owners ?? 'single',
});

const BASIC: readonly TestAccount[] = [
  account('checking', 'Checking', 'cash', 'checking', '6789', 1_250_000),
  account('savings', 'Savings', 'cash', 'savings', '4321', 5_400_000),
  account('credit_card', 'Credit Card', 'credit', 'credit_card', '1111', 84_250),
  account('line_of_credit', 'Line of Credit', 'credit', 'line_of_credit', '2222', 350_000),
  account('investment', 'Brokerage', 'investment', 'other', '3333', 12_000_000),
];

const institution = (id: string, name: string, accounts: readonly TestAccount[], options: Partial<Omit<TestInstitution, 'id' | 'name' | 'accounts'>> = {}): TestInstitution => ({
  id,
  name,
  login: options.login ?? 'none',
  down: options.down ?? null,
  inactive: options.inactive ?? false,
  tokenized: options.tokenized ?? false,
  accounts,
});

export const INSTITUTIONS: readonly TestInstitution[] = [
  institution('test_institution', 'Test (Non-OAuth)', BASIC),
  institution('test_oauth_institution', 'Test (OAuth)', BASIC, { login: 'oauth' }),
  institution('bank_oauth', 'Bank (OAuth)', [
    account('checking', 'Everyday Checking', 'cash', 'checking', '6001', 812_000),
    account('savings', 'High Yield Savings', 'cash', 'savings', '6002', 2_300_000),
    account('mortgage', 'Home Mortgage', 'credit', 'mortgage', '6003', 31_500_000),
  ], { login: 'oauth' }),
  institution('ownership_accounts', 'Ownership Accounts', [
    account('joint', 'Joint Checking', 'cash', 'checking', '7001', 960_000, { owners: 'joint' }),
    account('single', 'Individual Checking', 'cash', 'checking', '7002', 430_000, { owners: 'single' }),
    account('partial', 'Partial Ownership Data', 'cash', 'savings', '7003', 1_100_000, { owners: 'partial' }),
    account('no_owners', 'No Ownership Data', 'cash', 'savings', '7004', 220_000, { owners: 'none' }),
  ]),
  institution('invalid_payment_accounts', 'Invalid Payment Accounts', [
    account('checking', 'Checking (not usable for ACH)', 'cash', 'checking', '8001', 500_000, { payments: false }),
    account('savings', 'Savings (not usable for ACH)', 'cash', 'savings', '8002', 900_000, { payments: false }),
  ]),
  institution('bank_non_oauth', 'Bank (Non-OAuth)', [
    account('checking', 'Checking', 'cash', 'checking', '9001', 640_000),
    account('savings', 'Savings', 'cash', 'savings', '9002', 1_800_000),
    account('credit_card', 'Rewards Card', 'credit', 'credit_card', '9003', 125_600),
  ], { login: 'credentials' }),
  institution('down_scheduled', 'Down (Scheduled)', [account('checking', 'Checking', 'cash', 'checking', '0001', 100_000)], { down: 'scheduled' }),
  institution('down_unscheduled', 'Down (Unscheduled)', [account('checking', 'Checking', 'cash', 'checking', '0002', 100_000)], { down: 'unscheduled' }),
  institution('down_error', 'Down (Error)', [account('checking', 'Checking', 'cash', 'checking', '0003', 100_000)], { down: 'error' }),
  institution('inactive_accounts', 'Inactive Accounts', [
    account('checking', 'Checking (goes inactive)', 'cash', 'checking', '5001', 300_000),
    account('savings', 'Savings (goes inactive)', 'cash', 'savings', '5002', 700_000),
  ], { inactive: true }),
  institution('tokenized_account_numbers', 'Tokenized Account Numbers', [
    account('checking', 'Checking (tokenized number)', 'cash', 'checking', '4001', 420_000),
    account('savings', 'Savings (tokenized number)', 'cash', 'savings', '4002', 1_600_000),
  ], { tokenized: true }),
];

const BY_ID = new Map(INSTITUTIONS.map((i) => [i.id, i]));

export const institutionOf = (id: string): TestInstitution | undefined => BY_ID.get(id);

/** The template of a linked account (the catalogue is fixed, so a stored pair always resolves). */
export function templateOf(institutionId: string, templateId: string): { institution: TestInstitution; account: TestAccount } {
  const inst = BY_ID.get(institutionId);
  const acct = inst?.accounts.find((a) => a.id === templateId);
  if (!inst || !acct) throw new Error(`Unknown test account ${institutionId}/${templateId}`);
  return { institution: inst, account: acct };
}

/** Why a down institution's login fails, as the flow says it. */
export const DOWN_REASONS: Record<NonNullable<TestInstitution['down']>, string> = {
  scheduled: 'This institution is down for scheduled maintenance. Try again later or pick another institution.',
  unscheduled: 'This institution is unavailable right now. Try again later or pick another institution.',
  error: 'The institution returned an error while logging in. Try again later or pick another institution.',
};
