import { ERROR_CODES } from './error-codes.ts';
import { MESSAGE_PURPOSES } from './purposes.ts';
import { safeString } from './text.ts';

// JSON schemas of the v1 contract: the routes validate with them and openapi.json is generated
// from them, so the contract and the code cannot drift.

export const MESSAGE_MAX_LENGTH = 4096;

export const SendMessageRequestSchema = {
  $id: 'SendMessageRequest',
  type: 'object',
  additionalProperties: false,
  required: ['instance_id', 'phone', 'message', 'message_purpose'],
  properties: {
    instance_id: safeString(128, 'Customer-owned instance ID or instance name'),
    phone: safeString(32, 'Recipient number in international format'),
    message: safeString(MESSAGE_MAX_LENGTH, 'Message body'),
    message_purpose: { type: 'string', minLength: 1, enum: [...MESSAGE_PURPOSES], description: 'One of: ' + MESSAGE_PURPOSES.join(', ') },
  },
} as const;

export const SendMessageSuccessSchema = {
  $id: 'SendMessageSuccess',
  type: 'object',
  additionalProperties: false,
  required: ['success', 'status', 'message_id', 'log_id'],
  properties: {
    success: { type: 'boolean', enum: [true] },
    status: { type: 'string', enum: ['sent', 'queued'], description: 'sent, or queued when delivery is still in progress at the deadline' },
    message_id: { type: 'string', description: 'Identifier of the sent message' },
    log_id: { type: 'integer', description: 'Identifier of the send log entry' },
  },
} as const;

export const ApiErrorSchema = {
  $id: 'ApiError',
  type: 'object',
  required: ['success', 'error', 'message', 'details'],
  properties: {
    success: { type: 'boolean', enum: [false] },
    error: { type: 'string', enum: [...ERROR_CODES], description: 'Error code' },
    message: { type: 'string', description: 'Human-readable text' },
    details: { type: 'object', additionalProperties: true, description: 'Free-form object' },
  },
} as const;


export function ref(schema: { $id: string }) {
  return { $ref: `${schema.$id}#` };
}

export const PBX_EVENT_TYPES = [
  'test',
  'outbound_message',
  'inbound_reply',
  'missed_call',
  'call_started',
  'call_ended',
  'voicemail',
  'queue_event',
  'queue_callback',
  'after_hours',
] as const;
export type PbxEventType = (typeof PBX_EVENT_TYPES)[number];

const optionalString = (description: string) => safeString(1024, description, 0);

export const PbxWebhookRequestSchema = {
  $id: 'PbxWebhookRequest',
  type: 'object',
  // PBX middleware often adds fields of its own; they are ignored, not refused.
  additionalProperties: true,
  required: ['event_type'],
  properties: {
    event_type: { type: 'string', enum: [...PBX_EVENT_TYPES] },
    to: optionalString('Destination phone for outbound_message (international format)'),
    customer_phone: optionalString('Customer phone for call-event templates (international format)'),
    message_text: safeString(MESSAGE_MAX_LENGTH, 'Body for outbound_message', 0),
    message_purpose: { type: 'string', minLength: 1, enum: [...MESSAGE_PURPOSES] },
    conversation_id: optionalString(''),
    external_message_id: optionalString('Idempotency: the same id never sends twice'),
    agent_extension: optionalString(''),
    queue: optionalString(''),
    call_time: optionalString(''),
  },
} as const;

export const PbxWebhookResponseSchema = {
  $id: 'PbxWebhookResponse',
  type: 'object',
  required: ['success', 'status', 'event_type', 'action'],
  properties: {
    success: { type: 'boolean' },
    status: { type: 'string', description: 'processed' },
    event_type: { type: 'string', description: 'Echo of the processed event type' },
    action: { type: 'string', description: 'received' },
    message_id: { type: 'string' },
  },
} as const;

export const SHARED_SCHEMAS = [SendMessageRequestSchema, SendMessageSuccessSchema, ApiErrorSchema, PbxWebhookRequestSchema, PbxWebhookResponseSchema];
