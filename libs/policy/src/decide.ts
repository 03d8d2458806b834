import { DEFAULT_POLICY_CONFIG, policyVersionOf, type PolicyConfig } from './config/policy-config.ts';
import { messageDigest } from './digest.ts';
import { evaluateRules } from './evaluate-rules.ts';
import type { PolicyEvent, SendDecided } from './events.ts';
import { evolveRemembered } from './evolve.ts';
import { effectivePlan } from './limits.ts';
import { autoPauseCheck } from './quality/auto-pause.ts';
import { RULES } from './rules/index.ts';
import type { CustomerPolicyState } from './state.ts';
import { quotaWindows } from './time/quota-windows.ts';
import { bucketAt, takeToken } from './time/token-bucket.ts';
import type { PolicyDecision, Rule, RuleContext, SendCommand } from './types.ts';

export interface DecideResult {
  decision: PolicyDecision;
  /** [SendDecided] and, when this send tipped the instance's quality over, InstancePausedForReview. */
  events: PolicyEvent[];
}

/** A programming error of the caller (the wrong customer's state), not a policy outcome. */
export class PolicyInputError extends Error {
  override name = 'PolicyInputError';
}

/**
 * Pure: decides one send from the customer's folded state. The clock is the command's own
 * occurredAt, so deciding the same command on the same state gives the same answer at any time.
 */
export function decide(command: SendCommand, state: CustomerPolicyState, config: PolicyConfig = DEFAULT_POLICY_CONFIG, rules: readonly Rule[] = RULES): DecideResult {
  if (command.customerId !== state.customerId) {
    throw new PolicyInputError(`command of customer ${command.customerId} decided on the state of ${state.customerId}`);
  }
  const plan = effectivePlan(state, config);
  const context: RuleContext = {
    command,
    state,
    config,
    plan,
    windows: quotaWindows(command.occurredAt, plan?.quotaWindowOffsetMinutes ?? config.quotaWindowOffsetMinutes),
    digest: messageDigest(command.text),
  };
  const decision = evaluateRules(rules, context);
  const sendDecided = toSendDecided(context, decision, config);
  // The caller folds sendDecided on this same state next: evolve remembers this fold for it.
  const pauses = autoPauseCheck(evolveRemembered(state, sendDecided), command.instanceId, command.occurredAt, config);
  return { decision, events: [sendDecided, ...pauses] };
}

function toSendDecided({ command, state, plan, windows, digest }: RuleContext, decision: PolicyDecision, config: PolicyConfig): SendDecided {
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
    tokensLeft: accepted && plan ? takeToken(bucketAt(state.buckets[command.instanceId], command.occurredAt, plan.velocity)).tokens : null,
    policyVersion: policyVersionOf(config),
  };
}
