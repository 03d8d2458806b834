import { jsonOf, sql, z, type Queryable } from '@gw/db';
import { SEAL_USES, type SecretBox } from '@gw/security';

export interface PbxIntegration {
  id: number;
  customerId: string;
  instanceId: string;
  managerInstance: string;
  secretHash: Buffer;
  /** The HMAC signing secret in clear, when signing is configured. */
  hmacSecret: string | null;
  templates: Record<string, string>;
  enabledEvents: string[];
  defaultPurpose: string;
  ratePerMinute: number;
  disabled: boolean;
}

const IntegrationRow = z.object({
  id: z.number(),
  customer_id: z.string(),
  instance_id: z.string(),
  manager_instance: z.string(),
  secret_hash: z.instanceof(Buffer),
  hmac_secret_enc: z.string().nullable(),
  templates: z.record(z.string()),
  enabled_events: z.array(z.string()),
  default_purpose: z.string(),
  rate_limit_per_minute: z.number(),
  disabled_at: z.date().nullable(),
});

export async function loadIntegration(pool: Queryable, box: SecretBox, id: number): Promise<PbxIntegration | null> {
  const row = await pool.maybeOne(sql.type(IntegrationRow)`
    SELECT p.id, p.customer_id, p.instance_id, i.manager_instance, p.secret_hash, p.hmac_secret_enc, p.templates,
           p.enabled_events, p.default_purpose, p.rate_limit_per_minute, p.disabled_at
      FROM pbx_integrations p JOIN instances i ON i.id = p.instance_id WHERE p.id = ${id}`);
  if (!row) return null;
  return {
    id: row.id,
    customerId: row.customer_id,
    instanceId: row.instance_id,
    managerInstance: row.manager_instance,
    secretHash: row.secret_hash,
    hmacSecret: row.hmac_secret_enc ? box.openFormerlyUnbound(row.hmac_secret_enc, SEAL_USES.pbxHmacSecret(row.id)) : null,
    templates: row.templates,
    enabledEvents: row.enabled_events,
    defaultPurpose: row.default_purpose,
    ratePerMinute: row.rate_limit_per_minute,
    disabled: row.disabled_at !== null,
  };
}

/**
 * Records a signature as used; false when it was used already. A used signature is kept at least
 * twice the window (see forgetExpired): by then its timestamp is refused anyway.
 */
export async function useSignature(pool: Queryable, integrationId: number, signature: string): Promise<boolean> {
  const inserted = await pool.query(sql.typeAlias('void')`
    INSERT INTO pbx_signatures_used (integration_id, signature) VALUES (${integrationId}, ${signature}) ON CONFLICT DO NOTHING`);
  return inserted.rowCount === 1;
}

/**
 * Forgets an integration's signatures older than twice the window and its body-digest claims
 * older than the window. Housekeeping only (a request does not rely on it: an expired body claim
 * is taken over by claimRequest), so it runs now and then rather than on every request.
 */
export async function forgetExpired(pool: Queryable, integrationId: number, windowSeconds: number): Promise<void> {
  await pool.query(sql.typeAlias('void')`
    DELETE FROM pbx_signatures_used WHERE integration_id = ${integrationId} AND used_at < now() - make_interval(secs => ${windowSeconds * 2})`);
  await pool.query(sql.typeAlias('void')`
    DELETE FROM pbx_requests
     WHERE integration_id = ${integrationId} AND dedupe_key LIKE 'body:%' AND created_at < now() - make_interval(secs => ${windowSeconds})`);
}

/** The answer recorded for a PBX event, replayed to the PBX's retries. */
const PbxResponseRecord = z.object({ status: z.number(), body: z.record(z.unknown()) });
export type PbxResponseRecord = z.infer<typeof PbxResponseRecord>;

export type RequestClaim = { kind: 'new' } | { kind: 'replay'; commandId: string; response: PbxResponseRecord | null; ageMs: number };

const Claimed = z.object({ claimed: z.boolean(), command_id: z.string(), response: PbxResponseRecord.nullable(), age_ms: z.number() });

/**
 * Claims a PBX event for processing by its dedupe key; a key seen before returns the recorded
 * command (and its response once known), so the same event never sends twice. One statement: a
 * body-digest key only deduplicates inside the replay window, so an older claim of it is taken
 * over as new.
 */
export async function claimRequest(pool: Queryable, integrationId: number, dedupeKey: string, commandId: string, windowSeconds: number): Promise<RequestClaim> {
  const row = await pool.maybeOne(sql.type(Claimed)`
    WITH taken AS (
      INSERT INTO pbx_requests (integration_id, dedupe_key, command_id) VALUES (${integrationId}, ${dedupeKey}, ${commandId})
      ON CONFLICT (integration_id, dedupe_key) DO UPDATE SET command_id = EXCLUDED.command_id, response = NULL, created_at = now()
       WHERE pbx_requests.dedupe_key LIKE 'body:%' AND pbx_requests.created_at < now() - make_interval(secs => ${windowSeconds})
      RETURNING command_id)
    SELECT true AS claimed, command_id, NULL::jsonb AS response, 0::float8 AS age_ms FROM taken
    UNION ALL
    SELECT false, command_id, response, (extract(epoch FROM now() - created_at) * 1000)::float8
      FROM pbx_requests WHERE integration_id = ${integrationId} AND dedupe_key = ${dedupeKey} AND NOT EXISTS (SELECT 1 FROM taken)`);
  if (row?.claimed) return { kind: 'new' };
  if (row) return { kind: 'replay', commandId: row.command_id, response: row.response, ageMs: row.age_ms };
  // Neither: the claim was made by a request that committed after this statement's snapshot
  // (the insert waited for it), or was released since. A second look, with a new snapshot.
  const held = await pool.maybeOne(sql.type(Claimed)`
    SELECT false AS claimed, command_id, response, (extract(epoch FROM now() - created_at) * 1000)::float8 AS age_ms
      FROM pbx_requests WHERE integration_id = ${integrationId} AND dedupe_key = ${dedupeKey}`);
  // Released by the request that held it: ours to take now.
  if (!held) return claimRequest(pool, integrationId, dedupeKey, commandId, windowSeconds);
  return { kind: 'replay', commandId: held.command_id, response: held.response, ageMs: held.age_ms };
}

/** Gives a claim up when its event could not be appended, so the PBX's retry is taken as new. */
export async function releaseClaim(pool: Queryable, integrationId: number, dedupeKey: string, commandId: string): Promise<void> {
  await pool.query(sql.typeAlias('void')`
    DELETE FROM pbx_requests
     WHERE integration_id = ${integrationId} AND dedupe_key = ${dedupeKey} AND command_id = ${commandId} AND response IS NULL`);
}

export async function recordResponse(pool: Queryable, integrationId: number, dedupeKey: string, response: PbxResponseRecord): Promise<void> {
  await pool.query(sql.typeAlias('void')`
    UPDATE pbx_requests SET response = ${jsonOf(response)} WHERE integration_id = ${integrationId} AND dedupe_key = ${dedupeKey}`);
}
