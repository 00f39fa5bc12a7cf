import type { LookupAddress } from 'node:dns';
import { createServer, connect, type AddressInfo } from 'node:net';
import {
  checkHost,
  classifyAddress,
  DestinationRefusedError,
  embeddedIPv4,
  findRefusal,
  guardedLookup,
  refusalReason,
  type DestinationPolicy,
} from '../../src/lib/netguard';

// The address classification and destination policy that webhook deliveries (and later the
// forwarding proxy) go through. No test here sends anything off the machine: names are resolved
// by a fake resolver, and the only connections go to 127.0.0.1.

const OPEN: DestinationPolicy = { allowPrivateNetwork: true, allowedHosts: [], loopbackOnly: false };
const SHARED: DestinationPolicy = { allowPrivateNetwork: false, allowedHosts: ['hooks.internal', '10.1.2.3', '::1'], loopbackOnly: false };
const LOOPBACK: DestinationPolicy = { allowPrivateNetwork: true, allowedHosts: [], loopbackOnly: true };

/** The host a URL names, as the URL parser normalises it (decimal, octal, hex IPv4; IPv6 compressed). */
const hostOf = (url: string): string => new URL(url).hostname;

describe('classifyAddress', () => {
  test.each([
    // cloud metadata, whatever range they sit in
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['168.63.129.16', 'metadata'],
    ['192.0.0.192', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['FD00:EC2:0:0:0:0:0:254', 'metadata'],
    // link-local
    ['169.254.0.1', 'link-local'],
    ['169.254.255.255', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    // this network, multicast, broadcast, reserved
    ['0.0.0.0', 'unspecified'],
    ['0.255.255.255', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['198.51.100.1', 'reserved'],
    ['203.0.113.7', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    // loopback
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    // private
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.255', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fec0::1', 'private'],
    // public, including the edges just outside the ranges above
    ['93.184.215.14', 'public'],
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['172.15.255.255', 'public'],
    ['172.32.0.0', 'public'],
    ['100.63.255.255', 'public'],
    ['100.128.0.0', 'public'],
    ['169.253.255.255', 'public'],
    ['126.255.255.255', 'public'],
    ['128.0.0.0', 'public'],
    ['223.255.255.255', 'public'],
    ['11.0.0.0', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['fe00::1', 'public'],
  ])('%s is %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  test.each([
    // IPv6 forms that carry an IPv4 address are that IPv4 address
    ['::ffff:169.254.169.254', '169.254.169.254', 'metadata'],
    ['::ffff:a9fe:a9fe', '169.254.169.254', 'metadata'],
    ['0:0:0:0:0:ffff:7f00:1', '127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.1', '10.0.0.1', 'private'],
    ['::ffff:93.184.215.14', '93.184.215.14', 'public'],
    ['::127.0.0.1', '127.0.0.1', 'loopback'],
    ['::a9fe:1', '169.254.0.1', 'link-local'],
    ['64:ff9b::a9fe:a9fe', '169.254.169.254', 'metadata'],
    ['64:ff9b::10.0.0.1', '10.0.0.1', 'private'],
    ['64:ff9b:1::a00:1', '10.0.0.1', 'private'],
  ])('%s carries %s and is %s', (address, v4, kind) => {
    expect(embeddedIPv4(address)).toBe(v4);
    expect(classifyAddress(address)).toBe(kind);
  });

  test('plain IPv6 addresses carry no IPv4 address', () => {
    for (const address of ['::', '::1', 'fe80::1', '2606:4700:4700::1111', '10.0.0.1']) expect(embeddedIPv4(address)).toBeUndefined();
  });

  test('anything but an IP address is an error', () => {
    for (const bad of ['example.com', '', '1.2.3', '256.0.0.1', '::g']) expect(() => classifyAddress(bad)).toThrow(TypeError);
  });
});

describe('refusalReason', () => {
  const always = ['169.254.169.254', '169.254.1.1', 'fe80::1', 'fd00:ec2::254', '100.100.100.200', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::ffff:a9fe:a9fe'];

  test('link-local, metadata, this-network, multicast and broadcast addresses are refused under every policy', () => {
    for (const policy of [OPEN, SHARED, LOOPBACK, { ...SHARED, allowedHosts: always }]) {
      for (const address of always) expect({ address, refused: refusalReason(address, address, policy) }).toEqual({ address, refused: expect.any(String) });
    }
  });

  test('the reason names the address and what it is', () => {
    expect(refusalReason('169.254.169.254', '169.254.169.254', OPEN)).toBe('169.254.169.254 is a cloud metadata address');
    expect(refusalReason('169.254.1.1', '169.254.1.1', OPEN)).toBe('169.254.1.1 is a link-local address');
    expect(refusalReason('::ffff:a9fe:a9fe', '[::ffff:a9fe:a9fe]', OPEN)).toBe('::ffff:a9fe:a9fe (169.254.169.254) is a cloud metadata address');
    expect(refusalReason('10.0.0.5', 'internal.example', SHARED)).toBe(
      'internal.example resolves to 10.0.0.5, a private address (private networks are not allowed here)',
    );
    expect(refusalReason('127.0.0.1', '127.0.0.1', SHARED)).toBe('127.0.0.1 is a loopback address (private networks are not allowed here)');
    expect(refusalReason('93.184.215.14', '93.184.215.14', LOOPBACK)).toBe('93.184.215.14 is a public address, not a loopback address');
  });

  test('private and loopback addresses pass while private networks are allowed', () => {
    for (const address of ['10.0.0.1', '172.16.5.4', '192.168.0.10', '100.64.1.1', 'fd00::1', '127.0.0.1', '::1', '::ffff:127.0.0.1']) {
      expect(refusalReason(address, 'receiver.local', OPEN)).toBeNull();
      expect(refusalReason(address, 'receiver.local', SHARED)).toMatch(/not allowed here/);
    }
  });

  test('public addresses pass unless only loopback is allowed', () => {
    for (const address of ['93.184.215.14', '2606:4700:4700::1111']) {
      expect(refusalReason(address, 'example.com', OPEN)).toBeNull();
      expect(refusalReason(address, 'example.com', SHARED)).toBeNull();
      expect(refusalReason(address, 'example.com', LOOPBACK)).toMatch(/not a loopback address/);
    }
  });

  test('a host in allowedHosts may reach private and loopback addresses, compared as the URL parser writes hosts', () => {
    expect(refusalReason('10.9.9.9', 'hooks.internal', SHARED)).toBeNull();
    expect(refusalReason('10.9.9.9', 'hooks.internal.', SHARED)).toBeNull();
    expect(refusalReason('127.0.0.1', 'HOOKS.internal', SHARED)).toBeNull();
    expect(refusalReason('10.1.2.3', '10.1.2.3', SHARED)).toBeNull();
    expect(refusalReason('::1', '[::1]', SHARED)).toBeNull();
    // only the hosts named: not their subdomains, not other addresses written as literals
    expect(refusalReason('10.9.9.9', 'a.hooks.internal', SHARED)).not.toBeNull();
    expect(refusalReason('10.1.2.4', '10.1.2.4', SHARED)).not.toBeNull();
    // nor do they lift the refusals that always hold, or loopback-only
    expect(refusalReason('169.254.169.254', 'hooks.internal', SHARED)).not.toBeNull();
    expect(refusalReason('10.9.9.9', 'hooks.internal', { ...SHARED, loopbackOnly: true })).not.toBeNull();
  });

  test('loopback-only refuses private addresses too, and respects a refusal of loopback', () => {
    expect(refusalReason('10.0.0.1', '10.0.0.1', LOOPBACK)).toBe('10.0.0.1 is a private address, not a loopback address');
    expect(refusalReason('127.0.0.1', '127.0.0.1', LOOPBACK)).toBeNull();
    expect(refusalReason('127.0.0.1', '127.0.0.1', { ...LOOPBACK, allowPrivateNetwork: false })).not.toBeNull();
  });
});

describe('checkHost', () => {
  test.each([
    // the WHATWG URL parser turns these into the dotted or compressed form checked
    ['http://2852039166/', '169.254.169.254'],
    ['http://0xa9fea9fe/', '169.254.169.254'],
    ['http://0251.0376.0251.0376/', '169.254.169.254'],
    ['http://169.254.43518/', '169.254.169.254'],
    ['http://[::ffff:169.254.169.254]/', '::ffff:a9fe:a9fe'],
    ['http://[0:0:0:0:0:ffff:a9fe:a9fe]/', '::ffff:a9fe:a9fe'],
    ['http://[64:ff9b::169.254.169.254]/', '64:ff9b::a9fe:a9fe'],
    ['http://[FD00:EC2::254]:8080/', 'fd00:ec2::254'],
    ['http://0/', '0.0.0.0'],
    ['http://[fe80::1]/', 'fe80::1'],
  ])('%s is refused under every policy, without a lookup', (url, address) => {
    for (const policy of [OPEN, SHARED, LOOPBACK]) {
      const checked = checkHost(hostOf(url), policy);
      expect(checked).toEqual({ refused: expect.stringContaining(`${address}`) });
    }
  });

  test('loopback literals in any spelling are loopback', () => {
    for (const url of ['http://127.0.0.1:9/', 'http://127.1/', 'http://0x7f.0.0.1/', 'http://2130706433/', 'http://0177.0.0.01/', 'http://[::1]/', 'http://[::ffff:127.0.0.1]/']) {
      const host = hostOf(url);
      expect({ url, checked: checkHost(host, OPEN) }).toEqual({ url, checked: { address: expect.any(String) } });
      expect({ url, checked: checkHost(host, LOOPBACK) }).toEqual({ url, checked: { address: expect.any(String) } });
    }
    expect(checkHost(hostOf('http://[::1]/'), SHARED)).toEqual({ address: '::1' }); // in allowedHosts
    expect(checkHost(hostOf('http://127.0.0.1/'), SHARED)).toEqual({ refused: '127.0.0.1 is a loopback address (private networks are not allowed here)' });
  });

  test('a public literal passes unless only loopback is allowed', () => {
    expect(checkHost('93.184.215.14', OPEN)).toEqual({ address: '93.184.215.14' });
    expect(checkHost('93.184.215.14', LOOPBACK)).toEqual({ refused: '93.184.215.14 is a public address, not a loopback address' });
  });

  test('a name is left to the lookup, except under loopback-only, where only localhost is looked up', () => {
    expect(checkHost('example.com', OPEN)).toEqual({ name: 'example.com' });
    expect(checkHost('Hooks.Internal.', SHARED)).toEqual({ name: 'hooks.internal' });
    expect(checkHost('example.com', LOOPBACK)).toEqual({ refused: 'example.com is not looked up: only loopback addresses may be reached' });
    expect(checkHost('localhost.example.com', LOOPBACK)).toHaveProperty('refused');
    expect(checkHost('localhost', LOOPBACK)).toEqual({ name: 'localhost' });
    expect(checkHost('LOCALHOST.', LOOPBACK)).toEqual({ name: 'localhost' });
  });
});

describe('guardedLookup', () => {
  type Answer = LookupAddress[] | NodeJS.ErrnoException;

  /** A resolver answering from a table (each name's answers in turn), recording every question. */
  function fakeResolver(table: Record<string, Answer[]>) {
    const asked: string[] = [];
    const resolve = (host: string, options: { all: true }, callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => {
      expect(options.all).toBe(true);
      asked.push(host);
      const answers = table[host] ?? [Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' })];
      const answer = answers.length > 1 ? answers.shift()! : answers[0];
      setImmediate(() => (answer instanceof Error ? callback(answer, []) : callback(null, answer)));
    };
    return { resolve, asked };
  }

  const v4 = (address: string): LookupAddress => ({ address, family: 4 });
  const v6 = (address: string): LookupAddress => ({ address, family: 6 });

  /** Calls the lookup as net.connect does; resolves with the error or the answer. */
  function ask(lookup: ReturnType<typeof guardedLookup>, host: string, all: boolean) {
    return new Promise<{ err: Error | null; result: unknown[] }>((resolve) =>
      (lookup as any)(host, { all, hints: 0 }, (err: Error | null, ...result: unknown[]) => resolve({ err, result })),
    );
  }

  test('resolves once, and hands the connection exactly the addresses it checked', async () => {
    const { resolve, asked } = fakeResolver({ 'hooks.example': [[v4('93.184.215.14'), v6('2606:2800:21f:cb07:6820:80da:af6b:8b2c')]] });
    const lookup = guardedLookup(OPEN, resolve);
    expect(await ask(lookup, 'hooks.example', true)).toEqual({
      err: null,
      result: [[v4('93.184.215.14'), v6('2606:2800:21f:cb07:6820:80da:af6b:8b2c')]],
    });
    expect(await ask(lookup, 'hooks.example', false)).toEqual({ err: null, result: ['93.184.215.14', 4] });
    expect(asked).toEqual(['hooks.example', 'hooks.example']);
  });

  test('one refused address among the answers refuses the name', async () => {
    const { resolve } = fakeResolver({ 'mixed.example': [[v4('93.184.215.14'), v4('169.254.169.254')]] });
    const { err } = await ask(guardedLookup(OPEN, resolve), 'mixed.example', true);
    expect(err).toBeInstanceOf(DestinationRefusedError);
    expect(err!.message).toBe('refused: mixed.example resolves to 169.254.169.254, a cloud metadata address');
    expect((err as DestinationRefusedError).code).toBe('ERR_DESTINATION_REFUSED');
  });

  test('a rebinding name is checked on every answer it gives, and a changed answer is never used unchecked', async () => {
    // First answer public, then the metadata service: each connection resolves once and uses what it checked.
    const { resolve, asked } = fakeResolver({ 'rebind.example': [[v4('93.184.215.14')], [v4('169.254.169.254')]] });
    const lookup = guardedLookup(OPEN, resolve);
    expect(await ask(lookup, 'rebind.example', false)).toEqual({ err: null, result: ['93.184.215.14', 4] });
    expect((await ask(lookup, 'rebind.example', false)).err).toBeInstanceOf(DestinationRefusedError);
    expect(asked).toHaveLength(2);
  });

  test('private answers follow the policy and allowedHosts', async () => {
    const { resolve } = fakeResolver({ 'hooks.internal': [[v4('10.0.0.7')]], 'other.internal': [[v4('10.0.0.8')]] });
    expect((await ask(guardedLookup(OPEN, resolve), 'other.internal', true)).err).toBeNull();
    expect((await ask(guardedLookup(SHARED, resolve), 'hooks.internal', true)).err).toBeNull();
    const refused = (await ask(guardedLookup(SHARED, resolve), 'other.internal', true)).err;
    expect(refused?.message).toBe('refused: other.internal resolves to 10.0.0.8, a private address (private networks are not allowed here)');
  });

  test('under loopback-only a name other than localhost is refused without asking the resolver', async () => {
    const { resolve, asked } = fakeResolver({ 'example.com': [[v4('93.184.215.14')]], localhost: [[v4('127.0.0.1'), v6('::1')]] });
    const lookup = guardedLookup(LOOPBACK, resolve);
    expect((await ask(lookup, 'example.com', true)).err).toBeInstanceOf(DestinationRefusedError);
    expect(asked).toEqual([]);
    expect(await ask(lookup, 'localhost', true)).toEqual({ err: null, result: [[v4('127.0.0.1'), v6('::1')]] });
    expect(asked).toEqual(['localhost']);
  });

  test("the resolver's own errors pass through", async () => {
    const { resolve } = fakeResolver({});
    const { err } = await ask(guardedLookup(OPEN, resolve), 'nowhere.invalid', true);
    expect(err).toMatchObject({ code: 'ENOTFOUND' });
    expect(err).not.toBeInstanceOf(DestinationRefusedError);
  });

  test('net.connect through it reaches an allowed address and never opens a socket to a refused one', async () => {
    let connections = 0;
    const server = createServer((socket) => {
      connections++;
      socket.end('hi');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const { resolve } = fakeResolver({ 'receiver.test': [[v4('127.0.0.1')]], 'metadata.test': [[v4('169.254.169.254')]] });
    const lookup = guardedLookup(OPEN, resolve);
    const outcome = (host: string) =>
      new Promise<string>((done) => {
        const socket = connect({ host, port, lookup });
        socket.on('data', (d) => {
          socket.destroy();
          done(`data ${d}`);
        });
        socket.on('error', (err) => done(`error ${err.message}`));
      });
    try {
      expect(await outcome('receiver.test')).toBe('data hi');
      expect(await outcome('metadata.test')).toBe('error refused: metadata.test resolves to 169.254.169.254, a cloud metadata address');
      expect(connections).toBe(1);
    } finally {
      server.close();
    }
  });
});

test('findRefusal finds the refusal in an error or its causes, and nothing in other errors', () => {
  const refusal = new DestinationRefusedError('169.254.169.254 is a cloud metadata address');
  expect(findRefusal(refusal)).toBe(refusal);
  expect(findRefusal(new Error('fetch failed', { cause: refusal }))).toBe(refusal);
  expect(findRefusal(new Error('outer', { cause: new Error('inner', { cause: refusal }) }))).toBe(refusal);
  expect(findRefusal(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBeUndefined();
  expect(findRefusal(undefined)).toBeUndefined();
  expect(findRefusal('a string')).toBeUndefined();
});
