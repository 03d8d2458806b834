import { randomBytes } from 'node:crypto';
import { DEFAULT_PBX_TEMPLATES, TEMPLATE_EVENTS } from '@gw/contract';
import type { Pool } from '@gw/db';
import { hashSecret, type SecretBox } from '@gw/security';
import { CliError } from '../accounts/customers.ts';

const newSecret = (prefix: string) => `${prefix}_${randomBytes(32).toString('base64url')}`;

export interface CreatePbxInput {
  customerId: string;
  instanceId: string;
  hmac: boolean;
  ratePerMinute?: number;
  baseUrl: string;
}

/** Creates an integration; its secrets are returned this once (the PBX secret is kept only as a hash). */
export async function createPbx(pool: Pool, box: SecretBox, input: CreatePbxInput) {
  const owner = await pool.query<{ customer_id: string }>('SELECT customer_id FROM instances WHERE id = $1', [input.instanceId]);
  if (owner.rows[0]?.customer_id !== input.customerId) throw new CliError(`Customer ${input.customerId} has no instance ${input.instanceId}.`);
  const secret = newSecret('pbx');
  const signing = input.hmac ? newSecret('pbxsig') : null;
  const result = await pool.query<{ id: number }>(
    `INSERT INTO pbx_integrations (customer_id, instance_id, secret_hash, hmac_secret_enc, templates, enabled_events, rate_limit_per_minute)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
    [input.customerId, input.instanceId, hashSecret(secret), signing ? box.seal(signing) : null, JSON.stringify(DEFAULT_PBX_TEMPLATES), [...TEMPLATE_EVENTS], input.ratePerMinute ?? 120],
  );
  const id = result.rows[0]!.id;
  return {
    pbx_integration_id: id,
    webhook_url: `${input.baseUrl}/integrations/pbx/webhook/${id}`,
    pbx_secret: secret,
    ...(signing ? { pbx_signing_secret: signing } : {}),
  };
}

async function requireIntegration(pool: Pool, id: number): Promise<{ hmac: boolean }> {
  const found = await pool.query<{ hmac_secret_enc: string | null }>('SELECT hmac_secret_enc FROM pbx_integrations WHERE id = $1', [id]);
  if (found.rowCount === 0) throw new CliError(`No PBX integration ${id}.`);
  return { hmac: found.rows[0]!.hmac_secret_enc !== null };
}

/** New PBX secret (and a new signing secret when signing is on or asked for); the old ones stop working. */
export async function rotatePbxSecret(pool: Pool, box: SecretBox, id: number, hmac: boolean | undefined) {
  const current = await requireIntegration(pool, id);
  const secret = newSecret('pbx');
  const signing = hmac ?? current.hmac ? newSecret('pbxsig') : null;
  await pool.query('UPDATE pbx_integrations SET secret_hash = $2, hmac_secret_enc = $3 WHERE id = $1', [id, hashSecret(secret), signing ? box.seal(signing) : null]);
  return { pbx_integration_id: id, pbx_secret: secret, ...(signing ? { pbx_signing_secret: signing } : {}) };
}

export async function setPbxTemplate(pool: Pool, id: number, event: string, text: string | undefined, enabled: boolean | undefined) {
  await requireIntegration(pool, id);
  if (!(TEMPLATE_EVENTS as readonly string[]).includes(event)) throw new CliError(`Templates exist for ${TEMPLATE_EVENTS.join(', ')}.`);
  if (text !== undefined) {
    if (!text.trim()) throw new CliError('A template needs some text.');
    await pool.query(`UPDATE pbx_integrations SET templates = templates || jsonb_build_object($2::text, $3::text) WHERE id = $1`, [id, event, text]);
  }
  if (enabled === true) await pool.query('UPDATE pbx_integrations SET enabled_events = array_append(array_remove(enabled_events, $2), $2) WHERE id = $1', [id, event]);
  if (enabled === false) await pool.query('UPDATE pbx_integrations SET enabled_events = array_remove(enabled_events, $2) WHERE id = $1', [id, event]);
  const row = await pool.query<{ templates: Record<string, string>; enabled_events: string[] }>('SELECT templates, enabled_events FROM pbx_integrations WHERE id = $1', [id]);
  return { pbx_integration_id: id, templates: row.rows[0]!.templates, enabled_events: row.rows[0]!.enabled_events };
}

export async function disablePbx(pool: Pool, id: number) {
  await requireIntegration(pool, id);
  await pool.query('UPDATE pbx_integrations SET disabled_at = COALESCE(disabled_at, now()) WHERE id = $1', [id]);
  return { pbx_integration_id: id, disabled: true };
}
