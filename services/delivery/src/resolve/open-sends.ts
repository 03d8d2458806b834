import type { Pool } from '@gw/db';
import type { SendTask } from '../dispatch/outcomes.ts';

/** A send whose outcome is open, as the resolver takes it. */
export interface OpenSend extends SendTask {
  /** When the first attempt was claimed (ms): the manager is searched from then on. */
  firstClaimedMs: number;
  failedChecks: number;
  /** False for rows claimed before recipients and texts were kept: only the deadline can settle them. */
  resolvable: boolean;
}

interface Row {
  message_id: string;
  command_id: string;
  customer_id: string;
  instance_id: string;
  log_id: string | number;
  attempt: number;
  failed_checks: number;
  dispatch_phone: string | null;
  dispatch_text: string | null;
  created_ms: number;
}

/**
 * Takes up to `limit` open sends that are due: an attempt older than `afterMs` (so a live process
 * has finished or abandoned its call) still dispatching or unknown, not waiting for a backoff.
 * Each is held for `holdMs` (next_check_at), so two resolvers never work one row at once.
 */
export async function takeDue(pool: Pool, afterMs: number, holdMs: number, limit: number): Promise<OpenSend[]> {
  const { rows } = await pool.query<Row>(
    `WITH due AS (
       SELECT message_id FROM deliveries
        WHERE state IN ('dispatching', 'unknown')
          AND attempt_started_at < now() - make_interval(secs => $1::float8 / 1000)
          AND (next_check_at IS NULL OR next_check_at <= now())
        ORDER BY attempt_started_at
        LIMIT $3
        FOR UPDATE SKIP LOCKED)
     UPDATE deliveries d SET next_check_at = now() + make_interval(secs => $2::float8 / 1000)
       FROM due WHERE d.message_id = due.message_id
     RETURNING d.message_id, d.command_id, d.customer_id, d.instance_id, d.log_id, d.attempt, d.failed_checks,
       d.dispatch_phone, d.dispatch_text, (extract(epoch FROM d.created_at) * 1000)::float8 AS created_ms`,
    [afterMs, holdMs, limit],
  );
  return rows.map((r) => ({
    messageId: r.message_id,
    commandId: r.command_id,
    customerId: r.customer_id,
    instanceId: r.instance_id,
    logId: Number(r.log_id),
    phone: r.dispatch_phone ?? '',
    text: r.dispatch_text ?? '',
    attempt: r.attempt,
    firstClaimedMs: r.created_ms,
    failedChecks: r.failed_checks,
    resolvable: r.dispatch_phone !== null && r.dispatch_text !== null,
  }));
}

/** Provider ids the manager's messages to this phone are already attributed to (they are not this send). */
export async function attributedIds(pool: Pool, send: OpenSend): Promise<string[]> {
  const { rows } = await pool.query<{ provider_message_id: string }>(
    `SELECT d.provider_message_id FROM deliveries d JOIN policy_log p ON p.message_id = d.message_id
      WHERE d.instance_id = $1 AND p.recipient = $2 AND d.message_id <> $3 AND d.provider_message_id IS NOT NULL
        AND d.created_at > to_timestamp($4::float8 / 1000) - interval '1 hour'`,
    [send.instanceId, send.phone, send.messageId, send.firstClaimedMs],
  );
  return rows.map((r) => r.provider_message_id);
}

/** Starts a new attempt, if the send is still open at the attempt the resolver saw. Returns the new attempt, or null. */
export async function startAttempt(pool: Pool, send: OpenSend): Promise<number | null> {
  const { rows } = await pool.query<{ attempt: number }>(
    `UPDATE deliveries SET attempt = attempt + 1, attempt_started_at = now(), state = 'dispatching', next_check_at = NULL, failed_checks = 0, updated_at = now()
      WHERE message_id = $1 AND attempt = $2 AND state IN ('dispatching', 'unknown')
      RETURNING attempt`,
    [send.messageId, send.attempt],
  );
  return rows[0]?.attempt ?? null;
}

/** The manager could not be asked: ask again after a backoff that grows with each failed lookup. */
export async function backOff(pool: Pool, send: OpenSend, delayMs: number): Promise<void> {
  await pool.query(
    `UPDATE deliveries SET failed_checks = failed_checks + 1, next_check_at = now() + make_interval(secs => $3::float8 / 1000)
      WHERE message_id = $1 AND attempt = $2 AND state IN ('dispatching', 'unknown')`,
    [send.messageId, send.attempt, delayMs],
  );
}
