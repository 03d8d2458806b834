import { randomBytes } from 'node:crypto';
import { badRequest } from './evolution-errors.ts';
import type { WebhookConfig } from './types.ts';

// Evolution v2's per-instance webhook: EventDto.webhook, webhook.schema.ts, and the
// controller's set()/emit() (src/api/integrations/event/webhook/webhook.controller.ts).

/** EventController.events: the names `webhook.events` may hold (upper snake case). */
export const WEBHOOK_EVENT_NAMES = [
  'APPLICATION_STARTUP',
  'QRCODE_UPDATED',
  'MESSAGES_SET',
  'MESSAGES_UPSERT',
  'MESSAGES_EDITED',
  'MESSAGES_UPDATE',
  'MESSAGES_DELETE',
  'SEND_MESSAGE',
  'CONTACTS_SET',
  'CONTACTS_UPSERT',
  'CONTACTS_UPDATE',
  'PRESENCE_UPDATE',
  'CHATS_SET',
  'CHATS_UPSERT',
  'CHATS_UPDATE',
  'CHATS_DELETE',
  'GROUPS_UPSERT',
  'GROUP_UPDATE',
  'GROUP_PARTICIPANTS_UPDATE',
  'CONNECTION_UPDATE',
  'LABELS_EDIT',
  'LABELS_ASSOCIATION',
  'CALL',
  'TYPEBOT_START',
  'TYPEBOT_CHANGE_STATUS',
  'REMOVE_INSTANCE',
  'LOGOUT_INSTANCE',
  'INSTANCE_CREATE',
  'INSTANCE_DELETE',
  'STATUS_INSTANCE',
] as const;

/** Also accepted, though Evolution's enum lacks it: the name `groups.update` really maps to. */
const EXTRA_ACCEPTED = ['GROUPS_UPDATE'];

export interface WebhookInput {
  enabled?: boolean;
  url: string;
  headers?: Record<string, string> | null;
  byEvents?: boolean;
  base64?: boolean;
  events?: string[];
}

/** `messages.upsert` → `MESSAGES_UPSERT` (the controller's `we`). */
export function upperEventName(event: string): string {
  return event.replace(/[.-]/g, '_').toUpperCase();
}

/** `messages.upsert` → `messages-upsert`: the path suffix when `byEvents` is on. */
export function pathEventName(event: string): string {
  return upperEventName(event).replace(/_/g, '-').toLowerCase();
}

/**
 * Whether a webhook subscribed to `event`. Evolution compares `we` with the stored list,
 * so `groups.update` (GROUPS_UPDATE) never matches its own enum's GROUP_UPDATE; the
 * simulator treats GROUP_UPDATE as a subscription to groups.update (see README).
 */
export function subscribes(config: WebhookConfig, event: string): boolean {
  if (!config.enabled) return false;
  const we = upperEventName(event);
  if (config.events.includes(we)) return true;
  return we === 'GROUPS_UPDATE' && config.events.includes('GROUP_UPDATE');
}

/** Loose check like class-validator's isURL(url, {require_tld: false}) for http(s). */
function isUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.length > 0;
  } catch {
    return false;
  }
}

/**
 * Validates a `webhook` object like webhookSchema (+ the controller's url check); `path`
 * prefixes the messages as jsonschema does (`instance.webhook`).
 */
export function parseWebhookInput(raw: unknown, path = 'instance.webhook'): WebhookInput {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw badRequest(`${path} is not of a type(s) object`);
  const body = raw as Record<string, unknown>;
  const problems: string[] = [];
  if (body.enabled !== undefined && typeof body.enabled !== 'boolean') {
    problems.push(`${path}.enabled is not of a type(s) boolean`);
  }
  if (typeof body.url !== 'string') problems.push(`${path} requires property "url"`);
  if (body.headers !== undefined && body.headers !== null) {
    const headers = body.headers;
    if (typeof headers !== 'object' || Array.isArray(headers)) problems.push(`${path}.headers is not of a type(s) object`);
    else if (Object.values(headers).some((value) => typeof value !== 'string')) {
      problems.push(`${path}.headers values must be strings`);
    }
  }
  for (const flag of ['byEvents', 'base64'] as const) {
    if (body[flag] !== undefined && typeof body[flag] !== 'boolean') problems.push(`${path}.${flag} is not of a type(s) boolean`);
  }
  if (body.events !== undefined) {
    if (!Array.isArray(body.events)) problems.push(`${path}.events is not of a type(s) array`);
    else {
      body.events.forEach((name, index) => {
        const known: readonly string[] = WEBHOOK_EVENT_NAMES;
        if (typeof name !== 'string' || !(known.includes(name) || EXTRA_ACCEPTED.includes(name))) {
          problems.push(`${path}.events[${index}] is not one of enum values: ${WEBHOOK_EVENT_NAMES.join(',')}`);
        }
      });
    }
  }
  if (problems.length > 0) throw badRequest(...problems);
  const url = body.url as string;
  if (!isUrl(url)) throw badRequest('Invalid "url" property');
  return {
    url,
    ...(typeof body.enabled === 'boolean' ? { enabled: body.enabled } : {}),
    ...(body.headers ? { headers: body.headers as Record<string, string> } : {}),
    ...(typeof body.byEvents === 'boolean' ? { byEvents: body.byEvents } : {}),
    ...(typeof body.base64 === 'boolean' ? { base64: body.base64 } : {}),
    ...(Array.isArray(body.events) ? { events: body.events as string[] } : {}),
  };
}

/** The controller's set(): disabled → no events; enabled without events → all of them. */
export function buildWebhookConfig(
  instanceId: string,
  input: WebhookInput,
  existing: WebhookConfig | null,
): WebhookConfig {
  const enabled = input.enabled ?? false;
  const events = !enabled ? [] : input.events && input.events.length > 0 ? [...input.events] : [...WEBHOOK_EVENT_NAMES];
  const now = new Date();
  return {
    id: existing?.id ?? newCuid(),
    url: input.url,
    headers: input.headers ?? existing?.headers ?? null,
    enabled,
    events,
    webhookByEvents: input.byEvents ?? existing?.webhookByEvents ?? false,
    webhookBase64: input.base64 ?? existing?.webhookBase64 ?? false,
    createdAt: existing?.createdAt ?? now,
    updatedAt: now,
    instanceId,
  };
}

/** The Prisma row as `/webhook/set` and `/webhook/find` answer it. */
export function webhookView(config: WebhookConfig) {
  return {
    id: config.id,
    url: config.url,
    headers: config.headers,
    enabled: config.enabled,
    events: config.events,
    webhookByEvents: config.webhookByEvents,
    webhookBase64: config.webhookBase64,
    createdAt: config.createdAt.toISOString(),
    updatedAt: config.updatedAt.toISOString(),
    instanceId: config.instanceId,
  };
}

/** Prisma's default id for these rows is a cuid: 'c' + 24 lower-case base36 characters. */
function newCuid(): string {
  const alphabet = '0123456789abcdefghijklmnopqrstuvwxyz';
  let id = 'c';
  for (const byte of randomBytes(24)) id += alphabet[byte % 36];
  return id;
}
