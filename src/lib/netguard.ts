import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';

// Which addresses an outgoing request made for a user (a webhook delivery, later the forwarding
// proxy) may reach. A URL can name anything, so every address is classified and checked against
// a policy; names are resolved once, every address they resolve to is checked, and the connection
// goes to those checked addresses (`guardedLookup`), so a DNS answer that changes between check
// and connect (rebinding) can't slip through.

export type AddressClass =
  | 'metadata'
  | 'link-local'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'loopback'
  | 'private'
  | 'public';

export interface DestinationPolicy {
  /** Private and loopback addresses may be reached; when false, only through `allowedHosts`. */
  readonly allowPrivateNetwork: boolean;
  /** Host names (as the URL parser writes them) that may reach private and loopback addresses. */
  readonly allowedHosts: readonly string[];
  /** Only loopback addresses may be reached; names other than `localhost` aren't even looked up. */
  readonly loopbackOnly: boolean;
}

/** Classes no policy lets through. */
const ALWAYS_REFUSED: ReadonlySet<AddressClass> = new Set(['metadata', 'link-local', 'unspecified', 'multicast', 'broadcast', 'reserved']);

const DESCRIPTION: Record<AddressClass, string> = {
  metadata: 'a cloud metadata address',
  'link-local': 'a link-local address',
  unspecified: 'an unspecified ("this host") address',
  multicast: 'a multicast address',
  broadcast: 'a broadcast address',
  reserved: 'a reserved address',
  loopback: 'a loopback address',
  private: 'a private address',
  public: 'a public address',
};

// Cloud metadata services, refused by address whatever range they sit in:
//   169.254.169.254  AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle, IBM, Hetzner … (IMDS)
//   169.254.170.2    AWS ECS task metadata and credentials
//   fd00:ec2::254    AWS IMDS over IPv6 (Nitro)
//   100.100.100.200  Alibaba Cloud metadata (inside CGNAT 100.64/10, otherwise "private")
//   168.63.129.16    Azure WireServer / host agent (a public address)
//   192.0.0.192      Oracle Cloud (classic) metadata
const METADATA_V4 = ['169.254.169.254', '169.254.170.2', '100.100.100.200', '168.63.129.16', '192.0.0.192'];
const METADATA_V6 = ['fd00:ec2::254'].map((ip) => v6Number(ip));

type Range<T> = readonly [base: T, prefix: number, kind: AddressClass];

// First match wins, so narrower ranges come before the ones containing them.
const V4_RANGES: readonly Range<number>[] = (
  [
    ['255.255.255.255', 32, 'broadcast'],
    ['0.0.0.0', 8, 'unspecified'], // "this network"; Linux connects 0.0.0.0 to the local host
    ['127.0.0.0', 8, 'loopback'],
    ['169.254.0.0', 16, 'link-local'],
    ['10.0.0.0', 8, 'private'],
    ['172.16.0.0', 12, 'private'],
    ['192.168.0.0', 16, 'private'],
    ['100.64.0.0', 10, 'private'], // carrier-grade NAT
    ['224.0.0.0', 4, 'multicast'],
    ['240.0.0.0', 4, 'reserved'],
    ['192.0.0.0', 24, 'reserved'], // IETF protocol assignments
    ['192.0.2.0', 24, 'reserved'], // documentation (TEST-NET-1, -2, -3)
    ['198.51.100.0', 24, 'reserved'],
    ['203.0.113.0', 24, 'reserved'],
    ['198.18.0.0', 15, 'reserved'], // benchmarking
  ] as const
).map(([base, prefix, kind]) => [v4Number(base), prefix, kind] as const);

const V6_RANGES: readonly Range<bigint>[] = (
  [
    ['::', 128, 'unspecified'],
    ['::1', 128, 'loopback'],
    ['fe80::', 10, 'link-local'],
    ['fc00::', 7, 'private'], // unique local
    ['fec0::', 10, 'private'], // site-local (deprecated, still routed inside some networks)
    ['ff00::', 8, 'multicast'],
    ['2001:db8::', 32, 'reserved'], // documentation
    ['100::', 64, 'reserved'], // discard-only
  ] as const
).map(([base, prefix, kind]) => [v6Number(base), prefix, kind] as const);

// IPv6 forms that carry an IPv4 address in their last 32 bits and reach it: the address is
// classified as that IPv4 address (::ffff:169.254.169.254 is the metadata service).
const V4_CARRIERS: readonly [bigint, number][] = [
  [v6Number('::ffff:0:0'), 96], // IPv4-mapped
  [v6Number('::'), 96], // IPv4-compatible (deprecated); :: and ::1 are matched before
  [v6Number('64:ff9b::'), 96], // NAT64 well-known prefix
  [v6Number('64:ff9b:1::'), 48], // NAT64 local-use prefix
];

