/**
 * Customer webhook event payloads (spec 2.4 and 6.3): names, groups, one type per event, a
 * validating builder that produces the exact bytes sent, JSON Schemas, and the subscription
 * resolver for a webhook configuration's `events` list (spec 2.5).
 */

import { MESSAGE_PURPOSES } from '@gw/contract';

export const WEBHOOK_EVENT_NAMES = [
  'message.received',
  'message.sent',
  'message.failed',
  'recipient.opted_out',
  'instance.connected',
  'instance.disconnected',
  'instance.connection_updated',
  'instance.qr_updated',
  'message.delivered',
  'message.read',
  'message.status_updated',
  'conversation.updated',
  'call.received',
  'call.missed',
  'group.message_received',
  'group.updated',
] as const;
export type WebhookEventName = (typeof WEBHOOK_EVENT_NAMES)[number];

export const WEBHOOK_EVENT_GROUPS = {
  recommended: ['message.received', 'message.sent', 'message.failed', 'recipient.opted_out'],
  instance: ['instance.connected', 'instance.disconnected', 'instance.connection_updated', 'instance.qr_updated'],
  lifecycle: ['message.delivered', 'message.read', 'message.status_updated'],
  conversation: ['conversation.updated'],
  call: ['call.received', 'call.missed'],
  group: ['group.message_received', 'group.updated'],
} as const satisfies Record<string, readonly WebhookEventName[]>;
export type WebhookEventGroup = keyof typeof WEBHOOK_EVENT_GROUPS;

/** Message purposes a `message.sent` / `message.failed` event may carry: the contract's five (spec 2.1). */
export const WEBHOOK_MESSAGE_PURPOSES = MESSAGE_PURPOSES;

// ---------------------------------------------------------------------------------------------
// Types

/** Base fields every event carries (spec 2.4). */
export interface WebhookEventBase<E extends WebhookEventName = WebhookEventName> {
  event: E;
  /** Instance identifier in string form. */
  instance_id: string;
  instance_name: string;
  /** ISO 8601 / RFC 3339 date-time, UTC, e.g. "2025-01-31T12:00:00.000Z". */
  timestamp: string;
  /**
   * The delivery's id, as in the webhook-id and X-Chat-Gateway-Delivery headers: the same on every
   * retry. Added to the body when it is posted (withWebhookId), so the signed bytes carry it too.
   * An optional field added within v1 (docs/decisions.md, "Standard Webhooks").
   */
  webhook_id?: string;
}

/** A phone number in E.164 form, e.g. "+15551234567". */
export type E164Phone = string;
/** A linked id, "123456789012345@lid": a sender the network shows without the number. */
export type LinkedId = string;
/** Who sent something: the E.164 phone, or the linked id when the network gave no phone. */
export type Sender = E164Phone | LinkedId;

