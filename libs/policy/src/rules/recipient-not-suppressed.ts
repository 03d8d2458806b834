import { linkedIdsOf } from '../linked-ids.ts';
import type { SuppressionEntry } from '../state.ts';
import type { Rule } from '../types.ts';
import { fail, pass } from './verdict.ts';
import { isoTime } from '../time/iso-time.ts';

const name = 'recipient_not_suppressed';

type Entry = Partial<Record<'opt_out' | 'manual', SuppressionEntry>>;

/**
 * Opted-out or manually suppressed recipients of this customer get nothing: the number itself, or
 * a linked id (`…@lid`) known to be that number, on any instance (docs/decisions.md, "Linked ids").
 */
export const recipientNotSuppressed: Rule = {
  name,
  code: 'recipient_suppressed',
  summary: "The recipient is not on the customer's suppression list (opt-out or manual), by number or by a linked id known to be that number.",
  check: ({ command, state }) => {
    const own = state.suppressed[command.recipient];
    if (own) return refused(own);
    for (const lid of linkedIdsOf(state, command.recipient)) {
      const entry = state.suppressed[lid];
      if (entry) return refused(entry, 'linked_id');
    }
    return pass(name);
  },
};

/** The details never name the number or the linked id: only that a linked id was the cause. */
function refused(entry: Entry, through?: 'linked_id') {
  // An opt-out is the recipient's own wish, so it is named first when both apply.
  const sources = (['opt_out', 'manual'] as const).filter((s) => entry[s]);
  const first = sources[0]!;
  // A number's own entry may itself have been carried over from a linked id.
  const via = through ?? entry[first]!.via;
  return fail(name, 'recipient_suppressed', 'The recipient is suppressed for this account.', {
    source: first,
    sources,
    suppressed_at: isoTime(entry[first]!.at),
    ...(via ? { via } : {}),
  });
}
