import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { classifyIp, parseCidr, type Cidr, type IpVerdict } from './ip.ts';

/**
 * SSRF guard for customer webhook destinations.
 *
 * Two layers:
 *  1. validateUrl / checkDestination: for the API or CLI that accepts a destination URL. Clear
 *     error messages; resolves the host and refuses it if any address is not public.
 *  2. The connect hook (guard.connector / guard.dispatcher): at every TCP connect the host is
 *     resolved once, every resolved address is checked, and the socket connects only to those
 *     checked addresses. There is no window between the check and the connect, so DNS
 *     rebinding cannot slip a private address in. Literal IP hosts are checked the same way.
 */

export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Resolves a host name to all its addresses. Injectable for tests. */
export type Resolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** node:dns lookup with all addresses (uses the OS resolver, /etc/hosts included). */
export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => {
      if (err) reject(err);
      else resolve(addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 })));
    });
  });

export type PortRule = number | readonly [number, number];

export interface SsrfGuardOptions {
  /** CIDRs (or single addresses) opened despite the block list, e.g. ["127.0.0.0/8"] for tests. */
  readonly allowCidrs?: readonly string[];
  /** Refuse http:// destinations. Default false. */
  readonly httpsOnly?: boolean;
  /** Allowed destination ports. Default: 80, 443 and 1024-65535. */
  readonly allowedPorts?: readonly PortRule[];
  /** Default: systemResolver. */
  readonly resolver?: Resolver;
  /** TCP/TLS connect timeout for the dispatcher. Default 10 s. */
  readonly connectTimeoutMs?: number;
  /** Longest accepted URL. Default 2048. */
  readonly maxUrlLength?: number;
}

export const DEFAULT_ALLOWED_PORTS: readonly PortRule[] = [80, 443, [1024, 65535]];

export type DestinationErrorCode =
  | 'invalid_url'
  | 'unsupported_scheme'
  | 'https_required'
  | 'credentials_in_url'
  | 'port_not_allowed'
  | 'destination_blocked'
  | 'dns_resolution_failed';

/** A refused destination. `message` is written for an API error body or a CLI line. */
export class WebhookDestinationError extends Error {
  constructor(
    readonly code: DestinationErrorCode,
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = 'WebhookDestinationError';
  }
}

export interface DestinationCheck {
  readonly url: URL;
  /** The addresses the host resolved to at check time (all of them allowed). */
  readonly addresses: readonly ResolvedAddress[];
}

export interface SsrfGuard {
  readonly httpsOnly: boolean;
  readonly allowCidrs: readonly Cidr[];
  /** Syntax and policy checks that need no DNS: scheme, credentials, port, literal IP host. */
  validateUrl(url: string): URL;
  /** The verdict for one IP address under this guard's allowlist. */
  checkAddress(address: string): IpVerdict;
  /** validateUrl + resolve the host + check every address (for accepting a configuration). */
  checkDestination(url: string): Promise<DestinationCheck>;
  /** A net/tls `lookup` that refuses unless every resolved address is allowed. */
  readonly lookup: LookupFunction;
  /** An undici connector applying the checks at connect time (literal IPs included). */
  readonly connector: buildConnector.connector;
  /** A keep-alive undici Agent using the connector; never follows redirects. Created on first use. */
  readonly dispatcher: Agent;
  /** Closes the dispatcher if it was created. */
  close(): Promise<void>;
}

function portAllowed(port: number, rules: readonly PortRule[]): boolean {
  return rules.some((r) => (typeof r === 'number' ? r === port : port >= r[0] && port <= r[1]));
}

