// What the webhook tab of an instance's manage page shows (instance-webhook.eta, included
// by instances/instance-manage.eta under ?tab=webhook): the configuration and its status, the event
// checkboxes grouped as the contract groups them, and the deliveries log with every attempt. The
// instances slice's manage page calls webhookTabData for that tab, with the options a POST of the
// tab answers with (the form as sent, its error, or the signing secret shown this once).
import { readDeliveries, showWebhook, WebhookError, type InstanceSummary, type ListedDelivery, type WebhookSummary } from '@gw/accounts';
import { readSnapshot, type Pool, type Queryable } from '@gw/db';
import { WEBHOOK_EVENT_GROUPS, WEBHOOK_EVENT_NAMES, type WebhookEventGroup } from '@gw/webhooks';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { NO_SUCH_INSTANCE } from '../own-instance.ts';
import { PERMISSIONS } from '../roles/permissions.ts';
import { PageError } from '../sessions/guards.ts';
import { disabledWhy } from './refusal-words.ts';
import { utcText } from '../format.ts';

/** How many deliveries the log shows, newest first. */
export const LOG_SIZE = 25;
/** How much of a response body an attempt shows (the gateway keeps up to 1 KiB). */
export const SNIPPET_CHARS = 300;
/** How far back "Recover since…" may reach. */
export const RECOVER_MAX_DAYS = 30;

/** Notices after a redirect, by key (only these texts are ever shown, whatever the query says). */
const NOTICES: Record<string, string> = {
  webhook_saved: 'Webhook saved. New events go to this address from now on.',
  webhook_paused: 'Webhook paused. Events are kept, and sent when you resume.',
  webhook_resumed: 'Webhook resumed. Events held meanwhile go out in a moment.',
  webhook_resent: 'Delivery queued again. It goes out in a moment, with the same delivery id.',
  webhook_recovered: 'Recovery done. The events this webhook missed since then are queued again and go out in a moment; they show below as pending.',
};

/** The contract's groups, in its order, each with a line about what it covers. */
const GROUPS: Record<WebhookEventGroup, { label: string; about: string }> = {
  recommended: { label: 'Recommended', about: 'Messages received, sent and failed, and recipients who opt out: what most integrations need.' },
  instance: { label: 'Instance', about: 'The phone connection: connected, disconnected, changes, and new QR codes.' },
  lifecycle: { label: 'Message lifecycle', about: 'Receipts for messages sent: delivered, read, and other status changes.' },
  conversation: { label: 'Conversation', about: 'Changes to a chat.' },
  call: { label: 'Call', about: 'Incoming and missed calls.' },
  group: { label: 'Group', about: 'Messages in chat groups, and changes to groups.' },
};

const STATE_LABELS: Record<string, { label: string; tone: string }> = {
  pending: { label: 'pending', tone: '' },
  in_flight: { label: 'sending', tone: '' },
  delivered: { label: 'delivered', tone: 'good' },
  failed: { label: 'failed', tone: 'bad' },
};

const OUTCOMES: Record<string, string> = {
  delivered: 'delivered',
  retry: 'retry scheduled',
  failed: 'gave up',
  endpoint_disabled: 'webhook disabled',
};

export interface WebhookTabOptions {
  /** The notice after a redirect (`?done=`); unknown keys show nothing. */
  done?: string;
  /** The configure form as sent, when it is shown again with an error. */
  form?: { url: string; events: readonly string[] };
  /** A refusal to show beside the form it belongs to. */
  error?: { form: 'configure' | 'status' | 'rotate' | 'recover' | 'deliveries'; message: string; detail?: string | null };
  /** The signing secret, in the one answer that created or rotated it. */
  secret?: {
    value: string;
    /** The same secret in the form a Standard Webhooks library takes (standardWebhooksSecret). */
    standard: string;
    rotated: boolean;
    /** After a rotation: until when the replaced secret signs beside the new one (null: not at all). */
    previousUntil?: string | null;
  };
  /** The recover form's time as sent. */
  since?: string;
}

/**
 * How a POST of the tab answers: the manage page on its webhook tab, with these options and this
 * status. The page is the instances slice's (webhookTabAnswer), handed to this slice's routes.
 */
export type WebhookTabAnswer = (request: FastifyRequest, reply: FastifyReply, status: number, instance: InstanceSummary, options: WebhookTabOptions) => Promise<FastifyReply>;

/** An ISO time as the page shows it: "2026-01-31 12:00:05 UTC". */
export const shownTime = (iso: string | null) => (iso ? utcText(new Date(iso)) : null);
/** A time as a datetime-local input holds it, in UTC to the minute. */
export const localInputTime = (time: Date) => time.toISOString().slice(0, 16);

