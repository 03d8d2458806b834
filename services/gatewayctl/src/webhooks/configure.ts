import { withTransaction, type Pool } from '@gw/db';
import type { SecretBox } from '@gw/security';
import {
  createSsrfGuard,
  generateSigningSecret,
  resolveSubscription,
  WebhookDestinationError,
  WebhookSubscriptionError,
  type SsrfGuard,
  type WebhookEventName,
} from '@gw/webhooks';
import { CliError } from '../accounts/customers.ts';
import { REACTIVATE, requireInstance, type EndpointStatus } from './endpoint-store.ts';

/** How to open a blocked range on purpose (a receiver on your own network), named from the blocked addresses. */
function openingHint(error: WebhookDestinationError): string {
  if (error.code !== 'destination_blocked') return '';
  const ranges = [...new Set(((error.details.blocked ?? []) as Array<{ range?: string }>).map((b) => b.range).filter(Boolean))];
  const example = ranges.length > 0 ? ranges.join(',') : '127.0.0.0/8';
  return ` To allow it on purpose, open the range for gatewayctl and the webhooks service alike: WEBHOOK_ALLOW_CIDRS=${example} (a local stack started with make run opens 127.0.0.0/8 for both).`;
}

/** The deployment's destination rules (config.webhooks): the CLI refuses what the service would. */
export interface DestinationRules {
  allowCidrs: readonly string[];
  httpsOnly: boolean;
}

/** A destination and subscription that passed the checks, ready to store. */
export interface WebhookChoice {
  /** The URL as the guard parsed and checked it. */
  url: string;
  /** Groups expanded, in the contract's order. */
  events: WebhookEventName[];
}

export interface SavedWebhook {
  instance_id: string;
  destination_url: string;
  events: string[];
  status: EndpointStatus;
  /** Only when the configuration is new: the one time the secret is shown. */
  signing_secret?: string;
}

function guardFor(rules: DestinationRules): SsrfGuard {
  try {
    return createSsrfGuard({ allowCidrs: rules.allowCidrs, httpsOnly: rules.httpsOnly });
  } catch (error) {
    throw new CliError(`WEBHOOK_ALLOW_CIDRS is not valid: ${(error as Error).message}.`);
  }
}

/**
 * Checks a destination URL and an event list without touching the database, so a caller (demo)
 * can refuse them before creating anything. Errors are the library's own sentences.
 */
export async function checkWebhookChoice(url: string, eventWords: readonly string[], rules: DestinationRules): Promise<WebhookChoice> {
  let events: WebhookEventName[];
  try {
    events = resolveSubscription(eventWords);
  } catch (error) {
    if (error instanceof WebhookSubscriptionError) throw new CliError(`Events refused: ${error.message}.`);
    throw error;
  }
  const guard = guardFor(rules);
  try {
    const checked = await guard.checkDestination(url);
    return { url: checked.url.href, events };
  } catch (error) {
    if (error instanceof WebhookDestinationError) throw new CliError(`Webhook URL refused (${error.code}): ${error.message}.${openingHint(error)}`);
    throw error;
  } finally {
    await guard.close();
  }
}

/**
 * Creates the instance's endpoint (active, with a new signing secret that is returned this once)
 * or updates its URL and events, keeping the secret. A disabled endpoint pointed at a new URL is
 * active again with a fresh failure count: the old URL's failures say nothing about the new one.
 */
export async function saveWebhook(pool: Pool, box: SecretBox, instanceId: string, choice: WebhookChoice): Promise<SavedWebhook> {
  return withTransaction(pool, async (client) => {
    const instance = await requireInstance(client, instanceId);
    const current = await client.query<{ status: EndpointStatus; destination_url: string }>(
      'SELECT status, destination_url FROM webhook_endpoints WHERE instance_id = $1 FOR UPDATE',
      [instanceId],
    );
    const existing = current.rows[0];
    if (!existing) {
      const secret = generateSigningSecret();
      await client.query(
        `INSERT INTO webhook_endpoints (instance_id, customer_id, destination_url, events, status, signing_secret_enc)
         VALUES ($1, $2, $3, $4, 'active', $5)`,
        [instanceId, instance.customer_id, choice.url, choice.events, box.seal(secret)],
      );
      return { instance_id: instanceId, destination_url: choice.url, events: choice.events, status: 'active', signing_secret: secret };
    }
    const reactivate = existing.status === 'disabled' && existing.destination_url !== choice.url;
    const updated = await client.query<{ status: EndpointStatus }>(
      `UPDATE webhook_endpoints SET destination_url = $2, events = $3, updated_at = now()${reactivate ? `, ${REACTIVATE}` : ''}
        WHERE instance_id = $1 RETURNING status`,
      [instanceId, choice.url, choice.events],
    );
    return { instance_id: instanceId, destination_url: choice.url, events: choice.events, status: updated.rows[0]!.status };
  });
}

export interface SetWebhookInput {
  instanceId: string;
  url: string;
  events: readonly string[];
  rules: DestinationRules;
}

/** `webhook set`: the instance must exist, the URL pass the SSRF guard, every event word be known. */
export async function setWebhook(pool: Pool, box: SecretBox, input: SetWebhookInput): Promise<SavedWebhook> {
  await requireInstance(pool, input.instanceId);
  const choice = await checkWebhookChoice(input.url, input.events, input.rules);
  return saveWebhook(pool, box, input.instanceId, choice);
}
