// Which IP addresses a tenant's URL may make this server connect to: public unicast ones only. Anything
// else (loopback, private, link-local, carrier-grade NAT, multicast, reserved...) reaches this machine, its
// network or its cloud's metadata service, which a tenant must not be able to probe through Flows.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Instance metadata services, named apart because they hand out the machine's cloud credentials. */
const METADATA = new Set(['169.254.169.254', 'fd00:ec2::254']);

const KINDS: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  uniqueLocal: 'a private address',
  deprecatedSiteLocal: 'a private address',
  linkLocal: 'a link-local address',
  carrierGradeNat: 'a carrier-grade NAT address',
  unspecified: 'an unspecified address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
};

/**
 * Public IPv6 is global unicast (RFC 4291); ipaddr.js calls some of the rest unicast too, among them the
 * deprecated IPv4-compatible ::a.b.c.d, which a tunnel may carry to the IPv4 address.
 */
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');
/** NAT64's well-known prefix carries an IPv4 address in its last 32 bits (RFC 6052): that one decides. */
const NAT64 = ipaddr.parseCIDR('64:ff9b::/96');

/**
 * What kind of non-public address `address` is (`a loopback address`, `a private address`, ...), or null
 * for a public unicast address. IPv4 addresses inside IPv6 (mapped, NAT64) are judged as the IPv4 address.
 */
export function nonPublicAddress(address: string): string | null {
  if (!isIP(address)) return 'not an IP address';
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) parsed = v6.toIPv4Address();
    else if (v6.match(NAT64)) parsed = ipaddr.fromByteArray(v6.toByteArray().slice(12));
    else if (!v6.match(GLOBAL_UNICAST) && v6.range() === 'unicast') return 'a reserved address';
  }
  if (METADATA.has(parsed.toString())) return 'the cloud metadata address';
  const range = parsed.range();
  if (range === 'unicast') return null;
  return KINDS[range] ?? 'a special-purpose address';
}

/** The same for a URL's hostname: null for a name (judged once resolved) and for a public literal. */
export function nonPublicHost(hostname: string): string | null {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  // The test Node's own connect uses to skip the name lookup.
  return isIP(bare) ? nonPublicAddress(bare) : null;
}
