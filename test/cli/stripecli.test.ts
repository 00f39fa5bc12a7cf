import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

// The official Stripe CLI (npm @stripe/cli, its binary in @stripe/cli-linux-x64) against Sandbank:
// `stripe listen` forwarding to a receiver that verifies with the secret `stripe listen
// --print-secret` printed, a resource command, and `stripe trigger payment_intent.succeeded`.
// The CLI asks GitHub for its latest version at every start, so test/cli/stripecli.sh runs it only
// in a loopback-only network namespace (`unshare -n`) with its own PostgreSQL, Redis and Sandbank.

const ROOT = path.join(__dirname, '..', '..');
const SCRIPT = path.join(__dirname, 'stripecli.sh');
const BINARY = path.join(ROOT, 'node_modules', '@stripe', 'cli-linux-x64', 'bin', 'stripe');
const canUnshare = spawnSync('unshare', ['-n', 'true']).status === 0;
const runs = canUnshare && existsSync(BINARY);
if (!runs) console.warn('skipped: needs root `unshare -n`, node_modules/@stripe/cli-linux-x64');

(runs ? test : test.skip)(
  'stripe listen forwards signed events that verify with the printed secret; trigger and resource commands work',
  () => {
    const out = spawnSync('unshare', ['-n', SCRIPT], { encoding: 'utf8', timeout: 150_000 });
    const text = `${out.stdout}\n${out.stderr}`;
    expect({ status: out.status, text }).toEqual({ status: 0, text: expect.any(String) });
    expect(text).toMatch(/^customer:cus_/m);
    expect(text).toMatch(/^trigger:ok$/m);
    const received = text
      .split('\n')
      .filter((l) => l.startsWith('{"type"'))
      .map((l) => JSON.parse(l));
    expect(received).toEqual(
      expect.arrayContaining([
        { type: 'customer.created', verified: true },
        { type: 'payment_intent.succeeded', verified: true },
      ]),
    );
    expect(received.every((r) => r.verified)).toBe(true);
    expect(text).toMatch(/Ready! You are using Stripe API Version \[/);
  },
  160_000,
);
