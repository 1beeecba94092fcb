// Which addresses and host names the outbound client may reach. Three kinds are refused: private
// networks (loopback, RFC 1918, carrier-grade NAT, unique local IPv6) and reserved ranges, which
// OUTBOUND_ALLOW_PRIVATE opens for receivers on the operator's own network; and link-local and cloud
// metadata addresses, which only OUTBOUND_ALLOW_LINK_LOCAL_UNSAFE opens, since they hand out the
// machine's credentials. An IPv6 address that embeds an IPv4 one (mapped, compatible, 6to4, Teredo,
// NAT64) is also judged by the IPv4 address it embeds.
import { BlockList, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export interface OutboundPolicy {
  allowPrivate: boolean;
  allowLinkLocal: boolean;
}

/** What the guard says of an address or name it refuses; undefined when it may be reached. */
export type Refusal = 'private or reserved' | 'link-local or metadata';

function blockList(v4: ReadonlyArray<readonly [string, number]>, v6: ReadonlyArray<readonly [string, number]>): BlockList {
  const list = new BlockList();
  for (const [net, bits] of v4) list.addSubnet(net, bits, 'ipv4');
  for (const [net, bits] of v6) list.addSubnet(net, bits, 'ipv6');
  return list;
}

const LINK_LOCAL = blockList(
  // 100.100.100.200 is Alibaba Cloud's metadata service (inside carrier-grade NAT space).
  [['169.254.0.0', 16], ['100.100.100.200', 32]],
  // fd00:ec2::254 and fd20:ce::254: the IPv6 metadata services of AWS and Google Cloud (inside ULA space).
  [['fe80::', 10], ['fd00:ec2::254', 128], ['fd20:ce::254', 128]],
);

const PRIVATE = blockList(
  [
    ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.0.2.0', 24],
    ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 3],
  ],
  [['::', 128], ['::1', 128], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001:db8::', 32], ['fc00::', 7], ['ff00::', 8]],
);

/** Names that reach a metadata service whatever the resolver says of them. */
const METADATA_NAMES = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal']);

const v4 = (bytes: number[], at: number, mask = 0) => bytes.slice(at, at + 4).map((b) => b ^ mask).join('.');

/** The IPv4 addresses an IPv6 address carries, by the form it has. */
function embeddedIPv4(address: string): string[] {
  const bytes = ipaddr.IPv6.parse(address).toByteArray();
  const zeros = (from: number, to: number) => bytes.slice(from, to).every((b) => b === 0);
  const word = (i: number) => bytes[i] * 256 + bytes[i + 1];
  // ::ffff:a.b.c.d (mapped) and ::ffff:0:a.b.c.d (translated, RFC 6145).
  if (zeros(0, 10) && word(10) === 0xffff) return [v4(bytes, 12)];
  if (zeros(0, 8) && word(8) === 0xffff && word(10) === 0) return [v4(bytes, 12)];
  // ::a.b.c.d (IPv4-compatible, deprecated); :: and ::1 are judged as themselves.
  if (zeros(0, 12) && !(zeros(12, 15) && bytes[15] <= 1)) return [v4(bytes, 12)];
  // 2002:AABB:CCDD::/48 (6to4).
  if (word(0) === 0x2002) return [v4(bytes, 2)];
  // 2001:0:SSSS:SSSS:…:CCCC:CCCC (Teredo): the server, and the client stored inverted.
  if (word(0) === 0x2001 && word(2) === 0) return [v4(bytes, 4), v4(bytes, 12, 0xff)];
  // 64:ff9b::a.b.c.d and 64:ff9b:1::/48 (NAT64).
  if (word(0) === 0x64 && word(2) === 0xff9b) return [v4(bytes, 12)];
  return [];
}

function refusalOfIPv4(address: string, policy: OutboundPolicy): Refusal | undefined {
  if (!policy.allowLinkLocal && LINK_LOCAL.check(address, 'ipv4')) return 'link-local or metadata';
  if (!policy.allowPrivate && PRIVATE.check(address, 'ipv4')) return 'private or reserved';
  return undefined;
}

/** Why the guard refuses an IP address, or undefined; anything that is not an IP address is refused. */
export function addressRefusal(address: string, policy: OutboundPolicy): Refusal | undefined {
  const family = isIP(address);
  if (family === 4) return refusalOfIPv4(address, policy);
  if (family !== 6) return 'private or reserved';
  for (const embedded of embeddedIPv4(address)) {
    const refusal = refusalOfIPv4(embedded, policy);
    if (refusal) return refusal;
  }
  if (!policy.allowLinkLocal && LINK_LOCAL.check(address, 'ipv6')) return 'link-local or metadata';
  if (!policy.allowPrivate && PRIVATE.check(address, 'ipv6')) return 'private or reserved';
  return undefined;
}

/** A URL's host as the guard judges it: no IPv6 brackets, no trailing dot (`localhost.` is `localhost`), lower case. */
export function guardedHost(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, '').replace(/\.+$/, '').toLowerCase();
}

/**
 * Why the guard refuses a host name before any resolver is asked: `localhost` and `*.localhost` are
 * loopback (RFC 6761), and the metadata services' own names are link-local.
 */
export function nameRefusal(host: string, policy: OutboundPolicy): Refusal | undefined {
  if (!policy.allowLinkLocal && METADATA_NAMES.has(host)) return 'link-local or metadata';
  if (!policy.allowPrivate && (host === 'localhost' || host.endsWith('.localhost'))) return 'private or reserved';
  return undefined;
}
