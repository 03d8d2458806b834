import { describe, expect, it } from 'vitest';
import { SEAL_USES, SecretBox } from '@gw/security';
import { signingSecretOpener } from './signing-secrets.ts';

// The worker's reader of webhook_endpoints.signing_secret_enc / previous_signing_secret_enc.
const box = new SecretBox('webhooks-signing-secrets-key-0123456789');
const open = signingSecretOpener(box);

describe('signingSecretOpener', () => {
  it('opens a secret sealed for its endpoint, not one sealed for (or copied from) another endpoint', () => {
    expect(open(box.seal('whsec_a', SEAL_USES.webhookSigningSecret('ins_a')), 'ins_a')).toBe('whsec_a');
    expect(() => open(box.seal('whsec_b', SEAL_USES.webhookSigningSecret('ins_b')), 'ins_a')).toThrow(/for this use/);
    expect(() => open(box.seal('pbxsig', SEAL_USES.pbxHmacSecret(1)), 'ins_a')).toThrow(/for this use/);
  });

  it('still opens a secret sealed before the binding (no use)', () => {
    expect(open(box.seal('whsec_old'), 'ins_a')).toBe('whsec_old');
  });
});
