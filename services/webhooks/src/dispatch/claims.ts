import { sql, z, type Queryable } from '@gw/db';

/** A delivery this process has claimed (state in_flight until lease_until). */
export interface ClaimedDelivery {
  deliveryId: string;
  instanceId: string;
  event: string;
  body: string;
  /** Attempts ever made, this one included: the X-Chat-Gateway-Attempt header. */
  attempt: number;
  /** Position in the current retry round, this one included: what the schedule counts. */
  roundAttempt: number;
  destinationUrl: string;
  signingSecretEnc: string;
  /** The secret the last rotation replaced, sealed, and until when (Unix ms) it still signs; null when none. */
  previousSigningSecretEnc: string | null;
  previousSecretExpiresAt: number | null;
  /** The endpoint's failure streak when claimed: failing endpoints get one attempt at a time. */
  endpointFailing: boolean;
  /** The traceparent of the enqueue span (null: none kept); the attempt's span continues it. */
  traceParent: string | null;
}

export interface ClaimInput {
  now: number;
  /** Claims in all. */
  limit: number;
  /**
   * Claims one endpoint's lane holds at most (claimed and not yet recorded), so one endpoint's
   * backlog cannot take every slot of this process; a failing endpoint's lane is short: each of
   * its claims may hang for the attempt timeout, and all of them must be attempted within the lease.
   */
  laneCap: { healthy: number; failing: number };
  /** Claims this process holds per endpoint now: an endpoint is claimed only up to its lane's room. */
  held: ReadonlyMap<string, number>;
  leaseMs: number;
}

const ClaimRow = z.object({
  delivery_id: z.string(),
  instance_id: z.string(),
  event: z.string(),
  body: z.string(),
  attempts: z.number(),
  round_attempts: z.number(),
  destination_url: z.string(),
  signing_secret_enc: z.string(),
  previous_signing_secret_enc: z.string().nullable(),
  previous_secret_expires_at: z.date().nullable(),
  consecutive_failures: z.number(),
  trace_parent: z.string().nullable(),
});

/** A time in ms as a timestamptz parameter: the worker's clock, not the server's, decides what is due. */
const timestamp = (ms: number) => sql.fragment`${new Date(ms).toISOString()}::timestamptz`;

/**
 * Claims due deliveries of active endpoints: for each endpoint (in random order, so none is
 * always served last) its oldest due ones, as many as its lane has room for (the cap less what
 * this process holds; a failing endpoint's cap by its failure streak in the table). SKIP LOCKED
 * lets several processes claim side by side; the lease marks the claim until the attempt is recorded.
 */
export async function claimDue(db: Queryable, input: ClaimInput): Promise<ClaimedDelivery[]> {
  if (input.limit <= 0) return [];
  const now = timestamp(input.now);
  const held = [...input.held].filter(([, n]) => n > 0);
  const rows = await db.any(sql.type(ClaimRow)`
    WITH due AS (
      SELECT x.delivery_id
        FROM (SELECT instance_id, room
                FROM (SELECT e.instance_id,
                             (CASE WHEN e.consecutive_failures > 0 THEN ${input.laneCap.failing}::int ELSE ${input.laneCap.healthy}::int END) - COALESCE(h.n, 0) AS room
                        FROM webhook_endpoints e
                        LEFT JOIN ${sql.unnest(held, ['text', 'int4'])} AS h(instance_id, n) ON h.instance_id = e.instance_id
                       WHERE e.status = 'active') r
               WHERE room > 0
               ORDER BY random()) e
       CROSS JOIN LATERAL (
         SELECT d.delivery_id FROM webhook_deliveries d
          WHERE d.instance_id = e.instance_id AND d.state = 'pending' AND d.next_attempt_at <= ${now}
          ORDER BY d.next_attempt_at
          LIMIT e.room
          FOR UPDATE SKIP LOCKED
       ) x
       LIMIT ${input.limit}
    )
    UPDATE webhook_deliveries d
       SET state = 'in_flight', lease_until = ${timestamp(input.now + input.leaseMs)}, attempts = d.attempts + 1,
           round_attempts = d.round_attempts + 1, updated_at = ${now}
      FROM due, webhook_endpoints e
     WHERE d.delivery_id = due.delivery_id AND e.instance_id = d.instance_id
     RETURNING d.delivery_id, d.instance_id, d.event, d.body, d.attempts, d.round_attempts,
               e.destination_url, e.signing_secret_enc, e.previous_signing_secret_enc, e.previous_secret_expires_at,
               e.consecutive_failures, d.trace_parent`);
  return rows.map((r) => ({
    deliveryId: r.delivery_id,
    instanceId: r.instance_id,
    event: r.event,
    body: r.body,
    attempt: r.attempts,
    roundAttempt: r.round_attempts,
    destinationUrl: r.destination_url,
    signingSecretEnc: r.signing_secret_enc,
    previousSigningSecretEnc: r.previous_signing_secret_enc,
    previousSecretExpiresAt: r.previous_secret_expires_at?.getTime() ?? null,
    endpointFailing: r.consecutive_failures > 0,
    traceParent: r.trace_parent,
  }));
}

/**
 * Claims whose lease ran out (the process died between claiming and recording) become due
 * again. The attempt they stood for may have reached the receiver: at least once, same id.
 */
export async function releaseExpiredLeases(db: Queryable, now: number): Promise<number> {
  const at = timestamp(now);
  const result = await db.query(sql.typeAlias('void')`
    UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = ${at}, lease_until = NULL, updated_at = ${at}
     WHERE state = 'in_flight' AND lease_until < ${at}`);
  return result.rowCount;
}