export interface MessageReceivedEvent extends WebhookEventBase<'message.received'> {
  from: Sender;
  from_lid?: LinkedId;
  message_text: string;
  message_type?: string;
  external_message_id?: string;
}
export interface MessageSentEvent extends WebhookEventBase<'message.sent'> {
  to: E164Phone;
  message_purpose: string;
  message_id?: string;
}
export interface MessageFailedEvent extends WebhookEventBase<'message.failed'> {
  to: E164Phone;
  message_purpose: string;
  error: string;
  /** Not in spec 6.3's table: added within v1 so a failure can be matched to its send (docs/decisions.md). */
  message_id?: string;
  external_message_id?: string;
}
export interface RecipientOptedOutEvent extends WebhookEventBase<'recipient.opted_out'> {
  from: Sender;
  from_lid?: LinkedId;
  reason: string;
  message_text?: string;
}
export interface InstanceConnectedEvent extends WebhookEventBase<'instance.connected'> {
  connection_state?: string;
}
export interface InstanceDisconnectedEvent extends WebhookEventBase<'instance.disconnected'> {
  connection_state?: string;
}
export interface InstanceConnectionUpdatedEvent extends WebhookEventBase<'instance.connection_updated'> {
  connection_state?: string;
  /** `restricted` when the number guard put the instance under restriction (docs/decisions.md, "The number guard tells the customer"); added within v1. */
  restriction?: string;
  /** When the restriction ends, ISO 8601 UTC. */
  restricted_until?: string;
  /** What the chat network signalled: send_error, reachout_timelock, message_capping, banned. */
  restriction_signal?: string;
}
export interface InstanceQrUpdatedEvent extends WebhookEventBase<'instance.qr_updated'> {
  qr_available?: boolean;
  reason?: string;
}
export interface MessageDeliveredEvent extends WebhookEventBase<'message.delivered'> {
  from?: Sender;
  from_lid?: LinkedId;
  external_message_id?: string;
  status?: string;
}
export interface MessageReadEvent extends WebhookEventBase<'message.read'> {
  from?: Sender;
  from_lid?: LinkedId;
  external_message_id?: string;
  status?: string;
}
export interface MessageStatusUpdatedEvent extends WebhookEventBase<'message.status_updated'> {
  from?: Sender;
  from_lid?: LinkedId;
  external_message_id?: string;
  status?: string;
}
export interface ConversationUpdatedEvent extends WebhookEventBase<'conversation.updated'> {
  conversation_id?: string;
}
export interface CallReceivedEvent extends WebhookEventBase<'call.received'> {
  from?: Sender;
  from_lid?: LinkedId;
  call_status?: string;
}
export interface CallMissedEvent extends WebhookEventBase<'call.missed'> {
  from?: Sender;
  from_lid?: LinkedId;
  call_status?: string;
}
export interface GroupMessageReceivedEvent extends WebhookEventBase<'group.message_received'> {
  group_id: string;
  from?: Sender;
  from_lid?: LinkedId;
  message_text?: string;
  external_message_id?: string;
}
export interface GroupUpdatedEvent extends WebhookEventBase<'group.updated'> {
  group_id?: string;
}

export type WebhookEvent =
  | MessageReceivedEvent
  | MessageSentEvent
  | MessageFailedEvent
  | RecipientOptedOutEvent
  | InstanceConnectedEvent
  | InstanceDisconnectedEvent
  | InstanceConnectionUpdatedEvent
  | InstanceQrUpdatedEvent
  | MessageDeliveredEvent
  | MessageReadEvent
  | MessageStatusUpdatedEvent
  | ConversationUpdatedEvent
  | CallReceivedEvent
  | CallMissedEvent
  | GroupMessageReceivedEvent
  | GroupUpdatedEvent;

export type WebhookEventOf<E extends WebhookEventName> = Extract<WebhookEvent, { event: E }>;

type BaseKeys = 'event' | 'instance_id' | 'instance_name' | 'timestamp';

/** What a producer passes to the builder: ids may be numbers, the time may be a Date. */
export type WebhookEventInput<E extends WebhookEventName = WebhookEventName> = E extends WebhookEventName
  ? Omit<WebhookEventOf<E>, Exclude<BaseKeys, 'event'>> & {
      instance_id: string | number | bigint;
      instance_name: string;
      timestamp: string | Date;
    }
  : never;

// ---------------------------------------------------------------------------------------------
// Field table (single source for validation, serialisation order and JSON Schemas)

/**
 * phone: E.164; sender: E.164, or the linked id `<digits>@lid` of a sender the network shows only by
 * that (docs/decisions.md, "Senders known only by a linked id"); lid: a linked id; purpose: one of
 * the five purposes; token: non-empty, ≤ 256 chars, no control chars; text: any string.
 */
export type FieldKind = 'phone' | 'sender' | 'lid' | 'purpose' | 'token' | 'text' | 'boolean';

interface FieldSpec {
  readonly kind: FieldKind;
  readonly required: boolean;
}

const KIND: Record<string, FieldKind> = {
  from: 'sender',
  from_lid: 'lid',
  to: 'phone',
  message_purpose: 'purpose',
  message_text: 'text',
  error: 'text',
  reason: 'text',
  message_type: 'token',
  external_message_id: 'token',
  message_id: 'token',
  connection_state: 'token',
  qr_available: 'boolean',
  status: 'token',
  conversation_id: 'token',
  call_status: 'token',
  group_id: 'token',
  restriction: 'token',
  restricted_until: 'token',
  restriction_signal: 'token',
};

