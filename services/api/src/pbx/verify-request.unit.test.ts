import { describe, expect, it } from 'vitest';
import { hashSecret } from '@gw/security';
import type { PbxIntegration } from './pbx-store.ts';
import { pbxSignature, verifyPbxRequest } from './verify-request.ts';

const NOW = 1_800_000_000;
const WINDOW = 300;
const body = Buffer.from('{"event_type":"test"}');

function integration(overrides: Partial<PbxIntegration> = {}): PbxIntegration {
  return {
    id: 1,
    customerId: 'cus_1',
    instanceId: 'ins_1',
    managerInstance: 'front',
    secretHash: hashSecret('pbx_secret'),
    hmacSecret: null,
    templates: {},
    enabledEvents: [],
    defaultPurpose: 'support',
    ratePerMinute: 120,
    disabled: false,
    ...overrides,
  };
}

const signed = integration({ hmacSecret: 'signing' });
const headers = (timestamp: number | string, signature: string, secret: string | undefined = 'pbx_secret') => ({ secret, timestamp: String(timestamp), signature });

describe('verifyPbxRequest', () => {
  it('without signing: the secret alone authenticates', () => {
    expect(verifyPbxRequest(integration(), { secret: 'pbx_secret', timestamp: undefined, signature: undefined }, body, NOW, WINDOW)).toEqual({ ok: true, signature: null });
  });

  it('refuses an unknown or disabled integration, a wrong or missing secret', () => {
    const none = { ok: false };
    expect(verifyPbxRequest(null, { secret: 'pbx_secret', timestamp: undefined, signature: undefined }, body, NOW, WINDOW)).toEqual(none);
    expect(verifyPbxRequest(integration({ disabled: true }), { secret: 'pbx_secret', timestamp: undefined, signature: undefined }, body, NOW, WINDOW)).toEqual(none);
    expect(verifyPbxRequest(integration(), { secret: 'pbx_wrong', timestamp: undefined, signature: undefined }, body, NOW, WINDOW)).toEqual(none);
    expect(verifyPbxRequest(integration({ secretHash: hashSecret('') }), { secret: undefined, timestamp: undefined, signature: undefined }, body, NOW, WINDOW)).toEqual(none);
  });

  it('with signing: accepts sha256=<hex> and bare hex in either case, returning the signature in lower case', () => {
    const hex = pbxSignature('signing', String(NOW), body);
    expect(verifyPbxRequest(signed, headers(NOW, `sha256=${hex}`), body, NOW, WINDOW)).toEqual({ ok: true, signature: hex });
    expect(verifyPbxRequest(signed, headers(NOW, hex.toUpperCase()), body, NOW, WINDOW)).toEqual({ ok: true, signature: hex });
  });

  it('accepts a timestamp up to the window away on either side, not beyond', () => {
    for (const ts of [NOW - WINDOW, NOW + WINDOW]) expect(verifyPbxRequest(signed, headers(ts, pbxSignature('signing', String(ts), body)), body, NOW, WINDOW)).toMatchObject({ ok: true });
    for (const ts of [NOW - WINDOW - 1, NOW + WINDOW + 1]) expect(verifyPbxRequest(signed, headers(ts, pbxSignature('signing', String(ts), body)), body, NOW, WINDOW)).toEqual({ ok: false });
  });

  it('refuses a missing, malformed or wrong signature, a malformed timestamp, another body, and the secret missing', () => {
    const hex = pbxSignature('signing', String(NOW), body);
    const refused = [
      { secret: 'pbx_secret', timestamp: String(NOW), signature: undefined },
      { secret: 'pbx_secret', timestamp: undefined, signature: hex },
      headers(NOW, 'sha256=nothex'),
      headers(NOW, hex.slice(0, 63)),
      headers(NOW, pbxSignature('other', String(NOW), body)),
      headers(`${NOW}.5`, pbxSignature('signing', `${NOW}.5`, body)),
      headers('1'.repeat(13), pbxSignature('signing', '1'.repeat(13), body)),
      { secret: undefined, timestamp: String(NOW), signature: hex },
    ];
    for (const given of refused) expect(verifyPbxRequest(signed, given, body, NOW, WINDOW)).toEqual({ ok: false });
    expect(verifyPbxRequest(signed, headers(NOW, hex), Buffer.from('{"event_type":"other"}'), NOW, WINDOW)).toEqual({ ok: false });
  });
});
