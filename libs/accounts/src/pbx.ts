import { randomBytes } from 'node:crypto';
import { DEFAULT_PBX_TEMPLATES, TEMPLATE_EVENTS } from '@gw/contract';
import { sql, z, type Queryable } from '@gw/db';
import { hashSecret, SEAL_USES, type SecretBox } from '@gw/security';
import { AccountError } from './errors.ts';
import { InstanceOwner } from './instances.ts';

const Created = z.object({ id: z.number() });
const Signing = z.object({ hmac_secret_enc: z.string().nullable() });
const Templates = z.object({ templates: z.record(z.string()), enabled_events: z.array(z.string()) });
/** An integration as its customer may see it: whether it signs, never its secrets. */
const IntegrationRow = z.object({
  id: z.number(),
  instance_id: z.string(),
  hmac: z.boolean(),
  templates: z.record(z.string()),
  enabled_events: z.array(z.string()),
  default_purpose: z.string(),
  rate_limit_per_minute: z.number(),
  disabled_at: z.date().nullable(),
  created_at: z.date(),
});

const newSecret = (prefix: string) => `${prefix}_${randomBytes(32).toString('base64url')}`;

export interface CreatePbxInput {
  customerId: string;
  instanceId: string;
  hmac: boolean;
  ratePerMinute?: number;
  baseUrl: string;
}

export interface PbxIntegrationSummary {
  pbx_integration_id: number;
  instance_id: string;
  /** Whether requests must carry an HMAC signature. */
  hmac: boolean;
  templates: Record<string, string>;
  enabled_events: string[];
  default_purpose: string;
  rate_limit_per_minute: number;
  /** ISO 8601; null while the integration works. */
  disabled_at: string | null;
  created_at: string;
}

/** Creates an integration; its secrets are returned this once (the PBX secret is kept only as a hash). */
export async function createPbx(pool: Queryable, box: SecretBox, input: CreatePbxInput) {
  const owner = await pool.maybeOneFirst(sql.type(InstanceOwner)`SELECT customer_id FROM instances WHERE id = ${input.instanceId} AND deleted_at IS NULL`);
  if (owner !== input.customerId) throw new AccountError('not_found', `Customer ${input.customerId} has no instance ${input.instanceId}.`);
  const secret = newSecret('pbx');
  const signing = input.hmac ? newSecret('pbxsig') : null;
  // The id first: the signing secret is sealed bound to its row (SEAL_USES.pbxHmacSecret).
  const reservedId = await pool.oneFirst(sql.type(Created)`SELECT nextval(pg_get_serial_sequence('pbx_integrations', 'id'))::int AS id`);
  const id = await pool.oneFirst(sql.type(Created)`
    INSERT INTO pbx_integrations (id, customer_id, instance_id, secret_hash, hmac_secret_enc, templates, enabled_events, rate_limit_per_minute)
    VALUES (${reservedId}, ${input.customerId}, ${input.instanceId}, ${sql.binary(hashSecret(secret))}, ${signing ? box.seal(signing, SEAL_USES.pbxHmacSecret(reservedId)) : null},
            ${sql.jsonb(DEFAULT_PBX_TEMPLATES)}, ${sql.array([...TEMPLATE_EVENTS], 'text')}, ${input.ratePerMinute ?? 120})
    RETURNING id`);
  return {
    pbx_integration_id: id,
    webhook_url: `${input.baseUrl}/integrations/pbx/webhook/${id}`,
    pbx_secret: secret,
    ...(signing ? { pbx_signing_secret: signing } : {}),
  };
}

/** The customer's integrations, oldest first, disabled ones included; no secret, sealed or hashed. */
export async function listPbxIntegrations(pool: Queryable, customerId: string): Promise<PbxIntegrationSummary[]> {
  const rows = await pool.any(sql.type(IntegrationRow)`
    SELECT id, instance_id, hmac_secret_enc IS NOT NULL AS hmac, templates, enabled_events, default_purpose, rate_limit_per_minute, disabled_at, created_at
      FROM pbx_integrations WHERE customer_id = ${customerId} ORDER BY id`);
  return rows.map((r) => ({
    pbx_integration_id: r.id,
    instance_id: r.instance_id,
    hmac: r.hmac,
    templates: r.templates,
    enabled_events: r.enabled_events,
    default_purpose: r.default_purpose,
    rate_limit_per_minute: r.rate_limit_per_minute,
    disabled_at: r.disabled_at?.toISOString() ?? null,
    created_at: r.created_at.toISOString(),
  }));
}

