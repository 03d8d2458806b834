import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { WebhookDestinationError, createSsrfGuard, type Resolver } from './ssrf.ts';

const fixed = (map: Record<string, string[]>): Resolver => async (host) => {
  const list = map[host];
  if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof WebhookDestinationError ? err.code : `other: ${String(err)}`;
  }
  return undefined;
}

async function asyncCodeOf(p: Promise<unknown>): Promise<{ code?: string; message?: string }> {
  try {
    await p;
    return {};
  } catch (err) {
    return err instanceof WebhookDestinationError ? { code: err.code, message: err.message } : { code: `other: ${String(err)}` };
  }
}

describe('validateUrl', () => {
  const guard = createSsrfGuard({ resolver: fixed({}) });

  it('given a normal https or http URL, then accepted', () => {
    expect(guard.validateUrl('https://hooks.example.com/chat?x=1').hostname).toBe('hooks.example.com');
    expect(guard.validateUrl('http://hooks.example.com:8080/').port).toBe('8080');
  });

  it('given bad URLs, then a clear code for each', () => {
    const cases: Array<[string, string]> = [
      ['', 'invalid_url'],
      ['not a url', 'invalid_url'],
      ['/relative/path', 'invalid_url'],
      ['ftp://example.com/', 'unsupported_scheme'],
      ['file:///etc/passwd', 'unsupported_scheme'],
      ['gopher://example.com/', 'unsupported_scheme'],
      ['https://user:pass@example.com/', 'credentials_in_url'],
      ['https://user@example.com/', 'credentials_in_url'],
      ['https://example.com:22/', 'port_not_allowed'],
      ['http://example.com:25/', 'port_not_allowed'],
      ['http://127.0.0.1/', 'destination_blocked'],
      ['http://2130706433/', 'destination_blocked'], // 127.0.0.1 in decimal
      ['http://0x7f.1/', 'destination_blocked'],
      ['http://[::1]:8080/', 'destination_blocked'],
      ['http://[::ffff:169.254.169.254]/', 'destination_blocked'],
      ['https://10.0.0.5/', 'destination_blocked'],
      [`https://example.com/${'a'.repeat(2100)}`, 'invalid_url'],
    ];
    for (const [url, code] of cases) expect(codeOf(() => guard.validateUrl(url)), url).toBe(code);
  });

  it('given https-only, then http is refused with a clear message', () => {
    const strict = createSsrfGuard({ httpsOnly: true, resolver: fixed({}) });
    expect(() => strict.validateUrl('http://example.com/')).toThrow('webhook URL must use https://');
    expect(strict.validateUrl('https://example.com/').protocol).toBe('https:');
  });

  it('given custom port rules, then they apply', () => {
    const g = createSsrfGuard({ allowedPorts: [443], resolver: fixed({}) });
    expect(() => g.validateUrl('https://example.com:8443/')).toThrow('webhook URL port 8443 is not allowed; allowed ports: 443');
  });

  it('explains a blocked literal address', () => {
    expect(() => guard.validateUrl('http://169.254.169.254/latest/meta-data')).toThrow(
      'destination address 169.254.169.254, which is not a public internet address: 169.254.169.254 is in 169.254.0.0/16, link-local (includes cloud metadata 169.254.169.254)',
    );
  });
});

describe('checkDestination', () => {
  const guard = createSsrfGuard({
    resolver: fixed({
      'public.example': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
      'internal.example': ['10.0.0.7'],
      'mixed.example': ['93.184.216.34', '127.0.0.1'],
      'mapped.example': ['::ffff:192.168.0.10'],
      'empty.example': [],
    }),
  });

  it('given a host with only public addresses, then accepted with the addresses', async () => {
    const r = await guard.checkDestination('https://public.example/hook');
    expect(r.addresses.map((a) => a.address)).toEqual(['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946']);
  });

  it('given a host resolving to a private address, then refused with the reason', async () => {
    const r = await asyncCodeOf(guard.checkDestination('https://internal.example/hook'));
    expect(r.code).toBe('destination_blocked');
    expect(r.message).toBe(
      'destination host internal.example resolves to 10.0.0.7, which is not a public internet address: 10.0.0.7 is in 10.0.0.0/8, private network (RFC 1918)',
    );
  });

  it('given a host with one public and one private address, then refused', async () => {
    expect((await asyncCodeOf(guard.checkDestination('https://mixed.example/'))).code).toBe('destination_blocked');
    expect((await asyncCodeOf(guard.checkDestination('https://mapped.example/'))).code).toBe('destination_blocked');
  });

  it('given an unknown host or no addresses, then dns_resolution_failed', async () => {
    expect(await asyncCodeOf(guard.checkDestination('https://nope.example/'))).toEqual({
      code: 'dns_resolution_failed',
      message: 'destination host nope.example could not be resolved (ENOTFOUND)',
    });
    expect((await asyncCodeOf(guard.checkDestination('https://empty.example/'))).code).toBe('dns_resolution_failed');
  });
});

describe('lookup hook', () => {
  const call = (guard: ReturnType<typeof createSsrfGuard>, host: string, opts: object) =>
    new Promise<{ err: unknown; address?: unknown; family?: unknown }>((resolve) => {
      (guard.lookup as unknown as (h: string, o: object, cb: (...a: unknown[]) => void) => void)(host, opts, (err, address, family) =>
        resolve({ err, address, family }),
      );
    });

  it('given all: true, then every checked address; otherwise the first one', async () => {
    const guard = createSsrfGuard({ resolver: fixed({ 'a.example': ['93.184.216.34', '2606:4700::1'] }) });
    const all = await call(guard, 'a.example', { all: true });
    expect(all.err).toBeNull();
    expect(all.address as LookupAddress[]).toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:4700::1', family: 6 },
    ]);
    const one = await call(guard, 'a.example', { family: 6 });
    expect([one.address, one.family]).toEqual(['2606:4700::1', 6]);
  });

  it('given a resolved private address, then an error and no address', async () => {
    const guard = createSsrfGuard({ resolver: fixed({ 'b.example': ['93.184.216.34', '169.254.169.254'] }) });
    const r = await call(guard, 'b.example', { all: true });
    expect(r.err).toBeInstanceOf(WebhookDestinationError);
    expect(r.address).toBeUndefined();
  });
});
