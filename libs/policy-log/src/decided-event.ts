import { newEventId, type SendDecided, type SendRequested } from '@gw/events';
import { messageDigest, type PolicyDecision, type SendCommand } from '@gw/policy';

export function toSendCommand(event: SendRequested): SendCommand {
  return {
    commandId: event.correlation_id,
    customerId: event.customer_id,
    instanceId: event.instance_id,
    recipient: event.phone,
    purpose: event.message_purpose,
    text: event.message,
    occurredAt: event.occurred_at,
    source: event.source,
  };
}

/**
 * The policy-log entry of one decision, before it is placed in its partition's hash chain.
 * `digest` is messageDigest(command.message) when the caller has it already (the decider's
 * SendDecided carries it), which saves hashing the body twice.
 */
export function toDecidedEvent(command: SendRequested, decision: PolicyDecision, logId: number, policyVersion: string, digest: string = messageDigest(command.message)): SendDecided {
  const rejected = decision.decision === 'rejected';
  return {
    event_id: newEventId(),
    correlation_id: command.correlation_id,
    // The command's own time: the decision was made "as of" it, whatever the wall clock.
    occurred_at: command.occurred_at,
    customer_id: command.customer_id,
    instance_id: command.instance_id,
    message_id: command.message_id,
    log_id: logId,
    decision: decision.decision,
    error_code: rejected ? decision.code : null,
    error_message: rejected ? decision.message : null,
    reasons: decision.rules.map((r) => ({
      rule: r.rule,
      outcome: r.outcome,
      detail: rejected && r.outcome === 'fail' ? JSON.stringify(decision.details) : r.details ? JSON.stringify(r.details) : null,
    })),
    policy_version: policyVersion,
    recipient: command.phone,
    message_purpose: command.message_purpose,
    message_digest: digest,
    dispatch: rejected ? null : { instance_name: command.instance_name, phone: command.phone, text: command.message },
    partition_chain: -1,
    prev_hash: '',
    entry_hash: '',
  };
}
