import { sql, z, type Pool, type Queryable } from '@gw/db';
import type { SecretBox } from '@gw/security';
import { generateSigningSecret } from '@gw/webhooks';
import { isScoped, iso, REACTIVATE, requireEndpoint, requireInstance, type CustomerScope, type EndpointStatus } from './endpoint-store.ts';
import { WebhookError } from './refusals.ts';

const Rotated = z.object({ secret_rotated_at: z.date() });

/**
 * A new signing secret, returned this once; the worker signs with it from its next claim on.
 * The receiver should accept both secrets while it switches over (docs/webhooks.md).
 */
export async function rotateWebhookSecret(pool: Queryable, box: SecretBox, instanceId: string, scope: CustomerScope = {}) {
  if (isScoped(scope)) await requireInstance(pool, instanceId, scope);
  const secret = generateSigningSecret();
  const rotatedAt = await pool.maybeOneFirst(sql.type(Rotated)`
    UPDATE webhook_endpoints SET signing_secret_enc = ${box.seal(secret)}, secret_rotated_at = now(), updated_at = now()
     WHERE instance_id = ${instanceId} RETURNING secret_rotated_at`);
  if (!rotatedAt) await requireEndpoint(pool, instanceId); // throws the clear "no instance / no webhook" refusal
  return { instance_id: instanceId, signing_secret: secret, secret_rotated_at: iso(rotatedAt!) };
}

/**
 * Holds deliveries: new events are still queued for a paused endpoint and sent on resume.
 * A disabled endpoint is left as it is; resume is the way back from it.
 */
export async function pauseWebhook(pool: Pool, instanceId: string, scope: CustomerScope = {}) {
  return pool.transaction(async (tx) => {
    const endpoint = await requireEndpoint(tx, instanceId, scope, true);
    if (endpoint.status === 'disabled') {
      throw new WebhookError(
        'conflict',
        'disabled',
        `The webhook of instance ${instanceId} is disabled (${endpoint.disabled_reason ?? 'no reason recorded'}); nothing to pause. Resume it to send again.`,
        { instanceId, disabledReason: endpoint.disabled_reason },
      );
    }
    await tx.query(sql.typeAlias('void')`UPDATE webhook_endpoints SET status = 'paused', updated_at = now() WHERE instance_id = ${instanceId}`);
    return { instance_id: instanceId, status: 'paused' as EndpointStatus, previous_status: endpoint.status };
  });
}

/**
 * Sends again (the deliveries held while paused go out as they fall due), with a fresh failure count, so a
 * customer who fixed the receiver is not disabled again for failures from before the fix.
 * Resuming an endpoint that is active already changes nothing.
 */
export async function resumeWebhook(pool: Pool, instanceId: string, scope: CustomerScope = {}) {
  return pool.transaction(async (tx) => {
    const endpoint = await requireEndpoint(tx, instanceId, scope, true);
    if (endpoint.status !== 'active') {
      await tx.query(sql.typeAlias('void')`UPDATE webhook_endpoints SET ${REACTIVATE}, updated_at = now() WHERE instance_id = ${instanceId}`);
    }
    return { instance_id: instanceId, status: 'active' as EndpointStatus, previous_status: endpoint.status };
  });
}
