// The address classifier behind the outbound guard, on both sides of every range it refuses.
import { nonPublicAddress, nonPublicHost } from '../../src/lib/addresses';

const PUBLIC = null;

describe('nonPublicAddress', () => {
  it.each([
    // loopback 127.0.0.0/8
    ['126.255.255.255', PUBLIC],
    ['127.0.0.0', 'a loopback address'],
    ['127.0.0.1', 'a loopback address'],
    ['127.255.255.255', 'a loopback address'],
    ['128.0.0.0', PUBLIC],
    // RFC 1918
    ['9.255.255.255', PUBLIC],
    ['10.0.0.0', 'a private address'],
    ['10.255.255.255', 'a private address'],
    ['11.0.0.0', PUBLIC],
    ['172.15.255.255', PUBLIC],
    ['172.16.0.0', 'a private address'],
    ['172.31.255.255', 'a private address'],
    ['172.32.0.0', PUBLIC],
    ['192.167.255.255', PUBLIC],
    ['192.168.0.0', 'a private address'],
    ['192.168.255.255', 'a private address'],
    ['192.169.0.0', PUBLIC],
    // link-local 169.254.0.0/16, with the metadata service inside
    ['169.253.255.255', PUBLIC],
    ['169.254.0.0', 'a link-local address'],
    ['169.254.169.254', 'the cloud metadata address'],
    ['169.254.255.255', 'a link-local address'],
    ['169.255.0.0', PUBLIC],
    // carrier-grade NAT 100.64.0.0/10
    ['100.63.255.255', PUBLIC],
    ['100.64.0.0', 'a carrier-grade NAT address'],
    ['100.127.255.255', 'a carrier-grade NAT address'],
    ['100.128.0.0', PUBLIC],
    // unspecified 0.0.0.0/8 (0.0.0.0 reaches this machine on Linux)
    ['0.0.0.0', 'an unspecified address'],
    ['0.255.255.255', 'an unspecified address'],
    ['1.0.0.0', PUBLIC],
    // multicast 224.0.0.0/4, reserved 240.0.0.0/4, broadcast
    ['223.255.255.255', PUBLIC],
    ['224.0.0.0', 'a multicast address'],
    ['239.255.255.255', 'a multicast address'],
    ['240.0.0.0', 'a special-purpose address'],
    ['255.255.255.254', 'a special-purpose address'],
    ['255.255.255.255', 'the broadcast address'],
    // documentation and benchmarking ranges
    ['192.0.2.1', 'a special-purpose address'],
    ['198.18.0.0', 'a special-purpose address'],
    ['198.17.255.255', PUBLIC],
    ['8.8.8.8', PUBLIC],
    // IPv6 loopback and unspecified
    ['::1', 'a loopback address'],
    ['::', 'an unspecified address'],
    ['::2', 'a reserved address'],
    // unique local fc00::/7, with AWS's metadata address inside
    ['fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'a reserved address'],
    ['fc00::', 'a private address'],
    ['fd00:ec2::254', 'the cloud metadata address'],
    ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'a private address'],
    // link-local fe80::/10
    ['fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'a reserved address'],
    ['fe80::', 'a link-local address'],
    ['fe80::1%eth0', 'a link-local address'],
    ['febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'a link-local address'],
    // multicast ff00::/8
    ['ff02::1', 'a multicast address'],
    // global unicast 2000::/3, but not its special-purpose parts
    ['1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'a reserved address'],
    ['2606:4700:4700::1111', PUBLIC],
    ['2001:4860:4860::8888', PUBLIC],
    ['2001:db8::1', 'a special-purpose address'],
    ['3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff', 'a special-purpose address'],
    ['3fff:1000::', PUBLIC],
    ['4000::', 'a reserved address'],
    // IPv4 inside IPv6: judged as the IPv4 address
    ['::ffff:127.0.0.1', 'a loopback address'],
    ['::ffff:7f00:1', 'a loopback address'],
    ['::ffff:10.1.2.3', 'a private address'],
    ['::ffff:169.254.169.254', 'the cloud metadata address'],
    ['::ffff:8.8.8.8', PUBLIC],
    ['64:ff9b::7f00:1', 'a loopback address'],
    ['64:ff9b::808:808', PUBLIC],
    ['::7f00:1', 'a reserved address'],
    // not an address
    ['localhost', 'not an IP address'],
    ['127.1', 'not an IP address'],
  ])('%s is %s', (address, kind) => {
    expect(nonPublicAddress(address)).toBe(kind);
  });
});

describe('nonPublicHost', () => {
  it.each([
    ['127.0.0.1', 'a loopback address'],
    ['[::1]', 'a loopback address'],
    ['[::ffff:7f00:1]', 'a loopback address'],
    ['93.184.215.14', PUBLIC],
    ['[2606:4700:4700::1111]', PUBLIC],
    // A name is judged by what it resolves to, when the connection is made.
    ['localhost', PUBLIC],
    ['hooks.example.com', PUBLIC],
  ])('%s is %s', (host, kind) => {
    expect(nonPublicHost(host)).toBe(kind);
  });
});
