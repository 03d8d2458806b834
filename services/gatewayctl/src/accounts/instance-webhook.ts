import { randomBytes } from 'node:crypto';
import type { Pool } from '@gw/db';
import { setWebhook } from '@gw/evolution';
import { hashSecret, type SecretBox } from '@gw/security';
import { CliError } from './customers.ts';

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
 * manager webhook at the gateway's ingest URL with it. A new token replaces the previous one.
 */
export async function setInstanceWebhook(pool: Pool, box: SecretBox, input: { instanceId: string; baseUrl: string }) {
  const { rows } = await pool.query<{ id: string; manager_url: string; manager_instance: string; manager_api_key_enc: string }>(
    'SELECT id, manager_url, manager_instance, manager_api_key_enc FROM instances WHERE id = $1',
    [input.instanceId],
  );
  const instance = rows[0];
  if (!instance) throw new CliError(`No instance ${input.instanceId}.`);
  const token = randomBytes(32).toString('base64url');
  const url = `${input.baseUrl.replace(/\/+$/, '')}/integrations/instances/${encodeURIComponent(instance.id)}/events/${token}`;
  await pool.query('UPDATE instances SET webhook_token_hash = $2 WHERE id = $1', [instance.id, hashSecret(token)]);
  try {
    await setWebhook(instance.manager_url, box.open(instance.manager_api_key_enc), instance.manager_instance, url, INSTANCE_WEBHOOK_EVENTS);
  } catch (error) {
    throw new CliError(`The manager refused the webhook for ${instance.manager_instance}: ${(error as Error).message}.`);
  }
  return { instance_id: instance.id, manager_instance: instance.manager_instance, webhook_url: url, events: INSTANCE_WEBHOOK_EVENTS };
}
