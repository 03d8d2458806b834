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

/** Only the five non-marketing purposes exist; the customer may narrow them, per instance too. */
export const purposeAllowed: Rule = {
  name,
  code: 'message_purpose_not_allowed',
  summary: 'The purpose is one of the five allowed purposes and allowed for this customer and instance (default: all five).',
  check: ({ command, state }) => {
    if (!isMessagePurpose(command.purpose)) {
      return fail(name, 'message_purpose_not_allowed', `The message purpose "${command.purpose}" is not allowed.`, { field: 'message_purpose', value: command.purpose, reason: 'unknown_purpose', allowed: [...MESSAGE_PURPOSES] });
    }
    const allowed = allowedPurposes(state, command.instanceId);
    return allowed.includes(command.purpose)
      ? pass(name, { purpose: command.purpose })
      : fail(name, 'message_purpose_not_allowed', `The message purpose "${command.purpose}" is not allowed for this instance.`, { field: 'message_purpose', value: command.purpose, reason: 'not_allowed_for_account', allowed: [...allowed] });
  },
};
