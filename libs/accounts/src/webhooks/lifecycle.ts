import { sql, z, type Pool, type Queryable } from '@gw/db';
import { SEAL_USES, type SecretBox } from '@gw/security';
import { generateSigningSecret } from '@gw/webhooks';
import { isScoped, iso, REACTIVATE, requireEndpoint, requireInstance, type CustomerScope, type EndpointStatus } from './endpoint-store.ts';
import { WebhookError } from './refusals.ts';

const Rotated = z.object({ secret_rotated_at: z.date(), previous_secret_expires_at: z.date().nullable() });

export interface RotateOptions {
  /**
   * How long the replaced secret keeps signing beside the new one (config.webhooks.secretOverlapMs);
   * 0 drops it at once. The receiver switches within it (docs/webhooks.md).
   */
  overlapMs: number;
}

/**
 * A new signing secret, returned this once; the worker signs with it from its next claim on. The
 * secret it replaces stays, sealed like the new one, and signs beside it until the overlap ends
 * (a second rotation within the overlap replaces that one: only the newest two are kept).
 */
export async function rotateWebhookSecret(pool: Queryable, box: SecretBox, instanceId: string, scope: CustomerScope, options: RotateOptions) {
  if (!Number.isSafeInteger(options.overlapMs) || options.overlapMs < 0) throw new WebhookError('invalid', 'invalid_input', 'The overlap must be a whole, non-negative number of milliseconds.');
  if (isScoped(scope)) await requireInstance(pool, instanceId, scope);
  const secret = generateSigningSecret();
  const overlap = options.overlapMs > 0;
  // The right-hand sides read the row as it was: the previous secret is the one being replaced.
  const rotated = await pool.maybeOne(sql.type(Rotated)`
    UPDATE webhook_endpoints
       SET previous_signing_secret_enc = ${overlap ? sql.fragment`signing_secret_enc` : sql.fragment`NULL`},
           previous_secret_expires_at = ${overlap ? sql.fragment`now() + make_interval(secs => ${options.overlapMs / 1000}::double precision)` : sql.fragment`NULL`},
           signing_secret_enc = ${box.seal(secret, SEAL_USES.webhookSigningSecret(instanceId))}, secret_rotated_at = now(), updated_at = now()
     WHERE instance_id = ${instanceId} RETURNING secret_rotated_at, previous_secret_expires_at`);
  if (!rotated) await requireEndpoint(pool, instanceId); // throws the clear "no instance / no webhook" refusal
  return {
    instance_id: instanceId,
    signing_secret: secret,
    secret_rotated_at: iso(rotated!.secret_rotated_at),
    /** Until when the replaced secret still signs beside the new one (null: it stopped at once). */
    previous_secret_expires_at: iso(rotated!.previous_secret_expires_at),
  };
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
