// The guarded send itself, shared by POST /api/send-message and the dashboard's test sends: the
// command appended to customer-events, and the wait for its decision and delivery through the
// reply router. Whoever calls it has checked the input and found the customer's instance.
import { newEventId, type SendRequested } from '@gw/events';
import { ATTR_GATEWAY_CUSTOMER_ID, ATTR_GATEWAY_MESSAGE_ID, ATTR_MESSAGING_MESSAGE_CONVERSATION_ID, ATTR_MESSAGING_MESSAGE_ID, inProducerSpan, type TraceContext } from '@gw/tracing';
import { newId } from '@gw/security';
import { claimIdempotencyKey } from './idempotency.ts';
import type { OwnedInstance } from './instances.ts';
import type { SendProgress } from './outcome.ts';
import { commandDecided } from './progress-store.ts';
import type { SendMessageDeps } from './route.ts';

export interface SendInput {
  customerId: string;
  instance: OwnedInstance;
  /** Normalised (E.164). */
  phone: string;
  message: string;
  purpose: string;
  /** The caller's Idempotency-Key and the hash of its request, when it gave one. */
  idempotency?: { key: string; requestHash: string };
  /** The request's span: the append is a producer span under it, and the command carries that span's context. */
  trace?: TraceContext;
}

export interface SendWaited {
  ids: { commandId: string; messageId: string };
  /** An idempotent retry of a recorded request. */
  replay: boolean;
  /** What was known of the command when it became final or the deadline passed. */
  progress: SendProgress;
}

export async function requestSend(deps: SendMessageDeps, input: SendInput): Promise<SendWaited> {
  let ids = { commandId: newId('cmd'), messageId: newId('msg') };
  let replay: { ageMs: number } | null = null;
  if (input.idempotency) {
    const claim = await claimIdempotencyKey(deps.pool, input.customerId, input.idempotency.key, input.idempotency.requestHash, ids);
    if (claim.kind === 'replay') {
      ids = { commandId: claim.commandId, messageId: claim.messageId };
      replay = { ageMs: claim.ageMs };
    }
  }

  const command: SendRequested = {
    event_id: newEventId(),
    correlation_id: ids.commandId,
    occurred_at: (deps.clock ?? Date.now)(),
    customer_id: input.customerId,
    instance_id: input.instance.id,
    instance_name: input.instance.managerInstance,
    message_id: ids.messageId,
    phone: input.phone,
    message: input.message,
    message_purpose: input.purpose,
    source: 'api',
    idempotency_key: input.idempotency?.key ?? null,
  };

  // Registered before the append, so no reply can slip past.
  const outcome = deps.replies.wait(ids.commandId, deps.deadlineMs, { checkStoreFirst: replay !== null });
  // A retry re-appends its command only when the first append looks lost: old enough and
  // still undecided. (The policy stage would re-emit a decided command's decision, and the
  // pipeline would run again for nothing.) A re-append of an undecided one is safe: the policy
  // stage decides a command id once.
  if (!replay || (replay.ageMs > deps.reappendAfterMs && !(await commandDecided(deps.pool, ids.commandId)))) {
    const record = await deps.codec.encode('SendRequested', command);
    // Ids only in the span: the command's phone and text stay out of traces.
    const spanIds = {
      [ATTR_MESSAGING_MESSAGE_ID]: command.event_id,
      [ATTR_MESSAGING_MESSAGE_CONVERSATION_ID]: command.correlation_id,
      [ATTR_GATEWAY_CUSTOMER_ID]: command.customer_id,
      [ATTR_GATEWAY_MESSAGE_ID]: command.message_id,
    };
    await inProducerSpan('@gw/api', record.topic, input.trace, spanIds, ({ trace }) => deps.kafka.send([{ ...record, trace }]));
  }
  return { ids, replay: replay !== null, progress: await outcome };
}
