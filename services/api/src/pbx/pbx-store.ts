import type { Pool } from '@gw/db';
import type { SecretBox } from '@gw/security';

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

export async function loadIntegration(pool: Pool, box: SecretBox, id: number): Promise<PbxIntegration | null> {
  const result = await pool.query<{
    id: number;
    customer_id: string;
    instance_id: string;
    manager_instance: string;
    secret_hash: Buffer;
    hmac_secret_enc: string | null;
    templates: Record<string, string>;
    enabled_events: string[];
    default_purpose: string;
    rate_limit_per_minute: number;
    disabled_at: Date | null;
  }>(
    `SELECT p.*, i.manager_instance FROM pbx_integrations p JOIN instances i ON i.id = p.instance_id WHERE p.id = $1`,
    [id],
  );
  const row = result.rows[0];
  if (!row) return null;
  return {
    id: row.id,
    customerId: row.customer_id,
    instanceId: row.instance_id,
    managerInstance: row.manager_instance,
    secretHash: row.secret_hash,
    hmacSecret: row.hmac_secret_enc ? box.open(row.hmac_secret_enc) : null,
    templates: row.templates,
    enabledEvents: row.enabled_events,
    defaultPurpose: row.default_purpose,
    ratePerMinute: row.rate_limit_per_minute,
    disabled: row.disabled_at !== null,
  };
}

/** Records a signature as used; false when it was used already inside the replay window. */
export async function useSignature(pool: Pool, integrationId: number, signature: string, windowSeconds: number): Promise<boolean> {
  // Forget signatures older than twice the window: their timestamps are refused anyway.
  await pool.query(`DELETE FROM pbx_signatures_used WHERE integration_id = $1 AND used_at < now() - make_interval(secs => $2)`, [integrationId, windowSeconds * 2]);
  const inserted = await pool.query('INSERT INTO pbx_signatures_used (integration_id, signature) VALUES ($1, $2) ON CONFLICT DO NOTHING', [integrationId, signature]);
  return inserted.rowCount === 1;
}

export type RequestClaim = { kind: 'new' } | { kind: 'replay'; commandId: string; response: PbxResponseRecord | null; ageMs: number };

export interface PbxResponseRecord {
  status: number;
  body: Record<string, unknown>;
}

/**
 * Claims a PBX event for processing by its dedupe key; a key seen before returns the recorded
 * command (and its response once known), so the same event never sends twice.
 */
export async function claimRequest(pool: Pool, integrationId: number, dedupeKey: string, commandId: string, windowSeconds: number): Promise<RequestClaim> {
  // Body-digest keys only deduplicate inside the replay window.
  await pool.query(
    `DELETE FROM pbx_requests WHERE integration_id = $1 AND dedupe_key LIKE 'body:%' AND created_at < now() - make_interval(secs => $2)`,
    [integrationId, windowSeconds],
  );
  const inserted = await pool.query(
    'INSERT INTO pbx_requests (integration_id, dedupe_key, command_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
    [integrationId, dedupeKey, commandId],
  );
  if (inserted.rowCount === 1) return { kind: 'new' };
  const existing = await pool.query<{ command_id: string; response: PbxResponseRecord | null; age_ms: number }>(
    `SELECT command_id, response, (extract(epoch FROM now() - created_at) * 1000)::float8 AS age_ms
       FROM pbx_requests WHERE integration_id = $1 AND dedupe_key = $2`,
    [integrationId, dedupeKey],
  );
  const row = existing.rows[0];
  // Released by the request that held it between our insert and this read: ours to take now.
  if (!row) return claimRequest(pool, integrationId, dedupeKey, commandId, windowSeconds);
  return { kind: 'replay', commandId: row.command_id, response: row.response, ageMs: Number(row.age_ms) };
}

/** Gives a claim up when its event could not be appended, so the PBX's retry is taken as new. */
export async function releaseClaim(pool: Pool, integrationId: number, dedupeKey: string, commandId: string): Promise<void> {
  await pool.query('DELETE FROM pbx_requests WHERE integration_id = $1 AND dedupe_key = $2 AND command_id = $3 AND response IS NULL', [integrationId, dedupeKey, commandId]);
}

export async function recordResponse(pool: Pool, integrationId: number, dedupeKey: string, response: PbxResponseRecord): Promise<void> {
  await pool.query('UPDATE pbx_requests SET response = $3 WHERE integration_id = $1 AND dedupe_key = $2', [integrationId, dedupeKey, JSON.stringify(response)]);
}

/** Whether the customer's PBX module is on, from the policy engine's folded state (default off). */
export async function pbxModuleEnabled(pool: Pool, customerId: string): Promise<boolean> {
  const result = await pool.query<{ enabled: boolean | null }>(
    `SELECT (state->'modules'->>'pbx')::boolean AS enabled FROM policy_state WHERE customer_id = $1`,
    [customerId],
  );
  return result.rows[0]?.enabled === true;
}