function statusOf(config: WebhookSummary) {
  switch (config.status) {
    case 'active':
      return { label: 'active', tone: 'good', about: 'Events are posted to your address as they happen.' };
    case 'paused':
      return { label: 'paused', tone: '', about: 'Events are kept, not sent, until you resume.' };
    case 'disabled':
      return {
        label: 'disabled',
        tone: 'bad',
        about: `Since ${shownTime(config.disabled_at) ?? 'recently'}: ${disabledWhy(config.disabled_reason)}. Nothing is queued for it. Fix your receiver, then resume (or save a new address).`,
      };
  }
}

function deliveryView(d: ListedDelivery) {
  const state = STATE_LABELS[d.state] ?? { label: d.state, tone: '' };
  return {
    id: d.delivery_id,
    event: d.event,
    state: d.state,
    label: state.label,
    tone: state.tone,
    created: { iso: d.created_at, shown: shownTime(d.created_at) },
    due: d.state === 'pending' ? shownTime(d.next_attempt_at) : null,
    attempts: d.attempts_log.map((a) => {
      const snippet = a.response_snippet;
      return {
        attempt: a.attempt,
        at: { iso: a.attempted_at, shown: shownTime(a.attempted_at) },
        answer: a.status_code !== null ? `HTTP ${a.status_code}` : (a.error ?? 'no answer'),
        good: a.status_code !== null && a.status_code >= 200 && a.status_code < 300,
        latency: `${a.latency_ms} ms`,
        outcome: OUTCOMES[a.outcome] ?? a.outcome,
        retryAt: a.outcome === 'retry' ? shownTime(a.next_attempt_at) : null,
        // Shown escaped by the template, cut short here.
        body: snippet.length > SNIPPET_CHARS ? `${snippet.slice(0, SNIPPET_CHARS)}…` : snippet,
      };
    }),
  };
}

/**
 * The webhook tab's data for one of the customer's instances (GET /instances/:id/manage?tab=webhook
 * puts it in the page as `webhook`). Another customer's instance answers the 404 page.
 */
export async function webhookTabData(pool: Pool, customerId: string, instanceId: string, options: WebhookTabOptions = {}) {
  // One snapshot: the worker records an attempt, its delivery's state and the endpoint's health
  // together, and the page shows them side by side.
  const { config, deliveries } = await readSnapshot(pool, (tx) => readTab(tx, customerId, instanceId));
  const chosen = new Set<string>(options.form?.events ?? config?.events ?? WEBHOOK_EVENT_GROUPS.recommended);
  const now = new Date();
  return {
    base: `/instances/${encodeURIComponent(instanceId)}/webhook`,
    /** The roles that may change it (the page shows them the forms). */
    managers: PERMISSIONS['webhooks.manage'] as readonly string[],
    config: config && {
      ...config,
      statusView: statusOf(config),
      lastSuccess: shownTime(config.last_success_at),
      failingSince: shownTime(config.failing_since),
      secretSince: shownTime(config.secret_rotated_at),
    },
    url: options.form?.url ?? config?.destination_url ?? '',
    groups: (Object.keys(WEBHOOK_EVENT_GROUPS) as WebhookEventGroup[]).map((name) => ({
      name,
      ...GROUPS[name],
      events: WEBHOOK_EVENT_GROUPS[name].map((event) => ({ name: event, checked: chosen.has(event) })),
    })),
    totalEvents: WEBHOOK_EVENT_NAMES.length,
    deliveries: deliveries.map(deliveryView),
    logSize: LOG_SIZE,
    notice: options.done ? (NOTICES[options.done] ?? null) : null,
    error: options.error ? { detail: null, ...options.error } : null,
    secret: options.secret ?? null,
    since: options.since ?? localInputTime(new Date(now.getTime() - 3_600_000)),
    now: localInputTime(now),
    earliest: localInputTime(new Date(now.getTime() - RECOVER_MAX_DAYS * 86_400_000)),
    recoverMaxDays: RECOVER_MAX_DAYS,
  };
}

export type WebhookTab = Awaited<ReturnType<typeof webhookTabData>>;

async function readTab(tx: Queryable, customerId: string, instanceId: string): Promise<{ config: WebhookSummary | null; deliveries: ListedDelivery[] }> {
  let config: WebhookSummary | null = null;
  try {
    config = await showWebhook(tx, instanceId, { customerId });
  } catch (error) {
    if (!(error instanceof WebhookError)) throw error;
    if (error.refusal === 'no_instance') throw new PageError(404, NO_SUCH_INSTANCE.title, NO_SUCH_INSTANCE.message, { href: '/instances', label: 'Your instances' });
    if (error.refusal !== 'no_webhook') throw error;
  }
  const deliveries = config ? await readDeliveries(tx, { instanceId, customerId, limit: LOG_SIZE }) : [];
  return { config, deliveries };
}