function fields(required: string[], optional: string[] = []): Readonly<Record<string, FieldSpec>> {
  const out: Record<string, FieldSpec> = {};
  for (const f of required) out[f] = { kind: KIND[f]!, required: true };
  for (const f of optional) out[f] = { kind: KIND[f]!, required: false };
  return out;
}

/** Extra fields per event, in serialisation order (spec 6.3). */
export const WEBHOOK_EVENT_FIELDS: Readonly<Record<WebhookEventName, Readonly<Record<string, FieldSpec>>>> = {
  // from_lid: an optional field added within v1 (docs/decisions.md, "Senders known only by a linked id").
  'message.received': fields(['from', 'message_text'], ['message_type', 'external_message_id', 'from_lid']),
  'message.sent': fields(['to', 'message_purpose'], ['message_id']),
  // message_id: an optional field added within v1 (docs/decisions.md, "Customer webhooks").
  // external_message_id: the manager's id of the send it reports failed (a messages.update ERROR), added within v1.
  'message.failed': fields(['to', 'message_purpose', 'error'], ['message_id', 'external_message_id']),
  'recipient.opted_out': fields(['from', 'reason'], ['message_text', 'from_lid']),
  'instance.connected': fields([], ['connection_state']),
  'instance.disconnected': fields([], ['connection_state']),
  // restriction, restricted_until, restriction_signal: the number guard's restriction, added within v1 (docs/decisions.md).
  'instance.connection_updated': fields([], ['connection_state', 'restriction', 'restricted_until', 'restriction_signal']),
  // reason: why no QR is available (qr_code_limit_reached), when the manager says so.
  'instance.qr_updated': fields([], ['qr_available', 'reason']),
  'message.delivered': fields([], ['from', 'external_message_id', 'status', 'from_lid']),
  'message.read': fields([], ['from', 'external_message_id', 'status', 'from_lid']),
  'message.status_updated': fields([], ['from', 'external_message_id', 'status', 'from_lid']),
  'conversation.updated': fields([], ['conversation_id']),
  'call.received': fields([], ['from', 'call_status', 'from_lid']),
  'call.missed': fields([], ['from', 'call_status', 'from_lid']),
  'group.message_received': fields(['group_id'], ['from', 'message_text', 'external_message_id', 'from_lid']),
  'group.updated': fields([], ['group_id']),
};

const BASE_KEYS: readonly BaseKeys[] = ['event', 'instance_id', 'instance_name', 'timestamp'];
/** The body field that carries the delivery id (optional: the stored event body has none yet). */
export const WEBHOOK_ID_FIELD = 'webhook_id';
export const E164_PATTERN = /^\+[1-9][0-9]{6,14}$/;
/** A linked id as the gateway writes it: digits and @lid, no device part (libs/evolution canonicalLid). */
export const LID_PATTERN = /^[0-9]{5,20}@lid$/;
const SENDER_PATTERN = new RegExp(`${E164_PATTERN.source}|${LID_PATTERN.source}`);
const DATE_TIME_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;
const MAX_TOKEN_LENGTH = 256;
/** Largest body the builder will produce (a receiver should not have to accept more). */
export const MAX_WEBHOOK_BODY_BYTES = 256 * 1024;

export function isWebhookEventName(name: unknown): name is WebhookEventName {
  return typeof name === 'string' && (WEBHOOK_EVENT_NAMES as readonly string[]).includes(name);
}

// ---------------------------------------------------------------------------------------------
// Validation

export interface PayloadIssue {
  /** JSON field name, or "(body)" for the whole payload. */
  readonly field: string;
  readonly rule: 'required' | 'type' | 'format' | 'enum' | 'unknown_field' | 'max_length' | 'max_size';
  readonly message: string;
}

export class WebhookPayloadError extends Error {
  readonly code = 'invalid_webhook_payload';
  constructor(readonly issues: readonly PayloadIssue[]) {
    super(`invalid webhook payload: ${issues.map((i) => i.message).join('; ')}`);
    this.name = 'WebhookPayloadError';
  }
}

