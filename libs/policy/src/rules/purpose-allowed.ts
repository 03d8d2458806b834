import { isMessagePurpose, MESSAGE_PURPOSES } from '@gw/contract';
import type { CustomerPolicyState } from '../state.ts';
import type { Rule } from '../types.ts';
import { fail, pass } from './verdict.ts';

const name = 'purpose_allowed';

/** Customer list (default: all five) intersected with the instance's own list when it has one. */
export function allowedPurposes(state: CustomerPolicyState, instanceId: string): string[] {
  const customer = state.purposes.customer ?? [...MESSAGE_PURPOSES];
  const instance = state.purposes.instances[instanceId];
  return customer.filter((p) => isMessagePurpose(p) && (!instance || instance.includes(p)));
}

/**
 * Whether one of the five purposes is in allowedPurposes, asked without building the list: the
 * list is only needed in the details of a refusal, and this runs on every decision (issue 29).
 */
function allows(state: CustomerPolicyState, instanceId: string, purpose: string): boolean {
  const { customer, instances } = state.purposes;
  const instance = instances[instanceId];
  return (!customer || customer.includes(purpose)) && (!instance || instance.includes(purpose));
}

/** Only the five non-marketing purposes exist; the customer may narrow them, per instance too. */
export const purposeAllowed: Rule = {
  name,
  code: 'message_purpose_not_allowed',
  summary: 'The purpose is one of the five allowed purposes and allowed for this customer and instance (default: all five).',
  check: ({ command, state }) => {
    if (!isMessagePurpose(command.purpose)) {
      return fail(name, 'message_purpose_not_allowed', `The message purpose "${command.purpose}" is not allowed.`, { field: 'message_purpose', value: command.purpose, reason: 'unknown_purpose', allowed: [...MESSAGE_PURPOSES] });
    }
    if (allows(state, command.instanceId, command.purpose)) return pass(name, { purpose: command.purpose });
    const allowed = allowedPurposes(state, command.instanceId);
    return fail(name, 'message_purpose_not_allowed', `The message purpose "${command.purpose}" is not allowed for this instance.`, { field: 'message_purpose', value: command.purpose, reason: 'not_allowed_for_account', allowed: [...allowed] });
  },
};
