import { isIPv4, isIPv6 } from 'node:net';

/**
 * IP address parsing and classification for the SSRF guard. Pure: no DNS, no sockets.
 *
 * An address is either 4 bytes (IPv4) or 16 bytes (IPv6). IPv6 addresses that embed an IPv4
 * address (IPv4-mapped ::ffff:a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d, NAT64 64:ff9b::/96,
 * 6to4 2002::/16) are judged by the embedded IPv4 address, so a blocked IPv4 range cannot be
 * reached by writing it in IPv6 form.
 */

export interface IpAddress {
  readonly version: 4 | 6;
  readonly bytes: Uint8Array;
}

export interface Cidr {
  readonly version: 4 | 6;
  readonly bytes: Uint8Array;
  readonly prefix: number;
  /** Canonical text, e.g. "127.0.0.0/8". */
  readonly text: string;
}

export type BlockCategory =
  | 'unspecified'
  | 'this_network'
  | 'private'
  | 'loopback'
  | 'link_local'
  | 'cgnat'
  | 'multicast'
  | 'reserved'
  | 'broadcast'
  | 'documentation'
  | 'benchmarking'
  | 'unique_local'
  | 'site_local'
  | 'ietf_protocol'
  | 'discard'
  | 'nat64_local'
  | 'not_global_unicast'
  | 'invalid';

export type IpVerdict =
  | { readonly allowed: true; readonly address: string; readonly allowlisted: boolean; readonly via?: string }
  | {
      readonly allowed: false;
      readonly address: string;
      readonly category: BlockCategory;
      /** The blocked range that matched, e.g. "127.0.0.0/8". */
      readonly range: string;
      /** One sentence suitable for an API or CLI answer. */
      readonly reason: string;
    };

/** Parses an IPv4 or IPv6 literal. Brackets ("[::1]") and an IPv6 zone ("fe80::1%eth0") are accepted. */
export function parseIp(text: string): IpAddress | null {
  let s = text.trim();
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const zone = s.indexOf('%');
  if (zone !== -1) s = s.slice(0, zone);
  if (isIPv4(s)) return { version: 4, bytes: Uint8Array.from(s.split('.').map(Number)) };
  if (isIPv6(s)) return { version: 6, bytes: parseIpv6(s) };
  return null;
}

function parseIpv6(s: string): Uint8Array {
  // s is already known to be valid (net.isIPv6).
  const bytes = new Uint8Array(16);
  let tail4: number[] | null = null;
  let body = s;
  const lastColon = body.lastIndexOf(':');
  if (body.slice(lastColon + 1).includes('.')) {
    tail4 = body.slice(lastColon + 1).split('.').map(Number);
    body = `${body.slice(0, lastColon + 1)}0:0`;
  }
  const [headText, tailText] = body.includes('::') ? (body.split('::') as [string, string]) : [body, null];
  const head = headText === '' ? [] : headText.split(':');
  const tail = tailText === null || tailText === '' ? [] : tailText.split(':');
  const groups = [...head, ...new Array<string>(8 - head.length - tail.length).fill('0'), ...tail];
  groups.forEach((g, i) => {
    const v = parseInt(g, 16);
    bytes[i * 2] = v >> 8;
    bytes[i * 2 + 1] = v & 0xff;
  });
  if (tail4) bytes.set(tail4, 12);
  return bytes;
}

export function formatIp(ip: IpAddress): string {
  if (ip.version === 4) return Array.from(ip.bytes).join('.');
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((ip.bytes[i]! << 8) | ip.bytes[i + 1]!);
  // Compress the longest run of two or more zero groups (RFC 5952).
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart === -1) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