function checkValue(field: string, kind: FieldKind, value: unknown, issues: PayloadIssue[]): void {
  if (kind === 'boolean') {
    if (typeof value !== 'boolean') issues.push({ field, rule: 'type', message: `${field} must be a boolean` });
    return;
  }
  if (typeof value !== 'string') {
    issues.push({ field, rule: 'type', message: `${field} must be a string` });
    return;
  }
  switch (kind) {
    case 'phone':
      if (!E164_PATTERN.test(value)) {
        issues.push({ field, rule: 'format', message: `${field} must be an E.164 phone number such as +15551234567` });
      }
      return;
    case 'sender':
      if (!SENDER_PATTERN.test(value)) {
        issues.push({ field, rule: 'format', message: `${field} must be an E.164 phone number such as +15551234567, or a linked id such as 123456789012345@lid` });
      }
      return;
    case 'lid':
      if (!LID_PATTERN.test(value)) {
        issues.push({ field, rule: 'format', message: `${field} must be a linked id such as 123456789012345@lid` });
      }
      return;
    case 'purpose':
      if (!(WEBHOOK_MESSAGE_PURPOSES as readonly string[]).includes(value)) {
        issues.push({ field, rule: 'enum', message: `${field} must be one of ${WEBHOOK_MESSAGE_PURPOSES.join(', ')}` });
      }
      return;
    case 'token':
      if (value.length === 0 || CONTROL_CHARS.test(value)) {
        issues.push({ field, rule: 'format', message: `${field} must be a non-empty string without control characters` });
      } else if (value.length > MAX_TOKEN_LENGTH) {
        issues.push({ field, rule: 'max_length', message: `${field} must be at most ${MAX_TOKEN_LENGTH} characters` });
      }
      return;
    case 'text':
      return;
  }
}

/**
 * Checks a payload object against the contract (spec 2.4 + 6.3). Returns every problem; an empty
 * list means valid. Unknown fields are problems (the payload shape is closed).
 */
export function validateWebhookEvent(value: unknown): PayloadIssue[] {
  const issues: PayloadIssue[] = [];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return [{ field: '(body)', rule: 'type', message: 'payload must be a JSON object' }];
  }
  const obj = value as Record<string, unknown>;
  const event = obj.event;
  if (event === undefined) issues.push({ field: 'event', rule: 'required', message: 'event is required' });
  else if (!isWebhookEventName(event)) {
    issues.push({ field: 'event', rule: 'enum', message: `event must be one of ${WEBHOOK_EVENT_NAMES.join(', ')}` });
  }
  for (const key of ['instance_id', 'instance_name'] as const) {
    if (obj[key] === undefined) issues.push({ field: key, rule: 'required', message: `${key} is required` });
    else checkValue(key, 'token', obj[key], issues);
  }
  if (obj.timestamp === undefined) issues.push({ field: 'timestamp', rule: 'required', message: 'timestamp is required' });
  else if (
    typeof obj.timestamp !== 'string' ||
    !DATE_TIME_PATTERN.test(obj.timestamp) ||
    Number.isNaN(Date.parse(obj.timestamp))
  ) {
    issues.push({ field: 'timestamp', rule: 'format', message: 'timestamp must be an ISO 8601 date-time such as 2025-01-31T12:00:00.000Z' });
  }
  if (obj[WEBHOOK_ID_FIELD] !== undefined) checkValue(WEBHOOK_ID_FIELD, 'token', obj[WEBHOOK_ID_FIELD], issues);
  if (!isWebhookEventName(event)) return issues;

  const spec = WEBHOOK_EVENT_FIELDS[event];
  for (const [field, f] of Object.entries(spec)) {
    const v = obj[field];
    if (v === undefined) {
      if (f.required) issues.push({ field, rule: 'required', message: `${field} is required for ${event}` });
    } else checkValue(field, f.kind, v, issues);
  }
  for (const key of Object.keys(obj)) {
    if (!(BASE_KEYS as readonly string[]).includes(key) && key !== WEBHOOK_ID_FIELD && !(key in spec)) {
      issues.push({ field: key, rule: 'unknown_field', message: `${key} is not a field of ${event}` });
    }
  }
  return issues;
}

// ---------------------------------------------------------------------------------------------
// Builder

export interface BuiltWebhookEvent<E extends WebhookEventName = WebhookEventName> {
  readonly event: E;
  /** The payload as an object (normalised: string instance_id, UTC timestamp, fields in order). */
  readonly payload: WebhookEventOf<E>;
  /** The exact bytes sent as the HTTP body and covered by the signature (UTF-8 JSON). */
  readonly body: string;
}