/**
 * Which integrations an operation may touch: with `customerId`, only that customer's own (another
 * customer's integration is refused exactly as one that does not exist); without, any (the operator).
 */
export interface PbxScope {
  customerId?: string;
}

async function requireIntegration(pool: Queryable, id: number, scope: PbxScope): Promise<{ hmac: boolean }> {
  const ownedBy = scope.customerId === undefined ? sql.fragment`TRUE` : sql.fragment`customer_id = ${scope.customerId}`;
  const found = await pool.maybeOne(sql.type(Signing)`SELECT hmac_secret_enc FROM pbx_integrations WHERE id = ${id} AND ${ownedBy}`);
  if (!found) throw new AccountError('not_found', `No PBX integration ${id}.`);
  return { hmac: found.hmac_secret_enc !== null };
}

/**
 * New PBX secret (and a new signing secret when signing is on or asked for; `hmac: false` turns
 * signing off); the old ones stop working. With `scope.customerId`, only that customer's own.
 */
export async function rotatePbxSecret(pool: Queryable, box: SecretBox, id: number, hmac: boolean | undefined, scope: PbxScope = {}) {
  const current = await requireIntegration(pool, id, scope);
  const secret = newSecret('pbx');
  const signing = hmac ?? current.hmac ? newSecret('pbxsig') : null;
  await pool.query(sql.typeAlias('void')`
    UPDATE pbx_integrations SET secret_hash = ${sql.binary(hashSecret(secret))}, hmac_secret_enc = ${signing ? box.seal(signing, SEAL_USES.pbxHmacSecret(id)) : null} WHERE id = ${id}`);
  return { pbx_integration_id: id, pbx_secret: secret, ...(signing ? { pbx_signing_secret: signing } : {}) };
}

/** Sets an event's template text and/or whether it sends. With `scope.customerId`, only that customer's own. */
export async function setPbxTemplate(pool: Queryable, id: number, event: string, text: string | undefined, enabled: boolean | undefined, scope: PbxScope = {}) {
  await requireIntegration(pool, id, scope);
  if (!(TEMPLATE_EVENTS as readonly string[]).includes(event)) throw new AccountError('invalid', `Templates exist for ${TEMPLATE_EVENTS.join(', ')}.`);
  if (text !== undefined) {
    if (!text.trim()) throw new AccountError('invalid', 'A template needs some text.');
    await pool.query(sql.typeAlias('void')`
      UPDATE pbx_integrations SET templates = templates || jsonb_build_object(${event}::text, ${text}::text) WHERE id = ${id}`);
  }
  if (enabled === true) {
    await pool.query(sql.typeAlias('void')`
      UPDATE pbx_integrations SET enabled_events = array_append(array_remove(enabled_events, ${event}::text), ${event}::text) WHERE id = ${id}`);
  }
  if (enabled === false) {
    await pool.query(sql.typeAlias('void')`UPDATE pbx_integrations SET enabled_events = array_remove(enabled_events, ${event}::text) WHERE id = ${id}`);
  }
  const row = await pool.one(sql.type(Templates)`SELECT templates, enabled_events FROM pbx_integrations WHERE id = ${id}`);
  return { pbx_integration_id: id, templates: row.templates, enabled_events: row.enabled_events };
}

export async function disablePbx(pool: Queryable, id: number, scope: PbxScope = {}) {
  await requireIntegration(pool, id, scope);
  await pool.query(sql.typeAlias('void')`UPDATE pbx_integrations SET disabled_at = COALESCE(disabled_at, now()) WHERE id = ${id}`);
  return { pbx_integration_id: id, disabled: true };
}

const ModuleSwitch = z.object({ enabled: z.boolean().nullable() });

/** Whether the customer's PBX module is on, from the policy engine's folded state (default off). */
export async function pbxModuleEnabled(pool: Queryable, customerId: string): Promise<boolean> {
  const row = await pool.maybeOne(sql.type(ModuleSwitch)`
    SELECT (state->'modules'->>'pbx')::boolean AS enabled FROM policy_state WHERE customer_id = ${customerId}`);
  return row?.enabled === true;
}
