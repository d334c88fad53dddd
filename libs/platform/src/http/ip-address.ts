import { BlockList, isIP } from 'node:net';

/** Why an address is not a public unicast one; `public` for the rest. */
export type AddressClass = 'public' | 'loopback' | 'private' | 'link-local' | 'unspecified' | 'multicast' | 'reserved';

type Range = readonly [network: string, prefix: number, AddressClass];

const IPV4_RANGES: readonly Range[] = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'private'], // carrier-grade NAT (RFC 6598)
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'], // includes 169.254.169.254, the cloud metadata service
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'],
  ['198.51.100.0', 24, 'reserved'],
  ['203.0.113.0', 24, 'reserved'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'], // includes 255.255.255.255
];

const IPV6_RANGES: readonly Range[] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['100::', 64, 'reserved'],
  ['2001:db8::', 32, 'reserved'],
  ['fc00::', 7, 'private'], // unique-local, includes AWS's fd00:ec2::254 metadata address
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'private'], // deprecated site-local
  ['ff00::', 8, 'multicast'],
];

function listOf(ranges: readonly Range[], family: 'ipv4' | 'ipv6'): Map<AddressClass, BlockList> {
  const lists = new Map<AddressClass, BlockList>();
  for (const [network, prefix, kind] of ranges) {
    const list = lists.get(kind) ?? new BlockList();
    list.addSubnet(network, prefix, family);
    lists.set(kind, list);
  }
  return lists;
}
const V4 = listOf(IPV4_RANGES, 'ipv4');
const V6 = listOf(IPV6_RANGES, 'ipv6');

/** The eight 16-bit words of an IPv6 address (dotted IPv4 tail and zone id allowed). */
export function ipv6Words(address: string): number[] {
  let text = address.split('%')[0];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1].split('.').map(Number);
    text = `${text.slice(0, -dotted[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const parse = (part: string | undefined) => (part ? part.split(':').map((w) => parseInt(w, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  const fill = tail === undefined ? [] : new Array<number>(8 - left.length - right.length).fill(0);
  return [...left, ...fill, ...right];
}

/**
 * The IPv4 address an IPv6 one carries and a packet to it reaches: IPv4-mapped (`::ffff:a.b.c.d`), the deprecated
 * IPv4-compatible form (`::a.b.c.d`), NAT64's well-known prefix (`64:ff9b::/96`) and 6to4 (`2002:AABB:CCDD::/48`).
 */
export function embeddedIpv4(address: string): string | undefined {
  const w = ipv6Words(address);
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeros = (from: number, to: number) => w.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && w[5] === 0xffff) return v4(w[6], w[7]);
  if (zeros(0, 6) && (w[6] !== 0 || w[7] > 1)) return v4(w[6], w[7]);
  if (w[0] === 0x64 && w[1] === 0xff9b && zeros(2, 6)) return v4(w[6], w[7]);
  if (w[0] === 0x2002) return v4(w[1], w[2]);
  return undefined;
}

/** The class of an IP literal (IPv6 in brackets or not); undefined when `address` is not one. */
export function classifyAddress(address: string): AddressClass | undefined {
  const bare = address.replace(/^\[(.*)\]$/, '$1');
  const family = isIP(bare.split('%')[0]);
  if (family === 0) return undefined;
  if (family === 6) {
    const inner = embeddedIpv4(bare);
    if (inner) return classifyAddress(inner);
  }
  const lists = family === 4 ? V4 : V6;
  for (const [kind, list] of lists) if (list.check(bare.split('%')[0], family === 4 ? 'ipv4' : 'ipv6')) return kind;
  return 'public';
}
