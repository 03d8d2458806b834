import { randomBytes } from 'node:crypto';
import { sql, type Queryable } from '@gw/db';
import { setWebhook } from '@gw/evolution';
import { hashSecret, SEAL_USES, type SecretBox } from '@gw/security';
import { AccountError } from './errors.ts';
import { ManagedInstanceRow } from './instances.ts';

/** The Evolution events the gateway maps (groups.update is subscribed to as GROUP_UPDATE, Evolution's enum name). */
export const INSTANCE_WEBHOOK_EVENTS = [
  'MESSAGES_UPSERT',
  'MESSAGES_UPDATE',
  'SEND_MESSAGE',
  'CONNECTION_UPDATE',
  'QRCODE_UPDATED',
  'CALL',
  'GROUPS_UPSERT',
  'GROUP_UPDATE',
  'GROUP_PARTICIPANTS_UPDATE',
  'CHATS_UPSERT',
  'CHATS_UPDATE',
];

/**
 * Generates the instance's webhook token (only its hash is stored), and points the instance's
 * manager webhook at the gateway's ingest URL, the token in its `Authorization` header, never in
 * the URL (which access logs, Evolution's own logs and /webhook/find show). A new token replaces
 * the previous one, so an instance configured with the older token-in-path URL moves to the
 * header form when this runs again (docs/decisions.md "Instance event ingest").
 */
export async function setInstanceWebhook(pool: Queryable, box: SecretBox, input: { instanceId: string; baseUrl: string }) {
  const instance = await pool.maybeOne(sql.type(ManagedInstanceRow)`
    SELECT id, name, manager_url, manager_instance, manager_api_key_enc FROM instances WHERE id = ${input.instanceId} AND deleted_at IS NULL`);
  if (!instance) throw new AccountError('not_found', `No instance ${input.instanceId}.`);
  const token = randomBytes(32).toString('base64url');
  const url = `${input.baseUrl.replace(/\/+$/, '')}/integrations/instances/${encodeURIComponent(instance.id)}/events`;
  await pool.query(sql.typeAlias('void')`UPDATE instances SET webhook_token_hash = ${sql.binary(hashSecret(token))} WHERE id = ${instance.id}`);
  try {
    await setWebhook(instance.manager_url, box.open(instance.manager_api_key_enc, SEAL_USES.managerApiKey(instance.id)), instance.manager_instance, url, INSTANCE_WEBHOOK_EVENTS, {
      headers: { Authorization: `Bearer ${token}` },
    });
  } catch (error) {
    // The client's message names the HTTP status or the network failure, never the headers (they hold the token) or the apikey.
    throw new AccountError('refused', `The manager refused the webhook for ${instance.manager_instance}: ${(error as Error).message}.`);
  }
  return { instance_id: instance.id, manager_instance: instance.manager_instance, webhook_url: url, events: INSTANCE_WEBHOOK_EVENTS };
}
