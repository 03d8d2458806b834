import { lastSendTo } from '../time/send-memory.ts';
import { bucketAt, msUntilToken } from '../time/token-bucket.ts';
import type { Rule } from '../types.ts';
import { fail, pass } from './verdict.ts';

const name = 'velocity';

/**
 * Two throttles: a token bucket per instance (bursts up to `burst`, sustained `refillPerMinute`)
 * and a minimum gap per instance and recipient, as the chat network itself enforces. Both are
 * checked so retry_after_ms is the wait after which the send would pass both.
 */
export const velocity: Rule = {
  name,
  code: 'sending_throttled',
  summary: "The instance's token bucket holds a token and the recipient's minimum interval since the last send has passed.",
  check: ({ command, state, plan, instance }) => {
    if (!plan) return pass(name);
    const limits = plan.velocity;
    const level = bucketAt(instance?.bucket ?? undefined, command.occurredAt, limits);
    const bucketWait = msUntilToken(level, limits);
    const last = lastSendTo(state.sends, command.instanceId, command.recipient, command.occurredAt - limits.recipientMinIntervalMs);
    const recipientWait = last === undefined ? 0 : Math.max(0, last + limits.recipientMinIntervalMs - command.occurredAt);
    if (bucketWait === 0 && recipientWait === 0) return pass(name, { tokens: level.tokens });
    const controls = [...(bucketWait > 0 ? ['instance_token_bucket'] : []), ...(recipientWait > 0 ? ['recipient_interval'] : [])];
    return fail(name, 'sending_throttled', 'Sending is throttled; retry later.', {
      control: controls[0],
      controls,
      retry_after_ms: Math.max(bucketWait, recipientWait),
      burst: limits.burst,
      refill_per_minute: limits.refillPerMinute,
      recipient_min_interval_ms: limits.recipientMinIntervalMs,
    });
  },
};
