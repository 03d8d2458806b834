import { describe, expect, it } from 'vitest';
import { classifyIp, embeddedIpv4, formatIp, parseCidr, parseIp } from './ip.ts';

const blocked = (a: string, allow: string[] = []) => {
  const v = classifyIp(a, allow.map((c) => parseCidr(c)));
  return v.allowed ? null : v.category;
};

describe('parsing', () => {
  it('parses and formats IPv4 and IPv6 (brackets, zones, embedded IPv4)', () => {
    expect(formatIp(parseIp('10.1.2.3')!)).toBe('10.1.2.3');
    expect(formatIp(parseIp('[2001:DB8:0:0:0:0:0:1]')!)).toBe('2001:db8::1');
    expect(formatIp(parseIp('fe80::1%eth0')!)).toBe('fe80::1');
    expect(formatIp(parseIp('::ffff:127.0.0.1')!)).toBe('::ffff:7f00:1');
    expect(formatIp(parseIp('::')!)).toBe('::');
    expect(formatIp(parseIp('1:0:0:1:0:0:0:1')!)).toBe('1:0:0:1::1');
    expect(parseIp('example.com')).toBeNull();
    expect(parseIp('1.2.3')).toBeNull();
  });

  it('parses CIDRs with clear errors', () => {
    expect(parseCidr('10.1.2.3/8').text).toBe('10.0.0.0/8');
    expect(parseCidr('127.0.0.1').text).toBe('127.0.0.1/32');
    expect(parseCidr('fd00::1/8').text).toBe('fd00::/8');
    expect(() => parseCidr('10.0.0.0/33')).toThrow(/prefix length must be an integer from 0 to 32/);
    expect(() => parseCidr('nope/8')).toThrow(/not an IPv4 or IPv6 address/);
  });
});

describe('classifyIp', () => {
  it('given public addresses, then allowed', () => {
    for (const a of ['93.184.216.34', '8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '198.20.0.1', '2606:4700::1111', '2a00:1450:4001::1']) {
      expect(blocked(a), a).toBeNull();
    }
  });

  it('given each blocked IPv4 range, then refused with its category', () => {
    const cases: Array<[string, string]> = [
      ['10.0.0.1', 'private'],
      ['172.16.0.1', 'private'],
      ['172.31.255.255', 'private'],
      ['192.168.1.1', 'private'],
      ['127.0.0.1', 'loopback'],
      ['127.255.255.254', 'loopback'],
      ['169.254.169.254', 'link_local'],
      ['100.64.0.1', 'cgnat'],
      ['100.127.255.255', 'cgnat'],
      ['224.0.0.1', 'multicast'],
      ['239.255.255.255', 'multicast'],
      ['0.0.0.0', 'this_network'],
      ['0.1.2.3', 'this_network'],
      ['240.0.0.1', 'reserved'],
      ['255.255.255.255', 'broadcast'],
      ['192.0.2.1', 'documentation'],
      ['198.51.100.7', 'documentation'],
      ['203.0.113.9', 'documentation'],
      ['198.18.0.1', 'benchmarking'],
      ['198.19.255.255', 'benchmarking'],
      ['192.0.0.8', 'ietf_protocol'],
    ];
    for (const [a, cat] of cases) expect(blocked(a), a).toBe(cat);
  });

  it('given each blocked IPv6 range, then refused', () => {
    const cases: Array<[string, string]> = [
      ['::1', 'loopback'],
      ['::', 'unspecified'],
      ['fe80::1', 'link_local'],
      ['febf::1', 'link_local'],
      ['fc00::1', 'unique_local'],
      ['fd12:3456::1', 'unique_local'],
      ['ff02::1', 'multicast'],
      ['2001:db8::1', 'documentation'],
      ['2001:0::1', 'ietf_protocol'],
      ['100::1', 'discard'],
      ['fec0::1', 'site_local'],
      ['::1.2.3.4', 'reserved'],
      ['4000::1', 'not_global_unicast'],
      ['64:ff9b:1::1', 'nat64_local'],
    ];
    for (const [a, cat] of cases) expect(blocked(a), a).toBe(cat);
  });

  it('given IPv6 forms embedding an IPv4, then judged as that IPv4', () => {
    expect(blocked('::ffff:127.0.0.1')).toBe('loopback');
    expect(blocked('::ffff:7f00:1')).toBe('loopback');
    expect(blocked('::ffff:10.0.0.1')).toBe('private');
    expect(blocked('::ffff:169.254.169.254')).toBe('link_local');
    expect(blocked('::ffff:0:192.168.0.1')).toBe('private');
    expect(blocked('64:ff9b::10.0.0.1')).toBe('private');
    expect(blocked('64:ff9b::7f00:1')).toBe('loopback');
    expect(blocked('2002:7f00:1::1')).toBe('loopback'); // 6to4 of 127.0.0.1
    expect(blocked('2002:c0a8:0101::1')).toBe('private'); // 6to4 of 192.168.1.1
    expect(blocked('::ffff:8.8.8.8')).toBeNull();
    expect(blocked('64:ff9b::8.8.8.8')).toBeNull();
    expect(blocked('2002:0808:0808::1')).toBeNull();
    expect(embeddedIpv4(parseIp('2002:0808:0404::')!)!.ipv4.bytes).toEqual(Uint8Array.from([8, 8, 4, 4]));
  });

  it('explains a refusal in one sentence', () => {
    const v = classifyIp('::ffff:127.0.0.1');
    expect(v.allowed).toBe(false);
    if (!v.allowed) {
      expect(v.reason).toBe('IPv4-mapped IPv6 address ::ffff:7f00:1 embeds 127.0.0.1, which is in 127.0.0.0/8, loopback');
      expect(v.range).toBe('127.0.0.0/8');
    }
    const w = classifyIp('10.9.8.7');
    if (!w.allowed) expect(w.reason).toBe('10.9.8.7 is in 10.0.0.0/8, private network (RFC 1918)');
  });

  it('given an allowlist, then the chosen ranges open (also through embedding) and nothing else', () => {
    expect(blocked('127.0.0.1', ['127.0.0.0/8'])).toBeNull();
    expect(blocked('::ffff:127.0.0.1', ['127.0.0.0/8'])).toBeNull();
    expect(blocked('::1', ['127.0.0.0/8'])).toBe('loopback');
    expect(blocked('::1', ['::1'])).toBeNull();
    expect(blocked('10.0.0.1', ['127.0.0.0/8'])).toBe('private');
    expect(classifyIp('127.0.0.1', [parseCidr('127.0.0.1/32')])).toEqual({ allowed: true, address: '127.0.0.1', allowlisted: true });
  });
});
