// The guarded send itself, the one place a SendRequested is made: POST /api/send-message, the PBX
// webhook's sending events and the dashboard's test sends all call requestSend. It claims the
// request's idempotency key (or takes the caller's claim), appends the command to customer-events
// (after any records the caller puts before it, in one append), and waits for its decision and
// delivery through the reply router. Whoever calls it has checked the input and found the
// customer's instance.
import { newEventId, type SendRequested } from '@gw/events';
import type { KafkaClient, OutgoingRecord } from '@gw/kafka';
import type { Pool } from '@gw/db';
import type { EventCodec } from '@gw/events';
import { newId } from '@gw/security';
import { ATTR_GATEWAY_CUSTOMER_ID, ATTR_GATEWAY_MESSAGE_ID, ATTR_MESSAGING_MESSAGE_CONVERSATION_ID, ATTR_MESSAGING_MESSAGE_ID, inProducerSpan, type TraceContext } from '@gw/tracing';
import { claimIdempotencyKey } from './idempotency.ts';
import type { SendProgress } from './outcome.ts';
import { commandDecided } from './progress-read.ts';
import { appendRule, type SendClaim } from './reappend.ts';
import type { ReplyWaiter } from './reply-router.ts';

export interface SendDeps {
  pool: Pool;
  kafka: KafkaClient;
  codec: EventCodec;
  replies: ReplyWaiter;
  /** How long a request waits for its outcome unless it says otherwise (API_SEND_DEADLINE_MS). */
  deadlineMs: number;
  /** A retry re-appends an undecided command only once the first append is this old (IDEMPOTENT_REAPPEND_AFTER_MS). */
  reappendAfterMs: number;
  clock?: () => number;
}

export interface SendIds {
  commandId: string;
  messageId: string;
}

/** The customer's instance the message goes through. */
export interface SendInstance {
  id: string;
  /** The instance's name on its manager: the command carries it to the delivery stage. */
  managerInstance: string;
  /** The customer's name for it (not part of the command). */
  name?: string;
}

/** How a request is deduplicated: `SendRequested.idempotency_key` is its key. */
export type SendDedupe =
  /** POST /api/send-message's Idempotency-Key, claimed here (idempotency_records) with the request's hash. */
  | { kind: 'idempotency-key'; key: string; requestHash: string }
  /**
   * Claimed by the caller in a store of its own (the PBX's pbx_requests, which also keeps its
   * answers): its ids, whether it is a retry, and how to give a new claim up when the append fails.
   */
  | { kind: 'claimed'; key: string; ids: SendIds; claim: SendClaim; release?: () => Promise<void> };

export interface SendInput {
  /** Who asked (SendRequested.source); default api. */
  source?: 'api' | 'pbx';
  customerId: string;
  instance: SendInstance;
  /** Normalised (E.164). */
  phone: string;
  message: string;
  purpose: string;
  /** None: a new command every time. */
  dedupe?: SendDedupe;
  /** How long to wait (default deps.deadlineMs), and for what: the final outcome (default) or the decision. */
  deadlineMs?: number;
  until?: 'final' | 'decision';
  /** Records appended just before the command, in the same append (in order on the customer's partition). */
  before?: (ids: SendIds) => Promise<OutgoingRecord[]>;
  /** The request's span: the append is a producer span under it, and the records carry that span's context. */
  trace?: TraceContext;
}

export interface SendWaited {
  ids: SendIds;
  /** An idempotent retry of a recorded request. */
  replay: boolean;
  /** What was known of the command when it became final (or decided, if asked) or the deadline passed. */
  progress: SendProgress;
}

async function claimIds(deps: SendDeps, customerId: string, dedupe: SendDedupe | undefined): Promise<{ ids: SendIds; claim: SendClaim }> {
  if (dedupe?.kind === 'claimed') return { ids: dedupe.ids, claim: dedupe.claim };
  const ids = { commandId: newId('cmd'), messageId: newId('msg') };
  if (!dedupe) return { ids, claim: { kind: 'new' } };
  const held = await claimIdempotencyKey(deps.pool, customerId, dedupe.key, dedupe.requestHash, ids);
  if (held.kind === 'new') return { ids, claim: held };
  return { ids: { commandId: held.commandId, messageId: held.messageId }, claim: { kind: 'replay', ageMs: held.ageMs } };
}

export async function requestSend(deps: SendDeps, input: SendInput): Promise<SendWaited> {
  const { ids, claim } = await claimIds(deps, input.customerId, input.dedupe);
  const replay = claim.kind === 'replay';
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
    source: input.source ?? 'api',
    idempotency_key: input.dedupe?.key ?? null,
  };

  // Registered before the append, so no reply can slip past; a retry looks at what is recorded first.
  const outcome = deps.replies.wait(ids.commandId, input.deadlineMs ?? deps.deadlineMs, {
    ...(input.until ? { until: input.until } : {}),
    checkStoreFirst: replay,
  });
  const rule = appendRule(claim, deps.reappendAfterMs);
  if (rule === 'append' || (rule === 'append-if-undecided' && !(await commandDecided(deps.pool, ids.commandId)))) {
    const records = [...((await input.before?.(ids)) ?? []), await deps.codec.encode('SendRequested', command)];
    // Ids only in the span: the command's phone and text stay out of traces.
    const spanIds = {
      [ATTR_MESSAGING_MESSAGE_ID]: command.event_id,
      [ATTR_MESSAGING_MESSAGE_CONVERSATION_ID]: command.correlation_id,
      [ATTR_GATEWAY_CUSTOMER_ID]: command.customer_id,
      [ATTR_GATEWAY_MESSAGE_ID]: command.message_id,
    };
    try {
      await inProducerSpan('@gw/send', records.at(-1)!.topic, input.trace, spanIds, ({ trace }) => deps.kafka.send(records.map((record) => ({ ...record, trace }))));
    } catch (error) {
      // Not appended: a caller's new claim is given up, so a retry is taken as new rather than waiting for ever.
      if (input.dedupe?.kind === 'claimed' && claim.kind === 'new') await input.dedupe.release?.().catch(() => undefined);
      throw error;
    }
  }
  return { ids, replay, progress: await outcome };
}