/** Parses "a.b.c.d/n", "x::/n" or a bare address (a single-host range). Throws with a clear message. */
export function parseCidr(text: string): Cidr {
  const trimmed = text.trim();
  const slash = trimmed.indexOf('/');
  const addrText = slash === -1 ? trimmed : trimmed.slice(0, slash);
  const ip = parseIp(addrText);
  if (!ip) throw new Error(`invalid CIDR "${text}": "${addrText}" is not an IPv4 or IPv6 address`);
  const max = ip.version === 4 ? 32 : 128;
  let prefix = max;
  if (slash !== -1) {
    const p = trimmed.slice(slash + 1);
    if (!/^\d{1,3}$/.test(p) || Number(p) > max) {
      throw new Error(`invalid CIDR "${text}": prefix length must be an integer from 0 to ${max}`);
    }
    prefix = Number(p);
  }
  const bytes = maskBytes(ip.bytes, prefix);
  return { version: ip.version, bytes, prefix, text: `${formatIp({ version: ip.version, bytes })}/${prefix}` };
}

function maskBytes(src: Uint8Array, prefix: number): Uint8Array {
  const out = new Uint8Array(src.length);
  for (let i = 0; i < src.length; i++) {
    const bits = Math.max(0, Math.min(8, prefix - i * 8));
    out[i] = bits === 0 ? 0 : src[i]! & ((0xff << (8 - bits)) & 0xff);
  }
  return out;
}

export function cidrContains(cidr: Cidr, ip: IpAddress): boolean {
  if (cidr.version !== ip.version) return false;
  const masked = maskBytes(ip.bytes, cidr.prefix);
  for (let i = 0; i < masked.length; i++) if (masked[i] !== cidr.bytes[i]) return false;
  return true;
}

interface BlockRule {
  readonly cidr: Cidr;
  readonly category: BlockCategory;
  readonly label: string;
}

function rule(text: string, category: BlockCategory, label: string): BlockRule {
  return { cidr: parseCidr(text), category, label };
}

/** IPv4 ranges that are never a customer's public webhook receiver. */
export const BLOCKED_IPV4: readonly BlockRule[] = [
  rule('0.0.0.0/8', 'this_network', '"this network" / unspecified'),
  rule('10.0.0.0/8', 'private', 'private network (RFC 1918)'),
  rule('100.64.0.0/10', 'cgnat', 'carrier-grade NAT shared space (RFC 6598)'),
  rule('127.0.0.0/8', 'loopback', 'loopback'),
  rule('169.254.0.0/16', 'link_local', 'link-local (includes cloud metadata 169.254.169.254)'),
  rule('172.16.0.0/12', 'private', 'private network (RFC 1918)'),
  rule('192.0.0.0/24', 'ietf_protocol', 'IETF protocol assignments (RFC 6890)'),
  rule('192.0.2.0/24', 'documentation', 'documentation range TEST-NET-1 (RFC 5737)'),
  rule('192.88.99.0/24', 'reserved', 'deprecated 6to4 relay anycast (RFC 7526)'),
  rule('192.168.0.0/16', 'private', 'private network (RFC 1918)'),
  rule('198.18.0.0/15', 'benchmarking', 'benchmarking range (RFC 2544)'),
  rule('198.51.100.0/24', 'documentation', 'documentation range TEST-NET-2 (RFC 5737)'),
  rule('203.0.113.0/24', 'documentation', 'documentation range TEST-NET-3 (RFC 5737)'),
  rule('224.0.0.0/4', 'multicast', 'multicast'),
  rule('255.255.255.255/32', 'broadcast', 'limited broadcast'),
  rule('240.0.0.0/4', 'reserved', 'reserved for future use (RFC 1112)'),
];

/** IPv6 ranges judged directly (embedding ranges are handled separately, see below). */
export const BLOCKED_IPV6: readonly BlockRule[] = [
  rule('::/128', 'unspecified', 'unspecified address'),
  rule('::1/128', 'loopback', 'loopback'),
  rule('::/96', 'reserved', 'deprecated IPv4-compatible IPv6 (RFC 4291)'),
  rule('64:ff9b:1::/48', 'nat64_local', 'local-use NAT64 prefix (RFC 8215)'),
  rule('100::/64', 'discard', 'discard-only prefix (RFC 6666)'),
  rule('2001::/23', 'ietf_protocol', 'IETF protocol assignments incl. Teredo and benchmarking (RFC 6890)'),
  rule('2001:db8::/32', 'documentation', 'documentation range (RFC 3849)'),
  rule('fc00::/7', 'unique_local', 'unique-local address (RFC 4193)'),
  rule('fe80::/10', 'link_local', 'link-local'),
  rule('fec0::/10', 'site_local', 'deprecated site-local (RFC 3879)'),
  rule('ff00::/8', 'multicast', 'multicast'),
];