function v4Number(ip: string): number {
  return ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

/** 128-bit value of an IPv6 address (zone id ignored; a dotted IPv4 tail allowed). */
function v6Number(ip: string): bigint {
  let text = ip.split('%')[0].toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const n = v4Number(dotted[1]);
    text = `${text.slice(0, -dotted[1].length)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const groups = tail === undefined ? headGroups : [...headGroups, ...Array(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups];
  return groups.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n);
}

const inV4 = (n: number, base: number, prefix: number): boolean => prefix === 0 || n >>> (32 - prefix) === base >>> (32 - prefix);
const inV6 = (n: bigint, base: bigint, prefix: number): boolean => n >> BigInt(128 - prefix) === base >> BigInt(128 - prefix);

function classifyV4(ip: string): AddressClass {
  if (METADATA_V4.includes(ip)) return 'metadata';
  const n = v4Number(ip);
  return V4_RANGES.find(([base, prefix]) => inV4(n, base, prefix))?.[2] ?? 'public';
}

/** The IPv4 address an IPv6 address carries and reaches (mapped, compatible, NAT64), if any. */
export function embeddedIPv4(ip: string): string | undefined {
  if (isIP(ip) !== 6) return undefined;
  const n = v6Number(ip);
  if (n <= 1n) return undefined; // :: and ::1 are themselves
  if (!V4_CARRIERS.some(([base, prefix]) => inV6(n, base, prefix))) return undefined;
  const low = Number(n & 0xffffffffn);
  return [low >>> 24, (low >>> 16) & 255, (low >>> 8) & 255, low & 255].join('.');
}

/** The class of an IP address (v4 or v6, without brackets); throws on anything else. */
export function classifyAddress(ip: string): AddressClass {
  const version = isIP(ip.split('%')[0]);
  if (version === 4) return classifyV4(ip);
  if (version !== 6) throw new TypeError(`not an IP address: ${ip}`);
  const v4 = embeddedIPv4(ip);
  if (v4) return classifyV4(v4);
  const n = v6Number(ip);
  if (METADATA_V6.includes(n)) return 'metadata';
  return V6_RANGES.find(([base, prefix]) => inV6(n, base, prefix))?.[2] ?? 'public';
}

/** A host as the URL parser writes it, without brackets or a trailing dot, for comparing. */
export function normalizeHost(host: string): string {
  return host.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();
}

const isLocalhost = (host: string): boolean => normalizeHost(host) === 'localhost';

/**
 * Why `address` may not be reached for a URL naming `host`, or null when it may. The reason names
 * the address and its class ("169.254.169.254 is a cloud metadata address").
 */
export function refusalReason(address: string, host: string, policy: DestinationPolicy): string | null {
  const kind = classifyAddress(address);
  const v4 = embeddedIPv4(address);
  const shown = v4 ? `${address} (${v4})` : address;
  const literal = normalizeHost(host) === address.toLowerCase();
  const what = (description: string) => (literal ? `${shown} is ${description}` : `${host} resolves to ${shown}, ${description}`);
  if (ALWAYS_REFUSED.has(kind)) return what(DESCRIPTION[kind]);
  if (policy.loopbackOnly && kind !== 'loopback') return what(`${DESCRIPTION[kind]}, not a loopback address`);
  if ((kind === 'private' || kind === 'loopback') && !policy.allowPrivateNetwork && !policy.allowedHosts.includes(normalizeHost(host))) {
    return what(`${DESCRIPTION[kind]} (private networks are not allowed here)`);
  }
  return null;
}

export type HostCheck = { refused: string } | { address: string } | { name: string };

/**
 * What can be decided about a URL's host before any DNS lookup: an IP literal is checked now
 * (connections to one do no lookup); a name is left to `guardedLookup`, except that under
 * `loopbackOnly` only `localhost` is looked up at all (a DNS query would itself leave the machine).
 */
export function checkHost(host: string, policy: DestinationPolicy): HostCheck {
  const bare = normalizeHost(host);
  if (isIP(bare)) {
    const refused = refusalReason(bare, host, policy);
    return refused ? { refused } : { address: bare };
  }
  if (policy.loopbackOnly && !isLocalhost(bare)) return { refused: `${host} is not looked up: only loopback addresses may be reached` };
  return { name: bare };
}

/** What a refused destination throws, through the connection attempt, to the caller. */
export class DestinationRefusedError extends Error {
  readonly code = 'ERR_DESTINATION_REFUSED';
  constructor(readonly reason: string) {
    super(`refused: ${reason}`);
    this.name = 'DestinationRefusedError';
  }
}

/** The DestinationRefusedError somewhere in an error's cause chain, if any. */
export function findRefusal(err: unknown): DestinationRefusedError | undefined {
  for (let e = err as { code?: string; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (e instanceof DestinationRefusedError || e.code === 'ERR_DESTINATION_REFUSED') return e as DestinationRefusedError;
  }
  return undefined;
}

type Resolve = (host: string, options: { all: true; family?: number; hints?: number }, callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

/**
 * A `lookup` for net/tls connect (an undici Agent's `connect.lookup`): resolves the name once
 * with every address, refuses unless every address passes the policy, and hands exactly those
 * checked addresses to the connection.
 */
export function guardedLookup(policy: DestinationPolicy, resolve: Resolve = dnsLookup as unknown as Resolve): LookupFunction {
  return ((hostname: string, options: { all?: boolean; family?: number; hints?: number }, callback: (...args: unknown[]) => void) => {
    const checked = checkHost(hostname, policy);
    if ('refused' in checked) return void callback(new DestinationRefusedError(checked.refused));
    const answer = (addresses: LookupAddress[]) =>
      options?.all ? callback(null, addresses) : callback(null, addresses[0].address, addresses[0].family);
    if ('address' in checked) return void answer([{ address: checked.address, family: isIP(checked.address) }]);
    resolve(checked.name, { all: true, family: options?.family, hints: options?.hints }, (err, addresses) => {
      if (err) return callback(err);
      if (addresses.length === 0) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }));
      for (const { address } of addresses) {
        const refused = refusalReason(address, hostname, policy);
        if (refused) return callback(new DestinationRefusedError(refused));
      }
      answer(addresses);
    });
  }) as LookupFunction;
}
