import { execFile, spawnSync } from 'node:child_process';
import path from 'node:path';
import { newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { accountOfKey } from '../../helpers/events';
import { CLOSED_ORIGIN } from '../../helpers/fixtures';

// stripe-python as Debian ships it (python3-stripe 5.0.0), with an integration's flows: it sends
// no Stripe-Version unless told, so it reads what the account's default version renders. The
// sandbox is pinned as a team pins its staging one to an integration of that time
// (DEFAULT_API_VERSION, docs/versions.md): 2022-08-01. Every base URL of the library points at the
// test app. Without the library the test is skipped, with a line saying so, except in CI (.ci/run
// installs it), where it fails.

const PYTHON = '/usr/bin/python3';
const SCRIPT = path.join(__dirname, 'stripe_python_flows.py');
const PINNED = '2022-08-01';

const probe = spawnSync(PYTHON, ['-c', 'import stripe'], { encoding: 'utf8' });
const found = probe.status === 0;
const MISSING = `the stripe-python test needs ${PYTHON} with Debian's python3-stripe (apt-get install python3-stripe): ${(probe.stderr || String(probe.error ?? '')).trim().split('\n').pop()}`;
if (!found) {
  if (process.env.CI) throw new Error(MISSING);
  console.warn(`SKIPPED: ${MISSING}`);
}

type Step = { value?: unknown; error?: { class: string; message: string; status: number | null } };

(found ? describe : describe.skip)(`stripe-python (Debian's python3-stripe), the sandbox pinned to ${PINNED}`, () => {
  let t: TestApp;
  let steps: Record<string, Step>;
  let library: string;
  let calls: number;
  const key = newTestKey();
  beforeAll(async () => {
    t = await startTestApp({ DEFAULT_API_VERSION: PINNED });
    const env = { PATH: process.env.PATH ?? '', SANDBANK_BASE: `http://127.0.0.1:${t.port}`, SANDBANK_KEY: key, WEBHOOK_URL: `${CLOSED_ORIGIN}/hooks` };
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(PYTHON, [SCRIPT], { env, timeout: 60_000 }, (err, out, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(out))),
    );
    ({ steps, library, calls } = JSON.parse(stdout));
  }, 90_000);
  afterAll(() => t?.close());

  /** What each step read, or what it raised: every step's outcome in one failure message. */
  const read = (...names: string[]) =>
    Object.fromEntries(
      names.map((name) => {
        const step = steps[name];
        if (!step) return [name, 'the script ran no such step'];
        return [name, step.error ? `raised ${step.error.class}: ${step.error.message}` : step.value];
      }),
    );

  test('it is the library the test is about; it sent no version, so the sandbox default applied and nothing pinned another', async () => {
    expect(library).toMatch(/^5\./);
    const account = await t.runtime.prisma.account.findUniqueOrThrow({ where: { id: await accountOfKey(t.runtime, key) }, select: { defaultApiVersion: true } });
    expect(account.defaultApiVersion).toBeNull();
    // One request per step, each answered here (any other address would have raised).
    expect(t.logs.filter((l) => l.msg === 'request')).toHaveLength(calls);
  });

  test('a customer with pm_card_visa as its default, a product and a monthly price', () => {
    const customer = expect.stringMatching(/^cus_/);
    expect(read('customer', 'attach pm_card_visa', 'default payment method', 'product', 'price')).toEqual({
      customer,
      'attach pm_card_visa': customer,
      'default payment method': expect.stringMatching(/^pm_/),
      product: 'Gold',
      price: 1000,
    });
  });

  test('a subscription, and its current period as a 2022 integration reads it', () => {
    expect(read('subscription', 'subscription.current_period_end', 'subscription.current_period_start', 'subscription.items.data[0].price.id')).toEqual({
      subscription: 'active',
      'subscription.current_period_end': expect.any(Number),
      'subscription.current_period_start': expect.any(Number),
      'subscription.items.data[0].price.id': expect.stringMatching(/^price_/),
    });
  });

  test("the subscription's invoice: its subscription, paid, its lines' price", () => {
    expect(read('invoices', 'invoice.subscription', 'invoice.paid', 'invoice.lines.data[0].price.id')).toEqual({
      invoices: 1,
      'invoice.subscription': expect.stringMatching(/^sub_/),
      'invoice.paid': true,
      'invoice.lines.data[0].price.id': read('subscription.items.data[0].price.id')['subscription.items.data[0].price.id'],
    });
  });

  test('an account, a webhook endpoint, an identity verification session', () => {
    expect(read('account', 'webhook endpoint', 'identity verification session')).toEqual({
      account: 'express',
      'webhook endpoint': 'whsec_',
      'identity verification session': 'requires_input',
    });
  });

  test('an unknown object raises stripe.error.InvalidRequestError (404)', () => {
    expect(steps['retrieve a missing customer'].error).toMatchObject({ class: 'stripe.error.InvalidRequestError', status: 404 });
  });
});