/** Everything outside global unicast 2000::/3 is refused even if not listed above. */
const GLOBAL_UNICAST_V6 = parseCidr('2000::/3');

interface Embedding {
  readonly cidr: Cidr;
  readonly label: string;
  /** Offset of the 4 embedded IPv4 bytes. */
  readonly offset: number;
}

const EMBEDDINGS: readonly Embedding[] = [
  { cidr: parseCidr('::ffff:0:0/96'), label: 'IPv4-mapped IPv6 address', offset: 12 },
  { cidr: parseCidr('::ffff:0:0:0/96'), label: 'IPv4-translated IPv6 address', offset: 12 },
  { cidr: parseCidr('64:ff9b::/96'), label: 'NAT64 address', offset: 12 },
  { cidr: parseCidr('2002::/16'), label: '6to4 address', offset: 2 },
];

/** The IPv4 address embedded in an IPv6 address, if it is in one of the embedding ranges. */
export function embeddedIpv4(ip: IpAddress): { ipv4: IpAddress; label: string } | null {
  if (ip.version !== 6) return null;
  for (const e of EMBEDDINGS) {
    if (cidrContains(e.cidr, ip)) {
      return { ipv4: { version: 4, bytes: ip.bytes.slice(e.offset, e.offset + 4) }, label: e.label };
    }
  }
  return null;
}

/**
 * Decides whether a connection to `address` may be made. `allow` opens chosen ranges (e.g.
 * 127.0.0.0/8 for tests with a loopback receiver); it is checked against the address itself
 * and against an embedded IPv4 address.
 */
export function classifyIp(address: string, allow: readonly Cidr[] = []): IpVerdict {
  const ip = parseIp(address);
  if (!ip) {
    return { allowed: false, address, category: 'invalid', range: '-', reason: `"${address}" is not an IP address` };
  }
  const text = formatIp(ip);
  if (allow.some((c) => cidrContains(c, ip))) return { allowed: true, address: text, allowlisted: true };

  const embedded = embeddedIpv4(ip);
  if (embedded) {
    const inner = classifyIp(formatIp(embedded.ipv4), allow);
    if (inner.allowed) return { ...inner, address: text, via: embedded.label };
    return {
      allowed: false,
      address: text,
      category: inner.category,
      range: inner.range,
      reason: `${embedded.label} ${text} embeds ${inner.address}, which is ${describe(inner)}`,
    };
  }

  const rules = ip.version === 4 ? BLOCKED_IPV4 : BLOCKED_IPV6;
  // The most specific matching rule gives the best explanation.
  let best: BlockRule | null = null;
  for (const r of rules) if (cidrContains(r.cidr, ip) && (!best || r.cidr.prefix > best.cidr.prefix)) best = r;
  if (best) {
    return {
      allowed: false,
      address: text,
      category: best.category,
      range: best.cidr.text,
      reason: `${text} is in ${best.cidr.text}, ${best.label}`,
    };
  }
  if (ip.version === 6 && !cidrContains(GLOBAL_UNICAST_V6, ip)) {
    return {
      allowed: false,
      address: text,
      category: 'not_global_unicast',
      range: '2000::/3 (outside)',
      reason: `${text} is outside global unicast space 2000::/3`,
    };
  }
  return { allowed: true, address: text, allowlisted: false };
}

function describe(v: Extract<IpVerdict, { allowed: false }>): string {
  const at = v.reason.indexOf(' is in ');
  return at === -1 ? v.reason : `in ${v.reason.slice(at + ' is in '.length)}`;
}
