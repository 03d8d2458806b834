import { sql, z, type Queryable } from '@gw/db';
import type { SendTask } from '../dispatch/outcomes.ts';

/** A send whose outcome is open, as the resolver takes it. */
export interface OpenSend extends SendTask {
  /** When the first attempt was claimed (ms): the manager is searched from then on. */
  firstClaimedMs: number;
  /** When the current attempt started (ms): a slow manager may still carry it out for a while. */
  attemptStartedMs: number;
  failedChecks: number;
  /** False for rows claimed before recipients and texts were kept: only the deadline can settle them. */
  resolvable: boolean;
}

const OpenRow = z.object({
  message_id: z.string(),
  command_id: z.string(),
  customer_id: z.string(),
  instance_id: z.string(),
  log_id: z.number(),
  attempt: z.number(),
  failed_checks: z.number(),
  dispatch_phone: z.string().nullable(),
  dispatch_text: z.string().nullable(),
  recipient: z.string().nullable(),
  message_purpose: z.string().nullable(),
  instance_name: z.string().nullable(),
  created_ms: z.number(),
  attempt_started_ms: z.number(),
});
const ProviderId = z.object({ provider_message_id: z.string() });
const Attempt = z.object({ attempt: z.number() });

/**
 * Takes up to `limit` open sends that are due: an attempt older than `afterMs` (so a live process
 * has finished or abandoned its call) still dispatching or unknown, not waiting for a backoff.
 * Each is held for `holdMs` (next_check_at), so two resolvers never work one row at once.
 */
export async function takeDue(db: Queryable, afterMs: number, holdMs: number, limit: number): Promise<OpenSend[]> {
  const rows = await db.any(sql.type(OpenRow)`
    WITH due AS (
      SELECT message_id FROM deliveries
       WHERE state IN ('dispatching', 'unknown')
         AND attempt_started_at < now() - make_interval(secs => ${afterMs}::float8 / 1000)
         AND (next_check_at IS NULL OR next_check_at <= now())
       ORDER BY attempt_started_at
       LIMIT ${limit}
       FOR UPDATE SKIP LOCKED)
    UPDATE deliveries d SET next_check_at = now() + make_interval(secs => ${holdMs}::float8 / 1000)
      FROM due WHERE d.message_id = due.message_id
    RETURNING d.message_id, d.command_id, d.customer_id, d.instance_id, d.log_id, d.attempt, d.failed_checks,
      d.dispatch_phone, d.dispatch_text, d.recipient, d.message_purpose, d.instance_name, (extract(epoch FROM d.created_at) * 1000)::float8 AS created_ms,
      (extract(epoch FROM d.attempt_started_at) * 1000)::float8 AS attempt_started_ms`);
  return rows.map((r) => ({
    messageId: r.message_id,
    commandId: r.command_id,
    customerId: r.customer_id,
    instanceId: r.instance_id,
    logId: r.log_id,
    phone: r.dispatch_phone ?? '',
    text: r.dispatch_text ?? '',
    attempt: r.attempt,
    // Kept at claim time; a row claimed before they were (and older than the migration's backfill) has none.
    recipient: r.recipient ?? r.dispatch_phone ?? '',
    purpose: r.message_purpose ?? '',
    instanceName: r.instance_name ?? '',
    firstClaimedMs: r.created_ms,
    attemptStartedMs: r.attempt_started_ms,
    failedChecks: r.failed_checks,
    resolvable: r.dispatch_phone !== null && r.dispatch_text !== null,
  }));
}

/**
 * Provider ids the manager's messages to this phone are already attributed to (they are not this
 * send): from delivery's own rows, by the recipient kept at claim time (never the policy log).
 */
export async function attributedIds(db: Queryable, send: OpenSend): Promise<readonly string[]> {
  return db.anyFirst(sql.type(ProviderId)`
    SELECT d.provider_message_id FROM deliveries d
     WHERE d.instance_id = ${send.instanceId} AND d.recipient = ${send.phone} AND d.message_id <> ${send.messageId}
       AND d.provider_message_id IS NOT NULL
       AND d.created_at > to_timestamp(${send.firstClaimedMs}::float8 / 1000) - interval '1 hour'`);
}

/** Starts a new attempt, if the send is still open at the attempt the resolver saw. Returns the new attempt, or null. */
export async function startAttempt(db: Queryable, send: OpenSend): Promise<number | null> {
  return db.maybeOneFirst(sql.type(Attempt)`
    UPDATE deliveries SET attempt = attempt + 1, attempt_started_at = now(), state = 'dispatching', next_check_at = NULL, failed_checks = 0, updated_at = now()
     WHERE message_id = ${send.messageId} AND attempt = ${send.attempt} AND state IN ('dispatching', 'unknown')
     RETURNING attempt`);
}

/** The manager could not be asked: ask again after a backoff that grows with each failed lookup. */
export async function backOff(db: Queryable, send: OpenSend, delayMs: number): Promise<void> {
  await db.query(sql.typeAlias('void')`
    UPDATE deliveries SET failed_checks = failed_checks + 1, next_check_at = now() + make_interval(secs => ${delayMs}::float8 / 1000)
     WHERE message_id = ${send.messageId} AND attempt = ${send.attempt} AND state IN ('dispatching', 'unknown')`);
}

/** Not looked at again before `atMs` (an absence the manager might still turn into a send). */
export async function holdUntil(db: Queryable, send: OpenSend, atMs: number): Promise<void> {
  await db.query(sql.typeAlias('void')`
    UPDATE deliveries SET next_check_at = to_timestamp(${atMs}::float8 / 1000)
     WHERE message_id = ${send.messageId} AND attempt = ${send.attempt} AND state IN ('dispatching', 'unknown')`);
}

/** The provider id of the newest message the instance is known to have sent (its store must hold it, if it keeps any). */
export async function newestSentId(db: Queryable, instanceId: string): Promise<string | null> {
  return db.maybeOneFirst(sql.type(ProviderId)`
    SELECT provider_message_id FROM deliveries
     WHERE instance_id = ${instanceId} AND state = 'dispatched' AND provider_message_id IS NOT NULL
     ORDER BY updated_at DESC LIMIT 1`);
}
