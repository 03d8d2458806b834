import { sql, z, type Pool } from '@gw/db';
import { SEAL_USES, type SecretBox } from '@gw/security';
import {
  createSsrfGuard,
  generateSigningSecret,
  resolveSubscription,
  WebhookDestinationError,
  WebhookSubscriptionError,
  type SsrfGuard,
  type WebhookEventName,
} from '@gw/webhooks';
import { EndpointStatus, REACTIVATE, requireInstance, type CustomerScope } from './endpoint-store.ts';
import { WebhookError } from './refusals.ts';

/** The deployment's destination rules (config.webhooks): whoever configures refuses what the webhooks service would. */
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
    throw new WebhookError('refused', 'rules_invalid', `WEBHOOK_ALLOW_CIDRS is not valid: ${(error as Error).message}.`);
  }
}

/**
 * Checks a destination URL and an event list without touching the database, so a caller can
 * refuse them before creating anything. The refusal carries the library's own error (its code,
 * and for a blocked address the addresses and ranges) beside a one-line message.
 */
export async function checkWebhookChoice(url: string, eventWords: readonly string[], rules: DestinationRules): Promise<WebhookChoice> {
  let events: WebhookEventName[];
  try {
    events = resolveSubscription(eventWords);
  } catch (error) {
    if (error instanceof WebhookSubscriptionError) throw new WebhookError('invalid', 'events_refused', `Events refused: ${error.message}.`, { subscription: error });
    throw error;
  }
  const guard = guardFor(rules);
  try {
    const checked = await guard.checkDestination(url);
    return { url: checked.url.href, events };
  } catch (error) {
    if (error instanceof WebhookDestinationError) throw new WebhookError('invalid', 'destination_refused', `Webhook URL refused (${error.code}): ${error.message}.`, { destination: error });
    throw error;
  } finally {
    await guard.close();
  }
}

const CurrentEndpoint = z.object({ status: EndpointStatus, destination_url: z.string() });
const UpdatedEndpoint = z.object({ status: EndpointStatus });

export interface SaveWebhookOptions {
  /**
   * The destination a caller's decision was made on (null: no webhook yet), such as the
   * dashboard's "a new destination needs a code". The save goes ahead only if the destination,
   * read under the row's lock, is still that one; otherwise it is refused as changed meanwhile.
   */
  expectedUrl?: string | null;
}

/**
 * Creates the instance's endpoint (active, with a new signing secret that is returned this once)
 * or updates its URL and events, keeping the secret. A disabled endpoint pointed at a new URL is
 * active again with a fresh failure count: the old URL's failures say nothing about the new one.
 */
export async function saveWebhook(pool: Pool, box: SecretBox, instanceId: string, choice: WebhookChoice, scope: CustomerScope = {}, options: SaveWebhookOptions = {}): Promise<SavedWebhook> {
  return pool.transaction(async (tx) => {
    const instance = await requireInstance(tx, instanceId, scope);
    // Saves of one instance's webhook take turns: FOR UPDATE below locks only an endpoint that
    // exists, so two first saves at once would both insert and the second hit the unique key.
    await tx.query(sql.typeAlias('void')`SELECT FROM pg_advisory_xact_lock(hashtext(${`webhook_endpoints/${instanceId}`}))`);
    const existing = await tx.maybeOne(sql.type(CurrentEndpoint)`
      SELECT status, destination_url FROM webhook_endpoints WHERE instance_id = ${instanceId} FOR UPDATE`);
    if (options.expectedUrl !== undefined && (existing?.destination_url ?? null) !== options.expectedUrl) {
      throw new WebhookError('conflict', 'destination_changed', `The webhook of instance ${instanceId} was changed meanwhile: its destination is not the one this change was decided on.`, { instanceId });
    }
    if (!existing) {
      const secret = generateSigningSecret();
      await tx.query(sql.typeAlias('void')`
        INSERT INTO webhook_endpoints (instance_id, customer_id, destination_url, events, status, signing_secret_enc)
        VALUES (${instanceId}, ${instance.customer_id}, ${choice.url}, ${sql.array(choice.events, 'text')}, 'active', ${box.seal(secret, SEAL_USES.webhookSigningSecret(instanceId))})`);
      return { instance_id: instanceId, destination_url: choice.url, events: choice.events, status: 'active', signing_secret: secret };
    }
    const reactivate = existing.status === 'disabled' && existing.destination_url !== choice.url;
    const status = await tx.oneFirst(sql.type(UpdatedEndpoint)`
      UPDATE webhook_endpoints SET destination_url = ${choice.url}, events = ${sql.array(choice.events, 'text')}, updated_at = now()${reactivate ? sql.fragment`, ${REACTIVATE}` : sql.fragment``}
       WHERE instance_id = ${instanceId} RETURNING status`);
    return { instance_id: instanceId, destination_url: choice.url, events: choice.events, status };
  });
}

export interface SetWebhookInput {
  instanceId: string;
  url: string;
  events: readonly string[];
  rules: DestinationRules;
  /** Only this customer's instance (see CustomerScope). */
  customerId?: string;
}

/** Configures the instance's webhook: the instance must exist (in scope), the URL pass the SSRF guard, every event word be known. */
export async function setWebhook(pool: Pool, box: SecretBox, input: SetWebhookInput): Promise<SavedWebhook> {
  const scope = { customerId: input.customerId };
  await requireInstance(pool, input.instanceId, scope);
  const choice = await checkWebhookChoice(input.url, input.events, input.rules);
  return saveWebhook(pool, box, input.instanceId, choice, scope);
}
