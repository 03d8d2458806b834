import { SEAL_USES, type SecretBox } from '@gw/security';

/**
 * How the worker opens an endpoint's sealed signing secret (current or previous column): bound to
 * the endpoint's instance (SEAL_USES.webhookSigningSecret), so a value copied from another endpoint
 * does not open; one sealed for no use before the binding (issue 25) still does until re-sealed.
 */
export function signingSecretOpener(box: SecretBox): (sealed: string, instanceId: string) => string {
  return (sealed, instanceId) => box.openFormerlyUnbound(sealed, SEAL_USES.webhookSigningSecret(instanceId));
}
