import type { Rule } from '../types.ts';
import { fail, pass } from './verdict.ts';
import { isoTime } from '../time/iso-time.ts';

const name = 'instance_not_paused';

/** An instance paused for responsible-messaging review sends nothing until resumed (spec 3). */
export const instanceNotPaused: Rule = {
  name,
  code: 'instance_paused_for_review',
  summary: 'The instance is not paused for responsible-messaging review.',
  check: ({ command, state }) => {
    const pause = state.paused[command.instanceId];
    if (!pause) return pass(name);
    return fail(name, 'instance_paused_for_review', 'The instance is paused for responsible-messaging review.', {
      instance_id: command.instanceId,
      reason: pause.reason,
      paused_by: pause.by,
      paused_at: isoTime(pause.at),
    });
  },
};
