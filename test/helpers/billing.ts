import type { TestApp } from './app';
import { createCustomer, createPrice } from './fixtures';
import { requestsOf } from './requests';

// What subscription tests start from: a customer with a default test card, and monthly prices.

/** A customer whose default payment method is the test card `card` (`pm_card_visa`, `pm_card_chargeCustomerFail` …). */
export async function payingCustomer(t: TestApp, key: string, card = 'pm_card_visa', params: Record<string, unknown> = {}): Promise<{ id: string; pm: string }> {
  const { post } = requestsOf(() => t);
  const customer = await createCustomer(t, key, params);
  const attached = await post(key, `/v1/payment_methods/${card}/attach`, { customer: customer.id });
  if (attached.status !== 200) throw new Error(`attaching ${card} failed: ${attached.status} ${JSON.stringify(attached.body)}`);
  const updated = await post(key, `/v1/customers/${customer.id}`, { invoice_settings: { default_payment_method: attached.body.id } });
  if (updated.status !== 200) throw new Error(`setting the default payment method failed: ${JSON.stringify(updated.body)}`);
  return { id: customer.id, pm: attached.body.id };
}

/** A recurring price (monthly unless `recurring` says otherwise) of a new product named `name`. */
export async function recurringPrice(t: TestApp, key: string, unitAmount: number, name = 'Gold', params: Record<string, unknown> = {}): Promise<Record<string, any>> {
  return createPrice(t, key, { unit_amount: unitAmount, recurring: { interval: 'month' }, product_data: { name }, ...params });
}
