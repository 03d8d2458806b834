import { sha256Hex } from './digest.ts';
import { normaliseText } from './content/normalise-text.ts';
import { evaluateRules } from './evaluate-rules.ts';
import type { SendDecided } from './events.ts';
import { effectivePlan } from './limits.ts';
import type { Policy } from './policy.ts';
import type { CustomerPolicyState } from './state.ts';
import { quotaWindows } from './time/quota-windows.ts';
import { bucketAt, takeToken } from './time/token-bucket.ts';
import { instanceOf } from './instances.ts';
import type { PolicyDecision, RuleContext, SendCommand } from './types.ts';

export interface DecideResult {
  decision: PolicyDecision;
  /** The SendDecided fact to fold (react, after the fold, may add an automatic pause). */
  events: [SendDecided];
}

/** A programming error of the caller (the wrong customer's state), not a policy outcome. */
export class PolicyInputError extends Error {
  override name = 'PolicyInputError';
}

/**
 * Pure: decides one send from the customer's folded state. The clock is the command's own
 * occurredAt, so deciding the same command on the same state gives the same answer at any time.
 */
export function decide(command: SendCommand, state: CustomerPolicyState, policy: Policy): DecideResult {
  if (command.customerId !== state.customerId) {
    throw new PolicyInputError(`command of customer ${command.customerId} decided on the state of ${state.customerId}`);
  }
  const { config } = policy;
  const plan = effectivePlan(state, config);
  const normalised = normaliseText(command.text);
  const context: RuleContext = {
    command,
    state,
    config,
    content: policy.content,
    plan,
    windows: quotaWindows(command.occurredAt, plan?.quotaWindowOffsetMinutes ?? config.quotaWindowOffsetMinutes),
    normalised,
    digest: sha256Hex(normalised),
    instance: instanceOf(state.instances, command.instanceId),
  };
  const decision = evaluateRules(policy.rules, context);
  return { decision, events: [toSendDecided(context, decision, policy.version)] };
}

function toSendDecided({ command, instance, plan, windows, digest }: RuleContext, decision: PolicyDecision, policyVersion: string): SendDecided {
  const accepted = decision.decision === 'accepted';
  const reason = !accepted && decision.code === 'policy_violation' && typeof decision.details.reason === 'string' ? decision.details.reason : null;
  return {
    type: 'SendDecided',
    customerId: command.customerId,
    at: command.occurredAt,
    commandId: command.commandId,
    instanceId: command.instanceId,
    recipient: command.recipient,
    purpose: command.purpose,
    digest,
    decision: decision.decision,
    errorCode: accepted ? null : decision.code,
    reason,
    quotaWindows: { day: windows.day, month: windows.month },
    tokensLeft: accepted && plan ? takeToken(bucketAt(instance?.bucket ?? undefined, command.occurredAt, plan.velocity)).tokens : null,
    policyVersion,
  };
}

