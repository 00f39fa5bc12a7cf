import { parseFixtures, resolvePath, resolveText, resolveValue, SeedError, type ReferenceScope } from '../../src/seed/fixtures';

// The fixtures format (the Stripe CLI's, from JSON or YAML) and its references, without a database.

const file = (fixtures: unknown[], meta: unknown = { template_version: 0 }) => JSON.stringify({ _meta: meta, fixtures });
const customer = { name: 'cus_alice', path: '/v1/customers', method: 'post', params: { email: 'alice@example.test' } };

const scope = (answers: Record<string, unknown>, env: Record<string, string> = {}, names = Object.keys(answers)): ReferenceScope => ({
  answers: new Map(Object.entries(answers)),
  names,
  env,
});

const ANSWERS = {
  cus_alice: { id: 'cus_123', object: 'customer', email: 'alice@example.test', balance: 0, livemode: false, description: null, metadata: { tier: 'gold' } },
  acct: { id: 'acct_1', requirements: { currently_due: ['business_profile.url', 'external_account'] } },
  prod_basic: { id: 'prod_1', name: 'Basic', default_price: 'price_1' },
};

function seedError(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(SeedError);
    return (err as Error).message;
  }
  throw new Error('expected a SeedError');
}

describe('reading a file', () => {
  test('JSON: the fields of each fixture, the method in lower case, params and headers defaulted', () => {
    const [f] = parseFixtures(file([{ ...customer, method: 'POST' }]), 'seed.json');
    expect(f).toMatchObject({ name: 'cus_alice', path: '/v1/customers', method: 'post', params: { email: 'alice@example.test' }, headers: {} });
    expect(f.fingerprint).toMatch(/^[0-9a-f]{64}$/);
  });

  test('YAML reads to the same fixtures, references written without quotes included', () => {
    const yaml = [
      '_meta:',
      '  template_version: 0',
      'fixtures:',
      '  - name: cus_alice',
      '    path: /v1/customers',
      '    method: post',
      '    params:',
      '      email: alice@example.test',
      '  - name: pm_alice',
      '    path: /v1/payment_methods/pm_card_visa/attach',
      '    method: post',
      '    params:',
      '      customer: ${cus_alice:id}',
    ].join('\n');
    const json = file([customer, { name: 'pm_alice', path: '/v1/payment_methods/pm_card_visa/attach', method: 'post', params: { customer: '${cus_alice:id}' } }]);
    expect(parseFixtures(yaml, 'seed.yml')).toEqual(parseFixtures(json, 'seed.json'));
    expect(parseFixtures(yaml, 'SEED.YAML')).toEqual(parseFixtures(json, 'seed.json'));
  });

  test('the fingerprint follows what a fixture says, not how its keys are ordered', () => {
    const [a] = parseFixtures(file([{ name: 'x', path: '/v1/customers', method: 'post', params: { a: 1, b: { c: 2, d: 3 } } }]), 'f.json');
    const [b] = parseFixtures(file([{ params: { b: { d: 3, c: 2 }, a: 1 }, method: 'post', path: '/v1/customers', name: 'x' }]), 'f.json');
    const [c] = parseFixtures(file([{ name: 'x', path: '/v1/customers', method: 'post', params: { a: 1, b: { c: 2, d: 4 } } }]), 'f.json');
    expect(a.fingerprint).toBe(b.fingerprint);
    expect(c.fingerprint).not.toBe(a.fingerprint);
  });

  test('headers are the ones a fixture may set, spelled canonically', () => {
    const [f] = parseFixtures(file([{ ...customer, headers: { 'stripe-account': '${acct:id}', 'Stripe-Version': '2026-10-28.endive' } }]), 'f.json');
    expect(f.headers).toEqual({ 'Stripe-Account': '${acct:id}', 'Stripe-Version': '2026-10-28.endive' });
  });

  test.each([
    ['not JSON', '{"fixtures": [', 'f.json', /^f\.json is not valid JSON: /],
    ['not YAML', 'fixtures: [a, b', 'f.yaml', /^f\.yaml is not valid YAML: /],
    ['no fixtures list', '{"_meta": {"template_version": 0}}', 'f.json', /^f\.json has no "fixtures" list$/],
    ['a newer template version', file([customer], { template_version: 1 }), 'f.json', /template_version 1 is not supported/],
    ['the CLI\'s env (writing a .env)', JSON.stringify({ fixtures: [], env: { A: 'b' } }), 'f.json', /"env" .* is not supported/],
    ['an unknown field, pointing Stripe-Account at headers', file([{ ...customer, stripe_account: 'acct_1' }]), 'f.json', /^f\.json: fixture cus_alice: unknown field "stripe_account" .*Stripe-Account goes in headers/],
    ['two fixtures of one name', file([customer, customer]), 'f.json', /fixture cus_alice: another fixture has this name/],
    ['a name a reference could not spell', file([{ ...customer, name: 'a:b' }]), 'f.json', /fixture a:b: needs a name/],
    ['.env as a name', file([{ ...customer, name: '.env' }]), 'f.json', /needs a name/],
    ['a path off the API', file([{ ...customer, path: '/hosted/onboarding/x' }]), 'f.json', /needs a path that starts with \/v1\//],
    ['a query in the path', file([{ ...customer, path: '/v1/customers?limit=3', method: 'get' }]), 'f.json', /parameters go in params/],
    ['another method', file([{ ...customer, method: 'put' }]), 'f.json', /needs a method: get, post or delete/],
    ['params that are a list', file([{ ...customer, params: ['a'] }]), 'f.json', /params must be an object/],
    ['the Authorization header', file([{ ...customer, headers: { Authorization: 'Bearer sk_test_x' } }]), 'f.json', /header "Authorization" can't be set/],
    ['an unnamed fixture, by its place', file([customer, { path: '/v1/customers', method: 'post' }]), 'f.json', /^f\.json: fixture #2: needs a name/],
  ])('refuses %s in one line', (_what, text, name, message) => {
    const error = seedError(() => parseFixtures(text, name));
    expect(error).toMatch(message);
    expect(error).not.toContain('\n');
  });
});

describe('references', () => {
  test("an earlier fixture's id, a nested path (list items by index), and a value with its type", () => {
    const s = scope(ANSWERS);
    expect(resolveValue({ customer: '${cus_alice:id}' }, s, 'pm')).toEqual({ customer: 'cus_123' });
    expect(resolveValue({ field: '${acct:requirements.currently_due.0}', second: '${acct:requirements.currently_due.1}' }, s, 'x')).toEqual({
      field: 'business_profile.url',
      second: 'external_account',
    });
    expect(resolveValue({ price: '${prod_basic:default_price}' }, s, 'x')).toEqual({ price: 'price_1' });
    // A string that is only a reference takes the value as it is: a number, a boolean, an object, a list.
    expect(resolveValue({ n: '${cus_alice:balance}', b: '${cus_alice:livemode}', m: '${cus_alice:metadata}', l: '${acct:requirements.currently_due}' }, s, 'x')).toEqual({
      n: 0,
      b: false,
      m: { tier: 'gold' },
      l: ['business_profile.url', 'external_account'],
    });
  });

  test('inside a longer string they are written in; in nested params and lists too', () => {
    const s = scope(ANSWERS);
    expect(resolveValue({ nickname: '${prod_basic:name} (yearly, ${cus_alice:balance} due)' }, s, 'x')).toEqual({ nickname: 'Basic (yearly, 0 due)' });
    expect(resolveValue({ items: [{ price: '${prod_basic:default_price}' }], metadata: { owner: 'owner-${cus_alice:id}' } }, s, 'x')).toEqual({
      items: [{ price: 'price_1' }],
      metadata: { owner: 'owner-cus_123' },
    });
    // Not a reference (no `:`): left as written.
    expect(resolveValue({ text: 'costs ${5}' }, s, 'x')).toEqual({ text: 'costs ${5}' });
  });

  test('in a path, escaped as a path segment', () => {
    const s = scope(ANSWERS, { ODD: 'a/b c' });
    expect(resolvePath('/v1/customers/${cus_alice:id}', s, 'x')).toBe('/v1/customers/cus_123');
    expect(resolvePath('/v1/accounts/${acct:id}/persons', s, 'x')).toBe('/v1/accounts/acct_1/persons');
    expect(resolvePath('/v1/customers/${.env:ODD}', s, 'x')).toBe('/v1/customers/a%2Fb%20c');
  });

  test('${.env:VAR}, with a default after |; a default also stands in for a missing or empty answer', () => {
    const s = scope(ANSWERS, { TIER: 'gold', EMPTY: '' });
    expect(resolveValue({ a: '${.env:TIER}', b: '${.env:UNSET|silver}', c: '${.env:EMPTY|bronze}', d: 'tier-${.env:TIER}' }, s, 'x')).toEqual({
      a: 'gold',
      b: 'silver',
      c: 'bronze',
      d: 'tier-gold',
    });
    expect(resolveValue({ d: '${cus_alice:description|none}', e: '${cus_alice:nothing.here|}' }, s, 'x')).toEqual({ d: 'none', e: '' });
    expect(resolveText('${cus_alice:balance}', s, 'x')).toBe('0');
  });

  test('an unknown or later fixture, a missing value or variable: an error naming the fixture', () => {
    const s = scope(ANSWERS, {}, [...Object.keys(ANSWERS), 'price_later']);
    expect(seedError(() => resolveValue({ customer: '${cus_bob:id}' }, s, 'pm_bob'))).toBe('fixture pm_bob: ${cus_bob:id} refers to cus_bob, but no fixture has that name');
    expect(seedError(() => resolveValue({ price: '${price_later:id}' }, s, 'sub'))).toBe(
      'fixture sub: ${price_later:id} refers to fixture price_later, which comes later in the file (fixtures run in file order)',
    );
    expect(seedError(() => resolvePath('/v1/customers/${me:id}', scope(ANSWERS, {}, ['me']), 'me'))).toBe('fixture me: ${me:id} refers to the fixture itself');
    expect(seedError(() => resolveValue({ x: '${cus_alice:phone}' }, s, 'y'))).toBe("fixture y: ${cus_alice:phone}: cus_alice's answer has no phone");
    expect(seedError(() => resolveValue({ x: '${.env:SEED_NOT_SET}' }, s, 'y'))).toBe(
      'fixture y: ${.env:SEED_NOT_SET}: the environment variable SEED_NOT_SET is not set (give a default: ${.env:SEED_NOT_SET|value})',
    );
    expect(seedError(() => resolveValue({ x: 'tier: ${cus_alice:metadata}' }, s, 'y'))).toMatch(/^fixture y: \$\{cus_alice:metadata\} is an object or a list/);
  });
});