function describePorts(rules: readonly PortRule[]): string {
  return rules.map((r) => (typeof r === 'number' ? String(r) : `${r[0]}-${r[1]}`)).join(', ');
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

export function createSsrfGuard(options: SsrfGuardOptions = {}): SsrfGuard {
  const allowCidrs = (options.allowCidrs ?? []).map((c) => parseCidr(c));
  const httpsOnly = options.httpsOnly ?? false;
  const ports = options.allowedPorts ?? DEFAULT_ALLOWED_PORTS;
  const resolver = options.resolver ?? systemResolver;
  const maxUrlLength = options.maxUrlLength ?? 2048;

  const checkAddress = (address: string): IpVerdict => classifyIp(address, allowCidrs);

  const blockedError = (host: string, verdicts: readonly IpVerdict[]): WebhookDestinationError => {
    const bad = verdicts.filter((v): v is Extract<IpVerdict, { allowed: false }> => !v.allowed);
    const isLiteral = isIP(stripBrackets(host)) !== 0;
    const subject = isLiteral ? `destination address ${host}` : `destination host ${host} resolves to ${bad.map((b) => b.address).join(', ')}`;
    return new WebhookDestinationError(
      'destination_blocked',
      `${subject}, which is not a public internet address: ${bad.map((b) => b.reason).join('; ')}`,
      { host, blocked: bad.map((b) => ({ address: b.address, category: b.category, range: b.range })) },
    );
  };

  const checkSchemeAndPort = (protocol: string, port: number): void => {
    if (protocol !== 'https:' && protocol !== 'http:') {
      throw new WebhookDestinationError(
        'unsupported_scheme',
        `webhook URL scheme "${protocol.replace(/:$/, '')}" is not supported; use https://${httpsOnly ? '' : ' or http://'}`,
        { scheme: protocol.replace(/:$/, '') },
      );
    }
    if (httpsOnly && protocol === 'http:') {
      throw new WebhookDestinationError('https_required', 'webhook URL must use https://', { scheme: 'http' });
    }
    if (!portAllowed(port, ports)) {
      throw new WebhookDestinationError(
        'port_not_allowed',
        `webhook URL port ${port} is not allowed; allowed ports: ${describePorts(ports)}`,
        { port },
      );
    }
  };

  // The checks depend only on the URL string and this guard's settings, and every attempt to an
  // endpoint repeats them: the verdict is remembered (bounded; callers must not modify the URL).
  const verdicts = new Map<string, URL | WebhookDestinationError>();
  const validateUrl = (raw: string): URL => {
    const known = verdicts.get(raw);
    if (known instanceof URL) return known;
    if (known) throw known;
    let verdict: URL | WebhookDestinationError;
    try {
      verdict = checkUrl(raw);
    } catch (error) {
      if (!(error instanceof WebhookDestinationError)) throw error;
      verdict = error;
    }
    if (typeof raw === 'string') {
      if (verdicts.size >= 10_000) verdicts.clear();
      verdicts.set(raw, verdict);
    }
    if (verdict instanceof WebhookDestinationError) throw verdict;
    return verdict;
  };

  const checkUrl = (raw: string): URL => {
    if (typeof raw !== 'string' || raw.trim() === '') {
      throw new WebhookDestinationError('invalid_url', 'webhook URL is required');
    }
    if (raw.length > maxUrlLength) {
      throw new WebhookDestinationError('invalid_url', `webhook URL is longer than ${maxUrlLength} characters`);
    }
    let url: URL;
    try {
      url = new URL(raw.trim());
    } catch {
      throw new WebhookDestinationError('invalid_url', 'webhook URL is not a valid absolute URL (e.g. https://example.com/hooks)');
    }
    if (url.username !== '' || url.password !== '') {
      throw new WebhookDestinationError(
        'credentials_in_url',
        'webhook URL must not contain a user name or password; verify requests with the signature header instead',
      );
    }
    const defaultPort = url.protocol === 'https:' ? 443 : 80;
    checkSchemeAndPort(url.protocol, url.port === '' ? defaultPort : Number(url.port));
    if (url.hostname === '') throw new WebhookDestinationError('invalid_url', 'webhook URL has no host');
    const host = stripBrackets(url.hostname);
    if (isIP(host) !== 0) {
      const verdict = checkAddress(host);
      if (!verdict.allowed) throw blockedError(url.hostname, [verdict]);
    }
    return url;
  };

  /** Resolve and check: throws WebhookDestinationError when any address is refused. */
  const resolveChecked = async (hostname: string): Promise<readonly ResolvedAddress[]> => {
    let addresses: readonly ResolvedAddress[];
    try {
      addresses = await resolver(hostname);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'unknown';
      throw new WebhookDestinationError('dns_resolution_failed', `destination host ${hostname} could not be resolved (${code})`, {
        host: hostname,
        dnsCode: code,
      });
    }
    if (addresses.length === 0) {
      throw new WebhookDestinationError('dns_resolution_failed', `destination host ${hostname} has no addresses`, { host: hostname });
    }
    const verdicts = addresses.map((a) => checkAddress(a.address));
    if (verdicts.some((v) => !v.allowed)) throw blockedError(hostname, verdicts);
    return addresses;
  };

  const checkDestination = async (raw: string): Promise<DestinationCheck> => {
    const url = validateUrl(raw);
    const host = stripBrackets(url.hostname);
    if (isIP(host) !== 0) return { url, addresses: [{ address: host, family: isIP(host) === 6 ? 6 : 4 }] };
    return { url, addresses: await resolveChecked(host) };
  };

  const lookup = ((hostname: string, opts: LookupOptions, callback: (...args: unknown[]) => void) => {
    const literal = isIP(stripBrackets(hostname));
    const pending: Promise<readonly ResolvedAddress[]> =
      literal !== 0
        ? Promise.resolve().then(() => {
            const v = checkAddress(stripBrackets(hostname));
            if (!v.allowed) throw blockedError(hostname, [v]);
            return [{ address: stripBrackets(hostname), family: literal === 6 ? 6 : 4 } as const];
          })
        : resolveChecked(hostname);
    pending.then(
      (addresses) => {
        const family = typeof opts === 'object' && opts !== null ? opts.family : undefined;
        const wanted = family === 4 || family === 6 || family === 'IPv4' || family === 'IPv6'
          ? addresses.filter((a) => a.family === (family === 4 || family === 'IPv4' ? 4 : 6))
          : addresses;
        if (wanted.length === 0) {
          const err = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
          callback(err);
          return;
        }
        if (typeof opts === 'object' && opts !== null && opts.all) {
          callback(null, wanted.map((a): LookupAddress => ({ address: a.address, family: a.family })));
        } else callback(null, wanted[0]!.address, wanted[0]!.family);
      },
      (err: unknown) => callback(err),
    );
  }) as unknown as LookupFunction;

  const base = buildConnector({ lookup, timeout: options.connectTimeoutMs ?? 10_000 });

  const connector: buildConnector.connector = (opts, callback) => {
    try {
      const port = opts.port ? Number(opts.port) : opts.protocol === 'https:' ? 443 : 80;
      checkSchemeAndPort(opts.protocol, port);
      // net.connect skips `lookup` for a literal IP, so check it here.
      const host = stripBrackets(opts.hostname);
      if (isIP(host) !== 0) {
        const v = checkAddress(host);
        if (!v.allowed) throw blockedError(opts.hostname, [v]);
      }
    } catch (err) {
      callback(err as Error, null);
      return;
    }
    base(opts, callback);
  };

  let agent: Agent | null = null;
  return {
    httpsOnly,
    allowCidrs,
    validateUrl,
    checkAddress,
    checkDestination,
    lookup,
    connector,
    get dispatcher(): Agent {
      agent ??= new Agent({ connect: connector, keepAliveTimeout: 4_000, keepAliveMaxTimeout: 30_000 });
      return agent;
    },
    async close(): Promise<void> {
      if (agent) await agent.close();
      agent = null;
    },
  };
}
