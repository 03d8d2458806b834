import { otherRecipientsOf } from '../time/send-memory.ts';
import type { Rule } from '../types.ts';
import { fail, pass } from './verdict.ts';

const name = 'bulk_campaign';

/**
 * The same normalised body (messageDigest) to more than N distinct recipients within the window
 * is a broadcast, which this product does not carry. Only accepted sends are remembered, and a
 * recipient already counted may receive the body again (a resend is not a new recipient).
 */
export const bulkCampaign: Rule = {
  name,
  code: 'policy_violation',
  summary: 'The same normalised body goes to at most N distinct recipients within the window (N and window per plan).',
  check: ({ command, state, plan, digest }) => {
    if (!plan) return pass(name);
    const { maxDistinctRecipients, windowMs } = plan.bulk;
    const since = command.occurredAt - windowMs;
    const distinct = otherRecipientsOf(state.sends, digest, since, command.recipient) + 1;
    const details = { distinct_recipients: distinct, threshold: maxDistinctRecipients, window_ms: windowMs };
    return distinct <= maxDistinctRecipients
      ? pass(name, details)
      : fail(name, 'policy_violation', 'The same message to many recipients looks like a bulk campaign, which is not allowed.', { reason: 'bulk_campaign', ...details });
  },
};