/**
 * Validates and serialises one event. The instance id becomes a string, a Date timestamp becomes
 * `toISOString()` (a string timestamp is normalised the same way), keys are written in a fixed
 * order (base fields, then the event's fields in spec order) and `undefined` optionals are
 * omitted. Throws WebhookPayloadError listing every problem.
 */
export function buildWebhookEvent<E extends WebhookEventName>(input: WebhookEventInput<E>): BuiltWebhookEvent<E> {
  const raw = input as unknown as Record<string, unknown>;
  const event = raw.event;
  const pre: Record<string, unknown> = {};
  pre.event = event;
  const id = raw.instance_id;
  pre.instance_id = typeof id === 'number' || typeof id === 'bigint' ? String(id) : id;
  pre.instance_name = raw.instance_name;
  const ts = raw.timestamp;
  if (ts instanceof Date) pre.timestamp = Number.isNaN(ts.getTime()) ? 'Invalid Date' : ts.toISOString();
  else if (typeof ts === 'string' && DATE_TIME_PATTERN.test(ts) && !Number.isNaN(Date.parse(ts))) {
    pre.timestamp = new Date(ts).toISOString();
  } else pre.timestamp = ts;

  if (isWebhookEventName(event)) {
    for (const field of Object.keys(WEBHOOK_EVENT_FIELDS[event])) if (raw[field] !== undefined) pre[field] = raw[field];
  }
  // Any other key (unknown, or valid only for another event) is kept so validation reports it.
  for (const [k, v] of Object.entries(raw)) if (!(k in pre) && v !== undefined) pre[k] = v;

  const issues = validateWebhookEvent(pre);
  if (issues.length > 0) throw new WebhookPayloadError(issues);
  const body = JSON.stringify(pre);
  if (Buffer.byteLength(body, 'utf8') > MAX_WEBHOOK_BODY_BYTES) {
    throw new WebhookPayloadError([
      { field: '(body)', rule: 'max_size', message: `payload exceeds ${MAX_WEBHOOK_BODY_BYTES} bytes` },
    ]);
  }
  return { event: event as E, payload: pre as unknown as WebhookEventOf<E>, body };
}

/**
 * The body as posted for one delivery: the stored event body with the delivery id as webhook_id
 * (appended, the other bytes as stored). Done at send time, so a delivery queued before the field
 * existed gets it too. A body that is not a JSON object (none is: buildWebhookEvent made it) is
 * posted as it is rather than stop the worker.
 *
 * Every stored body is JSON.stringify output of an object (buildWebhookEvent; see the migration
 * 1700000001700), so without a webhook_id key yet, parsing it and writing it again with the field
 * added gives its own bytes with `,"webhook_id":<id>` before the closing brace: that text is
 * written directly, without the parse and the re-serialisation (once per attempt, per delivery).
 * A body that already names webhook_id, or is not an object, takes the long way.
 */
export function withWebhookId(body: string, webhookId: string): string {
  if (body.startsWith('{"') && body.endsWith('}') && !body.includes(`"${WEBHOOK_ID_FIELD}"`)) {
    return `${body.slice(0, -1)},"${WEBHOOK_ID_FIELD}":${JSON.stringify(webhookId)}}`;
  }
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return body;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return body;
  return JSON.stringify({ ...(value as Record<string, unknown>), [WEBHOOK_ID_FIELD]: webhookId });
}

/** Parses and validates a received body (for receivers, tests and the docs' examples). */
export function parseWebhookEvent(body: string): WebhookEvent {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new WebhookPayloadError([{ field: '(body)', rule: 'type', message: 'body is not valid JSON' }]);
  }
  const issues = validateWebhookEvent(value);
  if (issues.length > 0) throw new WebhookPayloadError(issues);
  return value as WebhookEvent;
}

// ---------------------------------------------------------------------------------------------
// JSON Schemas (draft 2020-12 compatible; also valid OpenAPI 3.0 schema objects)

