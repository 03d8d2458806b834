import type { SendDecided } from '@gw/events';
import type { ReplyWaiter, SendProgress } from '@gw/send';

export interface WaitCall {
  commandId: string;
  deadlineMs: number;
  options: Parameters<ReplyWaiter['wait']>[2];
}

export type Answer = (call: WaitCall) => SendProgress | Promise<SendProgress>;

/** Nothing known at the deadline: what a request sees when the pipeline has not answered in time. */
export const NO_ANSWER: Answer = () => ({ decision: null, delivery: null });

/**
 * Stands in for the Kafka-consuming ReplyRouter in route tests: records what the routes wait for
 * and answers what the test says (accepted, rejected, delivered, or nothing by the deadline).
 */
export class FakeReplies implements ReplyWaiter {
  readonly calls: WaitCall[] = [];
  private answer: Answer = NO_ANSWER;

  answerWith(answer: Answer): void {
    this.answer = answer;
  }

  async wait(commandId: string, deadlineMs: number, options: WaitCall['options'] = {}): Promise<SendProgress> {
    const call = { commandId, deadlineMs, options };
    this.calls.push(call);
    return this.answer(call);
  }

  callsFor(commandId: string): WaitCall[] {
    return this.calls.filter((c) => c.commandId === commandId);
  }
}

/** A decision on a command as the policy stage would append it. */
export function decision(commandId: string, overrides: Partial<SendDecided> = {}): SendDecided {
  return {
    event_id: `evt_${commandId}`,
    correlation_id: commandId,
    occurred_at: Date.now(),
    customer_id: 'cus_fake',
    instance_id: 'ins_fake',
    message_id: `msg_of_${commandId}`,
    log_id: 7001,
    decision: 'accepted',
    error_code: null,
    error_message: null,
    reasons: [],
    policy_version: 'test-policy',
    recipient: '+14155552671',
    message_purpose: 'transactional',
    message_digest: 'digest',
    dispatch: null,
    partition_chain: 0,
    prev_hash: '',
    entry_hash: '',
    ...overrides,
  };
}

/** What the delivery stage copies onto its outcome events from the decision (and its instance directory). */
const outcomeFacts = (decided: SendDecided) => ({ recipient: decided.recipient, message_purpose: decided.message_purpose, instance_name: 'fake-instance' });

export const accepted = (call: WaitCall): SendProgress => ({ decision: decision(call.commandId), delivery: null });

export const delivered = (call: WaitCall): SendProgress => {
  const decided = decision(call.commandId);
  return {
    decision: decided,
    delivery: {
      type: 'MessageDispatched',
      payload: {
        event_id: `evt_sent_${call.commandId}`,
        correlation_id: call.commandId,
        occurred_at: Date.now(),
        customer_id: decided.customer_id,
        instance_id: decided.instance_id,
        message_id: decided.message_id,
        log_id: decided.log_id,
        provider_message_id: 'provider-1',
        provider_status: 'PENDING',
        ...outcomeFacts(decided),
      },
    },
  };
};

export const failedDelivery = (call: WaitCall): SendProgress => {
  const decided = decision(call.commandId);
  return {
    decision: decided,
    delivery: {
      type: 'DeliveryFailed',
      payload: {
        event_id: `evt_failed_${call.commandId}`,
        correlation_id: call.commandId,
        occurred_at: Date.now(),
        customer_id: decided.customer_id,
        instance_id: decided.instance_id,
        message_id: decided.message_id,
        log_id: decided.log_id,
        reason: 'unknown_number',
        detail: 'The number is not on the network.',
        definitive: true,
        ...outcomeFacts(decided),
      },
    },
  };
};

/** A refusal by the policy, with the failed rule's details as the engine records them. */
export const rejected =
  (errorCode: string, errorMessage: string, detail: Record<string, unknown>): Answer =>
  (call) => ({
    decision: decision(call.commandId, {
      decision: 'rejected',
      error_code: errorCode,
      error_message: errorMessage,
      reasons: [
        { rule: 'purpose_allowed', outcome: 'pass', detail: null },
        { rule: String(detail.rule ?? 'rule'), outcome: 'fail', detail: JSON.stringify(detail) },
      ],
    }),
    delivery: null,
  });
