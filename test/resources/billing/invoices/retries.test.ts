import { ConfigError, loadConfig } from '../../../../src/config';
import { openRuntime } from '../../../../src/runtime';
import { parseRetrySchedules, policyFor, RECOMMENDED_POLICY, retryDueTimes, retrySchedules } from '../../../../src/resources/billing/invoices/retries';

// BILLING_RETRY_SCHEDULE: parsing, the per-platform choice and the due times' arithmetic (by hand).

const DAY = 86_400;
const T = 1_800_000_000;

test('empty: the recommended schedule, 8 retries within 14 days, then canceled with the invoice left open', () => {
  const schedules = retrySchedules(loadConfig({}));
  expect(schedules.default).toEqual({ days: [1, 2, 2, 2, 2, 2, 2, 1], subscription: 'canceled', invoice: 'open' });
  expect(schedules.platforms.size).toBe(0);
  expect(RECOMMENDED_POLICY.days.reduce((a, b) => a + b, 0)).toBe(14);
});

test('due times: each retry counted from the one before, from the failed attempt', () => {
  // Failed at T: T+1d, +2d (3), +2d (5), 7, 9, 11, 13, +1d (14).
  expect(retryDueTimes(T, RECOMMENDED_POLICY.days)).toEqual([T + DAY, T + 3 * DAY, T + 5 * DAY, T + 7 * DAY, T + 9 * DAY, T + 11 * DAY, T + 13 * DAY, T + 14 * DAY]);
  expect(retryDueTimes(T, [3, 5, 7])).toEqual([T + 259_200, T + 691_200, T + 1_296_000]);
  // Fractions of a day round to the second: 0.5 day is 43 200 s, 0.00002 day is 1.728 s → 2 s.
  expect(retryDueTimes(T, [0.5, 0.00002])).toEqual([T + 43_200, T + 43_202]);
});

test('a platform entry overrides the default (taking what it leaves out from it); connected accounts follow their platform', () => {
  const schedules = parseRetrySchedules(
    JSON.stringify({ default: { days: [2, 2], subscription: 'unpaid' }, acct_Platform1: { days: [1], invoice: 'uncollectible' }, acct_Platform2: { subscription: 'past_due' } }),
  );
  expect(schedules.default).toEqual({ days: [2, 2], subscription: 'unpaid', invoice: 'open' });
  expect(policyFor(schedules, 'acct_Platform1', null)).toEqual({ days: [1], subscription: 'unpaid', invoice: 'uncollectible' });
  expect(policyFor(schedules, 'acct_Platform2', null)).toEqual({ days: [2, 2], subscription: 'past_due', invoice: 'open' });
  // A connected account of Platform1 follows it, whatever its own id.
  expect(policyFor(schedules, 'acct_Connected9', 'acct_Platform1')).toEqual(policyFor(schedules, 'acct_Platform1', null));
  expect(policyFor(schedules, 'acct_Other', null)).toBe(schedules.default);
  // Without `default`, the recommended one is the default.
  expect(parseRetrySchedules('{"acct_X1": {"days": [4]}}').default).toBe(RECOMMENDED_POLICY);
});

test('a malformed value is refused with a message naming the setting and what is wrong, and stops start-up', () => {
  const bad: [string, RegExp][] = [
    ['{', /not valid JSON/],
    ['[1,2]', /must be a JSON object/],
    ['{"default": {"days": []}}', /default\.days must be an array of 1 to 25 positive numbers/],
    ['{"default": {"days": [1, -2]}}', /default\.days/],
    ['{"default": {"days": "1,2"}}', /default\.days/],
    ['{"default": {"days": [200, 200]}}', /at most 365 days/],
    ['{"default": {"subscription": "deleted"}}', /default\.subscription must be one of "canceled", "unpaid", "past_due"/],
    ['{"acct_1": {"invoice": "void"}}', /acct_1\.invoice must be one of "uncollectible", "open"/],
    ['{"default": {"dayz": [1]}}', /unknown field\(s\) `dayz`/],
    ['{"cus_123": {"days": [1]}}', /keys are "default" or a platform account id/],
    ['{"default": 3}', /default must be an object/],
  ];
  for (const [raw, message] of bad) {
    expect(() => retrySchedules(loadConfig({ BILLING_RETRY_SCHEDULE: raw }))).toThrow(ConfigError);
    expect(() => retrySchedules(loadConfig({ BILLING_RETRY_SCHEDULE: raw }))).toThrow(new RegExp(`^BILLING_RETRY_SCHEDULE .*${message.source}`));
  }
  // Billing checks it as the process starts, before any client opens.
  expect(() => openRuntime(loadConfig({ BILLING_RETRY_SCHEDULE: '{"default": {"days": [0]}}' }))).toThrow(/BILLING_RETRY_SCHEDULE default\.days/);
});
