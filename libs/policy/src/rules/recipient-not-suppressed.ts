import type { Rule } from '../types.ts';
import { fail, pass } from './verdict.ts';

const name = 'recipient_not_suppressed';

/** Opted-out or manually suppressed recipients of this customer get nothing. */
export const recipientNotSuppressed: Rule = {
  name,
  code: 'recipient_suppressed',
  summary: "The recipient is not on the customer's suppression list (opt-out or manual).",
  check: ({ command, state }) => {
    const entry = state.suppressed[command.recipient];
    if (!entry) return pass(name);
    // An opt-out is the recipient's own wish, so it is named first when both apply.
    const sources = (['opt_out', 'manual'] as const).filter((s) => entry[s]);
    const first = sources[0]!;
    return fail(name, 'recipient_suppressed', 'The recipient is suppressed for this account.', {
      source: first,
      sources,
      suppressed_at: new Date(entry[first]!.at).toISOString(),
    });
  },
};