function fieldSchema(kind: FieldKind): Record<string, unknown> {
  switch (kind) {
    case 'boolean':
      return { type: 'boolean' };
    case 'phone':
      return { type: 'string', pattern: E164_PATTERN.source, description: 'E.164 phone number' };
    case 'sender':
      return { type: 'string', pattern: SENDER_PATTERN.source, description: 'E.164 phone number, or the linked id (<digits>@lid) of a sender known only by that' };
    case 'lid':
      return { type: 'string', pattern: LID_PATTERN.source, description: 'Linked id of the sender (<digits>@lid)' };
    case 'purpose':
      return { type: 'string', enum: [...WEBHOOK_MESSAGE_PURPOSES] };
    case 'token':
      return { type: 'string', minLength: 1, maxLength: MAX_TOKEN_LENGTH };
    case 'text':
      return { type: 'string' };
  }
}

/** The JSON Schema of one event's payload. */
export function webhookEventJsonSchema(event: WebhookEventName): Record<string, unknown> {
  const spec = WEBHOOK_EVENT_FIELDS[event];
  const properties: Record<string, unknown> = {
    event: { type: 'string', enum: [event] },
    instance_id: { type: 'string', minLength: 1, maxLength: MAX_TOKEN_LENGTH },
    instance_name: { type: 'string', minLength: 1, maxLength: MAX_TOKEN_LENGTH },
    timestamp: { type: 'string', format: 'date-time' },
    [WEBHOOK_ID_FIELD]: { type: 'string', minLength: 1, maxLength: MAX_TOKEN_LENGTH, description: 'The delivery id (webhook-id header), the same on every retry' },
  };
  const required: string[] = [...BASE_KEYS];
  for (const [field, f] of Object.entries(spec)) {
    properties[field] = fieldSchema(f.kind);
    if (f.required) required.push(field);
  }
  return { title: event, type: 'object', additionalProperties: false, required, properties };
}

// ---------------------------------------------------------------------------------------------
// Subscriptions

export const SUBSCRIPTION_ALL = 'all';

export class WebhookSubscriptionError extends Error {
  readonly code = 'invalid_webhook_events';
  constructor(
    message: string,
    readonly unknown: readonly string[],
  ) {
    super(message);
    this.name = 'WebhookSubscriptionError';
  }
}

/** Every word a subscription list may contain: "all", the group names, and the event names. */
export function subscriptionVocabulary(): string[] {
  return [SUBSCRIPTION_ALL, ...Object.keys(WEBHOOK_EVENT_GROUPS), ...WEBHOOK_EVENT_NAMES];
}

/**
 * Expands a configuration's `events` list into event names, in canonical (spec) order, without
 * duplicates. Accepts "all", a group name ("recommended", "instance", "lifecycle",
 * "conversation", "call", "group") and explicit event names. An empty list or an unknown word is
 * refused with one error naming every unknown word (with a suggestion when one is close).
 */
export function resolveSubscription(list: readonly string[]): WebhookEventName[] {
  if (!Array.isArray(list) || list.length === 0) {
    throw new WebhookSubscriptionError(
      'select at least one webhook event (e.g. "recommended" or "all")',
      [],
    );
  }
  const selected = new Set<WebhookEventName>();
  const unknown: string[] = [];
  for (const rawWord of list) {
    const word = typeof rawWord === 'string' ? rawWord.trim() : String(rawWord);
    if (word === SUBSCRIPTION_ALL) WEBHOOK_EVENT_NAMES.forEach((e) => selected.add(e));
    else if (Object.hasOwn(WEBHOOK_EVENT_GROUPS, word)) {
      WEBHOOK_EVENT_GROUPS[word as WebhookEventGroup].forEach((e) => selected.add(e));
    } else if (isWebhookEventName(word)) selected.add(word);
    else unknown.push(word);
  }
  if (unknown.length > 0) {
    const parts = unknown.map((w) => {
      const hint = suggest(w);
      return hint ? `"${w}" (did you mean "${hint}"?)` : `"${w}"`;
    });
    throw new WebhookSubscriptionError(
      `unknown webhook event${unknown.length > 1 ? 's' : ''} ${parts.join(', ')}; valid values: ${subscriptionVocabulary().join(', ')}`,
      unknown,
    );
  }
  return WEBHOOK_EVENT_NAMES.filter((e) => selected.has(e));
}

function suggest(word: string): string | null {
  const lower = word.toLowerCase();
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const candidate of subscriptionVocabulary()) {
    const d = distance(lower, candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(word.length / 4)) ? best : null;
}

function distance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length]!;
}
