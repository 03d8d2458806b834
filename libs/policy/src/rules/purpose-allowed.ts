import { isMessagePurpose } from '@gw/contract';
import type { Rule } from '../types.ts';

/** Only the five allowed purposes pass; marketing and anything else is refused. */
export const purposeAllowed: Rule = (command) =>
  isMessagePurpose(command.purpose)
    ? { rule: 'purpose_allowed', outcome: 'pass' }
    : {
        rule: 'purpose_allowed',
        outcome: 'fail',
        code: 'message_purpose_not_allowed',
        message: `The message purpose "${command.purpose}" is not allowed.`,
        details: { field: 'message_purpose', rule: 'purpose_allowed', value: command.purpose },
      };
